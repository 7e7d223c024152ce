//! Agents' hook payloads (docs/agents.md, "Hook payloads"), reduced to the
//! one thing ctxkeep does for each event.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::system::error::Error;

/// Largest payload accepted (real ones are a few KiB; a prompt can be long).
pub const MAX_PAYLOAD_BYTES: u64 = 1024 * 1024;

/// What ctxkeep does for an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Track usage from the transcript; `reply`: the agent reads
    /// `additionalContext` from this event, so a fired stage's instruction
    /// reaches the model.
    Track { reply: bool },
    /// Checkpoint before the context is compacted; `trigger` is `auto` or
    /// `manual` when the agent says.
    PreCompact { trigger: Option<String> },
    /// A session starts (`startup`, `resume`, `clear`, `compact`, `fork`).
    SessionStart { source: String },
    /// The session ends; `reason` as the agent gives it.
    SessionEnd { reason: Option<String> },
    /// The agent compacted its context (Claude Code and Codex `PostCompact`):
    /// the old token count is gone and every stage re-arms.
    PostCompact { trigger: Option<String> },
    /// The session moved to another model (Claude Code's `PostModelSwitch`):
    /// its window and limit are the new model's from now on; the payload's
    /// `context_tokens` is a reading, and the reply reaches the new model.
    ModelSwitch,
    /// A shell command that can discard uncommitted work is about to run
    /// (`PreToolUse` and its peers): its work is stored first. Any other
    /// call is `Ignore`, decided from the payload alone.
    BeforeDestructive { command: String },
    /// Nothing to do (e.g. `Stop`): answered without reading any file.
    Ignore,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// The event's name as the agent spelled it (echoed in the reply).
    pub event: String,
    pub session: Option<String>,
    pub transcript: Option<PathBuf>,
    /// The agent's working directory, where the project is looked for first.
    pub cwd: Option<PathBuf>,
    pub action: Action,
    /// The model's last reply, where the event carries it (Claude Code and
    /// Codex `Stop`: `last_assistant_message`; Gemini `AfterAgent`:
    /// `prompt_response`; Codex `notify`): a nonce echoed there is found
    /// without reading the transcript.
    pub last_message: Option<String>,
    /// The user's prompt (`UserPromptSubmit`, Gemini `BeforeAgent`).
    pub prompt: Option<String>,
    /// Claude Code's `SessionStart` (resume, fork) and `PostModelSwitch`: the
    /// context size, and the model (`to_model` after a switch).
    pub context_tokens: Option<u64>,
    pub model: Option<String>,
    /// The tool call a `PostToolUse`/`PostToolUseFailure`/`AfterTool` reports, as far as loop
    /// detection and the checkpoint need it (each agent reads its own tools).
    pub tool: Option<ToolCall>,
    /// `tool_use_id` of a tool event, whatever the tool (`tool` holds only those ctxkeep reads).
    pub tool_use_id: Option<String>,
    /// The event fired inside a subagent (Claude Code's `agent_id`): its calls are in the
    /// subagent's own transcript, not the one the payload names.
    pub in_subagent: bool,
    /// The summary the agent wrote, where the post-compaction event carries
    /// it (Claude Code `PostCompact`: `compact_summary`).
    pub summary: Option<String>,
    /// Text that is in the transcript once the agent has written everything before this
    /// event, for an agent that writes it on its own schedule (Copilot CLI: the event's own
    /// hook record): the hook waits for it briefly before reading the transcript.
    pub written_mark: Option<String>,
    /// A plan item the call marked completed, where the agent's tools say (its text, or
    /// the task's number).
    pub plan_done: Option<String>,
}

/// A finished tool call, from the payload of the hook it fired. The agent's result is written
/// to its transcript only after this hook has run, so this is the only place the hook can see
/// its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// `tool_name`, as the agent spells it.
    pub name: String,
    /// `tool_use_id` (Claude Code, Codex; Gemini sends none).
    pub id: Option<String>,
    pub action: ToolAction,
    /// None when the payload does not say (Codex's shell: its rollout has the exit code).
    pub outcome: Option<ToolOutcome>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolAction {
    /// A shell command.
    Command(String),
    /// Files written or edited, as the payload names them.
    Files(Vec<ToolFile>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFile {
    pub path: PathBuf,
    /// [`content_hash`] of what the file holds after the call, when the payload gives it
    /// (else it is read from the disk).
    pub content: Option<String>,
    /// [`content_hash`] of what it held before, when the payload gives it.
    pub before: Option<String>,
}

impl ToolFile {
    /// A file a tool wrote, with the contents its response shows the user hashed: the
    /// `returnDisplay` object's `newContent` (after) and `originalContent` (before), which the
    /// file tools of Gemini CLI and of the agents built from it report after the call.
    pub fn from_return_display(
        path: impl Into<PathBuf>,
        response: Option<&Map<String, Value>>,
    ) -> ToolFile {
        let display = response.and_then(|r| r.get("returnDisplay"));
        let hash_of = |key: &str| {
            display
                .and_then(|d| d.get(key))
                .and_then(Value::as_str)
                .map(|c| content_hash(c.as_bytes()))
        };
        ToolFile {
            path: path.into(),
            content: hash_of("newContent"),
            before: hash_of("originalContent"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// Whether it succeeded; None when the agent cannot tell (a command left running).
    pub ok: Option<bool>,
    pub exit_code: Option<i64>,
    /// What it printed (a command's output, an error's text).
    pub output: String,
}

impl ToolOutcome {
    pub fn failed(text: &str) -> ToolOutcome {
        ToolOutcome {
            ok: Some(false),
            exit_code: crate::transcripts::activity::text::exit_code_in(text),
            output: text.to_string(),
        }
    }

    pub fn succeeded(output: String) -> ToolOutcome {
        ToolOutcome {
            ok: Some(true),
            exit_code: None,
            output,
        }
    }
}

pub use crate::transcripts::activity::loops::content_hash;

/// The object `key` of the payload, when it is one.
pub fn object_of<'a>(root: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    root.get(key).and_then(Value::as_object)
}

/// Reads a payload's JSON object from `input`, at most [`MAX_PAYLOAD_BYTES`].
pub fn read_object(input: impl Read) -> Result<Map<String, Value>, Error> {
    let stdin = Path::new("<stdin>");
    let mut bytes = Vec::new();
    input
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(stdin, "cannot read the hook input", e))?;
    if bytes.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(Error::data(
            stdin,
            format!("hook input is over {} KiB", MAX_PAYLOAD_BYTES / 1024),
        ));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| Error::data(stdin, "hook input is not UTF-8"))?;
    parse_object(&text)
}

/// A payload's JSON object from its text.
pub fn parse_object(text: &str) -> Result<Map<String, Value>, Error> {
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| Error::data(STDIN, format!("hook input is not valid JSON: {e}")))?;
    match value {
        Value::Object(root) => Ok(root),
        _ => Err(Error::data(STDIN, "hook input is not a JSON object")),
    }
}

/// Where payloads come from, as errors name it.
pub const STDIN: &str = "<stdin>";

/// A trimmed, non-empty string field of the payload.
pub fn text_of(root: &Map<String, Value>, key: &str) -> Option<String> {
    root.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// [`from_object`], and after a tool call the call and its outcome, read by the agent's own
/// `tool_call`.
pub fn with_tool_call(
    root: &Map<String, Value>,
    event_meaning: impl Fn(&str) -> &str,
    tool_call: fn(&Map<String, Value>) -> Option<ToolCall>,
) -> Result<Payload, Error> {
    let mut p = from_object(root, event_meaning)?;
    if p.after_tool() {
        p.tool = tool_call(root);
    }
    Ok(p)
}

/// A payload in Claude Code's shape (`hook_event_name`, `session_id`, …),
/// which every agent's hooks share; `event_meaning` maps an agent's own
/// event name to the Claude Code event that means the same to ctxkeep.
pub fn from_object(
    root: &Map<String, Value>,
    event_meaning: impl Fn(&str) -> &str,
) -> Result<Payload, Error> {
    let event = text_of(root, "hook_event_name")
        .ok_or_else(|| Error::data(STDIN, "hook input has no hook_event_name"))?;
    let action = action_for(event_meaning(&event), root);
    Ok(Payload {
        event,
        session: text_of(root, "session_id"),
        transcript: text_of(root, "transcript_path").map(PathBuf::from),
        cwd: text_of(root, "cwd").map(PathBuf::from),
        action,
        last_message: text_of(root, "last_assistant_message")
            .or_else(|| text_of(root, "prompt_response")),
        prompt: text_of(root, "prompt"),
        context_tokens: root.get("context_tokens").and_then(Value::as_u64),
        // `PostModelSwitch` names the model switched to `to_model`.
        model: text_of(root, "model").or_else(|| text_of(root, "to_model")),
        tool: None,
        tool_use_id: text_of(root, "tool_use_id"),
        in_subagent: root.contains_key("agent_id"),
        summary: text_of(root, "compact_summary"),
        written_mark: None,
        plan_done: None,
    })
}

impl Payload {
    /// Whether the event follows a tool call (Claude Code's and Codex's
    /// `PostToolUse`/`PostToolUseFailure`, Gemini's `AfterTool`).
    pub fn after_tool(&self) -> bool {
        matches!(
            self.event.as_str(),
            "PostToolUse" | "PostToolUseFailure" | "AfterTool"
        )
    }
}

/// Whether a shell command may discard uncommitted work, from its text; a
/// `git checkout NAME` is read where it runs (a switch is answered here like
/// any harmless command, with no git run: [`checkout_paths`]).
///
/// [`checkout_paths`]: crate::system::git::snapshot::checkout_paths
fn may_discard(command: &str, cwd: Option<&str>) -> bool {
    use crate::transcripts::destructive::{recognise_all, Kind};
    recognise_all(command).iter().any(|f| match (&f.kind, cwd) {
        (Kind::Checkout { within, operands }, Some(cwd)) => {
            crate::system::git::snapshot::checkout_paths(within, operands, Path::new(cwd)).is_some()
        }
        _ => true,
    })
}

/// What a (Claude Code) event means to ctxkeep; `AfterTurn` stands for the
/// end of a turn of an agent whose event has no Claude Code peer.
fn action_for(event: &str, root: &Map<String, Value>) -> Action {
    let field = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| root.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    match event {
        // A failing tool call fires Claude Code's `PostToolUseFailure`, not
        // `PostToolUse`.
        "UserPromptSubmit" | "PostToolUse" | "PostToolUseFailure" => Action::Track { reply: true },
        // The turn is over: the token count is fresh (Codex writes its last
        // `token_count` before `Stop`) and the reply may echo the nonce.
        "AfterTurn" | "Stop" => Action::Track { reply: false },
        "PostCompact" => Action::PostCompact {
            trigger: field(&["trigger"]),
        },
        "PreCompact" => Action::PreCompact {
            trigger: field(&["trigger"]),
        },
        // Gemini's documentation names the field `source` in one place and
        // `trigger` in another.
        "SessionStart" => Action::SessionStart {
            source: field(&["source", "trigger"]).unwrap_or_else(|| "startup".into()),
        },
        "PostModelSwitch" => Action::ModelSwitch,
        "SessionEnd" => Action::SessionEnd {
            reason: field(&["reason", "trigger"]),
        },
        // Every agent's shell tool names its command `command`.
        "PreToolUse" => match object_of(root, "tool_input")
            .and_then(|i| i.get("command"))
            .and_then(Value::as_str)
        {
            Some(c) if may_discard(c, field(&["cwd"]).as_deref()) => Action::BeforeDestructive {
                command: c.to_string(),
            },
            _ => Action::Ignore,
        },
        _ => Action::Ignore,
    }
}
