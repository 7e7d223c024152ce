//! `verify --staged`: the pre-commit gate judges what the commit will hold,
//! not the working file.

use std::os::unix::fs::PermissionsExt;

use predicates::prelude::*;

use crate::support::Project;

/// A real pre-commit hook in the scratch repository, as docs/ci.md shows it.
fn install_hook(p: &Project) {
    let hook = p.path(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nexec \"$CTXKEEP_BIN\" verify --staged\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `git commit` run the way a user runs it (hooks included); its output.
fn commit(p: &Project, msg: &str) -> std::process::Output {
    p.sh(&format!("git commit -q --allow-empty -m '{msg}'"))
        .output()
        .unwrap()
}

#[test]
fn a_fix_left_unstaged_does_not_let_the_broken_checkpoint_through() {
    let p = Project::initialized();
    install_hook(&p);
    p.checkpoint_next("continue with that as discussed")
        .success();
    p.git(&["add", "project-state.md"]);
    p.git(&["commit", "-q", "--no-verify", "-m", "broken once"]);
    let broken_head = p.head();

    // Fixed in the working tree, not staged: the plain check passes...
    p.checkpoint_next("run cargo test and fix the failing split test")
        .success();
    p.ctxkeep(&["verify"]).assert().success();
    // ...but what is staged still is the broken one, and the commit is refused.
    let out = commit(&p, "try");
    assert!(!out.status.success(), "the commit went through");
    // git hands a hook's output to the user on stderr.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("CK301") && said.contains("as discussed"),
        "{said}"
    );
    assert_eq!(p.head(), broken_head);

    p.git(&["add", "project-state.md"]);
    let out = commit(&p, "fixed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_ne!(p.head(), broken_head);
}

#[test]
fn staged_leaves_out_what_only_this_clone_has() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.commit_all("checkpoint");
    // An unacknowledged resume and an undescribed change: this clone's own.
    p.ctxkeep(&["resume"]).assert().success();
    p.write("src/extra.rs", "fn extra() {}\n");
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0);
    let codes = |v: &serde_json::Value| -> Vec<String> {
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(codes(&v).contains(&"CK801".to_string()), "{v}");
    assert!(codes(&v).contains(&"CK503".to_string()), "{v}");
    let (v, code) = p.json(&["verify", "--staged"]);
    assert_eq!(code, 0);
    assert!(!codes(&v).contains(&"CK801".to_string()), "{v}");
    assert!(!codes(&v).contains(&"CK503".to_string()), "{v}");
    // Inside a git hook a plain verify does not nag about the ack either.
    p.ctxkeep(&["verify"])
        .env("GIT_INDEX_FILE", p.path(".git/index"))
        .assert()
        .success()
        .stdout(predicate::str::contains("CK801").not());
}

#[test]
fn staged_judges_files_as_the_commit_will_hold_them() {
    let p = Project::initialized();
    p.ctxkeep(&[
        "checkpoint",
        "--phase",
        "parser",
        "--task",
        "finish src/parser.rs",
        "--agent",
        "alice",
        "--next",
        "run cargo test",
    ])
    .assert()
    .success();
    p.git(&["add", "project-state.md"]);
    // On disk src/parser.rs exists; the commit would not carry it.
    p.write("src/parser.rs", "fn parse() {}\n");
    p.ctxkeep(&["verify"])
        .assert()
        .success()
        .stdout(predicate::str::contains("CK403").not());
    p.ctxkeep(&["verify", "--staged"])
        .assert()
        .success()
        .stdout(predicate::str::contains("CK403").and(predicate::str::contains("src/parser.rs")));
    p.git(&["add", "src/parser.rs"]);
    p.ctxkeep(&["verify", "--staged"])
        .assert()
        .success()
        .stdout(predicate::str::contains("CK403").not());
}

#[test]
fn staged_without_the_file_in_the_index_says_how_to_add_it() {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    p.git(&[
        "rm",
        "-q",
        "--cached",
        "--ignore-unmatch",
        "project-state.md",
    ]);
    p.ctxkeep(&["verify", "--staged"]).assert().code(66).stderr(
        predicate::str::contains("not in git's index").and(predicate::str::contains("git add")),
    );
    let bare = Project::bare();
    bare.ctxkeep(&["init"]).assert().success();
    bare.ctxkeep(&["verify", "--staged"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--staged reads git's index"));
}

fn repo_file(name: &str) -> serde_yaml::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs `script` with bash in the project, `ctxkeep` on the PATH.
fn run_with_ctxkeep_on_path(
    p: &Project,
    script: &str,
    env: &[(&str, &str)],
) -> std::process::Output {
    let bin = std::path::Path::new(assert_cmd::cargo::cargo_bin!("ctxkeep"));
    let mut cmd = p.sh(script);
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path).envs(env.iter().copied());
    cmd.output().unwrap()
}

#[test]
fn the_shipped_pre_commit_hook_checks_what_is_staged() {
    let hooks = repo_file(".pre-commit-hooks.yaml");
    let hook = &hooks[0];
    assert_eq!(hook["id"], "ctxkeep-verify");
    assert_eq!(hook["pass_filenames"], false);
    let files = regex::Regex::new(hook["files"].as_str().unwrap()).unwrap();
    assert!(files.is_match("project-state.md") && files.is_match("docs/project-state.md"));
    assert!(!files.is_match("project-state.md.bak"));
    let entry = hook["entry"].as_str().unwrap();
    assert!(entry.contains("verify --staged"), "{entry}");

    let p = Project::initialized();
    p.checkpoint_next("continue with that as discussed")
        .success();
    p.git(&["add", "project-state.md"]);
    p.checkpoint(&[]).success(); // fixed, not staged
    let out = run_with_ctxkeep_on_path(&p, entry, &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    p.git(&["add", "project-state.md"]);
    let out = run_with_ctxkeep_on_path(&p, entry, &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "--quiet prints nothing on success");
}

#[test]
fn the_github_action_installs_from_its_own_ref_and_runs_verify() {
    let action = repo_file("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let install = steps[0]["run"].as_str().unwrap();
    assert!(
        install.contains("cargo install --locked")
            && install.contains("--path \"$GITHUB_ACTION_PATH\"")
    );
    let verify = steps[1]["run"].as_str().unwrap();

    // The verify step as the runner runs it, with ctxkeep where step one puts it.
    let p = Project::initialized();
    let runner_temp = tempfile::tempdir().unwrap();
    let bin_dir = runner_temp.path().join("ctxkeep/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin!("ctxkeep"),
        bin_dir.join("ctxkeep"),
    )
    .unwrap();
    let temp = runner_temp.path().to_str().unwrap();
    p.checkpoint(&[]).success();
    p.commit_all("checkpoint");
    let out = run_with_ctxkeep_on_path(
        &p,
        verify,
        &[("RUNNER_TEMP", temp), ("CTXKEEP_VERIFY_ARGS", "--strict")],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("can be read cold"));
    p.checkpoint_next("fix that bug we found earlier").success();
    p.commit_all("broken");
    let out = run_with_ctxkeep_on_path(
        &p,
        verify,
        &[("RUNNER_TEMP", temp), ("CTXKEEP_VERIFY_ARGS", "--strict")],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}
