//! Codex's rollouts.

use super::*;

pub(super) fn cx(ty: &str, payload: Value) -> Value {
    json!({"timestamp": "2026-11-23T19:00:00.000Z", "type": ty, "payload": payload})
}

pub(super) fn cx_meta() -> Value {
    cx(
        "session_meta",
        json!({"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "cwd": ROOT, "originator": "codex_cli_rs",
               "cli_version": "0.169.0", "source": "cli"}),
    )
}

pub(super) fn cx_call(id: &str, name: &str, args: Value) -> Value {
    cx(
        "response_item",
        json!({"type": "function_call", "name": name, "arguments": args.to_string(), "call_id": id}),
    )
}

pub(super) fn cx_out(id: &str, output: &str) -> Value {
    cx(
        "response_item",
        json!({"type": "function_call_output", "call_id": id, "output": output}),
    )
}

pub(super) fn cx_user(text: &str) -> Value {
    cx(
        "response_item",
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
    )
}

pub(super) fn cx_typed(text: &str) -> Value {
    cx(
        "event_msg",
        json!({"type": "user_message", "message": text, "images": []}),
    )
}

pub(super) const PATCH: &str = "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Delete File: old.txt\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-x\n+y\n*** End Patch";

#[test]
fn codex_update_plan_and_apply_patch() {
    let obs = read(
        "rollout-2026-11-23T19-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl",
        &[
            cx_meta(),
            cx_user("<environment_context>\n  <cwd>/home/dev/proj</cwd>\n</environment_context>"),
            cx_user("Split the parser into two modules"),
            cx_typed("Split the parser into two modules"),
            cx_call(
                "p1",
                "update_plan",
                json!({"plan": [
                {"step": "Read the parser", "status": "in_progress"},
                {"step": "Move the lexer", "status": "pending"}]}),
            ),
            cx_out("p1", "Plan updated"),
            cx(
                "response_item",
                json!({"type": "custom_tool_call", "status": "completed", "call_id": "ap",
                "name": "apply_patch", "input": PATCH}),
            ),
            cx(
                "response_item",
                json!({"type": "custom_tool_call_output", "call_id": "ap",
                "output": json!({"output": "Success. Updated the following files:\nA docs/new.md\n", "metadata": {"exit_code": 0}}).to_string()}),
            ),
            // A patch that failed changed nothing.
            cx(
                "response_item",
                json!({"type": "custom_tool_call", "call_id": "bad", "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: src/never.rs\n@@\n-q\n+r\n*** End Patch"}),
            ),
            cx(
                "response_item",
                json!({"type": "custom_tool_call_output", "call_id": "bad",
                "output": "apply_patch verification failed: context not found"}),
            ),
            cx_call(
                "p2",
                "update_plan",
                json!({"plan": [
                {"step": "Read the parser", "status": "completed"},
                {"step": "Move the lexer", "status": "in_progress"}]}),
            ),
        ],
    );
    assert_eq!(
        obs.files,
        vec![
            "src/b.rs",
            "src/a.rs",
            "old.txt",
            "src/lib.rs",
            "docs/new.md"
        ]
    );
    assert_eq!(
        plan(&obs),
        vec![
            ("Read the parser", "completed"),
            ("Move the lexer", "in_progress")
        ]
    );
    assert_eq!(
        obs.request.as_deref(),
        Some("Split the parser into two modules")
    );
    assert_eq!(obs.agent, "codex");
    assert_eq!(
        obs.session.as_deref(),
        Some("0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000")
    );
}

#[test]
fn codex_patches_through_the_shell_and_command_outcomes() {
    let heredoc = format!("apply_patch <<'EOF'\n{PATCH}\nEOF");
    let obs = read(
        "rollout-x.jsonl",
        &[
            cx_meta(),
            cx_typed("# Context from my IDE setup:\n\n## Active file: src/lib.rs\n\n## My request for Codex:\nfix the build"),
            cx_call("s1", "shell", json!({"command": ["bash", "-lc", heredoc], "workdir": format!("{ROOT}/sub")})),
            cx_out("s1", &json!({"output": "Success.", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}).to_string()),
            cx_call("s2", "shell", json!({"command": ["apply_patch", "*** Begin Patch\n*** Add File: /tmp/outside.txt\n+x\n*** End Patch"]})),
            cx_out("s2", &json!({"output": "Success.", "metadata": {"exit_code": 0}}).to_string()),
            cx_call("s3", "shell", json!({"command": ["cargo", "build", "--release"]})),
            cx_out("s3", &json!({"output": "error[E0425]", "metadata": {"exit_code": 101}}).to_string()),
            cx_call("x1", "exec_command", json!({"cmd": "cargo test", "yield_time_ms": 1000})),
            cx_out("x1", "Chunk ID: 1\nWall time: 1.0 seconds\nProcess exited with code 1\nOutput:\nfailed"),
            cx_call("x2", "exec_command", json!({"cmd": "cargo test --release"})),
            cx_out("x2", "Chunk ID: 2\nProcess running with session ID 7\nOutput:\n"),
            cx_call("w1", "write_stdin", json!({"session_id": 7, "chars": ""})),
            cx_out("w1", "Chunk ID: 3\nProcess exited with code 0\nOutput:\nok"),
            cx("response_item", json!({"type": "local_shell_call", "call_id": "l1", "status": "completed",
                "action": {"type": "exec", "command": ["ls", "-la"]}})),
        ],
    );
    assert_eq!(obs.request.as_deref(), Some("fix the build"));
    assert_eq!(
        obs.files,
        vec![
            "/tmp/outside.txt",
            "sub/src/b.rs",
            "sub/src/a.rs",
            "sub/old.txt",
            "sub/src/lib.rs",
            "sub/docs/new.md"
        ]
    );
    let cmds: Vec<_> = obs
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.ok, c.exit_code))
        .collect();
    assert_eq!(
        cmds[1..],
        [
            ("cargo build --release", Some(false), Some(101)),
            ("cargo test", Some(false), Some(1)),
            ("cargo test --release", Some(true), Some(0)),
            ("ls -la", None, None),
        ]
    );
    assert!(cmds[0].0.starts_with("apply_patch "), "{cmds:?}");
}

#[test]
fn codex_request_falls_back_to_user_items_without_events() {
    let obs = read(
        "rollout-x.jsonl",
        &[
            cx_meta(),
            cx_user("# AGENTS.md instructions for /home/dev/proj\n\n<INSTRUCTIONS>be terse</INSTRUCTIONS>"),
            cx_user("rename the config key"),
            cx_user("<environment_context>\n  <cwd>/home/dev/proj</cwd>\n</environment_context>"),
        ],
    );
    assert_eq!(obs.request.as_deref(), Some("rename the config key"));
}

#[test]
fn a_codex_compacted_item_is_a_compaction_and_not_new_activity() {
    let obs = read(
        "rollout-x.jsonl",
        &[
            cx_meta(),
            cx_user("rename the config key"),
            cx(
                "compacted",
                json!({"message": "", "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "an old request replayed"}]}]}),
            ),
        ],
    );
    assert!(obs.compacted);
    assert_eq!(obs.request.as_deref(), Some("rename the config key"));
}

#[test]
fn codex_failing_command_three_times_and_a_subagent_rollout() {
    let mut lines = vec![cx_meta()];
    for i in 0..3 {
        lines.push(cx_call(
            &format!("c{i}"),
            "shell_command",
            json!({"command": "pytest -x "}),
        ));
        lines.push(cx_out(
            &format!("c{i}"),
            "Exit code: 1\nWall time: 2 seconds\nOutput:\nFAILED",
        ));
    }
    let obs = read("rollout-x.jsonl", &lines);
    assert_eq!(
        loops_found(&obs, &LoopLimits::default()),
        vec![LoopHit::SameFailure {
            command: "pytest -x".into(),
            count: 3,
            error: Some("exit 1: FAILED".into()),
        }]
    );
    let mut sub = lines.clone();
    sub[0]["payload"]["source"] = json!({"subagent": "review"});
    let obs = read("rollout-x.jsonl", &sub);
    assert!(obs.is_empty());
    assert!(loops_found(&obs, &LoopLimits::default()).is_empty());
}
