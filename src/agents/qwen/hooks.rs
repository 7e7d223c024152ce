//! Qwen Code's hooks: Claude Code's events and payload shape, its own tools
//! after a call (`PostToolUse`, `PostToolUseFailure`); and what `hooks doctor`
//! sends them.

use serde_json::{json, Map, Value};

use crate::agents::payload::{
    object_of, text_of, with_tool_call, Payload, ToolAction, ToolCall, ToolFile, ToolOutcome,
};
use crate::agents::DoctorSample;
use crate::system::error::Error;

/// A payload; after a tool call, the call and its outcome.
pub fn payload(root: &Map<String, Value>) -> Result<Payload, Error> {
    with_tool_call(root, |event| event, tool_call)
}

/// The call a `PostToolUse` (`tool_response`: `llmContent` for the model, `returnDisplay` with a
/// written file's `newContent` and `originalContent`) or `PostToolUseFailure` (`error`, the text
/// the model gets) reports. A shell command that exits non-zero fires `PostToolUseFailure`; both
/// carry the command's frame (`Output:`, `Exit Code: N`).
pub fn tool_call(root: &Map<String, Value>) -> Option<ToolCall> {
    let name = text_of(root, "tool_name")?;
    let input = object_of(root, "tool_input")?;
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let response = object_of(root, "tool_response");
    let error = text_of(root, "error");
    let failed = error.is_some()
        || text_of(root, "hook_event_name").as_deref() == Some("PostToolUseFailure");
    let (action, outcome) = match name.as_str() {
        "run_shell_command" => {
            let frame = match &error {
                Some(e) => e.clone(),
                None => response
                    .and_then(|r| r.get("llmContent"))
                    .map(crate::transcripts::activity::parts_text)
                    .unwrap_or_default(),
            };
            let code = crate::transcripts::activity::text::exit_code_in(&frame);
            let output = shell_output(&frame);
            let outcome = if input.get("is_background") == Some(&Value::Bool(true)) {
                ToolOutcome {
                    ok: None,
                    exit_code: None,
                    output,
                }
            } else if failed {
                ToolOutcome {
                    ok: Some(false),
                    exit_code: code,
                    output,
                }
            } else {
                ToolOutcome {
                    ok: Some(code.is_none_or(|c| c == 0)),
                    exit_code: Some(code.unwrap_or(0)),
                    output,
                }
            };
            (ToolAction::Command(s("command")?.to_string()), outcome)
        }
        "write_file" | "edit" => {
            let outcome = match &error {
                Some(e) => ToolOutcome::failed(e),
                None if failed => ToolOutcome::failed(""),
                None => ToolOutcome::succeeded(String::new()),
            };
            let file = ToolFile::from_return_display(s("file_path")?, response);
            (ToolAction::Files(vec![file]), outcome)
        }
        _ => return None,
    };
    Some(ToolCall {
        name,
        // `tool_call_id` is the id the chat file gives the call (`functionCall.id`), so the
        // call is not counted again when the chat file shows it; `tool_use_id` is the hook's own.
        id: text_of(root, "tool_call_id").or_else(|| text_of(root, "tool_use_id")),
        action,
        outcome: Some(outcome),
    })
}

/// What a shell command printed, out of the frame Qwen Code puts around it for the model
/// (`Command:`, `Directory:`, `Output: `, `Error: (none)`, `Exit Code:`, `Signal:`, `Process
/// Group PGID:`).
pub(super) fn shell_output(frame: &str) -> String {
    const FRAME: [&str; 5] = [
        "Command: ",
        "Directory: ",
        "Exit Code: ",
        "Signal: ",
        "Process Group PGID: ",
    ];
    let mut out: Vec<&str> = Vec::new();
    for line in frame.lines() {
        if FRAME.iter().any(|lead| line.starts_with(lead)) || line == "Error: (none)" {
            continue;
        }
        match line.strip_prefix("Output: ") {
            // Qwen Code's word for no output at all.
            Some("(empty)") => {}
            Some(rest) => out.push(rest),
            None => out.push(line),
        }
    }
    out.join("\n").trim().to_string()
}

/// A Qwen Code chat record with one reply (20,000 prompt tokens).
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "ctxkeep-doctor.jsonl",
    transcript: r#"{"uuid":"u1","parentUuid":null,"sessionId":"ctxkeep-doctor","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","cwd":"/","version":"0.24.4","message":{"role":"user","parts":[{"text":"hello"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"ctxkeep-doctor","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","provenance":"assistant_output","cwd":"/","version":"0.24.4","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":{"promptTokenCount":20000,"candidatesTokenCount":5,"totalTokenCount":20005,"cachedContentTokenCount":0},"contextWindowSize":262144}
"#,
    common_fields: doctor_common_fields,
    event_fields: DoctorSample::usual_event_fields,
};

pub fn doctor_common_fields() -> Value {
    json!({ "permission_mode": "default", "timestamp": "2026-01-01T00:00:03.000Z" })
}

/// A reply's text and tool calls (`type: assistant`, `message.parts`).
pub fn authored_text(line: &Map<String, Value>) -> Vec<String> {
    if line.get("type").and_then(Value::as_str) != Some("assistant") {
        return Vec::new();
    }
    line.get("message")
        .and_then(|m| m.get("parts"))
        .map(|p| vec![p.to_string()])
        .unwrap_or_default()
}
