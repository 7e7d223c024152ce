use predicates::prelude::*;

use crate::support::Project;

#[test]
fn resume_states_what_changed_since() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write("later.rs", "x");
    p.write("README.md", "changed");
    p.git(&["add", "README.md"]);
    p.git(&["commit", "-qm", "later"]);
    let out = p
        .ctxkeep(&["resume"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let prompt = String::from_utf8(out).unwrap();
    assert!(prompt.contains("HEAD moved by 1 commit(s)"), "{prompt}");
    assert!(prompt.contains("later.rs is now untracked"), "{prompt}");
}

#[test]
fn resume_refuses_a_hand_edited_checkpoint_unless_forced() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let s = p.state().replace(
        "  phase: \"implementing the parser\"",
        "  phase: \"something else\"",
    );
    p.write("project-state.md", &s);
    p.ctxkeep(&["resume"]).assert().code(65).stderr(
        predicate::str::contains("changed by hand").and(predicate::str::contains("--force")),
    );
    p.ctxkeep(&["resume", "--force"])
        .assert()
        .success()
        .stdout(predicate::str::contains("something else"));
}

#[test]
fn max_tokens_drops_low_priority_sections_but_never_the_fields() {
    let p = Project::initialized();
    let long_note = "background ".repeat(400);
    p.checkpoint(&["--note", &long_note, "--decision", "short decision"])
        .success();
    let (full, _) = p.json(&["resume", "--max-tokens", "100000"]);
    let (small, code) = p.json(&["resume", "--max-tokens", "200"]);
    assert_eq!(code, 0);
    assert!(full["tokens"].as_u64().unwrap() > 200);
    assert!(small["tokens"].as_u64().unwrap() <= 200, "{small}");
    let prompt = small["prompt"].as_str().unwrap();
    assert!(prompt.contains("run cargo test and fix the failing split test"));
    assert!(!prompt.contains("background background"));
    assert!(small["omitted"]
        .as_array()
        .unwrap()
        .contains(&"notes".into()));
    p.ctxkeep(&["resume", "--max-tokens", "20"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("alone take"));
}

#[test]
fn resume_works_without_dot_ctxkeep_and_logs_an_event() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    std::fs::remove_dir_all(p.path(".ctxkeep")).unwrap();
    p.ctxkeep(&["resume"]).assert().success();
    let events = p.read(".ctxkeep/events.jsonl");
    assert!(
        events.lines().any(|l| l.contains("\"event\":\"resume\"")),
        "{events}"
    );
}

#[test]
fn resume_without_checkpoint_is_66() {
    let p = Project::initialized();
    p.ctxkeep(&["resume"])
        .assert()
        .code(66)
        .stderr(predicate::str::contains("no checkpoint yet"));
}

#[test]
fn peek_prints_the_prompt_and_records_nothing() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let before = p.snapshot();
    let out = p
        .ctxkeep(&["resume", "--peek"])
        .assert()
        .success()
        .get_output()
        .clone();
    let prompt = String::from_utf8(out.stdout).unwrap();
    assert!(prompt.contains("run cargo test and fix the failing split test"));
    assert!(!prompt.contains("(ctxkeep "), "no nonce: {prompt}");
    assert!(
        crate::support::diff(&before, &p.snapshot()).is_empty(),
        "peek wrote something"
    );
    p.ctxkeep(&["verify"])
        .assert()
        .success()
        .stdout(predicate::str::contains("CK801").not());

    // A plain resume is a restore: a session and a nonce to acknowledge.
    let out = p
        .ctxkeep(&["resume"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Resuming from ckpt-0001 (ctxkeep "));
    p.ctxkeep(&["verify"])
        .assert()
        .success()
        .stdout(predicate::str::contains("CK801"));
    p.ctxkeep(&["help", "resume"]).assert().success().stdout(
        predicate::str::contains("--peek").and(predicate::str::contains("opens a session")),
    );
}

#[test]
fn a_checkpoint_with_empty_required_fields_is_flagged_at_the_top_of_the_prompt() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let s = p.state();
    let at = s.find("  next_action: ").unwrap();
    let end = at + s[at..].find('\n').unwrap();
    let mut s = s.clone();
    s.replace_range(at..end, "  next_action: ''");
    p.write("project-state.md", &s);
    let out = p
        .ctxkeep(&["resume", "--peek", "--force"])
        .assert()
        .success()
        .get_output()
        .clone();
    let prompt = String::from_utf8(out.stdout).unwrap();
    assert!(
        prompt.starts_with("WARNING: checkpoint ckpt-0001 has no next_action."),
        "{prompt}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no next_action"));
}
