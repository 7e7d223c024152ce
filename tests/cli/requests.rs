//! The model asked for a checkpoint at natural points (after a commit, a
//! completed plan item, a long stretch), through the hooks.

use serde_json::{json, Value};

use crate::support::Project;

fn after_tool(p: &Project, tool: &str, input: Value, response: Value) -> String {
    let payload = json!({
        "session_id": "s1", "cwd": p.root(), "hook_event_name": "PostToolUse",
        "transcript_path": p.path("no-transcript.jsonl"),
        "tool_name": tool, "tool_input": input, "tool_response": response,
    });
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn edit(p: &Project, path: &str) -> String {
    after_tool(
        p,
        "Write",
        json!({ "file_path": p.path(path), "content": "x\n" }),
        json!({}),
    )
}

fn bash(p: &Project, command: &str) -> String {
    after_tool(
        p,
        "Bash",
        json!({ "command": command }),
        json!({ "stdout": "", "stderr": "" }),
    )
}

/// The instruction a hook's reply gives the model.
fn said(reply: &str) -> String {
    if reply.is_empty() {
        return String::new();
    }
    let v: Value = serde_json::from_str(reply).unwrap();
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string()
}

fn requests_logged(p: &Project) -> Vec<Value> {
    p.read(".ctxkeep/events.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "checkpoint_request")
        .collect()
}

#[test]
fn a_commit_after_some_work_asks_once_and_the_models_checkpoint_resets_the_count() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    for _ in 0..10 {
        assert_eq!(edit(&p, "src/parser.rs"), "");
    }
    let text = said(&bash(
        &p,
        "git add -A && git commit -qm 'Parse CRLF line ends'",
    ));
    assert!(
        text.starts_with(
            "ctxkeep: you committed \"Parse CRLF line ends\" (changed: src/parser.rs)."
        ),
        "{text}"
    );
    assert!(text.contains("ctxkeep checkpoint --phase"), "{text}");
    assert!(text.chars().count() <= 400);
    // Not twice in a short stretch.
    assert_eq!(bash(&p, "git commit --amend -qm 'Parse CRLF'"), "");

    let logged = requests_logged(&p);
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0]["why"], "commit");
    assert_eq!(logged[0]["chars"], text.chars().count());
    let (status, _) = p.json(&["status", "--session", "s1"]);
    assert_eq!(status["checkpoint_requests"], 1);

    // The model writes its own: the next commit soon after is not asked about.
    for _ in 0..8 {
        edit(&p, "src/parser.rs");
    }
    p.checkpoint_next("wire the parser into verify").success();
    for _ in 0..5 {
        edit(&p, "src/verify.rs");
    }
    assert_eq!(bash(&p, "git commit -qam 'Wire it'"), "");
    assert_eq!(requests_logged(&p).len(), 1);
}

#[test]
fn a_completed_plan_item_asks_and_the_setting_turns_requests_off() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    for _ in 0..10 {
        bash(&p, "cargo test");
    }
    let todos = |status: &str| json!([{ "content": "Split the front matter", "status": status, "activeForm": "Splitting" }]);
    let reply = after_tool(
        &p,
        "TodoWrite",
        json!({ "todos": todos("completed") }),
        json!({ "oldTodos": todos("in_progress"), "newTodos": todos("completed") }),
    );
    assert!(
        said(&reply).starts_with("ctxkeep: plan item \"Split the front matter\" is done."),
        "{reply}"
    );

    let off = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\ncheckpoint_requests: false\n",
        1,
    );
    p.write("project-state.md", off);
    for _ in 0..80 {
        assert_eq!(bash(&p, "git commit -qam again"), "");
    }
    assert_eq!(requests_logged(&p).len(), 1);
}

#[test]
fn a_long_stretch_without_a_checkpoint_asks_at_the_set_count() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let text = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\ncheckpoint_requests: {after_calls: 15}\n",
        1,
    );
    p.write("project-state.md", text);
    for i in 1..15 {
        assert_eq!(edit(&p, &format!("src/f{i}.rs")), "", "{i}");
    }
    let text = said(&edit(&p, "src/f15.rs"));
    assert!(
        text.starts_with(
            "ctxkeep: 15 tool calls since the last checkpoint you wrote (changed: src/f1.rs, src/f2.rs, src/f3.rs, src/f4.rs and 11 more)."
        ),
        "{text}"
    );
}
