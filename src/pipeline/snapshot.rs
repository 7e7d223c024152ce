//! Uncommitted work kept in git with the checkpoints ctxkeep writes on its
//! own ([`crate::system::git::snapshot`]): taken when the work tree changed since the
//! last snapshot, linked from the checkpoint (`git.snapshot`), its ref named
//! after the checkpoint so that retention prunes both together; brought back
//! by `ctxkeep restore`.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::domain::checkpoint::{Archive, Checkpoint, GitState};
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::Lock;
use crate::system::git::snapshot::{self, SnapFile, Snapshot};
use crate::system::output::Output;
use crate::transcripts::destructive::{self, Kind};

/// The trigger of the checkpoint written before a destructive command.
pub const TRIGGER: &str = "pre-destructive";

/// Stores the work `g` lists (all of it: called before the list is capped)
/// unless the last snapshot (`prev`'s) has the same tree, which is then
/// carried over; `before`: the command it is taken before. Never fails the
/// checkpoint: git's refusal is a warning.
pub fn attach(
    ws: &Workspace,
    g: &mut GitState,
    prev: Option<&Checkpoint>,
    why: &str,
    before: Option<&str>,
    out: &Output,
) {
    if g.dirty.is_empty() {
        return;
    }
    let last = prev
        .and_then(|p| p.git.as_ref())
        .and_then(|pg| pg.snapshot.clone());
    let paths: Vec<String> = g.dirty.iter().map(|d| d.path.clone()).collect();
    let message = format!("ctxkeep: uncommitted work at {why}");
    match snapshot::take(&ws.root, &paths, g.head.as_deref(), &message, last.as_ref()) {
        Ok(Some(taken)) => g.snapshot = Some(taken),
        Ok(None) => g.snapshot = last,
        Err(e) => return out.warn(&format!("uncommitted work was not stored in git: {e}")),
    }
    if let (Some(s), Some(command)) = (g.snapshot.as_mut(), before) {
        s.before = Some(crate::system::output::clip(command, COMMAND_CHARS));
    }
}

/// How much of a command a snapshot records.
const COMMAND_CHARS: usize = 300;

/// Names the snapshot after the checkpoint that records it, so git keeps it.
pub fn keep(ws: &Workspace, record: &Checkpoint, out: &Output) {
    let Some(s) = record.git.as_ref().and_then(|g| g.snapshot.as_ref()) else {
        return;
    };
    if let Err(e) = snapshot::keep(&ws.root, &record.id, &s.commit) {
        out.warn(&format!("the snapshot of {} has no ref: {e}", record.id));
    }
}

/// Whether running `command` (from `cwd`) would discard some of the
/// uncommitted work in `g`, the repository at `top`.
pub fn at_risk(command: &str, g: &GitState, top: &Path, cwd: &Path) -> bool {
    let Some(found) = destructive::recognise(command) else {
        return false;
    };
    if g.dirty.is_empty() {
        return false;
    }
    let under = |targets: &[String]| {
        g.dirty
            .iter()
            .any(|d| destructive::covers(targets, top, cwd, &d.path))
    };
    match &found.kind {
        Kind::Discard(paths) | Kind::Remove(paths) => under(paths),
        Kind::PushForce(refspecs) => {
            refspecs.is_empty()
                || refspecs.iter().any(|r| {
                    let dst = r.trim_start_matches('+');
                    let dst = dst.rsplit(':').next().unwrap_or(dst);
                    let dst = dst.trim_start_matches("refs/heads/");
                    dst == "HEAD" || g.branch.as_deref() == Some(dst)
                })
        }
        Kind::ResetHard | Kind::Clean | Kind::StashDrop => true,
    }
}

/// What `restore` brought back.
#[derive(Debug, Serialize)]
pub struct Restored {
    pub checkpoint: String,
    pub commit: String,
    pub files: Vec<SnapFile>,
}

/// The checkpoint `id` (default: the latest with a snapshot) and its snapshot.
pub fn find(ws: &Workspace, id: Option<&str>) -> anyhow::Result<(Checkpoint, Snapshot)> {
    let sf = crate::domain::state::StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let archive = Archive {
        dir: &ws.checkpoints_dir(),
    };
    let current = sf.fm.checkpoint.clone();
    let snap = |c: &Checkpoint| c.git.as_ref().and_then(|g| g.snapshot.clone());
    let found = match id {
        Some(id) => {
            let c = match current.filter(|c| c.id == id) {
                Some(c) => c,
                None => archive.load(id).map_err(|_| {
                    Error::no_input(
                        ws.checkpoints_dir().join(format!("{id}.json")),
                        format!("no checkpoint {id} (not current, not archived)"),
                    )
                })?,
            };
            let s = snap(&c).ok_or_else(|| {
                Error::no_input(
                    &ws.state_path,
                    format!("checkpoint {id} holds no snapshot of uncommitted work"),
                )
            })?;
            (c, s)
        }
        None => current
            .into_iter()
            .chain(
                archive
                    .ids()
                    .into_iter()
                    .rev()
                    .filter_map(|id| archive.load(&id).ok()),
            )
            .find_map(|c| snap(&c).map(|s| (c, s)))
            .ok_or_else(|| {
                Error::no_input(
                    &ws.state_path,
                    "no checkpoint holds a snapshot of uncommitted work",
                )
            })?,
    };
    Ok(found)
}

/// Brings a snapshot's files back into the working tree. Without `force`,
/// refuses when a file it would write or remove has changes of its own.
pub fn restore(
    ws: &Workspace,
    lock: &Lock,
    id: Option<&str>,
    force: bool,
) -> anyhow::Result<Restored> {
    let (c, s) = find(ws, id)?;
    let unavailable =
        |e: crate::system::git::Unavailable| Error::Refused(format!("cannot restore: {e}"));
    if !snapshot::exists(&ws.root, &s.commit) {
        return Err(Error::no_input(
            &ws.root,
            format!(
                "the snapshot of {} ({}) is no longer in this repository",
                c.id, s.commit
            ),
        )
        .into());
    }
    let state_rel = state_path_in_repo(ws);
    let files: Vec<SnapFile> = snapshot::files(&ws.root, &s.commit)
        .map_err(unavailable)?
        .into_iter()
        .filter(|f| Some(f.path.as_str()) != state_rel.as_deref())
        .collect();
    if !force {
        let now = crate::system::git::state(
            &ws.root,
            std::slice::from_ref(&crate::system::fsutil::resolve_target(&ws.state_path)),
        )
        .map_err(unavailable)?;
        let clash: Vec<&str> = now
            .dirty
            .iter()
            .filter(|d| files.iter().any(|f| f.path == d.path))
            .map(|d| d.path.as_str())
            .filter(|p| !same_as_snapshot(ws, &s.commit, p))
            .collect();
        if !clash.is_empty() {
            return Err(Error::Refused(format!(
                "{} local change(s) would be overwritten ({}); commit or stash them, or give --force",
                clash.len(),
                clash.join(", ")
            ))
            .into());
        }
    }
    snapshot::restore(&ws.root, &s.commit, &files).map_err(unavailable)?;
    let _ = crate::domain::events::append(
        ws,
        lock,
        "restore",
        json!({ "checkpoint": c.id, "commit": s.commit, "files": files.len(), "force": force }),
    );
    Ok(Restored {
        checkpoint: c.id,
        commit: s.commit,
        files,
    })
}

/// Whether the file at `rel` already holds what the snapshot has (nothing
/// of the user's would be lost by writing it again).
fn same_as_snapshot(ws: &Workspace, commit: &str, rel: &str) -> bool {
    let Ok(top) = snapshot::top(&ws.root) else {
        return false;
    };
    let on_disk = std::fs::read(top.join(rel)).ok();
    let kept = snapshot::blob(&ws.root, commit, rel).ok().flatten();
    on_disk == kept
}

/// The state file's path relative to the repository's top level (never restored:
/// it holds the checkpoints themselves).
fn state_path_in_repo(ws: &Workspace) -> Option<String> {
    let top = snapshot::top(&ws.root).ok()?;
    let state = crate::system::fsutil::resolve_target(&ws.state_path);
    let top = top.canonicalize().unwrap_or(top);
    let state = state.canonicalize().unwrap_or(state);
    Some(
        state
            .strip_prefix(&top)
            .ok()?
            .to_string_lossy()
            .into_owned(),
    )
}
