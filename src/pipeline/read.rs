//! The read stage: what one event reads before it decides. Every read of the event's
//! transcript goes through one [`TranscriptView`], made once per event, so how the transcript
//! is read (today each reader opens it; an incremental reader that opens it once and reads
//! only what it gained belongs here) changes in one place.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::agents::Agent;
use crate::fsutil::Lock;
use crate::observe::index::SessionIndex;
use crate::observe::loops::Step;
use crate::observe::Observed;
use crate::session::Session;
use crate::usage::Usage;
use crate::workspace::Workspace;

/// The event's transcript: where it is (when it exists) and the agent that writes it.
pub struct TranscriptView {
    path: Option<PathBuf>,
    agent: Agent,
    /// The usage reading, read at most once per event (a failed read is not kept: the
    /// error keeps its kind for the caller).
    usage: OnceCell<Usage>,
}

impl TranscriptView {
    /// The transcript at `path`, when it exists.
    pub fn new(path: Option<PathBuf>, agent: Agent) -> TranscriptView {
        TranscriptView {
            path,
            agent,
            usage: OnceCell::new(),
        }
    }

    /// The transcript's path; None when there is none (yet).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// The context usage the transcript records; None without a transcript.
    pub fn usage(&self) -> Option<anyhow::Result<Usage>> {
        let path = self.path()?;
        if let Some(usage) = self.usage.get() {
            return Some(Ok(usage.clone()));
        }
        let read = crate::agents::read_usage(path, Some(self.agent));
        if let Ok(usage) = &read {
            let _ = self.usage.set(usage.clone());
        }
        Some(read)
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own figure
    /// before it, the trigger, the model); None when it does not end with one.
    pub fn compaction(&self) -> Option<Usage> {
        self.usage()?.ok().filter(|u| u.compacted)
    }

    /// The session's index caught up with what the transcript gained since its last event
    /// (the caller holds the lock).
    pub fn catch_up_index(&self, ws: &Workspace, lock: &Lock, id: &str) -> Option<SessionIndex> {
        crate::services::session_index::catch_up_locked(ws, lock, id, self.path()?, self.agent)
    }

    /// The tool calls the transcript gained since loop detection last read it (moving the
    /// session's cursor).
    pub fn new_calls(&self, ws: &Workspace, s: &mut Session) -> Vec<Step> {
        match self.path() {
            Some(path) => crate::services::gutter::read_new(ws, s, path, Some(self.agent)),
            None => Vec::new(),
        }
    }

    /// What the session did, from the transcript's tail (`tail_only`: the index holds the
    /// request, so the read need not look further back for it).
    pub fn observe(&self, ws: &Workspace, tail_only: bool) -> Option<Observed> {
        let path = self.path()?;
        let agent = Some(self.agent);
        match tail_only {
            true => crate::services::record::observe_transcript_tail(ws, path, agent).ok(),
            false => crate::services::record::observe_transcript(ws, path, agent).ok(),
        }
    }

    /// Acknowledges the latest restore when the transcript's tail echoes its nonce.
    pub fn acknowledge(&self, ws: &Workspace, lock: &Lock) {
        if let Some(path) = self.path() {
            let _ = crate::chain::ack_from_transcript(ws, lock, path);
        }
    }
}
