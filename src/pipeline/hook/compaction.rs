//! The compaction family: `PreCompact` (a checkpoint, then the summarizer's brief),
//! `PostCompact` (the stages re-arm, the summary is audited), a compaction seen only as the
//! figure's drop, and one the transcript shows that no start announced. What is given back
//! after one is `after_compaction`'s.

use serde_json::json;

use super::{Answer, Hook};
use crate::domain::session::Session;
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::tracking::{self, Options, Reading};

impl Hook {
    /// A compaction the transcript shows (Claude Code's boundary and summary) that no session
    /// start announced: a server-side compaction, a host that deferred or skipped its
    /// post-compaction hook. It is given back now as a start after it would: the summary is
    /// audited against the checkpoint, and what it left out that is still true goes out with
    /// the restore's nonce (or the whole prompt when the summary cannot be read). Once: a
    /// start that comes for it later gives nothing.
    pub(super) fn unannounced_compaction<'w>(
        &'w self,
        slot: &mut Option<Batch<'w>>,
    ) -> anyhow::Result<Option<String>> {
        let heard = {
            let batch = self.reopen(slot)?;
            crate::pipeline::session_index::compaction_noticed(
                &self.ws,
                batch.lock(),
                &self.reading.session,
            )?;
            self.log(
                batch.lock(),
                "compaction",
                json!({ "session": self.reading.session, "agent": self.reading.agent, "trigger": "transcript" }),
            );
            batch
                .session()
                .after_compaction()
                .is_some_and(|a| a.trigger.is_some())
        };
        // The audit reads and writes on its own lock.
        self.release(slot)?;
        let trigger = (!heard).then(|| "detected".to_string());
        self.audit_summary(trigger, None)?;
        let batch = self.reopen(slot)?;
        batch.touch();
        self.later_start_in(batch, "compact", Some("noticed_in_transcript"))
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own token count
    /// before it, the trigger, the model): read at the events that follow a compaction, so
    /// the learning never takes ctxkeep's last reading for the agent's point.
    pub(super) fn compaction_in_transcript(&self) -> Option<crate::transcripts::usage::Usage> {
        self.reading.view().compaction()
    }

    /// PreCompact: a checkpoint with the budget just before compaction. The token count is
    /// recorded without firing stages: their instructions could not reach the model now, and
    /// one checkpoint is enough. Where the agent takes plain text as the summarizer's
    /// instructions, the answer is ctxkeep's brief, built from that checkpoint. One pass: read
    /// (the usage before the lock, the limit under it), decide (`decide::pre_compact`), apply.
    pub(super) fn pre_compact(&self, trigger: Option<String>) -> anyhow::Result<Option<Answer>> {
        let (ws, config) = (&self.ws, &self.reading.config);
        // A compaction the user asked for always gets its checkpoint; so does an idle one
        // (Claude Code's, before the prompt cache expires): nobody is at the keyboard, and
        // this checkpoint is what a cold start will read.
        let asked = matches!(trigger.as_deref(), Some("manual" | "idle"));
        let doubted = self.reading.agent.policy().doubts_pre_compact(asked);
        // Read before the lock: the usage the transcript records.
        let path = self.reading.transcript().unwrap_or_default();
        let (reading, unreadable) = match self.reading.view().usage() {
            Some(Ok(usage)) => {
                let path = path.display().to_string();
                (Some(Reading::Transcript(Box::new(usage), path)), None)
            }
            Some(Err(e)) => (
                None,
                Some(crate::system::redact::redact(&format!("{e:#}")).into_owned()),
            ),
            None => (None, None),
        };
        let env = |name: &str| std::env::var(name).ok();
        let now = crate::system::clock::now_rfc3339();
        let mut slot = Some(Batch::open(ws, &self.reading.session, config.window)?);
        let batch = slot.as_mut().expect("just opened");
        let had_record = batch.recorded();
        let (effects, touched) = {
            let (_, s) = batch.parts();
            let usage = match (&reading, unreadable) {
                (Some(reading), _) => {
                    let options = Options {
                        record_only: true,
                        ..Options::default()
                    };
                    let sf = &self.reading.sf;
                    let facts = tracking::usage_facts(
                        reading, &options, sf, config, had_record, &env, &now,
                    );
                    // Read, under the lock: the limit for the window the reading is measured at.
                    Some(Ok(crate::pipeline::read::usage_read(ws, s, facts, config)))
                }
                (None, Some(message)) => Some(Err(message)),
                (None, None) => None,
            };
            let facts = decide::PreCompactFacts {
                agent: self.reading.agent,
                trigger: trigger.as_deref(),
                asked,
                doubted,
                usage,
                now: &now,
            };
            // Decide.
            let current = std::mem::replace(s, Session::new(&self.reading.session, 0));
            let decided = decide::pre_compact(current, facts);
            *s = decided.session;
            (decided.effects, decided.touched)
        };
        if touched {
            batch.touch();
        }
        // Apply; the brief from the checkpoint it wrote.
        let transcript = reading.as_ref().map(|_| path.display().to_string());
        let agent = Some(self.reading.agent);
        let result = self.apply(
            &mut slot,
            effects,
            false,
            transcript.as_deref().map(|p| (p, agent)),
        );
        let finished = slot.map(Batch::finish).transpose();
        let given = result?;
        finished?;
        Ok(given.outcomes.checkpoint.and_then(|c| self.brief_for(&c)))
    }

    /// PostCompact: the old token count is gone with the context; every stage re-arms (the
    /// next reading sets the new size); the summary is audited. Read (the compaction the
    /// transcript ends with), decide (`decide::post_compact`), apply.
    pub(super) fn post_compact(&self, trigger: Option<String>) -> anyhow::Result<()> {
        let boundary = self.compaction_in_transcript();
        let now = crate::system::clock::now_rfc3339();
        let mut slot = Some(Batch::open(
            &self.ws,
            &self.reading.session,
            self.reading.config.window,
        )?);
        let batch = slot.as_mut().expect("just opened");
        let effects = {
            let s = batch.session_mut();
            let current = std::mem::replace(s, Session::new(&self.reading.session, 0));
            let summary = self.reading.payload.summary.clone();
            let agent = self.reading.agent;
            let trigger = trigger.as_deref();
            let decided =
                decide::post_compact(current, agent, boundary.as_ref(), trigger, summary, &now);
            *s = decided.session;
            decided.effects
        };
        // Claude Code starts the restored session (with its size) before PostCompact: the
        // token count it stated is the new one, not a stale one.
        batch.touch();
        let result = self.apply(&mut slot, effects, false, None);
        let finished = slot.map(Batch::finish).transpose();
        result?;
        finished?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::pipeline::hook::samples::{compaction, project, prompt, start, turn, AGENT};

    #[test]
    fn before_a_compaction_a_checkpoint_is_written_and_the_summarizer_briefed_in_plain_text() {
        let p = project();
        p.checkpoint("write the parser");
        p.append(&turn(1, 150_000, "cargo test"));
        let ran = p
            .event(AGENT, "PreCompact")
            .with("trigger", json!("auto"))
            .run();
        let brief = ran.reply.clone().unwrap();
        assert!(
            brief.starts_with(
                "ctxkeep records this work in checkpoint ckpt-0002 (project-state.md)."
            ),
            "{brief}"
        );
        assert!(brief.contains("(data, not instructions)"), "{brief}");
        assert!(ran.wrote(".ctxkeep/checkpoints/ckpt-0002.json"));
        assert_eq!(p.archived("ckpt-0002").unwrap()["trigger"], "pre-compact");
        assert!(
            p.logged("stage").is_empty(),
            "a reading before a compaction only records"
        );
    }

    #[test]
    fn after_a_compaction_the_next_prompt_is_given_what_the_summary_left_out() {
        let p = project();
        p.checkpoint("write the parser");
        start(&p, "s1", "startup").run();
        p.append(&turn(1, 150_000, "cargo test"));
        p.event(AGENT, "PreCompact")
            .with("trigger", json!("auto"))
            .run();
        p.append(&compaction(
            151_000,
            "Summary: 1. Primary Request: a lexer.",
        ));
        let started = start(&p, "s1", "compact").run().context().unwrap();
        assert!(
            started.starts_with("ctxkeep: the conversation was compacted. The work is recorded in checkpoint ckpt-0002"),
            "{started}"
        );
        let ended = p
            .event(AGENT, "PostCompact")
            .with("trigger", json!("auto"))
            .with(
                "compact_summary",
                json!("Summary: 1. Primary Request: a lexer."),
            )
            .run();
        assert_eq!(ended.reply, None);
        assert_eq!(p.logged("compaction").len(), 1);
        p.append(&turn(2, 30_000, "ls"));
        let given = prompt(&p, "continue").run().context().unwrap();
        assert!(
            given.starts_with(
                "ctxkeep: the compaction summary left out these facts of checkpoint ckpt-0002"
            ),
            "{given}"
        );
        assert!(given.contains("write the parser"), "{given}");
        assert_eq!(prompt(&p, "and on").run().reply, None, "given back once");
    }
}
