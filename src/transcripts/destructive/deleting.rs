//! The commands that delete files by name, whatever git says: `rm` and its kin, `find -delete`
//! and `find -exec rm`, and `make` targets that may delete anything.

use super::{after_double_dash, one, operands, Found, Kind};

/// `rm` (and `unlink`, `shred`) with any flags: the paths it deletes. With
/// none (`xargs rm`: they come from stdin), any path (`*`).
pub(super) fn rm(args: &[String]) -> Option<Kind> {
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
pub(super) fn find(args: &[String], depth: usize, found: &mut Vec<Found>) -> Option<Kind> {
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
pub(super) fn make(args: &[String]) -> Option<Kind> {
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
