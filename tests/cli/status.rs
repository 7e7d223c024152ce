//! `ctxkeep status`: the gauge of a session.

use serde::Deserialize;

use crate::support::Project;
use crate::track::{track, Fired};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Status {
    session: String,
    tokens: Option<u64>,
    window: u64,
    percent: Option<f64>,
    limit: u64,
    limit_percent: Option<f64>,
    limit_source: String,
    limit_note: Option<String>,
    window_source: String,
    #[serde(default)]
    limit_learned_from: Option<usize>,
    stages_against: String,
    source: Option<String>,
    stage: Option<String>,
    fired: Vec<Fired>,
    handoff_due: bool,
    messages: Option<u64>,
    tracked: bool,
    updated_at: Option<String>,
    last_checkpoint: Option<CheckpointRef>,
    gutter: Vec<serde_json::Value>,
    gutter_open: Vec<serde_json::Value>,
    checkpoint_requests: u32,
    merged: Vec<serde_json::Value>,
    acknowledged: bool,
    last_session: Option<SessionRef>,
    stuck: Option<Stuck>,
    others: Vec<serde_json::Value>,
    /// The last compaction audit (tests/cli/summaries.rs checks it).
    last_audit: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SessionRef {
    number: u64,
    started_at: String,
    checkpoint: String,
    agent: Option<String>,
    from_agent: Option<String>,
    acknowledged: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Stuck {
    session: u64,
    handoffs_without_progress: u32,
    next_action: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckpointRef {
    id: String,
    created_at: String,
}

fn status(p: &Project, args: &[&str]) -> Status {
    let mut all = vec!["status"];
    all.extend_from_slice(args);
    let (v, code) = p.json(&all);
    assert_eq!(code, 0, "{v}");
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

#[test]
fn nothing_tracked_yet_is_said_plainly() {
    let p = Project::initialized();
    let out = p
        .ctxkeep(&["status"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("session default: nothing tracked yet"),
        "{text}"
    );
    assert!(text.contains("last checkpoint: none yet"), "{text}");
    let s = status(&p, &[]);
    assert!(!s.tracked);
    assert_eq!((s.tokens, s.percent, s.window), (None, None, 200_000));
    assert!(s.last_checkpoint.is_none());
}

#[test]
fn shows_gauge_stage_and_last_checkpoint_with_its_age() {
    let mut p = Project::new();
    p.ctxkeep(&["init", "--stages", "50:warn,90:checkpoint"])
        .assert()
        .success();
    p.commit_all("init");
    p.checkpoint(&[]).success();
    track(&p, &["--tokens", "130000", "--session", "s1"]);
    p.set_now("2026-01-15T12:00:00Z");
    let out = p
        .ctxkeep(&["status", "--session", "s1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(
            "session s1: [####################----------] 65 %  130,000 / 200,000 tokens (manual)"
        ),
        "{text}"
    );
    assert!(text.contains("stage: stage-50 (warn)"), "{text}");
    assert!(
        text.contains("last checkpoint: ckpt-0001 (2 h ago)"),
        "{text}"
    );

    let s = status(&p, &["--session", "s1"]);
    assert!(s.tracked);
    assert_eq!((s.tokens, s.percent), (Some(130_000), Some(65.0)));
    assert_eq!(s.stage.as_deref(), Some("stage-50"));
    assert_eq!(s.fired.len(), 1);
    let last = s.last_checkpoint.unwrap();
    assert_eq!(
        (last.id.as_str(), last.created_at.as_str()),
        ("ckpt-0001", "2026-01-15T10:00:00Z")
    );
    // Another session is untouched by s1.
    assert!(!status(&p, &["--session", "default"]).tracked);
}

#[test]
fn a_due_handoff_is_shown() {
    let p = Project::initialized();
    track(&p, &["--tokens", "199000"]);
    let out = p
        .ctxkeep(&["status"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("handoff due"), "{text}");
    assert!(status(&p, &[]).handoff_due);
}

#[test]
fn status_needs_an_initialized_project() {
    let p = Project::new();
    p.ctxkeep(&["status"]).assert().code(66);
}

#[test]
fn the_last_resume_and_its_acknowledgement_are_shown() {
    let p = Project::initialized();
    let s = status(&p, &[]);
    assert!(!s.acknowledged && s.last_session.is_none() && s.stuck.is_none());
    p.checkpoint(&[]).success();
    let (v, _) = p.json(&["resume", "--agent", "codex"]);
    let s = status(&p, &[]);
    let last = s.last_session.expect("a session after resume");
    assert_eq!((last.number, last.checkpoint.as_str()), (1, "ckpt-0001"));
    assert_eq!(last.from_agent.as_deref(), Some("claude-code"));
    assert!(!s.acknowledged && !last.acknowledged);
    p.ctxkeep(&["status"])
        .assert()
        .stdout(predicates::str::contains(
            "last resume: session 1 from ckpt-0001 (0 s ago), not confirmed yet",
        ));
    p.ctxkeep(&["ack", v["nonce"].as_str().unwrap()])
        .assert()
        .success();
    assert!(status(&p, &[]).acknowledged);
}

#[test]
fn without_a_session_status_shows_the_one_most_recently_tracked_and_the_other_live_ones() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    for (now, id, tokens) in [
        ("2026-01-15T07:00:00Z", "old-1", "50000"),
        ("2026-01-15T09:00:00Z", "live-1", "120000"),
        ("2026-01-15T09:30:00Z", "new-1", "80000"),
    ] {
        p.set_now(now);
        track(&p, &["--session", id, "--tokens", tokens]);
    }
    p.set_now("2026-01-15T09:40:00Z");
    let (v, code) = p.json(&["status"]);
    assert_eq!(code, 0);
    let st: Status = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(
        (st.session.as_str(), st.tokens),
        ("new-1", Some(80_000)),
        "{v}"
    );
    let others: Vec<&str> = st
        .others
        .iter()
        .map(|o| o["session"].as_str().unwrap())
        .collect();
    assert_eq!(others, ["live-1"], "old-1 was last tracked 2 h 40 min ago");
    let text = p.ctxkeep(&["status"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with("session new-1: "), "{text}");
    assert!(text.contains("also live: session live-1: "), "{text}");
    assert!(!text.contains("nothing tracked yet"), "{text}");

    // A session named is shown alone.
    let (v, _) = p.json(&["status", "--session", "old-1"]);
    assert_eq!(v["session"], "old-1");
    assert_eq!(v["others"], serde_json::json!([]));
    // In a project where nothing was tracked, the default session, as before.
    let fresh = Project::initialized();
    let (v, _) = fresh.json(&["status"]);
    assert_eq!(
        (v["session"].as_str(), v["tracked"].as_bool()),
        (Some("default"), Some(false))
    );
}

/// Sessions tracked within one second (the records' time counts whole seconds): plain
/// `status` still shows the one tracked last.
#[test]
fn of_sessions_tracked_in_the_same_second_status_shows_the_last() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    for id in ["s-1", "s-2", "s-3", "s-4", "s-5"] {
        track(&p, &["--session", id, "--tokens", "50000"]);
    }
    for last in ["s-3", "s-1", "s-5", "s-2"] {
        track(&p, &["--session", last, "--tokens", "60000"]);
        let (v, code) = p.json(&["status"]);
        assert_eq!(code, 0);
        assert_eq!(v["session"], last, "{v}");
    }
}

/// A session id holding a right-to-left override (the agent chose it) is shown escaped:
/// raw, it would reorder the rest of the line on the terminal.
#[test]
fn a_direction_override_in_a_session_id_is_shown_escaped() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let id = "ses-\u{202E}gnp.exe";
    track(&p, &["--session", id, "--tokens", "50000"]);
    for args in [&["status"][..], &["status", "--session", id]] {
        let out = p.ctxkeep(args).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.contains('\u{202E}'), "{args:?}: {text}");
        assert!(
            text.starts_with("session ses-\\u{202e}gnp.exe: "),
            "{args:?}: {text}"
        );
    }
    // The JSON keeps the id as it is: a program reads it, not a terminal.
    let (v, _) = p.json(&["status"]);
    assert_eq!(v["session"], id);
}

#[test]
fn status_shows_what_the_pipeline_would_decide_of_the_transcript_now_and_writes_nothing() {
    use crate::transcripts::{claude_assistant, claude_user, jsonl};
    let p = Project::initialized();
    let hook = |lines: &[String]| {
        p.write("transcript.jsonl", jsonl(lines));
        let payload = serde_json::json!({
            "session_id": "s1", "transcript_path": p.path("transcript.jsonl"),
            "cwd": p.root(), "hook_event_name": "UserPromptSubmit", "prompt": "go on",
        });
        p.ctxkeep(&["hook", "claude-code"])
            .write_stdin(payload.to_string())
            .assert()
            .success();
    };
    let mut lines = vec![
        claude_user("write the parser"),
        claude_assistant("m1", 10, 0, 30_000),
    ];
    hook(&lines);
    let recorded = status(&p, &["--session", "s1"]);
    assert_eq!(recorded.tokens, Some(30_010));
    // The session went on with no hook since: status reads the transcript as a hook would,
    // decides the reading (recorded only: no stage fires) and writes nothing.
    lines.push(claude_assistant("m2", 10, 0, 60_000));
    p.write("transcript.jsonl", jsonl(&lines));
    let before = p.snapshot();
    let now = status(&p, &["--session", "s1"]);
    assert_eq!(now.tokens, Some(60_010));
    assert_eq!(now.limit, recorded.limit);
    assert!(now.fired.is_empty());
    assert_eq!(now.updated_at, recorded.updated_at, "the record's own time");
    assert!(
        p.snapshot() == before,
        "{:?}",
        crate::support::diff(&before, &p.snapshot())
    );
    // Once the transcript is gone, the record as it stands.
    std::fs::remove_file(p.path("transcript.jsonl")).unwrap();
    assert_eq!(status(&p, &["--session", "s1"]).tokens, Some(30_010));
}
