//! Hooks that run while git rewrites the work tree, and a damaged session record (issue 43):
//! a checkpoint is never lost for either.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::support::*;

const STATE: &str = "project-state.md";

fn pre_compact(p: &Project, session: &str) -> String {
    json!({
        "session_id": session, "transcript_path": p.path("transcript.jsonl"), "cwd": p.root(),
        "permission_mode": "default", "hook_event_name": "PreCompact", "trigger": "auto",
    })
    .to_string()
}

/// Starts a `PreCompact` hook, lets `git_finishes` put things right after a while (as git
/// does when its merge is written), and returns the hook's exit code and stderr.
fn hook_while_git_works(p: &Project, git_finishes: impl FnOnce()) -> (i32, String) {
    let mut child = p
        .ctxkeep_std(&["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(pre_compact(p, "s").as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    git_finishes();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn checkpointed() -> Project {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.commit_all("checkpoint");
    p
}

#[test]
fn a_pre_compact_hook_while_git_has_removed_the_state_file_waits_and_writes_its_checkpoint() {
    let p = checkpointed();
    let text = p.state();
    std::fs::remove_file(p.path(STATE)).unwrap();
    p.write(".git/index.lock", "");
    let (code, err) = hook_while_git_works(&p, || {
        p.write(STATE, &text);
        std::fs::remove_file(p.path(".git/index.lock")).unwrap();
    });
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(p.state().contains("  id: ckpt-0002\n"), "{}", p.state());
}

#[test]
fn a_pre_compact_hook_that_finds_the_state_file_half_written_during_a_merge_waits_for_it() {
    for cut in [0, 40, 400] {
        let p = checkpointed();
        let text = p.state();
        let head = p.head();
        p.write(STATE, &text[..cut]);
        p.write(".git/MERGE_HEAD", format!("{head}\n"));
        let (code, err) = hook_while_git_works(&p, || {
            p.write(STATE, &text);
            std::fs::remove_file(p.path(".git/MERGE_HEAD")).unwrap();
        });
        assert_eq!((code, err.as_str()), (0, ""), "cut at {cut}");
        assert!(p.state().contains("  id: ckpt-0002\n"), "cut at {cut}");
    }
}

#[test]
fn with_git_idle_a_missing_state_file_is_said_at_once() {
    let p = checkpointed();
    std::fs::remove_file(p.path(STATE)).unwrap();
    let out = p.ctxkeep(&["resume", "--peek"]).output().unwrap();
    assert_eq!(out.status.code(), Some(66));
    // That it is said without a wait is `git::tests::read_settled_reads_once_when_git_is_idle…`
    // (read once), not a clock here.
}

#[test]
fn a_damaged_session_record_is_set_aside_and_its_pre_compact_still_checkpoints() {
    for damaged in [
        &b"{\"id\": \"s\", \"win"[..],
        b"\x00\x01\x02 not json",
        b"[]",
    ] {
        let p = checkpointed();
        p.write(".ctxkeep/sessions/s.json", damaged);
        let out = p
            .ctxkeep(&["hook", "claude-code"])
            .write_stdin(pre_compact(&p, "s"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{err}");
        assert!(p.state().contains("  id: ckpt-0002\n"), "{}", p.state());
        assert_eq!(
            std::fs::read(p.path(".ctxkeep/sessions/s.json.bad")).unwrap(),
            damaged
        );
        let log = p.read(".ctxkeep/events.jsonl");
        let errors: Vec<serde_json::Value> = log
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["event"] == "error")
            .collect();
        assert_eq!(errors.len(), 1, "{log}");
        assert_eq!(errors[0]["session"], "s");
        // The session goes on afresh: the next hook is quiet and sets nothing more aside.
        let out = p
            .ctxkeep(&["hook", "claude-code"])
            .write_stdin(pre_compact(&p, "s"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stderr.is_empty());
        assert_eq!(
            p.read(".ctxkeep/events.jsonl").matches("\"error\"").count(),
            1
        );
    }
}
