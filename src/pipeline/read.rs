//! The read stage: what one event reads before it decides. Every read of the event's
//! transcript goes through one [`TranscriptView`], made once per event: it opens the file
//! once ([`EventRead`]) and answers usage, the compaction it ends with, the calls and the
//! activity it gained since the session's stored offsets, and the nonce's echo from that one
//! open file.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::agents::Agent;
use crate::domain::session::Session;
use crate::domain::workspace::Workspace;
use crate::system::fsutil::Lock;
use crate::transcripts::activity::event_read::EventRead;
use crate::transcripts::activity::index::SessionIndex;
use crate::transcripts::activity::loops::Step;
use crate::transcripts::activity::Observed;
use crate::transcripts::usage::Usage;

/// The event's transcript: where it is (when it exists), the agent that writes it, and its
/// one open reading.
pub struct TranscriptView {
    path: Option<PathBuf>,
    agent: Agent,
    read: OnceCell<EventRead>,
}

impl TranscriptView {
    /// The transcript at `path`, when it exists.
    pub fn new(path: Option<PathBuf>, agent: Agent) -> TranscriptView {
        TranscriptView {
            path,
            agent,
            read: OnceCell::new(),
        }
    }

    /// The transcript's path; None when there is none (yet).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The transcript's one open reading, opened at the first question asked of it; None
    /// without a transcript. One that cannot be opened is an error (asked again, it is tried
    /// again).
    pub fn read(&self) -> anyhow::Result<Option<&EventRead>> {
        if let Some(read) = self.read.get() {
            return Ok(Some(read));
        }
        let Some(path) = self.path() else {
            return Ok(None);
        };
        let read = crate::agents::event_read(path, Some(self.agent))?;
        Ok(Some(self.read.get_or_init(|| read)))
    }

    /// The context usage the transcript records; None without a transcript.
    pub fn usage(&self) -> Option<anyhow::Result<Usage>> {
        match self.read() {
            Ok(Some(read)) => Some(read.usage()),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own figure
    /// before it, the trigger, the model); None when it does not end with one.
    pub fn compaction(&self) -> Option<Usage> {
        self.read().ok()??.compaction()
    }

    /// The session's index caught up with what the transcript gained since its last event
    /// (the caller holds the lock).
    pub fn catch_up_index(&self, ws: &Workspace, lock: &Lock, id: &str) -> Option<SessionIndex> {
        let read = self.read().ok()??;
        crate::transcripts::session_index::catch_up_read(ws, lock, id, read)
    }

    /// The tool calls the transcript gained since loop detection last read it (moving the
    /// session's cursor).
    pub fn new_calls(&self, ws: &Workspace, s: &mut Session) -> Vec<Step> {
        match self.read() {
            Ok(Some(read)) => crate::pipeline::loop_detection::read_new_in(ws, s, read),
            _ => Vec::new(),
        }
    }

    /// What session `id` did, for a checkpoint: the transcript's tail completed from the
    /// session's index (the caller holds the lock).
    pub fn observe(&self, ws: &Workspace, lock: &Lock, id: &str) -> Option<Observed> {
        let read = self.read().ok()??;
        crate::transcripts::session_index::observed_with(ws, lock, id, read)
    }

    /// Acknowledges the latest restore when what the transcript gained since the last look
    /// echoes its nonce (the caller holds the lock).
    pub fn acknowledge(&self, ws: &Workspace, lock: &Lock, id: &str) {
        let Ok(Some(read)) = self.read() else {
            return;
        };
        let _ = crate::handoff::ledger::ack_if_echoed(ws, lock, &|nonce| {
            crate::transcripts::session_index::echoed(
                ws,
                lock,
                id,
                read,
                nonce,
                crate::handoff::ledger::ECHO_SCAN_BYTES,
            )
        });
    }
}
