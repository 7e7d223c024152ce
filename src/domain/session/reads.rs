//! Reading a session: one accessor per field of its record, named as the field (the fields'
//! meaning is documented on [`Session`]). Only `domain::session` writes them.

use super::*;

impl Session {
    /// This session as it would read at `tokens` (its percents with them): a copy, for
    /// saying a token count it no longer has.
    pub fn with_tokens(&self, tokens: Option<u64>) -> Session {
        let mut s = self.clone();
        s.set_tokens(tokens, self.window);
        s
    }

    /// A copy without loop detection's state (left empty), for what an update returns:
    /// nothing reads that state from there, and it is most of a copy's cost (hundreds of small
    /// strings, on every event).
    pub fn clone_without_loops(&mut self) -> Session {
        let loops = std::mem::take(&mut self.loops);
        let copy = self.clone();
        self.loops = loops;
        copy
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn tokens(&self) -> Option<u64> {
        self.tokens
    }

    pub fn window(&self) -> u64 {
        self.window
    }

    pub fn percent(&self) -> Option<f64> {
        self.percent
    }

    pub fn source(&self) -> Source {
        self.source
    }

    pub fn fired(&self) -> &[crate::context::stages::FiredStage] {
        &self.fired
    }

    pub fn messages(&self) -> Option<u64> {
        self.messages
    }

    pub fn handoff_due(&self) -> bool {
        self.handoff_due
    }

    pub fn updated_at(&self) -> &str {
        &self.updated_at
    }

    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    pub fn transcript(&self) -> Option<&str> {
        self.transcript.as_deref()
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    pub fn count(&self) -> Option<&CountState> {
        self.count.as_ref()
    }

    pub fn statusline_window(&self) -> Option<u64> {
        self.statusline_window
    }

    pub fn started_at(&self) -> Option<&str> {
        self.started_at.as_deref()
    }

    /// When an agent's hook first started this session (else last, for a record written
    /// before this was kept).
    pub fn began_at(&self) -> Option<&str> {
        self.began_at.as_deref().or(self.started_at.as_deref())
    }

    pub fn seen_checkpoint(&self) -> Option<&str> {
        self.seen_checkpoint.as_deref()
    }

    pub fn loops_told(&self) -> &[crate::transcripts::activity::LoopHit] {
        &self.loops_told
    }

    pub fn loops(&self) -> &crate::transcripts::activity::loops::LoopState {
        &self.loops
    }

    pub fn compacted_at(&self) -> Option<&str> {
        self.compacted_at.as_deref()
    }

    pub fn drop_noted_from(&self) -> Option<u64> {
        self.drop_noted_from
    }

    pub fn turn_ends(&self) -> &[u64] {
        &self.turn_ends
    }

    pub fn restored_at(&self) -> Option<&str> {
        self.restored_at.as_deref()
    }

    pub fn pending_stages(&self) -> &[crate::context::stages::FiredStage] {
        &self.pending_stages
    }

    pub fn pending_start(&self) -> Option<&str> {
        self.pending_start.as_deref()
    }

    pub fn transcript_awaited(&self) -> bool {
        self.transcript_awaited
    }

    pub fn limit_percent(&self) -> Option<f64> {
        self.limit_percent
    }

    pub fn limit_note(&self) -> Option<&str> {
        self.limit_note.as_deref()
    }

    pub fn pre_compact_at(&self) -> Option<u64> {
        self.pre_compact_at
    }

    pub fn below_point_at(&self) -> Option<u64> {
        self.below_point_at
    }

    pub fn after_compaction(&self) -> Option<&AfterCompaction> {
        self.after_compaction.as_ref()
    }

    pub fn last_audit(&self) -> Option<&crate::transcripts::compaction_summary::AuditNote> {
        self.last_audit.as_ref()
    }

    pub fn window_source(&self) -> Option<&str> {
        self.window_source.as_deref()
    }

    pub fn window_evidence(&self) -> Option<u64> {
        self.window_evidence
    }

    pub fn limit_learned_from(&self) -> Option<usize> {
        self.limit_learned_from
    }

    pub fn compaction_seen(&self) -> Option<&SeenCompaction> {
        self.compaction_seen.as_ref()
    }

    pub fn requests(&self) -> &crate::domain::requests::State {
        &self.requests
    }
}
