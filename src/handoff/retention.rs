//! Keeping `.ctxkeep/` bounded: the checkpoint archive to N records and D
//! days, the event log rotated at a size, the session chain to N sessions,
//! and temp files a killed process left behind. `checkpoint` and `resume`
//! apply the limits as they go; `gc` applies them all by hand, and removes
//! the records an agent's integration keeps outside the project once no
//! session has written them for a while ([`crate::agents::records`]).

use serde::Serialize;

use crate::agents::records::{self, Stale};
use crate::domain::checkpoint::Archive;
use crate::domain::config::Config;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::Lock;

/// What was (or, in a dry run, would be) collected.
#[derive(Debug, Default, Serialize)]
pub struct Collected {
    pub dry_run: bool,
    /// Archived checkpoint records removed, oldest first.
    pub checkpoints_removed: Vec<String>,
    /// The size of the event log moved to `events.jsonl.1`, when rotated.
    pub events_rotated_bytes: Option<u64>,
    /// Session records dropped from the chain (the oldest).
    pub sessions_removed: usize,
    /// Stale temp files removed, relative to the project root.
    pub temp_files_removed: Vec<String>,
    /// Records an agent's integration keeps outside the project (the OpenCode plugin's session
    /// records) that no session wrote for `records::KEPT_DAYS` days: full paths.
    pub agent_records_removed: Vec<String>,
    /// Snapshots of uncommitted work (`refs/ctxkeep/snapshots/<id>`) dropped with their
    /// checkpoints: the checkpoint ids.
    pub snapshots_removed: Vec<String>,
    /// The submodules' own snapshots that only those held, dropped with them: `PATH@COMMIT`
    /// (the submodule's path, the snapshot commit in its repository).
    pub submodule_snapshots_removed: Vec<String>,
}

impl Collected {
    pub fn is_empty(&self) -> bool {
        self.checkpoints_removed.is_empty()
            && self.events_rotated_bytes.is_none()
            && self.sessions_removed == 0
            && self.temp_files_removed.is_empty()
            && self.agent_records_removed.is_empty()
            && self.snapshots_removed.is_empty()
            && self.submodule_snapshots_removed.is_empty()
    }
}

/// How `collect` runs: a dry run reads only (no lock needed), the real one
/// needs the lock.
pub enum Mode<'a> {
    DryRun,
    Apply(&'a Lock),
}

/// Applies every retention limit of `config`.
pub fn collect(ws: &Workspace, config: &Config, mode: Mode) -> Result<Collected, Error> {
    let mut out = Collected {
        dry_run: matches!(mode, Mode::DryRun),
        ..Default::default()
    };
    let dir = ws.checkpoints_dir();
    let archive = Archive { dir: &dir };
    let now = crate::system::clock::now();
    let chain = crate::handoff::chain::read(ws)?;
    let temps = ws.stale_temp_files();
    let records = records::stale(std::time::SystemTime::now(), None, None);
    match mode {
        Mode::DryRun => {
            out.checkpoints_removed = archive.expired(config.retention, config.retention_days, now);
            out.events_rotated_bytes =
                crate::domain::events::over_limit(ws, config.events_max_bytes);
            out.sessions_removed = chain.sessions.len().saturating_sub(config.sessions_kept);
            out.temp_files_removed = temps.iter().map(|p| rel(ws, p)).collect();
            out.agent_records_removed = records.iter().map(shown).collect();
            out.snapshots_removed = snapshot_refs_without_checkpoint(ws, &out.checkpoints_removed);
            out.submodule_snapshots_removed =
                submodule_snapshots_only_in(ws, &out.snapshots_removed)
                    .into_iter()
                    .map(|(path, _, commit)| format!("{path}@{commit}"))
                    .collect();
        }
        Mode::Apply(lock) => {
            out.checkpoints_removed = archive.prune(config.retention, config.retention_days, now);
            out.events_rotated_bytes =
                crate::domain::events::rotate_if_over(ws, lock, config.events_max_bytes)?;
            out.sessions_removed =
                crate::handoff::chain::trim(ws, lock, &chain, config.sessions_kept)?;
            out.temp_files_removed = temps
                .iter()
                .filter(|p| std::fs::remove_file(p).is_ok())
                .map(|p| rel(ws, p))
                .collect();
            out.agent_records_removed = records::remove(records).iter().map(shown).collect();
            (out.snapshots_removed, out.submodule_snapshots_removed) = drop_snapshot_refs(ws);
        }
    }
    Ok(out)
}

/// How many snapshot refs a worktree keeps whatever the front matter says:
/// the refs are local data, so a committed `retention` (a teammate's) does
/// not decide when they go.
pub const SNAPSHOTS_KEPT: usize = 50;

/// This worktree's snapshot refs that may go: past the newest
/// [`SNAPSHOTS_KEPT`], and whose checkpoint is not archived (or is among `going`).
fn snapshot_refs_without_checkpoint(ws: &Workspace, going: &[String]) -> Vec<String> {
    use crate::system::git::snapshot;
    // Counted from git's files first: no `for-each-ref` while there are too few to prune.
    if snapshot::at_most(&ws.root).is_some_and(|n| n <= SNAPSHOTS_KEPT) {
        return Vec::new();
    }
    let Ok(refs) = snapshot::list(&ws.root) else {
        return Vec::new();
    };
    let archived = Archive {
        dir: &ws.checkpoints_dir(),
    }
    .ids();
    refs.into_iter()
        .skip(SNAPSHOTS_KEPT)
        .map(|(name, _)| name)
        .filter(|name| !archived.contains(name) || going.contains(name))
        .collect()
}

/// Drops this worktree's old snapshot refs whose checkpoint is no longer
/// archived, so git can collect their objects, and the submodules' own
/// snapshots only they held; returns their ids and the submodules' (`PATH@COMMIT`).
pub fn drop_snapshot_refs(ws: &Workspace) -> (Vec<String>, Vec<String>) {
    use crate::system::git::snapshot;
    let going = snapshot_refs_without_checkpoint(ws, &[]);
    // Read before the refs go: what the dropped snapshots point at in each submodule.
    let inner = submodule_snapshots_only_in(ws, &going);
    let dropped: Vec<String> = going
        .into_iter()
        .filter(|name| snapshot::drop_ref(&ws.root, name).is_ok())
        .collect();
    let inner = inner
        .into_iter()
        .filter(|(_, folder, commit)| snapshot::drop_refs_at(folder, commit).is_ok_and(|n| n > 0))
        .map(|(path, _, commit)| format!("{path}@{commit}"))
        .collect();
    (dropped, inner)
}

/// The submodule snapshots (path, folder, commit) the snapshots `going` point at and no
/// other snapshot of this worktree does. Asked only where `.gitmodules` is.
fn submodule_snapshots_only_in(
    ws: &Workspace,
    going: &[String],
) -> Vec<(String, std::path::PathBuf, String)> {
    use crate::system::git::snapshot;
    if going.is_empty() {
        return Vec::new();
    }
    let Ok(top) = snapshot::top(&ws.root) else {
        return Vec::new();
    };
    if !top.join(".gitmodules").is_file() {
        return Vec::new();
    }
    let Ok(refs) = snapshot::list(&ws.root) else {
        return Vec::new();
    };
    let held = |commit: &str| snapshot::submodule_snapshots(&ws.root, commit).unwrap_or_default();
    let (dropped, kept): (Vec<_>, Vec<_>) = refs.iter().partition(|(name, _)| going.contains(name));
    let still: Vec<String> = kept
        .iter()
        .flat_map(|(_, commit)| held(commit))
        .map(|(_, _, inner)| inner)
        .collect();
    let mut found: Vec<(String, std::path::PathBuf, String)> = dropped
        .iter()
        .flat_map(|(_, commit)| held(commit))
        .filter(|(_, _, inner)| !still.contains(inner))
        .collect();
    crate::system::sorting::sort(&mut found);
    found.dedup();
    found
}

fn rel(ws: &Workspace, p: &std::path::Path) -> String {
    p.strip_prefix(&ws.root)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

fn shown(s: &Stale) -> String {
    s.path.display().to_string()
}
