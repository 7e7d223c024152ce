//! Git's forms that discard work: `reset --hard`, `checkout`/`restore` of paths, `clean`,
//! `stash drop`/`clear`, forced pushes, `rm`, submodules; read past git's global options (`-C`,
//! `-c`), and an alias (any subcommand git does not have) looked up only then.

use super::{after_double_dash, joined, moved, operands, Kind};

/// Git's own commands (and those of its usual extensions): any other
/// subcommand is an alias, looked up only then.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "init",
    "instaweb",
    "interpret-trailers",
    "lfs",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "mv",
    "name-rev",
    "notes",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "remote",
    "repack",
    "replace",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
    "init-db",
    "prune",
    "send-email",
    "am",
    "flow",
    "absorb",
    "graph",
    "--version",
    "--help",
];

/// `git [global options] SUBCOMMAND ARGS`; the paths it names are read from
/// the folder `-C` gives.
pub(super) fn git(args: &[String]) -> Option<Kind> {
    let (i, within) = global_options(args);
    let kind = subcommand(args.get(i)?.as_str(), &args[i + 1..])?;
    // Another work tree or repository (`--work-tree=DIR`, `--git-dir=DIR`): which files its
    // paths name is git's reading of two folders, so it is unsure (all of the work is kept).
    if args[..i].iter().any(|a| elsewhere(a)) {
        return Some(match kind {
            Kind::Discard(_) | Kind::Checkout { .. } => Kind::Unsure,
            other => other,
        });
    }
    Some(if within.is_empty() {
        kind
    } else {
        moved(kind, &within)
    })
}

/// A global option that points git at another work tree or repository.
fn elsewhere(arg: &str) -> bool {
    ["--work-tree", "--git-dir"]
        .iter()
        .any(|o| arg == *o || arg.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
}

/// `--pathspec-from-file[=FILE]`: the paths are in a file (or stdin), unknown here.
fn paths_from_file(args: &[String]) -> bool {
    args.iter().any(|a| a.starts_with("--pathspec-from-file"))
}

/// Past git's global options: where the subcommand is, and the folder `-C` gives.
pub(super) fn global_options(args: &[String]) -> (usize, String) {
    let mut i = 0;
    let mut within = String::new();
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-C" => {
                within = joined(&within, args.get(i + 1).map_or("", String::as_str));
                i += 2;
            }
            // Global options that take the next word.
            "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--config-env" => {
                i += 2
            }
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    (i, within)
}

/// A git subcommand and its arguments.
fn subcommand(sub: &str, args: &[String]) -> Option<Kind> {
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    let short = |letter: char| {
        args.iter().any(|a| {
            a.starts_with('-') && !a.starts_with("--") && a[1..].chars().any(|c| c == letter)
        })
    };
    match sub {
        "reset" if has(&["--hard", "--merge"]) => Some(Kind::ResetHard),
        "checkout" => {
            let paths = after_double_dash(args);
            let operands = operands(args, &["-b", "-B", "--orphan", "--conflict"]);
            if !paths.is_empty() {
                Some(Kind::Discard(paths))
            } else if has(&["-f", "--force", "."]) || paths_from_file(args) {
                Some(Kind::Discard(vec![".".into()]))
            } else if operands.is_empty() || has(&["-b", "-B", "--orphan"]) {
                None
            } else if operands
                .iter()
                .any(|o| o.contains(['*', '?', '[']) || o.starts_with(':'))
            {
                // A glob or pathspec magic is never a revision.
                Some(Kind::Discard(operands))
            } else {
                Some(Kind::Checkout {
                    within: String::new(),
                    operands,
                })
            }
        }
        "switch" if has(&["--discard-changes", "-f", "--force"]) => Some(Kind::ResetHard),
        // A forced update or deinit throws away each submodule's uncommitted work.
        "submodule"
            if matches!(args.first().map(String::as_str), Some("update" | "deinit"))
                && (short('f') || has(&["--force"])) =>
        {
            Some(Kind::ResetHard)
        }
        // `--staged` alone touches only the index.
        "restore" if !has(&["--staged", "-S"]) || has(&["--worktree", "-W"]) => {
            if paths_from_file(args) {
                return Some(Kind::Discard(vec![".".into()]));
            }
            let mut paths = after_double_dash(args);
            if paths.is_empty() {
                paths = operands(args, &["-s", "--source"]);
            }
            (!paths.is_empty()).then_some(Kind::Discard(paths))
        }
        // `--cached` keeps the file.
        "rm" if !has(&["--cached"]) => {
            if paths_from_file(args) {
                return Some(Kind::Discard(vec![".".into()]));
            }
            let paths = after_double_dash(args);
            let paths = if paths.is_empty() {
                operands(args, &[])
            } else {
                paths
            };
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
        sub if GIT_COMMANDS.contains(&sub) || sub.starts_with('-') => None,
        alias => Some(Kind::Alias(alias.to_string(), args.to_vec())),
    }
}
