//! The session's index ([`crate::observe::index`]) on disk: `.ctxkeep/sessions/<id>.index`,
//! beside the session's record. Every hook event with a transcript catches it up with what the
//! transcript gained since the last one; an automatic checkpoint completes its reading of the
//! transcript's tail from it; after a compaction, what remains by the agent's summary is added.
//! A damaged or unreadable index is started afresh: it is a cache of the transcript.

use std::path::{Path, PathBuf};

use crate::agents::Agent;
use crate::fsutil::{self, Lock};
use crate::observe::index::SessionIndex;
use crate::workspace::Workspace;

/// An index larger than this is not read (it is bounded far below).
const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;

/// Where the index of session `id` is kept.
pub fn path(ws: &Workspace, id: &str) -> PathBuf {
    let name = crate::session::file_name(id);
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    ws.sessions_dir().join(format!("{stem}.index"))
}

/// The stored index of session `id`; None when there is none or it cannot be read.
pub fn load(ws: &Workspace, id: &str) -> Option<SessionIndex> {
    let text = fsutil::read_text(&path(ws, id), MAX_INDEX_BYTES).ok()?;
    serde_json::from_str(&text).ok()
}

fn save(ws: &Workspace, _held: &Lock, id: &str, index: &SessionIndex) -> anyhow::Result<()> {
    fsutil::ensure_dir(&ws.sessions_dir())?;
    let json = serde_json::to_string(index)?;
    // A cache the transcript rebuilds: no fsync on the path every event takes.
    fsutil::replace_cache(&path(ws, id), json.as_bytes())?;
    Ok(())
}

/// Catches the index of session `id` up with the transcript at `transcript` and returns it;
/// None when the transcript cannot be read (the caller reads it the old way).
pub fn catch_up(ws: &Workspace, id: &str, transcript: &Path, agent: Agent) -> Option<SessionIndex> {
    let lock = ws.lock_only().ok()?;
    catch_up_locked(ws, &lock, id, transcript, agent)
}

fn catch_up_locked(
    ws: &Workspace,
    lock: &Lock,
    id: &str,
    transcript: &Path,
    agent: Agent,
) -> Option<SessionIndex> {
    // Kept as the session's record keeps the transcript's path: redacted.
    let shown = crate::redact::redact(&transcript.display().to_string()).into_owned();
    let mut index = load(ws, id).unwrap_or_default();
    if index.transcript != shown {
        // Another transcript for the session (or the first): read it from its start.
        index.transcript = shown;
        index.offset = 0;
    } else if index.offset > 0
        && crate::observe::index::mark_at(transcript, index.offset) != index.mark
    {
        // Rewritten rather than appended to: what was read of it no longer holds.
        index = SessionIndex {
            transcript: index.transcript,
            root: index.root,
            from_summary: index.from_summary,
            ..SessionIndex::default()
        };
    }
    if index.root.is_none() {
        // Paths are shown relative to the repository around the project, as a checkpoint
        // written from the transcript shows them; found once, not on every event.
        let root = crate::git::toplevel(&ws.root).unwrap_or_else(|_| ws.root.clone());
        index.root = Some(root.display().to_string());
    }
    let root = index.root.clone().map(PathBuf::from);
    let before = index.clone();
    let (seen, reads, end) = crate::agents::read_since(
        transcript,
        Some(agent),
        root.as_deref(),
        index.offset,
        crate::clock::now(),
    )
    .ok()?;
    index.add(&seen, &reads);
    if end != index.offset {
        index.offset = end;
        index.mark = crate::observe::index::mark_at(transcript, end);
    }
    if index != before {
        save(ws, lock, id, &index).ok()?;
    }
    Some(index)
}

/// After a compaction: what remains by the agent's summary (`summary`'s pending tasks,
/// current work and next step), added once the index has read everything before it, so no
/// older statement replaces the summary's next step.
pub fn note_summary(
    ws: &Workspace,
    id: &str,
    transcript: Option<&Path>,
    agent: Agent,
    summary: &str,
) -> anyhow::Result<()> {
    let Some(remains) = crate::summary::remains::of(summary, &crate::clock::now_rfc3339()) else {
        return Ok(());
    };
    let lock = ws.lock_only()?;
    let mut index = transcript
        .and_then(|t| catch_up_locked(ws, &lock, id, t, agent))
        .or_else(|| load(ws, id))
        .unwrap_or_default();
    if let Some(next) = remains.next_step.as_deref().or(remains.pending.as_deref()) {
        index.next_step = Some(crate::observe::text::cut(
            next,
            crate::observe::text::MAX_NEXT_STEP_CHARS,
        ));
        index.next_step_from_plan = false;
    }
    index.from_summary = Some(remains);
    save(ws, &lock, id, &index)
}
