//! `handoff::resume`'s tests: a project with checkpoints written as `ctxkeep checkpoint` writes
//! them (`pipeline::record`, a wing above `handoff`, so the tests live here).

use crate::handoff::resume::*;
use crate::handoff::test_project::{fields, initialized};
use crate::pipeline::harness::checkpoint;

const NEXT: &str = "run cargo test parser and fix the blank-line case in src/parse.rs";

fn peek() -> Options {
    Options {
        peek: true,
        ..Options::default()
    }
}

#[test]
fn without_a_checkpoint_it_says_how_to_write_one() {
    let (_dir, ws) = initialized();
    let err = resume(&ws, &peek(), &ws.out).unwrap_err().to_string();
    assert!(err.contains("no checkpoint yet"), "{err}");
    assert!(err.contains("ctxkeep checkpoint --phase"), "{err}");
}

#[test]
fn a_peek_renders_the_checkpoint_and_opens_no_session() {
    let (_dir, ws) = initialized();
    let written = checkpoint(&ws, fields(NEXT));
    let report = resume(&ws, &peek(), &ws.out).unwrap();
    assert_eq!(report.checkpoint.id, written.id);
    assert!(report.prompt.contains(NEXT), "{}", report.prompt);
    assert!(report.tokens > 0);
    assert_eq!((report.nonce, report.session.is_none()), (None, true));
    assert!(!ws.chain_path().exists());
}

#[test]
fn a_resume_opens_the_next_session_with_its_nonce_in_the_prompt() {
    let (_dir, ws) = initialized();
    checkpoint(&ws, fields(NEXT));
    let first = resume(&ws, &Options::default(), &ws.out).unwrap();
    let nonce = first.nonce.clone().expect("a nonce");
    assert!(ws.chain_path().is_file());
    assert!(first.prompt.contains(&nonce), "{}", first.prompt);
    let second = resume(&ws, &Options::default(), &ws.out).unwrap();
    let number = |r: &ResumeReport| r.session.as_ref().map(|s| s.number);
    assert_eq!(number(&second), number(&first).map(|n| n + 1));
    assert_ne!(second.nonce, first.nonce);
}

#[test]
fn a_checkpoint_changed_by_hand_is_refused_unless_forced() {
    let (_dir, ws) = initialized();
    let written = checkpoint(&ws, fields(NEXT));
    let text = std::fs::read_to_string(&ws.state_path).unwrap();
    let edited = text.replacen(NEXT, "rewrite the parser from scratch", 1);
    assert_ne!(edited, text);
    std::fs::write(&ws.state_path, edited).unwrap();
    let err = resume(&ws, &peek(), &ws.out).unwrap_err().to_string();
    assert!(
        err.contains(&written.id) && err.contains("digest mismatch"),
        "{err}"
    );
    let forced = Options {
        force: true,
        ..peek()
    };
    assert!(resume(&ws, &forced, &ws.out).is_ok());
}

#[test]
fn an_explicit_budget_the_recovered_fields_overflow_is_refused() {
    let (_dir, ws) = initialized();
    checkpoint(&ws, fields(NEXT));
    let tight = Options {
        max_tokens: Some(5),
        ..peek()
    };
    let err = resume(&ws, &tight, &ws.out).unwrap_err().to_string();
    assert!(err.contains("more than the budget of 5"), "{err}");
}

#[test]
fn a_session_without_a_line_of_work_is_named_in_the_error() {
    let (_dir, ws) = initialized();
    checkpoint(&ws, fields(NEXT));
    let other = Options {
        session: Some("s-elsewhere".into()),
        ..peek()
    };
    let err = resume(&ws, &other, &ws.out).unwrap_err().to_string();
    assert!(
        err.contains("no checkpoint of session \"s-elsewhere\""),
        "{err}"
    );
}
