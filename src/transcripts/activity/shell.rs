//! The files a shell command clearly names as changed or read: `sed -i`, `perl -i`, `mv`,
//! `cp`, `rm`, `touch`, `tee`, output redirections, the package managers' manifests; `cat`,
//! `head`, `tail`, `sed -n` and the like for reads. Only where it is clear: a word with a
//! variable, a command substitution or a glob is not a path, and a heredoc's body is not
//! commands.

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
        let mut words = words(&simple.text);
        // A package runner's tool is the command (`npx prettier --write a.ts`).
        while words
            .first()
            .is_some_and(|w| matches!(w.as_str(), "npx" | "bunx" | "pnpx"))
        {
            words.remove(0);
            while words.first().is_some_and(|w| w.starts_with('-')) {
                words.remove(0);
            }
        }
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
            "cp" | "install" | "ln" => {
                if let Some(f) = operands
                    .last()
                    .filter(|f| operands.len() > 1 && clear_path(f))
                {
                    named.changed.push(at(f));
                }
            }
            // `git mv` and `git rm` change what they name; `git add` stages the session's
            // changes to the files it names (not `.` or `-A`: no file named). `-C DIR` runs it
            // in DIR.
            "git" if matches!(operands.first(), Some(&"mv" | &"rm" | &"add")) => {
                let base = git_folder(&args);
                // A folder (`src/`) is not a file the record can list.
                for f in operands[1..]
                    .iter()
                    .filter(|f| clear_path(f) && !f.ends_with('/'))
                {
                    let f = match &base {
                        Some(b) if !f.starts_with(['/', '~']) => format!("{b}/{f}"),
                        _ => f.to_string(),
                    };
                    named.changed.push(at(&f));
                }
            }
            // Formatters told to write their changes back rewrite the files they name.
            tool if rewrites_in_place(tool, &args) => {
                for f in operands
                    .iter()
                    .skip(usize::from(tool_takes_subcommand(tool)))
                    .filter(|f| clear_path(f) && names_a_file(f))
                {
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
        "install" => &["-m", "-o", "-g", "-t"],
        "git" => &["-C", "-c"],
        "prettier" => &["--config", "--parser", "--ignore-path"],
        "ruff" | "black" => &["--config", "--line-length", "-l", "--target-version"],
        "clang-format" => &["--style", "--assume-filename"],
        "shfmt" => &["-i", "-ln"],
        _ => &[],
    }
}

/// The folder `git -C DIR …` runs in.
fn git_folder(args: &[&str]) -> Option<String> {
    let at = args.iter().position(|a| *a == "-C")?;
    args.get(at + 1)
        .filter(|d| clear_path(d))
        .map(|d| d.trim_end_matches('/').to_string())
}

/// Whether `tool` with `args` writes its result back into the files it names: `gofmt -w`,
/// `prettier --write`, `clang-format -i`, `eslint --fix`, `ruff format`, `black`, `rustfmt`
/// (not with `--check`, `--diff` or `-l`, which only report).
fn rewrites_in_place(tool: &str, args: &[&str]) -> bool {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(a));
    if has(&[
        "--check",
        "--diff",
        "-d",
        "--list-different",
        "-l",
        "--dry-run",
    ]) {
        return false;
    }
    match tool {
        "gofmt" | "goimports" | "shfmt" => has(&["-w"]),
        "prettier" => has(&["--write", "-w"]),
        "clang-format" | "swift-format" => has(&["-i", "--in-place"]),
        "eslint" | "stylelint" | "biome" => has(&["--fix", "--write"]),
        "ruff" => args.first() == Some(&"format") || has(&["--fix"]),
        "black" | "rustfmt" | "swiftformat" | "autopep8" | "isort" => {
            tool != "autopep8" || has(&["-i", "--in-place"])
        }
        _ => false,
    }
}

/// Formatters whose first operand is a subcommand (`ruff format x.py`, `biome format …`).
fn tool_takes_subcommand(tool: &str) -> bool {
    matches!(tool, "ruff" | "biome")
}

/// A word whose last part has an extension (`src/x.go`, not `./...` or `src`): a
/// formatter given a folder rewrites files it does not name.
fn names_a_file(word: &str) -> bool {
    let last = word.rsplit('/').next().unwrap_or("");
    last.rfind('.').is_some_and(|i| {
        i > 0 && i + 1 < last.len() && last[i + 1..].chars().all(char::is_alphanumeric)
    })
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
        // An empty word (BSD `sed -i '' …`'s suffix) is never a file or a script.
        if !a.is_empty() {
            out.push(*a);
        }
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

/// The words of a simple command, quotes taken off; leading `VAR=value` assignments and
/// `sudo` left out.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
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
        // BSD sed's empty suffix is its own word: the script is still not a file.
        assert_eq!(changed("sed -i '' 's/a/b/g' conf.ini"), ["conf.ini"]);
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
    fn files_staged_by_name_are_the_sessions_changes() {
        // The shape of a real commit step: `cd` into another checkout, stage, commit.
        assert_eq!(
            changed(
                "cd /Users/a/dev/lore && git add README.md lore.sh lib/lore-client-base.sh && \
                 git commit -m \"$(cat <<'EOF'\nfeat: extend search\nEOF\n)\""
            ),
            [
                "/Users/a/dev/lore/README.md",
                "/Users/a/dev/lore/lore.sh",
                "/Users/a/dev/lore/lib/lore-client-base.sh"
            ]
        );
        assert_eq!(changed("git -C web add src/app.ts"), ["web/src/app.ts"]);
        assert_eq!(changed("git add -- docs/a.md"), ["docs/a.md"]);
        // Nothing named: everything, a folder, a glob, the index only.
        assert!(changed("git add -A && git commit -m 'wip'").is_empty());
        assert!(changed("git add . && git status").is_empty());
        assert!(changed("git add src/").is_empty());
        assert!(changed("git add '*.rs'").is_empty());
        assert!(changed("git diff --stat README.md && git log -- src/a.rs").is_empty());
        assert!(changed("git show HEAD:src/a.rs").is_empty());
    }

    #[test]
    fn formatters_told_to_write_change_the_files_they_name() {
        assert_eq!(changed("gofmt -w cmd/main.go"), ["cmd/main.go"]);
        assert_eq!(
            changed("npx --yes prettier --write src/a.ts src/b.css"),
            ["src/a.ts", "src/b.css"]
        );
        assert_eq!(changed("prettier --write src/a.ts"), ["src/a.ts"]);
        assert_eq!(changed("clang-format -i --style=file a.cc"), ["a.cc"]);
        assert_eq!(changed("ruff format app/x.py"), ["app/x.py"]);
        assert_eq!(changed("black app/x.py && pytest -q"), ["app/x.py"]);
        assert_eq!(changed("rustfmt src/lib.rs"), ["src/lib.rs"]);
        // Reporting only, or over a folder: nothing named is changed.
        assert!(changed("gofmt -l cmd/main.go").is_empty());
        assert!(changed("gofmt cmd/main.go").is_empty());
        assert!(changed("black --check app/x.py").is_empty());
        assert!(changed("prettier --check src/a.ts").is_empty());
        assert!(changed("gofmt -w ./...").is_empty());
        assert!(changed("ruff check app/x.py").is_empty());
        assert!(changed("rustfmt --check src/lib.rs").is_empty());
    }

    #[test]
    fn links_and_installs_change_their_target() {
        assert_eq!(changed("ln -sf ../shared/a.md docs/a.md"), ["docs/a.md"]);
        assert_eq!(changed("install -m 755 build/tool bin/tool"), ["bin/tool"]);
    }

    #[test]
    fn reads_searches_listings_and_echoed_paths_change_nothing() {
        for cmd in [
            "cat src/a.rs",
            "grep -rn 'fn main' src/main.rs",
            "ls -la docs/a.md",
            "echo 'edit src/a.rs next'",
            "echo \"git add src/a.rs\"",
            "head -50 README.md | grep TODO",
            "find . -name '*.go' | xargs grep -l foo",
        ] {
            assert!(changed(cmd).is_empty(), "{cmd}");
        }
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
