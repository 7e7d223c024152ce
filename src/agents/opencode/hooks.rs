//! OpenCode's events as ctxkeep's plugin hands them to `ctxkeep hook
//! opencode`: Claude Code's payload shape and event names (the plugin
//! translates), one of its own (`PreRequest`: before each model request),
//! and OpenCode's tools after a call.
//!
//! | OpenCode                                   | the plugin sends            |
//! |--------------------------------------------|-----------------------------|
//! | `chat.message`, first of the session       | `SessionStart` (startup/resume), then `UserPromptSubmit` |
//! | `tool.execute.before` (shell, naming git or rm) | `PreToolUse`           |
//! | `tool.execute.after`                       | `PostToolUse`               |
//! | `experimental.chat.messages.transform`     | `PreRequest`                |
//! | `experimental.session.compacting`          | `PreCompact`                |
//! | event `session.compacted`                  | `PostCompact`, then `SessionStart` (compact) |
//! | event `session.idle`                       | `Stop`                      |
//! | plugin `dispose` (OpenCode exits)          | `SessionEnd`                |

use serde_json::{json, Map, Value};

use crate::agents::payload::{
    content_hash, object_of, text_of, with_tool_call, Payload, ToolAction, ToolCall, ToolFile,
    ToolOutcome,
};
use crate::agents::DoctorSample;
use crate::system::error::Error;

/// A payload; after a tool call, the call and its outcome.
pub fn payload(root: &Map<String, Value>) -> Result<Payload, Error> {
    // Before a request the reply that made the last call is in the record: read like a tool's.
    with_tool_call(
        root,
        |event| match event {
            "PreRequest" => "PostToolUse",
            other => other,
        },
        tool_call,
    )
}

/// The call `tool.execute.after` reports: `tool_input` (the call's arguments) and
/// `tool_response` (`output`, the text the model gets, and `metadata`: a shell command's `exit`
/// and `output`, a written file's `filepath`).
pub fn tool_call(root: &Map<String, Value>) -> Option<ToolCall> {
    let name = text_of(root, "tool_name")?;
    let input = object_of(root, "tool_input")?;
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let response = object_of(root, "tool_response");
    let metadata = response.and_then(|r| r.get("metadata"));
    let (action, outcome) = match name.as_str() {
        "bash" => {
            let code = metadata.and_then(|m| m.get("exit")).and_then(Value::as_i64);
            let output = metadata
                .and_then(|m| m.get("output"))
                .or_else(|| response.and_then(|r| r.get("output")))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let output = if output == "(no output)" { "" } else { output };
            let outcome = ToolOutcome {
                // No exit code: killed at its timeout, or still running.
                ok: code.map(|c| c == 0),
                exit_code: code,
                output: output.trim().to_string(),
            };
            (ToolAction::Command(s("command")?.to_string()), outcome)
        }
        "write" | "edit" => {
            // `write` names the file in `filepath`, `edit` in `filediff.file`.
            let path = metadata
                .and_then(|m| m.get("filepath").or_else(|| m.get("filediff")?.get("file")))
                .and_then(Value::as_str)
                .or_else(|| s("filePath"))?;
            let file = ToolFile {
                path: path.into(),
                // What `write` wrote is its whole content; an edit's result is read from the disk.
                content: (name == "write")
                    .then(|| s("content").map(|c| content_hash(c.as_bytes())))
                    .flatten(),
                before: None,
            };
            (
                ToolAction::Files(vec![file]),
                ToolOutcome::succeeded(String::new()),
            )
        }
        _ => return None,
    };
    Some(ToolCall {
        name,
        // `callID`: the id the record gives the call too, so it is not counted twice.
        id: text_of(root, "tool_use_id"),
        action,
        outcome: Some(outcome),
    })
}

/// A record of one reply (20,000 tokens in context) in a 200,000-token model.
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "ctxkeep-doctor.jsonl",
    transcript: concat!(
        r#"{"type":"chat.message","properties":{"sessionID":"ctxkeep-doctor","messageID":"msg_1","text":"hello"}}"#,
        "\n",
        r#"{"type":"chat.params","properties":{"sessionID":"ctxkeep-doctor","model":{"id":"e2e","providerID":"standin","limit":{"context":200000,"output":8192}}}}"#,
        "\n",
        r#"{"type":"message.updated","properties":{"sessionID":"ctxkeep-doctor","info":{"id":"msg_2","parentID":"msg_1","role":"assistant","mode":"build","agent":"build","cost":0,"tokens":{"total":20005,"input":20000,"output":5,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"e2e","providerID":"standin","time":{"created":1767225601000,"completed":1767225602000},"sessionID":"ctxkeep-doctor","finish":"stop"}}}"#,
        "\n"
    ),
    common_fields: doctor_common_fields,
    event_fields: doctor_event_fields,
};

pub fn doctor_common_fields() -> Value {
    json!({})
}

/// What the plugin sends with `event`, where it differs from Claude Code's.
pub fn doctor_event_fields(event: &str) -> Option<Value> {
    match event {
        "PostToolUse" => Some(json!({
            "tool_name": "bash", "tool_input": { "command": "true", "description": "check" },
            "tool_response": { "title": "true", "output": "(no output)",
                "metadata": { "output": "(no output)", "exit": 0, "truncated": false } },
            "tool_use_id": "call_doctor",
        })),
        "PreCompact" => Some(json!({ "trigger": "manual", "custom_instructions": "" })),
        "SessionEnd" => Some(json!({ "reason": "exit" })),
        "PreRequest" => Some(json!({})),
        _ => None,
    }
}

/// A record line the model wrote: a text part (`time.end` set, not synthetic) or a tool call.
pub fn authored_text(line: &Map<String, Value>) -> Vec<String> {
    if line.get("type").and_then(Value::as_str) != Some("message.part.updated") {
        return Vec::new();
    }
    let Some(part) = line.get("properties").and_then(|p| p.get("part")) else {
        return Vec::new();
    };
    match part.get("type").and_then(Value::as_str) {
        Some("text") if part.get("synthetic") != Some(&Value::Bool(true)) => part
            .get("text")
            .and_then(Value::as_str)
            .map(|t| vec![t.to_string()])
            .unwrap_or_default(),
        Some("tool") => part
            .get("state")
            .and_then(|s| s.get("input"))
            .map(|i| vec![i.to_string()])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}
