//! Word lists kept as data files beside the rules that read them (built in with
//! `include_str!`): one entry a line; blank lines and lines opening with `#` are left out. An
//! entry that opens with `#` or `"`, or opens or ends with a blank, is written between double
//! quotes, which are taken off (`"next "`: the blank is part of the entry).

/// The entries of a word list's text.
pub fn entries(text: &'static str) -> Vec<&'static str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.strip_prefix('"')
                .and_then(|l| l.strip_suffix('"'))
                .unwrap_or(l)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_blanks_go_and_quotes_keep_an_entrys_blanks() {
        let text = "# a comment\n\nfix\n  add  \n\"next \"\n\"# not a comment\"\n";
        assert_eq!(entries(text), ["fix", "add", "next ", "# not a comment"]);
    }
}
