//! Each recorded fact keeps when it was said (issue 42, "Newer evidence replaces older"): a
//! next step or a failing check said half an hour or more before the checkpoint shows its age
//! in the resume prompt and the post-compaction give-back, and a recent one shows none; plan
//! mode's plan file reaches both. Claude Code transcripts and hook payloads in its real shapes,
//! in its hook order.

use serde_json::{json, Value};

use crate::currency::{bash, edit, hook, Transcript};
use crate::support::Project;

const TASK: &str =
    "Fix the half-cent rounding in src/billing.py so the three tests in tests/test_billing.py pass";
const FAILED: &str = "FAILED tests/test_billing.py::test_round_half - assert 0.01 == 0.02\n1 failed, 2 passed in 0.05s";
const STEP: &str = "Next step: fix round_half in src/billing.py, then run pytest and commit.";
/// A summary that keeps the request and the file, and leaves out the step and the failure.
const SUMMARY: &str = "This session is being continued from a previous conversation that ran out of context.\n\n1. Primary Request and Intent:\n   The user asked to fix the half-cent rounding in src/billing.py so its three tests pass.\n\n2. Files and Code Sections:\n   - src/billing.py: the rounding code\n";

fn checkpoint(p: &Project, id: &str) -> Value {
    serde_json::from_str(&p.read(&format!(".ctxkeep/checkpoints/{id}.json"))).unwrap()
}

fn peek(p: &Project) -> String {
    let out = p.ctxkeep(&["resume", "--peek"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

/// The request, a failing run and the agent's stated step at 10:00; then `quiet` seconds
/// of edits before `PreCompact` at 10:00 + `quiet` + 5 min.
fn step_then_quiet(p: &mut Project, t: &mut Transcript, quiet: u32) {
    p.set_now("2026-11-28T10:00:00Z");
    std::fs::write(&t.path, "").unwrap();
    hook(p, t, "SessionStart", json!({"source": "startup"}));
    t.user(TASK);
    hook(p, t, "UserPromptSubmit", json!({ "prompt": TASK }));
    bash(p, t, "b1", "python3 -m pytest -q", 1, FAILED);
    t.said(&format!("The rounding test fails. {STEP}"));
    hook(p, t, "Stop", json!({"stop_hook_active": false}));
    t.wait(quiet);
    edit(p, t, "e1", "src/billing.py", "quantize");
    let minutes = (quiet + 300) / 60;
    p.set_now(&format!(
        "2026-11-28T{:02}:{:02}:00Z",
        10 + minutes / 60,
        minutes % 60
    ));
    hook(
        p,
        t,
        "PreCompact",
        json!({"trigger": "auto", "custom_instructions": null}),
    );
}

#[test]
fn an_old_next_step_and_failing_check_show_their_age_in_resume_and_the_give_back() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    // Said at 10:00, the checkpoint at 10:50.
    step_then_quiet(&mut p, &mut t, 45 * 60);
    let pre = checkpoint(&p, "ckpt-0002");
    let observed = &pre["observed"];
    assert_eq!(
        observed["next_step_at"], "2026-11-28T10:00:04Z",
        "{observed}"
    );
    assert_eq!(observed["request_at"], "2026-11-28T10:00:01Z", "{observed}");
    assert_eq!(
        observed["left_open"]["failing"][0]["at"], "2026-11-28T10:00:02Z",
        "{observed}"
    );
    assert_eq!(observed["commands"][0]["at"], "2026-11-28T10:00:02Z");

    let prompt = peek(&p);
    let step_line = prompt
        .lines()
        .find(|l| l.starts_with("> - Next step:"))
        .unwrap_or_else(|| panic!("{prompt}"));
    assert!(step_line.ends_with("(stated 49 min ago)"), "{step_line}");
    let failing = prompt
        .lines()
        .find(|l| l.starts_with("> - A check whose last run failed"))
        .unwrap_or_else(|| panic!("{prompt}"));
    assert!(failing.ends_with("; last failed 49 min ago"), "{failing}");

    // The compaction, in Claude Code's order; the give-back comes with the next event.
    t.compaction(SUMMARY);
    p.set_now("2026-11-28T10:51:00Z");
    hook(&p, &t, "SessionStart", json!({"source": "compact"})).unwrap();
    hook(
        &p,
        &t,
        "PostCompact",
        json!({"trigger": "auto", "compact_summary": SUMMARY}),
    );
    t.user("go on");
    let back = hook(&p, &t, "UserPromptSubmit", json!({"prompt": "go on"})).unwrap();
    assert!(back.contains("the compaction summary left out"), "{back}");
    assert!(back.contains("fix round_half"), "{back}");
    assert!(back.contains("(stated 50 min ago)"), "{back}");
    assert!(
        back.contains("`python3 -m pytest -q` (exit 1; last failed 50 min ago)"),
        "{back}"
    );
}

#[test]
fn a_recent_next_step_and_failing_check_show_no_age() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    // Said at 10:00, the checkpoint at 10:15.
    step_then_quiet(&mut p, &mut t, 10 * 60);
    let prompt = peek(&p);
    assert!(prompt.contains("> - Next step: fix round_half"), "{prompt}");
    assert!(prompt.contains("A check whose last run failed"), "{prompt}");
    assert!(!prompt.contains("(stated"), "{prompt}");
    assert!(!prompt.contains("last failed"), "{prompt}");
    t.compaction(SUMMARY);
    p.set_now("2026-11-28T10:16:00Z");
    hook(&p, &t, "SessionStart", json!({"source": "compact"})).unwrap();
    hook(
        &p,
        &t,
        "PostCompact",
        json!({"trigger": "auto", "compact_summary": SUMMARY}),
    );
    t.user("go on");
    let back = hook(&p, &t, "UserPromptSubmit", json!({"prompt": "go on"})).unwrap();
    assert!(back.contains("fix round_half"), "{back}");
    assert!(
        !back.contains("(stated") && !back.contains("last failed"),
        "{back}"
    );
}

#[test]
fn plan_modes_plan_file_reaches_resume_and_the_give_back() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut t = Transcript::new(&p);
    p.set_now("2026-11-28T10:00:00Z");
    std::fs::write(&t.path, "").unwrap();
    hook(&p, &t, "SessionStart", json!({"source": "startup"}));
    t.user(TASK);
    hook(&p, &t, "UserPromptSubmit", json!({ "prompt": TASK }));
    // Plan mode: the plan written to its file under ~/.claude/plans, then ExitPlanMode.
    let plan_file = p.home().join(".claude/plans/rounding-half-even.md");
    let plan = "# Round half to even\n\n1. Use Decimal quantize in round_half\n2. Run pytest\n";
    let input = json!({"file_path": plan_file, "content": plan});
    t.call("w1", "Write", input.clone());
    hook(
        &p,
        &t,
        "PostToolUse",
        json!({"tool_name": "Write", "tool_use_id": "w1", "tool_input": input,
               "tool_response": {"type": "create", "filePath": plan_file, "content": plan}}),
    );
    t.result(
        "w1",
        false,
        &format!("File created successfully at: {}", plan_file.display()),
    );
    t.call("x1", "ExitPlanMode", json!({ "plan": plan }));
    t.result(
        "x1",
        false,
        "User has approved your plan. You can now start coding.",
    );
    edit(&p, &mut t, "e1", "src/billing.py", "quantize");
    p.set_now("2026-11-28T10:05:00Z");
    hook(
        &p,
        &t,
        "PreCompact",
        json!({"trigger": "auto", "custom_instructions": null}),
    );
    let shown = format!("> - Plan mode's plan file: `{}`", plan_file.display());
    let prompt = peek(&p);
    assert!(prompt.contains(&shown), "{prompt}");

    // The summary does not name the plan file: the give-back does.
    t.compaction(SUMMARY);
    p.set_now("2026-11-28T10:06:00Z");
    hook(&p, &t, "SessionStart", json!({"source": "compact"})).unwrap();
    hook(
        &p,
        &t,
        "PostCompact",
        json!({"trigger": "auto", "compact_summary": SUMMARY}),
    );
    t.user("go on");
    let back = hook(&p, &t, "UserPromptSubmit", json!({"prompt": "go on"})).unwrap();
    assert!(
        back.contains(&format!("Plan mode's plan file: {}", plan_file.display())),
        "{back}"
    );
}
