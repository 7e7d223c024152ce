//! The replay: a real agent transcript driven through `ctxkeep hook AGENT` at every point where the
//! agent's CLI fires a hook, in the CLI's own order (issues 25, 26, 27).
//!
//! - The per-agent modules (`claude_code`, `codex`, `gemini`) read a transcript and rebuild the
//!   hook events its CLI fired while writing it: each event's name, its payload fields and how many
//!   of the transcript's lines existed at that moment (`cut`). The order follows what the real CLIs
//!   do (FORMATS §1.9, §2.6, §3.4, §7, §7b, and `tests/fixtures/agents/*/hook-order.txt`): a tool's
//!   result reaches the transcript only after its PostToolUse/PostToolUseFailure/AfterTool hook,
//!   so that hook sees the transcript cut just before the result, and the outcome only in its
//!   payload.
//! - `run` writes the growing transcript beside a fresh project (`init`, a first checkpoint,
//!   `hooks install AGENT`, as the end-to-end suite sets one up) and runs the real binary for
//!   each event the installed hooks subscribe to, keeping what it printed, its exit code, the
//!   events it logged and the checkpoints it wrote.
//! - `report` reads a run: the injections by kind, repeated blocks, stages marked where nothing
//!   reaches the model, checkpoints by trigger, and at each compaction the checkpoint current at
//!   `PreCompact` against the agent's own summary; `markdown` prints it as tables.
//!
//! Nothing here knows what ctxkeep should answer: the expected results live in the tests
//! (`captures`, `shared`), so a change to the hooks changes those numbers, not this driver.

pub mod claude_code;
pub mod codex;
pub mod gemini;
pub mod report;
pub mod run;

mod captures;
mod limits;
mod record;
mod requests;
mod shared;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
}

impl Agent {
    /// As `ctxkeep hook AGENT` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    /// The settings file `ctxkeep hooks install AGENT` writes the hooks into.
    pub fn settings(self) -> &'static str {
        match self {
            Agent::ClaudeCode => ".claude/settings.json",
            Agent::Codex => ".codex/hooks.json",
            Agent::Gemini => ".gemini/settings.json",
        }
    }

    /// The agent whose lines these are: rollout lines are Codex's, a metadata line or `$set`
    /// records Gemini's, anything else Claude Code's.
    pub fn detect(t: &Transcript) -> Agent {
        let values = t.lines.iter().filter_map(|l| l.value.as_ref()).take(32);
        for v in values {
            if v.get("payload").is_some() && v.get("timestamp").is_some() && v.get("type").is_some()
            {
                return Agent::Codex;
            }
            if v.get("$set").is_some()
                || v.get("$rewindTo").is_some()
                || (v.get("sessionId").is_some() && v.get("projectHash").is_some())
            {
                return Agent::Gemini;
            }
        }
        Agent::ClaudeCode
    }
}

/// One line of a transcript: its bytes as written (replayed unchanged) and its JSON, when it is
/// a JSON object.
pub struct Line {
    pub raw: Vec<u8>,
    pub value: Option<Value>,
}

pub struct Transcript {
    pub path: PathBuf,
    pub lines: Vec<Line>,
}

impl Transcript {
    /// Every line of the file; a last line without its newline is kept (it is replayed as read).
    pub fn read(path: &Path) -> Transcript {
        let bytes =
            std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut lines: Vec<Line> = bytes
            .split(|b| *b == b'\n')
            .map(|raw| Line {
                value: serde_json::from_slice::<Value>(raw)
                    .ok()
                    .filter(Value::is_object),
                raw: raw.to_vec(),
            })
            .collect();
        if lines.last().is_some_and(|l| l.raw.is_empty()) {
            lines.pop();
        }
        Transcript {
            path: path.to_path_buf(),
            lines,
        }
    }

    pub fn value(&self, i: usize) -> Option<&Value> {
        self.lines.get(i).and_then(|l| l.value.as_ref())
    }

    /// The file's name without its folders (the replayed copy keeps it: Codex's reader takes the
    /// thread id from it).
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "transcript.jsonl".into())
    }
}

/// A hook the agent's CLI fires, as the replay rebuilt it.
#[derive(Debug, Clone)]
pub struct HookEvent {
    /// `hook_event_name`, as the agent spells it.
    pub name: String,
    /// How many of the transcript's lines exist when it fires.
    pub cut: usize,
    /// The transcript line (1-based) the event is about: the tool result, the prompt, the
    /// compaction boundary, the turn's last reply; 0 when none.
    pub line: usize,
    /// The event's own payload fields (`session_id`, `transcript_path`, `cwd` and
    /// `hook_event_name` are added by the run).
    pub fields: Map<String, Value>,
}

impl HookEvent {
    /// `Name-detail` as `hook-order.txt` writes it: the source, trigger, reason or tool.
    pub fn label(&self) -> String {
        ["source", "trigger", "reason", "tool_name"]
            .iter()
            .find_map(|k| self.fields.get(*k).and_then(Value::as_str))
            .map(|d| format!("{}-{d}", self.name))
            .unwrap_or_else(|| self.name.clone())
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

/// A compaction the transcript shows, with the summary the agent wrote for it.
#[derive(Debug, Clone)]
pub struct Compaction {
    /// The boundary's line (Claude Code `compact_boundary`, Codex `compacted`, Gemini's `$set`
    /// of the compressed messages), 1-based.
    pub line: usize,
    pub trigger: String,
    /// The context just before it, as the transcript says.
    pub pre_tokens: Option<u64>,
    /// The agent's own summary, when the transcript holds it readably.
    pub summary: Option<String>,
    /// Index in `Replay::events` of the `PreCompact`/`PreCompress` fired for it.
    pub pre_compact: Option<usize>,
}

pub struct Replay {
    pub agent: Agent,
    /// The agent's session id, from the transcript (else the file's name).
    pub session: String,
    pub events: Vec<HookEvent>,
    pub compactions: Vec<Compaction>,
}

/// Rebuilds the hook events `agent`'s CLI fired while writing `t`.
pub fn reconstruct(agent: Agent, t: &Transcript) -> Replay {
    match agent {
        Agent::ClaudeCode => claude_code::reconstruct(t),
        Agent::Codex => codex::reconstruct(t),
        Agent::Gemini => gemini::reconstruct(t),
    }
}

/// The events in order, each at a cut no earlier than the one before (a hook never sees less
/// of the transcript than an earlier hook did), with the session's start added before the first
/// event when the transcript does not show one.
pub(crate) struct Events {
    pub list: Vec<HookEvent>,
    started: bool,
}

impl Events {
    pub fn new() -> Events {
        Events {
            list: Vec::new(),
            started: false,
        }
    }

    pub fn started(&self) -> bool {
        self.started
    }

    /// The last cut handed out.
    pub fn last_cut(&self) -> usize {
        self.list.last().map(|e| e.cut).unwrap_or(0)
    }

    pub fn start(&mut self, source: &str, cut: usize, line: usize, mut fields: Map<String, Value>) {
        fields.insert("source".into(), Value::from(source));
        self.started = true;
        self.push_raw("SessionStart", cut, line, fields);
    }

    /// Adds an event; a first event that is not a start is preceded by `SessionStart(startup)`.
    pub fn push(
        &mut self,
        name: &str,
        cut: usize,
        line: usize,
        fields: Map<String, Value>,
    ) -> usize {
        if !self.started {
            self.start("startup", cut, line, Map::new());
        }
        self.push_raw(name, cut, line, fields)
    }

    fn push_raw(
        &mut self,
        name: &str,
        cut: usize,
        line: usize,
        fields: Map<String, Value>,
    ) -> usize {
        let cut = cut.max(self.last_cut());
        self.list.push(HookEvent {
            name: name.to_string(),
            cut,
            line,
            fields,
        });
        self.list.len() - 1
    }

    /// The session is over: a start is due again before the next event.
    pub fn end(&mut self, name: &str, reason: &str, cut: usize, line: usize) {
        if self.started {
            self.push_raw(name, cut, line, fields(&[("reason", Value::from(reason))]));
        }
        self.started = false;
    }
}

/// A payload fields map from pairs.
pub fn fields(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// The text of a message's content: a string, or the `text` of each part (`input_text`,
/// `output_text` and Gemini parts alike), joined by newlines.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
