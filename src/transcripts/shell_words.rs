//! The words of a simple shell command as the shell reads them back: split at blanks, quotes
//! and backslashes taken off. Enough to read a command's program, flags and paths; expansions
//! (`$X`, globs) are left as written. Both readers of shell commands use it: what a command
//! changes and reads (`activity::shell`) and what it can discard (`destructive`).

/// The words of `part`, one simple command (no `;`, `|` or `&&` in it): split at blanks outside
/// quotes; `'…'` and `"…"` taken off (an empty pair is an empty word); a backslash outside
/// quotes keeps the next character as it is, inside double quotes only before `"`, `\`, `$`
/// and `` ` ``, inside single quotes never.
pub fn words(part: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                word.extend(chars.next());
            }
            (Some(_), c) => word.push(c),
            (None, '\\') => {
                word.extend(chars.next());
                started = true;
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn blanks_split_and_quotes_come_off() {
        assert_eq!(words("rm  -rf\tbuild\nsrc"), ["rm", "-rf", "build", "src"]);
        assert_eq!(
            words("sudo rm -r -f 'my dir'"),
            ["sudo", "rm", "-r", "-f", "my dir"]
        );
        assert_eq!(
            words(r#"sed -i "s/a b/c/" x.rs"#),
            ["sed", "-i", "s/a b/c/", "x.rs"]
        );
        // Quoted parts join the word around them; an empty pair is a word of its own.
        assert_eq!(words("a'b c'd \"\" ''"), ["ab cd", "", ""]);
        // An unclosed quote runs to the end.
        assert_eq!(words("echo 'half open"), ["echo", "half open"]);
    }

    #[test]
    fn a_backslash_escapes_as_the_shell_reads_it() {
        // Outside quotes: the next character as it is (a blank stays in the word).
        assert_eq!(words(r"rm my\ notes.md"), ["rm", "my notes.md"]);
        assert_eq!(words(r"echo \'x\'"), ["echo", "'x'"]);
        // Inside double quotes: only before `"`, `\`, `$` and a backquote.
        assert_eq!(
            words(r#"echo "a\"b" "c\d" "\$HOME""#),
            ["echo", "a\"b", r"c\d", "$HOME"]
        );
        // Inside single quotes: never.
        assert_eq!(words(r"sed 's/a\/b/c/'"), ["sed", r"s/a\/b/c/"]);
        // A trailing backslash is dropped, the word kept.
        assert_eq!(words(r"ls \"), ["ls", ""]);
    }
}
