//! The task and what remains: the request through nudges and remarks, the agent's next step.

use super::*;

pub(super) fn said(text: &str) -> Value {
    cc(
        "assistant",
        json!({"model": "claude-opus-5-5", "id": "msg_t", "role": "assistant",
               "content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": 3, "output_tokens": 5}}),
    )
}

#[test]
fn a_nudge_is_not_the_request_and_the_task_is_looked_for_further_back() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(
        f,
        "{}",
        prompt("Work on bead spotter-dov: make the importer idempotent")
    )
    .unwrap();
    // More than the first window of tool output, then only nudges.
    let pad = result("unrelated", &"x".repeat(4000), false).to_string();
    let mut written = 0u64;
    while written < FIRST_WINDOW + 64 * 1024 {
        writeln!(f, "{pad}").unwrap();
        written += pad.len() as u64 + 1;
    }
    for nudge in [
        "continue",
        "go on",
        "continue until all are done",
        "Carry on.",
    ] {
        writeln!(f, "{}", prompt(nudge)).unwrap();
    }
    drop(f);
    let obs = observe(&path, Some(Agent::ClaudeCode), Some(Path::new(ROOT)), now()).unwrap();
    assert_eq!(
        obs.request.as_deref(),
        Some("Work on bead spotter-dov: make the importer idempotent")
    );
    // Only nudges: no request at all; a bare slash command when nothing says more.
    let obs = read("s.jsonl", &[prompt("continue"), prompt("keep going")]);
    assert_eq!(obs.request, None);
    let init = "<command-name>/init</command-name>\n<command-message>init</command-message>";
    let obs = read("s.jsonl", &[prompt(init), prompt("continue please")]);
    assert_eq!(obs.request.as_deref(), Some("/init"));
    let obs = read(
        "s.jsonl",
        &[prompt("Rename the flag to --strict"), prompt(init)],
    );
    assert_eq!(obs.request.as_deref(), Some("Rename the flag to --strict"));
}

#[test]
fn the_next_step_is_the_agents_latest_statement_since_the_request() {
    let obs = read(
        "s.jsonl",
        &[
            prompt("Make the table parser handle nested tables"),
            said("Let me read the parser first."),
            call(
                "e1",
                "Edit",
                json!({"file_path": format!("{ROOT}/src/table.rs")}),
            ),
            result("e1", "ok", false),
            said("The flat case works. Next I will make parse_table recurse into nested tables."),
            said("Running the tests."),
            // A nudge does not make the agent's words out of date.
            prompt("go on"),
        ],
    );
    assert_eq!(
        obs.next_step.as_deref(),
        Some("Next I will make parse_table recurse into nested tables.")
    );
    // A new task does; without a statement since, the plan item in progress stands for it.
    let obs = read(
        "s.jsonl",
        &[
            prompt("Make the table parser handle nested tables"),
            said("Next I will make parse_table recurse."),
            call(
                "t",
                "TodoWrite",
                json!({"todos": [{"content": "Write the changelog", "status": "in_progress"},
                                  {"content": "Tag the release", "status": "pending"}]}),
            ),
            prompt("Now release version 2.1"),
        ],
    );
    assert_eq!(obs.next_step.as_deref(), Some("Write the changelog"));
    let open: Vec<&str> = obs.open_items().map(|p| p.text.as_str()).collect();
    assert_eq!(open, ["Write the changelog", "Tag the release"]);
    // Claude Code's own error notices are not the agent's words.
    let mut notice = said("I'll retry in a moment.");
    notice["isApiErrorMessage"] = json!(true);
    let obs = read("s.jsonl", &[prompt("do the thing"), notice]);
    assert_eq!(obs.next_step, None);
}

#[test]
fn every_changed_file_is_listed_or_counted_and_reads_are_not_changes() {
    let mut lines = vec![prompt("rename everything")];
    for i in 0..MAX_FILES + 5 {
        let id = format!("w{i}");
        lines.push(call(
            &id,
            "Write",
            json!({"file_path": format!("{ROOT}/src/f{i}.rs")}),
        ));
        lines.push(result(&id, "ok", false));
    }
    for (id, tool) in [("r", "Read"), ("g", "Grep"), ("l", "Glob")] {
        lines.push(call(
            id,
            tool,
            json!({"file_path": format!("{ROOT}/src/read_only.rs"), "pattern": "x"}),
        ));
        lines.push(result(id, "ok", false));
    }
    let obs = read("s.jsonl", &lines);
    assert_eq!(obs.files.len(), MAX_FILES);
    assert_eq!(obs.more_files, 5);
    assert_eq!(obs.files[0], format!("src/f{}.rs", MAX_FILES + 4));
    assert!(!obs.files.iter().any(|f| f.contains("read_only")));
    let v = serde_json::to_value(&obs).unwrap();
    assert_eq!(v["more_files"], 5);
}

#[test]
fn codex_keeps_the_task_through_a_nudge_and_reads_the_models_next_step() {
    let reply = |text: &str| {
        cx(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": text}]}),
        )
    };
    let obs = read(
        "rollout-x.jsonl",
        &[
            cx_meta(),
            cx_typed("Write notes.txt saying alpha, then run the check"),
            cx_user("Write notes.txt saying alpha, then run the check"),
            reply("The check fails. Next I will fix the widget parser."),
            cx_typed("Carry on."),
            cx_user("Carry on."),
            reply("Resumed."),
        ],
    );
    assert_eq!(
        obs.request.as_deref(),
        Some("Write notes.txt saying alpha, then run the check")
    );
    assert_eq!(
        obs.next_step.as_deref(),
        Some("Next I will fix the widget parser.")
    );
}

#[test]
fn gemini_preamble_is_never_the_request_and_the_reply_gives_the_next_step() {
    let mut reply = gm_reply("g1", vec![]);
    reply["content"] = json!("Planning first.\n\nNext: write notes.txt, then run the check.");
    let obs = read(
        "session-x.jsonl",
        &[
            gm_meta(),
            gm_user(
                "u0",
                "<session_context>\nThis is the CLI. We are setting up the context for our chat.\nToday's date is Monday.\n</session_context>",
            ),
            reply,
        ],
    );
    assert_eq!(obs.request, None);
    assert_eq!(
        obs.next_step.as_deref(),
        Some("write notes.txt, then run the check.")
    );
}
