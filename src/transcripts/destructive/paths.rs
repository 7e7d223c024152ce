//! Whether the paths a command names cover a file: read from the folder the command runs in,
//! with globs and `..` taken as the shell and git take them.

use std::path::{Component, Path, PathBuf};

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
