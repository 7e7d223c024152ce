use predicates::prelude::*;

use crate::support::Project;

#[test]
fn checkpoint_prints_the_id_and_numbers_monotonically() {
    let p = Project::initialized();
    p.checkpoint(&[]).success().stdout("ckpt-0001\n");
    p.checkpoint_next("write the docs")
        .success()
        .stdout("ckpt-0002\n");
    let s = p.state();
    assert!(s.contains("  id: ckpt-0002\n"));
    assert!(s.contains("history:\n  - id: ckpt-0001\n"));
    assert!(p.path(".ctxkeep/checkpoints/ckpt-0001.json").is_file());
    assert!(p.path(".ctxkeep/checkpoints/ckpt-0002.json").is_file());
}

#[test]
fn fields_carry_over_and_flags_replace() {
    let p = Project::initialized();
    p.checkpoint(&["--question", "q1"]).success();
    let (v, code) = p.json(&["checkpoint", "--next", "write the README section on stages"]);
    assert_eq!(code, 0);
    assert_eq!(v["phase"], "implementing the parser");
    assert_eq!(v["next_action"], "write the README section on stages");
    assert_eq!(v["open_questions"], serde_json::json!(["q1"]));
    assert_eq!(v["trigger"], "manual");
    assert_eq!(v["created_at"], crate::support::NOW);
}

#[test]
fn decisions_reset_when_head_moves_unless_given() {
    let p = Project::initialized();
    p.checkpoint(&["--decision", "d1"]).success();
    let (v, _) = p.json(&["checkpoint"]);
    assert_eq!(
        v["decisions"],
        serde_json::json!(["d1"]),
        "carried while HEAD is the same"
    );
    p.write("a.txt", "x");
    p.commit_all("commit a");
    let (v, _) = p.json(&["checkpoint"]);
    assert_eq!(
        v["decisions"],
        serde_json::json!([]),
        "reset after a commit"
    );
    let (v, _) = p.json(&["checkpoint", "--decision", "d2"]);
    assert_eq!(v["decisions"], serde_json::json!(["d2"]));
}

#[test]
fn git_state_is_captured() {
    let p = Project::initialized();
    p.write("src/new.rs", "fn x() {}\n");
    p.write("README.md", "# changed\n");
    let (v, _) = p.json(&crate::support::MINIMAL_CHECKPOINT);
    assert_eq!(v["git"]["branch"], "main");
    assert_eq!(v["git"]["head"], p.head());
    assert_eq!(
        v["git"]["dirty"],
        serde_json::json!([
            {"path": "README.md", "status": "modified"},
            {"path": "src/new.rs", "status": "untracked"}
        ])
    );
}

#[test]
fn from_yaml_and_json_on_stdin_or_file() {
    let p = Project::initialized();
    p.ctxkeep(&["checkpoint", "--from", "-"])
        .write_stdin("phase: review\nactive_task: read the diff\ncontrolling_agent: bob\nnext_action: approve the PR\ndecisions: [keep it]\n")
        .assert()
        .success();
    assert!(p.state().contains("  phase: review\n"));
    p.write(
        "fields.json",
        r#"{"next_action": "merge the PR", "open_questions": ["who deploys?"]}"#,
    );
    let (v, _) = p.json(&["checkpoint", "--from", "fields.json", "--phase", "merge"]);
    assert_eq!(v["phase"], "merge", "flags win over --from");
    assert_eq!(v["next_action"], "merge the PR");
    assert_eq!(v["controlling_agent"], "bob");
}

#[test]
fn from_with_unknown_or_malformed_fields_is_rejected() {
    let p = Project::initialized();
    let before = p.state();
    p.ctxkeep(&["checkpoint", "--from", "-"])
        .write_stdin("phaze: typo\n")
        .assert()
        .code(65)
        .stderr(predicate::str::contains("<stdin>").and(predicate::str::contains("phaze")));
    p.ctxkeep(&["checkpoint", "--from", "-"])
        .write_stdin("phase: [unclosed\n")
        .assert()
        .code(65)
        .stderr(predicate::str::contains("line"));
    p.ctxkeep(&["checkpoint", "--from", "missing.yaml"])
        .assert()
        .code(66);
    assert_eq!(p.state(), before);
}

#[test]
fn outside_git_the_checkpoint_still_succeeds_with_a_warning() {
    let p = Project::bare();
    p.ctxkeep(&["init"]).assert().success();
    p.checkpoint(&[]).success().stderr(
        predicate::str::contains("git state left out")
            .and(predicate::str::contains("not a git repository")),
    );
    assert!(!p.state().contains("  git:"));
}

#[test]
fn without_git_installed_the_checkpoint_still_succeeds() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.ctxkeep(&["checkpoint"])
        .env("CTXKEEP_GIT", "/nonexistent/git")
        .assert()
        .success()
        .stderr(predicate::str::contains("git is not installed"));
}

#[test]
fn a_checkpoint_with_empty_required_fields_is_refused_and_writes_nothing() {
    let p = Project::initialized();
    let before = p.state();
    p.ctxkeep(&["checkpoint"]).assert().code(1).stderr(
        predicate::str::contains("no phase, active_task, controlling_agent, next_action")
            .and(predicate::str::contains("--phase, --task, --agent, --next"))
            .and(predicate::str::contains("nothing was written")),
    );
    p.ctxkeep(&["checkpoint", "--phase", "x"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "no active_task, controlling_agent, next_action; give --task, --agent, --next",
        ));
    assert_eq!(p.state(), before, "the file is untouched");
    assert!(!p.path(".ctxkeep/checkpoints/ckpt-0001.json").exists());

    // Later checkpoints carry the fields over; clearing one is refused too.
    p.checkpoint(&[]).success();
    p.ctxkeep(&["checkpoint", "--note", "more"])
        .assert()
        .success();
    let before = p.state();
    p.ctxkeep(&["checkpoint", "--next", " "])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no next_action; give --next"));
    assert_eq!(p.state(), before);
}

#[test]
fn not_initialized_is_66() {
    let p = Project::new();
    p.ctxkeep(&["checkpoint"]).assert().code(66).stderr(
        predicate::str::contains("not initialized").and(predicate::str::contains("ctxkeep init")),
    );
}

#[test]
fn retention_prunes_the_archive() {
    let p = Project::initialized();
    let s = p
        .state()
        .replace("ctxkeep: 1\n", "ctxkeep: 1\nretention: {checkpoints: 2}\n");
    p.write("project-state.md", s);
    for _ in 0..4 {
        p.checkpoint(&[]).success();
    }
    let mut names: Vec<String> = std::fs::read_dir(p.path(".ctxkeep/checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["ckpt-0003.json", "ckpt-0004.json"]);
}

#[test]
fn history_keeps_the_last_three() {
    let p = Project::initialized();
    for i in 0..5 {
        p.checkpoint_next(&format!("run step {i}")).success();
    }
    let s = p.state();
    assert!(s.contains("  id: ckpt-0005\n"));
    for (id, present) in [
        ("ckpt-0004", true),
        ("ckpt-0003", true),
        ("ckpt-0002", true),
        ("ckpt-0001", false),
    ] {
        assert_eq!(s.contains(&format!("  - id: {id}\n")), present, "{id}");
    }
}

#[test]
fn a_closer_without_newline_still_parses_after_a_checkpoint() {
    // Found by fuzzing: the block used to be glued to the closer (`---<!--`).
    let p = Project::new();
    p.write("project-state.md", "---\nctxkeep: 1\n---");
    p.checkpoint(&[]).success().stdout("ckpt-0001\n");
    assert!(p.state().contains("\n---\n<!-- ctxkeep:begin -->\n"));
    p.checkpoint(&[]).success().stdout("ckpt-0002\n");
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn a_note_holding_a_marker_line_stays_inside_the_block() {
    // Found by fuzzing: the note's end marker closed the block early and the
    // rest of the block piled up in the prose at every checkpoint.
    let p = Project::initialized();
    let prose_of = |s: &str| {
        let s = &s[s.find("\n---\n").unwrap() + 5..]; // the body
        let end = "<!-- ctxkeep:end -->\n";
        let after = s.rfind(end).map(|i| &s[i + end.len()..]).unwrap_or("");
        let before = &s[..s.find("<!-- ctxkeep:begin -->").unwrap()];
        format!("{before}|{after}")
    };
    let prose = prose_of(&p.state());
    let note = "quoting the file:\n<!-- ctxkeep:end -->\nstill the note";
    p.checkpoint(&["--note", note]).success();
    p.checkpoint(&[]).success();
    let s = p.state();
    assert_eq!(prose_of(&s), prose, "prose changed:\n{s}");
    assert_eq!(s.matches("<!-- ctxkeep:end -->\n").count(), 1, "{s}");
    assert!(s.contains("&lt;!-- ctxkeep:end -->\nstill the note"), "{s}");
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn history_leaves_out_a_checkpoint_the_next_one_only_repeats() {
    let p = Project::initialized();
    p.checkpoint_next("write the lexer").success();
    p.checkpoint_next("write the lexer").success();
    p.checkpoint_next("test the lexer").success();
    let s = p.state();
    assert!(s.contains("  id: ckpt-0003\n"), "{s}");
    assert!(
        s.contains("  - id: ckpt-0002\n"),
        "differs from ckpt-0003: {s}"
    );
    assert!(
        !s.contains("  - id: ckpt-0001\n"),
        "same phase, task, agent, next action and HEAD as ckpt-0002: {s}"
    );
    // A checkpoint by hand is always written, even when it repeats.
    assert!(p.path(".ctxkeep/checkpoints/ckpt-0002.json").is_file());
}

/// An empty item was written, then failed `verify` (CK204); and no flag
/// emptied a list.
#[test]
fn an_empty_list_item_is_refused_and_a_list_is_cleared_by_its_flag() {
    let p = Project::initialized();
    p.checkpoint(&["--decision", "use serde", "--question", "which YAML?"])
        .success();
    let before = p.snapshot();
    for (flag, clear) in [
        ("--decision", "--clear-decisions"),
        ("--question", "--clear-questions"),
    ] {
        for empty in ["", "  "] {
            let out = p.ctxkeep(&["checkpoint", flag, empty]).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{flag} {empty:?}: {err}");
            assert!(
                err.contains(flag)
                    && err.contains(&format!(
                        "an item needs text (to empty the list, use {clear})"
                    )),
                "{err}"
            );
        }
        // A list cannot be both given and cleared.
        p.ctxkeep(&["checkpoint", flag, "x", clear])
            .assert()
            .code(2);
    }
    assert!(p.snapshot() == before, "a refusal writes nothing");

    let (v, code) = p.json(&["checkpoint", "--clear-decisions"]);
    assert_eq!(code, 0);
    assert_eq!(v["decisions"], serde_json::json!([]));
    assert_eq!(v["open_questions"], serde_json::json!(["which YAML?"]));
    let (v, _) = p.json(&["checkpoint", "--clear-questions"]);
    assert_eq!(v["open_questions"], serde_json::json!([]));
    p.ctxkeep(&["verify"]).assert().success();
    // The same through --from: an empty item is refused, naming the flag that clears.
    p.write("from.yaml", "decisions: [\"keep it\", \"\"]\n");
    p.ctxkeep(&["checkpoint", "--from", "from.yaml"])
        .assert()
        .code(65)
        .stderr(predicate::str::contains(
            "decisions (--decision) item 2 is empty; give each item some text, or clear the list with --clear-decisions",
        ));
}

#[test]
fn a_next_action_verify_rejects_is_warned_of_when_it_is_written() {
    let p = Project::initialized();
    // A good one: nothing to say.
    p.checkpoint(&[]).success().stderr("");
    // A marker left in the next action.
    let a = p.checkpoint_next("TBD").success().stdout("ckpt-0002\n");
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("warning: `ctxkeep verify` rejects ckpt-0002: CK202"),
        "{err}"
    );
    let v = p.ctxkeep(&["verify"]).assert().code(1);
    let report = String::from_utf8_lossy(&v.get_output().stdout).into_owned();
    assert!(report.contains("CK202"), "{report}");
}

/// The checks that can reject what a checkpoint wrote run on the text it writes, beside the
/// write: a checkpoint whose write fails says the failure alone, never that `verify` rejects a
/// record that was not written; written, the same record is warned of as before.
#[test]
fn a_checkpoint_that_could_not_be_written_is_not_said_to_be_rejected() {
    let p = Project::initialized();
    p.checkpoint(&[]).success().stderr("");
    let before = p.state();
    let out = p
        .sh("ulimit -f 0; exec \"$CTXKEEP_BIN\" checkpoint --next TBD")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("rejects"), "{err}");
    assert_eq!(p.state(), before);
    let written = p
        .ctxkeep(&["checkpoint", "--next", "TBD"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&written.stderr);
    assert_eq!(written.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: `ctxkeep verify` rejects ckpt-0002: CK202"),
        "{err}"
    );
}

/// A checkpoint stores its sealed record while the front matter takes its new keys and is read
/// back: a front matter that would not read back (a key of the user's names an anchor in the
/// history ctxkeep rewrites) is refused, and the record stored meanwhile is taken back out.
#[test]
fn a_front_matter_that_would_not_read_back_writes_nothing_not_even_the_archive_record() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.checkpoint_next("run the parser's tests").success();
    let text = p.state().replacen("\nhistory:", "\nhistory: &h", 1);
    let close = text[4..].find("\n---\n").unwrap() + 4;
    let text = format!("{}\nmine: *h{}", &text[..close], &text[close..]);
    p.write("project-state.md", &text);
    p.ctxkeep(&["verify"]).assert().success();
    let out = p
        .ctxkeep(&["checkpoint", "--next", "fix the parser"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{err}");
    assert!(
        err.contains("could not update the front matter in place"),
        "{err}"
    );
    assert_eq!(p.state(), text);
    assert!(p.path(".ctxkeep/checkpoints/ckpt-0002.json").exists());
    assert!(!p.path(".ctxkeep/checkpoints/ckpt-0003.json").exists());
    // Nothing to clean up: with the anchor gone, the next checkpoint takes the id.
    p.write("project-state.md", text.replace("\nmine: *h", ""));
    p.checkpoint_next("fix the parser")
        .success()
        .stdout("ckpt-0003\n");
}
