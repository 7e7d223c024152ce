//! The record a cold reader gets: the files worked from and changed, the plan, the index across events.

use super::*;

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
pub(super) fn index_reads(
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
