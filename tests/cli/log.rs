//! `ctxkeep log`: checkpoints and sessions, newest first.

use serde::Deserialize;

use crate::lifecycle::resume;
use crate::support::Project;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Log {
    entries: Vec<Entry>,
    total: usize,
    /// The last compaction audit (tests/cli/summaries.rs checks it).
    last_audit: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Entry {
    kind: String,
    id: String,
    at: String,
    checkpoint: String,
    agent: Option<String>,
    from_agent: Option<String>,
    trigger: Option<String>,
    snapshot: Option<String>,
    next_action: String,
    acknowledged: Option<bool>,
    stuck: Option<bool>,
}

fn log(p: &Project, args: &[&str]) -> Log {
    let mut all = vec!["log"];
    all.extend_from_slice(args);
    let (v, code) = p.json(&all);
    assert_eq!(code, 0, "{v}");
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

fn ids(l: &Log) -> Vec<&str> {
    l.entries.iter().map(|e| e.id.as_str()).collect()
}

#[test]
fn log_lists_checkpoints_and_sessions_newest_first() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    let (_, s1) = resume(&p, &[]);
    p.ctxkeep(&["ack", &s1.nonce]).assert().success();
    p.set_now("2026-01-15T11:00:00Z");
    p.ctxkeep(&["checkpoint", "--next", "open the pull request"])
        .assert()
        .success();
    resume(&p, &["--agent", "codex"]);

    let l = log(&p, &[]);
    assert_eq!(l.total, 4);
    assert_eq!(
        ids(&l),
        ["session-0002", "ckpt-0002", "session-0001", "ckpt-0001"]
    );
    let s2 = &l.entries[0];
    assert_eq!(s2.kind, "session");
    assert_eq!(s2.checkpoint, "ckpt-0002");
    assert_eq!(
        (s2.agent.as_deref(), s2.from_agent.as_deref()),
        (Some("codex"), Some("claude-code"))
    );
    assert_eq!((s2.acknowledged, s2.stuck), (Some(false), Some(false)));
    assert_eq!(l.entries[2].acknowledged, Some(true));
    let c2 = &l.entries[1];
    assert_eq!(c2.kind, "checkpoint");
    assert_eq!(c2.trigger.as_deref(), Some("manual"));
    assert_eq!(c2.next_action, "open the pull request");
    assert_eq!(c2.at, "2026-01-15T11:00:00Z");
    assert_eq!((c2.acknowledged, c2.stuck), (None, None));

    let limited = log(&p, &["--limit", "2"]);
    assert_eq!(ids(&limited), ["session-0002", "ckpt-0002"]);
    assert_eq!(limited.total, 4);

    let out = p
        .ctxkeep(&["log", "-n", "3"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[0],
        "session-0002 2026-01-15 11:00 resumed ckpt-0002 · codex (handoff from claude-code) · not acknowledged"
    );
    assert_eq!(
        lines[1],
        "ckpt-0002    2026-01-15 11:00 manual · claude-code · next: open the pull request"
    );
    assert!(lines[2].ends_with("claude-code · acknowledged"), "{text}");
}

#[test]
fn log_in_a_fresh_clone_reads_the_file_alone() {
    let p = Project::initialized();
    for i in 0..3 {
        p.checkpoint_next(&format!("run step {i}")).success();
    }
    std::fs::remove_dir_all(p.path(".ctxkeep")).unwrap();
    let l = log(&p, &[]);
    assert_eq!(ids(&l), ["ckpt-0003", "ckpt-0002", "ckpt-0001"]);
    assert_eq!(l.entries[0].trigger.as_deref(), Some("manual"));
    assert_eq!(
        l.entries[1].trigger, None,
        "history keeps checkpoints in brief"
    );
    assert!(!p.path(".ctxkeep").exists());

    let empty = Project::initialized();
    empty
        .ctxkeep(&["log"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicates::str::contains("no checkpoints or sessions yet"));
}

#[test]
fn log_n_0_says_how_many_there_are_rather_than_none() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.ctxkeep(&["log", "-n", "0"])
        .assert()
        .success()
        .stdout("")
        .stderr("1 entry; --limit 0 shows none of them\n");
}
