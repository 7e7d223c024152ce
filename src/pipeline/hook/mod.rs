//! What an agent's hook event does: track usage and fire stages, write a
//! checkpoint before compaction or at the end, inject the resume prompt at
//! a session's start. The `hook` command reads the payload and replies.

use crate::agents::payload::{Action, Payload};
use crate::agents::Agent;
use crate::context::stages::FiredStage;
use crate::domain::checkpoint::Checkpoint;
use crate::domain::session::Session;
use crate::domain::workspace::Workspace;
use crate::pipeline::apply::{self, Batch, Outcomes};
use crate::pipeline::effects::Effect;
use crate::pipeline::read::Reading;
use crate::system::output::Output;

mod after_compaction;
mod compaction;
mod destructive;
mod end;
mod give_start;
mod late_call;
pub mod reply;
mod start;
mod steps;
mod track;

/// Claude Code's limit on injected text (longer text is replaced by a preview).
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// What a hook answers the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Text for the model's context (`additionalContext`).
    Context(String),
    /// Plain text the agent takes as it is (Claude Code's `PreCompact`: the
    /// summarizer's instructions).
    Plain(String),
}

/// How long a pre-tool hook waits for a busy lock before its checkpoint
/// (its snapshot is taken without it).
const DESTRUCTIVE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// One event of an agent's hook: the project it runs in and what it read.
pub struct Hook {
    ws: Workspace,
    /// The payload, the settings, the transcript: read once, before any decision.
    reading: Reading,
    /// Warnings from the shared code go nowhere: on exit 0 the agent only
    /// logs stderr, and a line there would read as a failure.
    out: Output,
}

impl Hook {
    /// Resolves what the event needs: the project's state, its settings and
    /// the agent's session id.
    pub fn new(
        mut ws: Workspace,
        agent: Agent,
        payload: Payload,
        out: Output,
    ) -> anyhow::Result<Hook> {
        // A pre-tool hook holds up the agent's command: a busy lock is waited for only briefly.
        if matches!(payload.action, Action::BeforeDestructive { .. }) {
            ws.lock_timeout = ws.lock_timeout.min(DESTRUCTIVE_LOCK_WAIT);
        }
        let reading = Reading::of(&ws, agent, payload)?;
        Ok(Hook { ws, reading, out })
    }

    /// Acts on the event; returns what to answer, if anything.
    pub fn handle(&self) -> anyhow::Result<Option<Answer>> {
        if let Some(mark) = &self.reading.payload.written_mark {
            self.await_written(mark);
        }
        let context = match self.reading.payload.action.clone() {
            Action::Track { reply } => self.track(reply),
            Action::PreCompact { trigger } => return self.pre_compact(trigger),
            Action::SessionStart { source } => self.session_start(&source),
            Action::SessionEnd { reason } => self.session_end(reason).map(|_| None),
            Action::PostCompact { trigger } => self.post_compact(trigger).map(|_| None),
            Action::ModelSwitch => self.model_switch(),
            Action::BeforeDestructive { command } => self.before_destructive(&command),
            Action::Ignore => Ok(None),
        };
        context.map(|c| c.map(Answer::Context))
    }
    /// The batch in `slot`, opened again if a rare step let it go.
    fn reopen<'a, 'w>(
        &'w self,
        slot: &'a mut Option<Batch<'w>>,
    ) -> anyhow::Result<&'a mut Batch<'w>> {
        if slot.is_none() {
            *slot = Some(Batch::open(
                &self.ws,
                &self.reading.session,
                self.reading.config.window,
            )?);
        }
        Ok(slot.as_mut().expect("just opened"))
    }

    /// Writes the batch in `slot` and lets its lock go, for a step that takes its own.
    fn release(&self, slot: &mut Option<Batch<'_>>) -> anyhow::Result<()> {
        if let Some(batch) = slot.take() {
            batch.finish()?;
        }
        Ok(())
    }

    /// Runs `steps` on a batch of this event's session (`crate::pipeline::apply`): one lock,
    /// and one write of the session at the end, whether the steps succeed or not (as each
    /// step's own write would have left it).
    fn in_batch<T>(
        &self,
        steps: impl FnOnce(&mut Batch<'_>) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let mut batch = Batch::open(&self.ws, &self.reading.session, self.reading.config.window)?;
        let result = steps(&mut batch);
        let finished = batch.finish();
        let value = result?;
        finished?;
        Ok(value)
    }

    /// The apply stage of an event: its effects run in order on the batch in `slot` (empty
    /// while an effect runs with its own lock, then opened again): those every entry shares
    /// through [`apply::run_one`], the hook's own here (a restore's echo, an audit on its own
    /// lock, what waited for this event, a checkpoint request). `reply`: the event's reply
    /// reaches the model now; `transcript`: the one a stage's checkpoint reads.
    fn apply<'w>(
        &'w self,
        slot: &mut Option<Batch<'w>>,
        effects: Vec<Effect>,
        reply: bool,
        transcript: Option<(&str, Option<Agent>)>,
    ) -> anyhow::Result<Given> {
        let mut given = Given::default();
        let said = &mut given;
        for effect in effects {
            match effect {
                Effect::Acknowledge => self.acknowledge_in(self.reopen(slot)?.lock()),
                Effect::AuditSummary { trigger, summary } => {
                    // The audit reads and writes on its own lock.
                    self.release(slot)?;
                    self.audit_summary(trigger, summary)?;
                }
                Effect::GiveUnannouncedCompaction => {
                    said.waiting.extend(self.unannounced_compaction(slot)?);
                }
                Effect::GiveNotes(lines) => said.waiting.extend(lines),
                Effect::GiveWaitingStart => {
                    said.waiting
                        .extend(self.pending_start_in(self.reopen(slot)?)?);
                }
                Effect::GiveStart(start) => {
                    let (lock, s) = self.reopen(slot)?.parts();
                    said.waiting.extend(self.give_start(lock, s, start)?);
                }
                Effect::SweepRecords => self.sweep_records(self.reopen(slot)?.lock()),
                Effect::GiveBack => {
                    self.release(slot)?;
                    said.waiting.extend(self.give_back()?);
                }
                Effect::CheckpointRequest => {
                    let stage_given = said.stages.is_some();
                    said.request = self.checkpoint_request_in(self.reopen(slot)?, stage_given);
                }
                shared => {
                    let settles = matches!(shared, Effect::Settle(_));
                    let batch = self.reopen(slot)?;
                    let (lock, s) = batch.parts();
                    let ctx = apply::Ctx {
                        ws: &self.ws,
                        lock,
                        out: &self.out,
                        transcript,
                        view: Some(self.reading.view()),
                    };
                    apply::run_one(&ctx, s, shared, &mut said.outcomes)?;
                    // The stages that reach the model now, with the session as they left it.
                    let to_say = said.outcomes.settled.as_ref().map(|x| &x.to_say);
                    if let (true, true, Some(to_say)) = (settles, reply, to_say) {
                        if !to_say.is_empty() {
                            said.stages = Some(Stages {
                                session: s.clone_without_loops(),
                                recorded: match &said.outcomes.stage_checkpoint {
                                    Some(w) => Some(w.checkpoint().clone()),
                                    None => self.reading.sf.fm.checkpoint.clone(),
                                },
                                to_say: to_say.clone(),
                            });
                        }
                    }
                }
            }
        }
        Ok(given)
    }

    fn log(&self, lock: &crate::system::fsutil::Lock, event: &str, fields: serde_json::Value) {
        if let Err(e) = crate::domain::events::append(&self.ws, lock, event, fields) {
            self.out
                .warn(&format!("the event log could not be updated: {e}"));
        }
    }
}

/// What an event's effects gave, for its reply.
#[derive(Default)]
pub(super) struct Given {
    /// What waited for this event: a compaction given back, a deferred start.
    waiting: Vec<String>,
    /// The stages that reach the model now: their instruction, rendered after the lock.
    stages: Option<Stages>,
    /// A checkpoint request made now.
    request: Option<String>,
    /// What the shared effects gave (a checkpoint written, the stages settled).
    outcomes: Outcomes,
}

/// The stages an event says, as their settling left the session.
struct Stages {
    session: Session,
    recorded: Option<Checkpoint>,
    to_say: Vec<FiredStage>,
}

#[cfg(test)]
pub(crate) mod samples {
    //! Claude Code's transcript lines and tool-call payloads, as the handler tests feed them
    //! to the in-process harness (`crate::pipeline::harness`).

    use serde_json::{json, Value};

    use crate::agents::Agent;
    use crate::pipeline::harness::{Event, Project};

    pub const AGENT: Agent = Agent::ClaudeCode;

    /// A project whose Claude Code sessions compact at 160,000 tokens, whatever the machine's
    /// own Claude Code settings say.
    pub fn project() -> Project {
        Project::with_settings("compaction:\n  claude-code: 160000\n")
    }

    /// A prompt and the reply that made tool call `tu_N` running `command`, the context then
    /// at `tokens`.
    pub fn turn(n: u32, tokens: u64, command: &str) -> [Value; 2] {
        [
            json!({
                "type": "user", "uuid": format!("u{n}"), "sessionId": "s1",
                "timestamp": "2026-01-15T09:00:00Z",
                "message": { "role": "user", "content": format!("prompt {n}") },
            }),
            json!({
                "type": "assistant", "uuid": format!("a{n}"), "sessionId": "s1",
                "timestamp": "2026-01-15T09:00:01Z",
                "message": {
                    "id": format!("msg_{n}"), "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [{ "type": "tool_use", "id": format!("tu_{n}"), "name": "Bash",
                                  "input": { "command": command } }],
                    "usage": { "input_tokens": 6, "cache_creation_input_tokens": 1000,
                               "cache_read_input_tokens": tokens - 1006, "output_tokens": 10 },
                },
            }),
        ]
    }

    /// The compaction Claude Code records: its boundary (`pre` tokens before it) and the
    /// summary it wrote.
    pub fn compaction(pre: u64, summary: &str) -> [Value; 2] {
        [
            json!({
                "type": "system", "subtype": "compact_boundary", "uuid": "cb1", "sessionId": "s1",
                "content": "Conversation compacted", "timestamp": "2026-01-15T09:10:00Z",
                "compactMetadata": { "trigger": "auto", "preTokens": pre },
            }),
            json!({
                "type": "user", "isCompactSummary": true, "uuid": "cs1", "sessionId": "s1",
                "timestamp": "2026-01-15T09:10:01Z",
                "message": { "role": "user", "content": summary },
            }),
        ]
    }

    /// The `PostToolUse` of tool call `tu_N` running `command`.
    pub fn tool_call<'p>(p: &'p Project, n: u32, command: &str) -> Event<'p> {
        p.event(AGENT, "PostToolUse")
            .with("tool_name", json!("Bash"))
            .with("tool_input", json!({ "command": command }))
            .with("tool_response", json!({ "stdout": "ok" }))
            .with("tool_use_id", json!(format!("tu_{n}")))
    }

    /// A `UserPromptSubmit` of `prompt`.
    pub fn prompt<'p>(p: &'p Project, prompt: &str) -> Event<'p> {
        p.event(AGENT, "UserPromptSubmit")
            .with("prompt", json!(prompt))
    }

    /// A `SessionStart` from `source` in session `session`.
    pub fn start<'p>(p: &'p Project, session: &str, source: &str) -> Event<'p> {
        p.event(AGENT, "SessionStart")
            .with("session_id", json!(session))
            .with("source", json!(source))
    }
}
