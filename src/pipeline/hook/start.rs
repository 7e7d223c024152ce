//! The start family: `SessionStart` by its source (a new session, a resume, a cleared or
//! compacted context) and a start deferred to the next prompt. One pass of the pipeline: read
//! (under the lock: the stated size's limit, whether the start is late, this session's own
//! checkpoint and the session chain), decide (`decide::start`, pure), apply (the usage
//! recorded, the gift given by `give_start.rs`, the agent's stale records swept), then the
//! reply, the text the gift gave.

use serde_json::json;

use super::Hook;
use crate::domain::checkpoint::Checkpoint;
use crate::domain::session::Session;
use crate::handoff::chain::Chain;
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::effects::StartGiven;
use crate::pipeline::tracking::{self, Options};

/// How long before a session start a compaction it was not told of may have begun (the
/// summarizer ran in between): the transcript's summary may not be older.
const UNSEEN_START_SLACK_SECS: i64 = 600;

impl Hook {
    /// SessionStart, by what it means (`decide::start_gift`): `compact` and `clear` give the
    /// resume prompt again on this agent session's link of the chain (no handoff), or after a
    /// compaction what its summary left out; `startup` gives the prompt when the checkpoint
    /// was given to no session yet; `resume` (and `fork`) only a short note, when the
    /// checkpoint changed since this agent session last saw it.
    pub(super) fn session_start(&self, source: &str) -> anyhow::Result<Option<String>> {
        // Read, before the lock: the compaction the transcript ends with.
        let boundary = match source {
            "compact" => self.compaction_in_transcript(),
            _ => None,
        };
        let payload = &self.reading.payload;
        let (ws, config) = (&self.ws, &self.reading.config);
        let env = |name: &str| std::env::var(name).ok();
        let now = crate::system::clock::now_rfc3339();
        let since = unseen_since();
        // Claude Code says how large a restored conversation is, and the model.
        let stated = payload.context_tokens.map(|_| self.stated_reading());
        let has_checkpoint = self.reading.sf.fm.checkpoint.is_some();
        let mut slot = Some(Batch::open(ws, &self.reading.session, config.window)?);
        let batch = slot.as_mut().expect("just opened");
        let had_record = batch.recorded();
        // Read, under the lock: a start after a compaction that an earlier event already gave
        // back, having noticed it in the transcript, is late.
        let late = source == "compact" && {
            let view = self.reading.view();
            view.catch_up_index(ws, batch.lock(), &self.reading.session, None);
            !crate::pipeline::session_index::restore_started(
                ws,
                batch.lock(),
                &self.reading.session,
            )
        };
        let offered = decide::start_offered(self.reading.agent, has_checkpoint, late);
        let offer = if offered { self.start_offer()? } else { None };
        let effects = {
            let (_, s) = batch.parts();
            let stated = stated.as_ref().map(|reading| {
                let options = Options {
                    record_only: true,
                    ..Options::default()
                };
                let sf = &self.reading.sf;
                let facts =
                    tracking::usage_facts(reading, &options, sf, config, had_record, &env, &now);
                // The limit for the window the stated size is measured at.
                crate::pipeline::read::usage_read(ws, s, facts, config)
            });
            let facts = decide::StartFacts {
                source,
                agent: self.reading.agent,
                has_checkpoint,
                late,
                boundary: boundary.as_ref(),
                stated,
                offer: offer
                    .as_ref()
                    .map(|(checkpoint, chain)| decide::Offer { checkpoint, chain }),
                settings: self.gift_settings(&since),
                transcript: payload.transcript.as_ref().map(|t| t.display().to_string()),
                now: &now,
            };
            // Decide.
            let current = std::mem::replace(s, Session::new(&self.reading.session, 0));
            let decided = decide::start(current, facts);
            *s = decided.session;
            decided.effects
        };
        batch.touch();
        // Apply; the reply is what the gift gave.
        let result = self.apply(&mut slot, effects, false, None);
        let finished = slot.map(Batch::finish).transpose();
        let given = result?;
        finished?;
        Ok((!given.waiting.is_empty()).then(|| given.waiting.join("\n")))
    }

    /// Read, for a start's gift: this session's own checkpoint (else the project's newest) and
    /// the session chain; None before the first checkpoint.
    fn start_offer(&self) -> anyhow::Result<Option<(Checkpoint, Chain)>> {
        let Some(c) = self.own_checkpoint() else {
            return Ok(None);
        };
        let chain = crate::handoff::chain::read(&self.ws)?;
        Ok(Some((c, chain)))
    }

    /// The project's settings a start's gift follows.
    fn gift_settings<'a>(&self, since: &'a str) -> decide::GiftSettings<'a> {
        decide::GiftSettings {
            give_back: self.reading.config.give_back,
            reminders: self.reading.config.reminders,
            since,
        }
    }

    /// A start given at a later event of the session, as `source` (`Effect::GiveWaitingStart`:
    /// deferred to the first real prompt, or a compaction seen only as a drop in usage; a
    /// compaction the transcript shows that no start announced, `mark`ed so): read (the
    /// offer), decide (`decide::start_gift`), give. Its text, for the reply.
    pub(super) fn later_start_in(
        &self,
        batch: &mut Batch<'_>,
        source: &str,
        mark: Option<&'static str>,
    ) -> anyhow::Result<Option<String>> {
        let offer = self.start_offer()?;
        let since = unseen_since();
        let (lock, s) = batch.parts();
        let offer = offer
            .as_ref()
            .map(|(checkpoint, chain)| decide::Offer { checkpoint, chain });
        let settings = self.gift_settings(&since);
        let policy = self.reading.agent.policy();
        let gift = decide::start_gift(s, source, offer, &settings, policy);
        let start = StartGiven {
            source: source.to_string(),
            gift,
            deferred: false,
            mark,
        };
        self.give_start(lock, s, start)
    }

    /// A start that waited for this event (`Effect::GiveWaitingStart`), given now.
    pub(super) fn pending_start_in(&self, batch: &mut Batch<'_>) -> anyhow::Result<Option<String>> {
        let Some(source) = batch.session_mut().waiting_start_given() else {
            return Ok(None);
        };
        self.later_start_in(batch, &source, None)
    }

    /// An agent whose integration keeps records outside the project (nothing else deletes
    /// them) drops those no session wrote for `records::KEPT_DAYS` days as a session starts,
    /// never this session's own: one listing of a folder, once per session
    /// (`Effect::SweepRecords`).
    pub(super) fn sweep_records(&self, lock: &crate::system::fsutil::Lock) {
        use crate::agents::records;
        let own = self.reading.payload.transcript.as_deref();
        let stale = records::stale(std::time::SystemTime::now(), Some(self.reading.agent), own);
        let removed = records::remove(stale);
        if !removed.is_empty() {
            let paths: Vec<String> = removed
                .iter()
                .map(|r| r.path.display().to_string())
                .collect();
            self.log(
                lock,
                "agent_records_removed",
                json!({ "agent": self.reading.agent, "older_than_days": records::KEPT_DAYS, "paths": paths }),
            );
        }
    }
}

/// The clock read for a restore that waits: a compaction not noted may have begun this long
/// before the start.
fn unseen_since() -> String {
    let then = chrono::Utc::now() - chrono::Duration::seconds(UNSEEN_START_SLACK_SECS);
    then.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::agents::Agent;
    use crate::pipeline::harness::Project;
    use crate::pipeline::hook::samples::{compaction, project, start, turn};

    #[test]
    fn a_new_session_is_given_the_resume_prompt_once_with_the_work_quoted_as_data() {
        let p = project();
        p.checkpoint("write the parser");
        let ran = start(&p, "s1", "startup").run();
        let said = ran.context().unwrap();
        assert!(
            said.starts_with("You are continuing work from a checkpoint"),
            "{said}"
        );
        assert!(said.contains("Recovered from ckpt-0001"), "{said}");
        assert!(said.contains("> - Next action: write the parser"), "{said}");
        assert!(said.contains("Begin your reply with the line `Resuming from ckpt-0001 (ctxkeep "));
        assert!(ran.wrote(".ctxkeep/chain.jsonl"), "{:?}", ran.written);
        assert_eq!(p.logged("session_start")[0]["resumed_from"], "ckpt-0001");
        // Another session starts on the same checkpoint: it was given already.
        assert_eq!(start(&p, "s2", "startup").run().reply, None);
    }

    #[test]
    fn a_resumed_conversation_is_told_only_what_changed_since_it_last_ran() {
        let p = project();
        p.checkpoint("write the parser");
        start(&p, "s1", "startup").run();
        assert_eq!(start(&p, "s1", "resume").run().reply, None, "nothing new");
        p.checkpoint("write the tests");
        let said = start(&p, "s1", "resume").run().context().unwrap();
        assert!(
            said.starts_with(
                "ctxkeep: since this session last ran, checkpoint ckpt-0002 (manual, "
            ),
            "{said}"
        );
        assert!(
            said.contains("> - Next action: write the tests (was: write the parser)"),
            "{said}"
        );
        assert!(!said.contains("You are continuing work"), "{said}");
    }

    #[test]
    fn before_the_first_checkpoint_a_start_gives_nothing_and_fails_nothing() {
        let p = project();
        let ran = start(&p, "s1", "startup").run();
        assert_eq!(ran.error, None);
        assert_eq!(ran.reply, None);
        assert_eq!(p.logged("session_start").len(), 1);
    }

    /// The lines of the session chain (`.ctxkeep/chain.jsonl`), as JSON.
    fn chain(p: &Project) -> Vec<serde_json::Value> {
        p.read(".ctxkeep/chain.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_cleared_context_is_given_the_prompt_again_on_its_own_link_with_a_new_nonce() {
        let p = project();
        p.checkpoint("write the parser");
        start(&p, "s1", "startup").run();
        let opened = chain(&p);
        assert_eq!(opened.len(), 1, "{opened:?}");
        let ran = start(&p, "s1", "clear").run();
        let said = ran.context().unwrap();
        assert!(
            said.starts_with("You are continuing work from a checkpoint"),
            "{said}"
        );
        let lines = chain(&p);
        assert_eq!(
            lines.len(),
            2,
            "a restore on the link, no new link: {lines:?}"
        );
        assert_eq!(lines[1]["kind"], "restore", "{lines:?}");
        let nonce = lines[1]["nonce"].as_str().unwrap();
        assert_ne!(nonce, lines[0]["nonce"].as_str().unwrap());
        assert!(said.contains(nonce), "{said}");
        let logged = &p.logged("session_start")[1];
        assert_eq!(
            (logged["source"].as_str(), logged["restore"].as_bool()),
            (Some("clear"), Some(true))
        );
        assert_eq!(p.session("s1").unwrap()["seen_checkpoint"], "ckpt-0001");
    }

    #[test]
    fn a_compaction_codex_starts_after_is_given_back_what_the_summary_left_out() {
        let p = project();
        p.checkpoint("write the parser");
        let codex = |name: &str| {
            p.event(Agent::Codex, name)
                .with("transcript_path", json!(null))
                .with("session_id", json!("c1"))
        };
        codex("SessionStart").with("source", json!("startup")).run();
        codex("PostCompact")
            .with("trigger", json!("auto"))
            .with("compact_summary", json!("Summary: we discussed lexers."))
            .run();
        let said = codex("SessionStart")
            .with("source", json!("compact"))
            .run()
            .context()
            .unwrap();
        assert!(
            said.starts_with(
                "ctxkeep: the compaction summary left out these facts of checkpoint ckpt-0001"
            ),
            "{said}"
        );
        assert!(said.contains("write the parser"), "{said}");
        let logged = p.logged("session_start");
        assert_eq!(logged[1]["after_summary"], "missing", "{logged:?}");
    }

    #[test]
    fn with_give_back_off_a_compaction_gives_nothing_and_the_summary_carries_the_work() {
        let p = Project::with_settings("compaction:\n  claude-code: 160000\ngive_back: false\n");
        p.checkpoint("write the parser");
        start(&p, "s1", "startup").run();
        p.append(&turn(1, 150_000, "cargo test"));
        p.append(&compaction(151_000, "Summary: a lexer."));
        let ran = start(&p, "s1", "compact").run();
        assert_eq!((ran.error, ran.reply), (None, None));
        assert_eq!(p.logged("session_start").len(), 2);
    }

    #[test]
    fn a_start_gemini_would_put_before_the_prompt_waits_for_the_first_real_prompt() {
        let p = project();
        p.checkpoint("write the parser");
        let gemini = |name: &str| {
            p.event(Agent::Gemini, name)
                .with("transcript_path", json!(null))
                .with("session_id", json!("g1"))
        };
        let started = gemini("SessionStart")
            .with("source", json!("startup"))
            .run();
        assert_eq!(started.context(), None, "{:?}", started.reply);
        assert_eq!(p.logged("session_start")[0]["deferred"], true);
        let slash = gemini("BeforeAgent")
            .with("prompt", json!("/compress"))
            .run();
        assert_eq!(slash.context(), None, "not with a slash command");
        let given = gemini("BeforeAgent")
            .with("prompt", json!("fix the parser"))
            .run()
            .context()
            .unwrap();
        assert!(
            given.starts_with("You are continuing work from a checkpoint"),
            "{given}"
        );
        let again = gemini("BeforeAgent").with("prompt", json!("and on")).run();
        assert_eq!(again.context(), None, "given once");
    }
}
