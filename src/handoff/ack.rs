//! `ack`'s job: the agent confirms it read the resume prompt, by the nonce
//! the prompt printed or by the transcript that echoes it. Shared by `ack`
//! and the MCP server's `ack` tool.

use std::path::Path;

use serde::Serialize;

use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::handoff::chain::{self, Acked, Link};

/// How the restore is confirmed.
#[derive(Debug, Clone, Copy)]
pub enum By<'a> {
    /// The nonce the resume prompt printed; a wrong one is refused (exit 1).
    Nonce(&'a str),
    /// The agent's transcript, searched for the nonce.
    Transcript(&'a Path),
}

#[derive(Debug, Serialize)]
pub struct AckReport {
    /// The latest session is acknowledged (now or before).
    pub acknowledged: bool,
    /// It already was; nothing was written.
    pub already: bool,
    /// The session's number, when there is one.
    pub session: Option<u64>,
    pub checkpoint: Option<String>,
    /// `command` or `transcript`.
    pub via: Option<String>,
    pub at: Option<String>,
}

impl AckReport {
    fn of(s: Option<&Link>, already: bool) -> AckReport {
        let ack = s.and_then(|s| s.ack.as_ref());
        AckReport {
            acknowledged: ack.is_some(),
            already,
            session: s.map(|s| s.record.number),
            checkpoint: s.map(|s| s.record.checkpoint.clone()),
            via: ack.map(|a| a.via.clone()),
            at: ack.map(|a| a.at.clone()),
        }
    }

    /// What happened, in one line for people.
    pub fn message(&self) -> String {
        match (&self.session, self.acknowledged, self.already) {
            (None, _, _) => "no resume to acknowledge yet".to_string(),
            (Some(n), true, false) => format!(
                "acknowledged session {n} ({}): the restore was read",
                self.checkpoint.as_deref().unwrap_or("")
            ),
            (Some(n), true, true) => format!("session {n} was already acknowledged"),
            (Some(n), false, _) => {
                format!("session {n}: the nonce was not found in the transcript")
            }
        }
    }
}

/// Acknowledges the latest session, under the lock. `via` is what the
/// chain records for a nonce (`command`, `mcp`).
pub fn ack(ws: &Workspace, by: By, via: &str) -> anyhow::Result<AckReport> {
    StateFile::load(&ws.state_path)?.require_initialized()?;
    let lock = ws.lock()?;
    let report = match by {
        By::Transcript(path) => match chain::ack_from_transcript(ws, &lock, path)? {
            Some(s) => AckReport::of(Some(&s), false),
            None => {
                let chain = chain::read(ws)?;
                let last = chain.last();
                AckReport::of(last, last.is_some_and(|s| s.ack.is_some()))
            }
        },
        By::Nonce(nonce) => match chain::acknowledge(ws, &lock, nonce, via)? {
            Acked::Recorded(s) => AckReport::of(Some(&s), false),
            Acked::Already(s) => AckReport::of(Some(&s), true),
        },
    };
    drop(lock);
    Ok(report)
}
