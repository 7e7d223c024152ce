//! Snapshots of uncommitted work: the working tree's tracked changes and
//! untracked (not ignored) files stored as a commit object under
//! `refs/ctxkeep/snapshots/<checkpoint id>`, never on a branch, never pushed
//! (git pushes `refs/heads/` and `refs/tags/` only unless told otherwise).
//! Built in a temporary index (`GIT_INDEX_FILE`) copied from the real one, so
//! the user's index, branches and working tree are never touched, and only
//! the files `git status` listed are hashed again.
//!
//! A file per concern: taking one (`take.rs`), the refs that keep them and their pruning
//! (`refs.rs`), reading one back and restoring it (`restore.rs`), submodules' own snapshots
//! (`submodules.rs`), and what a git command line names (`names.rs`: aliases, checkout's
//! operands); here the records and the git calls they share.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::{Deserialize, Serialize};

use super::{checked, git, layout, Unavailable};

mod names;
mod refs;
mod restore;
mod submodules;
mod take;

pub use names::{aliases, checkout_paths, names_revision};
pub use refs::{
    at_most, drop_ref, drop_refs_at, exists, keep, keep_stashes, list, made_by_ctxkeep,
    mirroring_remotes, parent, worktree_part, STASH_PREFIX,
};
pub use restore::{blob, contents, files, restore, Held};
pub use submodules::{dirty_submodules, submodule_snapshots};
pub use take::{take, Taken, AUTHOR, AUTHOR_EMAIL};

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
    /// Uncommitted paths it could not keep, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

/// One file a snapshot changes against the commit it was taken on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapFile {
    pub path: String,
    /// `modified`, `added` or `deleted`.
    pub status: &'static str,
    /// The path as git names it (bytes: a name need not be UTF-8).
    #[serde(skip)]
    pub raw: Vec<u8>,
}

/// The repository's top level and its index file, from the shared layout ([`layout`]).
fn paths(dir: &Path) -> Result<(PathBuf, PathBuf), Unavailable> {
    layout(dir).map(|l| (l.top, l.index))
}

/// A path from the bytes git gives (any bytes on Unix).
pub fn bytes_path(rel: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(rel))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(rel).into_owned())
    }
}

fn line_list(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

/// Runs `git ARGS` (on the temporary index `index`, if given) with `input` on its stdin.
fn with_bytes(
    top: &Path,
    index: Option<&Path>,
    args: &[&str],
    input: Vec<u8>,
) -> Result<Vec<u8>, Unavailable> {
    let mut cmd = git(top);
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    let mut stdin = child.stdin.take();
    // Written from another thread: git may fill its stdout before reading all of stdin.
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
    });
    let out = child.wait_with_output();
    let _ = writer.join();
    checked(args, out)
}

/// Runs `git ARGS -z --stdin` on the temporary index `index`, the paths (as bytes) on its stdin.
fn with_byte_paths<'a>(
    top: &Path,
    index: &Path,
    args: &[&str],
    paths: impl Iterator<Item = &'a Vec<u8>>,
) -> Result<(), Unavailable> {
    let mut list = Vec::new();
    for p in paths {
        list.extend_from_slice(p);
        list.push(0);
    }
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-z", "--stdin"]);
    with_bytes(top, Some(index), &all, list).map(|_| ())
}

fn line_of(out: Vec<u8>) -> String {
    String::from_utf8_lossy(&out).trim().to_string()
}

/// The top level of the repository around `dir`.
pub fn top(dir: &Path) -> Result<PathBuf, Unavailable> {
    paths(dir).map(|(top, _)| top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::git::run;

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
        let snap = take(p, &["a.txt".to_string()], &[], head.as_deref(), "t", None)
            .unwrap()
            .snapshot
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
        let snap = take(p, &paths, &[], head.as_deref(), "test", None)
            .unwrap()
            .snapshot
            .unwrap();
        assert_eq!(snap.files, 3);
        // The same tree again is no new snapshot.
        assert_eq!(
            take(p, &paths, &[], head.as_deref(), "test", Some(&snap))
                .unwrap()
                .snapshot,
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

    /// Takes a snapshot of everything `git status` lists.
    fn snap(p: &Path) -> Taken {
        let (paths, head) = dirty(p);
        take(p, &paths, &[], head.as_deref(), "t", None).unwrap()
    }

    fn running_as_root() -> bool {
        // A file mode of 000 stops everyone but root.
        let probe = tempfile::NamedTempFile::new().unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::File::open(probe.path()).is_ok()
    }

    #[cfg(unix)]
    #[test]
    fn an_unreadable_file_is_left_out_by_name_and_the_rest_is_kept() {
        use std::os::unix::fs::PermissionsExt;
        let d = repo();
        let p = d.path();
        std::fs::write(p.join("a.txt"), "two\n").unwrap();
        // Root reads a file of mode 000: there, a tracked file turned into a FIFO (git lists
        // it, nothing can be read from it) is the file that cannot be kept.
        // The snapshot keeps what git had for it (not "deleted"): restore leaves it alone.
        let (name, why, kept) = if running_as_root() {
            std::fs::remove_file(p.join("gone.txt")).unwrap();
            let ok = std::process::Command::new("mkfifo")
                .arg(p.join("gone.txt"))
                .status()
                .unwrap();
            assert!(ok.success());
            (
                "gone.txt",
                "gone.txt: not a regular file",
                Some(b"gone\n".to_vec()),
            )
        } else {
            std::fs::write(p.join("root-owned.bin"), "secret\n").unwrap();
            std::fs::set_permissions(
                p.join("root-owned.bin"),
                std::fs::Permissions::from_mode(0o000),
            )
            .unwrap();
            ("root-owned.bin", "root-owned.bin: permission denied", None)
        };
        let taken = snap(p);
        let _ = std::fs::set_permissions(p.join(name), std::fs::Permissions::from_mode(0o644));
        assert_eq!(taken.left_out, [why]);
        let s = taken.snapshot.unwrap();
        assert_eq!(s.left_out, taken.left_out);
        assert_eq!(blob(p, &s.commit, "a.txt").unwrap().unwrap(), b"two\n");
        assert_eq!(blob(p, &s.commit, name).unwrap(), kept);
    }

    #[test]
    fn a_tracked_file_turned_into_a_folder_is_kept_as_the_folder() {
        let d = repo();
        let p = d.path();
        std::fs::write(p.join("a.txt"), "changed\n").unwrap();
        std::fs::remove_file(p.join("gone.txt")).unwrap();
        std::fs::create_dir(p.join("gone.txt")).unwrap();
        std::fs::write(p.join("gone.txt/inner.rs"), "fn inner() {}\n").unwrap();
        let taken = snap(p);
        assert!(taken.left_out.is_empty(), "{:?}", taken.left_out);
        let s = taken.snapshot.unwrap();
        assert_eq!(
            blob(p, &s.commit, "gone.txt/inner.rs").unwrap().unwrap(),
            b"fn inner() {}\n"
        );
        assert_eq!(blob(p, &s.commit, "a.txt").unwrap().unwrap(), b"changed\n");
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_kept_and_come_back() {
        use std::os::unix::ffi::OsStrExt;
        let d = repo();
        let p = d.path();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(p.join(name), "latin-1 name\n").unwrap();
        let s = snap(p).snapshot.unwrap();
        let listed = files(p, &s.commit).unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].raw, b"caf\xe9.txt");
        std::fs::remove_file(p.join(name)).unwrap();
        restore(p, &s.commit, &listed).unwrap();
        assert_eq!(std::fs::read(p.join(name)).unwrap(), b"latin-1 name\n");
    }

    #[test]
    fn bytes_are_kept_exactly_under_autocrlf_and_eol_attributes() {
        let d = repo();
        let p = d.path();
        sh(p, &["config", "core.autocrlf", "true"]);
        std::fs::write(p.join(".gitattributes"), "*.txt eol=crlf\n*.sh eol=lf\n").unwrap();
        std::fs::write(p.join("a.txt"), "one\r\ntwo\n").unwrap();
        std::fs::write(p.join("run.sh"), "echo hi\r\n").unwrap();
        let s = snap(p).snapshot.unwrap();
        assert_eq!(
            blob(p, &s.commit, "a.txt").unwrap().unwrap(),
            b"one\r\ntwo\n"
        );
        std::fs::remove_file(p.join("a.txt")).unwrap();
        std::fs::remove_file(p.join("run.sh")).unwrap();
        let listed = files(p, &s.commit).unwrap();
        restore(p, &s.commit, &listed).unwrap();
        assert_eq!(std::fs::read(p.join("a.txt")).unwrap(), b"one\r\ntwo\n");
        assert_eq!(std::fs::read(p.join("run.sh")).unwrap(), b"echo hi\r\n");
    }

    #[test]
    fn stash_entries_are_kept_before_a_drop() {
        let d = repo();
        let p = d.path();
        assert_eq!(keep_stashes(p).unwrap(), 0, "no stash: nothing to keep");
        std::fs::write(p.join("a.txt"), "stashed work\n").unwrap();
        sh(p, &["stash", "-q"]);
        assert_eq!(keep_stashes(p).unwrap(), 1);
        sh(p, &["stash", "clear"]);
        let kept = String::from_utf8(
            run(p, &["for-each-ref", "--format=%(objectname)", STASH_PREFIX]).unwrap(),
        )
        .unwrap();
        let commit = kept.trim();
        assert_eq!(
            blob(p, commit, "a.txt").unwrap().unwrap(),
            b"stashed work\n"
        );
    }

    /// A linked worktree of `p` on a new branch, in a folder of its own (kept while the guard lives).
    fn linked_worktree(p: &Path) -> (tempfile::TempDir, PathBuf) {
        let other = tempfile::tempdir().unwrap();
        let linked = other.path().join("linked");
        sh(
            p,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "other",
                linked.to_str().unwrap(),
            ],
        );
        (other, linked)
    }

    #[test]
    fn each_worktree_has_its_own_snapshot_refs() {
        let d = repo();
        let p = d.path();
        let (_other, linked) = linked_worktree(p);
        std::fs::write(p.join("a.txt"), "main's\n").unwrap();
        std::fs::write(linked.join("a.txt"), "linked's\n").unwrap();
        let main_snap = snap(p).snapshot.unwrap();
        let linked_snap = snap(&linked).snapshot.unwrap();
        // The same checkpoint id in both: neither overwrites the other.
        keep(p, "ckpt-0001", &main_snap.commit).unwrap();
        keep(&linked, "ckpt-0001", &linked_snap.commit).unwrap();
        assert_eq!(
            list(p).unwrap(),
            [("ckpt-0001".into(), main_snap.commit.clone())]
        );
        assert_eq!(
            list(&linked).unwrap(),
            [("ckpt-0001".into(), linked_snap.commit.clone())]
        );
        // Dropping main's leaves the linked worktree's.
        drop_ref(p, "ckpt-0001").unwrap();
        assert!(list(p).unwrap().is_empty());
        assert_eq!(list(&linked).unwrap().len(), 1);
        assert!(made_by_ctxkeep(p, &linked_snap.commit));
    }

    /// The refs counted from git's files, against `list` (git's own listing).
    fn counted(dir: &Path) -> (Option<usize>, usize) {
        (at_most(dir), list(dir).unwrap().len())
    }

    #[test]
    fn snapshot_refs_are_counted_from_loose_and_packed_refs_as_git_lists_them() {
        let d = repo();
        let p = d.path();
        let head = crate::system::git::head(p).unwrap().unwrap();
        assert_eq!(counted(p), (Some(0), 0), "no refs yet");
        for n in 1..=3 {
            keep(p, &format!("ckpt-000{n}"), &head).unwrap();
        }
        assert_eq!(counted(p), (Some(3), 3), "loose");
        sh(p, &["pack-refs", "--all"]);
        assert!(!p.join(".git/refs/ctxkeep/snapshots/ckpt-0001").exists());
        assert_eq!(counted(p), (Some(3), 3), "packed");
        // Written again after packing: loose and packed at once, one ref.
        keep(p, "ckpt-0002", &head).unwrap();
        keep(p, "ckpt-0004", &head).unwrap();
        assert_eq!(counted(p), (Some(4), 4), "loose beside packed");
        // Other refs, and other worktrees' snapshot refs, are not this worktree's.
        sh(p, &["update-ref", "refs/ctxkeep/stash/x", &head]);
        sh(
            p,
            &[
                "update-ref",
                "refs/ctxkeep/snapshots/worktrees/w/ckpt-0001",
                &head,
            ],
        );
        sh(p, &["pack-refs", "--all"]);
        assert_eq!(counted(p), (Some(4), 4), "others' refs");
        // A linked worktree's refs live in the common folder, under its own name.
        let (_other, linked) = linked_worktree(p);
        assert_eq!(counted(&linked), (Some(0), 0));
        keep(&linked, "ckpt-0001", &head).unwrap();
        keep(&linked, "ckpt-0002", &head).unwrap();
        assert_eq!(counted(&linked), (Some(2), 2), "linked worktree");
        assert_eq!(counted(p), (Some(4), 4), "main worktree");
    }

    #[test]
    fn a_submodules_snapshot_refs_are_counted_in_its_own_git_folder() {
        let inner = repo();
        let d = repo();
        let p = d.path();
        sh(
            p,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                inner.path().to_str().unwrap(),
                "sub",
            ],
        );
        let sub = p.join("sub");
        assert!(sub.join(".git").is_file(), "the submodule's .git is a file");
        let head = crate::system::git::head(&sub).unwrap().unwrap();
        keep(&sub, "ckpt-0001", &head).unwrap();
        assert_eq!(counted(&sub), (Some(1), 1));
        assert_eq!(counted(p), (Some(0), 0), "the superproject has none");
    }

    #[test]
    fn refs_in_a_reftable_are_left_to_git() {
        let d = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("git")
            .args(["init", "-q", "--ref-format=reftable"])
            .arg(d.path())
            .output()
            .unwrap();
        if !made.status.success() {
            return; // a git older than 2.45 has no reftable
        }
        assert_eq!(at_most(d.path()), None);
    }
}
