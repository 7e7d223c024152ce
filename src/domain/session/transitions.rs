//! The session's transitions: each method says what happened to it and changes its record
//! accordingly. Nothing outside `domain::session` writes a field; the hook pipeline's
//! `decide` stage chooses which of these to take.
//!
//! How they move the session between its states ([`Phase`]):
//! - a reading (`tokens_given`, `usage_read`): new or emptied → tracking;
//! - stages at an event that reaches no model (`stages_wait`) → stage pending; given with the
//!   next that can (`waiting_stages_given`) → tracking;
//! - a start that waits (`start_deferred`, `drop_noted`) → start pending; given
//!   (`waiting_start_given`) → tracking;
//! - a compaction's checkpoint written (`compaction_began`) → compacting; its summary
//!   audited (`summary_audited`) → tracking or, once emptied, emptied;
//! - the context emptied (`context_emptied`, `context_cleared`, `compaction_ended`) → emptied;
//!   a restored size stated (`restored`) → tracking;
//! - a restore that gave only a note (`restore_waits`) → restored, waiting; what the summary
//!   left out given back (`compaction_done`) → tracking.

use super::*;
use crate::context::stages::FiredStage;
use crate::transcripts::activity::LoopHit;

impl Session {
    /// Stamps the record with the time of the event that changed it.
    pub fn touched(&mut self, now: &str) {
        self.updated_at = now.to_string();
    }

    /// A token count given by hand or counted (`track`): no agent's word about the window.
    pub fn tokens_given(
        &mut self,
        tokens: u64,
        window: u64,
        source: Source,
        count: Option<CountState>,
    ) {
        self.window_source = None;
        self.set_tokens(Some(tokens), window);
        self.source = source;
        if count.is_some() {
            self.count = count;
        }
    }

    /// An agent's reading (its transcript, status line or payload): the token count (None: unknown,
    /// e.g. just compacted), the window it is measured against, and what the reading names;
    /// a transcript or model it does not name stays as it was.
    pub fn usage_read(
        &mut self,
        tokens: Option<u64>,
        window: u64,
        agent: &str,
        transcript: Option<String>,
        model: Option<String>,
    ) {
        self.set_tokens(tokens, window);
        self.source = Source::Usage;
        self.agent = Some(agent.to_string());
        if transcript.is_some() {
            self.transcript = transcript;
        }
        if model.is_some() {
            self.model = model;
        }
    }

    /// A reading names `model`: on another model than the session's last, what the agent
    /// reported for the old one's window (and what its usage proved) no longer holds.
    pub fn model_seen(&mut self, model: Option<&str>) {
        if let (Some(new), Some(old)) = (model, self.model.as_deref()) {
            if !crate::context::models::same_model(new, old) {
                self.statusline_window = None;
                self.window_evidence = None;
            }
        }
    }

    /// `--window` with no new token count: the same token count against another window.
    pub fn window_given(&mut self, window: u64) {
        self.set_tokens(self.tokens, window);
    }

    /// The agent's status line reported the session's window (exact).
    pub fn statusline_window_seen(&mut self, window: u64) {
        self.statusline_window = Some(window);
    }

    /// Where this reading's window came from (`option`, `status-line`, `model`, …).
    pub fn window_from(&mut self, source: &str) {
        self.window_source = Some(source.to_string());
    }

    /// The token count passed the assumed window without a compaction: `window` is the smallest
    /// one the model's family has that holds it.
    pub fn window_proved(&mut self, window: u64) {
        self.window_evidence = Some(window);
        self.window_source = Some("evidence".into());
        if let Some(tokens) = self.tokens {
            self.set_tokens(Some(tokens), window);
        }
    }

    /// The token count passed every window the model's family is known to have: no percent.
    pub fn window_unknown(&mut self) {
        self.window_source = Some("unknown".into());
        self.set_tokens(self.tokens, self.window);
    }

    /// The usable limit was looked up; `learned_from`: how many compactions an observed one
    /// is the median of.
    pub fn limit_found(
        &mut self,
        limit: crate::context::compaction::Limit,
        learned_from: Option<usize>,
    ) {
        self.limit_learned_from = learned_from;
        self.set_limit(limit);
    }

    /// `track --messages`: the conversation's message count.
    pub fn messages_counted(&mut self, messages: u64) {
        self.messages = Some(messages);
    }

    /// Stages moved at a reading: `kept` stay fired, `fired` fired now. A stage that waited
    /// and is no longer fired has nothing left to say; a handoff is due while a handoff stage
    /// stays fired.
    pub fn stages_fired(&mut self, kept: &[FiredStage], fired: &[FiredStage]) {
        self.fired = kept.to_vec();
        self.fired.extend(fired.iter().cloned());
        let names: Vec<&str> = self.fired.iter().map(|f| f.name.as_str()).collect();
        self.pending_stages
            .retain(|p| names.contains(&p.name.as_str()));
        let handoff = |f: &FiredStage| f.action == crate::context::stages::StageAction::Handoff;
        if fired.iter().any(handoff) {
            self.handoff_due = true;
        } else if !self.fired.iter().any(handoff) {
            // Every handoff stage re-armed (usage dropped, e.g. after compaction).
            self.handoff_due = false;
        }
    }

    /// Stages fired at an event whose reply reaches no model: they wait for one that can.
    pub fn stages_wait(&mut self, fired: &[FiredStage]) {
        self.pending_stages.extend(fired.iter().cloned());
    }

    /// The stages that waited are given now: taken from the record.
    pub fn waiting_stages_given(&mut self) -> Vec<FiredStage> {
        std::mem::take(&mut self.pending_stages)
    }

    /// A line for the model that waits for the next after-tool event (once: the same line
    /// waiting already is not added again).
    pub fn note_waits(&mut self, line: &str) {
        if !self.pending_notes.iter().any(|l| l == line) {
            self.pending_notes.push(line.to_string());
        }
    }

    /// The lines that waited are given now: taken from the record.
    pub fn waiting_notes_given(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending_notes)
    }

    /// A session start whose prompt waits for the next prompt or tool event.
    pub fn start_deferred(&mut self, source: &str) {
        self.pending_start = Some(source.to_string());
    }

    /// The start that waited is given now: its source, taken from the record.
    pub fn waiting_start_given(&mut self) -> Option<String> {
        self.pending_start.take()
    }

    /// A compaction seen only as a drop in usage from `from` tokens: its start prompt waits
    /// for the next prompt or tool event, and the agent is taken to have compacted.
    pub fn drop_noted(&mut self, from: Option<u64>) {
        self.drop_noted_from = from;
        self.pending_start = Some("compact".into());
        self.pre_compact_at = None;
    }

    /// A pre-compaction event found the token count (`tokens`) below the limit: the agent will
    /// compact nothing, and nothing says it failed to.
    pub fn below_compaction_point(&mut self, tokens: u64) {
        self.pre_compact_at = None;
        self.below_point_at = Some(tokens);
    }

    /// A pre-compaction event past the limit got its checkpoint at `tokens`.
    pub fn pre_compact_checkpoint_at(&mut self, tokens: u64) {
        self.pre_compact_at = Some(tokens);
    }

    /// `/clear`: the context was emptied, and no compaction was.
    pub fn context_cleared(&mut self, now: &str) {
        self.context_emptied(now);
        self.compacted_at = None;
    }

    /// A compaction's end: the context was emptied, unless the restored session's start
    /// already stated its new size (kept, once).
    pub fn compaction_ended(&mut self, now: &str) {
        if self.restored_at.take().is_none() {
            self.context_emptied(now);
        }
        self.updated_at = now.to_string();
    }

    /// A compaction read from the transcript, noted once (judged at the next reading).
    pub fn compaction_noted(&mut self, seen: SeenCompaction) {
        self.compaction_seen = Some(seen);
    }

    /// The noted compaction is judged now: it, when it was not judged yet.
    pub fn compaction_judged(&mut self) -> Option<SeenCompaction> {
        let seen = self.compaction_seen.as_mut().filter(|c| !c.judged)?;
        seen.judged = true;
        Some(seen.clone())
    }

    /// The pre-compaction checkpoint `checkpoint` is written: the compaction begins.
    pub fn compaction_began(&mut self, since: &str, trigger: Option<String>, checkpoint: &str) {
        self.below_point_at = None;
        self.after_compaction = Some(AfterCompaction {
            since: Some(since.to_string()),
            trigger,
            checkpoint: Some(checkpoint.to_string()),
            ..AfterCompaction::default()
        });
    }

    /// An event after a compaction said how it was triggered (the compaction is noted, begun
    /// or not).
    pub fn compaction_trigger_heard(&mut self, trigger: Option<String>) {
        let a = self.after_compaction.get_or_insert_with(Default::default);
        if trigger.is_some() {
            a.trigger = trigger;
        }
    }

    /// The compaction's summary was compared with `checkpoint`: what it left out (None: it
    /// could not be read, `unreadable` says why), and the audit `status` shows.
    pub fn summary_audited(
        &mut self,
        checkpoint: &str,
        missing: Option<Vec<crate::transcripts::compaction_summary::Fact>>,
        unreadable: Option<String>,
        note: crate::transcripts::compaction_summary::AuditNote,
    ) {
        let a = self.after_compaction.get_or_insert_with(Default::default);
        a.checkpoint = Some(checkpoint.to_string());
        a.missing = missing;
        a.unreadable = unreadable;
        a.audited = true;
        self.last_audit = Some(note);
    }

    /// Facts the summary left out were replaced by newer evidence before they were given back
    /// (`replaced`, by their text): the audit `status` shows counts them apart from the missing.
    pub fn facts_replaced(&mut self, replaced: &[String]) {
        let Some(note) = self.last_audit.as_mut() else {
            return;
        };
        for r in replaced {
            if let Some(i) = note.missing.iter().position(|m| m == r) {
                note.missing.remove(i);
                note.replaced.push(r.clone());
            }
        }
    }

    /// A restore after a compaction gave only a note with `nonce`: what the summary left out
    /// of `checkpoint` waits for the next prompt or tool event. `since`: when the compaction
    /// began, when that was not noted.
    pub fn restore_waits(
        &mut self,
        compaction: Option<AfterCompaction>,
        checkpoint: &str,
        nonce: &str,
        since: impl FnOnce() -> String,
    ) {
        let mut a = compaction.unwrap_or_default();
        if a.since.is_none() {
            a.since = Some(since());
        }
        a.checkpoint = Some(checkpoint.to_string());
        a.waiting = Some(nonce.to_string());
        self.after_compaction = Some(a);
    }

    /// The compaction is done with (what it left out was given back, or a start replaced
    /// it): what the record held of it.
    pub fn compaction_done(&mut self) -> Option<AfterCompaction> {
        self.after_compaction.take()
    }

    /// This agent session saw checkpoint `id` (given to it, or written by it).
    pub fn checkpoint_seen(&mut self, id: &str) {
        self.seen_checkpoint = Some(id.to_string());
    }

    /// A first tool hook waited for the transcript and it never came: later ones do not wait.
    pub fn transcript_never_came(&mut self) {
        self.transcript_awaited = true;
    }

    /// A loop was found (given once).
    pub fn loop_found(&mut self, hit: LoopHit) {
        self.loops_told.push(hit);
    }

    /// Loop detection's own state (what it learned, how far it read), which its module keeps.
    pub fn loops_mut(&mut self) -> &mut crate::transcripts::activity::loops::LoopState {
        &mut self.loops
    }

    /// The checkpoint requests' count, which `pipeline::requests` keeps.
    pub fn requests_mut(&mut self) -> &mut crate::domain::requests::State {
        &mut self.requests
    }
}
