use predicates::prelude::*;

use crate::support::Project;

#[test]
fn init_creates_state_file_gitignore_and_defaults() {
    let p = Project::new();
    p.ctxkeep(&["init"])
        .assert()
        .success()
        .stderr(predicate::str::contains("created"));
    let s = p.state();
    assert!(
        s.starts_with("---\nctxkeep: 1\nwindow: 200000\nencoding: o200k_base\nstages:\n"),
        "{s}"
    );
    assert!(s.contains("  - {at: 80, action: warn}\n  - {at: 90, action: checkpoint}\n  - {at: 95, action: checkpoint}\n  - {at: 98, action: handoff}\n"));
    assert!(s.contains("<!-- ctxkeep:begin -->") && s.contains("<!-- ctxkeep:end -->"));
    assert!(p.read(".gitignore").lines().any(|l| l == ".ctxkeep/"));
    assert!(p.path(".ctxkeep").is_dir());
}

#[test]
fn init_twice_changes_nothing_and_says_so() {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    let before = p.state();
    let gi = p.read(".gitignore");
    p.ctxkeep(&["init"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "already initialized; nothing changed",
        ));
    assert_eq!(p.state(), before);
    assert_eq!(p.read(".gitignore"), gi);
}

#[test]
fn init_flags_update_only_those_settings() {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    let mut s = p.state();
    s = s.replace(
        "ctxkeep: 1\n",
        "ctxkeep: 1\n# team setting, keep\nowner: alice\n",
    );
    p.write("project-state.md", &s);
    p.ctxkeep(&[
        "init",
        "--window",
        "1000000",
        "--stages",
        "60:warn,80:handoff",
    ])
    .assert()
    .success()
    .stderr(predicate::str::contains("updated window, stages"));
    let after = p.state();
    assert!(after.contains("# team setting, keep\nowner: alice\n"));
    assert!(after.contains("window: 1000000\n"));
    assert!(after.contains("stages:\n  - {at: 60, action: warn}\n  - {at: 80, action: handoff}\n"));
    assert!(after.contains("encoding: o200k_base\n"));
}

#[test]
fn init_rejects_bad_flags_without_writing() {
    let p = Project::new();
    p.ctxkeep(&["init", "--stages", "80:explode"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown action 'explode'"));
    assert!(!p.path("project-state.md").exists());
    p.ctxkeep(&["init", "--encoding", "nope"]).assert().code(2);
    p.ctxkeep(&["init", "--window", "0"]).assert().code(2);
    assert!(!p.path("project-state.md").exists());
}

#[test]
fn init_adds_front_matter_to_an_existing_file_keeping_its_text() {
    let p = Project::new();
    let original = "# My plan\n\n---\n\nsome text with a rule above\n";
    p.write("project-state.md", original);
    p.ctxkeep(&["init"]).assert().success();
    let s = p.state();
    assert!(s.starts_with("---\nctxkeep: 1\n"));
    let body = &s[s.find("---\n# My plan").unwrap() + 4..];
    assert!(body.starts_with(original), "{body}");
}

#[test]
fn init_outside_git_skips_gitignore() {
    let p = Project::bare();
    p.ctxkeep(&["init"]).assert().success();
    assert!(!p.path(".gitignore").exists());
}

#[test]
fn eject_templates_writes_defaults_and_names_the_folder() {
    let p = Project::new();
    p.ctxkeep(&["init", "--eject-templates"]).assert().success();
    for t in ["project-state.md", "state.md", "resume.md", "stage.md"] {
        assert!(p.path(&format!("ctxkeep-templates/{t}")).is_file(), "{t}");
    }
    assert!(p.state().contains("templates: ctxkeep-templates\n"));
}

/// The window stayed 200,000 after `init --model gemini-2.5-pro` (300k
/// tokens then read as 150 %), and `init --model gpt-9` was taken silently
/// while `count --model gpt-9` refused it.
#[test]
fn init_model_on_an_existing_project_sets_its_window_and_says_so() {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    p.ctxkeep(&["init", "--model", "gemini-2.5-pro"])
        .assert()
        .success()
        .stderr(predicate::str::contains("updated model, window in"))
        .stderr(predicate::str::contains(
            "(window 1,048,576 tokens, gemini-2.5-pro's in the model table)",
        ));
    let s = p.state();
    assert!(
        s.contains("\nmodel: gemini-2.5-pro\n") && s.contains("\nwindow: 1048576\n"),
        "{s}"
    );
    // --window still wins over the model's.
    p.ctxkeep(&["init", "--model", "claude-sonnet-4-5", "--window", "500000"])
        .assert()
        .success();
    assert!(p.state().contains("\nwindow: 500000\n"));
}

#[test]
fn init_refuses_a_model_the_table_does_not_know_as_count_does() {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    let before = p.snapshot();
    let init = p.ctxkeep(&["init", "--model", "gpt-9"]).output().unwrap();
    let count = p
        .ctxkeep(&["count", "--model", "gpt-9", "README.md"])
        .output()
        .unwrap();
    assert_eq!(init.status.code(), Some(2));
    assert_eq!(count.status.code(), Some(2));
    let said = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let prefix = "ctxkeep: error: --model: 'gpt-9' is not in the model table; ";
    assert_eq!(
        said(&init),
        format!("{prefix}give --window and --encoding with it\n")
    );
    assert_eq!(said(&count), format!("{prefix}give --encoding instead\n"));
    assert!(p.snapshot() == before, "nothing changed");
    // Given its window and encoding, or named in the project's `models:`, it is taken.
    p.ctxkeep(&[
        "init",
        "--model",
        "gpt-9",
        "--window",
        "400000",
        "--encoding",
        "o200k_base",
    ])
    .assert()
    .success();
    let text = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nmodels:\n  gpt-10: {window: 900000}\n",
        1,
    );
    p.write("project-state.md", text);
    p.ctxkeep(&["init", "--model", "gpt-10"]).assert().success();
    assert!(p.state().contains("\nwindow: 900000\n"));
}
