//! Records an integration keeps outside any project (the OpenCode plugin's session records, in
//! the user's state folder): nothing else deletes them, so the session start of that agent and
//! `gc` remove the ones no session has written for [`KEPT_DAYS`].

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::Agent;

/// How long a record is kept after its last write. A session resumed after that starts a new
/// record; its work is in the checkpoints, not here.
pub const KEPT_DAYS: u64 = 30;

/// One record past [`KEPT_DAYS`].
#[derive(Debug, Clone, PartialEq)]
pub struct Stale {
    pub agent: Agent,
    pub path: PathBuf,
}

/// The records of every agent (or only `only`'s) last written more than [`KEPT_DAYS`] before
/// `now`: `*.jsonl` regular files directly in the agent's records folder, never a folder, a
/// symlink or `keep`. A folder that cannot be read, or is a symlink, gives none.
pub fn stale(now: SystemTime, only: Option<Agent>, keep: Option<&Path>) -> Vec<Stale> {
    let max_age = Duration::from_secs(KEPT_DAYS * 24 * 60 * 60);
    let mut out = Vec::new();
    for agent in Agent::ALL
        .into_iter()
        .filter(|a| only.is_none_or(|o| o == *a))
    {
        let Some(dir) = agent.spec().records_dir.and_then(|dir| dir()) else {
            continue;
        };
        // A symlink in the folder's place leads somewhere ctxkeep did not make: the files
        // there are not its records, however they are named.
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .filter(|p| Some(p.as_path()) != keep)
            .filter(|p| {
                std::fs::symlink_metadata(p)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age > max_age)
            })
            .collect();
        crate::system::sorting::sort(&mut found);
        out.extend(found.into_iter().map(|path| Stale { agent, path }));
    }
    out
}

/// Removes `stale` records; returns those removed (one another process removed first is not).
pub fn remove(stale: Vec<Stale>) -> Vec<Stale> {
    stale
        .into_iter()
        .filter(|s| std::fs::remove_file(&s.path).is_ok())
        .collect()
}
