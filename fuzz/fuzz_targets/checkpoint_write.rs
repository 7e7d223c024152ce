//! The one rule for every writer of `project-state.md`: what is accepted can be read back.
//!
//! Input: a state file's text, then the checkpoint's fields, each after a `\x1f` (unit
//! separator): phase, active_task, controlling_agent, next_action, notes, then one decision per
//! further part. The fields may hold anything else (NUL, ESC, CR, conflict-marker lines, ctxkeep's
//! markers). The steps are `checkpoint`'s: `limits::check_fields`, `record::place` (fit the front
//! matter, render and escape the block, seal), `limits::check_text` (what `save` checks).
//! Invariants: no panic; whatever all three accept, the reader (`StateFile::from_text`) reads,
//! with the seal intact, the block not taken for a hand edit, every field as given, and the
//! prose outside the markers byte for byte.
#![no_main]

use std::path::Path;

use ctxkeep::domain::checkpoint::{Checkpoint, Fields};
use ctxkeep::pipeline::record::place;
use ctxkeep::domain::state::{self, limits, Seal, StateFile, BEGIN_MARKER, END_MARKER};
use ctxkeep::domain::templates::Templates;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

/// The body around the marked block's content: (before, after), markers
/// included; None without a block.
fn around_block(body: &str) -> Option<(&str, &str)> {
    let mut pos = 0;
    let mut begin = None;
    for line in body.split_inclusive('\n') {
        let bare = line.trim();
        match begin {
            None if bare == BEGIN_MARKER => begin = Some(pos + line.len()),
            Some(s) if bare == END_MARKER => return Some((&body[..s], &body[pos..])),
            _ => {}
        }
        pos += line.len();
    }
    None
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("project-state.md");
    let mut parts = input.split('\u{1f}');
    let text = parts.next().unwrap_or_default();
    // Only a file the reader takes: that is what a writer starts from.
    let Ok(mut sf) = StateFile::from_text(path, text.to_string()) else {
        return;
    };
    if !sf.is_initialized() && sf.set_keys(&[("ctxkeep", Some(json!(1)))]).is_err() {
        return;
    }
    let mut next = || parts.next().map(str::to_string);
    let fields = Fields {
        phase: next(),
        active_task: next(),
        controlling_agent: next(),
        next_action: next(),
        notes: next(),
        decisions: None,
        open_questions: None,
        ..Fields::default()
    };
    let decisions: Vec<String> = parts.map(str::to_string).collect();
    let fields = Fields {
        decisions: (!decisions.is_empty()).then_some(decisions),
        ..fields
    };
    if limits::check_fields(path, &fields).is_err() {
        return;
    }
    let body_before = sf.body.clone();
    let mut record = Checkpoint {
        id: "ckpt-0001".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        trigger: "manual".into(),
        phase: fields.phase.clone().unwrap_or_default(),
        active_task: fields.active_task.clone().unwrap_or_default(),
        controlling_agent: fields.controlling_agent.clone().unwrap_or_default(),
        next_action: fields.next_action.clone().unwrap_or_default(),
        decisions: fields.decisions.clone().unwrap_or_default(),
        notes: fields.notes.clone().unwrap_or_default(),
        ..Checkpoint::default()
    };
    let mut history = json!([{"id": "ckpt-0000", "created_at": "2025-12-31T00:00:00Z",
        "phase": record.phase, "next_action": record.next_action}]);
    let templates = Templates::load(Path::new("."), None).expect("the built-in templates load");
    if place(&mut sf, &mut record, &mut history, &templates, &[]).is_err() {
        return;
    }
    let written = sf.render();
    if limits::check_text(path, &written, false).is_err() {
        return;
    }
    let again = StateFile::from_text(path, written.clone())
        .unwrap_or_else(|e| panic!("accepted but not read back: {e}\n{written}"));
    assert_eq!(
        state::seal(&again),
        Some(Seal::Intact),
        "the seal reads back"
    );
    assert!(
        state::edited_block(&again).is_none(),
        "the block reads as ctxkeep's"
    );
    let c = again
        .fm
        .checkpoint
        .as_ref()
        .expect("the checkpoint reads back");
    assert_eq!(c, &record, "every field reads back as written");
    let (before, after) = around_block(&again.body).expect("the block is there");
    match around_block(&body_before) {
        Some(prose) => assert_eq!((before, after), prose, "the prose is kept"),
        None => assert!(again.body.starts_with(&body_before), "the prose is kept"),
    }
    assert!(state::conflicts::regions(&written).is_empty());
});
