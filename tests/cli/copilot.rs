//! GitHub Copilot CLI: `hooks install|doctor|uninstall copilot`, and its hooks on the payloads
//! and session log 1.0.102 wrote (tests/fixtures/agents/copilot-1.0.102): Claude Code's event
//! names and payload fields, its own tool results, `additionalContext` at the top of the reply.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::hooks::doctor_text;
use crate::support::Project;

const SESSION: &str = "2a23ea55-c3b9-431a-96c9-cb640840b1a5";

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/copilot-1.0.102")
        .join(rel)
}

/// A captured payload, its paths moved into this project and its HOME.
fn captured(p: &Project, name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("hooks/{name}.json")))
        .unwrap()
        .replace("/work/repo", &p.root().display().to_string())
        .replace("/home/user", &p.home().display().to_string())
}

/// Where Copilot CLI keeps the session's log under the test's HOME.
fn log_path(p: &Project) -> PathBuf {
    p.home()
        .join(".copilot/session-state")
        .join(SESSION)
        .join("events.jsonl")
}

/// One model call of the main conversation with `input` prompt tokens.
fn call(input: u64) -> String {
    json!({"type": "session.usage_record", "data": {"usage": {
        "model": "copilot-e2e", "inputTokens": input, "outputTokens": 20, "cacheReadTokens": 0,
        "cacheWriteTokens": 0, "initiator": "agent", "interactionType": "conversation-agent",
        "maxPromptTokens": 200_000}},
        "id": format!("u{input}"), "timestamp": "2026-11-27T09:18:12.000Z", "parentId": "x"})
    .to_string()
}

/// The record Copilot CLI logs as it starts the hook whose payload has `at` (ISO) as its
/// timestamp: the hook waits for it before reading the log.
fn hook_start(kind: &str, at: &str) -> String {
    let ms = chrono::DateTime::parse_from_rfc3339(at)
        .unwrap()
        .timestamp_millis();
    json!({"type": "hook.start", "data": {"hookInvocationId": "h", "hookType": kind,
        "input": {"sessionId": SESSION, "timestamp": ms, "cwd": "/"}},
        "id": format!("h{ms}"), "timestamp": at, "parentId": "x"})
    .to_string()
}

fn write_log(p: &Project, lines: &[String]) {
    let path = log_path(p);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

fn hook(p: &Project, payload: &str) -> (String, Value) {
    let out = p
        .ctxkeep(&["hook", "copilot"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
    (text, value)
}

#[test]
fn install_writes_its_own_file_under_github_hooks_and_uninstall_gives_everything_back() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write(".github/workflows/ci.yml", "on: push\n");
    p.write(".github/hooks/format.json", "{\"hooks\": {}}\n");
    let before = p.snapshot();
    let out = p
        .ctxkeep(&["hooks", "install", "github-copilot", "--team"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // The trust step names the project, not the folder the file is in.
    let root = std::fs::canonicalize(p.root()).unwrap();
    assert!(
        said.contains(&format!(
            "trust the folder {} in Copilot CLI",
            root.display()
        )),
        "{said}"
    );
    let doc: Value = serde_json::from_str(&p.read(".github/hooks/ctxkeep.json")).unwrap();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "PreCompact",
        "Stop",
        "SessionEnd",
    ] {
        assert_eq!(
            doc["hooks"][event][0]["hooks"][0]["command"], "ctxkeep hook copilot",
            "{event}: {doc}"
        );
    }
    let mcp: Value = serde_json::from_str(&p.read(".github/mcp.json")).unwrap();
    assert_eq!(
        mcp["mcpServers"]["ctxkeep"]["args"],
        json!(["mcp"]),
        "{mcp}"
    );
    assert_eq!(p.read(".github/hooks/format.json"), "{\"hooks\": {}}\n");

    let (report, code) = doctor_text(&p, "copilot");
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains("hooks.PostToolUse: ctxkeep hook copilot: runs"),
        "{report}"
    );
    assert!(report.contains("mcp: ctxkeep mcp: serves"), "{report}");

    p.ctxkeep(&["hooks", "uninstall", "copilot"])
        .assert()
        .success();
    assert_eq!(
        crate::support::diff(&before, &p.snapshot()),
        Vec::<String>::new()
    );
}

#[test]
fn uninstall_removes_the_folders_install_made() {
    let p = Project::initialized();
    let before = p.snapshot();
    p.ctxkeep(&["hooks", "install", "copilot", "--team"])
        .assert()
        .success();
    assert!(p.path(".github/hooks/ctxkeep.json").is_file());
    p.ctxkeep(&["hooks", "uninstall", "copilot"])
        .assert()
        .success();
    assert!(!p.path(".github").exists());
    assert_eq!(
        crate::support::diff(&before, &p.snapshot()),
        Vec::<String>::new()
    );
}

#[test]
fn the_start_gives_the_prompt_at_the_top_of_the_reply() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let (text, reply) = hook(&p, &captured(&p, "SessionStart-new"));
    let context = reply["additionalContext"].as_str().unwrap_or_default();
    assert!(
        context.contains("run cargo test and fix the failing split test"),
        "{text}"
    );
    assert!(reply.get("hookSpecificOutput").is_none(), "{text}");
    // `source: new` is a new session's start.
    let events = p.read(".ctxkeep/events.jsonl");
    assert!(
        events.contains(r#""event":"session_start","session":"2a23ea55-c3b9-431a-96c9-cb640840b1a5","agent":"copilot","source":"startup""#),
        "{events}"
    );
}

#[test]
fn a_tool_hook_waits_for_the_log_and_gives_the_stage_next_to_the_result() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    hook(&p, &captured(&p, "SessionStart-new"));
    let payload = captured(&p, "PostToolUse-Bash");
    let at = serde_json::from_str::<Value>(&payload).unwrap()["timestamp"]
        .as_str()
        .unwrap()
        .to_string();
    // The call's token count reaches the log only with the batch that holds this hook's start.
    write_log(&p, &[call(20_000)]);
    let log = log_path(&p);
    let late = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut text = std::fs::read_to_string(&log).unwrap();
        text.push_str(&format!(
            "{}\n{}\n",
            call(150_000),
            hook_start("postToolUse", &at)
        ));
        std::fs::write(&log, text).unwrap();
    });
    let (text, reply) = hook(&p, &payload);
    late.join().unwrap();
    let context = reply["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("context is at 75"), "{text}");
    let (status, _) = p.json(&["status"]);
    // The window is the log's prompt limit; Copilot CLI compacts at 0.8 of it.
    assert_eq!(
        (&status["tokens"], &status["window"], &status["limit"]),
        (&json!(150_000), &json!(200_000), &json!(160_000)),
        "{status}"
    );
}

#[test]
fn a_failing_command_is_a_success_to_copilot_but_a_failure_to_the_loop_detector() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let payload = captured(&p, "PostToolUse-Bash");
    assert!(payload.contains("exit code 3"), "{payload}");
    let at = serde_json::from_str::<Value>(&payload).unwrap()["timestamp"]
        .as_str()
        .unwrap()
        .to_string();
    // A log with no call in it: the outcome comes from the payload alone.
    write_log(&p, &[hook_start("postToolUse", &at)]);
    let mut said = Vec::new();
    for _ in 0..3 {
        let (text, _) = hook(&p, &payload);
        said.push(text);
    }
    assert!(!said[1].contains("stuck in a loop"), "{}", said[1]);
    assert!(said[2].contains("stuck in a loop"), "{}", said[2]);
    assert!(said[2].contains("widget check failed"), "{}", said[2]);
}

#[test]
fn the_session_log_is_recognized_and_read_around_a_compaction() {
    let p = Project::initialized();
    let path = fixture("transcript.jsonl");
    let (v, code) = p.json(&["track", "--transcript", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let t = &v["transcript"];
    assert_eq!(
        (&t["agent"], &v["tokens"], &v["window"], &t["compacted"]),
        (
            &json!("copilot"),
            &json!(3_500),
            &json!(200_000),
            &json!(false)
        ),
        "{v}"
    );
    // Cut after the first call past the compaction: that token count is the first after it.
    let text = std::fs::read_to_string(&path).unwrap();
    let compacted = text.find("session.compaction_complete").unwrap();
    let next = compacted + text[compacted..].find("\"inputTokens\": 3000").unwrap();
    let end = next + text[next..].find('\n').unwrap() + 1;
    p.write("events.jsonl", &text[..end]);
    let (v, _) = p.json(&[
        "track",
        "--transcript",
        "events.jsonl",
        "--agent",
        "copilot",
    ]);
    assert_eq!(
        (&v["tokens"], &v["transcript"]["compacted"]),
        (&json!(3_000), &json!(true)),
        "{v}"
    );
}
