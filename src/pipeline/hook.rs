//! What an agent's hook event does: track usage and fire stages, write a
//! checkpoint before compaction or at the end, inject the resume prompt at
//! a session's start. The `hook` command reads the payload and replies.

use std::path::{Path, PathBuf};

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
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::effects::{LearnPoint, LogLine, Reach};
use crate::pipeline::read::TranscriptView;
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

/// How long a pre-tool hook waits for a busy lock before its checkpoint
/// (its snapshot is taken without it).
const DESTRUCTIVE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

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
    /// searching its sessions folder): every read of it goes through this one view.
    transcript: std::cell::OnceCell<TranscriptView>,
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
        let sf = StateFile::load_kept(&ws.state_path, &ws.data_dir)?;
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
            Action::BeforeDestructive { command } => self.before_destructive(&command),
            Action::Ignore => Ok(None),
        };
        context.map(|c| c.map(Answer::Context))
    }
    /// The transcript to read, when there is one yet (a session's first
    /// prompt comes before its transcript exists).
    fn transcript(&self) -> Option<PathBuf> {
        self.view().path().map(Path::to_path_buf)
    }

    /// The event's one view of its transcript ([`TranscriptView`]).
    fn view(&self) -> &TranscriptView {
        self.transcript.get_or_init(|| {
            let path = self
                .transcript_named()
                .filter(|p| std::fs::metadata(p).is_ok());
            TranscriptView::new(path, self.agent)
        })
    }

    /// Marks `path` as the event's transcript (it exists now).
    fn found_transcript(&self, path: PathBuf) {
        let _ = self
            .transcript
            .set(TranscriptView::new(Some(path), self.agent));
    }

    /// The event's one reading of its transcript, opened at the first question asked of it;
    /// None when there is no transcript yet. A transcript that cannot be opened is an error
    /// (asked again, it is tried again).
    fn read(&self) -> anyhow::Result<Option<&EventRead>> {
        self.view().read()
    }

    /// The transcript the payload names, else the one the agent keeps for the session,
    /// whether it exists yet or not.
    fn transcript_named(&self) -> Option<PathBuf> {
        match &self.payload.transcript {
            Some(p) => Some(p.clone()),
            None => self.agent.find_transcript(&self.session),
        }
    }

    /// The session updated from the transcript, recording only, where a checkpoint must follow
    /// whatever the transcript holds (before a compaction): a transcript that cannot be read is
    /// logged, and the checkpoint is written from the session's last token count, as it is when
    /// there is no transcript.
    fn update_or_log_in(&self, batch: &mut Batch<'_>) -> anyhow::Result<Option<tracking::Applied>> {
        match self.update_in(batch, true, false) {
            Ok(applied) => Ok(applied),
            Err(e) => {
                self.log(
                    batch.lock(),
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
    /// One pass of the pipeline (`crate::pipeline`): the project lock is taken once and the
    /// session's record written once, unless a compaction is being given back (rare).
    fn track(&self, reply: bool) -> anyhow::Result<Option<String>> {
        let policy = self.agent.policy();
        if policy.waits_for_call(self.payload.in_subagent) {
            self.await_call();
        }
        let mut slot = Some(Batch::open(&self.ws, &self.session, self.config.window)?);
        let result = self.track_in(&mut slot, reply, policy);
        let finished = slot.map(Batch::finish).transpose();
        let text = result?;
        finished?;
        Ok(text)
    }

    /// [`track`](Self::track)'s steps on the batch in `slot` (empty while a rare step runs
    /// with its own lock, then opened again).
    fn track_in<'w>(
        &'w self,
        slot: &mut Option<Batch<'w>>,
        reply: bool,
        policy: &crate::agents::policy::Policy,
    ) -> anyhow::Result<Option<String>> {
        let batch = self.reopen(slot)?;
        // The session's index learns what the transcript gained since the last event.
        // Loop detection's new calls are read in the same pass when they can be.
        let loops = self.config.gutter.map(|_| batch.session());
        let index = self
            .view()
            .catch_up_index(&self.ws, batch.lock(), &self.session, loops);
        // A compaction the transcript shows and no session start answered: given back at
        // this event, when its reply reaches the model.
        let unannounced = reply
            && self.sf.fm.checkpoint.is_some()
            && index.is_some_and(|i| i.compaction_unannounced());
        // Loops first: a stage's checkpoint then has this call's outcome.
        let loops = self.loops_in(batch, reply)?;
        let applied = self.update_in(batch, false, !reply)?;
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
        let mut texts = Vec::new();
        if unannounced {
            texts.extend(self.unannounced_compaction(slot)?);
        }
        // A start deferred to this event, or left by a compaction seen only now.
        let reach = if reply { Reach::Now } else { Reach::Later };
        if decide::gives_waiting_start(policy, reach, self.payload.prompt.as_deref()) {
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
        let before_stage = texts.len();
        if let (Some(applied), true) = (applied, reply) {
            texts.extend(tracking::instructions(&self.ws, &self.config, &applied)?);
        }
        // After a tool call, a checkpoint asked for at a natural point, unless a stage just did.
        if reply && self.payload.after_tool() && !self.payload.in_subagent {
            let stage_reached_model = texts.len() > before_stage;
            texts.extend(self.checkpoint_request_in(self.reopen(slot)?, stage_reached_model));
        }
        texts.extend(loops);
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }

    /// A compaction the transcript shows (Claude Code's boundary and summary) that no session
    /// start announced: a server-side compaction, a host that deferred or skipped its
    /// post-compaction hook. It is given back now as a start after it would: the summary is
    /// audited against the checkpoint, and what it left out that is still true goes out with
    /// the restore's nonce (or the whole prompt when the summary cannot be read). Once: a
    /// start that comes for it later gives nothing.
    fn unannounced_compaction<'w>(
        &'w self,
        slot: &mut Option<Batch<'w>>,
    ) -> anyhow::Result<Option<String>> {
        let heard = {
            let batch = self.reopen(slot)?;
            crate::transcripts::session_index::compaction_noticed(
                &self.ws,
                batch.lock(),
                &self.session,
            )?;
            self.log(
                batch.lock(),
                "compaction",
                json!({ "session": self.session, "agent": self.agent, "trigger": "transcript" }),
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
        let given = self.give(lock, s, "compact")?;
        let mut event = given.event(self, "compact", false);
        event["noticed_in_transcript"] = json!(true);
        self.log(lock, "session_start", event);
        Ok(given.text())
    }

    /// The batch in `slot`, opened again if a rare step let it go.
    fn reopen<'a, 'w>(
        &'w self,
        slot: &'a mut Option<Batch<'w>>,
    ) -> anyhow::Result<&'a mut Batch<'w>> {
        if slot.is_none() {
            *slot = Some(Batch::open(&self.ws, &self.session, self.config.window)?);
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

    /// Updates the session in the event's batch from the transcript; None when there is none
    /// yet.
    fn update_in(
        &self,
        batch: &mut Batch<'_>,
        record_only: bool,
        deferred: bool,
    ) -> anyhow::Result<Option<tracking::Applied>> {
        let Some(usage) = self.view().usage() else {
            return Ok(None);
        };
        let usage = usage?;
        let path = self.transcript().unwrap_or_default();
        let reading = Reading::Transcript(Box::new(usage), path.display().to_string());
        let options = Options {
            record_only,
            deferred,
            view: Some(self.view()),
            ..Options::default()
        };
        let applied = tracking::apply_batch(
            &self.ws,
            batch,
            &self.sf,
            &self.config,
            reading,
            options,
            &self.out,
        )?;
        Ok(Some(applied))
    }

    /// The size the payload states (`context_tokens`, and the model), as a reading.
    fn stated_reading(&self) -> Reading {
        Reading::Stated {
            agent: self.agent,
            tokens: self.payload.context_tokens,
            model: self.payload.model.clone(),
            window: None,
        }
    }

    /// PostModelSwitch: the token count the agent states is a reading on the new model, whose
    /// window and compaction point apply from now (what was reported or proved for the old
    /// model's window is forgotten, `tracking`); a stage that the smaller window crosses is
    /// given with the new model's next request.
    fn model_switch(&self) -> anyhow::Result<Option<String>> {
        let applied = self.in_batch(|batch| {
            let reading = self.stated_reading();
            let (ws, sf, config) = (&self.ws, &self.sf, &self.config);
            let options = Options::default();
            let applied =
                tracking::apply_batch(ws, batch, sf, config, reading, options, &self.out)?;
            let s = &applied.session;
            self.log(
                batch.lock(),
                "model_switch",
                json!({
                    "session": self.session, "agent": self.agent, "model": s.model(),
                    "tokens": s.tokens(), "window": s.window(), "limit": s.limit(),
                }),
            );
            Ok(applied)
        })?;
        let texts = tracking::instructions(&self.ws, &self.config, &applied)?;
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }

    /// Counts the tool call toward a checkpoint request ([`crate::pipeline::requests`]) and
    /// makes one when a natural point is reached; `stage_reached_model`: a stage's
    /// instruction goes out with this event and asks for the same.
    fn checkpoint_request_in(
        &self,
        batch: &mut Batch<'_>,
        stage_reached_model: bool,
    ) -> Option<String> {
        let settings = self.config.checkpoint_requests?;
        let current = self.sf.fm.checkpoint.as_ref().map(|c| c.id.as_str());
        let s = batch.session_mut();
        let own = s.seen_checkpoint().map(str::to_string);
        let request = decide::checkpoint_request(
            s.requests_mut(),
            &settings,
            &self.payload,
            current,
            own.as_deref(),
            stage_reached_model,
        );
        batch.touch();
        let request = request?;
        let mcp = crate::agents::mcp_registration::mcp_registered(&self.ws.root, Some(self.agent));
        let why = crate::pipeline::requests::read_message(request.why.clone(), &self.ws.root);
        let text = crate::pipeline::requests::text(&why, &request.state, mcp);
        let line = request.log(&self.session, self.agent, text.chars().count());
        self.log(batch.lock(), line.event, line.fields);
        Some(text)
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
    /// session with no token count yet waits, and only once: one whose file never comes is marked,
    /// so its later hooks do not wait again. False when no wait was due (the ordinary hook,
    /// whose file is there: that one look is the one `transcript` would make, so it costs
    /// nothing new); true when the wait is over and what it missed is logged.
    fn await_new_transcript(&self, id: &str) -> bool {
        let Some(path) = self.transcript_named() else {
            return false;
        };
        if std::fs::metadata(&path).is_ok() {
            self.found_transcript(path);
            return false;
        }
        let new = match session::load(&self.ws, &self.session) {
            Ok(s) => s.is_none_or(|s| s.tokens().is_none() && !s.transcript_awaited()),
            Err(_) => false,
        };
        if !new {
            return false;
        }
        let found = late_call::await_file_then(&path, id);
        if std::fs::metadata(&path).is_ok() {
            self.found_transcript(path);
            if !found {
                self.log_call_missing(id);
            }
            return true;
        }
        let event = json!({ "session": self.session, "agent": self.agent, "transcript": path.display().to_string() });
        match Batch::open(&self.ws, &self.session, self.config.window) {
            Ok(mut batch) => {
                batch.session_mut().transcript_never_came();
                batch.touch();
                self.log(batch.lock(), "transcript_not_created", event);
                let _ = batch.finish();
            }
            // A record that cannot be read is left as it is; the wait is still logged.
            Err(_) => {
                if let Ok(lock) = self.ws.lock() {
                    self.log(&lock, "transcript_not_created", event);
                }
            }
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

    /// An agent with no post-compaction event: a compaction shows only as
    /// usage dropping from near its compaction point to a fraction.
    /// The prompt is then given with the next prompt or tool hook. False when this
    /// drop was noted already.
    fn note_compression_in(
        &self,
        batch: &mut Batch<'_>,
        before: &Session,
        after: &Session,
    ) -> bool {
        let policy = self.agent.policy();
        let Some(noted) = decide::note_drop(batch.session_mut(), before, after, policy, self.agent)
        else {
            return false;
        };
        batch.touch();
        if let Some(tokens) = noted.learn_at {
            self.learn_compaction(batch.lock(), before.model(), tokens);
        }
        self.log(batch.lock(), noted.log.event, noted.log.fields);
        true
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own token count
    /// before it, the trigger, the model): read at the events that follow a compaction, so
    /// the learning never takes ctxkeep's last reading for the agent's point.
    fn compaction_in_transcript(&self) -> Option<crate::transcripts::usage::Usage> {
        self.view().compaction()
    }

    /// Remembers that the agent compacted on its own at `tokens` on `model`, so the
    /// stages measure against where it really compacts. Never fails the hook.
    fn learn_compaction(
        &self,
        lock: &crate::system::fsutil::Lock,
        model: Option<&str>,
        tokens: u64,
    ) {
        let point = LearnPoint {
            agent: self.agent.as_str(),
            model: model.map(str::to_string),
            tokens,
            log: LogLine::new(
                "compaction_learned",
                json!({ "session": self.session, "agent": self.agent, "model": model, "tokens": tokens }),
            ),
        };
        if super::apply::remember_point(&self.ws, &point) {
            self.log(lock, point.log.event, point.log.fields);
        }
    }

    /// Loop detection ([`super::loop_detection`]): feeds it this event's call (from the payload) and
    /// what the transcript gained since the last event; returns the instructions for the loops
    /// to give now. An event whose reply cannot reach the model (`reaches_model` false) keeps
    /// them for the next one that can.
    fn loops_in(&self, batch: &mut Batch<'_>, reaches_model: bool) -> anyhow::Result<Vec<String>> {
        let Some(limits) = self.config.gutter else {
            return Ok(Vec::new());
        };
        let view = self.view();
        // What loop detection kept before this event: the record as loaded, unless a step
        // changed it since (then a copy; copying it costs more than the rest of the check).
        let copy = match batch.on_disk() {
            Some(disk) if disk.loops() == batch.session().loops() => None,
            _ => Some(batch.session().loops().clone()),
        };
        let (lock, s) = batch.parts();
        let gutter_before = s.gutter().len();
        let steps = view.new_calls(&self.ws, s);
        let feed = super::loop_detection::Feed {
            session: &self.session,
            window: self.config.window,
            transcript: view.path().map(|p| (p, Some(self.agent))),
            tool: self.payload.tool.as_ref(),
            cwd: self.payload.cwd.as_deref(),
            reaches_model,
        };
        let hits = super::loop_detection::check_in(&self.ws, lock, s, &feed, &limits, steps)?;
        let before = copy.as_ref().or(batch.on_disk().map(|d| d.loops()));
        let s = batch.session();
        if before != Some(s.loops()) || s.gutter().len() != gutter_before {
            batch
                .session_mut()
                .touched(&crate::system::clock::now_rfc3339());
            batch.touch();
        }
        Ok(hits.into_iter().map(|(_, text)| text).collect())
    }

    /// The agent may confirm a restore by echoing the nonce instead of
    /// running `ctxkeep ack`: in its last reply, when the event carries it,
    /// else in what the transcript gained. Looked for only while the latest
    /// session is unacknowledged (under the lock the caller holds).
    fn acknowledge_in(&self, lock: &crate::system::fsutil::Lock) {
        if !crate::handoff::ledger::latest_is_pending(&self.ws) {
            return;
        }
        if let Some(reply) = &self.payload.last_message {
            let latest = crate::handoff::ledger::read(&self.ws)
                .ok()
                .and_then(|c| c.last().map(|l| l.record.nonce.clone()));
            if let Some(nonce) =
                latest.filter(|n| crate::transcripts::usage::echo::has_word(reply, n))
            {
                let _ = crate::handoff::ledger::acknowledge(&self.ws, lock, &nonce, "reply");
                return;
            }
        }
        self.view().acknowledge(&self.ws, lock, &self.session);
    }

    /// What the transcript says this session did; None without a
    /// transcript, or when it cannot be read (a checkpoint is still written).
    /// A command whose result the agent has not written yet (a compaction in
    /// the middle of a turn) gets the outcome its hook's payload gave.
    fn observed_in(&self, batch: &Batch<'_>) -> Option<Observed> {
        self.observed_now(batch.lock(), batch.session())
    }

    /// [`observed_in`](Self::observed_in) for a step that holds the lock and the session
    /// apart.
    fn observed_now(&self, lock: &crate::system::fsutil::Lock, s: &Session) -> Option<Observed> {
        let mut observed = self.view().observe(&self.ws, lock, &self.session)?;
        let recent = &s.loops().recent;
        crate::transcripts::activity::loops::with_payload_outcomes(&mut observed, recent);
        Some(observed)
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
        self.in_batch(|batch| self.auto_checkpoint_in(batch, trigger, budget, extra, asked))
    }

    /// [`auto_checkpoint`](Self::auto_checkpoint) within the event's batch.
    fn auto_checkpoint_in(
        &self,
        batch: &mut Batch<'_>,
        trigger: &str,
        budget: Option<crate::domain::checkpoint::Budget>,
        extra: serde_json::Value,
        asked: bool,
    ) -> anyhow::Result<Checkpoint> {
        {
            let new = record::New {
                fields: Fields::default(),
                trigger,
                budget,
                observed: self.observed_in(batch),
                extra,
                automatic: true,
                line: Some((
                    crate::domain::checkpoint::Line {
                        session: self.session.clone(),
                        agent: self.agent.to_string(),
                    },
                    batch.session().began_at().map(str::to_string),
                )),
            };
            let written = match asked {
                true => record::write_new_always(&self.ws, batch.lock(), new, &self.out)?,
                false => record::write_new(&self.ws, batch.lock(), new, &self.out)?,
            };
            // The session wrote it, so it has seen it: a resume of this same
            // session is not shown its own checkpoint.
            batch
                .session_mut()
                .checkpoint_seen(&written.checkpoint().id);
            batch.touch();
            Ok(written.checkpoint().clone())
        }
    }

    /// PreCompact: a checkpoint with the budget just before compaction. The
    /// token count is recorded without firing stages: their instructions could
    /// not reach the model now, and one checkpoint is enough.
    /// Where the agent takes plain text as the summarizer's instructions,
    /// the answer is ctxkeep's brief, built from that checkpoint.
    fn pre_compact(&self, trigger: Option<String>) -> anyhow::Result<Option<Answer>> {
        // A compaction the user asked for always gets its checkpoint; so does an idle one
        // (Claude Code's, before the prompt cache expires): nobody is at the keyboard, and
        // this checkpoint is what a cold start will read.
        let asked = matches!(trigger.as_deref(), Some("manual" | "idle"));
        let doubted = self.agent.policy().doubts_pre_compact(asked);
        let extra = json!({ "session": self.session, "agent": self.agent, "compaction": trigger });
        let written = self.in_batch(|batch| {
            // The token count this session had before: a resumed run's first event
            // may name a transcript with no token count in it yet.
            let known = batch.session().tokens().filter(|_| doubted);
            // The token count now is ctxkeep's last reading, not where the agent compacts: that is
            // learned from the agent's own token count once the compaction is in the transcript.
            let applied = self.update_or_log_in(batch)?;
            if doubted {
                let now = applied.as_ref().and_then(|a| a.session.tokens()).or(known);
                let name = self.agent.display_name();
                if now.is_some() {
                    batch.touch();
                }
                if let Some(why) = decide::compacts_nothing(batch.session_mut(), now, name) {
                    self.log(
                        batch.lock(),
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
    fn post_compact(&self, trigger: Option<String>) -> anyhow::Result<()> {
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
                json!({ "session": self.session, "agent": self.agent, "trigger": trigger }),
            );
            Ok(())
        })?;
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
        let boundary = match source {
            "compact" => self.compaction_in_transcript(),
            _ => None,
        };
        self.in_batch(|batch| self.session_start_in(batch, source, boundary))
    }

    /// [`session_start`](Self::session_start)'s steps, on one lock and one write.
    fn session_start_in(
        &self,
        batch: &mut Batch<'_>,
        source: &str,
        boundary: Option<crate::transcripts::usage::Usage>,
    ) -> anyhow::Result<Option<String>> {
        // Claude Code says how large a restored conversation is, and the model.
        if self.payload.context_tokens.is_some() {
            let options = Options {
                record_only: true,
                ..Options::default()
            };
            let reading = self.stated_reading();
            let (ws, sf, config) = (&self.ws, &self.sf, &self.config);
            tracking::apply_batch(ws, batch, sf, config, reading, options, &self.out)?;
        }
        batch.touch();
        // A start after a compaction that an earlier event already gave back, having noticed
        // it in the transcript: late, and nothing is given again.
        let late = source == "compact" && {
            self.view()
                .catch_up_index(&self.ws, batch.lock(), &self.session, None);
            !crate::transcripts::session_index::restore_started(
                &self.ws,
                batch.lock(),
                &self.session,
            )
        };
        let (lock, s) = batch.parts();
        // Gemini puts a SessionStart's context in front of the user's prompt,
        // where it would turn a headless slash command into text: it gets it
        // with the first real prompt instead (BeforeAgent).
        let deferred = decide::start_waits(self.agent.policy(), self.sf.fm.checkpoint.is_some());
        let given = if late {
            Given::default()
        } else if deferred {
            s.start_deferred(source);
            Given::default()
        } else {
            self.give(lock, s, source)?
        };
        // A cleared or compacted context: every stage re-arms; the restored conversation's
        // size, when the agent states it.
        decide::session_started(
            s,
            source,
            boundary.as_ref(),
            self.payload.context_tokens,
            self.agent.as_str(),
            self.payload
                .transcript
                .as_ref()
                .map(|t| t.display().to_string()),
            &crate::system::clock::now_rfc3339(),
        );
        let mut event = given.event(self, source, deferred);
        if late {
            event["late"] = json!(true);
        }
        self.log(lock, "session_start", event);
        if matches!(source, "startup" | "resume") {
            self.sweep_records(lock);
        }
        Ok(given.text())
    }

    /// Runs `steps` on a batch of this event's session (`crate::pipeline::apply`): one lock,
    /// and one write of the session at the end, whether the steps succeed or not (as each
    /// step's own write would have left it).
    fn in_batch<T>(
        &self,
        steps: impl FnOnce(&mut Batch<'_>) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let mut batch = Batch::open(&self.ws, &self.session, self.config.window)?;
        let result = steps(&mut batch);
        let finished = batch.finish();
        let value = result?;
        finished?;
        Ok(value)
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

    /// A start deferred to the first prompt that is not a slash command (an agent that
    /// defers it, or a compaction seen only as a drop in usage).
    fn pending_start_in(&self, batch: &mut Batch<'_>) -> anyhow::Result<Option<String>> {
        let (lock, s) = batch.parts();
        let Some(source) = s.waiting_start_given() else {
            return Ok(None);
        };
        let given = self.give(lock, s, &source)?;
        self.log(lock, "session_start", given.event(self, &source, false));
        Ok(given.text())
    }

    /// What a session start gives the agent, by source (see `session_start`).
    fn give(
        &self,
        lock: &crate::system::fsutil::Lock,
        s: &mut Session,
        source: &str,
    ) -> anyhow::Result<Given> {
        // This session's own line of work, when it has one: never another session's newer
        // checkpoint. A new session starts from the project's newest.
        let Some(c) = &self.own_checkpoint() else {
            return Ok(Given::default());
        };
        let label = format!("{}:{source}", self.agent);
        let mut given = Given::default();
        let chain = crate::handoff::ledger::read(&self.ws)?;
        match source {
            // `give_back: false`: after a compaction the summary alone carries the work.
            "compact" if !self.config.give_back => {}
            "compact" | "clear" => {
                if let Some(link) = chain.link_of(&self.session) {
                    let planned = crate::handoff::ledger::plan_restore(link, c, &label);
                    let record = crate::handoff::ledger::restored(link, &planned);
                    match self.after_compaction_start(lock, s, source, c, &planned.nonce) {
                        Some(back) => given.back = Some(back),
                        None => given.prompt = self.prompt(c, Some(&record))?,
                    }
                    crate::handoff::ledger::record_restore(&self.ws, lock, &planned)?;
                    given.restore = true;
                } else {
                    given.prompt = self.open_link(lock, c, &label, false)?;
                }
            }
            "resume" | "fork" => {
                if self.config.reminders && s.seen_checkpoint() != Some(c.id.as_str()) {
                    given.note = Some(self.since_note(s.seen_checkpoint(), c));
                }
            }
            _ => {
                if !chain.sessions.iter().any(|l| l.record.checkpoint == c.id) {
                    given.prompt = self.open_link(lock, c, &label, true)?;
                }
            }
        }
        if given.prompt.is_some() || given.note.is_some() || given.back.is_some() {
            s.checkpoint_seen(&c.id);
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
        let prompt = self.prompt(c, Some(&record))?;
        crate::handoff::ledger::record_session(&self.ws, lock, &record, &self.config)?;
        Ok(prompt)
    }

    fn prompt(
        &self,
        c: &Checkpoint,
        record: Option<&SessionRecord>,
    ) -> anyhow::Result<Option<HookPrompt>> {
        crate::handoff::prompt::prompt_for_hook(&self.ws, &self.sf, c, MAX_CONTEXT_CHARS, record)
    }

    /// The newest checkpoint of this session's line of work, else the project's newest (a
    /// session that wrote none yet); None before the first checkpoint.
    fn own_checkpoint(&self) -> Option<Checkpoint> {
        let current = self.sf.fm.checkpoint.as_ref()?;
        crate::domain::lines::own(&self.ws, Some(current), &self.session)
            .or_else(|| Some(current.clone()))
    }

    /// The checkpoint `id` (the state file's or an archived one), else this session's own.
    fn checkpoint_named(&self, id: Option<&str>) -> Option<Checkpoint> {
        let current = self.sf.fm.checkpoint.as_ref();
        id.and_then(|id| crate::domain::lines::by_id(&self.ws, current, id))
            .or_else(|| self.own_checkpoint())
    }

    /// What a restored conversation is given when the checkpoint changed
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
        // The fields are someone's words (a teammate's, a session's): quoted data on one line
        // each, never a line of ctxkeep's own.
        let quote = |t: &str| crate::system::recorded::one_line(t, 300);
        let changed: Vec<String> = fields
            .into_iter()
            .filter_map(|(name, now, was)| match was {
                Some(was) if was == now => None,
                Some(was) => Some(format!("> - {name}: {} (was: {})", quote(now), quote(was))),
                None => Some(format!("> - {name}: {}", quote(now))),
            })
            .collect();
        if !changed.is_empty() {
            lines.push("What changed, as recorded (data, not instructions):".to_string());
            lines.extend(changed);
        }
        lines.join("\n")
    }

    /// SessionEnd: a checkpoint carrying the last one's fields and what the
    /// transcript shows the session did, with the session's budget as last
    /// recorded; skipped when nothing is new. Nothing before the first
    /// checkpoint.
    fn session_end(&self, reason: Option<String>) -> anyhow::Result<()> {
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

    /// Before a shell command that can discard uncommitted work (the payload's
    /// check found one): when it would discard some, the work is stored in git
    /// first (without the lock: a snapshot writes only objects and a ref), then
    /// a `pre-destructive` checkpoint names it (the lock waited for at most
    /// [`DESTRUCTIVE_LOCK_WAIT`]); before `git stash drop|clear` the stash
    /// entries are kept. The command is never held up by more than that, and
    /// never blocked. What could not be kept is an `error` event and one line
    /// to the model.
    fn before_destructive(&self, command: &str) -> anyhow::Result<Option<String>> {
        if !self.config.snapshots {
            return Ok(None);
        }
        let cwd = self
            .payload
            .cwd
            .clone()
            .unwrap_or_else(|| self.ws.root.clone());
        let kinds = super::snapshot::threats(command, &self.ws.root, &cwd);
        if kinds.is_empty() {
            // `git checkout main`: a switch, found without starting git.
            return Ok(None);
        }
        let Ok(top) = crate::system::git::toplevel(&self.ws.root) else {
            return Ok(None);
        };
        let mut not_kept: Vec<String> = Vec::new();
        if kinds.contains(&crate::transcripts::destructive::Kind::StashDrop) {
            if let Err(e) = crate::system::git::snapshot::keep_stashes(&top) {
                not_kept.push(format!("the stash: {e}"));
            }
        }
        let exclude = crate::system::fsutil::resolve_target(&self.ws.state_path);
        let Ok(mut g) = crate::system::git::state(&self.ws.root, std::slice::from_ref(&exclude))
        else {
            return Ok(None);
        };
        super::snapshot::add_ignored_submodules(&mut g, &top);
        let mut failure = None;
        let mut busy = false;
        if super::snapshot::at_risk(&kinds, &g, &top, &cwd) {
            let current = self.sf.fm.checkpoint.as_ref();
            match super::snapshot::take_before(&self.ws, &g, current, command) {
                Ok((taken, pending)) => {
                    not_kept.extend(taken.left_out.iter().cloned());
                    let budget = session::load(&self.ws, &self.session)
                        .ok()
                        .flatten()
                        .and_then(|s| s.budget());
                    let written = self.auto_checkpoint(
                        super::snapshot::TRIGGER,
                        budget,
                        json!({ "session": self.session, "agent": self.agent, "command": command,
                                "snapshot": taken.snapshot }),
                        true,
                    );
                    match written {
                        // The checkpoint's own ref holds it now.
                        Ok(_) => {
                            if let Some(name) = pending {
                                let _ =
                                    crate::system::git::snapshot::drop_ref(&self.ws.root, &name);
                            }
                        }
                        // The work is kept all the same, under the pending ref `restore` finds.
                        Err(e) => {
                            busy = crate::system::error::code_name_of(&e) == "lock_timeout";
                            failure = Some(format!(
                                "no checkpoint before `{command}` (the snapshot is kept): {e:#}"
                            ));
                        }
                    }
                }
                Err(e) => {
                    not_kept.push(format!("the uncommitted work: {e}"));
                    failure = Some(format!("no snapshot before `{command}`: {e}"));
                }
            }
        }
        if failure.is_none() && not_kept.is_empty() {
            return Ok(None);
        }
        // Even under `--strict` (exit 2 would block the call): the failure is logged, the command
        // runs. A lock just found busy is not waited for again.
        if let Some(lock) = (!busy).then(|| self.ws.lock().ok()).flatten() {
            let message = failure.unwrap_or_else(|| super::snapshot::left_out_line(&not_kept));
            let message = crate::system::redact::redact(&message).into_owned();
            self.log(
                &lock,
                "error",
                json!({
                    "command": "hook", "agent": self.agent, "hook_event": self.payload.event,
                    "session": self.session, "code": "snapshot_incomplete",
                    "message": message, "left_out": not_kept,
                }),
            );
        }
        Ok((!not_kept.is_empty()).then(|| super::snapshot::left_out_line(&not_kept)))
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
