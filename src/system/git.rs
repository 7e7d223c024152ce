//! The only place that runs git. Never prompts, never takes git's optional
//! locks (so a held `index.lock` does not stop us). Read-only, except for
//! `init`'s merge-driver entry in the repository's local config and the
//! snapshots of uncommitted work ([`snapshot`]: objects and `refs/ctxkeep/`).

mod shared;
pub mod snapshot;

pub use shared::{carry_reads, forget_reads, share_reads, CarriedReads, SharedReads};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// The repository as a checkpoint records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    #[serde(default)]
    pub dirty: Vec<DirtyFile>,
    /// Uncommitted paths left out of `dirty` to keep the record small: those
    /// sorting after its last path.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dirty_omitted: u64,
    /// The uncommitted work itself, stored in git ([`snapshot`]) by an automatic checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<snapshot::Snapshot>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl GitState {
    /// Keeps the first `at_most` uncommitted paths (they are sorted) and
    /// counts the rest in `dirty_omitted`.
    pub fn cap_dirty(&mut self, at_most: usize) {
        if self.dirty.len() > at_most {
            self.dirty_omitted += (self.dirty.len() - at_most) as u64;
            self.dirty.truncate(at_most);
        }
    }

    /// Whether the record accounts for `path` as uncommitted: listed, or
    /// among those counted past the last listed path.
    pub fn describes(&self, path: &str) -> bool {
        self.dirty.iter().any(|d| d.path == path)
            || (self.dirty_omitted > 0
                && self
                    .dirty
                    .last()
                    .is_none_or(|last| path > last.path.as_str()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirtyFile {
    pub path: String,
    /// modified, added, deleted, renamed, copied, typechange, untracked, conflicted.
    pub status: String,
}

/// Why git state could not be read; the caller warns and carries on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn git(dir: &Path) -> Command {
    let program = std::env::var_os("CTXKEEP_GIT").unwrap_or_else(|| "git".into());
    let mut cmd = Command::new(program);
    cmd.arg("-C")
        .arg(dir)
        .arg("--no-pager")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        // An inherited GIT_DIR (e.g. from a git hook) would point elsewhere.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null());
    cmd
}

fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, Unavailable> {
    checked(args, git(dir).args(args).output())
}

/// The stdout of a finished git call, or why it is unavailable.
fn checked(
    args: &[&str],
    out: std::io::Result<std::process::Output>,
) -> Result<Vec<u8>, Unavailable> {
    let out = out.map_err(|e| {
        Unavailable(match e.kind() {
            std::io::ErrorKind::NotFound => "git is not installed".into(),
            _ => format!("cannot run git: {e}"),
        })
    })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        let reason = if first.contains("not a git repository") {
            "not a git repository".to_string()
        } else if first.contains("dubious ownership") {
            format!("git refuses this repository ({first}); see `git config --global --add safe.directory`")
        } else {
            format!("git {} failed: {first}", args.first().unwrap_or(&""))
        };
        return Err(Unavailable(
            crate::system::redact::redact(&reason).into_owned(),
        ));
    }
    Ok(out.stdout)
}

/// Branch, HEAD and uncommitted files, from one `git status` call (shared within a
/// [`share_reads`] scope). `exclude` (relative to the top level) leaves ctxkeep's own file out.
pub fn state(dir: &Path, exclude: &[PathBuf]) -> Result<GitState, Unavailable> {
    let shared::Status { top, mut state } = status(dir)?;
    let excluded: Vec<String> = exclude
        .iter()
        .filter_map(|p| p.strip_prefix(&top).ok().or(Some(p.as_path())))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if !excluded.is_empty() {
        state.dirty.retain(|d| !excluded.contains(&d.path));
    }
    Ok(state)
}

/// The status of `dir`'s repository with its top level: the scope's, else the one asked ahead
/// ([`read_status_ahead`]), else read.
fn status(dir: &Path) -> Result<shared::Status, Unavailable> {
    let known = shared::known_top(dir);
    if let Some(Ok(top)) = &known {
        if let Some(status) = shared::known_status(top) {
            return status;
        }
    }
    let read = match shared::take_asked(dir) {
        Some(asked) => answer(dir, asked),
        None => answer(dir, ask(dir, known)),
    };
    if let Ok(s) = &read {
        shared::keep_status(&s.top, &read);
    }
    read
}

/// Starts git's status of `dir` (and its layout when not known) now, for the scope's first
/// reader of the status to pick up: a checkpoint parses its state file while git reads the
/// work tree, instead of one after the other. Nothing without a scope ([`share_reads`]) or
/// when the status is already read or asked.
pub fn read_status_ahead(dir: &Path) {
    if !shared::in_scope() || shared::is_asked(dir) {
        return;
    }
    let known = shared::known_top(dir);
    if let Some(Ok(top)) = &known {
        if shared::known_status(top).is_some() {
            return;
        }
    }
    shared::keep_asked(dir, ask(dir, known));
}

const STATUS: [&str; 5] = [
    "status",
    "--porcelain=v2",
    "--branch",
    "-z",
    "--untracked-files=all",
];

/// The git calls of one status read, started and not yet answered. Dropped unanswered (the
/// scope's reads forgotten), its calls are stopped and waited for.
pub(super) struct Asked {
    known: Option<Result<PathBuf, Unavailable>>,
    layout: Option<std::io::Result<std::process::Child>>,
    status: Option<std::io::Result<std::process::Child>>,
}

impl Drop for Asked {
    fn drop(&mut self) {
        let running = [self.layout.take(), self.status.take()];
        for mut child in running.into_iter().flatten().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts one `git status` call, and the layout unless `known` has the top level.
fn ask(dir: &Path, known: Option<Result<PathBuf, Unavailable>>) -> Asked {
    let piped = |args: &[&str]| {
        git(dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    // Both calls pay a process start: ask for the layout while `status` runs (its
    // porcelain paths are relative to the top level from anywhere). The status first: it
    // takes the longest, and each start waits for the child's exec.
    let status = Some(piped(&STATUS));
    let layout = known.is_none().then(|| piped(&LAYOUT));
    Asked {
        known,
        layout,
        status,
    }
}

/// The status `asked` started, read and parsed.
fn answer(dir: &Path, mut asked: Asked) -> Result<shared::Status, Unavailable> {
    let out = match asked.status.take() {
        Some(child) => checked(&STATUS, child.and_then(|c| c.wait_with_output())),
        None => unreachable!("a status is always asked"),
    };
    let top = match (asked.known.take(), asked.layout.take()) {
        (Some(top), _) => top,
        (None, Some(child)) => {
            let read = checked(&LAYOUT, child.and_then(|c| c.wait_with_output()));
            let layout = read.and_then(|out| layout_of(dir, out));
            shared::keep_layout(dir, &layout);
            layout.map(|l| l.top)
        }
        (None, None) => unreachable!("asked when not known"),
    }?;
    let out = out?;
    let mut state = GitState::default();
    let mut records = out.split(|&b| b == 0).peekable();
    while let Some(rec) = records.next() {
        if rec.is_empty() {
            continue;
        }
        let line = String::from_utf8_lossy(rec);
        if let Some(oid) = line.strip_prefix("# branch.oid ") {
            if oid != "(initial)" {
                state.head = Some(oid.to_string());
            }
        } else if let Some(head) = line.strip_prefix("# branch.head ") {
            if head != "(detached)" {
                state.branch = Some(head.to_string());
            }
        } else if line.starts_with('#') {
        } else {
            let (status, path) = match line.as_bytes()[0] {
                b'1' => {
                    let f: Vec<&str> = line.splitn(9, ' ').collect();
                    (
                        xy_status(f.get(1).copied().unwrap_or("..")),
                        f.get(8).copied().unwrap_or(""),
                    )
                }
                b'2' => {
                    records.next(); // the original path of a rename/copy
                    let f: Vec<&str> = line.splitn(10, ' ').collect();
                    (
                        xy_status(f.get(1).copied().unwrap_or("..")),
                        f.get(9).copied().unwrap_or(""),
                    )
                }
                b'u' => {
                    let f: Vec<&str> = line.splitn(11, ' ').collect();
                    ("conflicted", f.get(10).copied().unwrap_or(""))
                }
                b'?' => ("untracked", line.get(2..).unwrap_or("")),
                _ => continue,
            };
            if path.is_empty() {
                continue;
            }
            state.dirty.push(DirtyFile {
                path: path.to_string(),
                status: status.to_string(),
            });
        }
    }
    crate::system::sorting::sort_by(&mut state.dirty, |a, b| a.path.cmp(&b.path));
    Ok(shared::Status { top, state })
}

fn xy_status(xy: &str) -> &'static str {
    let b = xy.as_bytes();
    let (x, y) = (
        b.first().copied().unwrap_or(b'.'),
        b.get(1).copied().unwrap_or(b'.'),
    );
    let pick = |c: u8| match c {
        b'M' => Some("modified"),
        b'A' => Some("added"),
        b'D' => Some("deleted"),
        b'R' => Some("renamed"),
        b'C' => Some("copied"),
        b'T' => Some("typechange"),
        _ => None,
    };
    // The work tree's state is what a reader sees; the index's otherwise.
    pick(y).or(pick(x)).unwrap_or("modified")
}

/// Whether git is rewriting the work tree around `dir` now: it holds the index lock, or a
/// merge, rebase, cherry-pick or revert is under way. Read from the repository's files, with
/// no git run: asked only when the state file reads as missing or half-written.
pub fn operation_under_way(dir: &Path) -> bool {
    let Some(git_dir) = git_dir_around(dir) else {
        return false;
    };
    [
        "index.lock",
        "MERGE_HEAD",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
        "rebase-merge",
        "rebase-apply",
    ]
    .iter()
    .any(|name| std::fs::symlink_metadata(git_dir.join(name)).is_ok())
}

/// Whether the repository holding `dir` keeps ctxkeep's snapshot refs (`refs/ctxkeep/`, loose
/// or packed). Read from the repository's files, with no git run: asked only to say, when the
/// state file is gone, that `restore` can bring it back.
pub fn snapshot_refs_kept(dir: &Path) -> bool {
    let Some(git_dir) = git_dir_around(dir) else {
        return false;
    };
    // A linked worktree's refs live in the common folder its `commondir` names.
    let common = crate::system::fsutil::read_text(&git_dir.join("commondir"), 4096)
        .ok()
        .map(|to| git_dir.join(to.trim()));
    [Some(git_dir), common].into_iter().flatten().any(|d| {
        d.join("refs/ctxkeep").is_dir()
            || crate::system::fsutil::read_text(&d.join("packed-refs"), 64 << 20)
                .is_ok_and(|t| t.contains(" refs/ctxkeep/"))
    })
}

/// The git folder of the repository holding `dir`: `.git` itself, or where a `.git` file
/// (a linked worktree, a submodule) points.
fn git_dir_around(dir: &Path) -> Option<PathBuf> {
    let mut at = Some(dir);
    while let Some(d) = at {
        let dot_git = d.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => return Some(dot_git),
            Ok(_) => {
                let text = crate::system::fsutil::read_text(&dot_git, 4096).ok()?;
                let to = text.strip_prefix("gitdir:")?.trim();
                return Some(d.join(to));
            }
            Err(_) => at = d.parent(),
        }
    }
    None
}

/// How long a reader waits for git to finish rewriting the work tree (a merge, a checkout)
/// before it takes the state file as it finds it.
pub const OPERATION_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Runs `read` until it gives what `settled` accepts, while git rewrites the work tree around
/// `dir` ([`operation_under_way`]), for at most [`OPERATION_WAIT`]: a hook that runs during
/// `git merge` finds `project-state.md` missing or half-written for a moment, and must not
/// take that for a project without ctxkeep (and write no checkpoint). Free when the first
/// read is settled or git is idle.
pub fn read_settled<T>(dir: &Path, mut read: impl FnMut() -> T, settled: impl Fn(&T) -> bool) -> T {
    let start = std::time::Instant::now();
    loop {
        let got = read();
        if settled(&got) || start.elapsed() >= OPERATION_WAIT || !operation_under_way(dir) {
            return got;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Where the repository around a folder keeps its work tree and its files, from one `git
/// rev-parse` (shared within a [`share_reads`] scope): what the status, the snapshots and the
/// snapshot refs need, read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The work tree's top level.
    pub top: PathBuf,
    /// This work tree's git folder (`.git`, or `.git/worktrees/<name>` for a linked worktree).
    pub git_dir: PathBuf,
    /// The folder the worktrees share (refs, objects, config): `git_dir` itself, except in
    /// a linked worktree.
    pub common_dir: PathBuf,
    /// git's index file.
    pub index: PathBuf,
}

const LAYOUT: [&str; 6] = [
    "rev-parse",
    "--show-toplevel",
    "--absolute-git-dir",
    "--git-common-dir",
    "--git-path",
    "index",
];

/// The layout from `rev-parse`'s four lines (paths relative to `dir`, where git ran, made
/// absolute). A path holding a line break would shift the lines: then each is asked alone.
fn layout_of(dir: &Path, out: Vec<u8>) -> Result<Layout, Unavailable> {
    let text = String::from_utf8_lossy(&out);
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .unwrap_or(&text)
        .split('\n')
        .collect();
    let absolute = |p: PathBuf| if p.is_absolute() { p } else { dir.join(p) };
    if let [top, git_dir, common_dir, index] = lines.as_slice() {
        return Ok(Layout {
            top: PathBuf::from(top),
            git_dir: absolute(PathBuf::from(git_dir)),
            common_dir: absolute(PathBuf::from(common_dir)),
            index: absolute(PathBuf::from(index)),
        });
    }
    let alone = |args: &[&str]| run(dir, args).map(path_of).map(absolute);
    Ok(Layout {
        top: alone(&LAYOUT[..2])?,
        git_dir: alone(&["rev-parse", "--absolute-git-dir"])?,
        common_dir: alone(&["rev-parse", "--git-common-dir"])?,
        index: alone(&["rev-parse", "--git-path", "index"])?,
    })
}

/// The repository's layout around `dir` (shared within a [`share_reads`] scope).
pub fn layout(dir: &Path) -> Result<Layout, Unavailable> {
    if let Some(layout) = shared::known_layout(dir) {
        return layout;
    }
    let layout = run(dir, &LAYOUT).and_then(|out| layout_of(dir, out));
    shared::keep_layout(dir, &layout);
    layout
}

/// The repository's top level (shared within a [`share_reads`] scope).
pub fn toplevel(dir: &Path) -> Result<PathBuf, Unavailable> {
    layout(dir).map(|l| l.top)
}

/// The path git printed on one line.
fn path_of(out: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&out).trim_end_matches('\n'))
}

/// Whether `commit` names a commit this repository has.
pub fn commit_exists(dir: &Path, commit: &str) -> Result<bool, Unavailable> {
    // The HEAD a status named in this scope is there: no second process to ask.
    if shared::known_head(dir).flatten().as_deref() == Some(commit) {
        return Ok(true);
    }
    let spec = format!("{commit}^{{commit}}");
    match git(dir)
        .args(["cat-file", "-e", &spec])
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) => Ok(s.success()),
        Err(e) => Err(Unavailable(format!("cannot run git: {e}"))),
    }
}

/// The commit HEAD names, or None on an unborn branch.
pub fn head(dir: &Path) -> Result<Option<String>, Unavailable> {
    toplevel(dir)?;
    if let Some(head) = shared::known_head(dir) {
        return Ok(head);
    }
    let out = git(dir)
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && !id.is_empty()).then_some(id))
}

/// Commits reachable from HEAD but not from `since`.
pub fn commits_since(dir: &Path, since: &str) -> Result<u64, Unavailable> {
    let out = run(dir, &["rev-list", "--count", &format!("{since}..HEAD")])?;
    Ok(String::from_utf8_lossy(&out).trim().parse().unwrap_or(0))
}

/// Files git tracks (for checking that named paths exist).
pub fn tracked_files(dir: &Path) -> Result<Vec<String>, Unavailable> {
    let out = run(dir, &["ls-files", "-z"])?;
    Ok(out
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect())
}

/// Whether git tracks a file matching one of `pathspecs` (relative to `dir`; git's
/// wildcards): the index read for these paths alone, not listed whole.
pub fn tracks_any(dir: &Path, pathspecs: &[String]) -> Result<bool, Unavailable> {
    let mut args = vec!["ls-files", "-z", "--"];
    args.extend(pathspecs.iter().map(String::as_str));
    Ok(!run(dir, &args)?.is_empty())
}

/// What git's index holds for `rel` (a path relative to the top level):
/// `None` when the index has no such file. A path left conflicted by a
/// merge (several stages) is unavailable: there is no one version yet.
pub fn staged_blob(top: &Path, rel: &str) -> Result<Option<Vec<u8>>, Unavailable> {
    let listing = run(top, &["ls-files", "--stage", "-z", "--", rel])?;
    let entries: Vec<&[u8]> = listing
        .split(|&b| b == 0)
        .filter(|e| !e.is_empty())
        .collect();
    let object = match entries.as_slice() {
        [] => return Ok(None),
        // "<mode> <object> <stage>\t<path>"
        [one] => String::from_utf8_lossy(one)
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string(),
        _ => {
            return Err(Unavailable(format!(
                "{rel} has an unresolved merge in git's index"
            )))
        }
    };
    run(top, &["cat-file", "blob", &object]).map(Some)
}

/// Whether the repository is a shallow clone (CI checkouts often are), in
/// which an older recorded HEAD may simply not have been fetched.
pub fn is_shallow(dir: &Path) -> Result<bool, Unavailable> {
    let out = run(dir, &["rev-parse", "--is-shallow-repository"])?;
    Ok(String::from_utf8_lossy(&out).trim() == "true")
}

/// Whether `ancestor` is `descendant` or one of its ancestors.
pub fn is_ancestor(dir: &Path, ancestor: &str, descendant: &str) -> Result<bool, Unavailable> {
    match git(dir)
        .args(["merge-base", "--is-ancestor", ancestor, descendant])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) => Ok(s.success()),
        Err(e) => Err(Unavailable(format!("cannot run git: {e}"))),
    }
}

/// The newest commit that changed `path` (relative to `dir`), if any.
pub fn last_commit_touching(dir: &Path, path: &Path) -> Result<Option<String>, Unavailable> {
    let out = git(dir)
        .args(["log", "-1", "--format=%H", "--"])
        .arg(path)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && !id.is_empty()).then_some(id))
}

/// The messages of the newest `limit` commits, for finding issue numbers.
pub fn commit_messages(dir: &Path, limit: usize) -> Result<String, Unavailable> {
    let out = git(dir)
        .args(["log", &format!("-n{limit}"), "--format=%B"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    // An unborn branch has no log; that is no messages, not an error.
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// git's own three-way text merge (`git merge-file`) of three texts: the
/// result, and how many conflicts it left (marked `<<<<<<< ours` ...
/// `>>>>>>> theirs`).
pub fn merge_text(base: &str, ours: &str, theirs: &str) -> Result<(String, usize), Unavailable> {
    let dir =
        tempfile::tempdir().map_err(|e| Unavailable(format!("cannot make a temp folder: {e}")))?;
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text)
            .map(|_| p)
            .map_err(|e| Unavailable(format!("cannot write a temp file: {e}")))
    };
    let (o, b, t) = (
        write("ours", ours)?,
        write("base", base)?,
        write("theirs", theirs)?,
    );
    let out = git(dir.path())
        .args([
            "merge-file",
            "-p",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
        ])
        .arg(&o)
        .arg(&b)
        .arg(&t)
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    // The exit code is the number of conflicts; a negative one (255 and
    // up, as a byte) is an error.
    match out.status.code() {
        Some(n) if (0..=127).contains(&n) => Ok((
            String::from_utf8(out.stdout)
                .map_err(|_| Unavailable("git merge-file gave text that is not UTF-8".into()))?,
            n as usize,
        )),
        _ => Err(Unavailable(format!(
            "git merge-file failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

/// A value of the repository's git config (`None` when unset).
pub fn config_get(dir: &Path, key: &str) -> Result<Option<String>, Unavailable> {
    let top = toplevel(dir)?;
    if let Some(value) = shared::known_config(&top, key) {
        return Ok(value);
    }
    let out = git(dir)
        .args(["config", "--get", key])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    let v = String::from_utf8_lossy(&out.stdout)
        .trim_end_matches('\n')
        .to_string();
    let value = (out.status.success() && !v.is_empty()).then_some(v);
    shared::keep_config(&top, key, &value);
    Ok(value)
}

/// Sets a value in the repository's own config (`.git/config`, which git
/// does not share with clones).
pub fn config_set_local(dir: &Path, key: &str, value: &str) -> Result<(), Unavailable> {
    run(dir, &["config", "--local", key, value])?;
    if let Some(Ok(top)) = shared::known_top(dir) {
        shared::keep_config(&top, key, &Some(value.to_string()));
    }
    Ok(())
}

/// The text of `path` (relative to the top level) in index stage `stage`
/// (1 base, 2 ours, 3 theirs) during a merge; `None` when there is none.
pub fn index_stage(dir: &Path, stage: u8, path: &str) -> Result<Option<String>, Unavailable> {
    let spec = format!(":{stage}:{path}");
    let out = git(dir)
        .args(["show", &spec])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Ok(None);
    }
    String::from_utf8(out.stdout)
        .map(Some)
        .map_err(|_| Unavailable(format!("{spec} is not UTF-8 text")))
}

/// The text of `path` (relative to the top level) as HEAD has it; None when HEAD has no such
/// file (or there is no HEAD yet). One `git show` call: made only for a file whose change might
/// be ctxkeep's own (`agents::own_files`).
pub fn text_at_head(dir: &Path, path: &str) -> Result<Option<String>, Unavailable> {
    let spec = format!("HEAD:{path}");
    let out = git(dir)
        .args(["show", &spec])
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Ok(None);
    }
    Ok(String::from_utf8(out.stdout).ok())
}

#[cfg(test)]
mod tests;
