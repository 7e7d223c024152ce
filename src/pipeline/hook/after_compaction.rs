//! Around an agent's own compaction: the brief for its summarizer at the
//! pre-compaction event, the audit of the summary it wrote (one `compaction_audit` per
//! compaction), and what is given back after it: only what the summary left out, with the
//! checkpoint's id and the restore's nonce; the whole resume prompt when the summary cannot be
//! read.
//!
//! When each agent's summary can be read, and so when the give-back goes out:
//! - Claude Code: `PreCompact`, `SessionStart(compact)`, `PostCompact` (with the summary). The
//!   start gets a short note with the nonce; `PostCompact` audits; the next prompt or tool
//!   event gives back what is missing (or, with no summary found by then, the prompt).
//! - Codex: `PreCompact`, `PostCompact` (the rollout's `compacted` item is written), then
//!   `SessionStart(compact)`, which gives it back.
//! - Gemini CLI: no event after compressing; when the drop in usage shows one, the chat file's
//!   snapshot is audited and the start deferred to that prompt or tool event gives it back.

use super::{Answer, Hook};
use crate::domain::checkpoint::Checkpoint;
use crate::domain::session::{self, Session};
use crate::pipeline::decide::{self, Back};
use crate::pipeline::effects::AfterRestore;
use crate::system::fsutil::Lock;
use crate::transcripts::compaction_summary::{self, text, Found};

/// What a session start after a compaction gives instead of the resume prompt.
pub(super) struct AfterSummary {
    pub text: String,
    /// `missing`: what the summary left out; `waiting`: a note while it cannot be read.
    pub kind: &'static str,
}

impl Hook {
    /// The state file's name, as the brief and the give-back say it.
    fn state_name(&self) -> String {
        self.ws
            .state_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.ws.display_state())
    }

    /// The nonce to ask a confirmation for, unless the project turned that off.
    fn ack_nonce<'n>(&self, nonce: &'n str) -> Option<&'n str> {
        self.reading.config.acknowledgement.then_some(nonce)
    }

    /// Where the agent takes one, the brief for its summarizer, built from the
    /// pre-compaction checkpoint `c`.
    pub(super) fn brief_for(&self, c: &Checkpoint) -> Option<Answer> {
        if !self.reading.agent.policy().briefs_summarizer() || !self.reading.config.brief {
            return None;
        }
        let brief = text::brief(&c.id, &self.state_name(), &c.facts());
        Some(Answer::Plain(brief))
    }

    /// After a compaction: reads the summary (`given`, from the event, else the transcript)
    /// and logs the audit, once per compaction. Left for later when the summary cannot be
    /// read yet and a session start waits for it (the next prompt or tool event tries again).
    pub(super) fn audit_summary(
        &self,
        trigger: Option<String>,
        given: Option<String>,
    ) -> anyhow::Result<()> {
        let before = session::load(&self.ws, &self.reading.session)?
            .and_then(|s| s.after_compaction().cloned())
            .unwrap_or_default();
        // The checkpoint the compaction began with: this session's, even when another
        // session wrote a newer one meanwhile.
        let Some(c) = &self.checkpoint_named(before.checkpoint.as_deref()) else {
            return Ok(());
        };
        if before.audited {
            return Ok(());
        }
        let found = match given {
            Some(text) => Found::Text(text),
            None => self.read_summary(before.since_time()),
        };
        if !matches!(found, Found::Text(_)) && before.waiting.is_some() {
            return Ok(());
        }
        let first = self.in_batch(|batch| {
            batch.touch();
            let (lock, s) = batch.parts();
            s.compaction_trigger_heard(trigger);
            // Another hook of the same compaction may have audited it meanwhile.
            let first = !s.after_compaction().is_some_and(|a| a.audited);
            if first {
                self.record_audit(lock, s, c, &found);
            }
            Ok(first)
        })?;
        if first {
            self.remember_remains(&found);
        }
        Ok(())
    }

    /// What remains by the summary goes into the session's index (read again by the next
    /// automatic checkpoint); a failure there costs the record, never the hook. Called
    /// without the project lock held.
    fn remember_remains(&self, found: &Found) {
        if let Found::Text(text) = found {
            let _ = crate::pipeline::session_index::note_summary(
                &self.ws,
                &self.reading.session,
                self.reading.transcript().as_deref(),
                self.reading.agent,
                text,
            );
        }
    }

    /// The summary in the transcript; none when there is no transcript or it cannot be read
    /// (a hook fails open: the whole prompt is given back then).
    fn read_summary(&self, since: Option<chrono::DateTime<chrono::Utc>>) -> Found {
        let Some(path) = self.reading.transcript() else {
            return Found::None;
        };
        crate::agents::compaction_summary(self.reading.agent, &path, since).unwrap_or(Found::None)
    }

    /// Compares the summary with the checkpoint (`decide::audited_now`), logs
    /// `compaction_audit` and keeps what is missing on the session (the caller holds the lock
    /// and saves `s`).
    fn record_audit(&self, lock: &Lock, s: &mut Session, c: &Checkpoint, found: &Found) {
        let now = crate::system::clock::now_rfc3339();
        let line = decide::audited_now(s, c, found, self.reading.agent, &now);
        self.log(lock, line.event, line.fields);
    }

    /// What the summary left out that is still true now (`decide::still_true`), from what
    /// the session did as its transcript shows it.
    fn still_true(
        &self,
        lock: &Lock,
        s: &mut Session,
        missing: &[compaction_summary::Fact],
    ) -> Vec<compaction_summary::Fact> {
        let now = self.observed_now(lock, s);
        decide::still_true(s, missing, now.as_ref())
    }

    /// What a restore gives in place of the whole prompt (`after`, decided by
    /// `decide::start_gift`), with the restore's `nonce`: what the audited summary left out
    /// that is still true, or, where the summary comes only later (Claude Code), a note with
    /// the nonce, the compaction's record then waiting on the session for the next event.
    /// None: the prompt.
    pub(super) fn after_restore(
        &self,
        lock: &Lock,
        s: &mut Session,
        c: &Checkpoint,
        nonce: &str,
        after: AfterRestore,
    ) -> Option<AfterSummary> {
        let state = self.state_name();
        match after {
            AfterRestore::Prompt => None,
            AfterRestore::Missing(missing) => {
                let missing = self.still_true(lock, s, &missing);
                Some(AfterSummary {
                    text: text::give_back(&c.id, &state, &missing, self.ack_nonce(nonce)),
                    kind: "missing",
                })
            }
            AfterRestore::Waiting { since } => {
                let a = s.compaction_done();
                s.restore_waits(a, &c.id, nonce, || since);
                Some(AfterSummary {
                    text: text::waiting_note(&c.id, &state, self.ack_nonce(nonce)),
                    kind: "waiting",
                })
            }
        }
    }

    /// At the first prompt or tool event after a start that gave only a note
    /// (`Effect::GiveBack`): read (the summary, before the lock and only while the compaction
    /// was not audited; under it the compaction's record, its checkpoint, what the session did,
    /// the chain) → `decide::give_back` → apply (the audit's line, what is given rendered, the
    /// compaction done with once given, the summary's remains noted after the lock). Nothing
    /// when the summary kept everything. The give-back does not ask for the acknowledgement
    /// again: the note already did.
    pub(super) fn give_back(&self) -> anyhow::Result<Option<String>> {
        let Some(before) = session::load(&self.ws, &self.reading.session)?
            .and_then(|s| s.after_compaction().cloned())
        else {
            return Ok(None);
        };
        if before.waiting.is_none() || !self.reading.config.give_back {
            return Ok(None);
        }
        // Only while one waits, so prompts and tools do not pay for this read.
        let found = (!before.audited).then(|| self.read_summary(before.since_time()));
        let (text, summary) = self.in_batch(|batch| {
            if !batch.recorded() {
                return Ok((None, None));
            }
            let (lock, s) = batch.parts();
            let Some(a) = s.after_compaction().filter(|a| a.waiting.is_some()) else {
                return Ok((None, None));
            };
            let own = self.checkpoint_named(a.checkpoint.as_deref());
            // Facts are given back when the summary was audited, or is now; else the prompt.
            // Each reads only what its way needs: what the session did, or the chain.
            let audits_now = !a.audited && own.is_some() && matches!(found, Some(Found::Text(_)));
            let facts_ahead = a.missing.is_some() || audits_now;
            let observed = facts_ahead.then(|| self.observed_now(lock, s)).flatten();
            let chain = match facts_ahead {
                true => None,
                false => Some(crate::handoff::chain::read(&self.ws)?),
            };
            let now = crate::system::clock::now_rfc3339();
            let offer = decide::GiveBackOffer {
                own: own.as_ref(),
                found: found.as_ref(),
                observed: observed.as_ref(),
                chain: chain.as_ref(),
                agent: self.reading.agent,
                now: &now,
            };
            let decided = decide::give_back(s, &offer);
            if let Some(line) = decided.audit {
                self.log(lock, line.event, line.fields);
            }
            // Kept on the session should the prompt below fail: the next event tries again.
            let text = match decided.back {
                Some(Back::Missing { checkpoint, facts }) => Some(text::give_back(
                    &checkpoint,
                    &self.state_name(),
                    &facts,
                    None,
                )),
                Some(Back::Prompt { checkpoint, link }) => {
                    self.prompt(&checkpoint, link.as_deref())?.map(|p| p.prompt)
                }
                None => None,
            };
            // Given back: the compaction is done with.
            s.compaction_done();
            Ok((text, decided.summary))
        })?;
        if let Some(text) = summary {
            self.remember_remains(&Found::Text(text));
        }
        Ok(text)
    }
}
