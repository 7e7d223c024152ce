//! Lines of work: the checkpoints of one agent session, in a project where several sessions
//! work at once. The state file holds the project's newest checkpoint, whichever session wrote
//! it; the archive (`.ctxkeep/checkpoints/`) holds every line's, each marked with its session
//! (`Checkpoint::line`). What a session is given back comes from its own line.
//!
//! A line is **live** when its newest checkpoint is not its session's end (`session-end`) and
//! its session was active within [`LIVE_WITHIN_SECS`]: its record in `.ctxkeep/sessions/` was
//! written then, or, without a record, the checkpoint was.

use std::time::SystemTime;

use crate::domain::checkpoint::{Archive, Checkpoint};
use crate::domain::workspace::Workspace;

/// A session active this recently is live (the same span `status` uses for sessions).
pub const LIVE_WITHIN_SECS: i64 = 2 * 3600;

/// How long a line's brief task is, in characters.
const TASK_CHARS: usize = 80;

/// The newest checkpoint of `session`'s line: `current` (the state file's) when it is that
/// line's, else the newest archived record of it. None when the line has no checkpoint.
pub fn own(ws: &Workspace, current: Option<&Checkpoint>, session: &str) -> Option<Checkpoint> {
    if let Some(c) = current.filter(|c| c.session() == Some(session)) {
        return Some(c.clone());
    }
    let dir = ws.checkpoints_dir();
    let archive = Archive { dir: &dir };
    archive
        .ids()
        .into_iter()
        .rev()
        .filter_map(|id| archive.load(&id).ok())
        .find(|c| c.session() == Some(session))
}

/// The checkpoint `id`: `current` when it is that one, else the archived record.
pub fn by_id(ws: &Workspace, current: Option<&Checkpoint>, id: &str) -> Option<Checkpoint> {
    if let Some(c) = current.filter(|c| c.id == id) {
        return Some(c.clone());
    }
    let dir = ws.checkpoints_dir();
    Archive { dir: &dir }.load(id).ok()
}

/// Another live line of work, in brief.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OtherLine {
    pub session: String,
    /// The session id's first 8 characters.
    pub short: String,
    pub agent: String,
    /// What it works on: its task, else its request, on one line.
    pub task: String,
    /// Its newest checkpoint and when it was written.
    pub checkpoint: String,
    pub created_at: String,
}

/// The live lines of work other than `except`'s (see the module), newest first, one per
/// session.
pub fn others_live(ws: &Workspace, except: Option<&str>) -> Vec<OtherLine> {
    let dir = ws.checkpoints_dir();
    let archive = Archive { dir: &dir };
    let now = crate::system::clock::now();
    let mut seen: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    for id in archive.ids().into_iter().rev() {
        // Only what a line's entry needs: the archive holds up to a hundred whole records, and
        // a hand checkpoint looks at them all (parsing them whole was a third of its time).
        let Ok(c) = archive.load_as::<LineHead>(&id) else {
            continue;
        };
        let Some(line) = c.line.clone() else { continue };
        if seen.contains(&line.session) {
            continue;
        }
        seen.push(line.session.clone());
        if Some(line.session.as_str()) == except || c.trigger == "session-end" {
            continue;
        }
        let active = session_written(ws, &line.session)
            .map(chrono::DateTime::<chrono::Utc>::from)
            .or_else(|| {
                chrono::DateTime::parse_from_rfc3339(&c.created_at)
                    .ok()
                    .map(|t| t.with_timezone(&chrono::Utc))
            });
        if active.is_none_or(|t| (now - t).num_seconds() > LIVE_WITHIN_SECS) {
            continue;
        }
        lines.push(OtherLine {
            short: line.short(),
            session: line.session,
            agent: line.agent,
            task: brief(
                &c.active_task,
                c.observed.as_ref().and_then(|o| o.request.as_deref()),
            ),
            checkpoint: c.id.clone(),
            created_at: c.created_at.clone(),
        });
    }
    lines
}

/// When the session's record was last written.
fn session_written(ws: &Workspace, session: &str) -> Option<SystemTime> {
    std::fs::metadata(crate::domain::session::path(ws, session))
        .and_then(|m| m.modified())
        .ok()
}

/// A line's task on one short line: its active task, else the request its session read.
pub fn brief_task(c: &Checkpoint) -> String {
    brief(
        &c.active_task,
        c.observed.as_ref().and_then(|o| o.request.as_deref()),
    )
}

fn brief(active_task: &str, request: Option<&str>) -> String {
    let task = Some(active_task)
        .filter(|t| !t.trim().is_empty())
        .or(request)
        .unwrap_or("(no task recorded)");
    crate::system::recorded::one_line(task, TASK_CHARS)
}

/// The part of an archived checkpoint [`others_live`] reads, under the record's own keys.
#[derive(serde::Deserialize)]
struct LineHead {
    id: String,
    created_at: String,
    trigger: String,
    #[serde(default)]
    active_task: String,
    #[serde(default)]
    line: Option<crate::domain::checkpoint::Line>,
    #[serde(default)]
    observed: Option<RequestOnly>,
}

/// `observed.request` alone.
#[derive(serde::Deserialize)]
struct RequestOnly {
    #[serde(default)]
    request: Option<String>,
}
