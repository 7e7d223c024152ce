//! Gemini CLI chat recordings (docs/agents.md, "Gemini CLI chat recordings"): message records re-appended whole when they
//! change (the last copy wins, in the place of the first), `$set` patches (a `$set.messages`
//! replaces the list), `$rewindTo` (drops a message and what follows). A `gemini` message's
//! `toolCalls` carry each call's args, status and result. The legacy single-document session is
//! read whole when it fits in the window, else not at all.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Map, Value};

use crate::agents::recorded_call::RecordedCall;
use crate::system::error::Error;
use crate::transcripts::activity::text::string_values;
use crate::transcripts::activity::text::{exit_code_in, user_request};
use crate::transcripts::activity::{
    first_line_object, parts_text, plan_items, window_lines, Recorder,
};

const TRACKED: [&str; 7] = [
    "\"name\":\"read_file\"",
    "\"type\":\"user\"",
    // Replies, for the next step the model states.
    "\"type\":\"gemini\"",
    "\"name\":\"write_file\"",
    "\"name\":\"replace\"",
    "\"name\":\"run_shell_command\"",
    "\"name\":\"write_todos\"",
];

pub(super) fn read(
    path: &Path,
    mut file: File,
    len: u64,
    rec: &mut Recorder,
) -> anyhow::Result<()> {
    if len == 0 {
        return Ok(());
    }
    let first = first_line_object(&mut file, len);
    if first.is_none() && starts_with_brace(&mut file) {
        return read_legacy(path, file, len, rec);
    }
    if let Some(meta) = &first {
        meta_line(meta, rec);
    }
    let mut list = Messages::default();
    for bytes in &window_lines(path, &mut file, len, rec.window)? {
        let Ok(line) = std::str::from_utf8(bytes) else {
            continue;
        };
        if let Some(id) = line
            .starts_with("{\"id\":\"")
            .then(|| string_values(line, "\"id\":\"").next())
            .flatten()
        {
            if !TRACKED.iter().any(|t| line.contains(t)) {
                list.put(id, None); // keeps its place for a later rewind
                continue;
            }
        } else if line.starts_with("{\"$set\":") && !line.contains("\"messages\"") {
            continue; // a metadata patch
        }
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(target) = map.get("$rewindTo").and_then(Value::as_str) {
            list.rewind(target);
        } else if let Some(msgs) = map
            .get("$set")
            .and_then(|s| s.get("messages"))
            .and_then(Value::as_array)
        {
            list = Messages::default();
            for m in msgs {
                list.add(m);
            }
        } else if map.contains_key("id") {
            list.add(&Value::Object(map));
        } else if map.contains_key("sessionId") {
            meta_line(&map, rec);
        }
    }
    list.apply(rec);
    Ok(())
}

fn meta_line(meta: &Map<String, Value>, rec: &mut Recorder) {
    if let Some(s) = meta.get("sessionId").and_then(Value::as_str) {
        rec.session = Some(s.to_string());
    }
    if meta.get("kind").and_then(Value::as_str) == Some("subagent") {
        rec.not_main = true;
    }
}

fn starts_with_brace(file: &mut File) -> bool {
    let mut head = [0u8; 512];
    let n = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read(&mut head))
        .unwrap_or(0);
    head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

fn read_legacy(path: &Path, mut file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
    if len > rec.window {
        return Ok(()); // cannot be read from its end; the CLI migrates it on resume
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.take(len).read_to_end(&mut bytes))
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;
    let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(Error::data(path, "not a valid Gemini session JSON").into());
    };
    meta_line(&doc, rec);
    let mut list = Messages::default();
    for m in doc
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        list.add(m);
    }
    list.apply(rec);
    Ok(())
}

/// The message list as the CLI would rebuild it: ids in order of first appearance, the last
/// copy of each (None for one the pre-filter skipped).
#[derive(Default)]
struct Messages {
    order: Vec<String>,
    latest: HashMap<String, Option<Value>>,
}

impl Messages {
    fn put(&mut self, id: &str, msg: Option<Value>) {
        if self.latest.insert(id.to_string(), msg).is_none() {
            self.order.push(id.to_string());
        }
    }

    fn add(&mut self, msg: &Value) {
        if let Some(id) = msg.get("id").and_then(Value::as_str) {
            self.put(id, Some(msg.clone()));
        }
    }

    /// Drops `target` and everything after it; an unknown target clears the list.
    fn rewind(&mut self, target: &str) {
        let at = self.order.iter().position(|id| id == target).unwrap_or(0);
        for id in self.order.drain(at..) {
            self.latest.remove(&id);
        }
    }

    fn apply(self, rec: &mut Recorder) {
        for id in &self.order {
            let Some(Some(msg)) = self.latest.get(id) else {
                continue;
            };
            rec.line_time(msg.get("timestamp").and_then(Value::as_str));
            match msg.get("type").and_then(Value::as_str) {
                Some("user") => {
                    if let Some(r) = request_of(msg) {
                        rec.request(r);
                    }
                }
                Some("gemini") => {
                    if let Some(content) = msg.get("content") {
                        rec.reply(&parts_text(content));
                    }
                    for call in msg
                        .get("toolCalls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        tool_call(call, rec);
                    }
                }
                _ => {}
            }
        }
    }
}

/// What the user typed: `displayContent` when present (a slash command as typed, not its
/// expansion; only tool responses there means the record is the CLI's own continuation).
fn request_of(msg: &Value) -> Option<String> {
    let text = match msg.get("displayContent") {
        Some(d) => {
            let t = parts_text(d);
            if t.trim().is_empty() {
                return None;
            }
            t
        }
        None => parts_text(msg.get("content")?),
    };
    user_request(&text)
}

fn tool_call(value: &Value, rec: &mut Recorder) {
    let Some(call) = RecordedCall::of(value, "id", "args") else {
        return;
    };
    let (name, id) = (call.name, call.id);
    let status = value.get("status").and_then(Value::as_str);
    let failed = matches!(status, Some("error" | "cancelled"));
    // A call still running is recorded again, finished, in a later copy of its message.
    let finished = failed || status == Some("success");
    match name {
        "write_file" | "replace" => {
            if failed {
                return;
            }
            if let Some(p) = call.path(&["file_path", "path"], rec) {
                rec.files(Some(id), vec![p]);
                if finished {
                    rec.outcome(id, Some(true), None);
                }
            }
        }
        "read_file" => {
            if let Some(p) = call.path(&["file_path", "absolute_path", "path"], rec) {
                rec.read_files(vec![p]);
            }
        }
        "run_shell_command" => {
            let Some(cmd) = call.arg(&["command"]) else {
                return;
            };
            rec.command(Some(id), cmd.to_string());
            let output = value
                .get("result")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("functionResponse")?.get("response"))
                .filter_map(|r| r.get("output").or_else(|| r.get("error"))?.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let code = exit_code_in(&output);
            let ok = match status {
                Some("error") => Some(false),
                Some("success") => Some(code.is_none_or(|c| c == 0)),
                _ => code.map(|c| c == 0),
            };
            if finished || ok.is_some() {
                rec.outcome_with_output(id, ok, code, &super::hooks::shell_output(&output));
            }
        }
        "write_todos" => {
            let Some(todos) = call.args.get("todos").and_then(Value::as_array) else {
                return;
            };
            rec.replace_plan(plan_items(todos, &["description"]));
        }
        _ => {}
    }
}
