//! Gutter detection (the lifecycle rules): a session that fails the same
//! shell command again and again, or rewrites the same file over and over,
//! is told once per pattern to stop and try another way.

use serde_json::json;

use crate::observe::{GutterHit, GutterLimits, Observed};
use crate::session::{self, Session};
use crate::workspace::Workspace;

/// How much of the transcript's end the per-turn check reads.
pub const WINDOW: u64 = 1024 * 1024;

/// The patterns in `observed` that this session has not been told about
/// yet: each is recorded on the session (so it fires once), logged as a
/// `gutter` event, and returned with the instruction for the agent.
pub fn check(
    ws: &Workspace,
    session_id: &str,
    window: u64,
    observed: &Observed,
    limits: &GutterLimits,
) -> anyhow::Result<Vec<(GutterHit, String)>> {
    let hits = crate::observe::gutter(observed, limits);
    if hits.is_empty() {
        return Ok(Vec::new());
    }
    // The lock only when there is something to record (the usual turn has not).
    let lock = &ws.lock()?;
    let mut s = session::load(ws, session_id)?.unwrap_or_else(|| Session::new(session_id, window));
    let fresh: Vec<GutterHit> = hits
        .into_iter()
        .filter(|h| !s.gutter.iter().any(|seen| same_pattern(seen, h)))
        .collect();
    if fresh.is_empty() {
        return Ok(Vec::new());
    }
    s.gutter.extend(fresh.iter().cloned());
    s.updated_at = crate::clock::now_rfc3339();
    session::save(ws, lock, &s)?;
    let mut out = Vec::new();
    for hit in fresh {
        let mut event = serde_json::to_value(&hit)?;
        if let Some(e) = event.as_object_mut() {
            e.insert("session".into(), json!(session_id));
        }
        crate::events::append(ws, lock, "gutter", event)?;
        let text = instruction(&hit);
        out.push((hit, text));
    }
    Ok(out)
}

/// One pattern fires once per session, whatever its count grows to.
fn same_pattern(a: &GutterHit, b: &GutterHit) -> bool {
    match (a, b) {
        (GutterHit::SameFailure { command: x, .. }, GutterHit::SameFailure { command: y, .. }) => {
            x == y
        }
        (GutterHit::SameFile { path: x, .. }, GutterHit::SameFile { path: y, .. }) => x == y,
        _ => false,
    }
}

/// What the agent is told.
pub fn instruction(hit: &GutterHit) -> String {
    let what = match hit {
        GutterHit::SameFailure { command, count } => {
            format!("`{command}` has failed {count} times in a row")
        }
        GutterHit::SameFile { path, count } => {
            format!("{path} has been changed {count} times in this session")
        }
    };
    format!(
        "ctxkeep: you look stuck in a loop: {what}. Stop repeating it. Record what failed and why \
         with `ctxkeep checkpoint --note \"...\"` (or `--question \"...\"` if you need help), \
         then try a different approach."
    )
}
