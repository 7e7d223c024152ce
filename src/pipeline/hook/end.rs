//! The end family: `SessionEnd`, a checkpoint of what the session did since the last one.

use super::Hook;
use crate::domain::session::Session;
use crate::pipeline::apply::{self, Outcomes};
use crate::pipeline::decide;
use crate::pipeline::effects::Effect;

impl Hook {
    /// SessionEnd: a checkpoint carrying the last one's fields and what the transcript shows
    /// the session did, with the session's budget as last recorded; skipped when nothing is
    /// new. Nothing before the first checkpoint. One pass: read (loop detection's new calls,
    /// under the lock), decide (`decide::end`), apply.
    pub(super) fn session_end(&self, reason: Option<String>) -> anyhow::Result<()> {
        let (ws, config, payload) = (&self.ws, &self.reading.config, &self.reading.payload);
        let view = self.reading.view();
        let now = crate::system::clock::now_rfc3339();
        self.in_batch(|batch| {
            let (effects, touched) = {
                let (_, s, on_disk) = batch.split();
                // Read, under the lock.
                let calls = config.loop_limits.map(|limits| {
                    let tool = payload.tool.as_ref();
                    let cwd = payload.cwd.as_deref();
                    let calls = crate::pipeline::read::calls_read(ws, view, s, on_disk, tool, cwd);
                    (calls, limits)
                });
                let facts = decide::EndFacts {
                    agent: self.reading.agent,
                    reason: reason.as_deref(),
                    has_checkpoint: self.reading.sf.fm.checkpoint.is_some(),
                    calls,
                    now: &now,
                };
                // Decide.
                let current = std::mem::replace(s, Session::new(&self.reading.session, 0));
                let decided = decide::end(current, facts);
                *s = decided.session;
                (decided.effects, decided.touched)
            };
            if touched {
                batch.touch();
            }
            // Apply.
            let mut outcomes = Outcomes::default();
            for effect in effects {
                if effect == Effect::Acknowledge {
                    self.acknowledge_in(batch.lock());
                    continue;
                }
                let (lock, s) = batch.parts();
                let ctx = apply::Ctx {
                    ws,
                    lock,
                    out: &self.out,
                    transcript: None,
                    view: Some(view),
                };
                if let Some(left) = apply::run_one(&ctx, s, effect, &mut outcomes)? {
                    anyhow::bail!("the end family runs no such effect: {left:?}");
                }
            }
            Ok(())
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
