//! What a Copilot CLI session did, from its `events.jsonl`: the user's requests
//! (`user.message`), the replies (`assistant.message`: `content`, and `toolRequests` with each
//! call's `toolCallId`, `name`, `arguments`), and their outcomes (`tool.execution_complete`:
//! `success`, `shellExecution.exitCode`, `result.content`, `error.message`), matched by call id.

use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use crate::agents::recorded_call::RecordedCall;
use crate::transcripts::activity::text::user_request;
use crate::transcripts::activity::{window_lines, Recorder};

/// The only lines read: everything else (the system prompt, hook and usage records) is skipped
/// before parsing, by the type that opens the line.
const TRACKED: [&str; 4] = [
    "\"user.message\"",
    "\"assistant.message\"",
    "\"tool.execution_complete\"",
    "\"session.start\"",
];
/// How much of a line's start holds its `type`.
const HEAD: usize = 48;

pub(super) fn read(path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
    if len == 0 {
        return Ok(());
    }
    for bytes in &window_lines(path, file, len, rec.window)? {
        let head = &bytes[..bytes.len().min(HEAD)];
        if !TRACKED
            .iter()
            .any(|t| head.windows(t.len()).any(|w| w == t.as_bytes()))
        {
            continue;
        }
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        let Some(data) = line.get("data").and_then(Value::as_object) else {
            continue;
        };
        rec.line_time(line.get("timestamp").and_then(Value::as_str));
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

fn tool_call(value: &Value, rec: &mut Recorder) {
    let Some(call) = RecordedCall::of(value, "toolCallId", "arguments") else {
        return;
    };
    let id = call.id;
    match call.name {
        "create" | "edit" => {
            if let Some(p) = call.path(&["path"], rec) {
                rec.files(Some(id), vec![p]);
            }
        }
        "view" => {
            if let Some(p) = call.path(&["path"], rec) {
                rec.read_files(vec![p]);
            }
        }
        "bash" => {
            if let Some(cmd) = call.arg(&["command"]) {
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
        Some(e) if success != Some(true) => crate::agents::payload::ToolOutcome::failed(e),
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

#[cfg(test)]
mod tests {
    use crate::agents::observe;
    use crate::transcripts::activity::loops::Outcome;
    use crate::transcripts::usage::testutil::{jsonl, write_temp};

    // Shapes as Copilot CLI 1.0.102 writes them (compact JSON, one event a line).
    const LOG: [&str; 7] = [
        r#"{"type":"session.start","data":{"sessionId":"s1","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102"},"id":"e1","timestamp":"2026-01-01T00:00:00.000Z","parentId":null}"#,
        r#"{"type":"user.message","data":{"content":"Make the widget parser accept blank lines.","transformedContent":"<current_datetime>x</current_datetime>\n\nMake the widget parser accept blank lines.","turnId":"0"},"id":"e2","timestamp":"2026-01-01T00:00:01.000Z","parentId":"e1"}"#,
        r#"{"type":"assistant.message","data":{"content":"Writing it.","toolRequests":[{"toolCallId":"c1","name":"create","arguments":{"path":"/p/src/widget.rs","file_text":"fn w() {}\n"},"type":"function"}],"turnId":"0"},"id":"e3","timestamp":"2026-01-01T00:00:02.000Z","parentId":"e2"}"#,
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true,"result":{"content":"Created file /p/src/widget.rs with 10 characters"}},"id":"e4","timestamp":"2026-01-01T00:00:03.000Z","parentId":"e3"}"#,
        r#"{"type":"assistant.message","data":{"content":"Checking.","toolRequests":[{"toolCallId":"c2","name":"bash","arguments":{"command":"cargo test","description":"test"},"type":"function"}],"turnId":"1"},"id":"e5","timestamp":"2026-01-01T00:00:04.000Z","parentId":"e4"}"#,
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"c2","shellExecution":{"exitCode":101},"success":true,"result":{"content":"test failed\n<shellId: 0 completed with exit code 101>\n\nTool \"bash\" succeeded. Additional guidance from postToolUse hooks:\nctxkeep: context is at 80 %"}},"id":"e6","timestamp":"2026-01-01T00:00:05.000Z","parentId":"e5"}"#,
        r#"{"type":"assistant.message","data":{"content":"The test fails. Next I will fix the splitter.","toolRequests":[],"turnId":"2"},"id":"e7","timestamp":"2026-01-01T00:00:06.000Z","parentId":"e6"}"#,
    ];

    #[test]
    fn requests_files_and_commands_with_their_outcome() {
        let lines: Vec<String> = LOG.iter().map(|l| l.to_string()).collect();
        let (_d, path) = write_temp("events.jsonl", &jsonl(&lines));
        let o = observe(&path, None, None, chrono::Utc::now()).unwrap();
        assert_eq!(o.agent, "copilot");
        assert_eq!(o.session.as_deref(), Some("s1"));
        assert_eq!(
            o.request.as_deref(),
            Some("Make the widget parser accept blank lines.")
        );
        assert_eq!(o.files, ["/p/src/widget.rs"]);
        assert_eq!(o.commands.len(), 1);
        let run = &o.commands[0];
        assert_eq!(
            (run.command.as_str(), run.ok, run.exit_code),
            ("cargo test", Some(false), Some(101))
        );
        assert!(o
            .next_step
            .as_deref()
            .is_some_and(|s| s.contains("fix the splitter")));
        // The hook's own words in the result are not the command's output.
        let step = o.steps.iter().find(|s| s.id.as_deref() == Some("c2"));
        assert!(
            matches!(step.map(|s| &s.outcome), Some(Outcome::Done { output, .. }) if output == "test failed"),
            "{:?}",
            o.steps
        );
    }
}
