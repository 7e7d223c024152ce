//! What an agent's hook event does: track usage and fire stages, write a
//! checkpoint before compaction or at the end, inject the resume prompt at
//! a session's start. The `hook` command reads the payload and replies.

use std::path::PathBuf;

use serde_json::json;

use crate::agents::payload::{Action, Payload};
use crate::agents::{records, Agent};
use crate::domain::checkpoint::{Checkpoint, Fields};
use crate::domain::config::Config;
use crate::domain::session::{self, Session};
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::handoff::ledger::{Opening, SessionRecord};
use crate::handoff::prompt::HookPrompt;
use crate::pipeline::record;
use crate::pipeline::tracking::{self, Options, Reading};
use crate::system::error::Error;
use crate::system::output::Output;
use crate::transcripts::activity::event_read::EventRead;
use crate::transcripts::activity::Observed;

mod after_compaction;
mod late_call;

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

/// Everything one event needs, resolved once.
pub struct Hook {
    ws: Workspace,
    sf: StateFile,
    config: Config,
    session: String,
    agent: Agent,
    payload: Payload,
    /// Warnings from the shared code go nowhere: on exit 0 the agent only
    /// logs stderr, and a line there would read as a failure.
    out: Output,
    /// The transcript, looked up once per event (for Codex that means
    /// searching its sessions folder), though tracking, the nonce and the
    /// gutter all read it.
    transcript: std::cell::OnceCell<Option<PathBuf>>,
    /// The transcript opened once for the whole event ([`EventRead`]): usage, what it gained,
    /// the compaction, the nonce and the call are all read through it.
    read: std::cell::OnceCell<EventRead>,
}

impl Hook {
    /// Resolves what the event needs: the project's state, its settings and
    /// the agent's session id.
    pub fn new(ws: Workspace, agent: Agent, payload: Payload, out: Output) -> anyhow::Result<Hook> {
        let sf = StateFile::load(&ws.state_path)?;
        sf.require_initialized()?;
        let config = Config::from_front(&sf.fm);
        let session = payload
            .session
            .as_deref()
            .ok_or_else(|| Error::data("<stdin>", "hook input has no session_id"))?;
        let session = session::validate_id(session)?;
        Ok(Hook {
            ws,
            sf,
            config,
            session,
            agent,
            payload,
            out,
            transcript: std::cell::OnceCell::new(),
            read: std::cell::OnceCell::new(),
        })
    }

    /// Acts on the event; returns what to answer, if anything.
    pub fn handle(&self) -> anyhow::Result<Option<Answer>> {
        if let Some(mark) = &self.payload.written_mark {
            self.await_written(mark);
        }
        let context = match self.payload.action.clone() {
            Action::Track { reply } => self.track(reply),
            Action::PreCompact { trigger } => return self.pre_compact(trigger),
            Action::SessionStart { source } => self.session_start(&source),
            Action::SessionEnd { reason } => self.session_end(reason).map(|_| None),
            Action::PostCompact { trigger } => self.post_compact(trigger).map(|_| None),
            Action::ModelSwitch => self.model_switch(),
            Action::BeforeDestructive { command } => {
                self.before_destructive(&command).map(|_| None)
            }
            Action::Ignore => Ok(None),
        };
        context.map(|c| c.map(Answer::Context))
    }
    /// The transcript to read, when there is one yet (a session's first
    /// prompt comes before its transcript exists).
    fn transcript(&self) -> Option<PathBuf> {
        self.transcript
            .get_or_init(|| {
                let path = self.transcript_named()?;
                std::fs::metadata(&path).is_ok().then_some(path)
            })
            .clone()
    }

    /// The event's one reading of its transcript, opened at the first question asked of it;
    /// None when there is no transcript yet. A transcript that cannot be opened is an error
    /// (asked again, it is tried again).
    fn read(&self) -> anyhow::Result<Option<&EventRead>> {
        if let Some(read) = self.read.get() {
            return Ok(Some(read));
        }
        let Some(path) = self.transcript() else {
            return Ok(None);
        };
        let read = crate::agents::event_read(&path, Some(self.agent))?;
        Ok(Some(self.read.get_or_init(|| read)))
    }

    /// The transcript the payload names, else the one the agent keeps for the session,
    /// whether it exists yet or not.
    fn transcript_named(&self) -> Option<PathBuf> {
        match &self.payload.transcript {
            Some(p) => Some(p.clone()),
            None => self.agent.find_transcript(&self.session),
        }
    }

    /// Updates the session from the transcript; None when there is none yet.
    fn update(
        &self,
        record_only: bool,
        deferred: bool,
    ) -> anyhow::Result<Option<tracking::Applied>> {
        let Some(read) = self.read()? else {
            return Ok(None);
        };
        let path = read.path();
        let usage = read.usage()?;
        let applied = tracking::apply(
            &self.ws,
            &self.sf,
            &self.config,
            &self.session,
            Reading::Transcript(Box::new(usage), path.display().to_string()),
            Options {
                record_only,
                deferred,
                ..Options::default()
            },
            &self.out,
        )?;
        Ok(Some(applied))
    }

    /// [`update`](Self::update) where a checkpoint must follow whatever the transcript holds
    /// (before a compaction): a transcript that cannot be read is logged, and the checkpoint is
    /// written from the session's last figure, as it is when there is no transcript.
    fn update_or_log(&self, record_only: bool) -> anyhow::Result<Option<tracking::Applied>> {
        match self.update(record_only, false) {
            Ok(applied) => Ok(applied),
            Err(e) => {
                let lock = self.ws.lock()?;
                self.log(
                    &lock,
                    "transcript_unreadable",
                    json!({
                        "session": self.session, "agent": self.agent,
                        "message": crate::system::redact::redact(&format!("{e:#}")),
                    }),
                );
                Ok(None)
            }
        }
    }

    /// UserPromptSubmit, PostToolUse (and their Codex/Gemini peers): the
    /// stages crossed fire, the gutter is looked for, and the instructions
    /// go to the model. Events that cannot reply (Stop) only track.
    fn track(&self, reply: bool) -> anyhow::Result<Option<String>> {
        let policy = self.agent.policy();
        if policy.waits_for_call(self.payload.in_subagent) {
            self.await_call();
        }
        // The session's index learns what the transcript gained since the last event.
        self.index();
        // Loops first: a stage's checkpoint then has this call's outcome.
        let loops = self.loops(reply)?;
        let applied = self.update(false, !reply)?;
        self.acknowledge();
        // The fall is measured from the figure this update replaced (read under its lock).
        let before = applied.as_ref().and_then(|a| a.previous.as_ref());
        if let (Some(before), Some(applied)) = (before, &applied) {
            let logged = applied.transcript.as_ref().is_some_and(|t| t.compacted);
            if policy.compaction_detected(compressed(before, &applied.session), logged) {
                self.note_compression(before, &applied.session)?;
            }
        }
        let mut texts = Vec::new();
        // A start deferred to this event, or left by a compaction seen only now.
        if reply && policy.start_may_wait_for_prompt() {
            texts.extend(self.pending_start()?);
        }
        // What a compaction's summary left out, once it can be read (the
        // session record is already loaded: nothing is read when none waits).
        if let (Some(applied), true) = (&applied, reply) {
            if applied
                .session
                .after_compaction
                .as_ref()
                .is_some_and(|a| a.waiting.is_some())
            {
                texts.extend(self.deliver_after_compaction()?);
            }
        }
        let before_stage = texts.len();
        if let (Some(applied), true) = (applied, reply) {
            texts.extend(tracking::instructions(&self.ws, &self.config, &applied)?);
        }
        // After a tool call, a checkpoint asked for at a natural point, unless a stage just did.
        if reply && self.payload.after_tool() && !self.payload.in_subagent {
            texts.extend(self.checkpoint_request(texts.len() > before_stage)?);
        }
        texts.extend(loops);
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }

    /// Applies the size the payload states (`context_tokens`, and the model) as a reading.
    fn apply_stated(&self, options: Options) -> anyhow::Result<tracking::Applied> {
        let reading = Reading::Stated {
            agent: self.agent,
            tokens: self.payload.context_tokens,
            model: self.payload.model.clone(),
            window: None,
        };
        tracking::apply(
            &self.ws,
            &self.sf,
            &self.config,
            &self.session,
            reading,
            options,
            &self.out,
        )
    }

    /// PostModelSwitch: the figure the agent states is a reading on the new model, whose
    /// window and compaction point apply from now (what was reported or proved for the old
    /// model's window is forgotten, `tracking`); a stage that the smaller window crosses is
    /// told with the new model's next request.
    fn model_switch(&self) -> anyhow::Result<Option<String>> {
        let applied = self.apply_stated(Options::default())?;
        if let Ok(lock) = self.ws.lock() {
            let s = &applied.session;
            self.log(
                &lock,
                "model_switch",
                json!({
                    "session": self.session, "agent": self.agent, "model": s.model,
                    "tokens": s.tokens, "window": s.window, "limit": s.limit(),
                }),
            );
        }
        let texts = tracking::instructions(&self.ws, &self.config, &applied)?;
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }

    /// Counts the tool call toward a checkpoint request ([`crate::pipeline::requests`]) and
    /// makes one when a natural point is reached; `stage_spoke`: a stage's
    /// instruction goes out with this event and asks for the same.
    fn checkpoint_request(&self, stage_spoke: bool) -> anyhow::Result<Option<String>> {
        let Some(settings) = self.config.checkpoint_requests else {
            return Ok(None);
        };
        let lock = self.ws.lock()?;
        let mut s = session::load(&self.ws, &self.session)?
            .unwrap_or_else(|| Session::new(&self.session, self.config.window));
        let current = self.sf.fm.checkpoint.as_ref().map(|c| c.id.as_str());
        let own = s.seen_checkpoint.clone();
        let why = crate::pipeline::requests::step(
            &mut s.requests,
            &settings,
            &self.payload,
            current,
            own.as_deref(),
        );
        let text = match (stage_spoke, why) {
            (true, _) => {
                crate::pipeline::requests::stage_told(&mut s.requests);
                None
            }
            (false, Some(why)) => {
                let mcp =
                    crate::install::hook_setup::mcp_registered(&self.ws.root, Some(self.agent));
                let text = crate::pipeline::requests::text(&why, &s.requests, mcp);
                self.log(
                    &lock,
                    "checkpoint_request",
                    json!({
                        "session": self.session, "agent": self.agent, "why": why.name(),
                        "calls": s.requests.calls, "chars": text.chars().count(),
                    }),
                );
                crate::pipeline::requests::asked(&mut s.requests);
                Some(text)
            }
            (false, None) => None,
        };
        session::save(&self.ws, &lock, &s)?;
        Ok(text)
    }

    /// Waits for the reply that made this event's tool call to reach the transcript
    /// ([`late_call`]); a call that never shows is logged, and the hook goes on without it.
    fn await_call(&self) {
        let Some(id) = &self.payload.tool_use_id else {
            return;
        };
        if self.await_new_transcript(id) {
            return;
        }
        let Ok(Some(read)) = self.read() else {
            return;
        };
        let found = late_call::await_call_in(read.file(), id);
        read.refresh();
        if !found {
            self.log_call_missing(id);
        }
    }

    fn log_call_missing(&self, id: &str) {
        if let Ok(lock) = self.ws.lock() {
            self.log(
                &lock,
                "call_not_in_transcript",
                json!({ "session": self.session, "agent": self.agent, "tool_use_id": id }),
            );
        }
    }

    /// A new session's transcript may not exist yet when its first tool hook runs (Claude Code
    /// creates it just after that hook starts): the hook then waits for the file and the call
    /// in it, as for an agent that always writes late ([`late_call::await_file_then`]). Only a
    /// session with no figure yet waits, and only once: one whose file never comes is marked,
    /// so its later hooks do not wait again. False when no wait was due (the ordinary hook,
    /// whose file is there: that one look is the one `transcript` would make, so it costs
    /// nothing new); true when the wait is over and what it missed is logged.
    fn await_new_transcript(&self, id: &str) -> bool {
        let Some(path) = self.transcript_named() else {
            return false;
        };
        if std::fs::metadata(&path).is_ok() {
            let _ = self.transcript.set(Some(path));
            return false;
        }
        let new = match session::load(&self.ws, &self.session) {
            Ok(s) => s.is_none_or(|s| s.tokens.is_none() && !s.transcript_awaited),
            Err(_) => false,
        };
        if !new {
            return false;
        }
        let found = late_call::await_file_then(&path, id);
        if std::fs::metadata(&path).is_ok() {
            let _ = self.transcript.set(Some(path));
            if !found {
                self.log_call_missing(id);
            }
            return true;
        }
        if let Ok(lock) = self.ws.lock() {
            if let Ok(s) = session::load(&self.ws, &self.session) {
                let mut s = s.unwrap_or_else(|| Session::new(&self.session, self.config.window));
                s.transcript_awaited = true;
                let _ = session::save(&self.ws, &lock, &s);
            }
            self.log(
                &lock,
                "transcript_not_created",
                json!({ "session": self.session, "agent": self.agent, "transcript": path.display().to_string() }),
            );
        }
        true
    }

    /// Waits for the agent to write the transcript up to this event ([`late_call`], the
    /// event's mark instead of a call's id); a mark that never shows is logged, and the hook
    /// goes on with what the transcript holds.
    fn await_written(&self, mark: &str) {
        let Some(path) = self.transcript_named() else {
            return;
        };
        // A transcript already there is waited on through the event's one open of it.
        let open = match std::fs::metadata(&path).is_ok() {
            true => self.read().ok().flatten(),
            false => None,
        };
        let found = match open {
            Some(read) => {
                let found = late_call::await_call_in(read.file(), mark);
                read.refresh();
                found
            }
            None => late_call::await_file_then(&path, mark),
        };
        if found {
            return;
        }
        if let Ok(lock) = self.ws.lock() {
            self.log(
                &lock,
                "event_not_in_transcript",
                json!({ "session": self.session, "agent": self.agent, "hook_event": self.payload.event }),
            );
        }
    }

    /// Gemini has no `SessionStart(compact)`: a compression shows only as
    /// the figure falling from near its compression point to a fraction.
    /// The prompt is then given with the next prompt or tool hook.
    fn note_compression(&self, before: &Session, after: &Session) -> anyhow::Result<()> {
        let lock = self.ws.lock()?;
        let mut s = session::load(&self.ws, &self.session)?
            .unwrap_or_else(|| Session::new(&self.session, self.config.window));
        if before.tokens.is_some() && s.fall_noted_from == before.tokens {
            // The same fall again: a reading from before it was applied late.
            return Ok(());
        }
        s.fall_noted_from = before.tokens;
        s.pending_start = Some("compact".into());
        s.pre_compact_at = None;
        session::save(&self.ws, &lock, &s)?;
        // Where the transcript states the figure before the compaction, that is learned
        // (`learning`); else the agent's own last figure before the fall is where, when it
        // fell from past the point the agent compresses at on its own: from below it, the
        // user asked (`/compress`).
        let past_point = before
            .tokens
            .is_some_and(|t| t.saturating_mul(10) >= before.limit().saturating_mul(9));
        if self.agent.policy().learns_point_from_last_figure() && past_point {
            self.learn_compaction(&lock, before);
        }
        self.log(
            &lock,
            "compaction",
            json!({
                "session": self.session, "agent": self.agent, "trigger": "detected",
                "before": before.tokens, "after": after.tokens,
            }),
        );
        drop(lock);
        self.audit_summary(Some("detected".into()), None)
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own figure
    /// before it, the trigger, the model): read at the events that follow a compaction, so
    /// the learning never takes ctxkeep's last reading for the agent's point.
    fn compaction_in_transcript(&self) -> Option<crate::transcripts::usage::Usage> {
        self.read().ok()??.compaction()
    }

    /// Remembers that the agent compacted on its own at `s`'s figure, so the
    /// stages measure against where it really compacts. Never fails the hook.
    fn learn_compaction(&self, lock: &crate::system::fsutil::Lock, s: &Session) {
        let Some(tokens) = s.tokens else {
            return;
        };
        let path = self.ws.compactions_path();
        let model = s.model.as_deref();
        if crate::context::compaction::Learned::record(&path, self.agent.as_str(), model, tokens)
            .is_ok()
        {
            self.log(
                lock,
                "compaction_learned",
                json!({ "session": self.session, "agent": self.agent, "model": model, "tokens": tokens }),
            );
        }
    }

    /// Loop detection ([`super::gutter`]): feeds it this event's call (from the payload) and
    /// what the transcript gained since the last event; returns the instructions for the loops
    /// to tell now. An event whose reply cannot reach the model (`can_speak` false) keeps
    /// them for the next one that can.
    fn loops(&self, can_speak: bool) -> anyhow::Result<Vec<String>> {
        let Some(limits) = self.config.gutter else {
            return Ok(Vec::new());
        };
        let read = self.read().ok().flatten();
        let feed = crate::pipeline::loop_detection::Feed {
            session: &self.session,
            window: self.config.window,
            transcript: read.map(|r| (r.path(), Some(self.agent))),
            tool: self.payload.tool.as_ref(),
            cwd: self.payload.cwd.as_deref(),
            can_speak,
        };
        let hits = crate::pipeline::loop_detection::check_with(&self.ws, &feed, &limits, read)?;
        Ok(hits.into_iter().map(|(_, text)| text).collect())
    }

    /// The agent may confirm a restore by echoing the nonce instead of
    /// running `ctxkeep ack`: in its last reply, when the event carries it,
    /// else in the transcript's tail. Looked for only while the latest
    /// session is unacknowledged, so the usual hook reads one small file's
    /// tail more.
    fn acknowledge(&self) {
        if !crate::handoff::ledger::latest_is_pending(&self.ws) {
            return;
        }
        let Ok(lock) = self.ws.lock() else {
            return;
        };
        if let Some(reply) = &self.payload.last_message {
            let latest = crate::handoff::ledger::read(&self.ws)
                .ok()
                .and_then(|c| c.last().map(|l| l.record.nonce.clone()));
            if let Some(nonce) =
                latest.filter(|n| crate::transcripts::usage::echo::has_word(reply, n))
            {
                let _ = crate::handoff::ledger::acknowledge(&self.ws, &lock, &nonce, "reply");
                return;
            }
        }
        if let Ok(Some(read)) = self.read() {
            // Only what the transcript gained since the last look for the same nonce.
            let _ = crate::handoff::ledger::ack_if_echoed(&self.ws, &lock, &|nonce| {
                crate::transcripts::session_index::echoed(
                    &self.ws,
                    &lock,
                    &self.session,
                    read,
                    nonce,
                    crate::handoff::ledger::ECHO_SCAN_BYTES,
                )
            });
        }
    }

    /// What the transcript says this session did; None without a
    /// transcript, or when it cannot be read (a checkpoint is still written).
    /// A command whose result the agent has not written yet (a compaction in
    /// the middle of a turn) gets the outcome its hook's payload gave.
    fn observed(&self) -> Option<Observed> {
        let read = self.read().ok()??;
        let lock = self.ws.lock_only().ok()?;
        let mut observed =
            crate::transcripts::session_index::observed_with(&self.ws, &lock, &self.session, read)?;
        drop(lock);
        if let Ok(Some(s)) = session::load(&self.ws, &self.session) {
            crate::transcripts::activity::loops::fill_outcomes(
                &mut observed.commands,
                &s.loops.recent,
            );
        }
        Some(observed)
    }

    /// The session's index caught up with its transcript; None without a transcript or
    /// when it cannot be read.
    fn index(&self) -> Option<crate::transcripts::activity::index::SessionIndex> {
        let read = self.read().ok()??;
        crate::transcripts::session_index::catch_up_with(&self.ws, &self.session, read)
    }

    /// An automatic checkpoint from this session: the last one's fields,
    /// what the transcript shows it did, skipped when nothing is new unless
    /// the user asked for it (`asked`: a manual compaction).
    fn auto_checkpoint(
        &self,
        trigger: &str,
        budget: Option<crate::domain::checkpoint::Budget>,
        extra: serde_json::Value,
        asked: bool,
    ) -> anyhow::Result<Checkpoint> {
        let observed = self.observed();
        let lock = self.ws.lock()?;
        let new = record::New {
            fields: Fields::default(),
            trigger,
            budget,
            observed,
            extra,
            automatic: true,
        };
        let written = match asked {
            true => record::write_new_always(&self.ws, &lock, new, &self.out)?,
            false => record::write_new(&self.ws, &lock, new, &self.out)?,
        };
        // The session wrote it, so it has seen it: a resume of this same
        // session is not told about its own checkpoint.
        let mut s = session::load(&self.ws, &self.session)?
            .unwrap_or_else(|| Session::new(&self.session, self.config.window));
        s.seen_checkpoint = Some(written.checkpoint().id.clone());
        session::save(&self.ws, &lock, &s)?;
        Ok(written.checkpoint().clone())
    }

    /// PreCompact: a checkpoint with the budget just before compaction. The
    /// figure is recorded without firing stages: their instructions could
    /// not reach the model now, and one checkpoint is enough.
    /// Where the agent takes plain text as the summarizer's instructions,
    /// the answer is ctxkeep's brief, built from that checkpoint.
    fn pre_compact(&self, trigger: Option<String>) -> anyhow::Result<Option<Answer>> {
        // A compaction the user asked for always gets its checkpoint; so does an idle one
        // (Claude Code's, before the prompt cache expires): nobody is at the keyboard, and
        // this checkpoint is what a cold start will read.
        let asked = matches!(trigger.as_deref(), Some("manual" | "idle"));
        let doubted = self.agent.policy().doubts_pre_compact(asked);
        // The figure this session had before: a resumed run's first event
        // may name a transcript with no figure in it yet.
        let known = match doubted {
            true => session::load(&self.ws, &self.session)?.and_then(|s| s.tokens),
            false => None,
        };
        // The figure now is ctxkeep's last reading, not where the agent compacts: that is
        // learned from the agent's own figure once the compaction is in the transcript.
        let applied = self.update_or_log(true)?;
        if doubted {
            let now = applied.as_ref().and_then(|a| a.session.tokens).or(known);
            if let Some(why) = self.compacts_nothing(now)? {
                let lock = self.ws.lock()?;
                self.log(
                    &lock,
                    "checkpoint_skipped",
                    json!({
                        "trigger": "pre-compact", "session": self.session, "agent": self.agent,
                        "why": why,
                    }),
                );
                return Ok(None);
            }
        }
        let budget = match applied {
            Some(applied) => applied.session.budget(),
            None => session::load(&self.ws, &self.session)?.and_then(|s| s.budget()),
        };
        let written = self.auto_checkpoint(
            "pre-compact",
            budget,
            json!({ "session": self.session, "agent": self.agent, "compaction": trigger }),
            asked,
        )?;
        self.compaction_begins(&written)
    }

    /// For an agent whose pre-compaction event fires before every model call
    /// (Gemini CLI): why this one will compact nothing, if it will not. The
    /// agent compacts only past its limit, measured by the last model call's
    /// figure (`tokens`), so not before a session's first call (no figure
    /// yet) nor below the limit; and once it let one pass the limit without
    /// compacting (the figure did not fall), it compacts nothing at the next
    /// either.
    fn compacts_nothing(&self, tokens: Option<u64>) -> anyhow::Result<Option<String>> {
        let name = self.agent.display_name();
        let Some(tokens) = tokens else {
            return Ok(Some(format!(
                "before {name}'s first model call: no figure yet, nothing to compress"
            )));
        };
        let lock = self.ws.lock()?;
        let mut s = session::load(&self.ws, &self.session)?
            .unwrap_or_else(|| Session::new(&self.session, self.config.window));
        let limit = s.limit();
        let why = if tokens < limit {
            s.pre_compact_at = None;
            Some(format!(
                "below {name}'s compression point ({tokens} of {limit} tokens)"
            ))
        } else if let Some(at) = s.pre_compact_at {
            Some(format!(
                "{name} compressed nothing after the pre-compact checkpoint at {at} tokens (now {tokens} of {limit})"
            ))
        } else {
            s.pre_compact_at = Some(tokens);
            None
        };
        session::save(&self.ws, &lock, &s)?;
        Ok(why)
    }

    /// PostCompact: the old figure is gone with the context; every stage
    /// re-arms (the next reading sets the new size).
    fn post_compact(&self, trigger: Option<String>) -> anyhow::Result<()> {
        let boundary = self.compaction_in_transcript();
        let lock = self.ws.lock()?;
        let mut s = session::load(&self.ws, &self.session)?
            .unwrap_or_else(|| Session::new(&self.session, self.config.window));
        if let Some(usage) = &boundary {
            crate::context::learning::note_compaction(&mut s, usage, trigger.as_deref());
        }
        // Claude Code starts the restored session (with its size) before
        // PostCompact: that figure is the new one, not a stale one.
        if s.restored_at.take().is_none() {
            forget_figure(&mut s);
        }
        s.updated_at = crate::system::clock::now_rfc3339();
        session::save(&self.ws, &lock, &s)?;
        self.log(
            &lock,
            "compaction",
            json!({ "session": self.session, "agent": self.agent, "trigger": trigger }),
        );
        drop(lock);
        self.audit_summary(trigger, self.payload.summary.clone())
    }

    /// SessionStart, by what it means:
    /// - `compact`, `clear`: the context was emptied; the resume prompt is
    ///   given again, on this agent session's link of the chain (no handoff);
    /// - `startup`: a new session; the prompt is given when the checkpoint
    ///   has not been given to any session yet (decided by id);
    /// - `resume` (and `fork`): the agent restored the whole conversation;
    ///   only a short note, and only when the checkpoint changed since this
    ///   agent session last saw it.
    fn session_start(&self, source: &str) -> anyhow::Result<Option<String>> {
        // Claude Code says how large a restored conversation is, and the model.
        if self.payload.context_tokens.is_some() {
            self.apply_stated(Options {
                record_only: true,
                ..Options::default()
            })?;
        }
        let boundary = match source {
            "compact" => self.compaction_in_transcript(),
            _ => None,
        };
        let lock = self.ws.lock()?;
        let mut s = session::load(&self.ws, &self.session)?
            .unwrap_or_else(|| Session::new(&self.session, self.config.window));
        // Gemini puts a SessionStart's context in front of the user's prompt,
        // where it would turn a headless slash command into text: it gets it
        // with the first real prompt instead (BeforeAgent).
        let deferred =
            self.agent.policy().defers_start_context() && self.sf.fm.checkpoint.is_some();
        let given = if deferred {
            s.pending_start = Some(source.to_string());
            Given::default()
        } else {
            self.give(&lock, &mut s, source)?
        };
        if source == "clear" {
            // A cleared context: every stage re-arms, the next reading sets the size.
            forget_figure(&mut s);
            s.compacted_at = None;
        }
        if source == "compact" {
            if let Some(usage) = &boundary {
                crate::context::learning::note_compaction(&mut s, usage, None);
            }
            forget_figure(&mut s);
            // The restored conversation's size, when the agent states it.
            if let Some(t) = self.payload.context_tokens {
                s.set_tokens(Some(t), s.window);
                s.restored_at = Some(crate::system::clock::now_rfc3339());
            }
        }
        // A new process of the agent: whether it compacted before is not known.
        s.pre_compact_at = None;
        let now = crate::system::clock::now_rfc3339();
        s.started_at = Some(now.clone());
        s.updated_at = now;
        s.agent = Some(self.agent.to_string());
        if let Some(t) = &self.payload.transcript {
            s.transcript = Some(t.display().to_string());
        }
        session::save(&self.ws, &lock, &s)?;
        self.log(&lock, "session_start", given.event(self, source, deferred));
        if matches!(source, "startup" | "resume") {
            self.sweep_records(&lock);
        }
        Ok(given.text())
    }

    /// An agent whose integration keeps records outside the project (nothing else deletes
    /// them) drops those no session wrote for `records::KEPT_DAYS` days as a session starts,
    /// never this session's own: one listing of a folder, once per session.
    fn sweep_records(&self, lock: &crate::system::fsutil::Lock) {
        if self.agent.spec().records_dir.is_none() {
            return;
        }
        let own = self.payload.transcript.as_deref();
        let stale = records::stale(std::time::SystemTime::now(), Some(self.agent), own);
        let removed = records::remove(stale);
        if !removed.is_empty() {
            let paths: Vec<String> = removed
                .iter()
                .map(|r| r.path.display().to_string())
                .collect();
            self.log(
                lock,
                "agent_records_removed",
                json!({ "agent": self.agent, "older_than_days": records::KEPT_DAYS, "paths": paths }),
            );
        }
    }

    /// Gemini: the start deferred to the first prompt that is not a slash
    /// command.
    fn pending_start(&self) -> anyhow::Result<Option<String>> {
        if self
            .payload
            .prompt
            .as_deref()
            .is_some_and(|p| p.trim_start().starts_with('/'))
        {
            return Ok(None);
        }
        let lock = self.ws.lock()?;
        let Some(mut s) = session::load(&self.ws, &self.session)? else {
            return Ok(None);
        };
        let Some(source) = s.pending_start.take() else {
            return Ok(None);
        };
        let given = self.give(&lock, &mut s, &source)?;
        session::save(&self.ws, &lock, &s)?;
        self.log(&lock, "session_start", given.event(self, &source, false));
        Ok(given.text())
    }

    /// What a session start gives the agent, by source (see `session_start`).
    fn give(
        &self,
        lock: &crate::system::fsutil::Lock,
        s: &mut Session,
        source: &str,
    ) -> anyhow::Result<Given> {
        let Some(c) = &self.sf.fm.checkpoint else {
            return Ok(Given::default());
        };
        let label = format!("{}:{source}", self.agent);
        let mut given = Given::default();
        let chain = crate::handoff::ledger::read(&self.ws)?;
        match source {
            "compact" | "clear" => {
                if let Some(link) = chain.link_of(&self.session) {
                    let planned = crate::handoff::ledger::plan_restore(link, c, &label);
                    let record = crate::handoff::ledger::restored(link, &planned);
                    match self.after_compaction_start(s, source, c, &planned.nonce) {
                        Some(back) => given.back = Some(back),
                        None => given.prompt = self.prompt(Some(&record))?,
                    }
                    crate::handoff::ledger::record_restore(&self.ws, lock, &planned)?;
                    given.restore = true;
                } else {
                    given.prompt = self.open_link(lock, c, &label, false)?;
                }
            }
            "resume" | "fork" => {
                if s.seen_checkpoint.as_deref() != Some(c.id.as_str()) {
                    given.note = Some(self.since_note(s.seen_checkpoint.as_deref(), c));
                }
            }
            _ => {
                if !chain.sessions.iter().any(|l| l.record.checkpoint == c.id) {
                    given.prompt = self.open_link(lock, c, &label, true)?;
                }
            }
        }
        if given.prompt.is_some() || given.note.is_some() || given.back.is_some() {
            s.seen_checkpoint = Some(c.id.clone());
        }
        Ok(given)
    }

    /// Opens a link of the chain for this agent session and renders its prompt.
    fn open_link(
        &self,
        lock: &crate::system::fsutil::Lock,
        c: &Checkpoint,
        label: &str,
        handoff: bool,
    ) -> anyhow::Result<Option<HookPrompt>> {
        let opening = Opening {
            agent: None,
            source: label,
            agent_session: Some(&self.session),
            handoff,
        };
        let record = crate::handoff::ledger::plan_link(&self.ws, lock, c, &opening, &self.config)?;
        let prompt = self.prompt(Some(&record))?;
        crate::handoff::ledger::record_session(&self.ws, lock, &record, &self.config)?;
        Ok(prompt)
    }

    fn prompt(&self, record: Option<&SessionRecord>) -> anyhow::Result<Option<HookPrompt>> {
        crate::handoff::prompt::prompt_for_hook(&self.ws, &self.sf, MAX_CONTEXT_CHARS, record)
    }

    /// What a restored conversation is told when the checkpoint changed
    /// since it last saw one: which fields changed, never the whole prompt.
    fn since_note(&self, seen: Option<&str>, c: &Checkpoint) -> String {
        let before = seen.and_then(|id| {
            crate::domain::checkpoint::Archive {
                dir: &self.ws.checkpoints_dir(),
            }
            .load(id)
            .ok()
        });
        let mut lines = vec![match seen {
            Some(old) => format!(
                "ctxkeep: since this session last ran, checkpoint {} ({}, {}) replaced {old} in {}.",
                c.id,
                c.trigger,
                c.created_at,
                self.ws.display_state()
            ),
            None => format!(
                "ctxkeep: checkpoint {} ({}, {}) was written in {} since this session last ran.",
                c.id,
                c.trigger,
                c.created_at,
                self.ws.display_state()
            ),
        }];
        let fields = [
            ("Phase", &c.phase, before.as_ref().map(|b| &b.phase)),
            (
                "Active task",
                &c.active_task,
                before.as_ref().map(|b| &b.active_task),
            ),
            (
                "Controlling agent",
                &c.controlling_agent,
                before.as_ref().map(|b| &b.controlling_agent),
            ),
            (
                "Next action",
                &c.next_action,
                before.as_ref().map(|b| &b.next_action),
            ),
        ];
        for (name, now, was) in fields {
            match was {
                Some(was) if was == now => {}
                Some(was) => lines.push(format!("{name}: {now} (was: {was})")),
                None => lines.push(format!("{name}: {now}")),
            }
        }
        lines.join("\n")
    }

    /// SessionEnd: a checkpoint carrying the last one's fields and what the
    /// transcript shows the session did, with the session's budget as last
    /// recorded; skipped when nothing is new. Nothing before the first
    /// checkpoint.
    fn session_end(&self, reason: Option<String>) -> anyhow::Result<()> {
        self.acknowledge();
        // A loop seen only now is told if the session goes on (a resume).
        self.loops(false)?;
        if self.sf.fm.checkpoint.is_none() {
            return Ok(());
        }
        let budget = session::load(&self.ws, &self.session)?.and_then(|s| s.budget());
        self.auto_checkpoint(
            "session-end",
            budget,
            json!({ "session": self.session, "agent": self.agent, "reason": reason }),
            false,
        )
        .map(|_| ())
    }

    /// Before a shell command that can discard uncommitted work (the payload's
    /// check found one): when it would discard some, a `pre-destructive`
    /// checkpoint stores that work in git first. The command is never held
    /// up by more than that, and never blocked.
    fn before_destructive(&self, command: &str) -> anyhow::Result<()> {
        if !self.config.snapshots {
            return Ok(());
        }
        let exclude = crate::system::fsutil::resolve_target(&self.ws.state_path);
        let Ok(g) = crate::system::git::state(&self.ws.root, std::slice::from_ref(&exclude)) else {
            return Ok(());
        };
        let Ok(top) = crate::system::git::toplevel(&self.ws.root) else {
            return Ok(());
        };
        let cwd = self
            .payload
            .cwd
            .clone()
            .unwrap_or_else(|| self.ws.root.clone());
        if !crate::pipeline::snapshot::at_risk(command, &g, &top, &cwd) {
            return Ok(());
        }
        let budget = session::load(&self.ws, &self.session)
            .ok()
            .flatten()
            .and_then(|s| s.budget());
        let written = self.auto_checkpoint(
            crate::pipeline::snapshot::TRIGGER,
            budget,
            json!({ "session": self.session, "agent": self.agent, "command": command }),
            true,
        );
        // Even under `--strict` (exit 2 would block the call): the failure is logged, the command runs.
        if let Err(e) = written {
            if let Ok(lock) = self.ws.lock() {
                let message = format!("no snapshot before `{command}`: {e:#}");
                let message = crate::system::redact::redact(&message).into_owned();
                self.log(
                    &lock,
                    "error",
                    json!({
                        "command": "hook", "agent": self.agent, "hook_event": self.payload.event,
                        "session": self.session, "code": crate::system::error::code_name_of(&e),
                        "message": message,
                    }),
                );
            }
        }
        Ok(())
    }

    fn log(&self, lock: &crate::system::fsutil::Lock, event: &str, fields: serde_json::Value) {
        if let Err(e) = crate::domain::events::append(&self.ws, lock, event, fields) {
            self.out
                .warn(&format!("the event log could not be updated: {e}"));
        }
    }
}

/// What a session start gave the agent.
#[derive(Default)]
struct Given {
    /// The resume prompt.
    prompt: Option<HookPrompt>,
    /// Instead, for a restored conversation: what changed since.
    note: Option<String>,
    /// Given again to the same agent session (a compaction), no handoff.
    restore: bool,
    /// Instead of the prompt after a compaction: what its summary left out,
    /// or a note while the summary cannot be read yet.
    back: Option<after_compaction::Back>,
}

impl Given {
    fn text(self) -> Option<String> {
        self.prompt
            .map(|p| p.prompt)
            .or(self.note)
            .or(self.back.map(|b| b.text))
    }

    fn event(&self, hook: &Hook, source: &str, deferred: bool) -> serde_json::Value {
        json!({
            "session": hook.session, "agent": hook.agent, "source": source,
            "resumed_from": self.prompt.as_ref().map(|p| p.checkpoint.clone()),
            "restore": self.restore,
            "note": self.note.is_some(),
            "deferred": deferred,
            "omitted": self.prompt.as_ref().map(|p| &p.omitted),
            "cut": self.prompt.as_ref().map(|p| p.cut),
            "after_summary": self.back.as_ref().map(|b| b.kind),
        })
    }
}

/// The figure fell from at least 80 % of the compression point to less
/// than half of what it was: the conversation was compressed.
fn compressed(before: &Session, after: &Session) -> bool {
    match (before.tokens, after.tokens) {
        (Some(b), Some(a)) => b.saturating_mul(5) >= before.limit().saturating_mul(4) && a * 2 < b,
        _ => false,
    }
}

/// The figure is gone with the context; every stage re-arms.
fn forget_figure(s: &mut Session) {
    s.set_tokens(None, s.window);
    s.compacted_at = Some(crate::system::clock::now_rfc3339());
    s.fired.clear();
    s.pending_stages.clear();
    s.turn_ends.clear();
    s.handoff_due = false;
}
