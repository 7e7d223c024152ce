//! What a Copilot CLI session did, from its `events.jsonl`: the user's requests
//! (`user.message`), the replies (`assistant.message`: `content`, and `toolRequests` with each
//! call's `toolCallId`, `name`, `arguments`), and their outcomes (`tool.execution_complete`:
//! `success`, `shellExecution.exitCode`, `result.content`, `error.message`), matched by call id.

use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use crate::observe::text::user_request;
use crate::observe::{window_lines, Recorder};

/// The only lines read: everything else (the system prompt, hook and usage records) is skipped
/// before parsing.
const TRACKED: [&str; 4] = [
    "{\"type\":\"user.message\"",
    "{\"type\":\"assistant.message\"",
    "{\"type\":\"tool.execution_complete\"",
    "{\"type\":\"session.start\"",
];

pub(super) fn read(path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
    if len == 0 {
        return Ok(());
    }
    for bytes in &window_lines(path, file, len, rec.window)? {
        if !TRACKED.iter().any(|t| bytes.starts_with(t.as_bytes())) {
            continue;
        }
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        let Some(data) = line.get("data").and_then(Value::as_object) else {
            continue;
        };
        let s = |k: &str| data.get(k).and_then(Value::as_str);
        match line.get("type").and_then(Value::as_str) {
            Some("session.start") => {
                if let Some(id) = s("sessionId") {
                    rec.session = Some(id.to_string());
                }
            }
            Some("user.message") => {
                if let Some(r) = s("content").and_then(user_request) {
                    rec.request(r);
                }
            }
            Some("assistant.message") => {
                if let Some(text) = s("content") {
                    rec.reply(text);
                }
                for call in data
                    .get("toolRequests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    tool_call(call, rec);
                }
            }
            Some("tool.execution_complete") => outcome(data, rec),
            _ => {}
        }
    }
    Ok(())
}

fn tool_call(call: &Value, rec: &mut Recorder) {
    let s = |k: &str| call.get(k).and_then(Value::as_str);
    let (Some(name), Some(id)) = (s("name"), s("toolCallId")) else {
        return;
    };
    let empty = Map::new();
    let args = call
        .get("arguments")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let arg = |k: &str| args.get(k).and_then(Value::as_str);
    match name {
        "create" | "edit" => {
            if let Some(p) = arg("path").and_then(|p| rec.root.display(p, None)) {
                rec.files(Some(id), vec![p]);
            }
        }
        "bash" => {
            if let Some(cmd) = arg("command") {
                rec.command(Some(id), cmd.to_string());
            }
        }
        _ => {}
    }
}

fn outcome(data: &Map<String, Value>, rec: &mut Recorder) {
    let Some(id) = data.get("toolCallId").and_then(Value::as_str) else {
        return;
    };
    if !rec.is_pending(id) {
        return;
    }
    let success = data.get("success").and_then(Value::as_bool);
    let error = data
        .get("error")
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str);
    let content = data
        .get("result")
        .and_then(|r| r.get("content"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    // The same outcome and output the call's hook read from its payload, so a failure is the
    // same whichever of the two loop detection sees first.
    let o = match error {
        Some(e) if success != Some(true) => crate::hook_payload::ToolOutcome::failed(e),
        _ => super::hooks::shell_outcome(content, false),
    };
    let code = data
        .get("shellExecution")
        .and_then(|x| x.get("exitCode"))
        .and_then(Value::as_i64)
        .or(o.exit_code);
    let ok = match success {
        Some(false) => Some(false),
        _ => o.ok.or(code.map(|c| c == 0)),
    };
    rec.outcome_with_output(id, ok, code, &o.output);
}
