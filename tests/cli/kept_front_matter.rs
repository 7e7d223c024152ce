//! A hook event keeps the parse of `project-state.md`'s front matter for the next event
//! (`.ctxkeep/front-matter.cache`): whatever changes the file between two events (a hand edit,
//! a git merge), the next event acts on the file as it is now; a damaged cache is ignored and
//! rewritten.

use serde_json::json;

use crate::support::Project;
use crate::transcripts::*;

const CACHE: &str = ".ctxkeep/front-matter.cache";

/// A project with a checkpoint and a Claude Code transcript at 130,000 tokens of a
/// 200,000-token window (65 %: under every stage `init` writes).
fn project_at_65_percent() -> Project {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write(
        "transcript.jsonl",
        jsonl(&[
            claude_user("go on"),
            claude_assistant("msg_1", 6, 1_000, 128_994),
        ]),
    );
    p
}

/// `hook claude-code` UserPromptSubmit in `session`: what it prints for the model.
fn prompt(p: &Project, session: &str) -> String {
    let payload = json!({
        "session_id": session,
        "transcript_path": p.path("transcript.jsonl"),
        "cwd": p.root(),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
    });
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// The state file with its first stage moved from 80 % to 60 % (the same length: only the
/// bytes tell the two apart).
fn first_stage_at_60(state: &str) -> String {
    let stage = "  - {at: 80, action: warn}\n";
    assert!(state.contains(stage), "init's stages changed: {state}");
    state.replacen(stage, "  - {at: 60, action: warn}\n", 1)
}

#[test]
fn a_hand_edit_between_two_hook_events_is_read_by_the_next() {
    let p = project_at_65_percent();
    assert_eq!(prompt(&p, "kept-1"), "", "65 % crosses no stage");
    assert!(p.path(CACHE).is_file(), "the first event keeps its parse");

    // Edited by hand, in the same second, to the same size.
    p.write("project-state.md", first_stage_at_60(&p.state()));
    let said = prompt(&p, "kept-1");
    assert!(said.contains("stage stage-60"), "{said}");
}

#[test]
fn a_git_merge_between_two_hook_events_is_read_by_the_next() {
    let p = project_at_65_percent();
    p.commit_all("a checkpoint");
    p.git(&["checkout", "-q", "-b", "earlier-stages"]);
    p.write("project-state.md", first_stage_at_60(&p.state()));
    p.commit_all("warn at 60 %");
    p.git(&["checkout", "-q", "main"]);
    p.write("notes.txt", "meanwhile\n");
    p.commit_all("meanwhile");

    assert_eq!(prompt(&p, "kept-2"), "", "65 % crosses no stage");
    assert!(p.path(CACHE).is_file(), "the first event keeps its parse");
    p.git(&["merge", "-q", "--no-edit", "earlier-stages"]);
    assert!(p.state().contains("{at: 60, action: warn}"), "merged");
    let said = prompt(&p, "kept-2");
    assert!(said.contains("stage stage-60"), "{said}");
}

#[test]
fn a_damaged_cache_is_ignored_and_rewritten() {
    let p = project_at_65_percent();
    assert_eq!(prompt(&p, "kept-3"), "");
    let good = std::fs::read(p.path(CACHE)).unwrap();

    // Garbage, then a cache cut short: each event reads the file itself and keeps it again.
    for damaged in [b"\x00garbage{".to_vec(), good[..good.len() / 2].to_vec()] {
        p.write(CACHE, &damaged);
        assert_eq!(prompt(&p, "kept-3"), "", "the same file, still 65 %");
        assert_eq!(std::fs::read(p.path(CACHE)).unwrap(), good, "rewritten");
    }

    // A damaged cache for an edited file: the edit is read.
    p.write(CACHE, b"\x00garbage{");
    p.write("project-state.md", first_stage_at_60(&p.state()));
    let said = prompt(&p, "kept-3");
    assert!(said.contains("stage stage-60"), "{said}");
}
