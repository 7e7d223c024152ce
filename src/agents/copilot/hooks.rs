//! GitHub Copilot CLI's hooks, configured with Claude Code's event names: its payloads then
//! carry Claude Code's fields (`hook_event_name`, `session_id`, `tool_name`, `tool_input`), its
//! own tool result (`tool_result.result_type`, `tool_result.text_result_for_llm`) and no tool
//! call id; only `Stop` and `PreCompact` name the transcript. What `hooks doctor` sends them.

use serde_json::{json, Map, Value};

use crate::agents::payload::{
    content_hash, object_of, text_of, with_tool_call, Action, Payload, ToolAction, ToolCall,
    ToolFile, ToolOutcome, STDIN,
};
use crate::agents::DoctorSample;
use crate::system::error::Error;

/// A payload; a new session's start (`source: new`) is ctxkeep's `startup`; after a tool call,
/// the call and its outcome.
pub fn payload(root: &Map<String, Value>) -> Result<Payload, Error> {
    if !root.contains_key("hook_event_name") && root.contains_key("sessionId") {
        return Err(Error::data(
            STDIN,
            "hook input has no hook_event_name: Copilot CLI names the event only to hooks \
             configured with Claude Code's event names (`ctxkeep hooks install copilot` writes \
             them), not its own camelCase ones",
        ));
    }
    let mut p = with_tool_call(root, |event| event, tool_call)?;
    if let Action::SessionStart { source } = &mut p.action {
        if source == "new" {
            *source = "startup".into();
        }
    }
    if !matches!(p.action, Action::SessionStart { .. } | Action::Ignore) {
        p.written_mark = written_mark(root);
    }
    Ok(p)
}

/// Copilot CLI writes its session log in batches, a little after the fact: a hook that ran
/// right after a model call read the log from before that call (seen with 1.0.102). Each hook
/// run is logged first (`hook.start`, its input with the payload's `timestamp` in epoch
/// milliseconds); once that line is there, so is everything before the event.
fn written_mark(root: &Map<String, Value>) -> Option<String> {
    let at = text_of(root, "timestamp")?;
    let at = chrono::DateTime::parse_from_rfc3339(&at).ok()?;
    Some(format!("\"timestamp\":{}", at.timestamp_millis()))
}

/// The call a `PostToolUse` (`tool_result`) or `PostToolUseFailure` (`error`) reports. The
/// payload names the tools as Claude Code does (`Bash`, `Write` for Copilot CLI's `create`,
/// `Edit`) with Copilot CLI's arguments (`path`, `file_text`). A shell command that exits
/// non-zero is a success to Copilot CLI: its exit code is in the text the model gets.
pub fn tool_call(root: &Map<String, Value>) -> Option<ToolCall> {
    let name = text_of(root, "tool_name")?;
    let input = object_of(root, "tool_input")?;
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let result = object_of(root, "tool_result");
    let text = result
        .and_then(|r| r.get("text_result_for_llm"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let error = text_of(root, "error").or_else(|| {
        let failed = result
            .and_then(|r| r.get("result_type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t != "success");
        failed.then(|| text.to_string())
    });
    let (action, outcome) = match name.as_str() {
        "Bash" | "bash" => {
            let command = s("command")?.to_string();
            let outcome = match &error {
                Some(e) => ToolOutcome::failed(e),
                None => shell_outcome(text, s("mode") == Some("async")),
            };
            (ToolAction::Command(command), outcome)
        }
        "Write" | "create" | "Edit" | "edit" => {
            let path = s("path").or_else(|| s("file_path"))?;
            let written = matches!(name.as_str(), "Write" | "create");
            let file = ToolFile {
                path: path.into(),
                // What `create` wrote is its `file_text`; an edit's result is read from the disk.
                content: s("file_text")
                    .filter(|_| written && error.is_none())
                    .map(|c| content_hash(c.as_bytes())),
                before: None,
            };
            let outcome = match &error {
                Some(e) => ToolOutcome::failed(e),
                None => ToolOutcome::succeeded(String::new()),
            };
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

/// The outcome of a shell command from the text Copilot CLI gives the model: what it printed,
/// then `<shellId: N completed with exit code K>`; a command started in the background
/// (`mode: async`) has none yet.
pub(super) fn shell_outcome(text: &str, background: bool) -> ToolOutcome {
    let text = without_hook_guidance(text);
    let (output, code) = split_shell_status(text);
    match code {
        Some(code) => ToolOutcome {
            ok: Some(code == 0),
            exit_code: Some(code),
            output,
        },
        None if background || text.contains("started in background") => ToolOutcome {
            ok: None,
            exit_code: None,
            output,
        },
        None => ToolOutcome {
            ok: Some(true),
            exit_code: None,
            output,
        },
    }
}

/// A shell result's output and the exit code of its last `<shellId: N completed with exit code
/// K>` line (that line left out of the output).
pub(super) fn split_shell_status(text: &str) -> (String, Option<i64>) {
    let mut code = None;
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("<shellId:") && t.ends_with('>') {
            if let Some(rest) = t.split("exit code ").nth(1) {
                let digits: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                code = digits.parse().ok().or(code);
            }
            continue;
        }
        out.push(line);
    }
    (out.join("\n").trim().to_string(), code)
}

/// What Copilot CLI appends to a tool's result for the model after a `postToolUse` hook added
/// context (ctxkeep's own words among them), cut off: the call's output is what is before it.
pub(super) fn without_hook_guidance(text: &str) -> &str {
    match text.find("\n\nTool \"") {
        Some(at) if text[at..].contains("Additional guidance from postToolUse hooks:") => {
            &text[..at]
        }
        _ => text,
    }
}

/// A Copilot CLI session log (`events.jsonl`) with one model call (20,000 prompt tokens).
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "events.jsonl",
    transcript: r#"{"type":"session.start","data":{"sessionId":"ctxkeep-doctor","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102","startTime":"2026-01-01T00:00:00.000Z","selectedModel":"gpt-4.1","context":{"cwd":"/"}},"id":"e1","timestamp":"2026-01-01T00:00:00.000Z","parentId":null}
{"type":"user.message","data":{"content":"hello","transformedContent":"hello","messageId":"m1","turnId":"0"},"id":"e2","timestamp":"2026-01-01T00:00:01.000Z","parentId":"e1"}
{"type":"session.usage_record","data":{"usage":{"model":"gpt-4.1","inputTokens":20000,"outputTokens":5,"cacheReadTokens":0,"cacheWriteTokens":0,"initiator":"user","interactionType":"conversation-agent","maxPromptTokens":64000,"maxOutputTokens":16384}},"id":"e3","timestamp":"2026-01-01T00:00:02.000Z","parentId":"e2"}
{"type":"assistant.message","data":{"messageId":"m2","model":"gpt-4.1","content":"ok","toolRequests":[],"turnId":"0"},"id":"e4","timestamp":"2026-01-01T00:00:02.000Z","parentId":"e3"}
"#,
    common_fields: doctor_common_fields,
    event_fields: DoctorSample::usual_event_fields,
};

/// No `timestamp`: with one the hook would wait for its own record in the sample log, which
/// `hooks doctor` does not write.
pub fn doctor_common_fields() -> Value {
    json!({})
}

/// A reply's text and tool calls (`assistant.message`: `content`, `toolRequests`).
pub fn authored_text(line: &Map<String, Value>) -> Vec<String> {
    if line.get("type").and_then(Value::as_str) != Some("assistant.message") {
        return Vec::new();
    }
    let Some(data) = line.get("data").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(text) = data.get("content").and_then(Value::as_str) {
        if !text.is_empty() {
            out.push(text.to_string());
        }
    }
    if let Some(calls) = data.get("toolRequests").filter(|c| !c.is_null()) {
        out.push(calls.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(name: &str) -> Payload {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents/copilot-1.0.102/hooks")
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(path).unwrap();
        payload(&crate::agents::payload::parse_object(&text).unwrap()).unwrap()
    }

    #[test]
    fn captured_payloads_give_the_call_its_outcome_and_the_mark_to_wait_for() {
        let start = captured("SessionStart-new");
        assert_eq!(
            start.action,
            Action::SessionStart {
                source: "startup".into()
            }
        );
        assert_eq!(start.written_mark, None);
        let resumed = captured("SessionStart-resume");
        assert_eq!(
            resumed.action,
            Action::SessionStart {
                source: "resume".into()
            }
        );
        let bash = captured("PostToolUse-Bash");
        // 2026-11-27T09:18:12.187Z
        assert_eq!(
            bash.written_mark.as_deref(),
            Some("\"timestamp\":1795771092187")
        );
        let tool = bash.tool.unwrap();
        assert_eq!(tool.id, None);
        assert_eq!(
            tool.action,
            ToolAction::Command("sh -c 'echo widget check failed >&2; exit 3'".into())
        );
        assert_eq!(
            tool.outcome,
            Some(ToolOutcome {
                ok: Some(false),
                exit_code: Some(3),
                output: "widget check failed".into()
            })
        );
        let write = captured("PostToolUse-Write").tool.unwrap();
        assert_eq!(
            write.action,
            ToolAction::Files(vec![ToolFile {
                path: "/work/repo/notes.txt".into(),
                content: Some(content_hash(b"alpha\n")),
                before: None,
            }])
        );
        let edit = captured("PostToolUse-Edit").tool.unwrap();
        assert_eq!(
            edit.action,
            ToolAction::Files(vec![ToolFile {
                path: "/work/repo/notes.txt".into(),
                content: None,
                before: None,
            }])
        );
        let failed = captured("PostToolUseFailure-Edit").tool.unwrap();
        let outcome = failed.outcome.unwrap();
        assert_eq!(outcome.ok, Some(false));
        assert!(outcome.output.contains("ENOENT"), "{outcome:?}");
        let stop = captured("Stop");
        assert_eq!(stop.action, Action::Track { reply: false });
        assert!(stop.transcript.is_some());
        assert!(matches!(
            captured("PreCompact-auto").action,
            Action::PreCompact { trigger: Some(ref t) } if t == "auto"
        ));
    }

    #[test]
    fn a_payload_of_copilots_own_event_names_is_refused_with_the_reason() {
        let camel = r#"{"sessionId":"s","timestamp":1795769935548,"cwd":"/p","toolName":"bash"}"#;
        let err = payload(&crate::agents::payload::parse_object(camel).unwrap()).unwrap_err();
        assert!(err.to_string().contains("camelCase"), "{err}");
    }

    #[test]
    fn the_exit_code_comes_from_the_shell_status_line() {
        let o = shell_outcome("bad\n<shellId: 1 completed with exit code 3>", false);
        assert_eq!(
            (o.ok, o.exit_code, o.output.as_str()),
            (Some(false), Some(3), "bad")
        );
        let o = shell_outcome(
            "one\n<shellId: 0 completed with exit code 0>\n\nTool \"bash\" succeeded. \
             Additional guidance from postToolUse hooks:\nctxkeep: context is at 80 %",
            false,
        );
        assert_eq!(
            (o.ok, o.exit_code, o.output.as_str()),
            (Some(true), Some(0), "one")
        );
        let o = shell_outcome("<command started in background with shellId: 0>", true);
        assert_eq!((o.ok, o.exit_code), (None, None));
    }
}
