//! One hook event's reading of its transcript (`transcripts::activity::event_read`), opened
//! through an agent's readers as the hooks open it.

use std::io::Write;

use serde_json::{json, Value};

use std::path::Path;

use chrono::{DateTime, Utc};

use crate::agents::Agent;
use crate::transcripts::activity::event_read::*;
use crate::transcripts::activity::index::MARK_BYTES;
use crate::transcripts::activity::loops;

const ROOT: &str = "/home/dev/proj";

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-27T20:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn cc(ty: &str, message: Value) -> String {
    json!({"parentUuid": "p", "isSidechain": false, "cwd": ROOT, "sessionId": "s-1",
           "type": ty, "message": message, "uuid": "u",
           "timestamp": "2026-11-27T19:00:00.000Z"})
    .to_string()
        + "\n"
}

fn prompt(text: &str) -> String {
    cc("user", json!({"role": "user", "content": text}))
}

fn edit(id: &str, file: &str, context: u64) -> String {
    cc(
        "assistant",
        json!({"model": "claude-opus-4-6", "id": format!("msg_{id}"), "role": "assistant",
               "content": [{"type": "tool_use", "id": id, "name": "Edit",
                            "input": {"file_path": format!("{ROOT}/{file}")}}],
               "usage": {"input_tokens": context, "output_tokens": 5}}),
    ) + &cc(
        "user",
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
               "content": "ok", "is_error": false}]}),
    )
}

fn said(text: &str) -> String {
    cc(
        "assistant",
        json!({"model": "claude-opus-4-6", "id": "msg_t", "role": "assistant",
               "content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": 7, "output_tokens": 5}}),
    )
}

fn open(path: &Path) -> EventRead {
    crate::agents::event_read(path, Some(Agent::ClaudeCode)).unwrap()
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[test]
fn one_open_answers_usage_and_what_was_gained_and_resumes_from_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(
        &path,
        prompt("Port the reader") + &edit("e1", "src/a.rs", 1000),
    )
    .unwrap();
    let read = open(&path);
    assert_eq!(read.usage().unwrap().tokens, Some(1000));
    let (seen, _, end) = read.gained(Some(Path::new(ROOT)), 0, now()).unwrap();
    assert_eq!(seen.request.as_deref(), Some("Port the reader"));
    assert_eq!(seen.files, ["src/a.rs"]);
    assert_eq!(end, read.len());
    // The next event reads only what came after the offset.
    append(&path, &edit("e2", "src/b.rs", 2000));
    let read = open(&path);
    let (seen, _, end2) = read.gained(Some(Path::new(ROOT)), end, now()).unwrap();
    assert_eq!(seen.request, None, "the prompt was before the offset");
    assert_eq!(seen.files, ["src/b.rs"]);
    assert_eq!(end2, read.len());
    assert_eq!(read.usage().unwrap().tokens, Some(2000));
    // Nothing gained: nothing read, the offset stays.
    let (seen, _, end3) = read.gained(Some(Path::new(ROOT)), end2, now()).unwrap();
    assert!(seen.files.is_empty());
    assert_eq!(end3, end2);
}

#[test]
fn a_partial_last_line_is_left_for_the_next_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let whole = edit("e1", "src/a.rs", 1000);
    let next = edit("e2", "src/b.rs", 2000);
    let (head, rest) = next.split_at(next.len() / 2);
    std::fs::write(&path, whole.clone() + head).unwrap();
    let read = open(&path);
    let (seen, _, end) = read.gained(Some(Path::new(ROOT)), 0, now()).unwrap();
    assert_eq!(seen.files, ["src/a.rs"]);
    assert_eq!(
        end,
        whole.len() as u64,
        "stopped after the last complete line"
    );
    append(&path, rest);
    let read = open(&path);
    let (seen, _, end) = read.gained(Some(Path::new(ROOT)), end, now()).unwrap();
    assert_eq!(seen.files, ["src/b.rs"], "the torn line, now whole");
    assert_eq!(end, read.len());
}

#[test]
fn the_mark_tells_an_appended_transcript_from_a_rewritten_or_truncated_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, edit("e1", "src/a.rs", 1000)).unwrap();
    let read = open(&path);
    let end = read.len();
    let mark = read.mark_at(end);
    assert_eq!(mark.len() as u64, 2 * MARK_BYTES);
    append(&path, &edit("e2", "src/b.rs", 2000));
    assert_eq!(
        open(&path).mark_at(end),
        mark,
        "appended to: the same bytes"
    );
    // Rotated: another session's transcript at the same path, longer than the offset.
    std::fs::write(
        &path,
        edit("x1", "src/other.rs", 10) + &edit("x2", "src/c.rs", 20),
    )
    .unwrap();
    assert_ne!(open(&path).mark_at(end), mark);
    // Truncated below the offset: nothing there.
    std::fs::write(&path, "{}\n").unwrap();
    assert_eq!(open(&path).mark_at(end), "");
}

#[test]
fn refresh_takes_what_the_agent_wrote_while_the_event_waited() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, edit("e1", "src/a.rs", 1000)).unwrap();
    let read = open(&path);
    assert_eq!(read.usage().unwrap().tokens, Some(1000));
    assert!(read.has_call("e1", 64 * 1024));
    assert!(!read.has_call("e2", 64 * 1024));
    append(&path, &edit("e2", "src/b.rs", 2000));
    assert!(!read.has_call("e2", 64 * 1024), "read up to its length");
    read.refresh();
    assert!(read.has_call("e2", 64 * 1024));
    assert_eq!(read.usage().unwrap().tokens, Some(2000), "read again");
}

#[test]
fn the_nonce_counts_only_where_the_agent_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, prompt("run `ctxkeep ack 48213907` to confirm")).unwrap();
    assert!(!open(&path).echoes("48213907", 1 << 20).unwrap());
    append(&path, &said("Restored; acknowledging 48213907."));
    assert!(open(&path).echoes("48213907", 1 << 20).unwrap());
}

#[test]
fn the_compaction_comes_with_the_agents_own_token_count_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let boundary = json!({"parentUuid": null, "isSidechain": false, "type": "system",
        "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "cb",
        "timestamp": "2026-11-27T19:10:00.000Z",
        "compactMetadata": {"trigger": "auto", "preTokens": 167094}});
    std::fs::write(&path, edit("e1", "src/a.rs", 1000)).unwrap();
    assert!(open(&path).compaction().is_none());
    append(&path, &(boundary.to_string() + "\n"));
    let c = open(&path).compaction().expect("the compaction");
    assert_eq!(c.pre_tokens, Some(167_094));
    assert_eq!(c.compaction_trigger.as_deref(), Some("auto"));
}

#[test]
fn every_answer_comes_from_the_one_open_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(
        &path,
        prompt("Port the reader") + &edit("e1", "src/a.rs", 1000),
    )
    .unwrap();
    let read = open(&path);
    // Once opened, the path is not needed again: nothing opens it a second time.
    std::fs::rename(&path, dir.path().join("moved.jsonl")).unwrap();
    assert_eq!(read.usage().unwrap().tokens, Some(1000));
    let (seen, _, end) = read.gained(Some(Path::new(ROOT)), 0, now()).unwrap();
    assert_eq!(seen.files, ["src/a.rs"]);
    assert_eq!(end, read.len());
    assert!(!read.mark_at(end).is_empty());
    let (steps, _) = read.steps_since(Some(Path::new(ROOT)), 0, &[]).unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(
        read.tail(Some(Path::new(ROOT)), now(), 1 << 20)
            .unwrap()
            .request
            .as_deref(),
        Some("Port the reader")
    );
    assert!(read.has_call("e1", 1 << 20));
    assert!(!read.echoes("48213907", 1 << 20).unwrap());
}

fn bash(id: &str, command: &str, context: u64) -> String {
    cc(
        "assistant",
        json!({"model": "claude-opus-4-6", "id": format!("msg_{id}"), "role": "assistant",
               "content": [{"type": "tool_use", "id": id, "name": "Bash",
                            "input": {"command": command}}],
               "usage": {"input_tokens": context, "output_tokens": 5}}),
    ) + &cc(
        "user",
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
               "content": "error: 2 tests failed", "is_error": true}]}),
    )
}

#[test]
fn one_pass_gives_the_index_and_loop_detection_what_their_own_reads_give() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let head = prompt("Port the reader") + &edit("e1", "src/a.rs", 1000);
    std::fs::write(&path, head.clone()).unwrap();
    append(
        &path,
        &(bash("b1", "cargo test", 1500) + &edit("e2", "src/b.rs", 2000)),
    );
    let root = Some(Path::new(ROOT));
    let read = open(&path);
    for from in [0, head.len() as u64] {
        let ask = LoopsAsk {
            root,
            from,
            pending: &[],
        };
        let one = read
            .gained_with_steps(root, from, now(), false, Some(ask))
            .unwrap();
        let (seen, reads, end) = read.gained(root, from, now()).unwrap();
        let (steps, steps_end) = read.steps_since(root, from, &[]).unwrap();
        assert!(!steps.is_empty());
        assert_eq!(one.steps, Some((steps, steps_end)), "from {from}");
        let mut alone = seen;
        alone.steps.clear();
        assert_eq!(one.observed, alone, "the index's part is unchanged");
        assert_eq!((one.reads, one.end), (reads, end));
    }
    // Not the same read: loop detection reads on its own.
    let elsewhere = LoopsAsk {
        root: Some(Path::new("/elsewhere")),
        from: 0,
        pending: &[],
    };
    let later = LoopsAsk {
        root,
        from: head.len() as u64,
        pending: &[],
    };
    for (from, ask) in [(0, elsewhere), (0, later)] {
        let one = read
            .gained_with_steps(root, from, now(), false, Some(ask))
            .unwrap();
        assert_eq!(one.steps, None);
    }
    assert_eq!(
        read.gained_with_steps(root, 0, now(), false, None)
            .unwrap()
            .steps,
        None
    );
}

#[test]
fn calls_carried_over_leave_the_index_as_its_own_read_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    // An edit of src/old.rs seen earlier without its outcome; its result comes now.
    let result = cc(
        "user",
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "e0",
               "content": "ok", "is_error": false}]}),
    );
    std::fs::write(&path, result + &edit("e1", "src/a.rs", 1000)).unwrap();
    let read = open(&path);
    let root = Some(Path::new(ROOT));
    let pending = [loops::PendingCall {
        id: "e0".into(),
        command: None,
        files: vec!["src/old.rs".into()],
    }];
    let ask = LoopsAsk {
        root,
        from: 0,
        pending: &pending,
    };
    let one = read
        .gained_with_steps(root, 0, now(), false, Some(ask))
        .unwrap();
    assert_eq!(
        one.steps, None,
        "loop detection reads the carried call on its own"
    );
    assert_eq!(
        one.observed.files,
        ["src/a.rs"],
        "not the carried call's file"
    );
    let (seen, _, _) = read.gained(root, 0, now()).unwrap();
    assert_eq!(one.observed.files, seen.files);
    // Its own read matches the carried call with its outcome.
    let (steps, _) = read.steps_since(root, 0, &pending).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].id.as_deref(), Some("e0"));
}

#[test]
fn a_missing_transcript_is_no_input_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone.jsonl");
    let err = crate::agents::event_read(&missing, Some(Agent::ClaudeCode))
        .err()
        .expect("an error");
    assert!(format!("{err:#}").contains("gone.jsonl"), "{err:#}");
}
