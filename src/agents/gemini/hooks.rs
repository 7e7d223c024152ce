//! Gemini CLI's hooks: Claude Code's payload shape under Gemini's own event
//! names, and a JSON object on stdout every time.

use serde_json::{json, Value};

use crate::agents::DoctorSample;

/// The Claude Code event that means to ctxkeep what Gemini's `event` does.
pub fn event_meaning(event: &str) -> &str {
    match event {
        "BeforeAgent" | "AfterTool" => "UserPromptSubmit",
        "AfterAgent" => "AfterTurn",
        "PreCompress" => "PreCompact",
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
