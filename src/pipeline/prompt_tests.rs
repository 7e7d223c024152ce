//! `handoff::prompt`'s tests: a project with checkpoints written as `ctxkeep checkpoint` writes
//! them (`pipeline::record`, a wing above `handoff`, so the tests live here).

use crate::domain::checkpoint::Checkpoint;
use crate::domain::config::Config;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::handoff::prompt::*;
use crate::handoff::test_project::{fields, initialized};
use crate::pipeline::harness::checkpoint;

const NEXT: &str = "run cargo test parser and fix the blank-line case in src/parse.rs";

/// A project with a checkpoint whose notes and decisions give the budget something to drop.
fn project() -> (tempfile::TempDir, Workspace, StateFile, Checkpoint) {
    let (dir, ws) = initialized();
    let mut f = fields(NEXT);
    f.notes = Some("The lexer keeps its own copy of the line table. ".repeat(20));
    f.decisions = Some(vec![
        "blank lines end a widget: the old format allowed none inside one".into(),
    ]);
    let c = checkpoint(&ws, f);
    let sf = StateFile::load(&ws.state_path).unwrap();
    (dir, ws, sf, c)
}

#[test]
fn a_generous_budget_keeps_every_section() {
    let (_dir, ws, sf, c) = project();
    let config = Config::from_front(&sf.fm);
    let r = render_prompt(&ws, &sf, &c, &config, 100_000).unwrap();
    assert!(r.omitted.is_empty(), "{:?}", r.omitted);
    assert!(r.prompt.contains(NEXT), "{}", r.prompt);
    assert!(
        r.prompt.contains("The lexer keeps its own copy"),
        "{}",
        r.prompt
    );
    assert_eq!(
        r.tokens,
        crate::context::tokens::count(&r.prompt, config.encoding).unwrap()
    );
}

#[test]
fn a_tight_budget_drops_sections_in_order_and_keeps_the_recovered_fields() {
    let (_dir, ws, sf, c) = project();
    let config = Config::from_front(&sf.fm);
    let full = render_prompt(&ws, &sf, &c, &config, 100_000).unwrap();
    let r = render_prompt(&ws, &sf, &c, &config, full.tokens - 1).unwrap();
    assert!(!r.omitted.is_empty());
    assert_eq!(r.omitted[..], DROP_ORDER[..r.omitted.len()]);
    assert!(r.omitted.contains(&"notes"), "{:?}", r.omitted);
    assert!(
        !r.prompt.contains("The lexer keeps its own copy"),
        "{}",
        r.prompt
    );
    assert!(r.prompt.contains(NEXT), "{}", r.prompt);
    assert!(r.tokens < full.tokens);
}

#[test]
fn a_checkpoint_with_empty_fields_is_headed_by_a_warning_naming_them() {
    let (_dir, ws, sf, c) = project();
    assert_eq!(missing_fields_warning(&c), None);
    let mut gap = c.clone();
    gap.next_action = String::new();
    let warning = missing_fields_warning(&gap).expect("a warning");
    assert!(
        warning.contains(&c.id) && warning.contains("next_action"),
        "{warning}"
    );
    let config = Config::from_front(&sf.fm);
    let r = render_prompt(&ws, &sf, &gap, &config, 100_000).unwrap();
    assert!(r.prompt.starts_with(&warning), "{}", r.prompt);
}

#[test]
fn the_hook_prompt_is_cut_to_the_agents_limit() {
    let (_dir, ws, sf, c) = project();
    let whole = prompt_for_hook(&ws, &sf, &c, usize::MAX, None)
        .unwrap()
        .expect("a prompt");
    assert_eq!(
        (whole.checkpoint.as_str(), whole.cut),
        (c.id.as_str(), false)
    );
    assert!(whole.prompt.contains(NEXT));
    let cut = prompt_for_hook(&ws, &sf, &c, 200, None).unwrap().unwrap();
    assert!(cut.cut);
    assert!(cut.prompt.chars().count() <= 200, "{}", cut.prompt);
}

#[test]
fn the_hook_prompt_of_a_hand_edited_checkpoint_says_so_on_top() {
    let (_dir, ws, _sf, c) = project();
    let text = std::fs::read_to_string(&ws.state_path).unwrap();
    std::fs::write(
        &ws.state_path,
        text.replacen(NEXT, "rewrite the parser from scratch", 1),
    )
    .unwrap();
    let sf = StateFile::load(&ws.state_path).unwrap();
    let edited = sf.fm.checkpoint.clone().unwrap();
    assert_eq!(edited.id, c.id);
    let p = prompt_for_hook(&ws, &sf, &edited, usize::MAX, None)
        .unwrap()
        .unwrap();
    assert!(
        p.prompt
            .starts_with(&format!("WARNING: checkpoint {} was changed by hand", c.id)),
        "{}",
        p.prompt
    );
    assert!(p.prompt.contains("rewrite the parser from scratch"));
}
