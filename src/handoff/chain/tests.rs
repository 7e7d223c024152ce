use super::acknowledgement::new_nonce;
use super::*;
use crate::domain::config::Config;

fn record(number: u64, nonce: &str) -> SessionRecord {
    SessionRecord {
        number,
        started_at: "2026-01-15T10:00:00Z".into(),
        checkpoint: "ckpt-0001".into(),
        next_action: "run the tests".into(),
        head: None,
        agent: Some("claude-code".into()),
        from_agent: None,
        source: "resume".into(),
        nonce: nonce.into(),
        handoffs_without_progress: 1,
        stuck: false,
        agent_session: None,
        restores: 0,
        progress: None,
    }
}

#[test]
fn parse_folds_acks_and_skips_torn_and_foreign_lines() {
    let mut text = String::new();
    for n in 1..=2 {
        text.push_str(&serde_json::to_string(&Line::Session(record(n, "abc"))).unwrap());
        text.push('\n');
    }
    text.push_str("{\"kind\":\"ack\",\"number\":2,\"at\":\"t\",\"via\":\"command\"}\n");
    text.push_str("{\"kind\":\"ack\",\"number\":9,\"at\":\"t\",\"via\":\"command\"}\n");
    text.push_str("garbage\n{\"kind\":\"session\",\"num");
    let chain = parse(text.as_bytes());
    assert_eq!(chain.sessions.len(), 2);
    assert!(chain.sessions[0].ack.is_none());
    assert_eq!(chain.sessions[1].ack.as_ref().unwrap().via, "command");
    assert_eq!(chain.skipped, 2, "the orphan ack and the garbage line");
}

#[test]
fn latest_is_pending_reads_the_tail_and_falls_back_to_the_whole_chain() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::in_dir(dir.path());
    assert!(!latest_is_pending(&ws), "no chain yet");
    std::fs::create_dir(&ws.data_dir).unwrap();
    let session = |n: u64, pad: usize| {
        let mut r = record(n, "12345678");
        r.next_action = "x".repeat(pad);
        format!("{}\n", serde_json::to_string(&Line::Session(r)).unwrap())
    };
    let ack =
        |n: u64| format!("{{\"kind\":\"ack\",\"number\":{n},\"at\":\"t\",\"via\":\"command\"}}\n");
    let mut text: String = (1..=100).map(|n| session(n, 300)).collect();
    std::fs::write(ws.chain_path(), &text).unwrap();
    assert!(latest_is_pending(&ws));
    text.push_str(&ack(100));
    std::fs::write(ws.chain_path(), &text).unwrap();
    assert!(!latest_is_pending(&ws));
    // A last session line longer than the tail: the whole chain decides.
    text.push_str(&session(101, 40_000));
    std::fs::write(ws.chain_path(), &text).unwrap();
    assert!(latest_is_pending(&ws));
    text.push_str(&ack(101));
    std::fs::write(ws.chain_path(), &text).unwrap();
    assert!(!latest_is_pending(&ws));
}

#[test]
fn nonces_are_short_distinct_and_unambiguous() {
    let a = new_nonce(1, "sha256:x");
    let b = new_nonce(1, "sha256:x");
    assert_eq!(a.len(), NONCE_LEN);
    assert_ne!(a, b);
    assert!(a.bytes().all(|c| c.is_ascii_digit()));
}

#[test]
fn ack_from_transcript_reads_only_the_tail_and_acknowledges_once() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::in_dir(dir.path());
    let lock = ws.lock().unwrap();
    let config = Config::from_front(&crate::domain::state::FrontMatter::default());
    let checkpoint = Checkpoint {
        id: "ckpt-0001".into(),
        next_action: "run the tests".into(),
        controlling_agent: "claude-code".into(),
        ..Default::default()
    };
    let t = dir.path().join("t.jsonl");
    assert!(
        ack_from_transcript(&ws, &lock, &t).is_err(),
        "missing transcript"
    );
    std::fs::write(&t, "").unwrap();
    assert_eq!(
        ack_from_transcript(&ws, &lock, &t).unwrap(),
        None,
        "no session yet"
    );

    let s = open_session(&ws, &lock, &checkpoint, None, "hook:startup", &config).unwrap();
    let echo = format!(
        "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"ack {}\"}}]}}}}\n",
        s.nonce
    );
    // The echo, then more than the scanned tail of other lines: too far back.
    let filler = "{\"type\":\"user\",\"message\":{\"content\":\"x\"}}\n";
    let mut text = echo.clone();
    while (text.len() as u64) < TRANSCRIPT_SCAN_BYTES + 1024 {
        text.push_str(filler);
    }
    std::fs::write(&t, &text).unwrap();
    assert_eq!(ack_from_transcript(&ws, &lock, &t).unwrap(), None);

    text.push_str(&echo);
    std::fs::write(&t, &text).unwrap();
    let acked = ack_from_transcript(&ws, &lock, &t).unwrap().expect("found");
    assert_eq!(acked.record.number, 1);
    assert_eq!(acked.ack.unwrap().via, "transcript");
    assert_eq!(
        ack_from_transcript(&ws, &lock, &t).unwrap(),
        None,
        "only once"
    );
    let chain = read(&ws).unwrap();
    assert!(chain.last().unwrap().ack.is_some());
    assert_eq!(chain.last().unwrap().record.source, "hook:startup");
}

#[test]
fn agent_names_are_validated() {
    assert!(validate_agent(" ").is_err());
    assert!(validate_agent("a\u{7}b").is_err());
    assert!(validate_agent(&"x".repeat(200)).is_err());
    assert_eq!(validate_agent(" codex ").unwrap(), "codex");
}
