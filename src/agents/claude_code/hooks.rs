//! Claude Code's hooks: its payloads are the shape every agent's hooks
//! share (`crate::agents::payload`), plus its own tools in `PostToolUse` and
//! `PostToolUseFailure`; and what `hooks doctor` sends them.

use serde_json::{json, Map, Value};

use crate::agents::payload::{
    content_hash, object_of, text_of, with_tool_call, Payload, ToolAction, ToolCall, ToolFile,
    ToolOutcome,
};
use crate::agents::DoctorSample;
use crate::system::error::Error;

/// A payload; after a tool call, the call and its outcome, and the plan item it completed.
pub fn payload(root: &Map<String, Value>) -> Result<Payload, Error> {
    let mut p = with_tool_call(root, |event| event, tool_call)?;
    if p.after_tool() {
        p.plan_done = plan_done(root);
    }
    Ok(p)
}

/// The plan item a call marked completed: `TaskUpdate` to `completed` (the task's number: its
/// subject is not in the call), or the first item `TodoWrite` completed (its `oldTodos` against
/// its `newTodos`).
fn plan_done(root: &Map<String, Value>) -> Option<String> {
    let input = object_of(root, "tool_input")?;
    match text_of(root, "tool_name")?.as_str() {
        "TaskUpdate" => (input.get("status")?.as_str()? == "completed")
            .then(|| Some(format!("task #{}", input.get("taskId")?.as_str()?)))
            .flatten(),
        "TodoWrite" => {
            let response = object_of(root, "tool_response")?;
            let done = |key: &str| -> Vec<String> {
                response
                    .get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|t| t.get("status").and_then(Value::as_str) == Some("completed"))
                    .filter_map(|t| t.get("content").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            };
            let before = done("oldTodos");
            done("newTodos").into_iter().find(|t| !before.contains(t))
        }
        _ => None,
    }
}

/// The call a `PostToolUse` (`tool_response`) or `PostToolUseFailure` (`error`) reports, for
/// the tools that run commands or change files.
pub fn tool_call(root: &Map<String, Value>) -> Option<ToolCall> {
    let name = text_of(root, "tool_name")?;
    let input = object_of(root, "tool_input")?;
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let response = root.get("tool_response");
    let error = root.get("error").and_then(Value::as_str);
    let failed = error.is_some()
        || text_of(root, "hook_event_name").as_deref() == Some("PostToolUseFailure");
    let action = match name.as_str() {
        "Bash" => ToolAction::Command(s("command")?.to_string()),
        "Write" | "Edit" | "MultiEdit" => {
            let content = match name.as_str() {
                "Write" => s("content").map(str::to_string),
                _ => edited(input, response),
            };
            let before = response
                .and_then(|r| r.get("originalFile"))
                .and_then(Value::as_str);
            ToolAction::Files(vec![ToolFile {
                path: s("file_path")?.into(),
                content: content.map(|c| content_hash(c.as_bytes())),
                before: before.map(|b| content_hash(b.as_bytes())),
            }])
        }
        "NotebookEdit" => ToolAction::Files(vec![ToolFile {
            path: s("notebook_path")?.into(),
            content: None,
            before: None,
        }]),
        _ => return None,
    };
    let outcome = if failed {
        ToolOutcome::failed(error.unwrap_or(""))
    } else if name == "Bash" {
        bash_outcome(input, response)
    } else {
        ToolOutcome::succeeded(String::new())
    };
    Some(ToolCall {
        name,
        id: text_of(root, "tool_use_id"),
        action,
        outcome: Some(outcome),
    })
}

/// A `Bash` call that did not fail exited 0 (a non-zero exit fires `PostToolUseFailure`),
/// unless it was left running or interrupted: then nothing is known.
fn bash_outcome(input: &Map<String, Value>, response: Option<&Value>) -> ToolOutcome {
    let r = response.and_then(Value::as_object);
    let field = |k: &str| r.and_then(|r| r.get(k));
    let unknown = input.get("run_in_background") == Some(&Value::Bool(true))
        || field("backgroundTaskId").is_some()
        || field("interrupted") == Some(&Value::Bool(true));
    let text = |k: &str| field(k).and_then(Value::as_str).unwrap_or("");
    let output = match (text("stdout"), text("stderr")) {
        (out, "") => out.to_string(),
        ("", err) => err.to_string(),
        (out, err) => format!("{out}\n{err}"),
    };
    if unknown {
        return ToolOutcome {
            ok: None,
            exit_code: None,
            output,
        };
    }
    ToolOutcome {
        ok: Some(true),
        exit_code: Some(0),
        output,
    }
}

/// The file an `Edit` or `MultiEdit` left: its `originalFile` (in the response) with the
/// edits applied as Claude Code applies them; None when the response does not hold it.
fn edited(input: &Map<String, Value>, response: Option<&Value>) -> Option<String> {
    let original = response?.get("originalFile")?.as_str()?;
    let edits: Vec<&Value> = match input.get("edits").and_then(Value::as_array) {
        Some(list) => list.iter().collect(),
        None => vec![&Value::Null],
    };
    let mut text = original.to_string();
    for e in edits {
        let field = |k: &str| {
            e.get(k)
                .or_else(|| input.get(k).filter(|_| e.is_null()))
                .and_then(Value::as_str)
        };
        let (old, new) = (field("old_string")?, field("new_string")?);
        let all = e
            .get("replace_all")
            .or_else(|| input.get("replace_all").filter(|_| e.is_null()))
            == Some(&Value::Bool(true));
        if old.is_empty() || !text.contains(old) {
            return None;
        }
        text = if all {
            text.replace(old, new)
        } else {
            text.replacen(old, new, 1)
        };
    }
    Some(text)
}

/// A Claude Code transcript with one main-chain reply (20,000 tokens).
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "transcript.jsonl",
    transcript: r#"{"parentUuid":null,"isSidechain":false,"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_doctor","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":990,"cache_read_input_tokens":19000,"output_tokens":5}},"uuid":"u-doctor","timestamp":"2026-01-01T00:00:00.000Z"}
"#,
    common_fields: doctor_common_fields,
    event_fields: DoctorSample::usual_event_fields,
};

pub fn doctor_common_fields() -> Value {
    json!({ "permission_mode": "default" })
}
