//! The track family: a prompt or a tool call (`UserPromptSubmit`, `PostToolUse` and their
//! peers), the end of a turn (`Stop`) and a model switch. One pass of the pipeline: read (the
//! usage before the lock; under it, the index's catch-up, loop detection's new calls, the
//! limit), decide (`decide::track`, pure), apply (the effects in order on the event's batch),
//! then the reply, rendered from the loops decided and what the effects gave.

use serde_json::json;

use super::{Given, Hook};
use crate::agents::Agent;
use crate::domain::config::Config;
use crate::domain::session::Session;
use crate::domain::workspace::Workspace;
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::effects::Reach;
use crate::pipeline::tracking::{self, Options, Reading};
use crate::transcripts::usage::Usage;

impl Hook {
    /// UserPromptSubmit, PostToolUse (and their Codex/Gemini peers): the stages crossed fire,
    /// loops are looked for, and the instructions go to the model. Events that cannot reply
    /// (Stop) only track. The project lock is taken once (unless a compaction is being given
    /// back, which is rare), the session's record written once.
    pub(super) fn track(&self, reply: bool) -> anyhow::Result<Option<String>> {
        // Read: the transcript, once the agent wrote this event's call to it, and the usage it
        // records, before the lock.
        let policy = self.reading.agent.policy();
        if policy.waits_for_call(self.reading.payload.in_subagent) {
            self.await_call();
        }
        let usage = self.reading.view().usage().transpose()?;
        let mut slot = Some(Batch::open(
            &self.ws,
            &self.reading.session,
            self.reading.config.window,
        )?);
        let result = self.track_in(&mut slot, reply, usage);
        let finished = slot.map(Batch::finish).transpose();
        let said = result?;
        finished?;
        // Reply: the stages' instruction is rendered from the templates after the lock.
        said.render(&self.ws, &self.reading.config)
    }

    /// [`track`](Self::track) on the batch in `slot` (empty while a rare effect runs with its
    /// own lock, then opened again): the reads under the lock, the decision, the effects.
    fn track_in<'w>(
        &'w self,
        slot: &mut Option<Batch<'w>>,
        reply: bool,
        usage: Option<Usage>,
    ) -> anyhow::Result<Said> {
        let (ws, config) = (&self.ws, &self.reading.config);
        let payload = &self.reading.payload;
        let view = self.reading.view();
        let batch = self.reopen(slot)?;
        // Read, under the lock: the session's index learns what the transcript gained since
        // the last event; loop detection's new calls are read in the same pass when they can be.
        let loops = config.loop_limits.map(|_| batch.session());
        let index = view.catch_up_index(ws, batch.lock(), &self.reading.session, loops);
        let had_record = batch.recorded();
        let reach = if reply { Reach::Now } else { Reach::Later };
        let transcript_agent = usage.as_ref().and_then(|u| u.agent.parse::<Agent>().ok());
        let path = self.reading.transcript().unwrap_or_default();
        let reading = usage.map(|u| Reading::Transcript(Box::new(u), path.display().to_string()));
        let env = |name: &str| std::env::var(name).ok();
        let now = crate::system::clock::now_rfc3339();
        let decided = {
            let (_, s, on_disk) = batch.split();
            let calls = config.loop_limits.map(|limits| {
                let tool = payload.tool.as_ref();
                let calls = crate::pipeline::read::calls_read(
                    ws,
                    view,
                    s,
                    on_disk,
                    tool,
                    payload.cwd.as_deref(),
                );
                (calls, limits)
            });
            let usage = reading.as_ref().map(|reading| {
                let facts = decide::UsageFacts {
                    reading,
                    given_window: None,
                    messages: None,
                    reach,
                    config,
                    front_window: self.reading.sf.fm.window,
                    had_record,
                    env: &env,
                    now: &now,
                };
                // The limit for the window and model the reading is measured at.
                crate::pipeline::read::usage_read(ws, s, facts, config)
            });
            let facts = decide::TrackFacts {
                reach,
                agent: self.reading.agent,
                policy: self.reading.agent.policy(),
                payload,
                has_checkpoint: self.reading.sf.fm.checkpoint.is_some(),
                compaction_unannounced: index.is_some_and(|i| i.compaction_unannounced()),
                calls,
                usage,
                requests: config.checkpoint_requests.is_some(),
                now: &now,
            };
            // Decide.
            let current = std::mem::replace(s, Session::new(&self.reading.session, config.window));
            let decide::TrackDecided {
                session,
                effects,
                loops,
                touched,
            } = decide::track(current, facts);
            *s = session;
            (effects, loops, touched)
        };
        let (effects, loops, touched) = decided;
        if touched {
            batch.touch();
        }
        // Apply.
        let loops = loops.into_iter().map(|(_, text)| text).collect();
        let transcript = (reading.is_some()).then(|| path.display().to_string());
        let transcript = transcript.as_deref().map(|p| (p, transcript_agent));
        let given = self.apply(slot, effects, reply, transcript)?;
        Ok(Said { given, loops })
    }

    /// The size the payload states (`context_tokens`, and the model), as a reading.
    pub(super) fn stated_reading(&self) -> Reading {
        Reading::Stated {
            agent: self.reading.agent,
            tokens: self.reading.payload.context_tokens,
            model: self.reading.payload.model.clone(),
            window: None,
        }
    }

    /// PostModelSwitch: the token count the agent states is a reading on the new model, whose
    /// window and compaction point apply from now (what was reported or proved for the old
    /// model's window is forgotten, `tracking`); a stage that the smaller window crosses is
    /// given with the new model's next request.
    pub(super) fn model_switch(&self) -> anyhow::Result<Option<String>> {
        let applied = self.in_batch(|batch| {
            let reading = self.stated_reading();
            let (ws, sf, config) = (&self.ws, &self.reading.sf, &self.reading.config);
            let options = Options::default();
            let applied =
                tracking::apply_batch(ws, batch, sf, config, reading, options, &self.out)?;
            let s = &applied.session;
            self.log(
                batch.lock(),
                "model_switch",
                json!({
                    "session": self.reading.session, "agent": self.reading.agent, "model": s.model(),
                    "tokens": s.tokens(), "window": s.window(), "limit": s.limit(),
                }),
            );
            Ok(applied)
        })?;
        let texts = tracking::instructions(&self.ws, &self.reading.config, &applied)?;
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }

    /// Counts the tool call toward a checkpoint request ([`crate::pipeline::requests`]) and
    /// makes one when a natural point is reached; `stage_reached_model`: a stage's
    /// instruction goes out with this event and asks for the same.
    pub(super) fn checkpoint_request_in(
        &self,
        batch: &mut Batch<'_>,
        stage_reached_model: bool,
    ) -> Option<String> {
        let settings = self.reading.config.checkpoint_requests?;
        let current = self
            .reading
            .sf
            .fm
            .checkpoint
            .as_ref()
            .map(|c| c.id.as_str());
        let s = batch.session_mut();
        let own = s.seen_checkpoint().map(str::to_string);
        let request = decide::checkpoint_request(
            s.requests_mut(),
            &settings,
            &self.reading.payload,
            current,
            own.as_deref(),
            stage_reached_model,
        );
        batch.touch();
        let request = request?;
        let mcp = crate::agents::mcp_registration::mcp_registered(
            &self.ws.root,
            Some(self.reading.agent),
        );
        let why = crate::pipeline::requests::read_message(request.why.clone(), &self.ws.root);
        let text = crate::pipeline::requests::text(&why, &request.state, mcp);
        let line = request.log(
            &self.reading.session,
            self.reading.agent,
            text.chars().count(),
        );
        self.log(batch.lock(), line.event, line.fields);
        Some(text)
    }
}

/// What a track event says, in the order its reply gives it: what its effects gave (what
/// waited, the stages, a request), then the loops it decided to give.
pub(super) struct Said {
    given: Given,
    loops: Vec<String>,
}

impl Said {
    /// The reply's text; None when the event says nothing.
    fn render(self, ws: &Workspace, config: &Config) -> anyhow::Result<Option<String>> {
        let mut texts = self.given.waiting;
        if let Some(stages) = &self.given.stages {
            let said = tracking::StagesSaid {
                session: &stages.session,
                recorded: stages.recorded.as_ref(),
                to_say: &stages.to_say,
            };
            texts.extend(tracking::stage_instructions(ws, config, &said)?);
        }
        texts.extend(self.given.request);
        texts.extend(self.loops);
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::agents::Agent;
    use crate::pipeline::harness::Project;
    use crate::pipeline::hook::samples::{project, prompt, tool_call, turn, AGENT};

    #[test]
    fn a_tool_call_below_every_stage_says_nothing_and_records_the_reading() {
        let p = project();
        p.checkpoint("write the parser");
        p.append(&turn(1, 20_000, "cargo test"));
        let ran = tool_call(&p, 1, "cargo test").run();
        assert_eq!(ran.error, None);
        assert_eq!(ran.reply, None);
        assert!(ran.wrote(".ctxkeep/sessions/s1.json"), "{:?}", ran.written);
        assert_eq!(p.session("s1").unwrap()["tokens"], 20_000);
        assert!(p.logged("stage").is_empty());
    }

    #[test]
    fn a_tool_call_past_every_stage_says_the_highest_once_and_writes_its_checkpoint() {
        let p = project();
        p.checkpoint("write the parser");
        p.append(&turn(1, 20_000, "cargo test"));
        tool_call(&p, 1, "cargo test").run();
        p.append(&turn(2, 158_000, "cargo test"));
        let ran = tool_call(&p, 2, "cargo test").run();
        let reply = ran.reply.as_deref().unwrap();
        assert!(
            reply.starts_with(
                r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"#
            ),
            "{reply}"
        );
        let said = ran.context().unwrap();
        assert_eq!(said.matches("ctxkeep: context is at").count(), 1, "{said}");
        assert!(said.contains("stage-98 (handoff)"), "{said}");
        assert!(said.chars().count() <= 1_200, "{said}");
        let stages: Vec<_> = p
            .logged("stage")
            .iter()
            .map(|l| l["stage"].clone())
            .collect();
        assert_eq!(stages, ["stage-80", "stage-90", "stage-95", "stage-98"]);
        // One checkpoint for the jump, named in what the model is told.
        assert!(
            ran.wrote(".ctxkeep/checkpoints/ckpt-0002.json"),
            "{:?}",
            ran.written
        );
        assert!(said.contains("ckpt-0002"), "{said}");
        assert_eq!(p.archived("ckpt-0002").unwrap()["trigger"], "stage-98");
    }

    #[test]
    fn a_stage_crossed_at_the_end_of_a_turn_is_given_with_the_next_prompt_once() {
        let p = project();
        p.checkpoint("write the parser");
        p.append(&turn(1, 140_000, "cargo test"));
        let stop = p.event(AGENT, "Stop").run();
        assert_eq!(stop.reply, None);
        assert_eq!(p.logged("stage").len(), 1, "the stage fired at Stop");
        let said = prompt(&p, "go on").run().context().unwrap();
        assert!(said.contains("stage-80"), "{said}");
        assert_eq!(prompt(&p, "and on").run().reply, None, "given once");
    }

    #[test]
    fn an_agent_that_reads_stdout_as_json_gets_an_empty_object_when_nothing_is_said() {
        let p = Project::new();
        let ran = p
            .event(Agent::Gemini, "AfterTool")
            .with("tool_name", json!("run_shell_command"))
            .run();
        assert_eq!(ran.error, None);
        assert_eq!(ran.reply.as_deref(), Some("{}"));
    }
}
