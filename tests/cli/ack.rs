//! `ctxkeep ack`: the restore acknowledgement, by command and from a transcript.

use predicates::prelude::*;
use serde::Deserialize;

use crate::lifecycle::resume;
use crate::support::Project;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Ack {
    acknowledged: bool,
    already: bool,
    session: Option<u64>,
    checkpoint: Option<String>,
    via: Option<String>,
    at: Option<String>,
}

fn ack(p: &Project, args: &[&str]) -> (Ack, i32) {
    let mut all = vec!["ack"];
    all.extend_from_slice(args);
    let (v, code) = p.json(&all);
    (
        serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}")),
        code,
    )
}

fn acknowledged(p: &Project) -> bool {
    let (st, code) = p.json(&["status"]);
    assert_eq!(code, 0);
    st["acknowledged"]
        .as_bool()
        .expect("status has acknowledged")
}

#[test]
fn the_prompt_asks_for_the_nonce_and_the_right_one_acknowledges() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let (v, s) = resume(&p, &[]);
    let prompt = v["prompt"].as_str().unwrap();
    assert!(
        prompt.contains(&format!(
            "Begin your reply with the line `Resuming from ckpt-0001 (ctxkeep {})`",
            s.nonce
        )),
        "{prompt}"
    );
    assert!(
        !prompt.contains("ctxkeep ack"),
        "no shell call asked for: {prompt}"
    );
    assert!(!acknowledged(&p));

    let wrong = if s.nonce == "00000000" {
        "00000001"
    } else {
        "00000000"
    };
    p.ctxkeep(&["ack", wrong])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!("wrong nonce \"{wrong}\"")));
    assert!(!acknowledged(&p), "a wrong nonce records nothing");

    // Surrounding blanks do not matter.
    let typed = format!("  {} ", s.nonce);
    let (a, code) = ack(&p, &[&typed]);
    assert_eq!(code, 0);
    assert!(a.acknowledged && !a.already);
    assert_eq!(
        (a.session, a.checkpoint.as_deref(), a.via.as_deref()),
        (Some(1), Some("ckpt-0001"), Some("command"))
    );
    assert!(acknowledged(&p));
    let (a, code) = ack(&p, &[&s.nonce]);
    assert_eq!(code, 0);
    assert!(a.already, "acknowledging twice is harmless");
    let lines = p.read(".ctxkeep/chain.jsonl");
    assert_eq!(lines.matches("\"kind\":\"ack\"").count(), 1);
}

#[test]
fn only_the_latest_session_can_be_acknowledged() {
    let p = Project::initialized();
    p.ctxkeep(&["ack", "abc"])
        .assert()
        .code(66)
        .stderr(predicate::str::contains("no resume to acknowledge yet"));
    p.checkpoint(&[]).success();
    let (_, old) = resume(&p, &[]);
    let (_, new) = resume(&p, &[]);
    p.ctxkeep(&["ack", &old.nonce])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "session-0001, which session-0002 has replaced",
        ));
    assert!(
        !acknowledged(&p),
        "a new resume needs its own acknowledgement"
    );
    p.ctxkeep(&["ack", &new.nonce]).assert().success();
    assert!(acknowledged(&p));
    resume(&p, &[]);
    assert!(!acknowledged(&p));
}

#[test]
fn the_nonce_echoed_by_the_agent_in_its_transcript_acknowledges() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let (_, s) = resume(&p, &[]);
    // The prompt injected by a SessionStart hook lands in the transcript as
    // user content: it carries the nonce, but proves nothing.
    let injected = format!(
        r#"{{"type":"user","message":{{"role":"user","content":"<system-reminder>run `ctxkeep ack {}`</system-reminder>"}},"isSidechain":false}}"#,
        s.nonce
    );
    p.write("t.jsonl", format!("{injected}\n"));
    let (a, code) = ack(&p, &["--transcript", "t.jsonl"]);
    assert_eq!(
        code, 0,
        "hooks run it on every prompt: not found is not an error"
    );
    assert!(!a.acknowledged);
    assert_eq!(a.session, Some(1));

    let echoed = format!(
        r#"{{"type":"assistant","isSidechain":false,"message":{{"role":"assistant","content":[{{"type":"text","text":"Restored from ckpt-0001; acknowledging {}."}}]}}}}"#,
        s.nonce
    );
    p.write("t.jsonl", format!("{injected}\n{echoed}\n"));
    let (a, _) = ack(&p, &["--transcript", "t.jsonl"]);
    assert!(a.acknowledged && !a.already);
    assert_eq!(a.via.as_deref(), Some("transcript"));
    assert!(acknowledged(&p));
    let (a, _) = ack(&p, &["--transcript", "t.jsonl"]);
    assert!(a.acknowledged && a.already);

    p.ctxkeep(&["ack", "--transcript", "missing.jsonl"])
        .assert()
        .code(66)
        .stderr(predicate::str::contains(
            "missing.jsonl: no such transcript",
        ));
    // A symlink loop is not "no such transcript": it cannot be resolved.
    std::os::unix::fs::symlink("loop-b.jsonl", p.path("loop-a.jsonl")).unwrap();
    std::os::unix::fs::symlink("loop-a.jsonl", p.path("loop-b.jsonl")).unwrap();
    for args in [
        &["ack", "--transcript", "loop-a.jsonl"][..],
        &["track", "--transcript", "loop-a.jsonl"],
    ] {
        let out = p.ctxkeep(args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(66), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("loop-a.jsonl: a symlink loop") && err.contains("cannot be resolved"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("no such"), "{err}");
    }
    p.ctxkeep(&["ack"]).assert().code(2);
}

#[test]
fn resume_without_a_place_to_record_prints_the_prompt_without_a_nonce() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    std::fs::remove_dir_all(p.path(".ctxkeep")).unwrap();
    p.write(".ctxkeep", "not a folder");
    let out = p.ctxkeep(&["--json", "resume"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["nonce"].is_null() && v["session"].is_null(), "{v}");
    assert!(!v["prompt"].as_str().unwrap().contains("(ctxkeep "));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no restore nonce"));
}

#[test]
fn ack_without_a_nonce_shows_both_forms() {
    let p = Project::initialized();
    p.ctxkeep(&["ack"]).assert().code(2).stderr(
        predicate::str::contains("ctxkeep ack <NONCE>")
            .and(predicate::str::contains("ctxkeep ack --transcript <PATH>")),
    );
}
