//! Opening a link of the chain: a session that takes the work over from a checkpoint (planned,
//! then recorded under the lock, called stuck when handoffs make no progress), and a restore,
//! the same session given the prompt again with a new nonce.

use serde_json::json;

use crate::domain::checkpoint::Checkpoint;
use crate::domain::config::Config;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::{self, Lock};

use super::acknowledgement::new_nonce;
use super::{read, trim, Line, Link, RestoreRecord, SessionRecord, MAX_AGENT_BYTES, STUCK_AFTER};

/// Checks an agent name given with `--agent`.
pub fn validate_agent(name: &str) -> Result<String, Error> {
    let name = name.trim();
    if name.is_empty() {
        return Err(Error::Usage("--agent: the agent name is empty".into()));
    }
    if name.len() > MAX_AGENT_BYTES || name.chars().any(char::is_control) {
        return Err(Error::Usage(format!(
            "--agent: give a name of at most {MAX_AGENT_BYTES} bytes without control characters"
        )));
    }
    Ok(name.to_string())
}

/// Works out the next session record without writing it: its number, the
/// handoff, the nonce and whether the chain is stuck. With
/// `max_handoffs_without_progress` set and exceeded, appends a `stuck` event
/// and refuses (exit 1). The caller holds the lock until `record_session`.
pub fn plan_session(
    ws: &Workspace,
    lock: &Lock,
    checkpoint: &Checkpoint,
    agent: Option<&str>,
    source: &str,
    config: &Config,
) -> anyhow::Result<SessionRecord> {
    plan_link(
        ws,
        lock,
        checkpoint,
        &Opening::handoff(agent, source),
        config,
    )
}

/// Who opens a link, and whether it is a handoff.
#[derive(Debug, Clone, Default)]
pub struct Opening<'a> {
    pub agent: Option<&'a str>,
    pub source: &'a str,
    /// The agent's own session id (hooks).
    pub agent_session: Option<&'a str>,
    /// False when an agent session that is already running gets its first
    /// prompt (after a compaction or a resume): it counts no handoff and so
    /// raises no stuck warning by itself.
    pub handoff: bool,
}

impl<'a> Opening<'a> {
    pub fn handoff(agent: Option<&'a str>, source: &'a str) -> Opening<'a> {
        Opening {
            agent,
            source,
            agent_session: None,
            handoff: true,
        }
    }
}

/// [`plan_session`] for any opening.
pub fn plan_link(
    ws: &Workspace,
    lock: &Lock,
    checkpoint: &Checkpoint,
    opening: &Opening,
    config: &Config,
) -> anyhow::Result<SessionRecord> {
    let agent = opening.agent;
    let source = opening.source;
    let chain = read(ws)?;
    let prev = chain.last().map(|s| &s.record);
    let head = crate::system::git::head(&ws.root).ok().flatten();
    let next_action = checkpoint.next_action.trim().to_string();
    let progress = progress_mark(checkpoint);
    let handoffs_without_progress = match prev {
        Some(p) if !opening.handoff => p.handoffs_without_progress,
        Some(p) if p.next_action == next_action && p.head == head && p.progress == progress => {
            p.handoffs_without_progress.saturating_add(1)
        }
        _ => 1,
    };
    let number = chain
        .sessions
        .iter()
        .map(|s| s.record.number)
        .max()
        .unwrap_or(0)
        + 1;
    if let Some(max) = config.max_handoffs_without_progress {
        if handoffs_without_progress > max {
            let _ = log_stuck(
                ws,
                lock,
                number,
                &checkpoint.id,
                &next_action,
                handoffs_without_progress,
                true,
            );
            return Err(Error::Refused(format!(
                "refusing to resume: this would be handoff {handoffs_without_progress} in a row to resume {}'s next action {:?} with no new commit, more than max_handoffs_without_progress ({max}) in {}; a person should look at why it keeps failing (a new commit or a new next action starts the count again)",
                checkpoint.id,
                crate::system::output::clip(&next_action, 80),
                ws.display_state()
            ))
            .into());
        }
    }
    // The previous controller: the last session's agent when it resumed
    // this same checkpoint, else the agent that wrote the checkpoint.
    let controlling = match prev {
        Some(p) if p.checkpoint == checkpoint.id && p.agent.is_some() => p.agent.clone(),
        _ => Some(checkpoint.controlling_agent.trim().to_string()).filter(|a| !a.is_empty()),
    };
    let (agent, from_agent) = match agent {
        Some(a) => {
            let a = validate_agent(a)?;
            let from = controlling.filter(|c| *c != a);
            (Some(a), from)
        }
        None => (controlling, None),
    };
    Ok(SessionRecord {
        number,
        started_at: crate::system::clock::now_rfc3339(),
        checkpoint: checkpoint.id.clone(),
        next_action,
        head,
        agent,
        from_agent,
        source: source.to_string(),
        nonce: new_nonce(number, &checkpoint.digest),
        handoffs_without_progress,
        stuck: opening.handoff && handoffs_without_progress >= STUCK_AFTER,
        agent_session: opening.agent_session.map(str::to_string),
        restores: 0,
        progress,
    })
}

/// The prompt given again to `link`'s agent session (after a compaction or
/// a clear), with a new nonce; recorded on the link, not as a handoff.
pub fn plan_restore(link: &Link, checkpoint: &Checkpoint, source: &str) -> RestoreRecord {
    RestoreRecord {
        number: link.record.number,
        at: crate::system::clock::now_rfc3339(),
        source: source.to_string(),
        checkpoint: checkpoint.id.clone(),
        next_action: checkpoint.next_action.trim().to_string(),
        nonce: new_nonce(link.record.number, &checkpoint.digest),
    }
}

/// Appends a planned restore (the caller holds the lock).
pub fn record_restore(ws: &Workspace, _held: &Lock, restore: &RestoreRecord) -> Result<(), Error> {
    fsutil::ensure_dir(&ws.data_dir)?;
    let line = serde_json::to_string(&Line::Restore(restore.clone())).expect("restore serializes");
    fsutil::append_line(&ws.chain_path(), &crate::system::redact::redact(&line))
}

/// The link as it reads once `restore` is applied (what the prompt shows).
/// A restore (after a compaction, or `/clear`) is the same session going on,
/// not a handoff: the stuck warning was given when the session opened and is
/// not repeated.
pub fn restored(link: &Link, restore: &RestoreRecord) -> SessionRecord {
    let mut record = link.record.clone();
    record.stuck = false;
    record.checkpoint = restore.checkpoint.clone();
    record.next_action = restore.next_action.clone();
    record.nonce = restore.nonce.clone();
    record.restores = record.restores.saturating_add(1);
    record
}

/// A short mark of the work the checkpoint observed (plan items completed,
/// files changed): two handoffs with the same next action and HEAD but a
/// different mark made progress.
fn progress_mark(checkpoint: &Checkpoint) -> Option<String> {
    let observed = checkpoint.observed.as_ref()?;
    let done: Vec<&str> = observed
        .plan
        .iter()
        .filter(|p| p.status == crate::transcripts::activity::PlanStatus::Completed)
        .map(|p| p.text.as_str())
        .collect();
    if done.is_empty() && observed.files.is_empty() {
        return None;
    }
    let text = format!("{}\n{}", done.join("\n"), observed.files.join("\n"));
    let digest = crate::domain::checkpoint::digest_of(&serde_json::Value::String(text));
    Some(digest.chars().rev().take(12).collect())
}

/// Appends a planned record (the caller holds the lock), logs a `stuck`
/// event when it is stuck, and keeps the chain and the event log within
/// the retention.
pub fn record_session(
    ws: &Workspace,
    lock: &Lock,
    record: &SessionRecord,
    config: &Config,
) -> Result<(), Error> {
    fsutil::ensure_dir(&ws.data_dir)?;
    let line = serde_json::to_string(&Line::Session(record.clone())).expect("record serializes");
    fsutil::append_line(&ws.chain_path(), &crate::system::redact::redact(&line))?;
    if record.stuck {
        log_stuck(
            ws,
            lock,
            record.number,
            &record.checkpoint,
            &record.next_action,
            record.handoffs_without_progress,
            false,
        )?;
    }
    // Trim with some slack so that not every append rewrites the file.
    let chain = read(ws)?;
    if chain.sessions.len() > config.sessions_kept + config.sessions_kept / 10 + 1 {
        trim(ws, lock, &chain, config.sessions_kept)?;
    }
    crate::domain::events::rotate_if_over(ws, lock, config.events_max_bytes)?;
    Ok(())
}

/// Appends a `stuck` event: `refused` when `plan_session` turned the
/// handoff down, else the session was recorded stuck.
pub(super) fn log_stuck(
    ws: &Workspace,
    lock: &Lock,
    session: u64,
    checkpoint: &str,
    next_action: &str,
    handoffs_without_progress: u32,
    refused: bool,
) -> Result<(), Error> {
    crate::domain::events::append(
        ws,
        lock,
        "stuck",
        json!({
            "session": session,
            "checkpoint": checkpoint,
            "next_action": next_action,
            "handoffs_without_progress": handoffs_without_progress,
            "refused": refused,
        }),
    )
}

/// Opens a new session from `checkpoint`: `plan_session` then
/// `record_session`. For callers that render the prompt afterwards (the
/// SessionStart hook); `resume` plans, renders, then records.
pub fn open_session(
    ws: &Workspace,
    lock: &Lock,
    checkpoint: &Checkpoint,
    agent: Option<&str>,
    source: &str,
    config: &Config,
) -> anyhow::Result<SessionRecord> {
    let record = plan_session(ws, lock, checkpoint, agent, source, config)?;
    record_session(ws, lock, &record, config)?;
    Ok(record)
}
