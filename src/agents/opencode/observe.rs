//! What an OpenCode session did, from the plugin's record: the user's
//! prompts (`chat.message`), the model's text parts, and its finished tool
//! calls (`message.part.updated` with a `tool` part: the call, its input and
//! its outcome in one line).

use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::activity::text::{exit_code_in, user_request};
use crate::transcripts::activity::{line_time, plan_items, window_lines, Recorder};

pub(super) fn read(path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
    if len == 0 {
        return Ok(());
    }
    for bytes in &window_lines(path, file, len, rec.window)? {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        let Some(props) = line.get("properties").and_then(Value::as_object) else {
            continue;
        };
        if let Some(s) = props.get("sessionID").and_then(Value::as_str) {
            rec.session = Some(s.to_string());
        }
        // Only a part says when it was written (`time.start`, its state's for a tool call, in
        // milliseconds); a prompt's line has no time.
        let started = props.get("part").and_then(|part| {
            let time = part
                .get("time")
                .or_else(|| part.get("state")?.get("time"))?;
            line_time::from_millis(time.get("start")?.as_i64()?)
        });
        rec.line_time(started.as_deref());
        match line.get("type").and_then(Value::as_str) {
            Some("chat.message") => {
                if let Some(r) = props
                    .get("text")
                    .and_then(Value::as_str)
                    .and_then(|t| user_request(&unquoted(t)))
                {
                    rec.request(r);
                }
            }
            Some("message.part.updated") => {
                let Some(part) = props.get("part").and_then(Value::as_object) else {
                    continue;
                };
                match part.get("type").and_then(Value::as_str) {
                    Some("text") if part.get("synthetic") != Some(&Value::Bool(true)) => {
                        if let Some(t) = part.get("text").and_then(Value::as_str) {
                            rec.reply(t);
                        }
                    }
                    Some("tool") => tool(part, rec),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn tool(part: &Map<String, Value>, rec: &mut Recorder) {
    let s = |k: &str| part.get(k).and_then(Value::as_str);
    let (Some(name), Some(id)) = (s("tool"), s("callID")) else {
        return;
    };
    let Some(state) = part.get("state").and_then(Value::as_object) else {
        return;
    };
    let empty = Map::new();
    let args = state
        .get("input")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let arg = |k: &str| args.get(k).and_then(Value::as_str);
    let metadata = state.get("metadata");
    let failed = state.get("status").and_then(Value::as_str) == Some("error");
    match name {
        "write" | "edit" => {
            let path = metadata
                .and_then(|m| m.get("filepath").or_else(|| m.get("filediff")?.get("file")))
                .and_then(Value::as_str)
                .or_else(|| arg("filePath"));
            if let Some(p) = path.and_then(|p| rec.root.display(p, None)) {
                rec.files(Some(id), vec![p]);
                rec.outcome(id, Some(!failed), None);
            }
        }
        "read" => {
            if let Some(p) = arg("filePath").and_then(|p| rec.root.display(p, None)) {
                rec.read_files(vec![p]);
            }
        }
        "bash" => {
            let Some(cmd) = arg("command") else {
                return;
            };
            rec.command(Some(id), cmd.to_string());
            let output = metadata
                .and_then(|m| m.get("output"))
                .and_then(Value::as_str)
                .or_else(|| state.get("error").and_then(Value::as_str))
                .unwrap_or_default();
            let output = if output == "(no output)" { "" } else { output };
            let code = metadata
                .and_then(|m| m.get("exit"))
                .and_then(Value::as_i64)
                .or_else(|| exit_code_in(output));
            let ok = if failed {
                Some(false)
            } else {
                code.map(|c| c == 0)
            };
            rec.outcome_with_output(id, ok, code, output);
        }
        "todowrite" => {
            if let Some(todos) = args.get("todos").and_then(Value::as_array) {
                rec.replace_plan(plan_items(todos, &["content"]));
            }
        }
        _ => {}
    }
}

/// A prompt as the user typed it: `opencode run` (1.18.33) hands the model its message as a
/// JSON string, quotes and escapes included.
fn unquoted(text: &str) -> String {
    let t = text.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        if let Ok(inner) = serde_json::from_str::<String>(t) {
            return inner;
        }
    }
    text.to_string()
}
