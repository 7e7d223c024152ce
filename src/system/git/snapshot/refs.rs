//! The refs that keep snapshots (`refs/ctxkeep/snapshots/`, one set per worktree) and the
//! stash entries (`refs/ctxkeep/stash/`): writing, listing, dropping, and the remotes a push
//! would send them to.

use std::path::Path;
use std::process::Stdio;

use super::{with_bytes, REF_PREFIX};
use crate::system::git::{git, run, Unavailable};

/// Points `refs/ctxkeep/snapshots/<name>` at `commit`, so git keeps it.
pub fn keep(dir: &Path, name: &str, commit: &str) -> Result<(), Unavailable> {
    let r = format!("{REF_PREFIX}{}{name}", worktree_part(dir));
    run(dir, &["update-ref", &r, commit]).map(|_| ())
}

/// This worktree's snapshot refs, newest first: (name after the prefix, commit).
pub fn list(dir: &Path) -> Result<Vec<(String, String)>, Unavailable> {
    let prefix = format!("{REF_PREFIX}{}", worktree_part(dir));
    let out = run(
        dir,
        &[
            "for-each-ref",
            "--sort=-committerdate",
            "--format=%(refname) %(objectname)",
            &prefix,
        ],
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| {
            let (name, commit) = l.rsplit_once(' ')?;
            let name = name.strip_prefix(&prefix)?;
            // Another worktree's (`worktrees/<name>/…`) or a submodule's are not this one's.
            (!name.contains('/')).then(|| (name.to_string(), commit.to_string()))
        })
        .collect())
}

/// At most how many snapshot refs this worktree has ([`list`]'s length or more), read from
/// git's own files with no git run: the loose refs under the common folder's
/// `refs/ctxkeep/snapshots/` and the lines of `packed-refs`, a ref in both counted once.
/// `None` when the files cannot say: refs in a reftable, a folder or file that cannot be read.
/// A file there that is no valid ref (a `.lock`) is counted too: the answer may be high,
/// never low.
pub fn at_most(dir: &Path) -> Option<usize> {
    let common = crate::system::git::layout(dir).ok()?.common_dir;
    if common.join("reftable").exists() {
        return None;
    }
    let prefix = format!("{REF_PREFIX}{}", worktree_part(dir));
    // Names as bytes: two names that differ only in bytes that are not UTF-8 stay two.
    let mut names: std::collections::BTreeSet<Vec<u8>> = std::collections::BTreeSet::new();
    match std::fs::read_dir(common.join(&prefix)) {
        Ok(entries) => {
            for e in entries {
                let e = e.ok()?;
                // Another worktree's (`worktrees/<name>/`) are folders: not this one's.
                if !e.file_type().ok()?.is_dir() {
                    names.insert(e.file_name().as_encoded_bytes().to_vec());
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    let packed = common.join("packed-refs");
    match std::fs::metadata(&packed) {
        Ok(m) if m.len() > PACKED_REFS_READ => return None,
        Ok(_) => {
            let packed = std::fs::read(&packed).ok()?;
            // "<object> <ref name>" lines; `^<object>` (a peeled tag) and `#` lines name none.
            for line in packed.split(|&b| b == b'\n') {
                let Some(at) = line.iter().position(|&b| b == b' ') else {
                    continue;
                };
                let name = line[at + 1..]
                    .strip_suffix(b"\r")
                    .unwrap_or(&line[at + 1..]);
                if let Some(name) = name.strip_prefix(prefix.as_bytes()) {
                    if !name.contains(&b'/') {
                        names.insert(name.to_vec());
                    }
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    Some(names.len())
}

/// The largest `packed-refs` [`at_most`] reads; past it, git lists the refs.
const PACKED_REFS_READ: u64 = 64 << 20;

/// Whether some ref under `refs/ctxkeep/snapshots/` (of any worktree) points
/// at `commit`: only ctxkeep writes there, and refs are never cloned by
/// default, so a commit a cloned file names is not taken for a snapshot.
pub fn made_by_ctxkeep(dir: &Path, commit: &str) -> bool {
    let Ok(out) = run(
        dir,
        &[
            "for-each-ref",
            "--format=%(objectname)",
            "--points-at",
            commit,
            REF_PREFIX,
        ],
    ) else {
        return false;
    };
    !out.is_empty()
}

/// Removes the ref `name` (the commit goes with git's own gc once nothing else holds it).
pub fn drop_ref(dir: &Path, name: &str) -> Result<(), Unavailable> {
    let r = format!("{REF_PREFIX}{}{name}", worktree_part(dir));
    run(dir, &["update-ref", "-d", &r]).map(|_| ())
}

/// Removes every snapshot ref of the repository at `dir` that points at `commit` (a
/// submodule's own snapshot, named by time); how many went.
pub fn drop_refs_at(dir: &Path, commit: &str) -> Result<usize, Unavailable> {
    let out = run(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "--points-at",
            commit,
            REF_PREFIX,
        ],
    )?;
    let mut dropped = 0;
    for name in String::from_utf8_lossy(&out).lines() {
        run(dir, &["update-ref", "-d", name, commit])?;
        dropped += 1;
    }
    Ok(dropped)
}

/// The commit a snapshot was taken on (its parent), if it has one.
pub fn parent(dir: &Path, commit: &str) -> Option<String> {
    let spec = format!("{commit}^");
    let out = git(dir)
        .args(["rev-parse", "--verify", "--quiet", &spec])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !id.is_empty()).then_some(id)
}

/// Whether `commit` is a commit object this repository has.
pub fn exists(dir: &Path, commit: &str) -> bool {
    crate::system::git::commit_exists(dir, commit).unwrap_or(false)
}

/// Where the stash commits are kept before `git stash drop`/`clear`.
pub const STASH_PREFIX: &str = "refs/ctxkeep/stash/";

/// Keeps every stash entry under `refs/ctxkeep/stash/<commit>` (one git call
/// to list them, one to write the refs); returns how many it kept. `git
/// stash store -m kept <commit>` puts one back.
pub fn keep_stashes(dir: &Path) -> Result<usize, Unavailable> {
    let out = git(dir)
        .args(["log", "-g", "--format=%H", "refs/stash", "--"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    let commits: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if commits.is_empty() {
        return Ok(0);
    }
    let prefix = format!("{STASH_PREFIX}{}", worktree_part(dir));
    let lines: Vec<String> = commits
        .iter()
        .map(|c| format!("update {prefix}{c} {c}"))
        .collect();
    let input = lines.join("\n") + "\n";
    with_bytes(dir, None, &["update-ref", "--stdin"], input.into_bytes())?;
    Ok(commits.len())
}

/// The part of a ref name that keeps one worktree's snapshots apart from
/// another's: empty in the main worktree, `worktrees/<name>/` in a linked
/// one (its `.git` file points into `…/worktrees/<name>`). Read from the
/// file system, no git call.
pub fn worktree_part(dir: &Path) -> String {
    let mut at = Some(dir);
    while let Some(d) = at {
        let dot_git = d.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => return String::new(),
            Ok(m) if m.is_file() => {
                let text = std::fs::read_to_string(&dot_git).unwrap_or_default();
                let gitdir = text.trim().strip_prefix("gitdir:").unwrap_or("").trim();
                let gitdir = Path::new(gitdir);
                let linked = gitdir
                    .parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|n| n == "worktrees");
                return match (linked, gitdir.file_name()) {
                    (true, Some(name)) => format!("worktrees/{}/", name.to_string_lossy()),
                    _ => String::new(),
                };
            }
            _ => at = d.parent(),
        }
    }
    String::new()
}

/// The remotes a plain `git push` would send the snapshot refs to: those
/// with `remote.<name>.mirror=true` or a push refspec covering `refs/*` or
/// `refs/ctxkeep/`. Each as `name (why)`.
pub fn mirroring_remotes(dir: &Path) -> Vec<String> {
    let Ok(out) = git(dir)
        .args([
            "config",
            "-z",
            "--get-regexp",
            r"^remote\..*\.(mirror|push)$",
        ])
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in out.stdout.split(|&b| b == 0) {
        let entry = String::from_utf8_lossy(entry);
        let Some((key, value)) = entry.split_once('\n') else {
            continue;
        };
        let Some(rest) = key.strip_prefix("remote.") else {
            continue;
        };
        let (name, setting) = rest.rsplit_once('.').unwrap_or((rest, ""));
        let value = value.trim();
        let sends = match setting {
            "mirror" => matches!(
                value.to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            ),
            _ => {
                let src = value.trim_start_matches('+');
                let src = src.split(':').next().unwrap_or(src);
                src == "refs/*" || src.starts_with("refs/ctxkeep") || src == "*"
            }
        };
        if sends {
            found.push(format!("{name} (remote.{name}.{setting}={value})"));
        }
    }
    found
}
