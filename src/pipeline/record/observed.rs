//! What a checkpoint records as the session's work: read from its transcript, with paths
//! relative to the repository, and settled against the checkpoint before it.

use std::path::Path;

use crate::domain::checkpoint::Checkpoint;
use crate::domain::workspace::Workspace;
use crate::transcripts::activity::Observed;

/// What the transcript at `path` says the session did (the format
/// detected unless `agent` says), paths relative to the repository around
/// the project.
pub fn observe_transcript(
    ws: &Workspace,
    path: &Path,
    agent: Option<crate::agents::Agent>,
) -> anyhow::Result<Observed> {
    observe_in_repository(ws, |root| {
        crate::agents::observe(path, agent, Some(root), crate::system::clock::now())
    })
}

/// Runs a transcript reader with paths relative to the repository around the
/// project, then adds the project's tracker issues.
fn observe_in_repository(
    ws: &Workspace,
    read: impl FnOnce(&Path) -> anyhow::Result<Observed>,
) -> anyhow::Result<Observed> {
    let root = crate::system::git::toplevel(&ws.root).ok();
    let root = root.as_deref().unwrap_or(&ws.root);
    let mut seen = read(root)?;
    seen.tracker = crate::transcripts::activity::beads::issues(root);
    Ok(seen)
}

/// What an automatic checkpoint records as the session's work, from what
/// the transcript shows (`seen`) and the checkpoint before it (`prev`):
/// - a session that did no work (no plan, file or command; "status?", a
///   `/clear`), or whose transcript could not be read, keeps the previous
///   block, marked `carried_from` that checkpoint when the block is another
///   session's: an idle session never wipes the work from the resume prompt;
/// - a later reading of the same agent session keeps what its window no
///   longer shows: the request, plan and commands when it has none, and the
///   files changed earlier after its own (past [`MAX_FILES`], counted).
///
/// [`MAX_FILES`]: crate::transcripts::activity::MAX_FILES
pub(super) fn settle_observed(
    prev: Option<&Checkpoint>,
    seen: Option<Observed>,
) -> Option<Observed> {
    let Some((prev_id, before)) = prev.and_then(|p| Some((&p.id, p.observed.as_ref()?))) else {
        return seen;
    };
    let same_session = |o: &Observed| {
        o.agent == before.agent && o.session.is_some() && o.session == before.session
    };
    let mut now = match seen {
        Some(o) if o.did_work() => o,
        idle => {
            let mut kept = before.clone();
            let own = idle.as_ref().is_some_and(same_session);
            if !own && kept.carried_from.is_none() {
                kept.carried_from = Some(prev_id.clone());
            }
            return Some(kept);
        }
    };
    if !same_session(&now) {
        return Some(now);
    }
    // What is kept from before keeps when it was said.
    if now.request.is_none() {
        now.request = before.request.clone();
        now.request_at = before.request_at.clone();
    }
    if now.plan.is_empty() {
        now.plan = before.plan.clone();
        now.plan_at = before.plan_at.clone();
    }
    if now.commands.is_empty() {
        now.commands = before.commands.clone();
    }
    let earlier: Vec<String> = before
        .files
        .iter()
        .filter(|f| !now.files.contains(f))
        .cloned()
        .collect();
    now.files.extend(earlier);
    now.more_files += before.more_files;
    let max = crate::transcripts::activity::MAX_FILES;
    if now.files.len() > max {
        now.more_files += (now.files.len() - max) as u64;
        now.files.truncate(max);
    }
    Some(now)
}
