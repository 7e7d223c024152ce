//! What a Qwen Code session did, from its chat records: the user's requests
//! (`type: user` with `provenance: real_user`), the replies' `functionCall`
//! parts, and their outcomes in the `tool_result` records'
//! `functionResponse` parts, matched by call id.

use std::fs::File;
use std::path::Path;

use serde_json::Value;

use crate::agents::recorded_call::RecordedCall;
use crate::transcripts::activity::text::{exit_code_in, user_request};
use crate::transcripts::activity::{parts_text, plan_items, window_lines, Recorder};

pub(super) fn read(path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
    if len == 0 {
        return Ok(());
    }
    for bytes in &window_lines(path, file, len, rec.window)? {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        if let Some(s) = line.get("sessionId").and_then(Value::as_str) {
            rec.session = Some(s.to_string());
        }
        rec.line_time(line.get("timestamp").and_then(Value::as_str));
        let parts = line
            .get("message")
            .and_then(|m| m.get("parts"))
            .and_then(Value::as_array);
        match line.get("type").and_then(Value::as_str) {
            Some("user") if line.get("provenance").and_then(Value::as_str) == Some("real_user") => {
                if let Some(r) =
                    parts.and_then(|p| user_request(&parts_text(&Value::Array(p.clone()))))
                {
                    rec.request(r);
                }
            }
            Some("assistant") => {
                for call in parts
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.get("functionCall"))
                {
                    tool_call(call, rec);
                }
            }
            Some("tool_result") => {
                for resp in parts
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.get("functionResponse"))
                {
                    tool_result(resp, rec);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn tool_call(value: &Value, rec: &mut Recorder) {
    let Some(call) = RecordedCall::of(value, "id", "args") else {
        return;
    };
    let id = call.id;
    match call.name {
        "write_file" | "edit" | "replace" => {
            if let Some(p) = call.path(&["file_path", "path"], rec) {
                rec.files(Some(id), vec![p]);
            }
        }
        "read_file" => {
            if let Some(p) = call.path(&["absolute_path", "file_path", "path"], rec) {
                rec.read_files(vec![p]);
            }
        }
        "run_shell_command" => {
            if let Some(cmd) = call.arg(&["command"]) {
                rec.command(Some(id), cmd.to_string());
            }
        }
        "todo_write" => {
            if let Some(todos) = call.args.get("todos").and_then(Value::as_array) {
                rec.replace_plan(plan_items(todos, &["content", "description"]));
            }
        }
        _ => {}
    }
}

fn tool_result(resp: &Value, rec: &mut Recorder) {
    let Some(id) = resp.get("id").and_then(Value::as_str) else {
        return;
    };
    if !rec.is_pending(id) {
        return;
    }
    let response = resp.get("response");
    let error = response
        .and_then(|r| r.get("error"))
        .and_then(Value::as_str);
    // A failed command's frame (`Output: …`, `Exit Code: N`) is its `error`, a finished one's
    // its `output`.
    let output = response
        .and_then(|r| r.get("output"))
        .and_then(Value::as_str)
        .or(error)
        .unwrap_or_default();
    let code = exit_code_in(output);
    let ok = if error.is_some() {
        Some(false)
    } else {
        Some(code.is_none_or(|c| c == 0))
    };
    // The same output the call's hook read from its payload, so the failure is the same
    // whichever of the two loop detection sees first.
    rec.outcome_with_output(id, ok, code, &super::hooks::shell_output(output));
}
