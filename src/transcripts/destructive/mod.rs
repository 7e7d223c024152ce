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

mod deleting;
mod git;
mod paths;
mod split;
#[cfg(test)]
mod tests;

use deleting::{find, make, rm};
use git::{git, global_options};
pub use paths::covers;
use split::split;

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
