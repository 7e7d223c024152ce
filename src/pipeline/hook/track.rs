//! The track family: a prompt or a tool call (`UserPromptSubmit`, `PostToolUse` and their
//! peers), the end of a turn (`Stop`) and a model switch. The reading moves the session, the
//! stages crossed fire, a loop or a checkpoint request is said, and a start or a compaction
//! that waits is given with the reply.

use serde_json::json;

use super::Hook;
use crate::domain::config::Config;
use crate::domain::workspace::Workspace;
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::effects::Reach;
use crate::pipeline::tracking::{self, Options, Reading};
use crate::transcripts::usage::Usage;

impl Hook {
    /// UserPromptSubmit, PostToolUse (and their Codex/Gemini peers): the
    /// stages crossed fire, loops are looked for, and the instructions
    /// go to the model. Events that cannot reply (Stop) only track.
    /// One pass of the pipeline (`crate::pipeline`): read, then decide and apply under the
    /// project lock, taken once (unless a compaction is being given back, which is rare),
    /// with the session's record written once; then the reply, rendered from what was said.
    pub(super) fn track(&self, reply: bool) -> anyhow::Result<Option<String>> {
        // Read: the transcript, once the agent wrote this event's call to it, and the usage it
        // records, before the lock.
        let policy = self.reading.agent.policy();
        if policy.waits_for_call(self.reading.payload.in_subagent) {
            self.await_call();
        }
        let usage = self.reading.view().usage();
        // Decide and apply, on the event's batch.
        let mut slot = Some(Batch::open(
            &self.ws,
            &self.reading.session,
            self.reading.config.window,
        )?);
        let result = self.track_in(&mut slot, reply, policy, usage);
        let finished = slot.map(Batch::finish).transpose();
        let said = result?;
        finished?;
        // Reply: the stages' instruction is rendered from the templates after the lock.
        said.render(&self.ws, &self.reading.config)
    }

    /// [`track`](Self::track)'s steps on the batch in `slot` (empty while a rare step runs
    /// with its own lock, then opened again).
    pub(super) fn track_in<'w>(
        &'w self,
        slot: &mut Option<Batch<'w>>,
        reply: bool,
        policy: &crate::agents::policy::Policy,
        usage: Option<anyhow::Result<Usage>>,
    ) -> anyhow::Result<Said> {
        let batch = self.reopen(slot)?;
        // The session's index learns what the transcript gained since the last event.
        // Loop detection's new calls are read in the same pass when they can be.
        let loops = self.reading.config.loop_limits.map(|_| batch.session());
        let index = self.reading.view().catch_up_index(
            &self.ws,
            batch.lock(),
            &self.reading.session,
            loops,
        );
        // A compaction the transcript shows and no session start answered: given back at
        // this event, when its reply reaches the model.
        let unannounced = reply
            && self.reading.sf.fm.checkpoint.is_some()
            && index.is_some_and(|i| i.compaction_unannounced());
        // Loops first: a stage's checkpoint then has this call's outcome.
        let loops = self.loops_in(batch, reply)?;
        let applied = self.update_in(batch, usage, false, !reply)?;
        self.acknowledge_in(batch.lock());
        // The drop is measured from the token count this update replaced.
        let before = applied.as_ref().and_then(|a| a.previous.as_ref());
        if let (Some(before), Some(applied)) = (before, &applied) {
            let recorded = applied.transcript.as_ref().is_some_and(|t| t.compacted);
            if decide::compaction_by_drop(policy, before, &applied.session, recorded) {
                let noted = self.note_compression_in(batch, before, &applied.session);
                if noted {
                    // The audit reads and writes on its own lock.
                    self.release(slot)?;
                    self.audit_summary(Some("detected".into()), None)?;
                }
            }
        }
        let mut said = Said::default();
        let texts = &mut said.waiting;
        if unannounced {
            texts.extend(self.unannounced_compaction(slot)?);
        }
        // A line the pre-tool hook could not give (what a snapshot left out), once.
        if reply && self.reading.payload.after_tool() {
            texts.extend(self.reopen(slot)?.session_mut().waiting_notes_given());
        }
        // A start deferred to this event, or left by a compaction seen only now.
        let reach = if reply { Reach::Now } else { Reach::Later };
        if decide::gives_waiting_start(policy, reach, self.reading.payload.prompt.as_deref()) {
            texts.extend(self.pending_start_in(self.reopen(slot)?)?);
        }
        // What a compaction's summary left out, once it can be read (the
        // session record is already loaded: nothing is read when none waits).
        if let (Some(applied), true) = (&applied, reply) {
            if applied
                .session
                .after_compaction()
                .is_some_and(|a| a.waiting.is_some())
            {
                self.release(slot)?;
                texts.extend(self.deliver_after_compaction()?);
            }
        }
        // The stages to tell the model about, rendered with the reply.
        let stage_reaches_model = reply && applied.as_ref().is_some_and(|a| !a.to_say.is_empty());
        said.stages = applied.filter(|_| stage_reaches_model);
        // After a tool call, a checkpoint asked for at a natural point, unless a stage just did.
        if reply && self.reading.payload.after_tool() && !self.reading.payload.in_subagent {
            said.request = self.checkpoint_request_in(self.reopen(slot)?, stage_reaches_model);
        }
        said.loops = loops;
        Ok(said)
    }

    /// Updates the session in the event's batch from the transcript's `usage` (read before the
    /// lock); None when there is no transcript yet.
    pub(super) fn update_in(
        &self,
        batch: &mut Batch<'_>,
        usage: Option<anyhow::Result<Usage>>,
        record_only: bool,
        deferred: bool,
    ) -> anyhow::Result<Option<tracking::Applied>> {
        let Some(usage) = usage else {
            return Ok(None);
        };
        let usage = usage?;
        let path = self.reading.transcript().unwrap_or_default();
        let reading = Reading::Transcript(Box::new(usage), path.display().to_string());
        let options = Options {
            record_only,
            deferred,
            view: Some(self.reading.view()),
            ..Options::default()
        };
        let applied = tracking::apply_batch(
            &self.ws,
            batch,
            &self.reading.sf,
            &self.reading.config,
            reading,
            options,
            &self.out,
        )?;
        Ok(Some(applied))
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

/// What a track event says, in the order its reply gives it.
#[derive(Default)]
pub(super) struct Said {
    /// What waited for this event: a compaction given back, a deferred start.
    waiting: Vec<String>,
    /// The reading whose stages reach the model now: their instruction, rendered after the
    /// lock.
    stages: Option<tracking::Applied>,
    /// A checkpoint request made now.
    request: Option<String>,
    /// The loops to give now.
    loops: Vec<String>,
}

impl Said {
    /// The reply's text; None when the event says nothing.
    fn render(self, ws: &Workspace, config: &Config) -> anyhow::Result<Option<String>> {
        let mut texts = self.waiting;
        if let Some(applied) = &self.stages {
            texts.extend(tracking::instructions(ws, config, applied)?);
        }
        texts.extend(self.request);
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
