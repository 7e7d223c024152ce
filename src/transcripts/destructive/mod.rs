//! Shell commands that can discard uncommitted work, recognised from their
//! text before they run (an agent's pre-tool hook). A string check and
//! nothing else: it runs before every shell call an agent makes, so it reads
//! no file and starts no process; what the repository holds is asked only
//! for the commands it finds (and git's aliases only for a git subcommand
//! git does not have).
//!
//! It reads the line by effect, not by spelling: inside `bash -c '…'`,
//! `eval`, `( … )`, `{ …; }`, `$(…)` and behind wrappers (`timeout 60`,
//! `env -i`, `nohup`, `nice`, `xargs`, …), and every deleting form (`rm`
//! with any flags, `find -delete`, `git rm`, …). Where it cannot tell what a
//! command deletes (`make clean`, `eval "$X"`) it says so ([`Kind::Unsure`]):
//! a snapshot costs little, a lost file everything.

use std::path::{Component, Path, PathBuf};

mod git;
use git::{git, global_options};

// `destructive::words` is where the pipeline reads a command's words from.
pub use super::shell_words::words;

/// What a command would discard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `git reset --hard`, `git switch --discard-changes`.
    ResetHard,
    /// `git checkout -- PATHS`, `git checkout .`, `git checkout -f`, `git checkout HEAD PATHS`,
    /// `git restore PATHS`, `git rm PATHS`: the work tree's changes to these paths (`.`: all).
    Discard(Vec<String>),
    /// `git checkout A [B …]` without `--`: git reads `A` as a revision when it names one (a
    /// switch; the rest are paths), else as a path like the rest. Which it is depends on the
    /// disk and the refs, read where the command runs (`within`: the folder it runs in,
    /// relative to the shell's, from `git -C` or `cd`; empty: the shell's).
    Checkout {
        within: String,
        operands: Vec<String>,
    },
    /// `git clean -f…`: untracked files.
    Clean,
    /// `git stash drop`, `git stash clear`.
    StashDrop,
    /// `rm PATHS` (any flags), `unlink`, `find PATHS -delete`, `find … -exec rm`, `xargs rm`
    /// (paths from stdin: `*`, everything).
    Remove(Vec<String>),
    /// `git push --force`, with the refspecs given (none: the current branch).
    PushForce(Vec<String>),
    /// A git subcommand git does not have: an alias, to be looked up (`git NAME ARGS`).
    Alias(String, Vec<String>),
    /// Something that may delete anything (`make clean`, `eval "$X"`): treated as all of the work.
    Unsure,
}

/// A destructive command found in a shell line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: Kind,
    /// The part of the line that runs it.
    pub command: String,
}

/// Words that every destructive form contains; a line with none of them is
/// answered after a few substring searches.
const MENTIONS: [&str; 6] = ["git", "rm", "find", "make", "eval", "unlink"];

/// How deep `bash -c "eval '…'"` and the like are followed.
const MAX_DEPTH: usize = 6;

/// The first command in `line` (a shell line: `a && b; c | d`) that can
/// discard uncommitted work, if any.
pub fn recognise(line: &str) -> Option<Found> {
    recognise_all(line).into_iter().next()
}

/// Every command in `line` that can discard uncommitted work, in order.
pub fn recognise_all(line: &str) -> Vec<Found> {
    let mut found = Vec::new();
    if MENTIONS.iter().any(|m| line.contains(m)) {
        scan(line, 0, &mut found);
    }
    found
}

/// Finds the destructive simple commands of a shell text, nested ones included.
fn scan(text: &str, depth: usize, found: &mut Vec<Found>) {
    if depth > MAX_DEPTH {
        // Nested past reason: take it as destructive rather than miss it.
        found.push(Found {
            kind: Kind::Unsure,
            command: text.trim().to_string(),
        });
        return;
    }
    let (parts, nested) = split(text);
    // `cd DIR && git checkout -- a.rs`: a path after a `cd` is read from both folders (a `cd`
    // inside `( … )` ends with it, which the split does not see).
    let mut cd: Option<String> = None;
    for part in &parts {
        let before = found.len();
        one(part, depth, found);
        if let Some(dir) = &cd {
            let copies: Vec<Found> = found[before..]
                .iter()
                .filter(|f| {
                    matches!(
                        f.kind,
                        Kind::Discard(_) | Kind::Remove(_) | Kind::Checkout { .. }
                    )
                })
                .map(|f| Found {
                    kind: moved(f.kind.clone(), dir),
                    command: f.command.clone(),
                })
                .collect();
            found.extend(copies);
        }
        if let Some(dir) = cd_target(part) {
            cd = Some(joined(cd.as_deref().unwrap_or(""), &dir));
        }
    }
    for inner in &nested {
        scan(inner, depth + 1, found);
    }
}

/// Splits a shell text into its simple commands (at `;`, `&`, `|`, newlines,
/// parentheses and backquotes outside quotes), and takes out the command
/// substitutions (`$(…)`, `` `…` ``), which stand as `$_` in their command.
fn split(text: &str) -> (Vec<String>, Vec<String>) {
    let chars: Vec<char> = text.chars().collect();
    let mut parts = Vec::new();
    let mut nested = Vec::new();
    let mut part = String::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some('\''), '\'') => {
                quote = None;
                part.push(c);
            }
            (Some('\''), _) => part.push(c),
            (_, '\\') => {
                part.push(c);
                if let Some(&next) = chars.get(i + 1) {
                    part.push(next);
                    i += 1;
                }
            }
            (_, '$') if chars.get(i + 1) == Some(&'(') => {
                let (inner, end) = balanced(&chars, i + 2);
                nested.push(inner);
                part.push_str("$_");
                i = end;
            }
            (_, '`') => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '`')
                    .map_or(chars.len(), |at| i + 1 + at);
                nested.push(chars[i + 1..end.min(chars.len())].iter().collect());
                part.push_str("$_");
                i = end;
            }
            (Some('"'), '"') => {
                quote = None;
                part.push(c);
            }
            (Some(_), _) => part.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                part.push(c);
            }
            (None, '\n' | ';' | '&' | '|' | '(' | ')') => parts.push(std::mem::take(&mut part)),
            (None, _) => part.push(c),
        }
        i += 1;
    }
    parts.push(part);
    parts.retain(|p| !p.trim().is_empty());
    (parts, nested)
}

/// The text from `start` to its closing parenthesis (nesting counted), and
/// where that parenthesis is.
fn balanced(chars: &[char], start: usize) -> (String, usize) {
    let mut depth = 1;
    let mut quote: Option<char> = None;
    for (at, &c) in chars.iter().enumerate().skip(start) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return (chars[start..at].iter().collect(), at);
                }
            }
            _ => {}
        }
    }
    (
        chars[start.min(chars.len())..].iter().collect(),
        chars.len(),
    )
}

/// The folder `cd DIR` (or `pushd`) goes to: home without one, unknown (`$OLDPWD`) for `cd -`.
fn cd_target(part: &str) -> Option<String> {
    let words = words(part);
    if !matches!(words.first().map(String::as_str), Some("cd" | "pushd")) {
        return None;
    }
    let dir = words[1..].iter().find(|w| !w.starts_with('-') || *w == "-");
    Some(match dir.map(String::as_str) {
        None => "~".into(),
        Some("-") => "$OLDPWD".into(),
        Some(d) => d.to_string(),
    })
}

/// The command `git submodule foreach [--recursive] CMD…` runs in each submodule.
fn submodule_foreach(args: &[String]) -> Option<String> {
    let (at, _) = global_options(args);
    if args.get(at).map(String::as_str) != Some("submodule") {
        return None;
    }
    let mut rest = args[at + 1..]
        .iter()
        .skip_while(|a| *a == "-q" || *a == "--quiet");
    if rest.next().map(String::as_str) != Some("foreach") {
        return None;
    }
    let command: Vec<&str> = rest
        .map(String::as_str)
        .skip_while(|a| matches!(*a, "-q" | "--quiet" | "--recursive"))
        .collect();
    Some(command.join(" "))
}

/// One simple command: its wrappers taken off, then the program read.
fn one(part: &str, depth: usize, found: &mut Vec<Found>) {
    let words = words(part);
    let mut rest = words.as_slice();
    loop {
        let Some((first, after)) = rest.split_first() else {
            return;
        };
        let program = first.rsplit('/').next().unwrap_or(first).to_string();
        let skipped = match program.as_str() {
            "{" | "}" | "!" | "then" | "do" | "else" | "time" | "nohup" | "builtin" | "exec"
            | "setsid" | "chronic" | "unbuffer" | "caffeinate" => Some(after),
            a if a.contains('=') && !a.starts_with('-') && !a.starts_with('=') => Some(after),
            "sudo" | "doas" => Some(options(
                after,
                &["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t"],
            )),
            "command" => {
                // `command -v git` only looks it up.
                if after.first().is_some_and(|a| a == "-v" || a == "-V") {
                    return;
                }
                Some(options(after, &[]))
            }
            "env" => Some(options(after, &["-u", "-C", "--unset", "--chdir"])),
            "nice" => Some(options(after, &["-n", "--adjustment"])),
            "ionice" => Some(options(after, &["-c", "-n", "-p", "-t"])),
            "stdbuf" => Some(options(after, &["-i", "-o", "-e"])),
            "timeout" => {
                let at = options(after, &["-s", "-k", "--signal", "--kill-after"]);
                // The duration.
                Some(at.get(1..).unwrap_or(&[]))
            }
            "xargs" => {
                let at = options(
                    after,
                    &[
                        "-I",
                        "-n",
                        "-P",
                        "-d",
                        "-L",
                        "-s",
                        "-E",
                        "-a",
                        "--arg-file",
                        "--delimiter",
                        "--max-args",
                        "--max-procs",
                        "--replace",
                    ],
                );
                if at.is_empty() {
                    // `xargs` alone runs `echo`.
                    return;
                }
                Some(at)
            }
            "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "fish" | "busybox" => {
                if let Some(script) = shell_script(after) {
                    scan(&script, depth + 1, found);
                    return;
                }
                if program == "busybox" {
                    Some(after)
                } else {
                    return;
                }
            }
            "eval" => {
                let text = after.join(" ");
                let before = found.len();
                scan(&text, depth + 1, found);
                if found.len() == before && text.contains('$') {
                    // What it runs is not in the line.
                    found.push(Found {
                        kind: Kind::Unsure,
                        command: part.trim().to_string(),
                    });
                }
                return;
            }
            _ => None,
        };
        match skipped {
            Some(after) => rest = after,
            None => break,
        }
    }
    let (program, args) = match rest.split_first() {
        Some(p) => p,
        None => return,
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    if program == "git" {
        if let Some(script) = submodule_foreach(args) {
            // Run in every submodule: whatever it names may be anywhere.
            let before = found.len();
            scan(&script, depth + 1, found);
            for f in &mut found[before..] {
                f.kind = match std::mem::replace(&mut f.kind, Kind::Unsure) {
                    Kind::Discard(_) => Kind::Discard(vec!["*".into()]),
                    Kind::Remove(_) => Kind::Remove(vec!["*".into()]),
                    Kind::Checkout { .. } => Kind::Unsure,
                    other => other,
                };
            }
            return;
        }
    }
    let kind = match program {
        "git" => git(args),
        "rm" | "unlink" | "shred" | "srm" => rm(args),
        "find" => find(args, depth, found),
        "make" | "gmake" => make(args),
        _ => None,
    };
    if let Some(kind) = kind {
        found.push(Found {
            kind,
            command: part.trim().to_string(),
        });
    }
}

/// Past a wrapper's options (`taking`: those whose value is the next word) to the command it runs.
fn options<'a>(args: &'a [String], taking: &[&str]) -> &'a [String] {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            return &args[i + 1..];
        }
        if taking.contains(&a.as_str()) {
            i += 2;
        } else if a.starts_with('-') || (a.contains('=') && !a.starts_with('=')) {
            i += 1;
        } else {
            break;
        }
    }
    args.get(i..).unwrap_or(&[])
}

/// The script of `sh -c SCRIPT` (`-c` alone or in a cluster: `-lc`, `-ec`).
fn shell_script(args: &[String]) -> Option<String> {
    let mut asked = false;
    for a in args {
        if a.starts_with('-') && !a.starts_with("--") {
            asked |= a.contains('c');
        } else if a.starts_with("--") || a.starts_with('+') {
            continue;
        } else {
            return asked.then(|| a.clone());
        }
    }
    None
}

/// `dir/path`, a path that is absolute (or from home) as it is.
fn joined(dir: &str, path: &str) -> String {
    if path.is_empty() || path == "." {
        return dir.to_string();
    }
    if dir.is_empty() || dir == "." || path.starts_with('/') || path.starts_with('~') {
        path.to_string()
    } else {
        format!("{}/{path}", dir.trim_end_matches('/'))
    }
}

/// `kind` as run from the folder `dir` (relative to the shell's).
fn moved(kind: Kind, dir: &str) -> Kind {
    let all = |paths: Vec<String>| paths.iter().map(|p| joined(dir, p)).collect();
    match kind {
        Kind::Discard(p) => Kind::Discard(all(p)),
        Kind::Remove(p) => Kind::Remove(all(p)),
        Kind::Checkout { within, operands } => Kind::Checkout {
            within: joined(dir, &within),
            operands,
        },
        other => other,
    }
}

/// `rm` (and `unlink`, `shred`) with any flags: the paths it deletes. With
/// none (`xargs rm`: they come from stdin), any path (`*`).
fn rm(args: &[String]) -> Option<Kind> {
    if args.iter().any(|a| a == "--help" || a == "--version") {
        return None;
    }
    let paths = match after_double_dash(args) {
        p if !p.is_empty() => p,
        _ => operands(
            args,
            &["-n", "--iterations", "-s", "--size", "--random-source"],
        ),
    };
    if paths.is_empty() {
        return Some(Kind::Remove(vec!["*".into()]));
    }
    Some(Kind::Remove(paths))
}

/// `find PATHS … -delete` removes what it finds under its paths; `-exec CMD
/// … ;` (and `-execdir`, `-ok`) runs a command, read like any other.
fn find(args: &[String], depth: usize, found: &mut Vec<Found>) -> Option<Kind> {
    let starts: Vec<String> = args
        .iter()
        .take_while(|a| !a.starts_with('-') && !a.starts_with('(') && a.as_str() != "!")
        .cloned()
        .collect();
    let starts = if starts.is_empty() {
        vec![".".to_string()]
    } else {
        starts
    };
    let deletes = args.iter().any(|a| a == "-delete");
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = args[i + 1..]
                .iter()
                .position(|a| a == ";" || a == "+")
                .map_or(args.len(), |at| i + 1 + at);
            let command: Vec<String> = args[i + 1..end]
                .iter()
                .map(|w| {
                    if w == "{}" {
                        "*".to_string()
                    } else {
                        quoted(w)
                    }
                })
                .collect();
            let before = found.len();
            one(&command.join(" "), depth + 1, found);
            // What it runs is given the files found: they are under the paths searched.
            for f in found.iter_mut().skip(before) {
                if let Kind::Remove(paths) | Kind::Discard(paths) = &mut f.kind {
                    if paths.iter().all(|p| p == "*") {
                        *paths = starts.clone();
                    }
                }
            }
            i = end;
        }
        i += 1;
    }
    deletes.then_some(Kind::Remove(starts))
}

/// A word as the shell would read it back.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// `make clean` and its kin delete whatever the Makefile says.
fn make(args: &[String]) -> Option<Kind> {
    const TARGETS: [&str; 7] = [
        "clean",
        "distclean",
        "mrproper",
        "clobber",
        "realclean",
        "maintainer-clean",
        "reset",
    ];
    operands(
        args,
        &[
            "-C",
            "-f",
            "-j",
            "-l",
            "-o",
            "-W",
            "-I",
            "--directory",
            "--file",
        ],
    )
    .iter()
    .any(|t| TARGETS.contains(&t.as_str()) || t.ends_with("clean"))
    .then_some(Kind::Unsure)
}
/// The words after `--`.
fn after_double_dash(args: &[String]) -> Vec<String> {
    match args.iter().position(|a| a == "--") {
        Some(at) => args[at + 1..].to_vec(),
        None => Vec::new(),
    }
}

/// The words that are not options (`taking`: options whose value is the next word).
fn operands(args: &[String], taking: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if taking.contains(&a.as_str()) {
            skip = true;
        } else if !a.starts_with('-') {
            out.push(a.clone());
        }
    }
    out
}

/// Whether `path` (relative to the top level, `/`-separated) lies under one
/// of `targets` as the command gives them, run in `cwd`, in the checkout at
/// `top`. A glob counts as everything, and so does a target that holds the
/// whole checkout: a wrong "yes" costs one snapshot, a wrong "no" the work.
pub fn covers(targets: &[String], top: &Path, cwd: &Path, path: &str) -> bool {
    let top = normalise(top);
    targets.iter().any(|t| {
        // A glob, a pathspec magic, a home or an expansion: not known from the text.
        if t.contains(['*', '?', '[', '{', '$', '`']) || t.starts_with(':') || t.starts_with('~') {
            return true;
        }
        let target = normalise(&cwd.join(t));
        if top.starts_with(&target) {
            return true;
        }
        match target.strip_prefix(&top) {
            Ok(rel) => {
                let rel = rel.to_string_lossy();
                // A target inside a dirty path: a file in a submodule with work of its own.
                path == rel
                    || path.starts_with(&format!("{rel}/"))
                    || rel.starts_with(&format!("{path}/"))
            }
            Err(_) => false,
        }
    })
}

/// `a/./b/../c/` as `a/c`, without asking the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> Option<Kind> {
        recognise(line).map(|f| f.kind)
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn commands_that_discard_work_are_recognised() {
        assert_eq!(kind("git reset --hard"), Some(Kind::ResetHard));
        assert_eq!(
            kind("cd src && git reset --hard HEAD~1"),
            Some(Kind::ResetHard)
        );
        assert_eq!(kind("git -C repo reset --hard"), Some(Kind::ResetHard));
        assert_eq!(
            kind("git checkout -- src/a.rs b.rs"),
            Some(Kind::Discard(v(&["src/a.rs", "b.rs"])))
        );
        assert_eq!(kind("git checkout ."), Some(Kind::Discard(v(&["."]))));
        assert_eq!(kind("git restore src/"), Some(Kind::Discard(v(&["src/"]))));
        assert_eq!(
            kind("git restore --source HEAD~2 a.rs"),
            Some(Kind::Discard(v(&["a.rs"])))
        );
        assert_eq!(kind("git clean -fd"), Some(Kind::Clean));
        assert_eq!(kind("git clean -xdf"), Some(Kind::Clean));
        assert_eq!(kind("git stash drop"), Some(Kind::StashDrop));
        assert_eq!(
            kind("rm -rf build src"),
            Some(Kind::Remove(v(&["build", "src"])))
        );
        assert_eq!(
            kind("sudo rm -r -f 'my dir'"),
            Some(Kind::Remove(v(&["my dir"])))
        );
        assert_eq!(kind("git push --force"), Some(Kind::PushForce(vec![])));
        assert_eq!(
            kind("git push -f origin main"),
            Some(Kind::PushForce(v(&["main"])))
        );
        assert_eq!(
            kind("git push origin +main"),
            Some(Kind::PushForce(v(&["+main"])))
        );
        assert_eq!(
            recognise("cargo test; git reset --hard").unwrap().command,
            "git reset --hard"
        );
    }

    #[test]
    fn everyday_commands_are_not() {
        for line in [
            "cargo test",
            "git status",
            "git reset HEAD a.rs",
            "git reset --soft HEAD~1",
            "git checkout -b feature/x",
            "git checkout -",
            "git restore --staged a.rs",
            "git clean -n",
            "git clean -nd",
            "git stash",
            "git stash pop",
            "git push origin main",
            "grep -rn git src | head",
            "echo 'rm -rf /' > notes.txt",
        ] {
            assert_eq!(kind(line), None, "{line}");
        }
    }

    /// The command lines issue 43's sweep found discarding work unseen: the
    /// documented commands behind wrappers, shells and aliases, and the
    /// other deleting forms. `ALL` for a command whose paths are unknown.
    pub(crate) const LISTED: [(&str, &str); 63] = [
        ("bash -c 'git reset --hard'", "reset"),
        ("sh -c \"git checkout -- .\"", "."),
        ("bash -lc 'cd repo && git clean -fd'", "clean"),
        ("zsh -c 'rm -rf src'", "src"),
        ("bash -c 'git stash clear'", "stash"),
        ("eval \"git reset --hard\"", "reset"),
        ("eval 'rm -rf src'", "src"),
        ("eval \"$CLEANUP\"", "unsure"),
        ("(git reset --hard)", "reset"),
        ("(cd src && rm -rf .)", "."),
        ("{ git reset --hard; }", "reset"),
        ("echo $(git reset --hard)", "reset"),
        ("out=`git checkout -- src`", "src"),
        ("timeout 60 git reset --hard", "reset"),
        ("timeout -s KILL 60 git clean -fdx", "clean"),
        ("env -i git reset --hard", "reset"),
        ("env -i PATH=/usr/bin git checkout .", "."),
        ("nohup git reset --hard &", "reset"),
        ("nice git reset --hard", "reset"),
        ("nice -n 10 rm -rf src", "src"),
        ("command -p git reset --hard", "reset"),
        ("\\git reset --hard", "reset"),
        ("sudo -u dev git reset --hard", "reset"),
        ("git nuke", "alias"),
        ("git -c color.ui=never nuke src", "alias"),
        ("echo | xargs git reset --hard", "reset"),
        (
            "git diff --name-only | xargs -I{} git checkout -- {}",
            "ALL",
        ),
        ("make clean", "unsure"),
        ("make -C build distclean", "unsure"),
        ("rm -r src", "src"),
        ("rm -R src/", "src/"),
        ("rm notes.txt", "notes.txt"),
        ("rm -f src/*.rs", "src/*.rs"),
        ("rm -rf \"$D\"", "$D"),
        ("rm -rf -- \"$DIR/src\"", "$DIR/src"),
        ("unlink notes.txt", "notes.txt"),
        ("git rm -f src/lib.rs", "src/lib.rs"),
        ("git rm -r src", "src"),
        ("find . -name '*.rs' -delete", "."),
        ("find src -type f -delete", "src"),
        ("find . -name '*.tmp' -exec rm {} \\;", "."),
        ("find src -exec rm -f {} +", "src"),
        ("git ls-files -o | xargs rm", "ALL"),
        ("ls | xargs rm -f", "ALL"),
        ("git checkout HEAD src", "src"),
        ("git checkout main src/lib.rs", "src/lib.rs"),
        ("git switch --discard-changes main", "reset"),
        // Read by the pipeline from the disk and the refs (`git checkout src` is a path, `git
        // checkout main` a switch), and inside submodules.
        ("git checkout src", "src"),
        ("git checkout src/a.rs lib", "lib"),
        ("git checkout '*.rs'", "*.rs"),
        ("git -C sub checkout -- a.rs", "sub/a.rs"),
        ("cd sub && git checkout -- a.rs", "sub/a.rs"),
        ("git submodule foreach git reset --hard", "reset"),
        ("git submodule foreach --recursive 'git checkout .'", "ALL"),
        ("git submodule update --force", "reset"),
        // Another work tree or repository named on git's line; paths from a file.
        ("git --work-tree=. reset --hard", "reset"),
        (
            "git --work-tree=../app --git-dir=../app/.git checkout -- a.rs",
            "unsure",
        ),
        ("git --git-dir .git --work-tree sub checkout .", "unsure"),
        ("git -C sub -C inner reset --hard", "reset"),
        ("git checkout --pathspec-from-file=paths.txt", "ALL"),
        ("git checkout --pathspec-from-file paths.txt", "ALL"),
        ("git restore --pathspec-from-file=paths.txt", "ALL"),
        ("git rm --pathspec-from-file=- < paths.txt", "ALL"),
    ];

    /// Everyday commands that must stay free of git (no process started).
    pub(crate) const HARMLESS: [&str; 33] = [
        "cargo test",
        "git status",
        "git log --oneline -5",
        "git diff",
        "ls -la",
        "grep -rn 'rm -rf' src",
        "echo \"git reset --hard\" > notes.txt",
        "git commit -m \"rm -rf the old parser\"",
        "git checkout -b feature/x",
        "git checkout -",
        "git checkout -B main origin/main",
        "git switch main",
        "git stash",
        "git stash pop",
        "git rm --cached a.rs",
        "git restore --staged a.rs",
        "git clean -n",
        "git push origin main",
        "make",
        "make test",
        "find . -name '*.rs'",
        "find src -exec grep -n foo {} \\;",
        "command -v git",
        "bash script.sh",
        "sh -c 'cargo build'",
        "git ls-files | xargs wc -l",
        "nice cargo build",
        "timeout 60 cargo test",
        "env RUST_LOG=debug cargo run",
        "git config --get-regexp alias",
        "bash -c 'git status && git log'",
        "git --work-tree=. status",
        "git --git-dir=.git log -1",
    ];

    /// What a listed line is expected to be read as.
    fn reads_as(kind: &Kind, expected: &str) -> bool {
        match (kind, expected) {
            (Kind::ResetHard, "reset") | (Kind::Clean, "clean") | (Kind::StashDrop, "stash") => {
                true
            }
            (Kind::Alias(..), "alias") | (Kind::Unsure, "unsure") => true,
            (Kind::Discard(p) | Kind::Remove(p), "ALL") => p.iter().all(|p| {
                covers(
                    std::slice::from_ref(p),
                    Path::new("/r"),
                    Path::new("/r"),
                    "any/file.rs",
                )
            }),
            (Kind::Discard(p) | Kind::Remove(p), path) => p.iter().any(|p| p == path),
            (Kind::Checkout { operands, .. }, path) => operands.iter().any(|p| p == path),
            _ => false,
        }
    }

    #[test]
    fn every_listed_form_is_caught_and_every_harmless_one_is_not() {
        let missed: Vec<String> = LISTED
            .iter()
            .filter(|(line, expected)| {
                !recognise_all(line)
                    .iter()
                    .any(|f| reads_as(&f.kind, expected))
            })
            .map(|(line, _)| format!("{line}: {:?}", recognise_all(line)))
            .collect();
        assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
        let flagged: Vec<String> = HARMLESS
            .iter()
            .filter(|line| !recognise_all(line).is_empty())
            .map(|line| format!("{line}: {:?}", recognise_all(line)))
            .collect();
        assert!(flagged.is_empty(), "flagged:\n{}", flagged.join("\n"));
    }

    #[test]
    fn a_checkout_without_double_dash_is_left_to_the_disk_and_the_refs() {
        let checkout = |within: &str, operands: &[&str]| Kind::Checkout {
            within: within.into(),
            operands: v(operands),
        };
        assert_eq!(kind("git checkout main"), Some(checkout("", &["main"])));
        assert_eq!(
            kind("git checkout HEAD src"),
            Some(checkout("", &["HEAD", "src"]))
        );
        assert_eq!(
            kind("git -C sub checkout main"),
            Some(checkout("sub", &["main"]))
        );
        // After a `cd`, read from both folders.
        let found: Vec<Kind> = recognise_all("cd sub && git checkout src")
            .into_iter()
            .map(|f| f.kind)
            .collect();
        assert_eq!(
            found,
            vec![checkout("", &["src"]), checkout("sub", &["src"])]
        );
        // The switches that need no reading.
        for line in [
            "git checkout -b x",
            "git checkout -",
            "git checkout --orphan x",
        ] {
            assert_eq!(kind(line), None, "{line}");
        }
    }

    #[test]
    fn a_found_command_is_named_as_the_line_gives_it() {
        assert_eq!(
            recognise("cargo test; bash -c 'git reset --hard'")
                .unwrap()
                .command,
            "git reset --hard"
        );
        // Nested past reason is taken as destructive, not missed.
        let deep = format!("{}git status", "eval ".repeat(9));
        assert_eq!(kind(&deep), Some(Kind::Unsure));
    }

    #[test]
    fn paths_are_matched_from_the_working_directory() {
        let top = Path::new("/r");
        let at = |cwd: &str, targets: &[&str], path: &str| {
            covers(&v(targets), top, Path::new(cwd), path)
        };
        assert!(at("/r", &["."], "src/a.rs"));
        assert!(at("/r/src", &["."], "src/a.rs"));
        assert!(!at("/r/docs", &["."], "src/a.rs"));
        assert!(at("/r", &["src"], "src/a.rs"));
        assert!(at("/r", &["./src/"], "src/a.rs"));
        assert!(!at("/r", &["src"], "srcx/a.rs"));
        assert!(at("/r/docs", &["../src"], "src/a.rs"));
        assert!(at("/r", &["*.rs"], "src/a.rs"));
        assert!(!at("/r", &["build"], "src/a.rs"));
        assert!(at("/elsewhere", &["/r/src"], "src/a.rs"));
        assert!(!at("/r", &["/tmp/x"], "src/a.rs"));
        assert!(at("/r/src", &["../../r"], "src/a.rs"));
    }
}
