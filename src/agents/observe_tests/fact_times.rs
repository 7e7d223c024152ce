//! Each recorded fact keeps the time of the transcript line it came from.

use super::*;

/// `line` said at `hh:mm` on the test's day.
fn at(mut line: Value, hh_mm: &str) -> Value {
    line["timestamp"] = json!(format!("2026-11-23T{hh_mm}:00.000Z"));
    line
}

fn reply(text: &str) -> Value {
    cc(
        "assistant",
        json!({"model": "claude-opus-5-5", "id": "msg_r", "role": "assistant",
               "content": [{"type": "text", "text": text}]}),
    )
}

fn todo(items: &[(&str, &str)]) -> Value {
    let todos: Vec<Value> = items
        .iter()
        .map(|(t, s)| json!({"content": t, "status": s, "activeForm": t}))
        .collect();
    call("t", "TodoWrite", json!({"todos": todos}))
}

#[test]
fn claude_code_facts_keep_their_lines_times() {
    let [test_call, test_failed] = bash("b1", "cargo test ast", 101);
    let obs = read(
        "s.jsonl",
        &[
            at(prompt("Make parse_table recurse into inline tables"), "10:00"),
            at(
                todo(&[("Read src/ast.rs", "completed"), ("Recurse", "in_progress")]),
                "10:05",
            ),
            at(test_call, "10:10"),
            at(test_failed, "10:11"),
            at(
                reply("Remaining steps: 1. Fix the recursion in src/ast.rs 2. Rerun cargo test ast\n\nWhen it passes, run:\n```sh\ncargo publish --dry-run\n```"),
                "10:20",
            ),
        ],
    );
    assert_eq!(obs.request_at.as_deref(), Some("2026-11-23T10:00:00Z"));
    assert_eq!(obs.plan_at.as_deref(), Some("2026-11-23T10:05:00Z"));
    assert!(obs
        .next_step
        .as_deref()
        .unwrap()
        .contains("Fix the recursion"));
    assert_eq!(obs.next_step_at.as_deref(), Some("2026-11-23T10:20:00Z"));
    assert_eq!(obs.commands[0].at.as_deref(), Some("2026-11-23T10:10:00Z"));
    let open = obs.left_open.as_ref().unwrap();
    assert_eq!(open.failing[0].at.as_deref(), Some("2026-11-23T10:10:00Z"));
    assert_eq!(open.for_the_user, ["cargo publish --dry-run"]);
    assert_eq!(
        open.for_the_user_at.as_deref(),
        Some("2026-11-23T10:20:00Z")
    );
    // In the record, each under its own key.
    let v = serde_json::to_value(&obs).unwrap();
    assert_eq!(v["request_at"], "2026-11-23T10:00:00Z");
    assert_eq!(v["left_open"]["failing"][0]["at"], "2026-11-23T10:10:00Z");
}

#[test]
fn the_item_in_progress_is_the_next_step_with_the_plans_time() {
    let obs = read(
        "s.jsonl",
        &[
            at(prompt("Port the parser to the new AST"), "09:00"),
            at(reply("Next: read the old parser."), "09:01"),
            at(prompt("go on"), "09:02"),
            at(
                todo(&[
                    ("Read the old parser", "completed"),
                    ("Port the lexer", "in_progress"),
                ]),
                "09:30",
            ),
        ],
    );
    assert_eq!(obs.next_step.as_deref(), Some("Port the lexer"));
    assert_eq!(obs.next_step_at.as_deref(), Some("2026-11-23T09:30:00Z"));
}

#[test]
fn a_transcript_without_times_records_none() {
    let mut lines = vec![prompt("Fix the flaky test in tests/io.rs")];
    lines.extend(bash("b1", "cargo test io", 101));
    lines.push(reply("Next: rerun cargo test io."));
    for l in &mut lines {
        l.as_object_mut().unwrap().remove("timestamp");
    }
    let obs = read("s.jsonl", &lines);
    assert!(obs.request.is_some() && obs.next_step.is_some());
    assert_eq!(
        (obs.request_at, obs.next_step_at, obs.commands[0].at.clone()),
        (None, None, None)
    );
    let v = serde_json::to_value(&obs.commands[0]).unwrap();
    assert!(v.get("at").is_none(), "no key invented: {v}");
}

/// Codex hands over what was said after the calls it read: the lines' times, not the order
/// read, say which came last.
#[test]
fn codex_a_plan_updated_after_the_reply_gives_the_next_step_by_time() {
    let timed = |mut line: Value, hh_mm: &str| {
        line["timestamp"] = json!(format!("2026-11-23T{hh_mm}:00.000Z"));
        line
    };
    let said = |text: &str| {
        cx(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": text}]}),
        )
    };
    let lines = [
        timed(cx_meta(), "08:00"),
        timed(cx_typed("Split the parser into two modules"), "08:00"),
        timed(said("Next: move the lexer into src/lexer.rs."), "08:10"),
        timed(
            cx_call(
                "p1",
                "update_plan",
                json!({"plan": [
                {"step": "Move the lexer", "status": "completed"},
                {"step": "Split the grammar", "status": "in_progress"}]}),
            ),
            "08:20",
        ),
    ];
    let obs = read(
        "rollout-2026-11-23T08-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl",
        &lines,
    );
    assert_eq!(obs.next_step.as_deref(), Some("Split the grammar"));
    assert_eq!(obs.next_step_at.as_deref(), Some("2026-11-23T08:20:00Z"));
    assert_eq!(obs.request_at.as_deref(), Some("2026-11-23T08:00:00Z"));
    // Said after the plan changed, the statement wins.
    let mut later = lines.to_vec();
    later[2] = timed(said("Next: move the lexer into src/lexer.rs."), "08:30");
    let obs = read(
        "rollout-2026-11-23T08-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl",
        &later,
    );
    assert!(obs.next_step.as_deref().unwrap().contains("lexer"));
    assert_eq!(obs.next_step_at.as_deref(), Some("2026-11-23T08:30:00Z"));
}
