//! Newer evidence replaces older (issue 42): a passing run of a check ends its failure in the
//! record, the give-back and `status`; an automatic checkpoint is written whenever what it would
//! record changed; a compaction no hook announced is noticed from the transcript. Claude Code
//! transcripts and hook payloads in its real shapes, in its hook order.

use serde_json::{json, Value};

use crate::support::Project;

const SESSION: &str = "s-cur";

/// A Claude Code session's transcript, written as it grows.
pub(crate) struct Transcript {
    pub lines: Vec<String>,
    pub path: std::path::PathBuf,
    /// The time of the next line (seconds after 10:00).
    clock: u32,
    /// The context's size, in the usage of the next assistant line.
    pub context: u64,
}

impl Transcript {
    pub fn new(p: &Project) -> Transcript {
        Transcript {
            lines: Vec::new(),
            path: p.home().join(format!("{SESSION}.jsonl")),
            clock: 0,
            context: 40_000,
        }
    }

    /// Time passes before the next line (`secs` seconds).
    pub fn wait(&mut self, secs: u32) {
        self.clock += secs;
    }

    fn stamp(&mut self) -> String {
        self.clock += 1;
        format!(
            "2026-11-28T{:02}:{:02}:{:02}.000Z",
            10 + self.clock / 3600,
            self.clock / 60 % 60,
            self.clock % 60
        )
    }

    fn push(&mut self, mut v: Value) {
        let stamp = self.stamp();
        let o = v.as_object_mut().unwrap();
        for (k, x) in [
            ("isSidechain", json!(false)),
            ("userType", json!("external")),
            ("cwd", json!("/home/dev/app")),
            ("sessionId", json!(SESSION)),
            ("version", json!("2.1.70")),
            ("uuid", json!(format!("u-{}", self.lines.len()))),
            ("timestamp", json!(stamp)),
        ] {
            o.entry(k).or_insert(x);
        }
        self.lines.push(v.to_string());
        std::fs::write(&self.path, self.lines.join("\n") + "\n").unwrap();
    }

    pub fn user(&mut self, text: &str) {
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}));
    }

    fn assistant(&mut self, content: Value) {
        let usage = json!({"input_tokens": 6, "cache_creation_input_tokens": 500,
                           "cache_read_input_tokens": self.context - 506, "output_tokens": 40});
        self.context += 200;
        let id = format!("msg_{}", self.lines.len());
        self.push(json!({"type": "assistant", "message": {
            "model": "claude-sonnet-4-6", "id": id, "type": "message", "role": "assistant",
            "content": content, "stop_reason": null, "usage": usage}}));
    }

    pub fn said(&mut self, text: &str) {
        self.assistant(json!([{"type": "text", "text": text}]));
    }

    /// A tool call (its result comes with [`Transcript::result`], after the call's hook).
    pub fn call(&mut self, id: &str, tool: &str, input: Value) {
        self.assistant(json!([{"type": "tool_use", "id": id, "name": tool, "input": input}]));
    }

    pub fn result(&mut self, id: &str, failed: bool, content: &str) {
        self.push(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": id, "type": "tool_result", "content": content, "is_error": failed}]}}),
        );
    }

    /// Claude Code's record of a compaction: the boundary, then the summary as a user line.
    pub fn compaction(&mut self, summary: &str) {
        let pre = self.context;
        self.push(
            json!({"type": "system", "subtype": "compact_boundary", "parentUuid": null,
            "content": "Conversation compacted", "level": "info", "isMeta": false,
            "compactMetadata": {"trigger": "auto", "preTokens": pre}}),
        );
        self.push(json!({"type": "user", "isCompactSummary": true,
            "isVisibleInTranscriptOnly": true,
            "message": {"role": "user", "content": summary}}));
        self.context = 22_000;
    }
}

/// What one hook printed: its `additionalContext` (or the plain text), None for nothing.
pub(crate) fn hook(p: &Project, t: &Transcript, event: &str, extra: Value) -> Option<String> {
    let mut payload = json!({"session_id": SESSION, "transcript_path": t.path,
                             "cwd": p.root(), "hook_event_name": event});
    payload
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{payload}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{payload}");
    let text = String::from_utf8(out.stdout).unwrap();
    if text.trim().is_empty() {
        return None;
    }
    Some(match serde_json::from_str::<Value>(text.trim()) {
        Ok(v) => v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        Err(_) => text,
    })
}

/// A `Bash` call with its hooks in Claude Code's order: the call, its `PostToolUse` (or
/// `PostToolUseFailure`, for a non-zero exit) with the transcript cut before the result,
/// then the result. Returns what the hook gave.
pub(crate) fn bash(
    p: &Project,
    t: &mut Transcript,
    id: &str,
    command: &str,
    exit: i32,
    output: &str,
) -> Option<String> {
    t.call(
        id,
        "Bash",
        json!({"command": command, "description": "run"}),
    );
    let given = if exit == 0 {
        hook(
            p,
            t,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": id,
                   "tool_input": {"command": command, "description": "run"},
                   "tool_response": {"stdout": output, "stderr": "", "interrupted": false}}),
        )
    } else {
        hook(
            p,
            t,
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_use_id": id,
                   "tool_input": {"command": command, "description": "run"},
                   "error": format!("Exit code {exit}\n{output}")}),
        )
    };
    if exit == 0 {
        t.result(id, false, output);
    } else {
        t.result(id, true, &format!("Exit code {exit}\n{output}"));
    }
    given
}

/// An `Edit` of `path` (inside the project) with its hook.
pub(crate) fn edit(p: &Project, t: &mut Transcript, id: &str, path: &str, new: &str) {
    let file = p.root().join(path).display().to_string();
    let input = json!({"file_path": file, "old_string": "x", "new_string": new});
    t.call(id, "Edit", input.clone());
    hook(
        p,
        t,
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_use_id": id, "tool_input": input,
               "tool_response": {"filePath": file, "oldString": "x", "newString": new}}),
    );
    t.result(id, false, "The file has been updated.");
}

const FAILED: &str = "FAILED tests/test_billing.py::test_round_half - assert 0.01 == 0.02\n1 failed, 2 passed in 0.05s";
const PASSED: &str = "...\n3 passed in 0.04s";

const SUMMARY: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n1. Primary Request and Intent:\n   The user asked to fix the half-cent rounding in the billing module so that its three tests pass.\n\n2. Files and Code Sections:\n   - src/billing.py: changed round_half to use Decimal quantize\n   - tests/test_billing.py: the three tests\n\n3. Errors and fixes:\n   - test_round_half failed (0.01 vs 0.02) before the fix\n\n4. Pending Tasks:\n   - Run the tests again\n   - Commit\n\n5. Current Work:\n   Fixed round_half in src/billing.py.\n\n6. Optional Next Step:\n   Run the tests.";

fn events(p: &Project, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(p.path(".ctxkeep/events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == kind)
        .collect()
}

fn checkpoint(p: &Project, id: &str) -> Value {
    serde_json::from_str(&p.read(&format!(".ctxkeep/checkpoints/{id}.json"))).unwrap()
}

/// The session up to its compaction: the request, a failing test run, the fix; PreCompact.
fn failing_then_fixed(p: &mut Project, t: &mut Transcript) {
    p.set_now("2026-11-28T10:00:00Z");
    std::fs::write(&t.path, "").unwrap();
    hook(p, t, "SessionStart", json!({"source": "startup"}));
    t.user("Fix the half-cent rounding in src/billing.py so the three tests in tests/test_billing.py pass");
    hook(
        p,
        t,
        "UserPromptSubmit",
        json!({"prompt": "Fix the half-cent rounding"}),
    );
    bash(p, t, "b1", "python3 -m pytest -q", 1, FAILED);
    t.said("The rounding test fails. Next step: fix round_half in src/billing.py, then run pytest and commit.");
    edit(p, t, "e1", "src/billing.py", "quantize");
    p.set_now("2026-11-28T10:05:00Z");
    hook(
        p,
        t,
        "PreCompact",
        json!({"trigger": "auto", "custom_instructions": null}),
    );
}

#[test]
fn a_passing_run_after_the_compaction_ends_the_failure_in_the_give_back_the_record_and_status() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    failing_then_fixed(&mut p, &mut t);
    let pre = checkpoint(&p, "ckpt-0002");
    assert_eq!(pre["trigger"], "pre-compact");
    assert_eq!(
        pre["observed"]["left_open"]["failing"][0]["command"], "python3 -m pytest -q",
        "{pre}"
    );

    // The compaction, in Claude Code's order: the transcript's boundary and summary, the
    // restored session's start (a note), PostCompact with the summary.
    t.compaction(SUMMARY);
    p.set_now("2026-11-28T10:06:00Z");
    let note = hook(&p, &t, "SessionStart", json!({"source": "compact"})).unwrap();
    assert!(note.contains("the conversation was compacted"), "{note}");
    let ack = note
        .split("(ctxkeep ")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap()
        .to_string();
    hook(
        &p,
        &t,
        "PostCompact",
        json!({"trigger": "auto", "compact_summary": SUMMARY}),
    );

    // The summary paraphrases the request and names the file, the command and the step: kept.
    let audit = &events(&p, "compaction_audit")[0];
    let kept = audit["kept"].as_array().unwrap();
    let missing = audit["missing"].as_array().unwrap();
    assert!(kept.iter().any(|k| k == "src/billing.py"), "{audit}");
    assert!(
        kept.iter().any(|k| k
            .as_str()
            .unwrap()
            .starts_with("Fix the half-cent rounding")),
        "{audit}"
    );
    // It does not name the failing command: missing, until the next run passes.
    assert!(
        missing.iter().any(|k| k == "python3 -m pytest -q"),
        "{audit}"
    );
    assert!(kept.len() > missing.len(), "{audit}");

    // The next tool event is the passing run: what is given back says nothing of the failure.
    p.set_now("2026-11-28T10:07:00Z");
    let back = bash(&p, &mut t, "b2", "python3 -m pytest -q", 0, PASSED).unwrap();
    assert!(back.contains("the compaction summary left out"), "{back}");
    assert!(!back.contains("Failing"), "{back}");
    assert!(!back.contains("exit 1"), "{back}");
    let _ = ack;

    t.said("All three tests pass. Next: commit the change.");
    hook(&p, &t, "Stop", json!({"stop_hook_active": false}));
    p.set_now("2026-11-28T10:08:00Z");
    hook(&p, &t, "SessionEnd", json!({"reason": "other"}));

    let end = checkpoint(&p, "ckpt-0003");
    assert_eq!(end["trigger"], "session-end", "{end}");
    let observed = &end["observed"];
    assert!(observed.get("left_open").is_none(), "{observed}");
    assert!(
        observed["next_step"]
            .as_str()
            .unwrap()
            .contains("commit the change"),
        "{observed}"
    );
    let state = p.state();
    assert!(!state.contains("A check whose last run failed"), "{state}");

    let status = p
        .ctxkeep(&["status", "--session", SESSION])
        .output()
        .unwrap();
    let status = String::from_utf8(status.stdout).unwrap();
    assert!(!status.contains("pytest"), "{status}");
    assert!(status.contains("the summary kept"), "{status}");
}

#[test]
fn pre_compact_is_written_when_only_the_record_changed_and_skipped_when_nothing_did() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    p.set_now("2026-11-28T10:00:00Z");
    std::fs::write(&t.path, "").unwrap();
    hook(&p, &t, "SessionStart", json!({"source": "startup"}));
    t.user("Check that the billing tests pass on the current tree and report");
    hook(
        &p,
        &t,
        "UserPromptSubmit",
        json!({"prompt": "Check the billing tests"}),
    );
    bash(&p, &mut t, "b1", "python3 -m pytest -q", 0, PASSED);
    t.said("All three tests pass.");
    hook(&p, &t, "SessionEnd", json!({"reason": "other"}));
    assert_eq!(checkpoint(&p, "ckpt-0002")["trigger"], "session-end");

    // Resumed: the linter runs and passes. No file, no commit, the same request: only the
    // commands the record lists changed.
    p.set_now("2026-11-28T10:20:00Z");
    hook(&p, &t, "SessionStart", json!({"source": "resume"}));
    bash(&p, &mut t, "b2", "ruff check src", 0, "All checks passed!");
    hook(
        &p,
        &t,
        "PreCompact",
        json!({"trigger": "auto", "custom_instructions": null}),
    );
    let pre = checkpoint(&p, "ckpt-0003");
    assert_eq!(pre["trigger"], "pre-compact");
    let commands = pre["observed"]["commands"].to_string();
    assert!(commands.contains("ruff check src"), "{pre}");

    // Nothing changed since: skipped, naming the checkpoint it would repeat.
    hook(&p, &t, "SessionEnd", json!({"reason": "other"}));
    assert!(!p.path(".ctxkeep/checkpoints/ckpt-0004.json").exists());
    let skipped = events(&p, "checkpoint_skipped");
    assert_eq!(
        skipped.last().unwrap()["why"],
        "nothing new since ckpt-0003",
        "{skipped:?}"
    );
}

#[test]
fn a_compaction_no_hook_announced_is_given_back_once_at_the_next_event_and_not_again_by_a_late_start(
) {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    p.set_now("2026-11-28T10:00:00Z");
    std::fs::write(&t.path, "").unwrap();
    hook(&p, &t, "SessionStart", json!({"source": "startup"}));
    t.user("Fix the half-cent rounding in src/billing.py so the three tests in tests/test_billing.py pass");
    hook(
        &p,
        &t,
        "UserPromptSubmit",
        json!({"prompt": "Fix the half-cent rounding"}),
    );
    bash(&p, &mut t, "b1", "python3 -m pytest -q", 1, FAILED);
    edit(&p, &mut t, "e1", "src/billing.py", "quantize");

    // The transcript shows a compaction; no PreCompact, SessionStart or PostCompact came.
    t.compaction(SUMMARY);
    p.set_now("2026-11-28T10:06:00Z");
    let back = bash(&p, &mut t, "b2", "python3 -m pytest -q", 0, PASSED)
        .expect("the give-back at the next event");
    assert!(back.contains("checkpoint ckpt-0001"), "{back}");
    assert!(back.contains("Resuming from ckpt-0001 (ctxkeep "), "{back}");
    // The old task the summary does not name is given back; the failure that passed is not.
    assert!(back.contains("src/state.rs"), "{back}");
    assert!(!back.contains("pytest"), "{back}");
    assert_eq!(events(&p, "compaction_audit").len(), 1);
    let noticed = events(&p, "compaction");
    assert_eq!(
        noticed.last().unwrap()["trigger"],
        "transcript",
        "{noticed:?}"
    );

    // Once: the next prompt gives nothing of it, nor does the host's start coming late.
    t.user("thanks, commit it");
    let next = hook(
        &p,
        &t,
        "UserPromptSubmit",
        json!({"prompt": "thanks, commit it"}),
    );
    assert!(
        next.as_deref().is_none_or(|n| !n.contains("ckpt-0001")),
        "{next:?}"
    );
    let late = hook(&p, &t, "SessionStart", json!({"source": "compact"}));
    assert_eq!(late, None);
    let starts = events(&p, "session_start");
    assert_eq!(starts.last().unwrap()["late"], true, "{starts:?}");
}

#[test]
fn a_compaction_announced_by_its_start_is_not_given_back_again_by_the_transcript() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    failing_then_fixed(&mut p, &mut t);
    // Claude Code's order: the start before the summary reaches the transcript.
    p.set_now("2026-11-28T10:06:00Z");
    let note = hook(&p, &t, "SessionStart", json!({"source": "compact"})).unwrap();
    assert!(note.contains("the conversation was compacted"), "{note}");
    t.compaction(SUMMARY);
    hook(
        &p,
        &t,
        "PostCompact",
        json!({"trigger": "auto", "compact_summary": SUMMARY}),
    );
    let back = bash(&p, &mut t, "b2", "python3 -m pytest -q", 0, PASSED).unwrap();
    assert_eq!(
        back.matches("the compaction summary left out").count(),
        1,
        "{back}"
    );
    t.user("ok");
    let next = hook(&p, &t, "UserPromptSubmit", json!({"prompt": "ok"}));
    assert_eq!(next, None);
    assert_eq!(events(&p, "compaction_audit").len(), 1);
}

/// The project's pre-commit hook blocking a commit: now the linter (a new line each time), now
/// the type checker (the same error each time).
fn pre_commit_output(take: usize) -> String {
    if take.is_multiple_of(2) {
        format!(
            "ruff.....................................................................Failed\n- hook id: ruff\n- exit code: 1\n\nsrc/billing.py:{}:5: F841 Local variable `rounded_{take}` is assigned to but never used\nFound 1 error.\n\nmypy.....................................................................Passed",
            12 + take
        )
    } else {
        "ruff.....................................................................Passed\nmypy.....................................................................Failed\n- hook id: mypy\n- exit code: 1\n\nsrc/billing.py:31: error: Incompatible return value type (got \"float\", expected \"Decimal\")  [return-value]\nFound 1 error in 1 file (checked 4 source files)".to_string()
    }
}

#[test]
fn a_commit_the_pre_commit_hook_blocks_again_and_again_while_one_file_is_edited_is_a_loop() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    p.set_now("2026-11-28T10:00:00Z");
    std::fs::write(&t.path, "").unwrap();
    hook(&p, &t, "SessionStart", json!({"source": "startup"}));
    t.user("Commit the rounding fix in src/billing.py");
    hook(
        &p,
        &t,
        "UserPromptSubmit",
        json!({"prompt": "Commit the rounding fix"}),
    );
    let mut warnings = Vec::new();
    for take in 0..6 {
        // Reading around, the agent's words, an edit of the same file, the commit again.
        for n in 0..6 {
            let id = format!("r{take}-{n}");
            let file = format!("/home/dev/app/src/module_{n}.py");
            t.call(&id, "Read", json!({"file_path": file}));
            t.result(&id, false, "     1\timport decimal\n     2\t");
            t.said("Looking at how the module uses the rounding helper.");
        }
        edit(
            &p,
            &mut t,
            &format!("e{take}"),
            "src/billing.py",
            &format!("v{take}"),
        );
        t.said("Fixed that; committing again.");
        let given = bash(
            &p,
            &mut t,
            &format!("c{take}"),
            &format!(
                "git add src/billing.py && git commit -m \"Fix half-cent rounding (take {take})\""
            ),
            1,
            &pre_commit_output(take),
        );
        warnings.push(given);
    }
    let at: Vec<usize> = warnings
        .iter()
        .enumerate()
        .filter(|(_, w)| w.as_deref().is_some_and(|w| w.contains("stuck in a loop")))
        .map(|(i, _)| i)
        .collect();
    // Caught at the fifth blocked commit, once, within the window a reader would call one loop.
    assert_eq!(at, [4], "{warnings:?}");
    assert!(t.lines.len() <= 250, "{}", t.lines.len());
    let warning = warnings[4].as_deref().unwrap();
    assert!(
        warning.contains(
            "has failed 5 times in a row while you changed `src/billing.py` before each run"
        ),
        "{warning}"
    );
    assert!(
        warning.contains("do not skip the checks (`--no-verify`)"),
        "{warning}"
    );
    // What the hook printed is quoted as data.
    assert!(warning.contains("> the error: exit 1"), "{warning}");

    bash(
        &p,
        &mut t,
        "c6",
        "git commit --no-verify -m \"Fix half-cent rounding\"",
        0,
        "[main 4f2a9c1] Fix half-cent rounding",
    );
    let status = p
        .ctxkeep(&["status", "--session", SESSION])
        .output()
        .unwrap();
    let status = String::from_utf8(status.stdout).unwrap();
    assert!(
        status.contains("failed 5 times while src/billing.py was changed before each"),
        "{status}"
    );
}

#[test]
fn a_loop_whose_check_passed_since_is_no_longer_in_status() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    p.set_now("2026-11-28T10:00:00Z");
    std::fs::write(&t.path, "").unwrap();
    hook(&p, &t, "SessionStart", json!({"source": "startup"}));
    t.user("Make the build pass");
    hook(
        &p,
        &t,
        "UserPromptSubmit",
        json!({"prompt": "Make the build pass"}),
    );
    let error = "error[E0308]: mismatched types\n --> src/lib.rs:10:5";
    let mut told = None;
    for n in 0..3 {
        told = bash(&p, &mut t, &format!("b{n}"), "cargo build", 101, error);
    }
    assert!(told.unwrap_or_default().contains("stuck in a loop"));
    let status = |p: &Project| {
        let out = p
            .ctxkeep(&["status", "--session", SESSION, "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = p
            .ctxkeep(&["status", "--session", SESSION])
            .output()
            .unwrap();
        (v, String::from_utf8(text.stdout).unwrap())
    };
    let (v, text) = status(&p);
    assert_eq!(v["gutter_open"].as_array().unwrap().len(), 1, "{v}");
    assert!(
        text.contains("loop: `cargo build` failed 3 times in a row"),
        "{text}"
    );

    bash(&p, &mut t, "b3", "cargo build", 0, "Finished `dev` profile");
    let (v, text) = status(&p);
    // The loop stays in the record of what was told; it is no longer going on.
    assert_eq!(v["gutter"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["gutter_open"], json!([]), "{v}");
    assert!(!text.contains("loop:"), "{text}");
}
