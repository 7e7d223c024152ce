//! Reading an agent's or a user's prose: its lines outside code fences, Markdown marks taken
//! off, list items, sentences, whole words; and cutting text to a length.

/// Whether `text` has `word` with no letter either side.
pub(super) fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The lines of `text` outside code fences, trimmed.
pub(super) fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push(t);
        }
    }
    out
}

/// A line without its Markdown heading, list or emphasis marks.
pub(super) fn bare(line: &str) -> &str {
    line.trim_start_matches(|c: char| matches!(c, '#' | '*' | '-' | '>' | '_') || c.is_whitespace())
        .trim_end_matches(|c: char| matches!(c, '*' | '_') || c.is_whitespace())
}

pub(super) fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The sentences of a paragraph with where each starts: cut after `.`, `!` or `?` followed by
/// a space.
pub(super) fn sentences(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1) == Some(&b' ') {
            out.push((start, &text[start..=i]));
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push((start, &text[start..]));
    }
    out.into_iter()
        .map(|(at, s)| (at + (s.len() - s.trim_start().len()), s.trim()))
        .filter(|(_, s)| !s.is_empty())
        .collect()
}

/// At most `max` characters: cut on a character boundary and marked with `…` when longer.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some(_) => {
            let keep = max.saturating_sub(1);
            let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
            format!("{}…", &text[..end])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_short_text_and_marks_long_text() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        let s = "é".repeat(600);
        let c = cut(&s, 500);
        assert_eq!(c.chars().count(), 500);
        assert!(c.ends_with('…'));
    }
}
