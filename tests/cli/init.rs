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
