//! Shell commands that can discard uncommitted work, recognised from their
//! text before they run (an agent's pre-tool hook). A string check and
//! nothing else: it runs before every shell call an agent makes, so it reads
//! no file and starts no process; what the repository holds is asked only
//! for the few commands it names.

use std::path::{Component, Path, PathBuf};

/// What a command would discard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `git reset --hard`.
    ResetHard,
    /// `git checkout -- PATHS`, `git checkout .`, `git checkout -f`, `git restore PATHS`:
    /// the work tree's changes to these paths (`.`: all of them).
    Discard(Vec<String>),
    /// `git clean -f…`: untracked files.
    Clean,
    /// `git stash drop`, `git stash clear`.
    StashDrop,
    /// `rm -rf PATHS`.
    Remove(Vec<String>),
    /// `git push --force`, with the refspecs given (none: the current branch).
    PushForce(Vec<String>),
}

/// A destructive command found in a shell line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: Kind,
    /// The part of the line that runs it.
    pub command: String,
}

/// The first command in `line` (a shell line: `a && b; c | d`) that can
/// discard uncommitted work, if any.
pub fn recognise(line: &str) -> Option<Found> {
    // Most lines name neither word: they cost two substring searches.
    if !line.contains("git") && !line.contains("rm") {
        return None;
    }
    line.split(['\n', ';', '|', '&']).find_map(|part| {
        one(part).map(|kind| Found {
            kind,
            command: part.trim().to_string(),
        })
    })
}

/// One simple command.
fn one(part: &str) -> Option<Kind> {
    let words = words(part);
    let mut rest = words.as_slice();
    // Variable assignments and wrappers before the program.
    while let Some((first, after)) = rest.split_first() {
        let wrapper = matches!(first.as_str(), "sudo" | "command" | "exec" | "env" | "time");
        let assignment = first.contains('=') && !first.starts_with('-');
        if !(wrapper || assignment) {
            break;
        }
        rest = after;
    }
    let (program, args) = rest.split_first()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    match program {
        "git" => git(args),
        "rm" => rm(args),
        _ => None,
    }
}

/// The words of a simple command: split at blanks, quotes removed (enough to
/// read flags and paths; expansions are left as they are).
pub fn words(part: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in part.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
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

/// `git [global options] SUBCOMMAND ARGS`.
fn git(args: &[String]) -> Option<Kind> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            // Global options that take the next word.
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = args.get(i)?.as_str();
    let args = &args[i + 1..];
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    let short = |letter: char| {
        args.iter().any(|a| {
            a.starts_with('-') && !a.starts_with("--") && a[1..].chars().any(|c| c == letter)
        })
    };
    match sub {
        "reset" if has(&["--hard"]) => Some(Kind::ResetHard),
        "checkout" => {
            let paths = after_double_dash(args);
            if !paths.is_empty() {
                Some(Kind::Discard(paths))
            } else if has(&["-f", "--force", "."]) {
                Some(Kind::Discard(vec![".".into()]))
            } else {
                None
            }
        }
        // `--staged` alone touches only the index.
        "restore" if !has(&["--staged", "-S"]) || has(&["--worktree", "-W"]) => {
            let mut paths = after_double_dash(args);
            if paths.is_empty() {
                paths = operands(args, &["-s", "--source"]);
            }
            (!paths.is_empty()).then_some(Kind::Discard(paths))
        }
        "clean" if (short('f') || has(&["--force"])) && !(short('n') || has(&["--dry-run"])) => {
            Some(Kind::Clean)
        }
        "stash" => match args.first().map(String::as_str) {
            Some("drop" | "clear") => Some(Kind::StashDrop),
            _ => None,
        },
        "push" => {
            let forced = has(&["--force", "--force-with-lease", "--force-if-includes"])
                || args.iter().any(|a| a.starts_with("--force-with-lease="))
                || short('f');
            let refspecs: Vec<String> = operands(args, &["-o", "--push-option", "--repo"])
                .into_iter()
                .skip(1)
                .collect();
            (forced || refspecs.iter().any(|r| r.starts_with('+')))
                .then_some(Kind::PushForce(refspecs))
        }
        _ => None,
    }
}

/// `rm` with both a recursive and a force flag.
fn rm(args: &[String]) -> Option<Kind> {
    let mut recursive = false;
    let mut force = false;
    for a in args.iter().take_while(|a| a.as_str() != "--") {
        match a.as_str() {
            "--recursive" => recursive = true,
            "--force" => force = true,
            a if a.starts_with('-') && !a.starts_with("--") => {
                recursive |= a.contains('r') || a.contains('R');
                force |= a.contains('f');
            }
            _ => {}
        }
    }
    let paths = match after_double_dash(args) {
        p if !p.is_empty() => p,
        _ => operands(args, &[]),
    };
    (recursive && force && !paths.is_empty()).then_some(Kind::Remove(paths))
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
        if t.contains(['*', '?', '[']) || t.starts_with(':') || t.starts_with('~') {
            return true;
        }
        let target = normalise(&cwd.join(t));
        if top.starts_with(&target) {
            return true;
        }
        match target.strip_prefix(&top) {
            Ok(rel) => {
                let rel = rel.to_string_lossy();
                path == rel || path.starts_with(&format!("{rel}/"))
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
            "git checkout main",
            "git checkout -b feature/x",
            "git restore --staged a.rs",
            "git clean -n",
            "git clean -nd",
            "git stash",
            "git stash pop",
            "git push origin main",
            "rm a.txt",
            "rm -r build",
            "rm -f a.txt",
            "grep -rn git src | head",
            "echo 'rm -rf /' > notes.txt",
        ] {
            assert_eq!(kind(line), None, "{line}");
        }
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
