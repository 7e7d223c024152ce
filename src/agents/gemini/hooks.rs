//! Gemini CLI's hooks: Claude Code's payload shape under Gemini's own event
//! names, and a JSON object on stdout every time.

use serde_json::{json, Map, Value};

use crate::agents::payload::{
    object_of, text_of, with_tool_call, Payload, ToolAction, ToolCall, ToolFile, ToolOutcome,
};
use crate::agents::DoctorSample;
use crate::system::error::Error;

/// A payload; after a tool call (`AfterTool`), the call and its outcome.
pub fn payload(root: &Map<String, Value>) -> Result<Payload, Error> {
    with_tool_call(root, event_meaning, tool_call)
}

/// The call an `AfterTool` reports: its `tool_response` is what the model gets (`llmContent`,
/// where a shell command's result says `Exit Code: N` when it is not 0), what the user sees
/// (`returnDisplay`, with a written file's `newContent`), and `error` when the tool failed.
/// Gemini sends no id for the call.
pub fn tool_call(root: &Map<String, Value>) -> Option<ToolCall> {
    let name = text_of(root, "tool_name")?;
    let input = object_of(root, "tool_input")?;
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let response = object_of(root, "tool_response");
    let llm = response
        .and_then(|r| r.get("llmContent"))
        .map(crate::transcripts::activity::parts_text)
        .unwrap_or_default();
    let error = response
        .and_then(|r| r.get("error"))
        .filter(|e| !e.is_null())
        .map(|e| match e {
            Value::String(s) => s.clone(),
            other => other
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| other.to_string()),
        });
    let (action, outcome) = match name.as_str() {
        "run_shell_command" => {
            let code = crate::transcripts::activity::text::exit_code_in(&llm);
            let output = shell_output(&llm);
            let outcome = match &error {
                Some(e) => ToolOutcome {
                    ok: Some(false),
                    exit_code: code,
                    output: format!("{e}\n{output}"),
                },
                None => ToolOutcome {
                    ok: Some(code.is_none_or(|c| c == 0)),
                    exit_code: Some(code.unwrap_or(0)),
                    output,
                },
            };
            (ToolAction::Command(s("command")?.to_string()), outcome)
        }
        "write_file" | "replace" => {
            let path = s("file_path").or_else(|| s("path"))?;
            let outcome = match &error {
                Some(e) => ToolOutcome::failed(e),
                None => ToolOutcome::succeeded(String::new()),
            };
            let file = ToolFile::from_return_display(path, response);
            (ToolAction::Files(vec![file]), outcome)
        }
        _ => return None,
    };
    Some(ToolCall {
        name,
        id: None,
        action,
        outcome: Some(outcome),
    })
}

/// What a shell command printed, out of the frame Gemini puts around it for the model
/// (`<untrusted_context>`, `Output: `, `Exit Code: N`, `Process Group PGID: N`).
pub(super) fn shell_output(llm: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for line in llm.lines() {
        let t = line.trim();
        if matches!(t, "<untrusted_context>" | "</untrusted_context>")
            || t.starts_with("Exit Code: ")
            || t.starts_with("Process Group PGID: ")
        {
            continue;
        }
        out.push(line.strip_prefix("Output: ").unwrap_or(line));
    }
    out.join("\n")
}

/// The Claude Code event that means to ctxkeep what Gemini's `event` does.
pub fn event_meaning(event: &str) -> &str {
    match event {
        "BeforeAgent" | "AfterTool" => "UserPromptSubmit",
        "AfterAgent" => "AfterTurn",
        "PreCompress" => "PreCompact",
        "BeforeTool" => "PreToolUse",
        other => other,
    }
}

/// A reply (`type: gemini`) and its tool arguments.
pub fn authored_text(line: &serde_json::Map<String, Value>) -> Vec<String> {
    if line.get("type").and_then(Value::as_str) != Some("gemini") {
        return Vec::new();
    }
    let mut out: Vec<String> = line
        .get("content")
        .map(|c| vec![c.to_string()])
        .unwrap_or_default();
    if let Some(Value::Array(calls)) = line.get("toolCalls") {
        out.extend(
            calls
                .iter()
                .filter_map(|c| c.get("args"))
                .map(Value::to_string),
        );
    }
    out
}

/// A Gemini CLI chat recording with one reply (20,000 input tokens).
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "session-2026-01-01T00-00-ctxkeep.jsonl",
    transcript: r#"{"sessionId":"ctxkeep-doctor","projectHash":"0","startTime":"2026-01-01T00:00:00.000Z","lastUpdated":"2026-01-01T00:00:00.000Z","kind":"main"}
{"id":"u1","timestamp":"2026-01-01T00:00:01.000Z","type":"user","content":[{"text":"hello"}]}
{"id":"g1","timestamp":"2026-01-01T00:00:02.000Z","type":"gemini","content":"ok","tokens":{"input":20000,"output":5,"cached":0,"thoughts":0,"tool":0,"total":20005},"model":"gemini-2.5-pro","toolCalls":[]}
"#,
    common_fields: doctor_common_fields,
    event_fields: doctor_event_fields,
};

pub fn doctor_common_fields() -> Value {
    json!({ "timestamp": "2026-01-01T00:00:03.000Z" })
}

pub fn doctor_event_fields(event: &str) -> Option<Value> {
    match event {
        // `clear` renders the resume prompt when there is a checkpoint (Gemini has no `compact`).
        "SessionStart" => Some(json!({ "source": "clear" })),
        "SessionEnd" => Some(json!({ "reason": "exit" })),
        _ => None,
    }
}
