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
/// ([`submodule_snapshots`]). None when the submodule holds no uncommitted work.
/// Also what it could not keep there.
fn take_submodule(
    path: &Path,
    message: &str,
) -> Result<(Option<String>, Vec<String>), Unavailable> {
    let g = super::state(path, &[])?;
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
            raw: path.to_vec(),
        });
    }
    Ok(found)
}

/// One path's content in a commit: its mode (`100644`, `100755`, `120000`,
/// `160000`) and bytes; None when the commit has no file there.
pub type Held = Option<(String, Vec<u8>)>;

/// What `commit` holds at each of `paths` (relative to the top level), from
/// two git calls however many paths.
pub fn contents(dir: &Path, commit: &str, paths: &[Vec<u8>]) -> Result<Vec<Held>, Unavailable> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["ls-tree", "-z", commit, "--"];
    let owned: Vec<String> = paths
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let lossless = paths.iter().all(|p| std::str::from_utf8(p).is_ok());
    if lossless {
        args.extend(owned.iter().map(String::as_str));
    }
    let listed = run(dir, &args)?;
    // `MODE TYPE ID\tPATH`
    let mut found: Vec<(Vec<u8>, String, String)> = Vec::new();
    for entry in listed.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let head = String::from_utf8_lossy(&entry[..tab]);
        let mut f = head.split(' ');
        let (Some(mode), Some(_), Some(id)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        found.push((entry[tab + 1..].to_vec(), mode.to_string(), id.to_string()));
    }
    if !lossless {
        // A name that is not UTF-8 cannot go on the command line: list the whole tree.
        let all = run(dir, &["ls-tree", "-r", "-z", commit])?;
        for entry in all.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let path = entry[tab + 1..].to_vec();
            if paths.contains(&path) {
                let head = String::from_utf8_lossy(&entry[..tab]).into_owned();
                let f: Vec<&str> = head.split(' ').collect();
                if f.len() == 3 {
                    found.push((path, f[0].to_string(), f[2].to_string()));
                }
            }
        }
    }
    let ids: Vec<&str> = found
        .iter()
        .filter(|(_, mode, _)| mode != "160000" && mode != "040000")
        .map(|(_, _, id)| id.as_str())
        .collect();
    let blobs = read_blobs(dir, &ids)?;
    Ok(paths
        .iter()
        .map(|p| {
            let (_, mode, id) = found.iter().find(|(path, _, _)| path == p)?;
            match mode.as_str() {
                "040000" => None,
                "160000" => Some((mode.clone(), Vec::new())),
                _ => Some((mode.clone(), blobs.get(id.as_str())?.clone())),
            }
        })
        .collect())
}

/// The bytes of each blob `ids` names, from one `cat-file --batch`.
fn read_blobs(
    dir: &Path,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, Vec<u8>>, Unavailable> {
    let mut map = std::collections::HashMap::new();
    if ids.is_empty() {
        return Ok(map);
    }
    let input = ids.join("\n") + "\n";
    let out = with_bytes(dir, None, &["cat-file", "--batch"], input.into_bytes())?;
    let mut at = 0;
    for id in ids {
        let Some(nl) = out[at..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&out[at..at + nl]).into_owned();
        at += nl + 1;
        let size: Option<usize> = header.split(' ').nth(2).and_then(|n| n.parse().ok());
        if let Some(size) = size {
            let end = (at + size).min(out.len());
            map.insert(id.to_string(), out[at..end].to_vec());
            at = end + 1;
        }
    }
    Ok(map)
}

/// Writes the snapshot's version of `files` into the working tree exactly
/// as stored (no smudge filter, no line-end conversion; the mode kept), and
/// removes the files it had deleted. The user's index and HEAD stay as they are.
pub fn restore(dir: &Path, commit: &str, files: &[SnapFile]) -> Result<(), Unavailable> {
    let top = top(dir)?;
    let raw: Vec<Vec<u8>> = files.iter().map(|f| f.raw.clone()).collect();
    let held = contents(&top, commit, &raw)?;
    for (f, held) in files.iter().zip(held) {
        let path = top.join(bytes_path(&f.raw));
        let failed = |e: std::io::Error| Unavailable(format!("cannot write {}: {e}", f.path));
        match held {
            None => match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Unavailable(format!("cannot remove {}: {e}", f.path))),
            },
            Some((mode, _)) if mode == "160000" => {}
            Some((mode, bytes)) => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(failed)?;
                }
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    std::fs::remove_file(&path).map_err(failed)?;
                }
                if mode == "120000" {
                    #[cfg(unix)]
                    {
                        let _ = std::fs::remove_file(&path);
                        std::os::unix::fs::symlink(bytes_path(&bytes), &path).map_err(failed)?;
                    }
                } else {
                    std::fs::write(&path, &bytes).map_err(failed)?;
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        let exec = if mode == "100755" { 0o755 } else { 0o644 };
                        let _ =
                            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(exec));
                    }
                }
            }
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
    let Some(git_dir) = super::git_dir_around(dir) else {
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

    #[test]
    fn each_worktree_has_its_own_snapshot_refs() {
        let d = repo();
        let p = d.path();
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
}
