//! The read stage: what one event reads before it decides. Every read of the event's
//! transcript goes through one [`TranscriptView`], made once per event: it opens the file
//! once ([`EventRead`]) and answers usage, the compaction it ends with, the calls and the
//! activity it gained since the session's stored offsets, and the nonce's echo from that one
//! open file.

use std::cell::{OnceCell, RefCell};
use std::path::{Path, PathBuf};

use crate::agents::payload::Payload;
use crate::agents::Agent;
use crate::domain::config::Config;
use crate::domain::session::Session;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::Lock;
use crate::transcripts::activity::event_read::EventRead;
use crate::transcripts::activity::index::SessionIndex;
use crate::transcripts::activity::loops::Step;
use crate::transcripts::activity::Observed;
use crate::transcripts::usage::Usage;

/// What one event reads before it decides, built once from its payload: the project's state
/// file and settings, the agent's session id, the payload itself, and its transcript, looked up
/// once (for Codex that means searching its sessions folder) and read through one
/// [`TranscriptView`]. What must be read under the project lock to be correct is not here: the
/// session's record, and what is read from the stored offsets it and the session's index keep
/// (the index's catch-up, loop detection's new calls, a restore's echo), which two events at
/// once must not both read.
pub struct Reading {
    pub sf: StateFile,
    pub config: Config,
    /// The agent's session id, checked.
    pub session: String,
    pub agent: Agent,
    pub payload: Payload,
    transcript: OnceCell<TranscriptView>,
}

impl Reading {
    /// The event's reading: the state file loaded (it must be initialized), its settings,
    /// and the payload's session id (it must have one).
    pub fn of(ws: &Workspace, agent: Agent, payload: Payload) -> anyhow::Result<Reading> {
        let sf = StateFile::load_kept(&ws.state_path, &ws.data_dir)?;
        sf.require_initialized()?;
        let config = Config::from_front(&sf.fm);
        let session = payload
            .session
            .as_deref()
            .ok_or_else(|| Error::data("<stdin>", "hook input has no session_id"))?;
        let session = crate::domain::session::validate_id(session)?;
        Ok(Reading {
            sf,
            config,
            session,
            agent,
            payload,
            transcript: OnceCell::new(),
        })
    }

    /// The event's one view of its transcript.
    pub fn view(&self) -> &TranscriptView {
        self.transcript.get_or_init(|| {
            let path = self
                .transcript_named()
                .filter(|p| std::fs::metadata(p).is_ok());
            TranscriptView::new(path, self.agent)
        })
    }

    /// The transcript to read, when there is one yet (a session's first
    /// prompt comes before its transcript exists).
    pub fn transcript(&self) -> Option<PathBuf> {
        self.view().path().map(Path::to_path_buf)
    }

    /// Marks `path` as the event's transcript (it exists now).
    pub fn found_transcript(&self, path: PathBuf) {
        let _ = self
            .transcript
            .set(TranscriptView::new(Some(path), self.agent));
    }

    /// The event's one reading of its transcript, opened at the first question asked of it;
    /// None when there is no transcript yet. A transcript that cannot be opened is an error
    /// (asked again, it is tried again).
    pub fn read(&self) -> anyhow::Result<Option<&EventRead>> {
        self.view().read()
    }

    /// The transcript the payload names, else the one the agent keeps for the session,
    /// whether it exists yet or not.
    pub fn transcript_named(&self) -> Option<PathBuf> {
        match &self.payload.transcript {
            Some(p) => Some(p.clone()),
            None => self.agent.find_transcript(&self.session),
        }
    }
}

/// The event's transcript: where it is (when it exists), the agent that writes it, and its
/// one open reading.
pub struct TranscriptView {
    path: Option<PathBuf>,
    /// None: the format is detected from the transcript.
    agent: Option<Agent>,
    read: OnceCell<EventRead>,
    /// Loop detection's calls, read with the index's catch-up.
    prefetched: RefCell<Option<Prefetched>>,
}

/// Loop detection's calls read with the index's catch-up: where that read started, the
/// transcript's length then, the calls, and where the read stopped.
struct Prefetched {
    from: u64,
    len: u64,
    steps: Vec<Step>,
    end: u64,
}

impl TranscriptView {
    /// The transcript at `path`, when it exists.
    pub fn new(path: Option<PathBuf>, agent: Agent) -> TranscriptView {
        TranscriptView::of(path, Some(agent))
    }

    /// The transcript at `path` written by `agent`, or by whichever agent its format shows.
    pub fn of(path: Option<PathBuf>, agent: Option<Agent>) -> TranscriptView {
        TranscriptView {
            path,
            agent,
            read: OnceCell::new(),
            prefetched: RefCell::new(None),
        }
    }

    /// The transcript's path; None when there is none (yet).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The transcript's one open reading, opened at the first question asked of it; None
    /// without a transcript. One that cannot be opened is an error (asked again, it is tried
    /// again).
    pub fn read(&self) -> anyhow::Result<Option<&EventRead>> {
        if let Some(read) = self.read.get() {
            return Ok(Some(read));
        }
        let Some(path) = self.path() else {
            return Ok(None);
        };
        let read = crate::agents::event_read(path, self.agent)?;
        Ok(Some(self.read.get_or_init(|| read)))
    }

    /// The context usage the transcript records; None without a transcript.
    pub fn usage(&self) -> Option<anyhow::Result<Usage>> {
        match self.read() {
            Ok(Some(read)) => Some(read.usage()),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own token count
    /// before it, the trigger, the model); None when it does not end with one.
    pub fn compaction(&self) -> Option<Usage> {
        self.read().ok()??.compaction()
    }

    /// The session's index caught up with what the transcript gained since its last event
    /// (the caller holds the lock). With `loops` (the session, when loop detection runs at
    /// this event), the calls loop detection will ask for ([`TranscriptView::new_calls`]) are
    /// read in the same pass when they are the same bytes, and kept for it.
    pub fn catch_up_index(
        &self,
        ws: &Workspace,
        lock: &Lock,
        id: &str,
        loops: Option<&Session>,
    ) -> Option<SessionIndex> {
        let read = self.read().ok()??;
        let ask = loops.and_then(|s| crate::pipeline::loop_detection::ask(ws, s, read));
        let (index, steps) =
            crate::pipeline::session_index::catch_up_read_with(ws, lock, id, read, ask)?;
        if let (Some(ask), Some((steps, end))) = (ask, steps) {
            self.prefetched.replace(Some(Prefetched {
                from: ask.from,
                len: read.len(),
                steps,
                end,
            }));
        }
        Some(index)
    }

    /// The tool calls the transcript gained since loop detection last read it (moving the
    /// session's cursor): those the index's catch-up read for it, else read now.
    pub fn new_calls(&self, ws: &Workspace, s: &mut Session) -> Vec<Step> {
        let prefetched = self.prefetched.take();
        match self.read() {
            Ok(Some(read)) => {
                // Read up to the same length (the view was not refreshed since).
                let prefetched = prefetched
                    .filter(|p| p.len == read.len())
                    .map(|p| (p.from, p.steps, p.end));
                crate::pipeline::loop_detection::read_new_with(ws, s, read, prefetched)
            }
            _ => Vec::new(),
        }
    }

    /// What session `id` did, for a checkpoint: the transcript's tail completed from the
    /// session's index (the caller holds the lock).
    pub fn observe(&self, ws: &Workspace, lock: &Lock, id: &str) -> Option<Observed> {
        let read = self.read().ok()??;
        crate::pipeline::session_index::observed_with(ws, lock, id, read)
    }

    /// Acknowledges the latest restore when what the transcript gained since the last look
    /// echoes its nonce (the caller holds the lock).
    pub fn acknowledge(&self, ws: &Workspace, lock: &Lock, id: &str) {
        let Ok(Some(read)) = self.read() else {
            return;
        };
        let _ = crate::handoff::chain::ack_if_echoed(ws, lock, &|nonce| {
            crate::pipeline::session_index::echoed(
                ws,
                lock,
                id,
                read,
                nonce,
                crate::handoff::chain::ECHO_SCAN_BYTES,
            )
        });
    }
}

/// What loop detection reads at an event, under the lock: the calls the transcript gained since
/// its cursor (moving it; through the index's catch-up when it read them), the call the payload
/// reports (`tool`, its files hashed from the payload or the disk, relative to `cwd`), and the
/// state as it was before (the record as loaded, `on_disk`, unless a step changed it since:
/// then a copy, which costs more than the rest of the check).
pub fn calls_read<'a>(
    ws: &Workspace,
    view: &TranscriptView,
    s: &mut Session,
    on_disk: Option<&'a Session>,
    tool: Option<&crate::agents::payload::ToolCall>,
    cwd: Option<&Path>,
) -> crate::pipeline::decide::CallsRead<'a> {
    let before = match on_disk {
        Some(disk) if disk.loops() == s.loops() => std::borrow::Cow::Borrowed(disk.loops()),
        _ => std::borrow::Cow::Owned(s.loops().clone()),
    };
    let told_before = s.loops_told().len();
    let steps = view.new_calls(ws, s);
    let payload = tool.map(|c| crate::pipeline::loop_detection::payload_step(ws, c, cwd));
    crate::pipeline::decide::CallsRead {
        steps,
        payload,
        before,
        told_before,
    }
}

/// A usage reading's limit, read under the lock: the reading's first half made on the session
/// (`decide::measure`: the window and model it is measured at, a point it teaches), then where
/// the agent compacts for those ([`compaction_limit_for`]). What the decision finishes the
/// reading from (`decide::UsageRead`), measured once.
pub fn usage_read<'a>(
    ws: &Workspace,
    s: &mut Session,
    facts: crate::pipeline::decide::UsageFacts<'a>,
    config: &Config,
) -> crate::pipeline::decide::UsageRead<'a> {
    let measured = crate::pipeline::decide::measure(s, &facts);
    let found = compaction_limit_for(ws, measured.ask(), config);
    crate::pipeline::decide::UsageRead {
        facts,
        measured: Some(measured),
        found,
    }
}

/// Where the agent compacts for what a usage reading asks (`decide::measure`): the window and
/// model it is measured at, with a point that reading teaches counted among those learned
/// (the apply stage remembers it): its configuration files and environment, read afresh at
/// each reading (they may have changed since), the project's `compaction:` and the points
/// learned so far. The one read that waits for a decision (the window the reading is measured
/// against); `decide::usage` chooses from what it finds.
pub fn compaction_limit_for(
    ws: &Workspace,
    ask: &crate::pipeline::decide::LimitAsk,
    config: &crate::domain::config::Config,
) -> crate::pipeline::decide::LimitFound {
    let model = ask.model.as_deref();
    let seen = ask.agent.map(|a| {
        let mut learned = crate::context::compaction::Learned::load(&ws.compactions_path());
        if let Some(p) = &ask.learns {
            learned.add(p.agent, p.model.as_deref(), p.tokens);
        }
        learned.seen(a.as_str(), model)
    });
    let limit = crate::agents::compaction_limit_for_model(
        ask.agent,
        ask.window,
        model,
        &ws.root,
        Some(&config.compaction),
        seen.as_ref().and_then(|l| l.point),
        &|name| std::env::var(name).ok(),
    );
    crate::pipeline::decide::LimitFound { limit, seen }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn line(ty: &str, message: serde_json::Value) -> String {
        json!({"parentUuid": "p", "isSidechain": false, "sessionId": "s-1", "type": ty,
               "message": message, "uuid": "u", "timestamp": "2026-11-27T19:00:00.000Z"})
        .to_string()
            + "\n"
    }

    fn call(id: &str, command: &str) -> String {
        line(
            "assistant",
            json!({"model": "claude-opus-4-6", "id": format!("msg_{id}"), "role": "assistant",
                   "content": [{"type": "tool_use", "id": id, "name": "Bash",
                                "input": {"command": command}}],
                   "usage": {"input_tokens": 1000, "output_tokens": 5}}),
        )
    }

    fn result(id: &str) -> String {
        line(
            "user",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                   "content": "error: 1 test failed", "is_error": true}]}),
        )
    }

    /// Two events on the same transcript, loop detection reading with the index's catch-up
    /// (`shared`) or on its own: the calls it gets and what it keeps are the same.
    fn two_events(shared: bool) -> (Vec<Vec<Step>>, Session, SessionIndex) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let path = dir.path().join("t.jsonl");
        let mut s = Session::new("s-1", 200_000);
        let mut text = line("user", json!({"role": "user", "content": "Fix the tests"}));
        text += &(call("b1", "cargo test") + &result("b1"));
        let mut got = Vec::new();
        let mut index = None;
        let events = [
            call("b2", "cargo test"),
            result("b2") + &call("b3", "cargo build") + &result("b3"),
            call("b4", "cargo test") + &result("b4"),
        ];
        let (mut carried_once, mut one_passes) = (false, 0);
        for next in events {
            text += &next;
            std::fs::write(&path, &text).unwrap();
            let view = TranscriptView::new(Some(path.clone()), Agent::ClaudeCode);
            let lock = ws.lock_only().unwrap();
            // A call carried from the last read (waiting for its outcome) is read on its own.
            let one_pass = shared && s.loops().pending.is_empty();
            carried_once |= !s.loops().pending.is_empty();
            one_passes += usize::from(one_pass);
            index = view.catch_up_index(&ws, &lock, "s-1", shared.then_some(&s));
            assert_eq!(view.prefetched.borrow().is_some(), one_pass);
            let steps = view.new_calls(&ws, &mut s);
            let limits = crate::transcripts::activity::LoopLimits::default();
            crate::pipeline::loop_detection::judge(&mut s, &steps, None, &limits, true);
            got.push(steps);
        }
        assert!(carried_once, "a call was carried from one read to the next");
        assert_eq!(one_passes, if shared { 2 } else { 0 });
        // The temp folders differ: the cursor's offset is what counts.
        if let Some(c) = s.loops_mut().cursor.as_mut() {
            c.path.clear();
        }
        (got, s, index.unwrap())
    }

    #[test]
    fn loop_detection_gets_the_same_calls_from_the_index_pass_as_from_its_own_read() {
        let (shared, s_shared, index_shared) = two_events(true);
        let (alone, s_alone, index_alone) = two_events(false);
        assert_eq!(shared, alone);
        assert_eq!(shared[0].len(), 2, "the first read takes b1 and b2");
        assert_eq!(shared[2].len(), 1, "b4, read with the index");
        assert_eq!(s_shared.loops(), s_alone.loops());
        assert_eq!(index_shared.changed, index_alone.changed);
        assert_eq!(index_shared.commands, index_alone.commands);
    }
}
