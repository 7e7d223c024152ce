//! Snapshots of uncommitted work: the working tree's tracked changes and
//! untracked (not ignored) files stored as a commit object under
//! `refs/ctxkeep/snapshots/<checkpoint id>`, never on a branch, never pushed
//! (git pushes `refs/heads/` and `refs/tags/` only unless told otherwise).
//! Built in a temporary index (`GIT_INDEX_FILE`) copied from the real one, so
//! the user's index, branches and working tree are never touched, and only
//! the files `git status` listed are hashed again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::{Deserialize, Serialize};

use super::{checked, git, run, Unavailable};

/// Where snapshot refs live.
pub const REF_PREFIX: &str = "refs/ctxkeep/snapshots/";

/// A snapshot as a checkpoint records it (`git.snapshot`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The commit object holding the work tree (its parent: HEAD then).
    pub commit: String,
    /// Its tree: an unchanged work tree gives the same one, so no new snapshot.
    pub tree: String,
    /// Uncommitted files it holds.
    pub files: u64,
    /// The command it was taken before (trigger `pre-destructive`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
}

/// One file a snapshot changes against the commit it was taken on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapFile {
    pub path: String,
    /// `modified`, `added` or `deleted`.
    pub status: &'static str,
}

/// The repository's top level and its index file, from one call.
fn paths(dir: &Path) -> Result<(PathBuf, PathBuf), Unavailable> {
    let out = run(
        dir,
        &["rev-parse", "--show-toplevel", "--git-path", "index"],
    )?;
    let text = String::from_utf8_lossy(&out);
    let mut lines = text.lines();
    let top = PathBuf::from(lines.next().unwrap_or_default());
    let index = PathBuf::from(lines.next().unwrap_or_default());
    // `--git-path` is relative to the directory git ran in.
    let index = if index.is_absolute() {
        index
    } else {
        dir.join(index)
    };
    Ok((top, index))
}

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

/// Stores the uncommitted work: `dirty` are the paths `git status` listed
/// (relative to the top level), `head` the commit they are changes against.
/// Returns None when the tree is that of `unchanged_from` (the last snapshot)
/// and git still has that commit: nothing changed since, nothing is stored.
pub fn take(
    dir: &Path,
    dirty: &[String],
    head: Option<&str>,
    message: &str,
    unchanged_from: Option<&Snapshot>,
) -> Result<Option<Snapshot>, Unavailable> {
    let (top, index) = paths(dir)?;
    let temp = temp_index(&index)?;
    // Only the listed paths are hashed. They leave the index first: a file changed within the
    // file system's timestamp tick of its entry, at the same size, would otherwise pass git's
    // stat check unread ("racy git") and the snapshot would keep the old content.
    let present: Vec<&String> = dirty
        .iter()
        .filter(|p| std::fs::symlink_metadata(top.join(p)).is_ok())
        .collect();
    with_paths(
        &top,
        &temp.0,
        &["update-index", "--force-remove"],
        dirty.iter(),
    )?;
    with_paths(
        &top,
        &temp.0,
        &["update-index", "--add"],
        present.into_iter(),
    )?;
    let tree = line_of(checked(
        &["write-tree"],
        git(&top)
            .env("GIT_INDEX_FILE", &temp.0)
            .arg("write-tree")
            .output(),
    )?);
    if unchanged_from.is_some_and(|last| last.tree == tree && exists(&top, &last.commit)) {
        return Ok(None);
    }
    let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
    if let Some(h) = head {
        args.extend(["-p", h]);
    }
    // ctxkeep's own name: a user without `user.name` still gets a snapshot.
    let commit = line_of(checked(
        &["commit-tree"],
        git(&top)
            .args(&args)
            .env("GIT_AUTHOR_NAME", "ctxkeep")
            .env("GIT_AUTHOR_EMAIL", "ctxkeep@localhost")
            .env("GIT_COMMITTER_NAME", "ctxkeep")
            .env("GIT_COMMITTER_EMAIL", "ctxkeep@localhost")
            .output(),
    )?);
    Ok(Some(Snapshot {
        commit,
        tree,
        files: dirty.len() as u64,
        before: None,
    }))
}

/// Runs `git ARGS -z --stdin` on the temporary index `index`, the paths on its stdin.
fn with_paths<'a>(
    top: &Path,
    index: &Path,
    args: &[&str],
    paths: impl Iterator<Item = &'a String>,
) -> Result<(), Unavailable> {
    let mut list = Vec::new();
    for p in paths {
        list.extend_from_slice(p.as_bytes());
        list.push(0);
    }
    let mut child = git(top)
        .env("GIT_INDEX_FILE", index)
        .args(args)
        .args(["-z", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&list)
            .map_err(|e| Unavailable(format!("cannot write to git: {e}")))?;
    }
    checked(args, child.wait_with_output())?;
    Ok(())
}

fn line_of(out: Vec<u8>) -> String {
    String::from_utf8_lossy(&out).trim().to_string()
}

/// Points `refs/ctxkeep/snapshots/<name>` at `commit`, so git keeps it.
pub fn keep(dir: &Path, name: &str, commit: &str) -> Result<(), Unavailable> {
    let r = format!("{REF_PREFIX}{name}");
    run(dir, &["update-ref", &r, commit]).map(|_| ())
}

/// Every snapshot ref: (name after the prefix, commit).
pub fn list(dir: &Path) -> Result<Vec<(String, String)>, Unavailable> {
    let out = run(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            REF_PREFIX,
        ],
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| {
            let (name, commit) = l.rsplit_once(' ')?;
            Some((
                name.strip_prefix(REF_PREFIX)?.to_string(),
                commit.to_string(),
            ))
        })
        .collect())
}

/// Removes the ref `name` (the commit goes with git's own gc once nothing else holds it).
pub fn drop_ref(dir: &Path, name: &str) -> Result<(), Unavailable> {
    let r = format!("{REF_PREFIX}{name}");
    run(dir, &["update-ref", "-d", &r]).map(|_| ())
}

/// Whether `commit` is a commit object this repository has.
pub fn exists(dir: &Path, commit: &str) -> bool {
    super::commit_exists(dir, commit).unwrap_or(false)
}

/// The files a snapshot holds: what it changes against its parent (the commit
/// it was taken on), or everything when it has none.
pub fn files(dir: &Path, commit: &str) -> Result<Vec<SnapFile>, Unavailable> {
    let parent = format!("{commit}^");
    let has_parent = super::commit_exists(dir, &parent).unwrap_or(false);
    let out = if has_parent {
        run(
            dir,
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-status",
                &parent,
                commit,
            ],
        )?
    } else {
        let mut listed = Vec::new();
        let names = run(dir, &["ls-tree", "-r", "-z", "--name-only", commit])?;
        for n in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
            listed.extend_from_slice(b"A\0");
            listed.extend_from_slice(n);
            listed.push(0);
        }
        listed
    };
    let mut parts = out.split(|&b| b == 0).filter(|p| !p.is_empty());
    let mut found = Vec::new();
    while let (Some(status), Some(path)) = (parts.next(), parts.next()) {
        let status = match status.first() {
            Some(b'A') => "added",
            Some(b'D') => "deleted",
            _ => "modified",
        };
        found.push(SnapFile {
            path: String::from_utf8_lossy(path).into_owned(),
            status,
        });
    }
    Ok(found)
}

/// Writes the snapshot's version of `files` into the working tree (the
/// deleted ones are removed), through a temporary index: the user's index
/// and HEAD stay as they are.
pub fn restore(dir: &Path, commit: &str, files: &[SnapFile]) -> Result<(), Unavailable> {
    let (top, index) = paths(dir)?;
    let temp = TempIndex(index.with_file_name(format!("ctxkeep-restore.{}", std::process::id())));
    checked(
        &["read-tree"],
        git(&top)
            .env("GIT_INDEX_FILE", &temp.0)
            .args(["read-tree", commit])
            .output(),
    )?;
    let written: Vec<String> = files
        .iter()
        .filter(|f| f.status != "deleted")
        .map(|f| f.path.clone())
        .collect();
    with_paths(&top, &temp.0, &["checkout-index", "-f"], written.iter())?;
    for f in files.iter().filter(|f| f.status == "deleted") {
        match std::fs::remove_file(top.join(&f.path)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Unavailable(format!("cannot remove {}: {e}", f.path))),
        }
    }
    Ok(())
}

/// What the snapshot holds at `path` (relative to the top level); None when
/// it holds no such file.
pub fn blob(dir: &Path, commit: &str, path: &str) -> Result<Option<Vec<u8>>, Unavailable> {
    let spec = format!("{commit}:{path}");
    let out = git(dir)
        .args(["cat-file", "blob", &spec])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    Ok(out.status.success().then_some(out.stdout))
}

/// The top level of the repository around `dir`.
pub fn top(dir: &Path) -> Result<PathBuf, Unavailable> {
    paths(dir).map(|(top, _)| top)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(ok.status.success(), "{args:?}: {ok:?}");
    }

    fn repo() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        sh(d.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(d.path().join("a.txt"), "one\n").unwrap();
        std::fs::write(d.path().join("gone.txt"), "gone\n").unwrap();
        std::fs::write(d.path().join(".gitignore"), "*.log\n").unwrap();
        sh(d.path(), &["add", "-A"]);
        sh(d.path(), &["commit", "-qm", "first"]);
        d
    }

    fn dirty(dir: &Path) -> (Vec<String>, Option<String>) {
        let s = crate::system::git::state(dir, &[]).unwrap();
        (s.dirty.into_iter().map(|d| d.path).collect(), s.head)
    }

    #[test]
    fn a_listed_file_is_read_even_when_its_stat_matches_the_index() {
        let d = repo();
        let p = d.path();
        // The same size and times as the entry: git's stat check alone would take it as unchanged.
        sh(p, &["config", "core.trustctime", "false"]);
        let old_time = |path: &Path| {
            let ok = std::process::Command::new("touch")
                .args(["-d", "2020-01-01 00:00:00"])
                .arg(path)
                .status()
                .unwrap();
            assert!(ok.success());
        };
        old_time(&p.join("a.txt"));
        // The index records that time (and the file's real size: nothing is racy).
        sh(p, &["update-index", "--refresh"]);
        std::fs::write(p.join("a.txt"), "owt\n").unwrap();
        old_time(&p.join("a.txt"));
        assert_eq!(
            dirty(p).0,
            Vec::<String>::new(),
            "git's own check misses it"
        );
        let head = dirty(p).1;
        let snap = take(p, &["a.txt".to_string()], head.as_deref(), "t", None)
            .unwrap()
            .unwrap();
        assert_eq!(blob(p, &snap.commit, "a.txt").unwrap().unwrap(), b"owt\n");
    }

    #[test]
    fn a_snapshot_survives_a_hard_reset_and_comes_back() {
        let d = repo();
        let p = d.path();
        std::fs::write(p.join("a.txt"), "two\n").unwrap();
        std::fs::write(p.join("new.txt"), "new\n").unwrap();
        std::fs::write(p.join("noise.log"), "ignored\n").unwrap();
        std::fs::remove_file(p.join("gone.txt")).unwrap();
        let (paths, head) = dirty(p);
        let snap = take(p, &paths, head.as_deref(), "test", None)
            .unwrap()
            .unwrap();
        assert_eq!(snap.files, 3);
        // The same tree again is no new snapshot.
        assert_eq!(
            take(p, &paths, head.as_deref(), "test", Some(&snap)).unwrap(),
            None
        );
        keep(p, "ckpt-0001", &snap.commit).unwrap();
        assert_eq!(
            list(p).unwrap(),
            [("ckpt-0001".into(), snap.commit.clone())]
        );
        // The user's index and branch are untouched.
        assert_eq!(dirty(p).0, paths);
        sh(p, &["reset", "--hard", "-q"]);
        sh(p, &["clean", "-fdq"]);
        let files = files(p, &snap.commit).unwrap();
        let shown: Vec<(&str, &str)> = files.iter().map(|f| (f.path.as_str(), f.status)).collect();
        assert_eq!(
            shown,
            [
                ("a.txt", "modified"),
                ("gone.txt", "deleted"),
                ("new.txt", "added")
            ]
        );
        restore(p, &snap.commit, &files).unwrap();
        assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "two\n");
        assert_eq!(std::fs::read_to_string(p.join("new.txt")).unwrap(), "new\n");
        assert!(!p.join("gone.txt").exists());
        // Ignored files are not part of the work kept.
        assert!(p.join("noise.log").exists());
        drop_ref(p, "ckpt-0001").unwrap();
        assert!(list(p).unwrap().is_empty());
        // No temporary index is left beside the real one.
        let left: Vec<_> = std::fs::read_dir(p.join(".git"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("ctxkeep-"))
            .collect();
        assert!(left.is_empty());
    }
}
