//! Claude Code transcripts (docs/agents.md, "Claude Code transcripts"): user lines hold prompts and tool results,
//! assistant lines one content block each (a `tool_use` among them), `attachment` lines the
//! prompts queued while the agent worked. Sidechain lines, `progress` lines and the other
//! record types (`api-request-blob` included: it repeats every injected reminder) are ignored.

use std::collections::HashSet;
use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::activity::text::{exit_code_in, string_values, user_request};
use crate::transcripts::activity::{attached, delegated, line_time, shell};
use crate::transcripts::activity::{parts_text, plan_items, window_lines, PlanStatus, Recorder};

/// The tools whose calls matter, as they appear in a compact `tool_use` line.
const TRACKED: [&str; 11] = [
    "\"name\":\"Read\"",
    "\"name\":\"Grep\"",
    "\"name\":\"Write\"",
    "\"name\":\"Edit\"",
    "\"name\":\"MultiEdit\"",
    "\"name\":\"NotebookEdit\"",
    "\"name\":\"Bash\"",
    "\"name\":\"TodoWrite\"",
    "\"name\":\"TaskCreate\"",
    "\"name\":\"TaskUpdate\"",
    "\"name\":\"ExitPlanMode\"",
];

/// Whether a search's `path` names a file rather than a folder: its last part has an
/// extension (`src/hooks.go`, not `src`, `.github` or `cmd/cli`).
fn names_a_file(path: &str) -> bool {
    let last = path.rsplit(['/', '\\']).next().unwrap_or("");
    last.rfind('.').is_some_and(|i| i > 0 && i + 1 < last.len())
}

/// Where plan mode writes its plan files (under the user's home).
const PLANS: &str = "/.claude/plans/";

/// How the result of a `Bash` call that exited non-zero begins.
const FAILED_COMMAND: &str = "Exit code ";

pub(super) fn read(path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
    let lines = window_lines(path, file, len, rec.window)?;
    let mut reader = Reader {
        background: HashSet::new(),
    };
    for bytes in &lines {
        let Ok(line) = std::str::from_utf8(bytes) else {
            continue;
        };
        if !worth_parsing(line, rec) {
            continue;
        }
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(line) {
            reader.line(&map, rec);
        }
    }
    Ok(())
}

/// Whether a line may change the observation, judged on its text. Quotes inside JSON strings
/// are escaped, so a key pattern found here is the line's structure, not quoted content. Lines
/// of an unexpected spacing are parsed.
fn worth_parsing(line: &str, rec: &Recorder) -> bool {
    if line.contains("\"type\":\"progress\"") {
        return line.contains("\"agent_progress\"") && subagent_line_worth_parsing(line, rec);
    }
    if line.contains("\"type\":\"api-request-blob\"") {
        return false;
    }
    // A file Claude Code attached to the conversation (an `@` mention, or the files it gives
    // back after a compaction): a read.
    if line.contains("\"attachment\":{\"type\":\"file\"") {
        return true;
    }
    if line.contains("\"tool_use_id\"") {
        // Tool results: only those of the calls being followed.
        let mut seen = false;
        for id in string_values(line, "\"tool_use_id\":\"") {
            seen = true;
            if rec.is_pending(id) {
                return true;
            }
        }
        // A finished subagent's report: the files it changed (see `subagent_result`); a
        // command's failure, whose output names where the errors are (see `result`).
        return !seen
            || (line.contains("\"agentId\"") && line.contains("\"status\":\"completed\""))
            || (line.contains("\"is_error\":true") && line.contains(FAILED_COMMAND));
    }
    if line.contains("\"tool_use\"") {
        return !line.contains("\"name\":\"") || TRACKED.iter().any(|t| line.contains(t));
    }
    if line.contains("\"queued_command\"") {
        return true;
    }
    // The agent's own words, for the next step it states.
    if line.contains("\"type\":\"assistant\"") && line.contains("\"type\":\"text\"") {
        return true;
    }
    line.contains("\"user\"")
}

/// The tools a subagent changes files with, as they appear in a compact `tool_use` line.
const SUBAGENT_CHANGES: [&str; 5] = [
    "\"name\":\"Write\"",
    "\"name\":\"Edit\"",
    "\"name\":\"MultiEdit\"",
    "\"name\":\"NotebookEdit\"",
    "\"name\":\"Bash\"",
];

/// A subagent's message carried by an `agent_progress` line: worth parsing when it calls a
/// tool that changes files, or reports an error for such a call being followed.
fn subagent_line_worth_parsing(line: &str, rec: &Recorder) -> bool {
    if line.contains("\"tool_use_id\"") {
        return line.contains("\"is_error\":true")
            && string_values(line, "\"tool_use_id\":\"").any(|id| rec.is_pending(id));
    }
    line.contains("\"tool_use\"") && SUBAGENT_CHANGES.iter().any(|t| line.contains(t))
}

struct Reader {
    /// `Bash` calls run in the background: their result says nothing of the outcome.
    background: HashSet<String>,
}

impl Reader {
    fn line(&mut self, line: &Map<String, Value>, rec: &mut Recorder) {
        if line.get("isSidechain") == Some(&Value::Bool(true)) {
            return;
        }
        rec.line_time(line.get("timestamp").and_then(Value::as_str));
        let ty = line.get("type").and_then(Value::as_str);
        if matches!(ty, Some("user" | "assistant")) {
            if let Some(s) = line.get("sessionId").and_then(Value::as_str) {
                if rec.session.as_deref() != Some(s) {
                    rec.session = Some(s.to_string());
                }
            }
        }
        let cwd = line.get("cwd").and_then(Value::as_str);
        if rec.cwd.as_deref() != cwd {
            rec.cwd = cwd.map(str::to_string);
        }
        match ty {
            Some("user") => self.user(line, rec),
            Some("assistant") => {
                let Some(blocks) = content(line).and_then(Value::as_array) else {
                    return;
                };
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("tool_use") => self.call(b, cwd, line, rec),
                        // Not the error notices Claude Code writes in place of a reply.
                        Some("text") if !synthetic(line) => {
                            if let Some(t) = b.get("text").and_then(Value::as_str) {
                                rec.reply(t);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some("progress") => subagent_progress(line, cwd, rec),
            Some("attachment") => {
                let Some(att) = line.get("attachment").and_then(Value::as_object) else {
                    return;
                };
                let str_of = |k: &str| att.get(k).and_then(Value::as_str);
                if str_of("type") == Some("file") {
                    if let Some(p) = str_of("filename").and_then(|p| rec.root.display(p, cwd)) {
                        rec.read_files(vec![p]);
                    }
                    return;
                }
                let human = att
                    .get("origin")
                    .and_then(|o| o.get("kind"))
                    .and_then(Value::as_str)
                    .is_none_or(|k| k == "human");
                if str_of("type") == Some("queued_command") {
                    // A monitor's message queued while the agent worked: the checks it reports.
                    if let Some(p) = str_of("prompt") {
                        rec.injected(p);
                    }
                }
                if str_of("type") == Some("queued_command")
                    && str_of("commandMode").is_none_or(|m| m == "prompt")
                    && human
                {
                    if let Some(r) = str_of("prompt").and_then(user_request) {
                        rec.request(r);
                    }
                }
            }
            _ => {}
        }
    }

    fn user(&mut self, line: &Map<String, Value>, rec: &mut Recorder) {
        let flag = |k: &str| line.get(k) == Some(&Value::Bool(true));
        let meta = flag("isMeta") || flag("isCompactSummary") || flag("isVisibleInTranscriptOnly");
        if flag("isCompactSummary") {
            rec.context_compacted();
        }
        // A message a tool injected (a CI monitor's event, a task notification): the checks it
        // reports. Not the summary, which may quote one.
        if !flag("isCompactSummary") {
            match content(line) {
                Some(Value::String(s)) => rec.injected(s),
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        if b.get("type").and_then(Value::as_str) == Some("text") {
                            if let Some(t) = b.get("text").and_then(Value::as_str) {
                                rec.injected(t);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        // A slash command's expansion: the files its `@` references attach are read.
        if flag("isMeta") && !flag("isCompactSummary") {
            let text = match content(line) {
                Some(Value::String(s)) => s.clone(),
                Some(blocks @ Value::Array(_)) => parts_text(blocks),
                _ => String::new(),
            };
            if text.contains('@') {
                let cwd = line.get("cwd").and_then(Value::as_str);
                let paths: Vec<String> = attached::referenced_files(&text)
                    .iter()
                    .filter_map(|p| rec.root.display(p, cwd))
                    .collect();
                rec.read_files(paths);
            }
        }
        match content(line) {
            Some(Value::String(s)) if !meta => {
                if let Some(r) = user_request(s) {
                    rec.request(r);
                }
            }
            Some(Value::Array(blocks)) => {
                let mut text = String::new();
                let mut results = false;
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("tool_result") => {
                            results = true;
                            self.result(b, line.get("toolUseResult"), rec);
                        }
                        Some("text") if !meta => {
                            if let Some(t) = b.get("text").and_then(Value::as_str) {
                                if !text.is_empty() {
                                    text.push('\n');
                                }
                                text.push_str(t);
                            }
                        }
                        _ => {}
                    }
                }
                if !results && !meta {
                    if let Some(r) = user_request(&text) {
                        rec.request(r);
                    }
                }
            }
            _ => {}
        }
    }

    fn call(
        &mut self,
        block: &Value,
        cwd: Option<&str>,
        line: &Map<String, Value>,
        rec: &mut Recorder,
    ) {
        let (Some(name), Some(id)) = (
            block.get("name").and_then(Value::as_str),
            block.get("id").and_then(Value::as_str),
        ) else {
            return;
        };
        let empty = Map::new();
        let input = block
            .get("input")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let s = |k: &str| input.get(k).and_then(Value::as_str);
        match name {
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
                let key = if name == "NotebookEdit" {
                    "notebook_path"
                } else {
                    "file_path"
                };
                let plan_mode = s(key).is_some_and(|p| p.replace('\\', "/").contains(PLANS));
                if let Some(p) = s(key).and_then(|p| rec.root.display(p, cwd)) {
                    if plan_mode {
                        rec.plan_file(p);
                    } else {
                        rec.files(Some(id), vec![p]);
                    }
                }
            }
            "Read" => {
                if let Some(p) = s("file_path").and_then(|p| rec.root.display(p, cwd)) {
                    rec.read_files(vec![p]);
                }
            }
            // A search inside one file reads that file (a folder's search reads none).
            "Grep" => {
                if let Some(p) = s("path")
                    .filter(|p| names_a_file(p))
                    .and_then(|p| rec.root.display(p, cwd))
                {
                    rec.read_files(vec![p]);
                }
            }
            "Bash" => {
                if let Some(c) = s("command") {
                    if input.get("run_in_background") == Some(&Value::Bool(true)) {
                        self.background.insert(id.to_string());
                    }
                    rec.command(Some(id), c.to_string());
                }
            }
            "TodoWrite" => {
                let Some(todos) = input.get("todos").and_then(Value::as_array) else {
                    return;
                };
                rec.replace_plan(plan_items(todos, &["content", "subject"]));
            }
            "TaskCreate" => {
                if let Some(text) = s("subject").or_else(|| s("description")) {
                    rec.task_create(id, text.to_string());
                }
            }
            // Plan mode's plan, as the user was asked to approve it.
            "ExitPlanMode" => {
                if let Some(plan) = s("plan") {
                    let at = line
                        .get("timestamp")
                        .and_then(Value::as_str)
                        .and_then(line_time::stored);
                    rec.plan_mode_plan(id, plan, at);
                }
            }
            "TaskUpdate" => {
                let Some(task) = input.get("taskId").and_then(id_string) else {
                    return;
                };
                let status = s("status").map(PlanStatus::parse);
                rec.task_update(&task, status, s("subject").map(str::to_string));
            }
            _ => {}
        }
    }

    /// A finished subagent (Task/Agent call): the files its task names and its report says it
    /// changed, since its own transcript may not be at hand.
    fn subagent_result(&self, block: &Value, tool_use_result: Option<&Value>, rec: &mut Recorder) {
        let Some(r) = tool_use_result else {
            return;
        };
        let done = r.get("agentId").is_some()
            && r.get("status").and_then(Value::as_str) == Some("completed");
        let Some(task) = r.get("prompt").and_then(Value::as_str).filter(|_| done) else {
            return;
        };
        let report = block.get("content").map(parts_text).unwrap_or_default();
        let cwd = rec.cwd.clone();
        let paths: Vec<String> = delegated::changed_files(task, &report)
            .iter()
            .filter_map(|p| rec.root.display(p, cwd.as_deref()))
            .collect();
        rec.files(None, paths);
    }

    fn result(&mut self, block: &Value, tool_use_result: Option<&Value>, rec: &mut Recorder) {
        let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
            return;
        };
        self.subagent_result(block, tool_use_result, rec);
        let text = block.get("content").map(parts_text).unwrap_or_default();
        let failed = block.get("is_error") == Some(&Value::Bool(true))
            || text.trim_start().starts_with("<tool_use_error>");
        if !rec.is_pending(id) {
            // A command whose call an earlier read held (a hook event fired between them).
            if failed && text.starts_with(FAILED_COMMAND) {
                rec.failed_output(&text);
            }
            return;
        }
        // TaskCreate: the new task's id, from the structured result or its text.
        let task_id = tool_use_result
            .and_then(|r| r.get("task"))
            .and_then(|t| t.get("id"))
            .and_then(id_string)
            .or_else(|| {
                let rest = text.split_once("Task #")?.1;
                let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                (!n.is_empty()).then_some(n)
            });
        rec.task_created(id, task_id, failed);
        rec.plan_mode_answered(id, failed);
        match rec.call_is_command(id) {
            Some(true) => {
                let (ok, code) = if failed {
                    (Some(false), exit_code_in(&text))
                } else if self.background.contains(id) {
                    (None, None)
                } else {
                    // A foreground `Bash` result is an error unless the command exited 0.
                    (Some(true), Some(0))
                };
                rec.outcome_with_output(id, ok, code, &text);
            }
            Some(false) => rec.outcome(id, Some(!failed), None),
            None => {}
        }
    }
}

/// A subagent's message carried in the parent's transcript (`progress` lines of type
/// `agent_progress`, written by the 2.1 versions before subagents got files of their own): the
/// files its own calls change (`Write`, `Edit`, `MultiEdit`, `NotebookEdit`, and what a `Bash`
/// command names as changed) are the session's changes, kept unless the subagent's result for
/// that call is an error. Its reads, searches and commands stay its own.
fn subagent_progress(line: &Map<String, Value>, cwd: Option<&str>, rec: &mut Recorder) {
    let Some(data) = line.get("data").and_then(Value::as_object) else {
        return;
    };
    if data.get("type").and_then(Value::as_str) != Some("agent_progress") {
        return;
    }
    let Some(message) = data.get("message") else {
        return;
    };
    let Some(blocks) = message
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
    else {
        return;
    };
    for b in blocks {
        let str_of = |k: &str| b.get(k).and_then(Value::as_str);
        match str_of("type") {
            Some("tool_use") => {
                let (Some(name), Some(id)) = (str_of("name"), str_of("id")) else {
                    continue;
                };
                let input = |k: &str| {
                    b.get("input")
                        .and_then(|i| i.get(k))
                        .and_then(Value::as_str)
                };
                let named: Vec<String> = match name {
                    "Write" | "Edit" | "MultiEdit" => {
                        input("file_path").into_iter().map(str::to_string).collect()
                    }
                    "NotebookEdit" => input("notebook_path")
                        .into_iter()
                        .map(str::to_string)
                        .collect(),
                    "Bash" => input("command")
                        .map(|c| shell::named_files(c).changed)
                        .unwrap_or_default(),
                    _ => continue,
                };
                let paths: Vec<String> = named
                    .iter()
                    .filter(|p| !p.replace('\\', "/").contains(PLANS))
                    .filter_map(|p| rec.root.display(p, cwd))
                    .collect();
                rec.delegated_files(id, paths);
            }
            Some("tool_result") => {
                let Some(id) = str_of("tool_use_id").filter(|id| rec.is_pending(id)) else {
                    continue;
                };
                let text = b.get("content").map(parts_text).unwrap_or_default();
                let failed = b.get("is_error") == Some(&Value::Bool(true))
                    || text.trim_start().starts_with("<tool_use_error>");
                rec.outcome(id, Some(!failed), None);
            }
            _ => {}
        }
    }
}

/// An assistant line Claude Code wrote itself (an API error, "No response requested.").
fn synthetic(line: &Map<String, Value>) -> bool {
    line.get("isApiErrorMessage") == Some(&Value::Bool(true))
        || line
            .get("message")
            .and_then(|m| m.get("model"))
            .and_then(Value::as_str)
            == Some("<synthetic>")
}

fn content(line: &Map<String, Value>) -> Option<&Value> {
    line.get("message")?.get("content")
}

/// A task id given as a string or a number.
fn id_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
