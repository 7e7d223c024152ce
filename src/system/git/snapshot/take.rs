//! Taking a snapshot: the listed files hashed as they are on disk into a temporary index,
//! written as a commit on the one they are changes against; what cannot be kept is named.

use std::path::{Path, PathBuf};

use super::refs::{exists, keep};
use super::{bytes_path, line_list, line_of, paths, with_byte_paths, with_bytes, Snapshot};
use crate::system::git::{checked, git, run, Unavailable};

/// A temporary index beside the real one (same file system, removed on drop).
struct TempIndex(PathBuf);

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temp_index(real: &Path) -> Result<TempIndex, Unavailable> {
    let dir = real.parent().unwrap_or(Path::new("."));
    let path = dir.join(format!("ctxkeep-index.{}", std::process::id()));
    let temp = TempIndex(path);
    match std::fs::copy(real, &temp.0) {
        Ok(_) => {}
        // A repository with no commit and nothing added has no index yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Unavailable(format!("cannot copy git's index: {e}"))),
    }
    Ok(temp)
}

/// What [`take`] stored, and what it could not.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Taken {
    /// None when the tree is the last snapshot's (nothing new to store).
    pub snapshot: Option<Snapshot>,
    /// The uncommitted paths it could not keep, each with why (`a.txt: permission denied`).
    pub left_out: Vec<String>,
}

/// Stores the uncommitted work: `dirty` are the paths `git status` listed
/// (relative to the top level), `own` ctxkeep's own files kept with them
/// (absolute: the state file and the checkpoint it names; they may be
/// ignored), `head` the commit they are changes against. The tree is `None`
/// when it is that of `unchanged_from` (the last snapshot) and git still has
/// that commit. A file it cannot keep (unreadable, not a file) is left out
/// and named; the rest is kept. Bytes are stored as they are on disk: no
/// clean filter, no line-end conversion.
pub fn take(
    dir: &Path,
    dirty: &[String],
    own: &[PathBuf],
    head: Option<&str>,
    message: &str,
    unchanged_from: Option<&Snapshot>,
) -> Result<Taken, Unavailable> {
    let (top, index) = paths(dir)?;
    let temp = temp_index(&index)?;
    let mut listed: Vec<Vec<u8>> = dirty.iter().map(|p| p.as_bytes().to_vec()).collect();
    // A name that is not UTF-8 was read lossily: ask git for the names as bytes.
    if dirty.iter().any(|p| p.contains('\u{FFFD}')) {
        listed.retain(|p| !String::from_utf8_lossy(p).contains('\u{FFFD}'));
        listed.extend(raw_names(&top)?);
    }
    for p in own {
        if let Ok(rel) = p.strip_prefix(&top) {
            let rel = rel.as_os_str().as_encoded_bytes().to_vec();
            if p.is_file() && !listed.contains(&rel) {
                listed.push(rel);
            }
        }
    }
    let mut files: Vec<(Vec<u8>, &'static str)> = Vec::new();
    let mut by_git: Vec<&Vec<u8>> = Vec::new();
    let mut left_out = Vec::new();
    // Paths whose index entry stays as it is: a file left out is not recorded as deleted,
    // a submodule keeps its commit.
    let mut kept_entry: Vec<&Vec<u8>> = Vec::new();
    // Submodules whose own work was kept: the snapshot points at that snapshot.
    let mut gitlinks: Vec<(&Vec<u8>, String)> = Vec::new();
    for rel in &listed {
        let path = top.join(bytes_path(rel));
        let shown = String::from_utf8_lossy(rel).into_owned();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue; // deleted: out of the index is what it is
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            by_git.push(rel);
        } else if kind.is_dir() {
            // A tracked file turned into a directory: its files are listed on their own.
            // A submodule's own work is kept in its repository ([`take_submodule`]).
            if path.join(".git").exists() {
                kept_entry.push(rel);
                match take_submodule(&path, message) {
                    Ok((commit, inner)) => {
                        left_out.extend(inner.iter().map(|l| format!("{shown}/{l}")));
                        gitlinks.extend(commit.map(|c| (rel, c)));
                    }
                    Err(e) => left_out.push(format!("{shown} (submodule): {e}")),
                }
            }
        } else if !kind.is_file() {
            kept_entry.push(rel);
            left_out.push(format!("{shown}: not a regular file"));
        } else if let Err(e) = crate::system::fsutil::open_input(&path) {
            kept_entry.push(rel);
            let why = match &e {
                crate::system::error::Error::Io { source, .. } => io_reason(source),
                e => e.to_string(),
            };
            left_out.push(format!("{shown}: {why}"));
        } else if rel.contains(&b'\n') {
            by_git.push(rel);
        } else {
            files.push((rel.clone(), file_mode(&meta)));
        }
    }
    // Every other listed path leaves the index first: a file changed within the file
    // system's timestamp tick of its entry, at the same size, would otherwise pass git's stat
    // check unread ("racy git"), and a deleted one stays deleted.
    with_byte_paths(
        &top,
        &temp.0,
        &["update-index", "--force-remove"],
        listed.iter().filter(|rel| !kept_entry.contains(rel)),
    )?;
    // Hashed as they are (`--no-filters`): the snapshot holds the bytes on disk.
    let mut entries = Vec::new();
    if !files.is_empty() {
        let mut list = Vec::new();
        for (rel, _) in &files {
            list.extend_from_slice(rel);
            list.push(b'\n');
        }
        let hashed = with_bytes(
            &top,
            None,
            &["hash-object", "-w", "--no-filters", "--stdin-paths"],
            list,
        );
        let ids: Vec<String> = match hashed {
            Ok(out) => line_list(&out),
            // One file went unreadable since: hash them one by one, naming the ones that fail.
            Err(_) => files
                .iter()
                .map(|(rel, _)| {
                    let mut one = rel.clone();
                    one.push(b'\n');
                    with_bytes(
                        &top,
                        None,
                        &["hash-object", "-w", "--no-filters", "--stdin-paths"],
                        one,
                    )
                    .map(|o| line_list(&o).pop().unwrap_or_default())
                    .unwrap_or_default()
                })
                .collect(),
        };
        for ((rel, mode), id) in files.iter().zip(ids) {
            if id.is_empty() {
                left_out.push(format!(
                    "{}: could not be read",
                    String::from_utf8_lossy(rel)
                ));
                continue;
            }
            entries.extend_from_slice(format!("{mode} {id}\t").as_bytes());
            entries.extend_from_slice(rel);
            entries.push(0);
        }
    }
    for (rel, commit) in &gitlinks {
        entries.extend_from_slice(format!("160000 {commit}\t").as_bytes());
        entries.extend_from_slice(rel);
        entries.push(0);
    }
    if !entries.is_empty() {
        with_bytes(
            &top,
            Some(&temp.0),
            &["update-index", "--add", "--replace", "-z", "--index-info"],
            entries,
        )?;
    }
    if !by_git.is_empty() {
        with_byte_paths(
            &top,
            &temp.0,
            &["update-index", "--add", "--replace"],
            by_git.into_iter(),
        )?;
    }
    let tree = line_of(checked(
        &["write-tree"],
        git(&top)
            .env("GIT_INDEX_FILE", &temp.0)
            .arg("write-tree")
            .output(),
    )?);
    if unchanged_from.is_some_and(|last| last.tree == tree && exists(&top, &last.commit)) {
        return Ok(Taken {
            snapshot: None,
            left_out,
        });
    }
    let commit = commit_tree(&top, &tree, head, message)?;
    Ok(Taken {
        snapshot: Some(Snapshot {
            commit,
            tree,
            files: dirty.len() as u64,
            before: None,
            left_out: left_out.clone(),
        }),
        left_out,
    })
}

/// A commit of `tree` on `head`, by ctxkeep's own name: a user without
/// `user.name` still gets a snapshot.
fn commit_tree(
    top: &Path,
    tree: &str,
    head: Option<&str>,
    message: &str,
) -> Result<String, Unavailable> {
    let mut args = vec!["commit-tree", tree, "-m", message];
    if let Some(h) = head {
        args.extend(["-p", h]);
    }
    Ok(line_of(checked(
        &["commit-tree"],
        git(top)
            .args(&args)
            .env("GIT_AUTHOR_NAME", AUTHOR)
            .env("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL)
            .env("GIT_COMMITTER_NAME", AUTHOR)
            .env("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
            .output(),
    )?))
}

/// The name and address on every snapshot commit.
pub const AUTHOR: &str = "ctxkeep";

pub const AUTHOR_EMAIL: &str = "ctxkeep@localhost";

/// A dirty submodule's own work, kept in its own repository under
/// `refs/ctxkeep/snapshots/submodule-<time>`; the outer snapshot's entry for
/// the submodule points at that commit, which is how `restore` finds it
/// ([`super::submodule_snapshots`]). None when the submodule holds no uncommitted work.
/// Also what it could not keep there.
fn take_submodule(
    path: &Path,
    message: &str,
) -> Result<(Option<String>, Vec<String>), Unavailable> {
    let g = crate::system::git::state(path, &[])?;
    if g.dirty.is_empty() {
        return Ok((None, Vec::new()));
    }
    let dirty: Vec<String> = g.dirty.into_iter().map(|d| d.path).collect();
    let taken = take(path, &dirty, &[], g.head.as_deref(), message, None)?;
    let Some(s) = taken.snapshot else {
        return Ok((None, taken.left_out));
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    keep(path, &format!("submodule-{stamp}"), &s.commit)?;
    Ok((Some(s.commit), taken.left_out))
}

/// The uncommitted names as bytes (modified, deleted and untracked, not ignored).
fn raw_names(top: &Path) -> Result<Vec<Vec<u8>>, Unavailable> {
    let out = run(
        top,
        &[
            "ls-files",
            "-z",
            "--modified",
            "--deleted",
            "--others",
            "--exclude-standard",
        ],
    )?;
    let mut names: Vec<Vec<u8>> = out
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    names.dedup();
    Ok(names)
}

fn file_mode(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 != 0 {
            return "100755";
        }
    }
    let _ = meta;
    "100644"
}

/// Why a file could not be read, in a few words.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}
