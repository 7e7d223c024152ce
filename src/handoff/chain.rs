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

use serde::{Deserialize, Serialize};

use crate::domain::checkpoint::Checkpoint;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::{self, Lock};

mod acknowledgement;
mod opening;

pub use acknowledgement::{
    ack_from_transcript, ack_if_echoed, acknowledge, Acked, ECHO_SCAN_BYTES,
};
pub use opening::{
    open_session, plan_link, plan_restore, plan_session, record_restore, record_session, restored,
    validate_agent, Opening,
};

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
#[derive(Debug, Default, Clone)]
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

thread_local! {
    /// The chain this process last parsed, with its bytes: a hook event while a restore awaits
    /// its acknowledgement parses it twice (whether the latest link is pending, then the look
    /// for its nonce), 1 % of the event each time. Reused only for the same bytes.
    static LAST: std::cell::RefCell<Option<(Vec<u8>, Chain)>> =
        const { std::cell::RefCell::new(None) };
}

/// Chains up to this size are remembered (any real one: a line per session start).
const REMEMBERED_BYTES: usize = 64 * 1024;

fn parse(bytes: &[u8]) -> Chain {
    let kept = LAST.with_borrow(|last| match last {
        Some((b, chain)) if b.as_slice() == bytes => Some(chain.clone()),
        _ => None,
    });
    if let Some(chain) = kept {
        return chain;
    }
    let chain = parse_lines(bytes);
    if bytes.len() <= REMEMBERED_BYTES {
        LAST.set(Some((bytes.to_vec(), chain.clone())));
    }
    chain
}

fn parse_lines(bytes: &[u8]) -> Chain {
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
mod tests;
