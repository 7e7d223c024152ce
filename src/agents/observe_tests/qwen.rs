//! Qwen Code's session records.

use super::*;

#[test]
fn qwen_todo_write_is_the_plan() {
    let line = |ty: &str, extra: Value| {
        let mut v = json!({"uuid": "q", "parentUuid": null, "sessionId": "qw-1", "cwd": ROOT,
            "timestamp": "2026-11-23T19:00:00.000Z", "type": ty, "version": "0.24.4"});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    let obs = read(
        "qw-1.jsonl",
        &[
            line(
                "user",
                json!({"provenance": "real_user",
                       "message": {"role": "user", "parts": [{"text": "Add a --json flag to the report"}]}}),
            ),
            line(
                "assistant",
                json!({"message": {"role": "model", "parts": [{"functionCall": {"id": "call_1",
                    "name": "todo_write", "args": {"todos": [
                        {"id": "1", "content": "Parse the flag", "status": "completed"},
                        {"id": "2", "content": "Print the report as JSON", "status": "in_progress"},
                        {"id": "3", "content": "Document the flag", "status": "pending"}]}}}]}}),
            ),
        ],
    );
    assert_eq!(
        plan(&obs),
        [
            ("Parse the flag", "completed"),
            ("Print the report as JSON", "in_progress"),
            ("Document the flag", "pending")
        ]
    );
    assert_eq!(obs.next_step.as_deref(), Some("Print the report as JSON"));
}
