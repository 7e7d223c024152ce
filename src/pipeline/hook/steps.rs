//! The steps several events share, each on the event's batch: a restore's
//! acknowledgement from the nonce's echo, what the session did, and an automatic checkpoint.

use super::Hook;
use crate::domain::checkpoint::Checkpoint;
use crate::domain::session::Session;
use crate::pipeline::apply::{self, Outcomes};
use crate::pipeline::effects::{AutoCheckpoint, Effect};
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

    /// What the transcript says this session did (the caller holds `lock`); None without a
    /// transcript, or when it cannot be read. A command whose result the agent has not written
    /// yet gets the outcome its hook's payload gave.
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

    /// An automatic checkpoint from this session: the last one's fields, what the transcript
    /// shows it did, skipped when nothing is new unless the user asked for it (`asked`); on a
    /// batch of its own, written as the apply stage writes `Effect::Checkpoint`.
    pub(super) fn auto_checkpoint(
        &self,
        trigger: &str,
        budget: Option<crate::domain::checkpoint::Budget>,
        extra: serde_json::Value,
        asked: bool,
    ) -> anyhow::Result<Checkpoint> {
        let effect = Effect::Checkpoint(AutoCheckpoint {
            trigger: trigger.to_string(),
            budget,
            extra,
            asked,
            agent: self.reading.agent.to_string(),
        });
        self.in_batch(|batch| {
            let mut outcomes = Outcomes::default();
            let (lock, s) = batch.parts();
            let ctx = apply::Ctx {
                ws: &self.ws,
                lock,
                out: &self.out,
                transcript: None,
                view: Some(self.reading.view()),
            };
            apply::run_one(&ctx, s, effect, &mut outcomes)?;
            batch.touch();
            outcomes
                .checkpoint
                .ok_or_else(|| anyhow::anyhow!("no checkpoint was written"))
        })
    }
}
