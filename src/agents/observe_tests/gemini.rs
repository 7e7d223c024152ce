//! Gemini CLI's session records.

use super::*;

pub(super) fn gm_meta() -> Value {
    json!({"sessionId": "5e551011-aaaa-bbbb-cccc-ddddeeeeffff", "projectHash": "abc",
           "startTime": "2026-11-23T19:00:00.000Z", "lastUpdated": "2026-11-23T19:00:00.000Z", "kind": "main"})
}

pub(super) fn gm_user(id: &str, text: &str) -> Value {
    json!({"id": id, "timestamp": "2026-11-23T19:00:01.000Z", "type": "user", "content": [{"text": text}]})
}

pub(super) fn gm_tool(id: &str, name: &str, args: Value, status: &str, output: &str) -> Value {
    json!({"id": id, "name": name, "args": args, "status": status, "timestamp": "2026-11-23T19:00:02.000Z",
           "result": [{"functionResponse": {"id": id, "name": name, "response": {"output": output}}}]})
}

pub(super) fn gm_reply(id: &str, calls: Vec<Value>) -> Value {
    json!({"id": id, "timestamp": "2026-11-23T19:00:03.000Z", "type": "gemini", "content": "",
           "toolCalls": calls, "model": "gemini-3-pro",
           "tokens": {"input": 100, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 105}})
}

#[test]
fn gemini_todos_files_commands_and_requests() {
    let todos = |s: &str| {
        json!({"todos": [{"description": "Write the lexer", "status": s},
                         {"description": "Dropped idea", "status": "cancelled"},
                         {"description": "Run the tests", "status": "pending"}]})
    };
    let reply1 = gm_reply(
        "g1",
        vec![
            gm_tool("t1", "write_todos", todos("in_progress"), "success", "ok"),
            gm_tool(
                "f1",
                "write_file",
                json!({"file_path": format!("{ROOT}/src/lexer.py"), "content": "x"}),
                "success",
                "ok",
            ),
        ],
    );
    let reply2 = gm_reply(
        "g2",
        vec![
            gm_tool(
                "r1",
                "replace",
                json!({"file_path": "README.md", "old_string": "a", "new_string": "b"}),
                "error",
                "Failed to edit: 0 occurrences",
            ),
            gm_tool(
                "r2",
                "replace",
                json!({"file_path": "docs/guide.md", "old_string": "a", "new_string": "b"}),
                "success",
                "Successfully modified file",
            ),
            gm_tool(
                "s1",
                "run_shell_command",
                json!({"command": "pytest"}),
                "success",
                "Command: pytest\nDirectory: (root)\nOutput: 1 failed\nError: (none)\nExit Code: 1",
            ),
            gm_tool(
                "s2",
                "run_shell_command",
                json!({"command": "ruff check"}),
                "success",
                "Command: ruff check\nOutput: All checks passed!\nExit Code: 0",
            ),
            gm_tool("t2", "write_todos", todos("completed"), "success", "ok"),
        ],
    );
    let mut slash = gm_user(
        "u0",
        "You are an agent that writes a project guide. Steps: ...",
    );
    slash["displayContent"] = json!([{"text": "/init"}]);
    let mut nudge = gm_user("u2", "System: Please continue.");
    nudge["displayContent"] = json!([{"functionResponse": {"id": "t2", "name": "write_todos", "response": {"output": "ok"}}}]);
    let obs = read(
        "session-2026-11-23T19-00-5e551011.jsonl",
        &[
            gm_meta(),
            slash,
            json!({"$set": {"lastUpdated": "2026-11-23T19:00:01.000Z"}}),
            gm_user(
                "u1",
                "<hook_context>ctxkeep: 12% used</hook_context>\nWrite a lexer and test it",
            ),
            // The reply is re-appended as its calls complete: the last copy wins.
            gm_reply("g1", vec![]),
            reply1,
            reply2,
            nudge,
        ],
    );
    assert_eq!(obs.request.as_deref(), Some("Write a lexer and test it"));
    assert_eq!(
        plan(&obs),
        vec![
            ("Write the lexer", "completed"),
            ("Run the tests", "pending")
        ]
    );
    assert_eq!(obs.files, vec!["docs/guide.md", "src/lexer.py"]);
    let cmds: Vec<_> = obs
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.ok, c.exit_code))
        .collect();
    assert_eq!(
        cmds,
        vec![
            ("pytest", Some(false), Some(1)),
            ("ruff check", Some(true), Some(0))
        ]
    );
    assert_eq!(obs.agent, "gemini");
    assert_eq!(
        obs.session.as_deref(),
        Some("5e551011-aaaa-bbbb-cccc-ddddeeeeffff")
    );
}

#[test]
fn gemini_slash_command_and_rewind() {
    let mut slash = gm_user("u0", "expanded template text");
    slash["displayContent"] = json!([{"text": "/review src"}]);
    let obs = read(
        "session-x.jsonl",
        &[
            gm_meta(),
            slash,
            gm_reply(
                "g0",
                vec![gm_tool(
                    "f0",
                    "write_file",
                    json!({"file_path": "kept.md"}),
                    "success",
                    "ok",
                )],
            ),
            gm_user("u1", "try something else"),
            gm_reply(
                "g1",
                vec![gm_tool(
                    "f1",
                    "write_file",
                    json!({"file_path": "undone.md"}),
                    "success",
                    "ok",
                )],
            ),
            json!({"$rewindTo": "u1"}),
        ],
    );
    assert_eq!(obs.request.as_deref(), Some("/review src"));
    assert_eq!(obs.files, vec!["kept.md"]);
}

#[test]
fn gemini_legacy_session_document() {
    let doc = json!({"sessionId": "legacy-1", "projectHash": "h", "startTime": "t", "lastUpdated": "t",
        "messages": [gm_user("u1", "tidy the code"),
                     gm_reply("g1", vec![gm_tool("f", "replace", json!({"file_path": "src/a.rs"}), "success", "ok")])]});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session-2025-10-05T07-11-legacy.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let obs = observe(&path, None, None, now()).unwrap();
    assert_eq!(obs.request.as_deref(), Some("tidy the code"));
    assert_eq!(obs.files, vec!["src/a.rs"]);
    assert_eq!(obs.session.as_deref(), Some("legacy-1"));
}
