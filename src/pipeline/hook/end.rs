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
            if self.reading.sf.fm.checkpoint.is_none() {
                return Ok(());
            }
            let budget = batch.session().budget();
            let extra = json!({ "session": self.reading.session, "agent": self.reading.agent, "reason": reason });
            self.auto_checkpoint_in(batch, "session-end", budget, extra, false)
                .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::pipeline::hook::samples::{project, turn, AGENT};

    #[test]
    fn a_session_end_writes_a_checkpoint_of_what_the_session_did_and_says_nothing() {
        let p = project();
        p.checkpoint("write the parser");
        p.append(&turn(1, 30_000, "cargo test"));
        let ran = p
            .event(AGENT, "SessionEnd")
            .with("reason", json!("exit"))
            .run();
        assert_eq!(ran.error, None);
        assert_eq!(ran.reply, None);
        assert!(
            ran.wrote(".ctxkeep/checkpoints/ckpt-0002.json"),
            "{:?}",
            ran.written
        );
        let written = p.archived("ckpt-0002").unwrap();
        assert_eq!(written["trigger"], "session-end");
        // What the transcript shows the session did, as data.
        assert_eq!(written["observed"]["request"], "prompt 1", "{written}");
        assert_eq!(
            written["observed"]["commands"][0]["command"], "cargo test",
            "{written}"
        );
        assert!(p.read("project-state.md").contains("ckpt-0002"));
    }

    #[test]
    fn before_the_first_checkpoint_a_session_end_writes_none() {
        let p = project();
        p.append(&turn(1, 30_000, "cargo test"));
        let ran = p.event(AGENT, "SessionEnd").run();
        assert_eq!(ran.reply, None);
        assert!(
            !ran.written
                .iter()
                .any(|w| w.starts_with(".ctxkeep/checkpoints/")),
            "{:?}",
            ran.written
        );
    }
}
