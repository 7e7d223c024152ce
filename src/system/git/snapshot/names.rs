//! What a git command line names, read before a snapshot is taken: git's aliases, and
//! whether `git checkout`'s operands are a revision or paths.

use std::path::Path;
use std::process::Stdio;

use crate::system::git::{git, Unavailable};

/// Git's aliases (`alias.NAME` = what it runs), read only for a subcommand git does not have.
pub fn aliases(dir: &Path) -> Result<Vec<(String, String)>, Unavailable> {
    let out = git(dir)
        .args(["config", "-z", "--get-regexp", r"^alias\."])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    // Exit 1: no alias at all.
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (key, value) = entry.split_once('\n')?;
            let name = key.strip_prefix("alias.")?;
            Some((name.to_string(), value.to_string()))
        })
        .collect())
}

/// The paths `git checkout A [B …]` (no `--`) run in `cwd/within` would
/// discard, as git reads it: `A` is a revision if it names one, else a path
/// like the rest. What is not on disk holds no work to lose, so a name that
/// is not there (`main`, `-`, `HEAD~1`) is a switch or a revision before
/// paths, decided with no file read; a name that is there is looked up
/// among the refs ([`names_revision`]). With a branch and a file both named
/// NAME, `git checkout NAME` switches branches, as git does. None: a switch.
pub fn checkout_paths(within: &str, operands: &[String], cwd: &Path) -> Option<Vec<String>> {
    let dir = cwd.join(within);
    let (first, rest) = operands.split_first()?;
    let path = |o: &String| {
        if within.is_empty() || o.starts_with('/') {
            o.clone()
        } else {
            format!("{}/{o}", within.trim_end_matches('/'))
        }
    };
    let a_path = std::fs::symlink_metadata(dir.join(first)).is_ok() && !names_revision(&dir, first);
    let paths: Vec<String> = if a_path {
        operands.iter().map(path).collect()
    } else {
        rest.iter().map(path).collect()
    };
    (!paths.is_empty()).then_some(paths)
}

/// Whether `name` names a revision in the repository around `dir`, as `git
/// checkout NAME` would take it: read from the repository's files where git
/// would look (`$GIT_DIR/NAME` for `HEAD` and its kin, `refs/NAME`,
/// `refs/tags/NAME`, `refs/heads/NAME`, `refs/remotes/NAME`,
/// `refs/remotes/NAME/HEAD`, loose or packed). Git is asked only for what
/// its files cannot answer: a revision expression (`HEAD~1`, `@{-1}`), what
/// could be an abbreviated commit id, refs kept in a reftable.
pub fn names_revision(dir: &Path, name: &str) -> bool {
    let Some(git_dir) = crate::system::git::git_dir_around(dir) else {
        return false;
    };
    let common = crate::system::fsutil::read_text(&git_dir.join("commondir"), 4096)
        .ok()
        .map(|to| git_dir.join(to.trim()))
        .unwrap_or_else(|| git_dir.clone());
    let expression = name.contains(['~', '^', ':', '@', '{']) || name.contains("..");
    let hex = name.len() >= 4 && name.bytes().all(|b| b.is_ascii_hexdigit());
    if expression || hex || common.join("reftable").exists() {
        let found = git(dir)
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options", name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if found || !hex {
            return found;
        }
    }
    if name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') && git_dir.join(name).is_file() {
        return true;
    }
    let refs = [
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ];
    if refs.iter().any(|r| common.join(r).is_file()) {
        return true;
    }
    let packed =
        crate::system::fsutil::read_text(&common.join("packed-refs"), 64 << 20).unwrap_or_default();
    packed.lines().any(|line| {
        line.split_once(' ')
            .is_some_and(|(_, r)| refs.iter().any(|want| r == want))
    })
}
