//! A checkpoint's action items, `done` and `remaining`: written by flags and `--from`, carried
//! over and moved, read from the agent's plan by the hooks, shown by `resume` and in the marked
//! block, judged by `verify`.

use serde_json::{json, Value};

use crate::support::Project;
use crate::transcripts::*;

/// The current checkpoint, as `resume --json` gives it.
fn current(p: &Project) -> Value {
    let (v, code) = p.json(&["resume", "--peek"]);
    assert_eq!(code, 0, "{v}");
    v["checkpoint"].clone()
}

fn list(c: &Value, key: &str) -> Vec<String> {
    c[key]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn peek(p: &Project, extra: &[&str]) -> Value {
    let mut args = vec!["resume", "--peek"];
    args.extend_from_slice(extra);
    let (v, code) = p.json(&args);
    assert_eq!(code, 0, "{v}");
    v
}

#[test]
fn remaining_adds_done_moves_an_item_and_clear_remaining_empties_the_list() {
    let p = Project::initialized();
    p.checkpoint(&[
        "--remaining",
        "add a test for blank lines in tests/parse.rs",
        "--remaining",
        "run cargo clippy --all-targets",
        "--done",
        "split the records in src/parse.rs",
    ])
    .success();
    let c = current(&p);
    assert_eq!(
        list(&c, "remaining"),
        [
            "add a test for blank lines in tests/parse.rs",
            "run cargo clippy --all-targets"
        ]
    );
    assert_eq!(list(&c, "done"), ["split the records in src/parse.rs"]);

    // Not given: carried over. Done (matched ignoring case and spacing): moved.
    p.ctxkeep(&["checkpoint", "--next", "run cargo test parse"])
        .assert()
        .success();
    assert_eq!(list(&current(&p), "remaining").len(), 2);
    p.ctxkeep(&[
        "checkpoint",
        "--done",
        "Add a test for  blank lines in tests/parse.rs",
        "--remaining",
        "commit and push the parser",
        "--remaining",
        "run cargo clippy --all-targets",
    ])
    .assert()
    .success();
    let c = current(&p);
    assert_eq!(
        list(&c, "remaining"),
        [
            "run cargo clippy --all-targets",
            "commit and push the parser"
        ]
    );
    assert_eq!(
        list(&c, "done"),
        [
            "split the records in src/parse.rs",
            "Add a test for  blank lines in tests/parse.rs"
        ]
    );

    // Cleared and given: replaced. Cleared alone: gone, and the key with it.
    p.ctxkeep(&[
        "checkpoint",
        "--clear-remaining",
        "--remaining",
        "tag release 0.2",
    ])
    .assert()
    .success();
    assert_eq!(list(&current(&p), "remaining"), ["tag release 0.2"]);
    p.ctxkeep(&["checkpoint", "--clear-remaining"])
        .assert()
        .success();
    let c = current(&p);
    assert!(c.get("remaining").is_none(), "{c}");
    assert_eq!(list(&c, "done").len(), 2, "done is kept");
    assert!(!p.state().contains("\n  remaining:"), "{}", p.state());
}

#[test]
fn an_empty_item_is_a_usage_error_and_writes_nothing() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let before = p.state();
    for flag in ["--remaining", "--done"] {
        let out = p.ctxkeep(&["checkpoint", flag, " "]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("an item needs text"), "{err}");
    }
    assert_eq!(p.state(), before);
}

#[test]
fn from_reads_the_lists_and_the_flags_add_to_them() {
    let p = Project::initialized();
    p.checkpoint(&["--remaining", "write the changelog entry"])
        .success();
    p.write(
        "fields.yaml",
        "done:\n  - write the changelog entry\nremaining:\n  - bump the version in Cargo.toml\nclear_remaining: true\n",
    );
    p.ctxkeep(&[
        "checkpoint",
        "--from",
        "fields.yaml",
        "--remaining",
        "publish with cargo publish",
    ])
    .assert()
    .success();
    let c = current(&p);
    assert_eq!(
        list(&c, "remaining"),
        [
            "bump the version in Cargo.toml",
            "publish with cargo publish"
        ]
    );
    assert_eq!(list(&c, "done"), ["write the changelog entry"]);

    // JSON too; an empty item is refused naming the field, and nothing is written.
    let before = p.state();
    p.write("bad.json", r#"{"remaining": ["tag it", ""]}"#);
    let out = p
        .ctxkeep(&["checkpoint", "--from", "bad.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("remaining (--remaining) item 2 is empty")
            && err.contains("--clear-remaining"),
        "{err}"
    );
    assert_eq!(p.state(), before);
}

#[test]
fn too_many_remaining_items_are_refused_by_name() {
    let p = Project::initialized();
    let items: Vec<String> = (0..60)
        .map(|i| format!("port module {i} to the new API"))
        .collect();
    let mut args: Vec<&str> = Vec::new();
    for i in &items {
        args.extend(["--remaining", i.as_str()]);
    }
    p.checkpoint(&args).success();
    let more: Vec<String> = (60..110)
        .map(|i| format!("port module {i} to the new API"))
        .collect();
    let mut args = vec!["checkpoint"];
    for i in &more {
        args.extend(["--remaining", i.as_str()]);
    }
    let before = p.state();
    let out = p.ctxkeep(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(65));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("remaining (--remaining) would have 110 items, over the 100")
            && err.contains("--clear-remaining"),
        "{err}"
    );
    assert_eq!(p.state(), before);
}

#[test]
fn resume_shows_what_remains_and_done_and_keeps_what_remains_longest() {
    let p = Project::initialized();
    p.checkpoint(&[
        "--remaining",
        "add a test for blank lines in tests/parse.rs",
        "--done",
        "split the records in src/parse.rs",
        "--decision",
        "keep the parser hand-written: the grammar is small",
        "--note",
        &"The fixtures in tests/data were written by hand. ".repeat(20),
    ])
    .success();
    let full = peek(&p, &[]);
    let prompt = full["prompt"].as_str().unwrap();
    let remains = prompt
        .find("What remains:\n- add a test for blank lines in tests/parse.rs\n")
        .expect(prompt);
    let done = prompt
        .find("Done:\n- split the records in src/parse.rs\n")
        .expect(prompt);
    assert!(
        prompt.find("- Next action:").unwrap() < remains && remains < done,
        "{prompt}"
    );
    // The marked block holds them as a checklist.
    let state = p.state();
    assert!(
        state.contains("### What remains\n- [ ] add a test for blank lines in tests/parse.rs\n"),
        "{state}"
    );
    assert!(
        state.contains("### Done\n- [x] split the records in src/parse.rs\n"),
        "{state}"
    );

    // Under a tight budget, done goes before the decisions, and what remains stays.
    let mut budget = full["tokens"].as_u64().unwrap();
    let tight = loop {
        budget -= 5;
        let v = peek(&p, &["--max-tokens", &budget.to_string()]);
        let omitted: Vec<&str> = v["omitted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap())
            .collect();
        if omitted.contains(&"decisions") {
            assert!(omitted.contains(&"done"), "{omitted:?}");
            break v;
        }
        if omitted.contains(&"done") {
            assert!(!v["prompt"].as_str().unwrap().contains("Done:"));
        }
    };
    let prompt = tight["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("What remains:\n- add a test for blank lines in tests/parse.rs"),
        "{prompt}"
    );
    assert!(!tight["omitted"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o == "remaining"));
}

#[test]
fn verify_finds_a_vague_remaining_item_on_its_line() {
    let p = Project::initialized();
    p.checkpoint(&[
        "--remaining",
        "add a test for blank lines in tests/parse.rs",
        "--remaining",
        "continue with the rest",
    ])
    .success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0, "a warning: {v}");
    let found: Vec<&Value> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "CK307")
        .collect();
    assert_eq!(found.len(), 1, "{v}");
    assert_eq!(found[0]["field"], "remaining");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("`remaining` item 2 \"continue with the rest\""),
        "{}",
        found[0]
    );
    let line = found[0]["line"].as_u64().unwrap() as usize;
    let state = p.state();
    assert!(
        state
            .lines()
            .nth(line - 1)
            .unwrap()
            .contains("continue with the rest"),
        "line {line} of\n{state}"
    );

    // Marked done, it is no longer judged.
    p.ctxkeep(&["checkpoint", "--done", "continue with the rest"])
        .assert()
        .success();
    let (v, _) = p.json(&["verify"]);
    assert!(!v.to_string().contains("CK307"), "{v}");
}

/// A Claude Code session that planned with TodoWrite.
fn planned_session(p: &Project, statuses: [&str; 3]) {
    let todos = json!({"todos": [
        {"content": "Skip blank lines in the record splitter", "status": statuses[0]},
        {"content": "Handle a trailing blank line", "status": statuses[1]},
        {"content": "Document the accepted input in docs/input.md", "status": statuses[2]}]});
    let lines = vec![
        claude_user("Make the widget parser accept blank lines between records"),
        claude_tool_use("t1", "TodoWrite", &todos.to_string(), 30_000),
        claude_tool_result("t1", false, "ok"),
    ];
    std::fs::write(p.home().join("t.jsonl"), jsonl(&lines)).unwrap();
}

fn pre_compact(p: &Project) {
    let payload = json!({
        "session_id": "sess-1",
        "transcript_path": p.home().join("t.jsonl"),
        "cwd": p.root(),
        "hook_event_name": "PreCompact",
        "trigger": "manual",
    });
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_automatic_checkpoint_reads_the_lists_from_the_plan_until_the_agent_writes_its_own() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    planned_session(&p, ["completed", "in_progress", "pending"]);
    pre_compact(&p);
    let c = current(&p);
    assert_eq!(c["trigger"], "pre-compact", "{c}");
    assert_eq!(
        list(&c, "done"),
        ["Skip blank lines in the record splitter"]
    );
    assert_eq!(
        list(&c, "remaining"),
        [
            "Handle a trailing blank line",
            "Document the accepted input in docs/input.md"
        ]
    );
    // Said once in the prompt: the plan's own items are not listed again.
    let prompt = peek(&p, &[])["prompt"].as_str().unwrap().to_string();
    assert!(
        prompt.contains("  - [pending] Document the accepted input in docs/input.md\n"),
        "{prompt}"
    );
    assert_eq!(
        prompt.matches("Document the accepted input").count(),
        1,
        "{prompt}"
    );
    assert!(!prompt.contains("\nDone:\n"), "{prompt}");

    // The plan moves on: so do the lists read from it.
    planned_session(&p, ["completed", "completed", "in_progress"]);
    pre_compact(&p);
    let c = current(&p);
    assert_eq!(list(&c, "done").len(), 2, "{c}");
    assert_eq!(
        list(&c, "remaining"),
        ["Document the accepted input in docs/input.md"]
    );

    // The agent's own list stands against the plan; an item the plan completes moves.
    p.ctxkeep(&[
        "checkpoint",
        "--remaining",
        "release 0.3 with the new parser",
    ])
    .assert()
    .success();
    planned_session(&p, ["completed", "completed", "completed"]);
    pre_compact(&p);
    let c = current(&p);
    assert_eq!(
        list(&c, "remaining"),
        ["release 0.3 with the new parser"],
        "{c}"
    );
    assert_eq!(list(&c, "done").len(), 3, "{c}");
}

#[test]
fn done_items_give_way_oldest_first_when_the_front_matter_is_full() {
    let p = Project::initialized();
    let done: Vec<String> = (0..16)
        .map(|i| format!("step {i:02} {}", "d".repeat(990)))
        .collect();
    let mut args: Vec<&str> = Vec::new();
    for d in &done {
        args.extend(["--done", d.as_str()]);
    }
    p.checkpoint(&args).success();
    let note = "n".repeat(16_000);
    let decisions: Vec<String> = (0..16)
        .map(|i| format!("decision {i:02} {}", "c".repeat(985)))
        .collect();
    let questions: Vec<String> = (0..16)
        .map(|i| format!("question {i:02} {}", "q".repeat(985)))
        .collect();
    let task = format!(
        "parse the front matter in src/state.rs {}",
        "t".repeat(12_000)
    );
    let mut args = vec![
        "checkpoint",
        "--note",
        note.as_str(),
        "--task",
        task.as_str(),
    ];
    for d in &decisions {
        args.extend(["--decision", d.as_str()]);
    }
    for q in &questions {
        args.extend(["--question", q.as_str()]);
    }
    let out = p.ctxkeep(&args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("done items"), "{err}");
    let kept = list(&current(&p), "done");
    assert!(!kept.is_empty() && kept.len() < 16, "{}", kept.len());
    // The newest are kept.
    assert_eq!(kept.last(), done.last());
}
