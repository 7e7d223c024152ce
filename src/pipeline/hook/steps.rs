//! The steps several events share, each on the event's batch: a restore's
//! acknowledgement from the nonce's echo, what the session did, and an automatic checkpoint.

use super::Hook;
use crate::domain::checkpoint::{Checkpoint, Fields};
use crate::domain::session::Session;
use crate::pipeline::apply::Batch;
use crate::pipeline::record;
use crate::transcripts::activity::Observed;

impl Hook {
    /// The agent may confirm a restore by echoing the nonce instead of
    /// running `ctxkeep ack`: in its last reply, when the event carries it,
    /// else in what the transcript gained. Looked for only while the latest
    /// session is unacknowledged (under the lock the caller holds).
    pub(super) fn acknowledge_in(&self, lock: &crate::system::fsutil::Lock) {
        if !crate::handoff::chain::latest_is_pending(&self.ws) {
            return;
        }
        if let Some(reply) = &self.reading.payload.last_message {
            let latest = crate::handoff::chain::read(&self.ws)
                .ok()
                .and_then(|c| c.last().map(|l| l.record.nonce.clone()));
            if let Some(nonce) =
                latest.filter(|n| crate::transcripts::usage::echo::has_word(reply, n))
            {
                let _ = crate::handoff::chain::acknowledge(&self.ws, lock, &nonce, "reply");
                return;
            }
        }
        self.reading
            .view()
            .acknowledge(&self.ws, lock, &self.reading.session);
    }

    /// What the transcript says this session did; None without a
    /// transcript, or when it cannot be read (a checkpoint is still written).
    /// A command whose result the agent has not written yet (a compaction in
    /// the middle of a turn) gets the outcome its hook's payload gave.
    pub(super) fn observed_in(&self, batch: &Batch<'_>) -> Option<Observed> {
        self.observed_now(batch.lock(), batch.session())
    }

    /// [`observed_in`](Self::observed_in) for a step that holds the lock and the session
    /// apart.
    pub(super) fn observed_now(
        &self,
        lock: &crate::system::fsutil::Lock,
        s: &Session,
    ) -> Option<Observed> {
        let mut observed = self
            .reading
            .view()
            .observe(&self.ws, lock, &self.reading.session)?;
        let recent = &s.loops().recent;
        crate::transcripts::activity::loops::with_payload_outcomes(&mut observed, recent);
        Some(observed)
    }

    /// An automatic checkpoint from this session: the last one's fields,
    /// what the transcript shows it did, skipped when nothing is new unless
    /// the user asked for it (`asked`: a manual compaction).
    pub(super) fn auto_checkpoint(
        &self,
        trigger: &str,
        budget: Option<crate::domain::checkpoint::Budget>,
        extra: serde_json::Value,
        asked: bool,
    ) -> anyhow::Result<Checkpoint> {
        self.in_batch(|batch| self.auto_checkpoint_in(batch, trigger, budget, extra, asked))
    }

    /// [`auto_checkpoint`](Self::auto_checkpoint) within the event's batch.
    pub(super) fn auto_checkpoint_in(
        &self,
        batch: &mut Batch<'_>,
        trigger: &str,
        budget: Option<crate::domain::checkpoint::Budget>,
        extra: serde_json::Value,
        asked: bool,
    ) -> anyhow::Result<Checkpoint> {
        {
            let new = record::New {
                fields: Fields::default(),
                trigger,
                budget,
                observed: self.observed_in(batch),
                extra,
                automatic: true,
                line: Some((
                    crate::domain::checkpoint::Line {
                        session: self.reading.session.clone(),
                        agent: self.reading.agent.to_string(),
                    },
                    batch.session().began_at().map(str::to_string),
                )),
            };
            let written = match asked {
                true => record::write_new_always(&self.ws, batch.lock(), new, &self.out)?,
                false => record::write_new(&self.ws, batch.lock(), new, &self.out)?,
            };
            // The session wrote it, so it has seen it: a resume of this same
            // session is not shown its own checkpoint.
            batch
                .session_mut()
                .checkpoint_seen(&written.checkpoint().id);
            batch.touch();
            Ok(written.checkpoint().clone())
        }
    }
}
