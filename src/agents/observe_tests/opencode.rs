//! OpenCode (the plugin's session record: OpenCode's bus events, and its own `chat.message`).

use super::*;

pub(super) fn oc_part(part: Value) -> Value {
    json!({"type": "message.part.updated", "properties": {"part": part}})
}

pub(super) fn oc_tool(id: &str, tool: &str, input: Value, status: &str, metadata: Value) -> Value {
    oc_part(
        json!({"id": format!("prt_{id}"), "messageID": "msg_a", "sessionID": "ses_oc1",
        "type": "tool", "tool": tool, "callID": id,
        "state": {"status": status, "input": input, "output": "", "metadata": metadata,
                  "time": {"start": 1, "end": 2}}}),
    )
}

#[test]
fn opencode_prompts_calls_and_outcomes_from_the_record() {
    let obs = read(
        "ses_oc1.jsonl",
        &[
            json!({"type": "chat.message", "properties": {"sessionID": "ses_oc1", "messageID": "msg_u",
                   "text": "\"Write notes.txt saying alpha, then run the check\""}}),
            oc_tool(
                "call_1",
                "todowrite",
                json!({"todos": [{"id": "1", "content": "Write notes.txt", "status": "in_progress", "priority": "high"},
                                 {"id": "2", "content": "Run the check", "status": "pending", "priority": "medium"}]}),
                "completed",
                json!({}),
            ),
            oc_tool(
                "call_2",
                "write",
                json!({"filePath": format!("{ROOT}/notes.txt"), "content": "alpha\n"}),
                "completed",
                json!({"filepath": format!("{ROOT}/notes.txt"), "exists": false}),
            ),
            oc_tool(
                "call_3",
                "edit",
                json!({"filePath": format!("{ROOT}/src/lib.rs"), "oldString": "a", "newString": "b"}),
                "completed",
                json!({"filediff": {"file": format!("{ROOT}/src/lib.rs")}}),
            ),
            oc_tool(
                "call_4",
                "bash",
                json!({"command": "cargo test", "description": "test"}),
                "completed",
                json!({"output": "test failed\n", "exit": 101}),
            ),
            oc_part(
                json!({"id": "prt_t", "messageID": "msg_a", "sessionID": "ses_oc1", "type": "text",
                           "text": "The test fails. Next I will fix the parser.", "time": {"start": 1, "end": 2}}),
            ),
        ],
    );
    assert_eq!(obs.agent, "opencode");
    assert_eq!(obs.session.as_deref(), Some("ses_oc1"));
    assert_eq!(
        obs.request.as_deref(),
        Some("Write notes.txt saying alpha, then run the check")
    );
    assert_eq!(
        plan(&obs),
        [
            ("Write notes.txt", "in_progress"),
            ("Run the check", "pending")
        ]
    );
    assert_eq!(obs.files, ["src/lib.rs", "notes.txt"]);
    let runs: Vec<(&str, Option<bool>, Option<i64>)> = obs
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.ok, c.exit_code))
        .collect();
    assert_eq!(runs, [("cargo test", Some(false), Some(101))]);
    assert_eq!(
        obs.next_step.as_deref(),
        Some("Next I will fix the parser.")
    );
}
