//! The compaction family: `PreCompact` (a checkpoint, then the summarizer's brief),
//! `PostCompact` (the stages re-arm, the summary is audited), a compaction seen only as the
//! figure's drop, and one the transcript shows that no start announced. What is given back
//! after one is `after_compaction`'s.

use serde_json::json;

use super::{Answer, Hook};
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::tracking;

impl Hook {
    /// The session updated from the transcript, recording only, where a checkpoint must follow
    /// whatever the transcript holds (before a compaction): a transcript that cannot be read is
    /// logged, and the checkpoint is written from the session's last token count, as it is when
    /// there is no transcript.
    pub(super) fn update_or_log_in(
        &self,
        batch: &mut Batch<'_>,
        usage: Option<anyhow::Result<crate::transcripts::usage::Usage>>,
    ) -> anyhow::Result<Option<tracking::Applied>> {
        match self.update_in(batch, usage, true, false) {
            Ok(applied) => Ok(applied),
            Err(e) => {
                self.log(
                    batch.lock(),
                    "transcript_unreadable",
                    json!({
                        "session": self.reading.session, "agent": self.reading.agent,
                        "message": crate::system::redact::redact(&format!("{e:#}")),
                    }),
                );
                Ok(None)
            }
        }
    }

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
        let (lock, s) = batch.parts();
        let given = self.start_reply(lock, s, "compact")?;
        let mut event = given.event(self, "compact", false);
        event["noticed_in_transcript"] = json!(true);
        self.log(lock, "session_start", event);
        Ok(given.text())
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own token count
    /// before it, the trigger, the model): read at the events that follow a compaction, so
    /// the learning never takes ctxkeep's last reading for the agent's point.
    pub(super) fn compaction_in_transcript(&self) -> Option<crate::transcripts::usage::Usage> {
        self.reading.view().compaction()
    }

    /// PreCompact: a checkpoint with the budget just before compaction. The
    /// token count is recorded without firing stages: their instructions could
    /// not reach the model now, and one checkpoint is enough.
    /// Where the agent takes plain text as the summarizer's instructions,
    /// the answer is ctxkeep's brief, built from that checkpoint.
    pub(super) fn pre_compact(&self, trigger: Option<String>) -> anyhow::Result<Option<Answer>> {
        // A compaction the user asked for always gets its checkpoint; so does an idle one
        // (Claude Code's, before the prompt cache expires): nobody is at the keyboard, and
        // this checkpoint is what a cold start will read.
        let asked = matches!(trigger.as_deref(), Some("manual" | "idle"));
        let doubted = self.reading.agent.policy().doubts_pre_compact(asked);
        let extra = json!({ "session": self.reading.session, "agent": self.reading.agent, "compaction": trigger });
        // Read before the lock: the usage the transcript records.
        let usage = self.reading.view().usage();
        let written = self.in_batch(|batch| {
            // The token count this session had before: a resumed run's first event
            // may name a transcript with no token count in it yet.
            let known = batch.session().tokens().filter(|_| doubted);
            // The token count now is ctxkeep's last reading, not where the agent compacts: that is
            // learned from the agent's own token count once the compaction is in the transcript.
            let applied = self.update_or_log_in(batch, usage)?;
            if doubted {
                let now = applied.as_ref().and_then(|a| a.session.tokens()).or(known);
                let name = self.reading.agent.display_name();
                if now.is_some() {
                    batch.touch();
                }
                if let Some(why) = decide::compacts_nothing(batch.session_mut(), now, name) {
                    self.log(
                        batch.lock(),
                        "checkpoint_skipped",
                        json!({
                            "trigger": "pre-compact", "session": self.reading.session, "agent": self.reading.agent,
                            "why": why,
                        }),
                    );
                    return Ok(None);
                }
            }
            let budget = match applied {
                Some(applied) => applied.session.budget(),
                None => batch.session().budget(),
            };
            let written = self.auto_checkpoint_in(batch, "pre-compact", budget, extra, asked)?;
            self.compaction_begins_in(batch, &written);
            Ok(Some(written))
        })?;
        match written {
            Some(written) => Ok(self.brief_for(&written)),
            None => Ok(None),
        }
    }

    /// PostCompact: the old token count is gone with the context; every stage
    /// re-arms (the next reading sets the new size).
    pub(super) fn post_compact(&self, trigger: Option<String>) -> anyhow::Result<()> {
        let boundary = self.compaction_in_transcript();
        self.in_batch(|batch| {
            // Claude Code starts the restored session (with its size) before
            // PostCompact: that token count is the new one, not a stale one.
            let now = crate::system::clock::now_rfc3339();
            let s = batch.session_mut();
            decide::compaction_ended(s, boundary.as_ref(), trigger.as_deref(), &now);
            batch.touch();
            self.log(
                batch.lock(),
                "compaction",
                json!({ "session": self.reading.session, "agent": self.reading.agent, "trigger": trigger }),
            );
            Ok(())
        })?;
        self.audit_summary(trigger, self.reading.payload.summary.clone())
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
