//! The session chain: every resume opens a numbered session, `--agent`
//! records a handoff, handoffs without progress are called stuck.

use predicates::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use crate::support::Project;

/// The `session` object of `resume --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct SessionRecord {
    pub number: u64,
    pub started_at: String,
    pub checkpoint: String,
    pub next_action: String,
    pub head: Option<String>,
    pub agent: Option<String>,
    pub from_agent: Option<String>,
    pub source: String,
    pub nonce: String,
    pub handoffs_without_progress: u32,
    pub stuck: bool,
}

/// Adds a top-level config line to the front matter.
pub fn set_config(p: &Project, line: &str) {
    let s = p
        .state()
        .replacen("ctxkeep: 1\n", &format!("ctxkeep: 1\n{line}\n"), 1);
    p.write("project-state.md", s);
}

/// `resume --json` (must succeed): the document and its session.
pub fn resume(p: &Project, extra: &[&str]) -> (Value, SessionRecord) {
    let mut args = vec!["resume"];
    args.extend_from_slice(extra);
    let (v, code) = p.json(&args);
    assert_eq!(code, 0, "{v}");
    let s = serde_json::from_value(v["session"].clone()).unwrap_or_else(|e| panic!("{e}: {v}"));
    (v, s)
}

fn events(p: &Project, kind: &str) -> Vec<Value> {
    p.read(".ctxkeep/events.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == kind)
        .collect()
}

#[test]
fn every_resume_opens_a_numbered_session_in_the_chain() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let head = p.head();
    let (v, first) = resume(&p, &[]);
    let (_, second) = resume(&p, &[]);
    assert_eq!((first.number, second.number), (1, 2));
    assert_eq!(first.checkpoint, "ckpt-0001");
    assert_eq!(first.started_at, crate::support::NOW);
    assert_eq!(first.agent.as_deref(), Some("claude-code"));
    assert_eq!(first.from_agent, None);
    assert_eq!(first.source, "resume");
    assert_eq!(first.head.as_deref(), Some(head.as_str()));
    assert_eq!(v["nonce"], first.nonce.as_str());
    assert_ne!(first.nonce, second.nonce, "each session gets its own nonce");
    let chain = p.read(".ctxkeep/chain.jsonl");
    assert_eq!(chain.lines().count(), 2);
    assert!(chain.contains(&second.nonce));
    assert!(
        !p.path(".ctxkeep/sessions").exists(),
        "the chain is not the live budgets of `track`"
    );
    let logged = events(&p, "resume");
    assert_eq!(logged.len(), 2);
    assert_eq!(logged[1]["session"], 2);
}

#[test]
fn resume_agent_records_a_handoff_from_the_controlling_agent() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let out = p
        .ctxkeep(&["resume", "--agent", "codex"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let prompt = String::from_utf8(out).unwrap();
    assert!(
        prompt.contains("Handoff: codex takes over from claude-code"),
        "{prompt}"
    );
    let (_, again) = resume(&p, &["--agent", "codex"]);
    assert_eq!(again.agent.as_deref(), Some("codex"));
    assert_eq!(again.from_agent, None, "codex already controls the work");
    let (v, back) = resume(&p, &["--agent", "claude-code"]);
    assert_eq!(back.from_agent.as_deref(), Some("codex"));
    assert!(v["prompt"]
        .as_str()
        .unwrap()
        .contains("claude-code takes over from codex"));
    p.ctxkeep(&["resume", "--agent", " "])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--agent"));
}

#[test]
fn three_handoffs_without_progress_are_stuck_until_a_commit() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    for n in 1..=2 {
        let (v, s) = resume(&p, &[]);
        assert!(!s.stuck && s.handoffs_without_progress == n);
        assert!(v["prompt"]
            .as_str()
            .unwrap()
            .starts_with("You are continuing"));
    }
    assert!(p.path(".ctxkeep/events.jsonl").exists());
    assert!(events(&p, "stuck").is_empty());
    let out = p
        .ctxkeep(&["resume"])
        .assert()
        .success()
        .get_output()
        .clone();
    let prompt = String::from_utf8(out.stdout).unwrap();
    assert!(
        prompt.starts_with("WARNING: this is handoff 3 in a row"),
        "{prompt}"
    );
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("looks stuck"));
    let stuck = events(&p, "stuck");
    assert_eq!(stuck.len(), 1);
    assert_eq!(stuck[0]["session"], 3);
    assert_eq!(stuck[0]["refused"], false);
    let (st, _) = p.json(&["status"]);
    assert_eq!(st["stuck"]["handoffs_without_progress"], 3);
    p.ctxkeep(&["status"])
        .assert()
        .stdout(predicate::str::contains("stuck: 3 handoffs in a row"));

    // A new commit is progress: status clears at once, the next resume starts over.
    p.write("src.rs", "fn main() {}\n");
    p.commit_all("progress");
    let (st, _) = p.json(&["status"]);
    assert!(st["stuck"].is_null(), "{st}");
    let (v, s) = resume(&p, &[]);
    assert!(!s.stuck && s.handoffs_without_progress == 1);
    assert!(!v["prompt"].as_str().unwrap().contains("WARNING"));
}

#[test]
fn a_new_next_action_clears_stuck() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    for _ in 0..3 {
        resume(&p, &[]);
    }
    p.ctxkeep(&[
        "checkpoint",
        "--next",
        "bisect the failing test with git bisect",
    ])
    .assert()
    .success();
    let (st, _) = p.json(&["status"]);
    assert!(st["stuck"].is_null(), "{st}");
    let (_, s) = resume(&p, &[]);
    assert!(!s.stuck);
    assert_eq!(s.handoffs_without_progress, 1);
    assert_eq!(s.next_action, "bisect the failing test with git bisect");
}

#[test]
fn max_handoffs_without_progress_makes_resume_refuse() {
    let p = Project::initialized();
    set_config(&p, "max_handoffs_without_progress: 2");
    p.checkpoint(&[]).success();
    resume(&p, &[]);
    resume(&p, &[]);
    let chain_before = p.read(".ctxkeep/chain.jsonl");
    p.ctxkeep(&["resume"]).assert().code(1).stdout("").stderr(
        predicate::str::contains("refusing to resume")
            .and(predicate::str::contains(
                "max_handoffs_without_progress (2)",
            ))
            .and(predicate::str::contains("handoff 3 in a row")),
    );
    assert_eq!(
        p.read(".ctxkeep/chain.jsonl"),
        chain_before,
        "no session opened"
    );
    let stuck = events(&p, "stuck");
    assert_eq!(stuck.last().unwrap()["refused"], true);
    let (v, code) = p.json(&["resume"]);
    assert_eq!(
        (code, &v["error"]["code"]),
        (1, &Value::from("check_failed"))
    );
    // Unset (the default), it only warns.
    let p2 = Project::initialized();
    p2.checkpoint(&[]).success();
    for _ in 0..4 {
        resume(&p2, &[]);
    }
}

#[test]
fn verify_warns_about_an_unacknowledged_resume_but_not_in_a_fresh_clone() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.commit_all("checkpoint");
    let (v, _) = resume(&p, &[]);
    let (ver, code) = p.json(&["verify"]);
    assert_eq!(code, 0, "a warning, not an error: {ver}");
    let ck801 = |ver: &Value| -> Vec<String> {
        ver["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["code"] == "CK801")
            .map(|w| w["message"].as_str().unwrap().to_string())
            .collect()
    };
    let found = ck801(&ver);
    assert_eq!(found.len(), 1, "{ver}");
    assert!(found[0].contains("session-0001"), "{ver}");
    p.ctxkeep(&["ack", v["nonce"].as_str().unwrap()])
        .assert()
        .success();
    let (ver, _) = p.json(&["verify"]);
    assert!(ck801(&ver).is_empty(), "{ver}");

    // A fresh clone has no .ctxkeep/: no warning, and verify creates none.
    resume(&p, &[]);
    let clone = Project::bare();
    let src = p.root().to_str().unwrap().to_string();
    clone.git(&["clone", "-q", &src, "."]);
    let (ver, code) = clone.json(&["verify"]);
    assert_eq!(code, 0, "{ver}");
    assert!(ck801(&ver).is_empty(), "{ver}");
    assert!(!clone.path(".ctxkeep").exists());
}
