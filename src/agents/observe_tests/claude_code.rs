//! Claude Code's transcripts: the plan, files, commands and loops, the request, the window.

use super::*;

/// A main-chain Claude Code line of `ty` with `message`.
pub(super) fn cc(ty: &str, message: Value) -> Value {
    json!({"parentUuid": "p", "isSidechain": false, "userType": "external", "cwd": ROOT,
           "sessionId": "sess-cc-1", "version": "2.1.328", "type": ty, "message": message,
           "uuid": "u", "timestamp": "2026-11-23T19:00:00.000Z"})
}

pub(super) fn prompt(text: &str) -> Value {
    cc("user", json!({"role": "user", "content": text}))
}

pub(super) fn call(id: &str, name: &str, input: Value) -> Value {
    cc(
        "assistant",
        json!({"model": "claude-opus-5-5", "id": format!("msg_{id}"), "role": "assistant",
               "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
               "usage": {"input_tokens": 3, "output_tokens": 5}}),
    )
}

pub(super) fn result(id: &str, content: &str, is_error: bool) -> Value {
    cc(
        "user",
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
               "content": content, "is_error": is_error}]}),
    )
}

/// The user line with the agent's summary that Claude Code writes after compacting.
pub(super) fn compaction_summary() -> Value {
    let mut summary = prompt(
        "This session is being continued from a previous conversation that ran out of context.",
    );
    summary["isCompactSummary"] = json!(true);
    summary
}

pub(super) fn bash(id: &str, cmd: &str, exit: i64) -> [Value; 2] {
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
pub(super) const PLAN_MODE_PLAN: &str = "# Cache the parsed front matter\n\n## Context\n\nEvery hook parses the state file again.\n\n## Step 1: Cache\n\n- Key the cache by the file's digest\n\n## Step 2: Invalidate\n\n- Drop the entry on write\n\n## Verification\n\n1. `cargo test --lib state` passes\n2. `bench/run` shows the hook faster\n";

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
    // Serialized with the field names and status words.
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
            at: Some("2026-11-23T19:00:00Z".into()),
        }]
    );
    assert_eq!(
        serde_json::to_value(&obs.commands[0]).unwrap(),
        json!({"command": cmd, "ok": false, "exit_code": 101, "times": 3, "at": "2026-11-23T19:00:00Z"})
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
        json!({"command": "ls", "ok": true, "exit_code": 0, "at": "2026-11-23T19:00:00Z"})
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
        json!({"command": "sleep 100", "ok": null, "exit_code": null, "at": "2026-11-23T19:00:00Z"})
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
pub(super) fn rendered_resume_prompt() -> String {
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
