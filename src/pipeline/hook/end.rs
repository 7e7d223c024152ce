//! The end family: `SessionEnd`, a checkpoint of what the session did since the last one.

use serde_json::json;

use super::Hook;

impl Hook {
    /// SessionEnd: a checkpoint carrying the last one's fields and what the
    /// transcript shows the session did, with the session's budget as last
    /// recorded; skipped when nothing is new. Nothing before the first
    /// checkpoint.
    pub(super) fn session_end(&self, reason: Option<String>) -> anyhow::Result<()> {
        self.in_batch(|batch| {
            self.acknowledge_in(batch.lock());
            // A loop seen only now is given if the session goes on (a resume).
            self.loops_in(batch, false)?;
            if self.sf.fm.checkpoint.is_none() {
                return Ok(());
            }
            let budget = batch.session().budget();
            let extra = json!({ "session": self.session, "agent": self.agent, "reason": reason });
            self.auto_checkpoint_in(batch, "session-end", budget, extra, false)
                .map(|_| ())
        })
    }
}
