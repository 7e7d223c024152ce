//! `ctxkeep demo` and the README's first steps, as a newcomer runs them.

use predicates::prelude::*;

use crate::support::Project;

/// The README's fenced `sh` blocks, in order.
fn readme_sh_blocks() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[test]
fn the_demo_runs_the_loop_elsewhere_and_leaves_the_current_directory_alone() {
    let p = Project::bare();
    p.write("mine.txt", "my own file\n");
    let tmp = tempfile::tempdir().unwrap();
    let before = p.snapshot();
    let out = p
        .ctxkeep(&["demo"])
        .env("TMPDIR", tmp.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let shown = String::from_utf8(out.stdout).unwrap();
    for command in [
        "$ ctxkeep init",
        "$ ctxkeep checkpoint --phase parser",
        "$ ctxkeep track --transcript",
        "$ ctxkeep verify",
        "$ ctxkeep resume",
    ] {
        assert!(shown.contains(command), "{command} not shown:\n{shown}");
    }
    assert!(shown.contains("fired stage-80"), "no stage fired:\n{shown}");
    assert!(shown.contains("ok: ckpt-0001 can be read cold"));
    assert!(shown.contains("CK301") && shown.contains("as discussed"));
    assert!(
        shown.contains("Begin your reply with the line `Resuming from "),
        "no resume prompt:\n{shown}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("Removed "));
    assert!(
        crate::support::diff(&before, &p.snapshot()).is_empty(),
        "the demo touched the current directory"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the demo left its folder behind"
    );
}

#[test]
fn keep_runs_in_the_named_folder_and_keeps_it() {
    let p = Project::bare();
    let (v, code) = p.json(&["demo", "--keep", "kept"]);
    assert_eq!(code, 0);
    assert_eq!(v["kept"], true);
    assert_eq!(v["steps"].as_array().unwrap().len(), 10);
    assert_eq!(v["steps"][6]["exit_code"], 1, "the planted defect fails");
    assert!(p.path("kept/project/project-state.md").exists());
    p.ctxkeep(&["verify"])
        .current_dir(p.path("kept/project"))
        .assert()
        .success();
    p.ctxkeep(&["demo", "--keep", "kept"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not empty"));
}

#[test]
fn the_readme_starts_with_the_demo_and_the_tests() {
    let blocks = readme_sh_blocks();
    // The first screen's two set-up commands, then the install, the demo and the tests.
    assert!(
        blocks[0].contains("ctxkeep init")
            && blocks[0].contains("ctxkeep hooks install claude-code"),
        "{}",
        blocks[0]
    );
    assert_eq!(
        blocks[1].trim(),
        "cargo install --locked --path . && ctxkeep demo"
    );
    assert_eq!(blocks[2].trim(), "cargo test --locked");
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    assert!(
        readme.contains("`npm install -g ctxkeep && ctxkeep demo`"),
        "the README names the install without Rust"
    );
}

#[test]
fn the_readme_quick_start_runs_clean_as_pasted_in_an_empty_repository() {
    let blocks = readme_sh_blocks();
    let quick = &blocks[3];
    assert!(quick.contains("ctxkeep init"), "{quick}");
    let p = Project::bare();
    p.git(&["init", "-q", "-b", "main"]);
    let bin = std::path::Path::new(assert_cmd::cargo::cargo_bin!("ctxkeep"));
    let out = p
        .sh(&format!("set -e\n{quick}"))
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(said.contains("ok: ckpt-0001 can be read cold"), "{said}");
    assert!(!said.contains("warning"), "not clean: {said}");
    assert!(said.contains("run cargo test and fix the CRLF case"));
}
