//! Transcripts written here in each agent's shape (no fixture text), then read as a hook would.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use chrono::{DateTime, Utc};

use crate::agents::{observe, Agent};
use crate::transcripts::activity::*;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-23T20:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// Writes `lines` (one JSON value each) as `name` in a temp dir.
fn write(name: &str, lines: &[Value]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let mut text = String::new();
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

const ROOT: &str = "/home/dev/proj";

fn read(name: &str, lines: &[Value]) -> Observed {
    let (_d, path) = write(name, lines);
    let obs = observe(&path, None, Some(Path::new(ROOT)), now()).unwrap();
    assert_eq!(obs.read_at, "2026-11-23T20:00:00Z");
    obs
}

fn plan(obs: &Observed) -> Vec<(&str, &str)> {
    obs.plan
        .iter()
        .map(|p| (p.text.as_str(), p.status.as_str()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Claude Code

/// A main-chain Claude Code line of `ty` with `message`.
fn cc(ty: &str, message: Value) -> Value {
    json!({"parentUuid": "p", "isSidechain": false, "userType": "external", "cwd": ROOT,
           "sessionId": "sess-cc-1", "version": "2.1.328", "type": ty, "message": message,
           "uuid": "u", "timestamp": "2026-11-23T19:00:00.000Z"})
}

fn prompt(text: &str) -> Value {
    cc("user", json!({"role": "user", "content": text}))
}

fn call(id: &str, name: &str, input: Value) -> Value {
    cc(
        "assistant",
        json!({"model": "claude-opus-5-5", "id": format!("msg_{id}"), "role": "assistant",
               "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
               "usage": {"input_tokens": 3, "output_tokens": 5}}),
    )
}

fn result(id: &str, content: &str, is_error: bool) -> Value {
    cc(
        "user",
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
               "content": content, "is_error": is_error}]}),
    )
}

/// The user line with the agent's summary that Claude Code writes after compacting.
fn compaction_summary() -> Value {
    let mut summary = prompt(
        "This session is being continued from a previous conversation that ran out of context.",
    );
    summary["isCompactSummary"] = json!(true);
    summary
}

fn bash(id: &str, cmd: &str, exit: i64) -> [Value; 2] {
    let out = if exit == 0 {
        result(id, "ok", false)
    } else {
        result(id, &format!("Exit code {exit}\nerror: 1 test failed"), true)
    };
    [
        call(id, "Bash", json!({"command": cmd, "description": "run"})),
        out,
    ]
}

#[test]
fn task_create_and_update_are_replayed_by_task_id() {
    let created = |id: &str, n: u32, subject: &str| {
        let mut r = result(
            id,
            &format!("Task #{n} created successfully: {subject}"),
            false,
        );
        r["toolUseResult"] = json!({"task": {"id": n.to_string(), "subject": subject}});
        r
    };
    let lines = [
        prompt("Add CRLF handling to the front matter parser"),
        call(
            "t1",
            "TaskCreate",
            json!({"subject": "Handle CRLF in the split", "description": "d", "activeForm": "Handling"}),
        ),
        created("t1", 1, "Handle CRLF in the split"),
        call(
            "t2",
            "TaskCreate",
            json!({"subject": "Add a regression test", "description": "d"}),
        ),
        // This result names the task only in its text.
        result(
            "t2",
            "Task #2 created successfully: Add a regression test",
            false,
        ),
        call("t3", "TaskCreate", json!({"subject": "Scratch idea"})),
        created("t3", 3, "Scratch idea"),
        call(
            "u1",
            "TaskUpdate",
            json!({"taskId": "1", "status": "in_progress"}),
        ),
        result("u1", "Updated task #1 status", false),
        call(
            "u2",
            "TaskUpdate",
            json!({"taskId": "3", "status": "deleted"}),
        ),
        call(
            "u3",
            "TaskUpdate",
            json!({"taskId": "1", "status": "completed"}),
        ),
        call(
            "u4",
            "TaskUpdate",
            json!({"taskId": "2", "status": "in_progress", "subject": "Add two regression tests"}),
        ),
        call("t4", "TaskCreate", json!({"subject": "Refused"})),
        result(
            "t4",
            "<tool_use_error>Task list is full</tool_use_error>",
            true,
        ),
    ];
    let obs = read("s.jsonl", &lines);
    assert_eq!(
        plan(&obs),
        vec![
            ("Handle CRLF in the split", "completed"),
            ("Add two regression tests", "in_progress"),
        ]
    );
    assert_eq!(obs.agent, "claude-code");
    assert_eq!(obs.session.as_deref(), Some("sess-cc-1"));
    assert_eq!(
        obs.request.as_deref(),
        Some("Add CRLF handling to the front matter parser")
    );
}

/// A plan in plan mode's shape: a title, prose, phases, a closing list of checks.
const PLAN_MODE_PLAN: &str = "# Cache the parsed front matter\n\n## Context\n\nEvery hook parses the state file again.\n\n## Step 1: Cache\n\n- Key the cache by the file's digest\n\n## Step 2: Invalidate\n\n- Drop the entry on write\n\n## Verification\n\n1. `cargo test --lib state` passes\n2. `bench/run` shows the hook faster\n";

#[test]
fn plan_modes_plan_is_kept_as_its_outline_until_a_list_after_it_is_all_done() {
    let plan_call = call("p1", "ExitPlanMode", json!({"plan": PLAN_MODE_PLAN}));
    let approved = result(
        "p1",
        "User has approved your plan. You can now start coding.",
        false,
    );
    let todos = |status: &str| {
        json!({"todos": [{"content": "Step 1: Cache", "status": status},
                         {"content": "Step 2: Invalidate", "status": status}]})
    };
    let obs = read(
        "s.jsonl",
        &[
            prompt("Make the hooks stop parsing the state file on every event"),
            plan_call.clone(),
            approved.clone(),
            call("t1", "TodoWrite", todos("in_progress")),
        ],
    );
    let kept = obs.from_plan_mode.clone().expect("the plan is kept");
    assert_eq!(kept.at.as_deref(), Some("2026-11-23T19:00:00Z"));
    assert_eq!(kept.title.as_deref(), Some("Cache the parsed front matter"));
    assert_eq!(
        kept.steps,
        [
            "Step 1: Cache",
            "Step 2: Invalidate",
            "`cargo test --lib state` passes",
            "`bench/run` shows the hook faster"
        ]
    );
    // Never the next step: the plan item in progress is newer.
    assert_eq!(obs.next_step.as_deref(), Some("Step 1: Cache"));
    let v = serde_json::to_value(&obs).unwrap();
    assert_eq!(
        v["from_plan_mode"]["steps"][2],
        "`cargo test --lib state` passes"
    );

    // Every item of a list written after it completed: the plan is done.
    let done = read(
        "s.jsonl",
        &[
            plan_call.clone(),
            approved.clone(),
            call("t1", "TodoWrite", todos("completed")),
        ],
    );
    assert_eq!(done.from_plan_mode, None);
    // A new task makes it out of date; a refused plan is not the plan.
    let new_task = read(
        "s.jsonl",
        &[
            plan_call.clone(),
            approved,
            prompt("Now rename the config loader to settings and update every caller"),
        ],
    );
    assert_eq!(new_task.from_plan_mode, None);
    let refused = read(
        "s.jsonl",
        &[
            plan_call,
            result(
                "p1",
                "The user doesn't want to proceed with this tool use.",
                true,
            ),
        ],
    );
    assert_eq!(refused.from_plan_mode, None);
}

#[test]
fn todowrite_last_call_holds_the_whole_list() {
    let todos = |a: &str, b: &str| {
        json!({"todos": [
            {"content": "Read the parser", "status": a, "activeForm": "Reading"},
            {"content": "Fix the split", "status": b, "activeForm": "Fixing"},
        ]})
    };
    let obs = read(
        "s.jsonl",
        &[
            call("a", "TodoWrite", todos("in_progress", "pending")),
            result("a", "Todos have been modified successfully", false),
            call("b", "TodoWrite", todos("completed", "in_progress")),
        ],
    );
    assert_eq!(
        plan(&obs),
        vec![
            ("Read the parser", "completed"),
            ("Fix the split", "in_progress")
        ]
    );
    // Serialized with the issue's field names and status words.
    let v = serde_json::to_value(&obs).unwrap();
    assert_eq!(
        v["plan"][1],
        json!({"text": "Fix the split", "status": "in_progress"})
    );
    assert!(v.get("activity").is_none() && v.get("steps").is_none());
    let back: Observed = serde_json::from_value(v).unwrap();
    assert_eq!(back.plan, obs.plan);
}

#[test]
fn changed_files_most_recent_first_without_failed_calls() {
    let obs = read(
        "s.jsonl",
        &[
            call(
                "w",
                "Write",
                json!({"file_path": format!("{ROOT}/src/lexer.rs"), "content": "x"}),
            ),
            result("w", "File created successfully", false),
            call(
                "m",
                "MultiEdit",
                json!({"file_path": format!("{ROOT}/src/parse.rs"),
                 "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]}),
            ),
            result("m", "Applied 2 edits", false),
            call(
                "e",
                "Edit",
                json!({"file_path": format!("{ROOT}/src/main.rs"), "old_string": "zz", "new_string": "y"}),
            ),
            result(
                "e",
                "<tool_use_error>String to replace not found in file.</tool_use_error>",
                true,
            ),
            call(
                "n",
                "NotebookEdit",
                json!({"notebook_path": format!("{ROOT}/nb/a.ipynb"), "new_source": "x"}),
            ),
            result("n", "Updated cell", false),
            call(
                "o",
                "Write",
                json!({"file_path": "/etc/elsewhere.conf", "content": "x"}),
            ),
            result("o", "File created successfully", false),
            call(
                "w2",
                "Edit",
                json!({"file_path": format!("{ROOT}/src/lexer.rs"), "old_string": "x", "new_string": "y"}),
            ),
            result("w2", "The file has been updated", false),
        ],
    );
    assert_eq!(
        obs.files,
        vec![
            "src/lexer.rs",
            "/etc/elsewhere.conf",
            "nb/a.ipynb",
            "src/parse.rs"
        ]
    );
}

#[test]
fn a_command_failing_three_times_in_a_row_is_a_loop() {
    let cmd = "cargo test --lib front_matter";
    let mut lines = vec![prompt("make the tests pass")];
    for (i, exit) in [101, 101, 101].iter().enumerate() {
        lines.extend(bash(&format!("b{i}"), &format!("  {cmd} "), *exit));
        lines.push(call(
            &format!("e{i}"),
            "Edit",
            json!({"file_path": format!("{ROOT}/src/lexer.rs")}),
        ));
        lines.push(result(&format!("e{i}"), "ok", false));
    }
    let obs = read("s.jsonl", &lines);
    // The three runs, one after another among the commands, are one entry with their count.
    assert_eq!(
        obs.commands,
        vec![CommandRun {
            command: cmd.into(),
            ok: Some(false),
            exit_code: Some(101),
            times: 3,
        }]
    );
    assert_eq!(
        serde_json::to_value(&obs.commands[0]).unwrap(),
        json!({"command": cmd, "ok": false, "exit_code": 101, "times": 3})
    );
    let hits = loops_found(&obs, &LoopLimits::default());
    let error = "exit 101: error: 1 test failed";
    assert_eq!(
        hits,
        vec![LoopHit::SameFailure {
            command: cmd.into(),
            count: 3,
            error: Some(error.into()),
        }]
    );
    assert_eq!(
        serde_json::to_value(&hits[0]).unwrap(),
        json!({"kind": "same_failure", "command": cmd, "count": 3, "error": error})
    );
    // A limit of 0 turns the rule off; a higher one is not reached.
    let off = LoopLimits {
        same_failure: 0,
        same_file: 0,
        ..LoopLimits::default()
    };
    assert!(loops_found(&obs, &off).is_empty());
    let higher = LoopLimits {
        same_failure: 4,
        same_file: 4,
        ..LoopLimits::default()
    };
    assert!(loops_found(&obs, &higher).is_empty());
}

#[test]
fn failing_twice_then_passing_is_not_a_loop() {
    let mut lines = Vec::new();
    lines.extend(bash("a", "make test", 2));
    lines.extend(bash("b", "make test", 2));
    lines.extend(bash("x", "ls", 0));
    lines.extend(bash("c", "make test", 0));
    lines.extend(bash("d", "make test", 2));
    let obs = read("s.jsonl", &lines);
    assert!(loops_found(&obs, &LoopLimits::default()).is_empty());
    let outcomes: Vec<_> = obs
        .commands
        .iter()
        .map(|c| (c.command.as_str(), c.ok, c.exit_code, c.times))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("make test", Some(false), Some(2), 2),
            ("ls", Some(true), Some(0), 1),
            ("make test", Some(true), Some(0), 1),
            ("make test", Some(false), Some(2), 1),
        ]
    );
    // One run has no count in the record.
    assert_eq!(
        serde_json::to_value(&obs.commands[1]).unwrap(),
        json!({"command": "ls", "ok": true, "exit_code": 0})
    );
}

#[test]
fn only_the_last_five_commands_are_kept_and_unknown_outcomes_are_null() {
    let mut lines = Vec::new();
    for i in 0..7 {
        lines.extend(bash(&format!("c{i}"), &format!("echo {i}"), 0));
    }
    lines.push(call(
        "bg",
        "Bash",
        json!({"command": "npm run dev", "run_in_background": true}),
    ));
    lines.push(result(
        "bg",
        "Command running in background with ID: abc",
        false,
    ));
    lines.push(call("last", "Bash", json!({"command": "sleep 100"})));
    let obs = read("s.jsonl", &lines);
    let cmds: Vec<_> = obs.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        cmds,
        vec!["echo 4", "echo 5", "echo 6", "npm run dev", "sleep 100"]
    );
    assert_eq!(
        (obs.commands[3].ok, obs.commands[3].exit_code),
        (None, None)
    );
    assert_eq!(
        (obs.commands[4].ok, obs.commands[4].exit_code),
        (None, None)
    );
    let v = serde_json::to_value(&obs.commands[4]).unwrap();
    assert_eq!(
        v,
        json!({"command": "sleep 100", "ok": null, "exit_code": null})
    );
}

#[test]
fn edits_alone_or_with_passing_checks_are_never_a_loop() {
    let edits = |n: usize, check: Option<i64>| {
        let mut lines = Vec::new();
        for i in 0..n {
            lines.push(call(
                &format!("e{i}"),
                "Edit",
                json!({"file_path": format!("{ROOT}/src/lexer.rs")}),
            ));
            lines.push(result(&format!("e{i}"), "ok", false));
            if let Some(exit) = check {
                lines.extend(bash(&format!("t{i}"), "cargo test", exit));
            }
        }
        lines
    };
    let obs = read("s.jsonl", &edits(12, None));
    assert_eq!(obs.files, vec!["src/lexer.rs"]);
    assert!(loops_found(&obs, &LoopLimits::default()).is_empty());
    let green = read("s.jsonl", &edits(12, Some(0)));
    assert!(loops_found(&green, &LoopLimits::default()).is_empty());
    // The same failure after every edit: one loop, given once.
    let red = read("s.jsonl", &edits(12, Some(101)));
    let hits = loops_found(&red, &LoopLimits::default());
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(matches!(&hits[0], LoopHit::SameFailure { count: 3, .. }));
}

#[test]
fn sidechain_lines_do_not_count() {
    let side = |mut v: Value| {
        v["isSidechain"] = json!(true);
        v["agentId"] = json!("a1b2");
        v
    };
    let mut lines = vec![prompt("review the lexer")];
    lines.push(side(prompt("Look for bugs in src/lexer.rs")));
    for i in 0..3 {
        for l in bash(&format!("s{i}"), "cargo test", 1) {
            lines.push(side(l));
        }
    }
    lines.push(side(call(
        "sw",
        "Write",
        json!({"file_path": format!("{ROOT}/notes.md")}),
    )));
    lines.push(side(call(
        "st",
        "TodoWrite",
        json!({"todos": [{"content": "x", "status": "pending"}]}),
    )));
    // A progress line embedding a subagent's own edit: the session's change (not its step,
    // command or plan).
    lines.push(
        json!({"type": "progress", "isSidechain": false, "data": {"type": "agent_progress",
        "message": {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "px",
        "name": "Write", "input": {"file_path": format!("{ROOT}/p.md")}}]}}}}),
    );
    let obs = read("s.jsonl", &lines);
    assert_eq!(obs.request.as_deref(), Some("review the lexer"));
    assert_eq!(obs.files, ["p.md"]);
    assert!(obs.commands.is_empty() && obs.plan.is_empty());
    assert!(loops_found(&obs, &LoopLimits::default()).is_empty());

    // A subagent's own transcript (every line a sidechain) has nothing of the main session.
    let all_side: Vec<Value> = lines.into_iter().map(side).collect();
    assert!(read("agent-a1b2.jsonl", &all_side).is_empty());
}

/// ctxkeep's resume prompt as the default template renders it.
fn rendered_resume_prompt() -> String {
    let dir = tempfile::tempdir().unwrap();
    let t = crate::domain::templates::Templates::load(dir.path(), None).unwrap();
    let no = json!(false);
    t.render(
        "resume.md",
        json!({
            "stuck": null, "session": null, "changes": null, "history": [], "nonce": "n0nce",
            "include": {"decisions": no, "questions": no, "tree": no, "changes": no, "notes": no, "history": no},
            "checkpoint": {"id": "ckpt-0007", "created_at": "2026-11-23T18:00:00Z", "trigger": "pre-compact",
                "phase": "fixing", "active_task": "CRLF", "controlling_agent": "claude-code",
                "next_action": "run the tests"},
        }),
    )
    .unwrap()
}

#[test]
fn injected_lines_and_ctxkeep_resume_prompt_are_not_the_request() {
    let resume = rendered_resume_prompt();
    assert!(resume.contains("ckpt-0007"), "{resume}");
    let mut meta =
        prompt("<system-reminder>SessionStart hook additional context: be brief</system-reminder>");
    meta["isMeta"] = json!(true);
    let mut summary = prompt(
        "This session is being continued from a previous conversation that ran out of context.",
    );
    summary["isCompactSummary"] = json!(true);
    let obs = read(
        "s.jsonl",
        &[
            prompt("Add CRLF handling and make the tests pass"),
            meta,
            prompt("<system-reminder>UserPromptSubmit hook additional context: ctxkeep 61% used</system-reminder>"),
            cc("user", json!({"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}]})),
            summary,
            prompt(&resume),
            json!({"type": "api-request-blob", "role": "user", "content": [{"type": "text", "text": "blob text"}]}),
            json!({"type": "attachment", "attachment": {"type": "queued_command", "prompt": "<task-notification>done</task-notification>",
                   "commandMode": "task-notification"}}),
            prompt("<local-command-stdout>Compacted</local-command-stdout>"),
            prompt("<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args>keep the plan</command-args>"),
        ],
    );
    assert_eq!(
        obs.request.as_deref(),
        Some("Add CRLF handling and make the tests pass")
    );
    // A hook's context around the user's own words leaves the words.
    let obs = read(
        "s.jsonl",
        &[prompt(
            "<hook_context>branch: main</hook_context>\nrename the flag",
        )],
    );
    assert_eq!(obs.request.as_deref(), Some("rename the flag"));
}

#[test]
fn queued_prompts_count_as_requests() {
    let obs = read(
        "s.jsonl",
        &[
            prompt("first"),
            json!({"type": "attachment", "attachment": {"type": "queued_command", "prompt": "update the docs for the --strict flag",
                   "commandMode": "prompt", "origin": {"kind": "human"}}}),
        ],
    );
    assert_eq!(
        obs.request.as_deref(),
        Some("update the docs for the --strict flag")
    );
}

#[test]
fn a_slash_command_is_its_name_and_arguments() {
    let mut expansion = cc(
        "user",
        json!({"role": "user", "content": [{"type": "text", "text": "Review pull request 42 carefully. Steps: ..."}]}),
    );
    expansion["isMeta"] = json!(true);
    let obs = read(
        "s.jsonl",
        &[
            prompt("earlier"),
            prompt("<command-message>review-pr is running…</command-message>\n<command-name>/review-pr</command-name>\n<command-args>42 --strict</command-args>"),
            expansion,
        ],
    );
    assert_eq!(obs.request.as_deref(), Some("/review-pr 42 --strict"));
}

#[test]
fn a_long_request_is_cut_on_a_character_boundary() {
    let long = format!("{}{}", "Überprüfe den Parser ✓ ".repeat(40), "end");
    let obs = read("s.jsonl", &[prompt(&long)]);
    let r = obs.request.unwrap();
    assert_eq!(r.chars().count(), MAX_REQUEST_CHARS);
    assert!(r.ends_with('…'));
    assert!(long.starts_with(r.trim_end_matches('…')));
    // At the limit exactly: kept whole.
    let exact = "é".repeat(MAX_REQUEST_CHARS);
    assert_eq!(read("s.jsonl", &[prompt(&exact)]).request.unwrap(), exact);
}

#[test]
fn a_secret_in_the_request_or_a_command_is_redacted() {
    let token = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
    let obs = read(
        "s.jsonl",
        &[
            prompt(&format!("push with token {token} please")),
            call(
                "c",
                "Bash",
                json!({"command": format!("GH_TOKEN={token} gh pr create")}),
            ),
        ],
    );
    let r = obs.request.unwrap();
    assert!(
        !r.contains(&token) && r.contains("[REDACTED:github]"),
        "{r}"
    );
    assert!(!obs.commands[0].command.contains(&token));
}

#[test]
fn the_window_is_the_last_8_mib_only() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    // Before the window: a write and a request that must not be seen.
    for l in [
        prompt("old request"),
        call(
            "old",
            "Write",
            json!({"file_path": format!("{ROOT}/old.rs")}),
        ),
        result("old", "ok", false),
    ] {
        writeln!(f, "{l}").unwrap();
    }
    let pad = result("unrelated", &"x".repeat(4000), false).to_string();
    let mut written = 0u64;
    while written < TAIL_BYTES + 1024 * 1024 {
        writeln!(f, "{pad}").unwrap();
        written += pad.len() as u64 + 1;
    }
    for l in [
        prompt("new request"),
        call(
            "new",
            "Write",
            json!({"file_path": format!("{ROOT}/new.rs")}),
        ),
        result("new", "ok", false),
    ] {
        writeln!(f, "{l}").unwrap();
    }
    drop(f);
    let obs = observe(&path, Some(Agent::ClaudeCode), Some(Path::new(ROOT)), now()).unwrap();
    assert_eq!(obs.request.as_deref(), Some("new request"));
    assert_eq!(obs.files, vec!["new.rs"]);
}

#[test]
fn bad_input_is_one_clear_error() {
    use crate::system::error::{exit, exit_code_of};
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone.jsonl");
    let err = observe(&missing, None, None, now()).unwrap_err();
    assert_eq!(exit_code_of(&err), exit::NO_INPUT);
    assert!(err.to_string().contains("gone.jsonl"), "{err}");
    let notes = dir.path().join("notes.jsonl");
    std::fs::write(&notes, "hello\n").unwrap();
    let err = observe(&notes, None, None, now()).unwrap_err();
    assert_eq!(exit_code_of(&err), exit::DATA);
    // Garbage lines in a known format are skipped, not fatal.
    std::fs::write(
        &notes,
        "hello\n\u{0}\n{\"type\":\"user\",\"message\":{\"content\":[1]}\n",
    )
    .unwrap();
    let obs = observe(&notes, Some(Agent::ClaudeCode), None, now()).unwrap();
    assert!(obs.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Codex

fn cx(ty: &str, payload: Value) -> Value {
    json!({"timestamp": "2026-11-23T19:00:00.000Z", "type": ty, "payload": payload})
}

fn cx_meta() -> Value {
    cx(
        "session_meta",
        json!({"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "cwd": ROOT, "originator": "codex_cli_rs",
               "cli_version": "0.169.0", "source": "cli"}),
    )
}

fn cx_call(id: &str, name: &str, args: Value) -> Value {
    cx(
        "response_item",
        json!({"type": "function_call", "name": name, "arguments": args.to_string(), "call_id": id}),
    )
}

fn cx_out(id: &str, output: &str) -> Value {
    cx(
        "response_item",
        json!({"type": "function_call_output", "call_id": id, "output": output}),
    )
}

fn cx_user(text: &str) -> Value {
    cx(
        "response_item",
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
    )
}

fn cx_typed(text: &str) -> Value {
    cx(
        "event_msg",
        json!({"type": "user_message", "message": text, "images": []}),
    )
}

const PATCH: &str = "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Delete File: old.txt\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-x\n+y\n*** End Patch";

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

// ---------------------------------------------------------------------------------------------
// Gemini

fn gm_meta() -> Value {
    json!({"sessionId": "5e551011-aaaa-bbbb-cccc-ddddeeeeffff", "projectHash": "abc",
           "startTime": "2026-11-23T19:00:00.000Z", "lastUpdated": "2026-11-23T19:00:00.000Z", "kind": "main"})
}

fn gm_user(id: &str, text: &str) -> Value {
    json!({"id": id, "timestamp": "2026-11-23T19:00:01.000Z", "type": "user", "content": [{"text": text}]})
}

fn gm_tool(id: &str, name: &str, args: Value, status: &str, output: &str) -> Value {
    json!({"id": id, "name": name, "args": args, "status": status, "timestamp": "2026-11-23T19:00:02.000Z",
           "result": [{"functionResponse": {"id": id, "name": name, "response": {"output": output}}}]})
}

fn gm_reply(id: &str, calls: Vec<Value>) -> Value {
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

// ---------------------------------------------------------------------------------------------
// The real transcripts in ../shared/fixtures, when present

/// `$CARGO_MANIFEST_DIR/../shared/fixtures`, else `$CTXKEEP_SHARED/fixtures`.
fn shared_fixtures() -> Option<PathBuf> {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    if beside.is_dir() {
        return Some(beside);
    }
    let env = PathBuf::from(std::env::var_os("CTXKEEP_SHARED")?).join("fixtures");
    env.is_dir().then_some(env)
}

fn transcripts_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            transcripts_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl")
            || (p.extension().is_some_and(|x| x == "json")
                && p.to_string_lossy().contains("gemini"))
        {
            out.push(p);
        }
    }
}

#[test]
fn every_shared_fixture_reads_plausibly() {
    let Some(dir) = shared_fixtures() else {
        eprintln!("skipped: no ../shared/fixtures (set CTXKEEP_SHARED)");
        return;
    };
    let mut paths = Vec::new();
    transcripts_under(&dir, &mut paths);
    assert!(!paths.is_empty());
    let mut by_name = std::collections::HashMap::new();
    for p in &paths {
        let obs = observe(p, None, None, now()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        // Never more than the caps; every plan status is one of the three words.
        assert!(obs.files.len() <= MAX_FILES && obs.commands.len() <= MAX_COMMANDS);
        if let Some(r) = &obs.request {
            assert!(r.chars().count() <= MAX_REQUEST_CHARS);
        }
        let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        by_name.insert(rel, obs);
    }
    let find = |part: &str| -> &Observed {
        by_name
            .iter()
            .find(|(k, _)| k.contains(part))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no fixture named like {part}"))
    };
    // Subagent transcripts: all sidechain, nothing of a main session.
    for part in [
        "subagents/agent-a881341",
        "subagents/agent-acompact",
        "agent-test-hash",
    ] {
        assert!(find(part).is_empty(), "{part}: {:?}", find(part));
    }
    // A Codex session that updated its plan and patched files, partly through a code cell.
    let codex = find("vct/codex.jsonl");
    assert_eq!(codex.agent, "codex");
    assert!(!codex.plan.is_empty());
    for f in [
        "go.mod",
        "README.zh-TW.md",
        "docs/RELEASE_NOTES.md",
        "core/version.go",
    ] {
        assert!(
            codex.files.iter().any(|x| x.ends_with(f)),
            "{f} in {:?}",
            codex.files
        );
    }
    assert!(!codex.files.iter().any(|x| x.contains("should_not_count")));
    assert!(codex.request.is_some());
    assert!(!codex.commands.is_empty());
    // Claude Code sessions with TodoWrite keep a plan; their writes and edits are files.
    let ccv = find("ccv/5c0375b4");
    assert!(!ccv.plan.is_empty());
    assert!(!ccv.files.is_empty());
    assert!(ccv
        .request
        .as_deref()
        .is_some_and(|r| r.starts_with("/orchestrator")));
    assert!(find("ccv/1af7fc5e").request.as_deref() == Some("/init"));
    let manual = find("manual-compact-window");
    assert!(!manual.files.is_empty() && !manual.commands.is_empty());
    assert!(manual.session.is_some());
    // Gemini: a written and a replaced file, the typed request rather than the CLI's nudge.
    let gem = find("gemini/vct/gemini.jsonl");
    assert!(
        gem.files.iter().any(|f| f == "GEMINI.md"),
        "{:?}",
        gem.files
    );
    let req = gem.request.as_deref().unwrap_or("");
    assert!(!req.contains("Please continue") && !req.is_empty(), "{req}");
    assert!(find("test_conversation_gemini.legacy.json")
        .request
        .is_some());
}

// ---------------------------------------------------------------------------------------------
// The task and what remains

fn said(text: &str) -> Value {
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

// ---------------------------------------------------------------------------------------------
// OpenCode (the plugin's session record: OpenCode's bus events, and its own `chat.message`)

fn oc_part(part: Value) -> Value {
    json!({"type": "message.part.updated", "properties": {"part": part}})
}

fn oc_tool(id: &str, tool: &str, input: Value, status: &str, metadata: Value) -> Value {
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

// ---------------------------------------------------------------------------------------------
// The record a cold reader gets

#[test]
fn a_remark_keeps_the_task_it_answers_and_becomes_a_follow_up() {
    let obs = read(
        "s.jsonl",
        &[
            prompt("Add a retry with backoff to the upload client in src/upload.rs"),
            said("Here is the plan: phase 1 the retry loop, phase 2 the backoff. Shall I go on?"),
            prompt("go ahead with phase 1"),
            said("Phase 1 is in."),
            prompt("yes but you still did not add the test, so why?"),
            prompt("continue"),
        ],
    );
    assert_eq!(
        obs.request.as_deref(),
        Some("Add a retry with backoff to the upload client in src/upload.rs")
    );
    assert_eq!(
        obs.follow_ups,
        [
            "go ahead with phase 1",
            "yes but you still did not add the test, so why?"
        ]
    );
    // A new task starts afresh.
    let obs = read(
        "s.jsonl",
        &[
            prompt("Add a retry to the upload client"),
            prompt("fix it up"),
            prompt("Now write the release notes for version 2.1 in CHANGELOG.md"),
        ],
    );
    assert_eq!(
        obs.request.as_deref(),
        Some("Now write the release notes for version 2.1 in CHANGELOG.md")
    );
    assert!(obs.follow_ups.is_empty());
    let v = serde_json::to_value(&obs).unwrap();
    assert!(v.get("follow_ups").is_none(), "{v}");
}

#[test]
fn files_read_again_or_before_an_edit_are_worked_from_and_shell_changes_count() {
    let read_call = |id: &str, path: &str| call(id, "Read", json!({"file_path": path}));
    let mut lines = vec![prompt("Port the config loader to the new schema")];
    for (i, p) in ["src/schema.rs", "src/schema.rs", "README.md", "src/old.rs"]
        .iter()
        .enumerate()
    {
        lines.push(read_call(&format!("r{i}"), &format!("{ROOT}/{p}")));
        lines.push(result(&format!("r{i}"), "contents", false));
    }
    // Read just before an edit of another file.
    lines.push(call(
        "e1",
        "Edit",
        json!({"file_path": format!("{ROOT}/src/config.rs")}),
    ));
    lines.push(result("e1", "ok", false));
    lines.extend(bash(
        "b1",
        "sed -i 's/v1/v2/' src/version.rs && cargo add toml",
        0,
    ));
    lines.extend(bash("b2", "mv src/never.rs src/gone.rs", 1));
    // A compaction after it all: no read is in the current context window, so only the rules
    // above make a file worked from (the window's own rule is tested below).
    lines.push(compaction_summary());
    let obs = read("s.jsonl", &lines);
    assert_eq!(obs.files, ["Cargo.toml", "src/version.rs", "src/config.rs"]);
    assert_eq!(obs.worked_from, ["src/old.rs", "src/schema.rs"]);
    // Neither a read nor a file a command named is a step of loop detection.
    assert!(obs.steps.iter().all(|s| !matches!(
        &s.action,
        crate::transcripts::activity::loops::Action::Files(f) if f.iter().any(|c| c.path.contains("schema") || c.path.contains("version"))
    )));
}

#[test]
fn windows_paths_and_another_machines_folder_are_shown_relative_to_the_session() {
    let mut edit = call(
        "w1",
        "Write",
        json!({"file_path": "D:\\oh-my-posh\\website\\docs\\install.md"}),
    );
    edit["cwd"] = json!("D:\\oh-my-posh");
    let mut other = call(
        "w2",
        "Edit",
        json!({"file_path": "/Users/a/proj/src/theme.go"}),
    );
    other["cwd"] = json!("/Users/a/proj");
    let obs = read(
        "s.jsonl",
        &[
            prompt("Document the install steps and fix the theme loader"),
            edit,
            result("w1", "ok", false),
            other,
            result("w2", "ok", false),
        ],
    );
    assert_eq!(obs.files, ["src/theme.go", "website/docs/install.md"]);
}

#[test]
fn the_index_keeps_the_request_and_every_file_from_the_start() {
    use crate::transcripts::activity::index::SessionIndex;
    let (_d, path) = write(
        "s.jsonl",
        &[
            prompt("Split the monolith parser into modules"),
            call(
                "e1",
                "Edit",
                json!({"file_path": format!("{ROOT}/src/lexer.rs")}),
            ),
            result("e1", "ok", false),
        ],
    );
    let mut index = SessionIndex::default();
    let (seen, reads, end) = crate::agents::event_read(&path, None)
        .and_then(|r| r.gained(Some(Path::new(ROOT)), 0, now()))
        .unwrap();
    index.add(&seen, &reads);
    index.offset = end;
    // Later events add only what the transcript gained: a remark and another file.
    let mut more = std::fs::read_to_string(&path).unwrap();
    for l in [
        prompt("ok, go ahead with the parser module too"),
        call(
            "e2",
            "Write",
            json!({"file_path": format!("{ROOT}/src/parser.rs")}),
        ),
        result("e2", "ok", false),
        said("Next steps:\n- move the tests\n- delete the old file"),
    ] {
        more.push_str(&l.to_string());
        more.push('\n');
    }
    std::fs::write(&path, more).unwrap();
    let (seen, reads, end2) = crate::agents::event_read(&path, None)
        .and_then(|r| r.gained(Some(Path::new(ROOT)), index.offset, now()))
        .unwrap();
    assert!(seen.request.is_none(), "the task is in the earlier part");
    index.add(&seen, &reads);
    index.offset = end2;
    assert_eq!(end2, std::fs::metadata(&path).unwrap().len());
    // A tail that saw only the last reply is completed from the index.
    let mut tail = Observed::default();
    index.complete(&mut tail);
    assert_eq!(
        tail.request.as_deref(),
        Some("Split the monolith parser into modules")
    );
    assert_eq!(tail.follow_ups, ["ok, go ahead with the parser module too"]);
    assert_eq!(tail.files, ["src/parser.rs", "src/lexer.rs"]);
    assert_eq!(
        tail.next_step.as_deref(),
        Some("Next steps: move the tests; delete the old file")
    );
}

#[test]
fn a_plan_item_the_agent_talked_past_loses_to_its_newer_statement() {
    let obs = read(
        "s.jsonl",
        &[
            prompt("Make the table parser handle inline tables"),
            call(
                "t",
                "TodoWrite",
                json!({"todos": [{"content": "Split the table reader", "status": "in_progress"}]}),
            ),
            said("The reader is split. Next I will make parse_table recurse into inline tables."),
        ],
    );
    assert_eq!(
        obs.next_step.as_deref(),
        Some("Next I will make parse_table recurse into inline tables.")
    );
    // And the other way round: a plan moved on since the statement.
    let obs = read(
        "s.jsonl",
        &[
            prompt("Make the table parser handle inline tables"),
            said("Next I will split the table reader."),
            call(
                "t",
                "TodoWrite",
                json!({"todos": [{"content": "Split the table reader", "status": "completed"},
                                  {"content": "Recurse into inline tables", "status": "in_progress"}]}),
            ),
        ],
    );
    assert_eq!(obs.next_step.as_deref(), Some("Recurse into inline tables"));
}

#[test]
fn files_a_finished_subagent_reports_changing_are_changed_files() {
    let agent = |id: &str, task: &str, report: &str, status: &str| {
        let mut r = result(id, report, false);
        r["toolUseResult"] = json!({"status": status, "prompt": task, "agentId": "a1b2",
            "content": [{"type": "text", "text": report}], "totalToolUseCount": 9});
        [
            call(
                id,
                "Task",
                json!({"description": "d", "prompt": task, "subagent_type": "general-purpose"}),
            ),
            r,
        ]
    };
    let task = "Drop the old palette.\n**Files to modify:**\n\
        1. `app/views/Login.swift` — old colors\n\
        2. `/home/dev/proj/app/views/Settings.swift`\n\
        3. `app/theme/Palette.swift` — read only";
    let mut lines = vec![prompt("Move the app to the new palette")];
    lines.extend(agent(
        "k1",
        task,
        "Summary of changes: colors replaced in Login and Settings.swift.",
        "completed",
    ));
    // An exploring subagent that changed nothing, and one that did not finish.
    lines.extend(agent(
        "k2",
        "Look at `app/theme/Fonts.swift` and report",
        "Fonts.swift defines three sizes.",
        "completed",
    ));
    lines.extend(agent(
        "k3",
        "Fix `app/views/Home.swift`",
        "Updated Home.swift",
        "failed",
    ));
    let obs = read("sess-cc-1.jsonl", &lines);
    // Newest first, as with edited files; the absolute path is shown relative to the project.
    assert_eq!(
        obs.files,
        vec!["app/views/Settings.swift", "app/views/Login.swift"]
    );
}

#[test]
fn a_search_inside_one_file_reads_it_and_a_folders_search_reads_none() {
    let grep = |id: &str, path: &str| {
        call(
            id,
            "Grep",
            json!({"pattern": "func handleStart", "path": path, "output_mode": "content", "-n": true}),
        )
    };
    let obs = read(
        "s.jsonl",
        &[
            prompt("Re-initialise logging once the hook has parsed its input"),
            grep("g1", &format!("{ROOT}/cmd/cli")),
            result("g1", "cmd/cli/hooks.go", false),
            grep("g2", &format!("{ROOT}/cmd/cli/hooks.go")),
            result("g2", "120:func handleStart(", false),
            // The search comes right before an edit of another file: worked from.
            call(
                "e1",
                "Edit",
                json!({"file_path": format!("{ROOT}/cmd/cli/handlers.go"), "old_string": "a", "new_string": "b"}),
            ),
            result("e1", "ok", false),
        ],
    );
    assert_eq!(obs.files, ["cmd/cli/handlers.go"]);
    assert_eq!(obs.worked_from, ["cmd/cli/hooks.go"]);
}

/// Appends `lines` to the transcript at `path` and adds what they hold to `index`.
fn index_reads(
    index: &mut crate::transcripts::activity::index::SessionIndex,
    path: &Path,
    lines: &[Value],
) {
    let mut text = std::fs::read_to_string(path).unwrap_or_default();
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
    let (seen, reads, end) = crate::agents::event_read(path, None)
        .and_then(|r| r.gained(Some(Path::new(ROOT)), index.offset, now()))
        .unwrap();
    index.add(&seen, &reads);
    index.offset = end;
}

#[test]
fn the_index_drops_a_step_that_a_finished_plan_or_a_new_task_made_stale() {
    let (_d, path) = write("s.jsonl", &[]);
    let mut index = crate::transcripts::activity::index::SessionIndex::default();
    let todos = |first: &str, second: &str| {
        json!({"todos": [{"content": "Track the user's lines per checkpoint", "status": first},
                         {"content": "Write the multi-step integration test", "status": second}]})
    };
    index_reads(
        &mut index,
        &path,
        &[
            prompt("Attribute the lines a user edits between checkpoints to the user"),
            call("t1", "TodoWrite", todos("completed", "in_progress")),
            result("t1", "ok", false),
        ],
    );
    assert_eq!(
        index.next_step.as_deref(),
        Some("Write the multi-step integration test")
    );
    // The plan is written again, all done, in a later read: its item is no longer the step.
    index_reads(
        &mut index,
        &path,
        &[
            call("t2", "TodoWrite", todos("completed", "completed")),
            result("t2", "ok", false),
        ],
    );
    assert_eq!(index.next_step, None);
    // A statement is the step until the user sets a new task; then nothing said before holds.
    index_reads(
        &mut index,
        &path,
        &[said("Next I will log the attribution at every checkpoint.")],
    );
    assert_eq!(
        index.next_step.as_deref(),
        Some("Next I will log the attribution at every checkpoint.")
    );
    index_reads(
        &mut index,
        &path,
        &[prompt(
            "got this review: actualHumanRemoved misses lines the agent added and the user then removed",
        )],
    );
    assert_eq!(index.next_step, None);
    let mut tail = Observed::default();
    index.complete(&mut tail);
    assert_eq!(tail.next_step, None);
    // What the agent says after the new task is the step again.
    index_reads(
        &mut index,
        &path,
        &[said(
            "The fix is in. Remaining:\n- run the tests\n- run the linter",
        )],
    );
    assert_eq!(
        index.next_step.as_deref(),
        Some("The fix is in. Remaining: run the tests; run the linter")
    );
}

// ---------------------------------------------------------------------------------------------
// Qwen Code

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

#[test]
fn the_index_sees_a_read_right_before_an_edit_across_two_events() {
    let (_d, path) = write("s.jsonl", &[]);
    let mut index = crate::transcripts::activity::index::SessionIndex::default();
    // Each hook event reads what the transcript gained: the read's call, then its result with
    // the edit that follows it; and a file read once with a command after it.
    index_reads(
        &mut index,
        &path,
        &[
            prompt("Route the hook logs to the session's own file"),
            call(
                "r0",
                "Read",
                json!({"file_path": format!("{ROOT}/README.md")}),
            ),
            result("r0", "text", false),
        ],
    );
    index_reads(&mut index, &path, &bash("b0", "git status", 0));
    index_reads(
        &mut index,
        &path,
        &[call(
            "r1",
            "Read",
            json!({"file_path": format!("{ROOT}/cmd/logging/logger.go")}),
        )],
    );
    index_reads(
        &mut index,
        &path,
        &[
            result("r1", "package logging", false),
            call(
                "e1",
                "Edit",
                json!({"file_path": format!("{ROOT}/cmd/hooks.go"), "old_string": "a", "new_string": "b"}),
            ),
        ],
    );
    // A compaction after it all: only the read right before the edit is worked from (files
    // read once in the current context window are, too: tested below).
    index_reads(&mut index, &path, &[compaction_summary()]);
    let mut tail = Observed::default();
    index.complete(&mut tail);
    assert_eq!(tail.files, ["cmd/hooks.go"]);
    assert_eq!(tail.worked_from, ["cmd/logging/logger.go"]);
}

#[test]
fn files_read_once_in_the_current_context_window_are_worked_from() {
    let read_call = |id: &str, path: &str| call(id, "Read", json!({"file_path": path}));
    let mut lines = vec![prompt(
        "Find why the hook logs leak into another session's file",
    )];
    // Read once before the compaction: out of view since.
    lines.push(read_call("r0", &format!("{ROOT}/docs/plans/old-design.md")));
    lines.push(result("r0", "design", false));
    lines.push(compaction_summary());
    // After it: a design note, the logger, a file of another repository and a temporary file.
    for (i, p) in [
        format!("{ROOT}/docs/plans/state-machine-v2.md"),
        format!("{ROOT}/cmd/cli/logging/logger.go"),
        "/home/dev/research/other-repo/src/notes.rs".to_string(),
        "/tmp/transcript.jsonl".to_string(),
    ]
    .iter()
    .enumerate()
    {
        lines.push(read_call(&format!("r{}", i + 1), p));
        lines.push(result(&format!("r{}", i + 1), "text", false));
    }
    lines.extend(bash("b1", "go test ./cmd/cli/...", 0));
    let obs = read("s.jsonl", &lines);
    assert_eq!(
        obs.worked_from,
        [
            "cmd/cli/logging/logger.go",
            "docs/plans/state-machine-v2.md"
        ]
    );
}

#[test]
fn the_files_a_failing_build_names_as_where_its_errors_are_are_worked_from() {
    let mut lines = vec![prompt(
        "Count the lines each side wrote and store the share",
    )];
    lines.push(call(
        "e1",
        "Write",
        json!({"file_path": format!("{ROOT}/internal/store/attribution.go"), "content": "package store"}),
    ));
    lines.push(result("e1", "ok", false));
    lines.push(call(
        "b1",
        "Bash",
        json!({"command": "go test ./...", "description": "run"}),
    ));
    lines.push(result(
        "b1",
        "Exit code 1\n# example.com/app/internal/store\n\
         internal/store/attribution.go:137:6: countLines redeclared in this block\n\
         \tinternal/store/common.go:762:6: other declaration of countLines\n\
         /usr/local/go/src/runtime/panic.go:115: panic\n\
         FAIL\texample.com/app/internal/store [build failed]",
        true,
    ));
    // A passing run names no error sites, whatever its output shows.
    lines.extend(bash(
        "b2",
        "grep -n countLines internal/cli/report.go:12",
        0,
    ));
    lines.push(compaction_summary());
    let obs = read("s.jsonl", &lines);
    assert_eq!(obs.files, ["internal/store/attribution.go"]);
    assert!(obs.worked_from.is_empty(), "{:?}", obs.worked_from);
    lines.pop();
    let obs = read("s.jsonl", &lines);
    assert_eq!(obs.worked_from, ["internal/store/common.go"]);
}

#[test]
fn the_index_takes_a_failing_builds_sites_when_its_call_came_in_an_earlier_event() {
    let (_d, path) = write("s.jsonl", &[]);
    let mut index = crate::transcripts::activity::index::SessionIndex::default();
    // The hook before the tool runs reads the call; the one after it, the result.
    index_reads(
        &mut index,
        &path,
        &[
            prompt("Count the lines each side wrote and store the share"),
            call(
                "b1",
                "Bash",
                json!({"command": "go vet ./...", "description": "vet"}),
            ),
        ],
    );
    index_reads(
        &mut index,
        &path,
        &[result(
            "b1",
            "Exit code 1\n# example.com/app/internal/store\n\
             vet: internal/store/common.go:762:6: countLines redeclared",
            true,
        )],
    );
    let mut tail = Observed::default();
    index.complete(&mut tail);
    assert_eq!(tail.worked_from, ["internal/store/common.go"]);
}

#[test]
fn the_index_keeps_the_windows_reads_across_events_and_starts_again_at_a_compaction() {
    let (_d, path) = write("s.jsonl", &[]);
    let mut index = crate::transcripts::activity::index::SessionIndex::default();
    let read_call =
        |id: &str, p: &str| call(id, "Read", json!({"file_path": format!("{ROOT}/{p}")}));
    index_reads(
        &mut index,
        &path,
        &[
            prompt("Store the attribution in the checkpoint's metadata"),
            read_call("r0", "cmd/strategy/old.go"),
            result("r0", "package strategy", false),
        ],
    );
    index_reads(&mut index, &path, &[compaction_summary()]);
    for i in 1..=(MAX_WINDOW_READS + 2) {
        index_reads(
            &mut index,
            &path,
            &[
                read_call(&format!("r{i}"), &format!("cmd/strategy/f{i}.go")),
                result(&format!("r{i}"), "package strategy", false),
            ],
        );
    }
    let mut tail = Observed::default();
    index.complete(&mut tail);
    // The most recent reads since the compaction, bounded; the one before it is out of view.
    assert_eq!(tail.worked_from.len(), MAX_WINDOW_READS);
    assert_eq!(
        tail.worked_from[0],
        format!("cmd/strategy/f{}.go", MAX_WINDOW_READS + 2)
    );
    assert!(!tail
        .worked_from
        .iter()
        .any(|f| f.ends_with("old.go") || f.ends_with("/f1.go")));
}

#[test]
fn the_index_keeps_plan_modes_plan_across_events_until_it_is_done() {
    let (_d, path) = write("s.jsonl", &[]);
    let mut index = crate::transcripts::activity::index::SessionIndex::default();
    let todos = |status: &str| {
        json!({"todos": [{"content": "Step 1: Cache", "status": status},
                         {"content": "Step 2: Invalidate", "status": status}]})
    };
    index_reads(
        &mut index,
        &path,
        &[
            prompt("Make the hooks stop parsing the state file on every event"),
            call("p1", "ExitPlanMode", json!({"plan": PLAN_MODE_PLAN})),
        ],
    );
    // Its result comes with the next event; the plan holds meanwhile and after.
    index_reads(
        &mut index,
        &path,
        &[
            result("p1", "User has approved your plan.", false),
            call("t1", "TodoWrite", todos("in_progress")),
        ],
    );
    index_reads(
        &mut index,
        &path,
        &[said("Step 1 is in. Next I will drop the entry on write.")],
    );
    let kept = index.from_plan_mode.clone().expect("kept across events");
    assert_eq!(kept.title.as_deref(), Some("Cache the parsed front matter"));
    // A tail read that no longer reaches the plan gets it from the index.
    let mut tail = Observed::default();
    index.complete(&mut tail);
    assert_eq!(tail.from_plan_mode, Some(kept));
    assert_eq!(
        tail.next_step.as_deref(),
        Some("Next I will drop the entry on write.")
    );
    // The list written after it, all done: the plan is done.
    index_reads(
        &mut index,
        &path,
        &[call("t2", "TodoWrite", todos("completed"))],
    );
    assert_eq!(index.from_plan_mode, None);
}
