//! Codex's hooks copy Claude Code's event names and payloads; its `notify`
//! program gets a payload of its own at the end of each turn.

use serde_json::{json, Map, Value};

use crate::agents::payload::{
    object_of, text_of, with_tool_call, Action, Payload, ToolAction, ToolCall, ToolFile,
    ToolOutcome, STDIN,
};
use crate::agents::DoctorSample;
use crate::system::error::Error;

/// A hook payload, or `notify`'s `{"type": "agent-turn-complete", "thread-id": …}`.
pub fn payload(root: &Map<String, Value>) -> Result<Payload, Error> {
    if root.get("hook_event_name").is_some() {
        return with_tool_call(root, |event| event, tool_call);
    }
    match text_of(root, "type").as_deref() {
        Some(kind @ "agent-turn-complete") => Ok(Payload {
            event: kind.to_string(),
            session: text_of(root, "thread-id"),
            transcript: None,
            cwd: text_of(root, "cwd").map(Into::into),
            action: Action::Track { reply: false },
            last_message: text_of(root, "last-assistant-message"),
            prompt: None,
            context_tokens: None,
            model: None,
            tool: None,
            tool_use_id: None,
            in_subagent: false,
            summary: None,
            written_mark: None,
            plan_done: None,
        }),
        _ => Err(Error::data(
            STDIN,
            "hook input has neither hook_event_name nor a notify type",
        )),
    }
}

/// The call a `PostToolUse` reports. Codex fires it for failures too (it has no
/// `PostToolUseFailure`), and its payload has no outcome field: a shell command's
/// `tool_response` is only what it printed, so its exit code is read from the rollout, where
/// Codex writes it (`item_completed`) before running the hook. `apply_patch`'s response states
/// its exit code.
pub fn tool_call(root: &Map<String, Value>) -> Option<ToolCall> {
    let name = text_of(root, "tool_name")?;
    let input = object_of(root, "tool_input")?;
    let command = input.get("command").and_then(Value::as_str)?;
    let (action, outcome) = match name.as_str() {
        "Bash" => (ToolAction::Command(command.to_string()), None),
        "apply_patch" => {
            let files = crate::transcripts::activity::text::patch_files(command)
                .into_iter()
                .map(|p| ToolFile {
                    path: p.into(),
                    content: None,
                    before: None,
                })
                .collect();
            let response = root
                .get("tool_response")
                .and_then(Value::as_str)
                .unwrap_or("");
            let code = crate::transcripts::activity::text::exit_code_in(response);
            let outcome = ToolOutcome {
                ok: code.map(|c| c == 0),
                exit_code: code,
                output: response.to_string(),
            };
            (ToolAction::Files(files), Some(outcome))
        }
        _ => return None,
    };
    Some(ToolCall {
        name,
        id: text_of(root, "tool_use_id"),
        action,
        outcome,
    })
}

/// What the model said or asked to run, in a rollout line.
pub fn authored_text(line: &Map<String, Value>) -> Vec<String> {
    if line.get("type").and_then(Value::as_str) != Some("response_item") {
        return Vec::new();
    }
    let Some(p) = line.get("payload") else {
        return Vec::new();
    };
    let field = |key: &str| p.get(key).map(|c| vec![c.to_string()]).unwrap_or_default();
    let ptype = p.get("type").and_then(Value::as_str);
    let role = p.get("role").and_then(Value::as_str);
    match (ptype, role) {
        (Some("message"), Some("assistant")) => field("content"),
        (Some("function_call"), _) => field("arguments"),
        (Some("custom_tool_call"), _) => field("input"),
        (Some("local_shell_call"), _) => field("action"),
        _ => Vec::new(),
    }
}

/// A Codex rollout with one response (20,000 tokens of a 258,400 window).
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "rollout-2026-01-01T00-00-00-ctxkeep-doctor.jsonl",
    transcript: r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"ctxkeep-doctor","cwd":"/","originator":"codex_cli_rs","cli_version":"0.169.0"}}
{"timestamp":"2026-01-01T00:00:01.000Z","type":"turn_context","payload":{"turn_id":"t1","model":"gpt-5.3-codex"}}
{"timestamp":"2026-01-01T00:00:02.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":19995,"cached_input_tokens":0,"output_tokens":5,"total_tokens":20000},"last_token_usage":{"input_tokens":19995,"cached_input_tokens":0,"output_tokens":5,"total_tokens":20000},"model_context_window":258400},"rate_limits":null}}
"#,
    common_fields: doctor_common_fields,
    event_fields: doctor_event_fields,
};

pub fn doctor_common_fields() -> Value {
    json!({ "model": "gpt-5.3-codex", "turn_id": "t1", "permission_mode": "default" })
}

pub fn doctor_event_fields(event: &str) -> Option<Value> {
    match event {
        "PreCompact" => Some(json!({ "trigger": "manual" })),
        _ => None,
    }
}
