//! Submodules' own snapshots: which submodules hold work `git status` was told to ignore,
//! and which snapshots a snapshot's submodule entries point at.

use std::path::{Path, PathBuf};

use super::refs::made_by_ctxkeep;
use super::{bytes_path, top};
use crate::system::git::{run, Unavailable};

/// Which of the submodules at `paths` (relative to the top level) hold uncommitted work,
/// whatever the configuration tells `git status` to ignore: `--ignore-submodules=none`
/// overrides `submodule.<name>.ignore` and `diff.ignoreSubmodules` wherever they are set.
pub fn dirty_submodules(top: &Path, paths: &[String]) -> Result<Vec<String>, Unavailable> {
    let specs: Vec<String> = paths.iter().map(|p| format!(":(literal){p}")).collect();
    let mut args = vec![
        "status",
        "--porcelain",
        "-z",
        "--ignore-submodules=none",
        "--",
    ];
    args.extend(specs.iter().map(String::as_str));
    let out = run(top, &args)?;
    Ok(out
        .split(|&b| b == 0)
        .filter_map(|entry| entry.get(3..))
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| paths.contains(p))
        .collect())
}

/// The submodules whose own work a snapshot kept: (the submodule's path
/// relative to the top level, its folder, the snapshot commit in its
/// repository). A submodule entry that is not such a snapshot (the
/// submodule's HEAD moved) is not one.
pub fn submodule_snapshots(
    dir: &Path,
    commit: &str,
) -> Result<Vec<(String, PathBuf, String)>, Unavailable> {
    let top = top(dir)?;
    let listed = run(&top, &["ls-tree", "-r", "-z", commit])?;
    let mut found = Vec::new();
    for entry in listed.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let head = String::from_utf8_lossy(&entry[..tab]);
        let f: Vec<&str> = head.split(' ').collect();
        if f.first() != Some(&"160000") || f.len() != 3 {
            continue;
        }
        let rel = &entry[tab + 1..];
        let folder = top.join(bytes_path(rel));
        if folder.join(".git").exists() && made_by_ctxkeep(&folder, f[2]) {
            found.push((
                String::from_utf8_lossy(rel).into_owned(),
                folder,
                f[2].to_string(),
            ));
        }
    }
    Ok(found)
}
