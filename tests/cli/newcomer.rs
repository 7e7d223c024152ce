//! A newcomer's first hour (issue 37, cases 11–14): what install writes and for whom, what an
//! edit of the marked block does, where decisions go, and the small untruths a first run met.

use predicates::prelude::*;

use crate::support::Project;

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn uninstall_says_removed_for_a_file_it_deleted() {
    let p = Project::initialized();
    p.ctxkeep(&["hooks", "install", "claude-code"])
        .assert()
        .success();
    let a = p
        .ctxkeep(&["hooks", "uninstall", "claude-code"])
        .assert()
        .success();
    let err = stderr(&a);
    assert!(!p.path(".claude/settings.json").exists());
    assert!(err.contains("settings.json: removed"), "{err}");
    assert!(err.contains(".mcp.json: removed"), "{err}");
    assert!(!err.contains(": written"), "{err}");
}

#[test]
fn committing_the_checkpoint_is_not_a_move_of_head() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    // The usual next step: commit the work with the checkpoint.
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "work and its checkpoint"]);
    let a = p.ctxkeep(&["resume", "--peek"]).assert().success();
    let prompt = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(!prompt.contains("HEAD moved"), "{prompt}");
    assert!(
        prompt.contains("- HEAD is the commit that committed this checkpoint"),
        "{prompt}"
    );
    let (v, _) = p.json(&["verify"]);
    assert!(!v.to_string().contains("CK502"), "{v}");
    // One more commit is a move, and is counted as one.
    p.write("README.md", "changed");
    p.git(&["commit", "-qam", "later"]);
    let a = p.ctxkeep(&["resume", "--peek"]).assert().success();
    let prompt = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(
        prompt.contains("HEAD moved by 1 commit(s) besides the one that committed this checkpoint"),
        "{prompt}"
    );
}
