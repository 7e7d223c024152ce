//! Qwen Code: `hooks install|doctor qwen-code`, and its hooks reading its
//! chat records (Claude Code's payloads, Qwen Code's transcript).

use serde_json::{json, Value};

use crate::hooks::doctor_text;
use crate::support::Project;

/// A Qwen Code chat record of a reply with `prompt` tokens in context.
fn reply(prompt: u64) -> String {
    json!({
        "uuid": format!("a{prompt}"), "parentUuid": "u1", "sessionId": "q1",
        "timestamp": "2026-01-15T09:59:00.000Z", "type": "assistant",
        "provenance": "assistant_output", "cwd": "/p", "version": "0.24.4", "model": "qwen3-coder-plus",
        "message": {"role": "model", "parts": [
            {"text": "Running the tests."},
            {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "cargo test"}}}
        ]},
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": 20, "totalTokenCount": prompt + 20},
        "contextWindowSize": 262_144
    })
    .to_string()
}

fn payload(p: &Project, event: &str, extra: Value) -> String {
    let mut v = json!({
        "session_id": "q1", "transcript_path": p.path("chat.jsonl"), "cwd": p.root(),
        "hook_event_name": event, "permission_mode": "yolo", "timestamp": "2026-01-15T10:00:00.000Z",
    });
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v.to_string()
}

#[test]
fn install_writes_claude_codes_events_into_qwens_settings_and_doctor_runs_them() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write(
        ".qwen/settings.json",
        "{\n  // mine\n  \"model\": {\"name\": \"qwen3-coder-plus\"}\n}\n",
    );
    p.ctxkeep(&["hooks", "install", "qwen", "--team"])
        .assert()
        .success();
    let text = p.read(".qwen/settings.json");
    assert!(text.contains("// mine"), "{text}");
    for event in [
        "SessionStart",
        "PostToolUse",
        "PreCompact",
        "PostCompact",
        "Stop",
        "SessionEnd",
    ] {
        assert!(text.contains(&format!("\"{event}\"")), "{event}: {text}");
    }
    assert!(
        text.contains("\"command\": \"ctxkeep hook qwen-code\""),
        "{text}"
    );
    assert!(text.contains("\"mcpServers\""), "{text}");
    let (report, code) = doctor_text(&p, "qwen-code");
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains("hooks.PostCompact: ctxkeep hook qwen-code: runs"),
        "{report}"
    );
    p.ctxkeep(&["hooks", "uninstall", "qwen-code"])
        .assert()
        .success();
    assert_eq!(
        p.read(".qwen/settings.json"),
        "{\n  // mine\n  \"model\": {\"name\": \"qwen3-coder-plus\"}\n}\n"
    );
}

#[test]
fn qwens_hooks_give_the_prompt_and_track_its_chat_records() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let start = p
        .ctxkeep(&["hook", "qwen-code"])
        .write_stdin(payload(
            &p,
            "SessionStart",
            json!({"source": "startup", "model": "qwen3-coder-plus"}),
        ))
        .output()
        .unwrap();
    let reply_json: Value = serde_json::from_slice(&start.stdout).unwrap();
    let context = reply_json["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("run cargo test and fix the failing split test"),
        "{context}"
    );

    // Past 0.85 of the window the record states: the stages fire.
    p.write("chat.jsonl", format!("{}\n", reply(215_000)));
    let tool = p
        .ctxkeep(&["hook", "qwen-code"])
        .write_stdin(payload(
            &p,
            "PostToolUse",
            json!({"tool_name": "run_shell_command",
            "tool_input": {"command": "cargo test"}, "tool_response": "ok"}),
        ))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&tool.stdout);
    assert!(said.contains("context is at 82"), "{said}");
    let (status, _) = p.json(&["status"]);
    // The window and token count come from Qwen Code's record, the limit from its default
    // threshold.
    assert_eq!(
        (&status["tokens"], &status["window"], &status["limit"]),
        (&json!(215_000), &json!(262_144), &json!(222_822)),
        "{status}"
    );
}
