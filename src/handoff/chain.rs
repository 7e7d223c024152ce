//! The session chain, `.ctxkeep/chain.jsonl`: one numbered record per
//! session opened from a checkpoint (by `resume` or a SessionStart hook), and
//! the acknowledgements of their restore nonces. Appended under the lock,
//! read without it (a torn last line is skipped).
//!
//! Not to be confused with `.ctxkeep/sessions/<id>.json`: those are the live
//! token budgets `track` keeps per agent session id. A chain record is a
//! handoff: who took the work over, from which checkpoint, and whether the
//! new session confirmed that it read the restored state.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::domain::checkpoint::Checkpoint;
use crate::domain::config::Config;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::{self, Lock};

/// Handoffs in a row that resume the same next action with no new commit
/// before the chain is called stuck.
pub const STUCK_AFTER: u32 = 3;
/// The chain is trimmed by `gc` and on append; anything bigger is not ours.
const MAX_CHAIN_BYTES: u64 = 16 * 1024 * 1024;
/// How far back from its end a transcript is searched for the nonce.
const TRANSCRIPT_SCAN_BYTES: u64 = 8 * 1024 * 1024;
/// Agent names longer than this are refused.
const MAX_AGENT_BYTES: usize = 128;
/// Nonces are 8 decimal digits: easy to echo, and tokenized the same way
/// whatever they are (digits go in groups of three), so `verify` counts
/// exactly the prompt size `resume` prints.
const NONCE_LEN: usize = 8;

/// One session opened from a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// 1, 2, 3, ... in the order sessions were opened.
    pub number: u64,
    pub started_at: String,
    /// The checkpoint the session resumed from.
    pub checkpoint: String,
    /// That checkpoint's next action (what stuck detection compares).
    pub next_action: String,
    /// HEAD when the session started; None without git or before the first commit.
    pub head: Option<String>,
    /// The controlling agent of this session.
    pub agent: Option<String>,
    /// The agent it took over from, when `--agent` named another one.
    pub from_agent: Option<String>,
    /// `resume`, or what a hook says (e.g. `hook:startup`).
    pub source: String,
    /// What the new session echoes (its reply's marker line, or `ctxkeep ack NONCE`) to prove it read the prompt.
    pub nonce: String,
    /// Sessions in a row, this one included, that resumed the same next
    /// action with no new commit (1 when there was progress).
    pub handoffs_without_progress: u32,
    /// `handoffs_without_progress` reached `STUCK_AFTER`.
    pub stuck: bool,
    /// The agent's own session id, when a hook opened the link: its later
    /// compactions and resumes are recorded on this link, not as handoffs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<String>,
    /// Times the prompt was given again to the same agent session (after a
    /// compaction or a clear).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restores: u32,
    /// What the checkpoint's `observed` says was done (plan items completed,
    /// files changed), so that a handoff after real work is not "stuck".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl SessionRecord {
    /// `session-0004`, as `log` shows it.
    pub fn id(&self) -> String {
        format!("session-{:04}", self.number)
    }

    /// A stand-in with a nonce of the real length and no handoff, so that
    /// `verify` counts the prompt `resume` prints.
    pub fn placeholder(checkpoint: &Checkpoint) -> SessionRecord {
        SessionRecord {
            number: 1,
            started_at: checkpoint.created_at.clone(),
            checkpoint: checkpoint.id.clone(),
            next_action: checkpoint.next_action.clone(),
            head: None,
            agent: None,
            from_agent: None,
            source: "resume".into(),
            nonce: "0".repeat(NONCE_LEN),
            handoffs_without_progress: 1,
            stuck: false,
            agent_session: None,
            restores: 0,
            progress: None,
        }
    }

    /// The line put at the top of the resume prompt when the chain is stuck.
    pub fn stuck_message(&self) -> Option<String> {
        self.stuck.then(|| {
            format!(
                "this is handoff {} in a row to resume the same next action with no new commit, so the work looks stuck. Do not repeat what failed: find out why it keeps failing and try another approach, or record the blocker with `ctxkeep checkpoint --question ...` and stop for help.",
                self.handoffs_without_progress
            )
        })
    }
}

/// The acknowledgement of a session's nonce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AckRecord {
    pub number: u64,
    pub at: String,
    /// `command` (`ctxkeep ack`), `mcp`, `reply` (a hook's last reply) or `transcript` (found echoed by a hook).
    pub via: String,
}

/// The prompt given again to the agent session of link `number` (after a
/// compaction or a clear): a new nonce to acknowledge, maybe a newer
/// checkpoint, and no handoff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestoreRecord {
    pub number: u64,
    pub at: String,
    /// What the hook says (e.g. `claude-code:compact`).
    pub source: String,
    pub checkpoint: String,
    pub next_action: String,
    pub nonce: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Line {
    Session(SessionRecord),
    Ack(AckRecord),
    Restore(RestoreRecord),
}

/// A link of the chain: a session opened from a checkpoint and, once
/// given, its acknowledgement. (Not `session::Session`, a tracked budget.)
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub record: SessionRecord,
    pub ack: Option<AckRecord>,
}

/// The chain as read: sessions oldest first.
#[derive(Debug, Default)]
pub struct Chain {
    pub sessions: Vec<Link>,
    /// Torn or foreign lines skipped.
    pub skipped: usize,
    /// The link given a prompt last (opened, or restored after a compaction).
    latest: Option<usize>,
}

impl Chain {
    /// The link whose nonce is the latest one given.
    pub fn last(&self) -> Option<&Link> {
        self.latest
            .and_then(|i| self.sessions.get(i))
            .or(self.sessions.last())
    }

    /// The link an agent's own session opened, if any.
    pub fn link_of(&self, agent_session: &str) -> Option<&Link> {
        self.sessions
            .iter()
            .rev()
            .find(|l| l.record.agent_session.as_deref() == Some(agent_session))
    }
}

/// Reads the chain; a missing file is an empty chain. Takes no lock and
/// creates nothing, so `status` and `verify` can use it anywhere.
pub fn read(ws: &Workspace) -> Result<Chain, Error> {
    let path = ws.chain_path();
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Chain::default()),
        Err(e) => return Err(Error::io(&path, "cannot read", e)),
    };
    if !meta.is_file() {
        return Err(Error::data(&path, "not a regular file; delete it"));
    }
    if meta.len() > MAX_CHAIN_BYTES {
        return Err(Error::TooLarge {
            path,
            what: "",
            size: Some(meta.len()),
            limit: MAX_CHAIN_BYTES,
            hint: "; run `ctxkeep gc`".into(),
        });
    }
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, "cannot read", e))?;
    Ok(parse(&bytes))
}

fn parse(bytes: &[u8]) -> Chain {
    let mut chain = Chain::default();
    for line in fsutil::complete_lines(bytes) {
        match serde_json::from_slice::<Line>(line) {
            Ok(Line::Session(record)) => {
                chain.sessions.push(Link { record, ack: None });
                chain.latest = Some(chain.sessions.len() - 1);
            }
            Ok(Line::Restore(r)) => match chain
                .sessions
                .iter()
                .rposition(|s| s.record.number == r.number)
            {
                Some(i) => {
                    let link = &mut chain.sessions[i];
                    link.record.checkpoint = r.checkpoint;
                    link.record.next_action = r.next_action;
                    link.record.nonce = r.nonce;
                    link.record.restores = link.record.restores.saturating_add(1);
                    link.ack = None;
                    chain.latest = Some(i);
                }
                None => chain.skipped += 1,
            },
            Ok(Line::Ack(ack)) => match chain
                .sessions
                .iter_mut()
                .rev()
                .find(|s| s.record.number == ack.number)
            {
                Some(s) if s.ack.is_none() => s.ack = Some(ack),
                Some(_) => {}
                None => chain.skipped += 1,
            },
            Err(_) => chain.skipped += 1,
        }
    }
    chain
}

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
fn log_stuck(
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

/// Keeps the newest `keep` sessions and their acknowledgements. Returns how
/// many sessions were removed.
pub fn trim(ws: &Workspace, _held: &Lock, chain: &Chain, keep: usize) -> Result<usize, Error> {
    let excess = chain.sessions.len().saturating_sub(keep);
    if excess == 0 {
        return Ok(0);
    }
    let mut text = String::new();
    for s in &chain.sessions[excess..] {
        text.push_str(
            &serde_json::to_string(&Line::Session(s.record.clone())).expect("serializes"),
        );
        text.push('\n');
        if let Some(a) = &s.ack {
            text.push_str(&serde_json::to_string(&Line::Ack(a.clone())).expect("serializes"));
            text.push('\n');
        }
    }
    fsutil::atomic_write(&ws.chain_path(), text.as_bytes(), None)?;
    Ok(excess)
}

/// What `ack` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Acked {
    /// The acknowledgement was recorded now.
    Recorded(Link),
    /// The session was acknowledged before; nothing written.
    Already(Link),
}

/// Records that the latest session's agent read its prompt, given the nonce
/// it printed. A nonce of an older session, or none at all, says no (exit 1).
pub fn acknowledge(ws: &Workspace, lock: &Lock, nonce: &str, via: &str) -> Result<Acked, Error> {
    let chain = read(ws)?;
    let Some(last) = chain.last() else {
        return Err(Error::no_input(
            ws.chain_path(),
            "no resume to acknowledge yet; run `ctxkeep resume` first",
        ));
    };
    let given = nonce.trim().to_ascii_lowercase();
    if given == last.record.nonce {
        if last.ack.is_some() {
            return Ok(Acked::Already(last.clone()));
        }
        return Ok(Acked::Recorded(append_ack(ws, lock, last, via)?));
    }
    let shown = crate::system::output::clip(nonce.trim(), 40);
    if let Some(old) = chain.sessions.iter().find(|s| s.record.nonce == given) {
        return Err(Error::Refused(format!(
            "nonce {shown:?} belongs to {}, which {} has replaced; acknowledge the nonce of the latest resume",
            old.record.id(),
            last.record.id()
        )));
    }
    Err(Error::Refused(format!(
        "wrong nonce {shown:?}: it is not the one {} printed; run `ctxkeep resume` and acknowledge the nonce it prints",
        last.record.id()
    )))
}

/// Records the acknowledgement of `session` (the caller holds the lock) and
/// returns the session with it.
fn append_ack(ws: &Workspace, held: &Lock, session: &Link, via: &str) -> Result<Link, Error> {
    let ack = AckRecord {
        number: session.record.number,
        at: crate::system::clock::now_rfc3339(),
        via: via.to_string(),
    };
    let line = serde_json::to_string(&Line::Ack(ack.clone())).expect("ack serializes");
    fsutil::append_line(&ws.chain_path(), &line)?;
    crate::domain::events::append(
        ws,
        held,
        "ack",
        json!({ "session": ack.number, "via": ack.via }),
    )?;
    Ok(Link {
        record: session.record.clone(),
        ack: Some(ack),
    })
}

/// For the Claude Code hooks (UserPromptSubmit, PostToolUse): when the
/// latest session is not acknowledged yet and the agent has echoed its nonce
/// in the transcript, records the acknowledgement (`via: transcript`) and
/// returns the session. Reads only the transcript's last 8 MiB, and only
/// what the agent wrote (assistant text and tool calls), never the prompt
/// injected into it or tool output, which carry the nonce themselves.
pub fn ack_from_transcript(
    ws: &Workspace,
    lock: &Lock,
    transcript: &Path,
) -> Result<Option<Link>, Error> {
    // A transcript that is not there is a misconfigured hook: say so even
    // when there is nothing to acknowledge.
    if let Err(e) = std::fs::metadata(transcript) {
        return Err(match e.kind() {
            std::io::ErrorKind::NotFound => Error::no_input(transcript, "no such transcript"),
            _ => crate::system::fsutil::input_error(transcript, e),
        });
    }
    ack_if_echoed(ws, lock, &|nonce| {
        crate::transcripts::usage::echo::echoes(
            transcript,
            nonce,
            TRANSCRIPT_SCAN_BYTES,
            &crate::agents::authored_text,
        )
    })
}

/// [`ack_from_transcript`] with the look into the transcript handed in: `echoed(nonce)` says
/// whether the agent wrote the latest session's nonce in the transcript's last
/// [`ECHO_SCAN_BYTES`] (an event that has the transcript open already looks there).
pub fn ack_if_echoed(
    ws: &Workspace,
    lock: &Lock,
    echoed: &dyn Fn(&str) -> Result<bool, Error>,
) -> Result<Option<Link>, Error> {
    let chain = read(ws)?;
    let Some(last) = chain.last() else {
        return Ok(None);
    };
    if last.ack.is_some() {
        return Ok(None);
    }
    if !echoed(&last.record.nonce)? {
        return Ok(None);
    }
    append_ack(ws, lock, last, "transcript").map(Some)
}

/// How far back from a transcript's end a restore's nonce is looked for.
pub const ECHO_SCAN_BYTES: u64 = TRANSCRIPT_SCAN_BYTES;

/// A short nonce, unpredictable enough that only a session that read the
/// prompt can give it. Not a secret: the clock, the process and the record
/// are hashed, no random-number crate needed.
fn new_nonce(number: u64, digest: &str) -> String {
    use sha2::{Digest, Sha256};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = Sha256::new();
    h.update(nanos.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(number.to_le_bytes());
    h.update(digest.as_bytes());
    // A heap address varies between runs too (ASLR).
    let probe = Box::new(0u8);
    h.update((&*probe as *const u8 as usize).to_le_bytes());
    let hash = h.finalize();
    let n = u64::from_le_bytes(hash[..8].try_into().expect("8 bytes")) % 100_000_000;
    format!("{n:0width$}", width = NONCE_LEN)
}

/// Whether the latest session still waits for its acknowledgement. Asked
/// by the hooks on every agent turn, so it reads only the chain's tail: a
/// session's line and its ack are the last lines written. Falls back to the
/// whole chain when the tail holds no session line.
pub fn latest_is_pending(ws: &Workspace) -> bool {
    const TAIL: u64 = 16 * 1024;
    let Ok((mut file, _)) = crate::system::fsutil::open_input(&ws.chain_path()) else {
        return false;
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut tail = Vec::new();
    if file
        .seek(SeekFrom::Start(len.saturating_sub(TAIL)))
        .and_then(|_| file.read_to_end(&mut tail))
        .is_err()
    {
        return false;
    }
    // A cut first line parses as nothing and is skipped.
    let chain = parse(&tail);
    match chain.last() {
        Some(last) => last.ack.is_none(),
        None if len > TAIL => read(ws)
            .ok()
            .and_then(|c| c.last().map(|s| s.ack.is_none()))
            .unwrap_or(false),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(number: u64, nonce: &str) -> SessionRecord {
        SessionRecord {
            number,
            started_at: "2026-01-15T10:00:00Z".into(),
            checkpoint: "ckpt-0001".into(),
            next_action: "run the tests".into(),
            head: None,
            agent: Some("claude-code".into()),
            from_agent: None,
            source: "resume".into(),
            nonce: nonce.into(),
            handoffs_without_progress: 1,
            stuck: false,
            agent_session: None,
            restores: 0,
            progress: None,
        }
    }

    #[test]
    fn parse_folds_acks_and_skips_torn_and_foreign_lines() {
        let mut text = String::new();
        for n in 1..=2 {
            text.push_str(&serde_json::to_string(&Line::Session(record(n, "abc"))).unwrap());
            text.push('\n');
        }
        text.push_str("{\"kind\":\"ack\",\"number\":2,\"at\":\"t\",\"via\":\"command\"}\n");
        text.push_str("{\"kind\":\"ack\",\"number\":9,\"at\":\"t\",\"via\":\"command\"}\n");
        text.push_str("garbage\n{\"kind\":\"session\",\"num");
        let chain = parse(text.as_bytes());
        assert_eq!(chain.sessions.len(), 2);
        assert!(chain.sessions[0].ack.is_none());
        assert_eq!(chain.sessions[1].ack.as_ref().unwrap().via, "command");
        assert_eq!(chain.skipped, 2, "the orphan ack and the garbage line");
    }

    #[test]
    fn latest_is_pending_reads_the_tail_and_falls_back_to_the_whole_chain() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        assert!(!latest_is_pending(&ws), "no chain yet");
        std::fs::create_dir(&ws.data_dir).unwrap();
        let session = |n: u64, pad: usize| {
            let mut r = record(n, "12345678");
            r.next_action = "x".repeat(pad);
            format!("{}\n", serde_json::to_string(&Line::Session(r)).unwrap())
        };
        let ack = |n: u64| {
            format!("{{\"kind\":\"ack\",\"number\":{n},\"at\":\"t\",\"via\":\"command\"}}\n")
        };
        let mut text: String = (1..=100).map(|n| session(n, 300)).collect();
        std::fs::write(ws.chain_path(), &text).unwrap();
        assert!(latest_is_pending(&ws));
        text.push_str(&ack(100));
        std::fs::write(ws.chain_path(), &text).unwrap();
        assert!(!latest_is_pending(&ws));
        // A last session line longer than the tail: the whole chain decides.
        text.push_str(&session(101, 40_000));
        std::fs::write(ws.chain_path(), &text).unwrap();
        assert!(latest_is_pending(&ws));
        text.push_str(&ack(101));
        std::fs::write(ws.chain_path(), &text).unwrap();
        assert!(!latest_is_pending(&ws));
    }

    #[test]
    fn nonces_are_short_distinct_and_unambiguous() {
        let a = new_nonce(1, "sha256:x");
        let b = new_nonce(1, "sha256:x");
        assert_eq!(a.len(), NONCE_LEN);
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| c.is_ascii_digit()));
    }

    #[test]
    fn ack_from_transcript_reads_only_the_tail_and_acknowledges_once() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let lock = ws.lock().unwrap();
        let config = Config::from_front(&crate::domain::state::FrontMatter::default());
        let checkpoint = Checkpoint {
            id: "ckpt-0001".into(),
            next_action: "run the tests".into(),
            controlling_agent: "claude-code".into(),
            ..Default::default()
        };
        let t = dir.path().join("t.jsonl");
        assert!(
            ack_from_transcript(&ws, &lock, &t).is_err(),
            "missing transcript"
        );
        std::fs::write(&t, "").unwrap();
        assert_eq!(
            ack_from_transcript(&ws, &lock, &t).unwrap(),
            None,
            "no session yet"
        );

        let s = open_session(&ws, &lock, &checkpoint, None, "hook:startup", &config).unwrap();
        let echo = format!(
            "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"ack {}\"}}]}}}}\n",
            s.nonce
        );
        // The echo, then more than the scanned tail of other lines: too far back.
        let filler = "{\"type\":\"user\",\"message\":{\"content\":\"x\"}}\n";
        let mut text = echo.clone();
        while (text.len() as u64) < TRANSCRIPT_SCAN_BYTES + 1024 {
            text.push_str(filler);
        }
        std::fs::write(&t, &text).unwrap();
        assert_eq!(ack_from_transcript(&ws, &lock, &t).unwrap(), None);

        text.push_str(&echo);
        std::fs::write(&t, &text).unwrap();
        let acked = ack_from_transcript(&ws, &lock, &t).unwrap().expect("found");
        assert_eq!(acked.record.number, 1);
        assert_eq!(acked.ack.unwrap().via, "transcript");
        assert_eq!(
            ack_from_transcript(&ws, &lock, &t).unwrap(),
            None,
            "only once"
        );
        let chain = read(&ws).unwrap();
        assert!(chain.last().unwrap().ack.is_some());
        assert_eq!(chain.last().unwrap().record.source, "hook:startup");
    }

    #[test]
    fn agent_names_are_validated() {
        assert!(validate_agent(" ").is_err());
        assert!(validate_agent("a\u{7}b").is_err());
        assert!(validate_agent(&"x".repeat(200)).is_err());
        assert_eq!(validate_agent(" codex ").unwrap(), "codex");
    }
}
