//! The files a shell command clearly names as changed or read: `sed -i`, `perl -i`, `mv`,
//! `cp`, `rm`, `touch`, `tee`, output redirections, the package managers' manifests; `cat`,
//! `head`, `tail`, `sed -n` and the like for reads. Only where it is clear: a word with a
//! variable, a command substitution or a glob is not a path, and a heredoc's body is not
//! commands.

use crate::transcripts::shell_words;

/// What a command names.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Named {
    /// As written (relative to the command's folder, after any `cd` in it), in order.
    pub changed: Vec<String>,
    pub read: Vec<String>,
}

/// Commands that change the manifest of the project they run in, and the manifest.
const MANIFESTS: [(&str, &[&str], &str); 10] = [
    (
        "npm",
        &["install", "i", "add", "uninstall", "remove", "rm"],
        "package.json",
    ),
    (
        "pnpm",
        &["add", "remove", "rm", "install", "i"],
        "package.json",
    ),
    ("yarn", &["add", "remove"], "package.json"),
    ("bun", &["add", "remove", "install", "i"], "package.json"),
    ("cargo", &["add", "remove", "rm"], "Cargo.toml"),
    ("poetry", &["add", "remove"], "pyproject.toml"),
    ("uv", &["add", "remove"], "pyproject.toml"),
    ("go", &["get"], "go.mod"),
    ("bundle", &["add", "remove"], "Gemfile"),
    ("composer", &["require", "remove"], "composer.json"),
];

/// Commands that only read the files they name (after their options).
const READERS: [&str; 7] = ["cat", "head", "tail", "less", "nl", "bat", "wc"];

/// The files `command` names as changed and as read.
pub fn named_files(command: &str) -> Named {
    let mut named = Named::default();
    let mut dir: Option<String> = None;
    for simple in simple_commands(command) {
        let words = words(&simple.text);
        let Some(first) = words.first() else {
            continue;
        };
        let at = |p: &str| match &dir {
            Some(d) if !p.starts_with('/') && !p.starts_with('~') => format!("{d}/{p}"),
            _ => p.to_string(),
        };
        for target in &simple.redirects {
            if clear_path(target) && target != "/dev/null" {
                named.changed.push(at(target));
            }
        }
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        let operands = operands(&args, value_options(first));
        match first.as_str() {
            "cd" => {
                if let Some(d) = operands.first().filter(|d| clear_path(d)) {
                    dir = Some(at(d));
                }
            }
            "sed" | "perl" => {
                let in_place = args.iter().any(|a| {
                    a.starts_with("-i") || a.starts_with("--in-place") || a.starts_with("-pi")
                });
                // The script is the first operand unless `-e` gave it.
                let scripted = args.iter().any(|a| *a == "-e" || *a == "-f");
                let files = operands.iter().skip(usize::from(!scripted));
                let quiet_print = first == "sed" && args.contains(&"-n");
                for f in files.filter(|f| clear_path(f)) {
                    if in_place {
                        named.changed.push(at(f));
                    } else if quiet_print {
                        named.read.push(at(f));
                    }
                }
            }
            "mv" | "rm" | "touch" | "tee" => {
                for f in operands.iter().filter(|f| clear_path(f)) {
                    named.changed.push(at(f));
                }
            }
            "cp" => {
                if let Some(f) = operands
                    .last()
                    .filter(|f| operands.len() > 1 && clear_path(f))
                {
                    named.changed.push(at(f));
                }
            }
            "git" if matches!(operands.first(), Some(&"mv" | &"rm")) => {
                for f in operands[1..].iter().filter(|f| clear_path(f)) {
                    named.changed.push(at(f));
                }
            }
            reader if READERS.contains(&reader) => {
                for f in operands.iter().filter(|f| clear_path(f)) {
                    named.read.push(at(f));
                }
            }
            tool => {
                let manifest = MANIFESTS.iter().find(|(name, subs, _)| {
                    *name == tool && operands.first().is_some_and(|s| subs.contains(s))
                });
                if let Some((_, _, file)) = manifest {
                    named.changed.push(at(file));
                }
            }
        }
    }
    named.changed.dedup();
    named.read.dedup();
    named
}

/// The options of `command` whose value is the next word (`sed -e SCRIPT`, `head -n 20`).
fn value_options(command: &str) -> &'static [&'static str] {
    match command {
        "sed" | "perl" => &["-e", "-f"],
        "head" | "tail" => &["-n", "-c"],
        "cp" | "mv" => &["-t", "-S"],
        _ => &[],
    }
}

/// The words that are not options or an option's value.
fn operands<'a>(args: &[&'a str], value_options: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a.starts_with('-') {
            skip = value_options.contains(a);
            continue;
        }
        out.push(*a);
    }
    out
}

/// A word that is a path as written: no variable, substitution, glob or brace; a letter in it.
fn clear_path(word: &str) -> bool {
    !word.is_empty()
        && !word.contains([
            '$', '`', '*', '?', '{', '}', '(', ')', '<', '>', '|', '&', ';', '=', ',',
        ])
        && !word.contains("://")
        && word.chars().any(char::is_alphabetic)
}

struct Simple {
    text: String,
    /// Targets of `>` and `>>` (not `2>&1`, not `>&2`).
    redirects: Vec<String>,
}

/// The simple commands of a command line: split on `&&`, `||`, `;`, `|` and new lines
/// outside quotes, a heredoc's body left out, redirections taken out of their text.
fn simple_commands(command: &str) -> Vec<Simple> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut redirects = Vec::new();
    let mut quote: Option<char> = None;
    let mut heredoc: Option<String> = None;
    let mut chars = command.chars().peekable();
    let mut line = String::new();
    let flush = |cur: &mut String, redirects: &mut Vec<String>, out: &mut Vec<Simple>| {
        if !cur.trim().is_empty() {
            out.push(Simple {
                text: std::mem::take(cur),
                redirects: std::mem::take(redirects),
            });
        }
        cur.clear();
        redirects.clear();
    };
    while let Some(c) = chars.next() {
        if let Some(end) = &heredoc {
            // Inside a heredoc's body: skip lines until its terminator.
            if c == '\n' {
                if line.trim() == end {
                    heredoc = None;
                }
                line.clear();
            } else {
                line.push(c);
            }
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, '\\') => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (None, '<') if chars.peek() == Some(&'<') => {
                chars.next();
                if chars.peek() == Some(&'<') {
                    chars.next(); // a here-string: its word is data
                    continue;
                }
                let mut tag = String::new();
                while chars.peek().is_some_and(|c| *c == '-' || c.is_whitespace()) {
                    chars.next();
                }
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || matches!(n, ';' | '&' | '|' | ')') {
                        break;
                    }
                    tag.push(n);
                    chars.next();
                }
                let tag = tag.trim_matches(['\'', '"']).to_string();
                if !tag.is_empty() {
                    // The body starts on the next line; the rest of this one is still commands.
                    let mut rest = String::new();
                    for n in chars.by_ref() {
                        if n == '\n' {
                            break;
                        }
                        rest.push(n);
                    }
                    for s in simple_commands(&rest) {
                        redirects.extend(s.redirects);
                        cur.push(' ');
                        cur.push_str(&s.text);
                    }
                    flush(&mut cur, &mut redirects, &mut out);
                    heredoc = Some(tag);
                    line.clear();
                }
            }
            (None, '>') => {
                let after_fd = cur.ends_with(|c: char| c.is_ascii_digit())
                    && cur
                        .trim_end_matches(|c: char| c.is_ascii_digit())
                        .ends_with(' ');
                if chars.peek() == Some(&'>') {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    chars.next();
                    while chars
                        .peek()
                        .is_some_and(|c| c.is_ascii_digit() || *c == '-')
                    {
                        chars.next();
                    }
                    continue; // `>&2`, `2>&1`: not a file
                }
                if chars.peek() == Some(&'(') {
                    continue; // `>(…)`: not a file
                }
                let mut target = String::new();
                while chars.peek().is_some_and(|c| *c == ' ') {
                    chars.next();
                }
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || matches!(n, ';' | '&' | '|' | ')') {
                        break;
                    }
                    target.push(n);
                    chars.next();
                }
                let target = target.trim_matches(['\'', '"']).to_string();
                if after_fd && cur.ends_with('2') {
                    continue; // stderr to a file: a log, not the work
                }
                redirects.push(target);
            }
            (None, ';' | '\n') => flush(&mut cur, &mut redirects, &mut out),
            (None, '&' | '|') => {
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                flush(&mut cur, &mut redirects, &mut out);
            }
            (None, c) => cur.push(c),
        }
    }
    flush(&mut cur, &mut redirects, &mut out);
    out
}

/// The words of a simple command (see [`shell_words::words`]); leading `VAR=value`
/// assignments and `sudo` left out.
fn words(text: &str) -> Vec<String> {
    let mut out = shell_words::words(text);
    let skip = out
        .iter()
        .take_while(|w| w.as_str() == "sudo" || w.split_once('=').is_some_and(|(k, _)| is_name(k)))
        .count();
    out.split_off(skip)
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(cmd: &str) -> Vec<String> {
        named_files(cmd).changed
    }

    #[test]
    fn in_place_edits_moves_and_redirections_are_changes() {
        assert_eq!(
            changed("sed -i 's/a/b/' src/x.rs src/y.rs"),
            ["src/x.rs", "src/y.rs"]
        );
        assert_eq!(changed("sed -i.bak -e 's/a/b/' conf.ini"), ["conf.ini"]);
        assert_eq!(changed("mv old.md docs/new.md"), ["old.md", "docs/new.md"]);
        assert_eq!(changed("cp a.toml b.toml"), ["b.toml"]);
        assert_eq!(
            changed("echo hi > notes.txt && cat notes.txt"),
            ["notes.txt"]
        );
        assert_eq!(changed("printf x >> log/out.txt"), ["log/out.txt"]);
        assert_eq!(
            changed("cd web && npm install left-pad"),
            ["web/package.json"]
        );
        assert_eq!(changed("cargo add serde --features derive"), ["Cargo.toml"]);
        assert_eq!(changed("git mv a.rs b.rs"), ["a.rs", "b.rs"]);
        // A blank kept in a word by a backslash is part of the path.
        assert_eq!(changed(r"touch my\ notes.md"), ["my notes.md"]);
        assert_eq!(
            changed("FOO=1 sudo sed -i 's/a/b/' \"an odd name.txt\""),
            ["an odd name.txt"]
        );
    }

    #[test]
    fn what_is_not_clearly_a_file_is_not_one() {
        assert!(changed("cargo test 2>&1 | tail -5").is_empty());
        assert!(changed("make 2> build.log").is_empty());
        assert!(changed("ls > /dev/null").is_empty());
        assert!(changed("sed -i 's/a/b/' $FILE").is_empty());
        assert!(changed("rm -rf target/*").is_empty());
        assert!(changed("grep -n 'a > b' src/x.rs").is_empty());
        assert!(changed("sed -n '1,20p' src/x.rs").is_empty());
        // A heredoc's body is data, its redirection a change.
        assert_eq!(
            changed("cat > notes.md <<'EOF'\nmv a b\nrm c\nEOF\ngit add notes.md"),
            ["notes.md"]
        );
    }

    #[test]
    fn readers_name_what_they_read() {
        assert_eq!(
            named_files("sed -n '1,80p' src/lib.rs").read,
            ["src/lib.rs"]
        );
        assert_eq!(named_files("cat Cargo.toml | head -3").read, ["Cargo.toml"]);
        assert_eq!(named_files("nl -ba src/a.rs").read, ["src/a.rs"]);
    }
}
