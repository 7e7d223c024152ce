//! `set_keys` and `set_managed_block`: ctxkeep's edits of `project-state.md`.
//!
//! Input: the file's text, a NUL byte, then a value (used as a string value of the keys and as
//! the managed block's content). Invariants: no panic; an accepted edit re-parses, keeps the
//! body (for `set_keys`) or everything outside the markers (for `set_managed_block`) byte for
//! byte, and reads back the value written.
#![no_main]

use std::path::Path;

use ctxkeep::domain::state::{StateFile, BEGIN_MARKER, END_MARKER};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fn parse(text: &str) -> Result<StateFile, ctxkeep::system::error::Error> {
    StateFile::parse(Path::new("project-state.md"), text.to_string())
}

/// The body split around the managed block's content: (before, content, after).
fn around_block(body: &str) -> Option<(&str, &str, &str)> {
    let mut pos = 0;
    let mut begin = None;
    for line in body.split_inclusive('\n') {
        let bare = line.trim();
        match begin {
            None if bare == BEGIN_MARKER => begin = Some(pos + line.len()),
            Some(s) if bare == END_MARKER => {
                return Some((&body[..s], &body[s..pos], &body[pos..]))
            }
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
    let (text, value) = input.split_once('\0').unwrap_or((input, "fuzz"));
    let Ok(original) = parse(text) else {
        return;
    };

    // set_keys: string values, plain and nested as in a checkpoint record.
    let mut sf = original.clone();
    let updates = [
        ("model", Some(json!(value))),
        (
            "checkpoint",
            Some(json!({
                "id": "ckpt-0001",
                "created_at": "2026-01-01T00:00:00Z",
                "trigger": "manual",
                "phase": value,
                "decisions": [value, "x"],
                "notes": value,
                "budget": {"tokens": 1, "window": 2, "percent": 50.0},
            })),
        ),
    ];
    let keyed = sf.set_keys(&updates).is_ok().then(|| sf.clone());
    if keyed.is_some() {
        let rendered = sf.render();
        let again = parse(&rendered).expect("a file ctxkeep edited must parse");
        assert_eq!(again.body, original.body, "set_keys changed the body");
        assert_eq!(again.fm.model.as_deref(), Some(value), "model reads back");
        let ckpt = again.fm.checkpoint.as_ref().expect("checkpoint reads back");
        assert_eq!(ckpt.phase, value, "checkpoint.phase reads back");
        assert_eq!(ckpt.notes, value, "checkpoint.notes reads back");
        assert_eq!(
            ckpt.decisions,
            [value, "x"],
            "checkpoint.decisions read back"
        );
        // Every key the user wrote reads back as before.
        for (k, v) in &original.mapping {
            if !matches!(k.as_str(), Some("model" | "checkpoint")) {
                assert_eq!(again.mapping.get(k), Some(v), "user key {k:?} changed");
            }
        }
        // Removing the keys again is also accepted.
        let mut sf2 = again.clone();
        if sf2
            .set_keys(&[("model", None), ("checkpoint", None)])
            .is_ok()
        {
            let again2 = parse(&sf2.render()).expect("removal must parse");
            assert_eq!(again2.body, original.body);
            assert!(again2.fm.model.is_none() && again2.fm.checkpoint.is_none());
        }
    }

    // set_managed_block: nothing outside the markers changes. ctxkeep writes a block only to a
    // file with front matter (`init` writes its keys first), so a body-only file gets its keys
    // first here too: a lone `---` body must not become an opener.
    let base = if original.is_initialized() {
        Some(original.clone())
    } else {
        keyed
    };
    let Some(mut sf) = base else {
        return;
    };
    if sf.set_managed_block(value).is_ok() {
        let rendered = sf.render();
        let again = parse(&rendered).expect("a file ctxkeep edited must parse");
        let (before, _, after) = around_block(&again.body).expect("the block is there");
        match around_block(&original.body) {
            Some((b0, _, a0)) => {
                assert_eq!(before, b0, "prose before the block changed");
                assert_eq!(after, a0, "prose after the block changed");
            }
            None => assert!(
                again.body.starts_with(&original.body),
                "prose before an appended block changed"
            ),
        }
        // Writing the same content again changes nothing (checkpoints are repeated).
        let mut twice = again.clone();
        twice.set_managed_block(value).expect("second write");
        assert_eq!(twice.render(), rendered, "a repeated write is not stable");
    }
});
