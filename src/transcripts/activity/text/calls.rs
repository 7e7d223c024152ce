//! Tool calls and their output as text: exit codes in an output, the files of a Codex patch, a
//! command given as argv, string values in a raw JSON line.

/// The exit code a tool's output states: "Exit code N" (Claude Code, Codex), "Exit Code: N"
/// (Gemini), "Process exited with code N" (Codex `exec_command`), at a line's start.
pub fn exit_code_in(output: &str) -> Option<i64> {
    const LEADS: [&str; 4] = [
        "Exit code: ",
        "Exit code ",
        "Exit Code: ",
        "Process exited with code ",
    ];
    for line in output.lines().take(400) {
        let line = line.trim_start();
        for lead in LEADS {
            if let Some(rest) = line.strip_prefix(lead) {
                let digits: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                if let Ok(n) = digits.parse() {
                    return Some(n);
                }
            }
        }
    }
    None
}

/// The files a Codex patch (`*** Begin Patch` … `*** End Patch`) adds, updates, deletes or moves
/// to, in the patch's order; empty when `text` holds no patch.
pub fn patch_files(text: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    if !text.contains("*** Begin Patch") {
        return Vec::new();
    }
    let mut files = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        for h in HEADERS {
            if let Some(p) = line.strip_prefix(h) {
                let p = p.trim();
                if !p.is_empty() {
                    files.push(p.to_string());
                }
            }
        }
    }
    files
}

/// A command given as argv, as a person would type it: the script of `sh -c`/`bash -lc`, else
/// the words joined (quoted when they hold blanks).
pub fn argv_display(argv: &[&str]) -> String {
    if argv.len() == 1 {
        return argv[0].to_string();
    }
    if argv.len() == 3 && matches!(argv[1], "-c" | "-lc" | "-l -c") {
        return argv[2].to_string();
    }
    argv.iter()
        .map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every string value that follows `lead` (a key with its opening quote) in `line`.
pub fn string_values<'a>(line: &'a str, lead: &'a str) -> impl Iterator<Item = &'a str> {
    line.match_indices(lead).filter_map(move |(at, _)| {
        let rest = &line[at + lead.len()..];
        rest.find('"').map(|end| &rest[..end])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_in_each_agents_words() {
        assert_eq!(exit_code_in("Exit code 101\nerror: test failed"), Some(101));
        assert_eq!(exit_code_in("Exit code: 2\nWall time: 1s"), Some(2));
        assert_eq!(exit_code_in("Command: ls\nExit Code: 0\n"), Some(0));
        assert_eq!(exit_code_in("Chunk\nProcess exited with code 1\n"), Some(1));
        assert_eq!(exit_code_in("all fine"), None);
        assert_eq!(exit_code_in("Exit Code: (none)"), None);
    }
}
