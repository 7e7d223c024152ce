//! Codex CLI rollouts (docs/agents.md, "Codex CLI rollouts"): `response_item` lines carry the model's tool calls
//! (`function_call`, `custom_tool_call`, `local_shell_call`) and their outputs by `call_id`;
//! `event_msg/user_message` is what the user typed (the `response_item` user messages also
//! carry instructions and environment context, so they are only a fallback);
//! `event_msg/patch_apply_end` reports patches applied from a code cell.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::activity::text::string_values;
use crate::transcripts::activity::text::{argv_display, exit_code_in, patch_files, user_request};

/// The heading Codex's IDE extension puts the request under, after the editor's context.
const IDE_CONTEXT: &str = "# Context from my IDE setup:";
const IDE_REQUEST: &str = "## My request for Codex:";

/// The user's request in a user message, out of the IDE extension's wrapper when it has one.
fn request_in(text: &str) -> Option<String> {
    if text.trim_start().starts_with(IDE_CONTEXT) {
        let at = text.find(IDE_REQUEST)?;
        return user_request(&text[at + IDE_REQUEST.len()..]);
    }
    user_request(text)
}
use crate::transcripts::activity::{
    first_line_object, parts_text, plan_items, window_lines, Recorder,
};

/// Line shapes worth parsing (outputs are judged by their call id first).
const WANTED: [&str; 11] = [
    "\"type\":\"CommandExecution\"",
    "\"type\":\"function_call\"",
    "\"type\":\"custom_tool_call\"",
    "\"type\":\"local_shell_call\"",
    "\"type\":\"user_message\"",
    "\"type\":\"patch_apply_end\"",
    "\"type\":\"exec_command_end\"",
    "\"type\":\"session_meta\"",
    "\"type\":\"turn_context\"",
    "\"role\":\"user\"",
    "\"role\":\"assistant\"",
];

pub(super) fn read(
    path: &Path,
    mut file: File,
    len: u64,
    rec: &mut Recorder,
) -> anyhow::Result<()> {
    // The session's id: its meta line when the window holds it, else the file's name
    // (`rollout-<time>-<id>.jsonl`), else the first line.
    let lines = window_lines(path, &mut file, len, rec.window)?;
    let mut r = Reader::default();
    for bytes in &lines {
        let Ok(line) = std::str::from_utf8(bytes) else {
            continue;
        };
        if is_compaction(line) {
            // The history replayed after it is not new activity; the context was compacted.
            rec.context_compacted();
            continue;
        }
        if !r.worth_parsing(line, rec) {
            continue;
        }
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line) {
            rec.line_time(map.get("timestamp").and_then(Value::as_str));
            r.line(&map, rec);
        }
    }
    if rec.session.is_none() {
        rec.session = id_from_name(path).or_else(|| {
            let first = first_line_object(&mut file, len)?;
            let payload = first.get("payload")?;
            Some(payload.get("id")?.as_str()?.to_string())
        });
    }
    // What the user typed, in order with the replies; the user items only when the rollout
    // has no typed events (they also carry instructions and context).
    let typed = r.said.iter().any(|(s, _)| matches!(s, Said::Typed(_)));
    for (said, at) in r.said {
        // Each keeps the time of the line it was said on.
        rec.line_time(at.as_deref());
        match said {
            Said::Typed(t) => rec.request(t),
            Said::UserItem(t) if !typed => rec.request(t),
            Said::UserItem(_) => {}
            Said::Reply(t) => rec.reply(&t),
        }
    }
    Ok(())
}

/// The uuid at the end of a rollout's file name.
fn id_from_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    (id.len() == 36 && id.chars().filter(|&c| c == '-').count() == 4).then(|| id.to_string())
}

/// What the user and the model said, in rollout order.
enum Said {
    /// An `event_msg/user_message` that reads as a request.
    Typed(String),
    /// A user `response_item` that reads as one (older rollouts have no events).
    UserItem(String),
    /// An assistant message's text.
    Reply(String),
}

/// A `compacted` item: Codex compacted its context here (the line replays the history kept).
fn is_compaction(line: &str) -> bool {
    let mut end = line.len().min(80);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].contains("\"type\":\"compacted\"")
}

#[derive(Default)]
struct Reader {
    cwd: Option<String>,
    /// What was said, with its line's time.
    said: Vec<(Said, Option<String>)>,
    /// The time of the line being read.
    line_at: Option<String>,
    /// `write_stdin` call id → the exec session it feeds.
    stdin_calls: HashMap<String, String>,
    /// Exec session id → the `exec_command` call still running in it.
    sessions: HashMap<String, String>,
    /// Calls whose output decides whether their patch applied.
    patch_calls: HashSet<String>,
}

impl Reader {
    fn worth_parsing(&self, line: &str, rec: &Recorder) -> bool {
        if line.contains("_call_output\"") {
            let mut seen = false;
            for id in string_values(line, "\"call_id\":\"") {
                seen = true;
                if rec.is_pending(id) || self.stdin_calls.contains_key(id) {
                    return true;
                }
            }
            return !seen;
        }
        WANTED.iter().any(|w| line.contains(w))
    }

    fn line(&mut self, line: &Map<String, Value>, rec: &mut Recorder) {
        self.line_at = line
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        let Some(payload) = line.get("payload").and_then(Value::as_object) else {
            return;
        };
        let s = |k: &str| payload.get(k).and_then(Value::as_str);
        match line.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                if let Some(id) = s("id") {
                    rec.session = Some(id.to_string());
                }
                if let Some(cwd) = s("cwd") {
                    self.cwd = Some(cwd.to_string());
                }
                // A subagent's rollout (review, spawned thread) is not the main session.
                if payload
                    .get("source")
                    .and_then(Value::as_object)
                    .is_some_and(|o| o.contains_key("subagent"))
                {
                    rec.not_main = true;
                }
            }
            Some("turn_context") => {
                if let Some(cwd) = s("cwd") {
                    self.cwd = Some(cwd.to_string());
                }
            }
            Some("event_msg") => self.event(payload, rec),
            Some("response_item") => self.item(payload, rec),
            _ => {}
        }
    }

    fn event(&mut self, p: &Map<String, Value>, rec: &mut Recorder) {
        match p.get("type").and_then(Value::as_str) {
            Some("user_message") => {
                if let Some(r) = p
                    .get("message")
                    .and_then(Value::as_str)
                    .and_then(request_in)
                {
                    self.said.push((Said::Typed(r), self.line_at.clone()));
                }
            }
            // Codex 0.169 writes this before the call's PostToolUse hook runs, and the
            // output only after it: the outcome of the call that fired the hook.
            Some("item_completed") => {
                let Some(item) = p
                    .get("item")
                    .filter(|i| i.get("type").and_then(Value::as_str) == Some("CommandExecution"))
                else {
                    return;
                };
                let (Some(id), Some(code)) = (
                    item.get("id").and_then(Value::as_str),
                    item.get("exit_code").and_then(Value::as_i64),
                ) else {
                    return;
                };
                let output = item
                    .get("aggregated_output")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                rec.outcome_with_output(id, Some(code == 0), Some(code), output);
            }
            Some("exec_command_end") => {
                if let (Some(id), Some(code)) = (
                    p.get("call_id").and_then(Value::as_str),
                    p.get("exit_code").and_then(Value::as_i64),
                ) {
                    rec.outcome(id, None, Some(code));
                }
            }
            Some("patch_apply_end") => {
                let ok = p.get("success").and_then(Value::as_bool);
                let id = p.get("call_id").and_then(Value::as_str);
                if let Some(id) = id.filter(|id| rec.is_pending(id)) {
                    // The call is already recorded; this settles it.
                    rec.outcome(id, ok, None);
                    return;
                }
                if ok == Some(false) {
                    return;
                }
                let Some(changes) = p.get("changes").and_then(Value::as_object) else {
                    return;
                };
                let mut files = Vec::new();
                for (path, change) in changes {
                    files.extend(rec.root.display(path, self.cwd.as_deref()));
                    if let Some(to) = change.get("move_path").and_then(Value::as_str) {
                        files.extend(rec.root.display(to, self.cwd.as_deref()));
                    }
                }
                rec.files(None, files);
            }
            _ => {}
        }
    }

    fn item(&mut self, p: &Map<String, Value>, rec: &mut Recorder) {
        let s = |k: &str| p.get(k).and_then(Value::as_str);
        let call_id = s("call_id").or_else(|| s("id"));
        match s("type") {
            Some("message") if s("role") == Some("user") => {
                let text = message_text(p);
                if let Some(r) = request_in(&text) {
                    self.said.push((Said::UserItem(r), self.line_at.clone()));
                }
            }
            Some("message") if s("role") == Some("assistant") => {
                self.said
                    .push((Said::Reply(message_text(p)), self.line_at.clone()));
            }
            Some("function_call") => {
                let (Some(name), Some(id)) = (s("name"), call_id) else {
                    return;
                };
                let args: Map<String, Value> = s("arguments")
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or_default();
                self.function_call(name, id, &args, rec);
            }
            Some("custom_tool_call") => {
                if let (Some("apply_patch"), Some(id), Some(input)) =
                    (s("name"), call_id, s("input"))
                {
                    self.patch(id, input, None, rec);
                }
            }
            Some("local_shell_call") => {
                let (Some(id), Some(action)) = (call_id, p.get("action")) else {
                    return;
                };
                let argv = strings(action.get("command"));
                let dir = action.get("working_directory").and_then(Value::as_str);
                self.shell(id, &argv, dir, rec);
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                if let Some(id) = call_id {
                    self.output(id, p.get("output"), rec);
                }
            }
            _ => {}
        }
    }

    fn function_call(
        &mut self,
        name: &str,
        id: &str,
        args: &Map<String, Value>,
        rec: &mut Recorder,
    ) {
        let s = |k: &str| args.get(k).and_then(Value::as_str);
        let dir = s("workdir").or_else(|| s("cwd"));
        match name {
            "shell" | "container.exec" | "shell_command" | "exec_command" | "local_shell" => {
                let argv = match args.get("command").or_else(|| args.get("cmd")) {
                    Some(Value::String(c)) => vec![c.clone()],
                    other => strings(other),
                };
                self.shell(id, &argv, dir, rec);
            }
            "apply_patch" => {
                if let Some(input) = s("input").or_else(|| s("patch")) {
                    self.patch(id, input, dir, rec);
                }
            }
            "update_plan" => {
                let Some(plan) = args.get("plan").and_then(Value::as_array) else {
                    return;
                };
                rec.replace_plan(plan_items(plan, &["step"]));
            }
            "write_stdin" => {
                if let Some(sid) = args.get("session_id").map(value_key) {
                    self.stdin_calls.insert(id.to_string(), sid);
                }
            }
            _ => {}
        }
    }

    fn shell(&mut self, id: &str, argv: &[String], dir: Option<&str>, rec: &mut Recorder) {
        if argv.is_empty() {
            return;
        }
        let words: Vec<&str> = argv.iter().map(String::as_str).collect();
        // Older Codex ran patches through the shell (`apply_patch <<'EOF'` or as an argument).
        let files = patch_files(&argv.join("\n"));
        if !files.is_empty() {
            self.patch_paths(id, files, dir, rec);
        }
        rec.command(Some(id), argv_display(&words));
    }

    fn patch(&mut self, id: &str, input: &str, dir: Option<&str>, rec: &mut Recorder) {
        let files = patch_files(input);
        self.patch_paths(id, files, dir, rec);
    }

    fn patch_paths(&mut self, id: &str, files: Vec<String>, dir: Option<&str>, rec: &mut Recorder) {
        let base = dir.or(self.cwd.as_deref()).map(str::to_string);
        let shown = files
            .iter()
            .filter_map(|f| rec.root.display(f, base.as_deref()))
            .collect();
        self.patch_calls.insert(id.to_string());
        rec.files(Some(id), shown);
    }

    fn output(&mut self, id: &str, output: Option<&Value>, rec: &mut Recorder) {
        let (text, mut ok, code) = parse_output(output);
        if let Some(sid) = self.stdin_calls.remove(id) {
            // Input to a running exec session: its output may report the session's exit.
            if let (Some(code), Some(exec)) = (code, self.sessions.get(&sid).cloned()) {
                self.sessions.remove(&sid);
                rec.outcome(&exec, None, Some(code));
            }
            return;
        }
        if self.patch_calls.remove(id) && ok.is_none() && code.is_none() {
            let t = text.trim_start();
            if t.starts_with("apply_patch verification failed")
                || t.starts_with("Failed to apply patch")
                || t.starts_with("patch rejected")
                || t.starts_with("error")
                || t.starts_with("Error")
            {
                ok = Some(false);
            } else if t.starts_with("Success") {
                ok = Some(true);
            }
        }
        if code.is_none() && ok.is_none() {
            if let Some(sid) = text
                .split_once("Process running with session ID ")
                .map(|(_, rest)| {
                    rest.chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                })
                .filter(|s| !s.is_empty())
            {
                // Still running: the exit comes with a later `write_stdin`.
                self.sessions.insert(sid, id.to_string());
                return;
            }
        }
        if ok.is_none() && code.is_some() {
            ok = code.map(|c| c == 0);
        }
        rec.outcome_with_output(id, ok, code, command_output(&text));
    }
}

/// The command's own output in an `exec_command` result, after the `Chunk ID`, `Wall time`,
/// `Process exited with code` lines Codex puts before it (what its hooks' `tool_response` and
/// its `item_completed` event carry).
fn command_output(text: &str) -> &str {
    match text.split_once("\nOutput:\n") {
        Some((head, rest)) if head.lines().count() <= 6 => rest,
        _ => text,
    }
}

/// (text, ok, exit code) of a tool output: a JSON string `{output, metadata: {exit_code}}`, an
/// object `{content, success}`, or plain text stating the exit code.
fn parse_output(output: Option<&Value>) -> (String, Option<bool>, Option<i64>) {
    match output {
        Some(Value::String(s)) => {
            if s.trim_start().starts_with('{') {
                if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(s) {
                    let text = o
                        .get("output")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let code = o
                        .get("metadata")
                        .and_then(|m| m.get("exit_code"))
                        .and_then(Value::as_i64)
                        .or_else(|| exit_code_in(&text));
                    return (text, None, code);
                }
            }
            (s.clone(), None, exit_code_in(s))
        }
        Some(Value::Object(o)) => {
            let text = o.get("content").map(parts_text).unwrap_or_default();
            let code = exit_code_in(&text);
            (text, o.get("success").and_then(Value::as_bool), code)
        }
        _ => (String::new(), None, None),
    }
}

fn message_text(p: &Map<String, Value>) -> String {
    match p.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn value_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
