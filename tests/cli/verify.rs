use predicates::prelude::*;

use crate::support::Project;

#[test]
fn verify_passes_a_complete_checkpoint() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.ctxkeep(&["verify"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: ckpt-0001"));
}

#[test]
fn verify_fails_on_missing_fields_and_names_them() {
    let p = Project::initialized();
    p.ctxkeep(&["checkpoint", "--phase", "x"])
        .assert()
        .success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    assert_eq!(v["ok"], false);
    let codes: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, vec!["CK102", "CK103", "CK104"]);
    assert_eq!(v["errors"][0]["field"], "active_task");
}

#[test]
fn hand_edit_is_a_warning_and_an_error_with_strict() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let s = p.state().replace(
        "  controlling_agent: claude-code",
        "  controlling_agent: codex",
    );
    p.write("project-state.md", &s);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0);
    assert_eq!(v["warnings"][0]["code"], "CK110");
    assert!(v["warnings"][0]["line"].as_u64().unwrap() > 1);
    let (v, code) = p.json(&["verify", "--strict"]);
    assert_eq!(code, 1);
    assert_eq!(v["errors"][0]["code"], "CK110");
}

#[test]
fn no_checkpoint_fails() {
    let p = Project::initialized();
    p.ctxkeep(&["verify"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("CK002"));
}

#[test]
fn exit_codes_for_missing_and_unparsable_files() {
    let p = Project::new();
    p.ctxkeep(&["verify"]).assert().code(66);
    p.write("project-state.md", "---\nctxkeep: 1\n");
    p.ctxkeep(&["verify"]).assert().code(65).stderr(
        predicate::str::contains("project-state.md").and(predicate::str::contains("not closed")),
    );
}

#[test]
fn unsupported_version_is_a_finding() {
    let p = Project::initialized();
    let s = p.state().replace("ctxkeep: 1\n", "ctxkeep: 7\n");
    p.write("project-state.md", s);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    assert_eq!(v["errors"][0]["code"], "CK001");
    assert_eq!(v["errors"][0]["line"], 2);
}

#[test]
fn verify_works_in_a_fresh_clone_without_dot_ctxkeep() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    std::fs::remove_dir_all(p.path(".ctxkeep")).unwrap();
    p.ctxkeep(&["verify"]).assert().success();
    assert!(
        !p.path(".ctxkeep").exists(),
        "verify must not create local data"
    );
}
