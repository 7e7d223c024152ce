use predicates::prelude::*;

use crate::support::Project;

#[test]
fn completions_cover_every_subcommand() {
    let p = Project::bare();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = p
            .ctxkeep(&["completions", shell])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        for sub in ["init", "checkpoint", "resume", "verify"] {
            assert!(text.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    p.ctxkeep(&["completions", "tcsh"]).assert().code(2);
}

#[test]
fn man_page_is_roff_with_the_exit_codes() {
    let p = Project::bare();
    p.ctxkeep(&["man"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(".ie").or(predicate::str::contains(".TH ctxkeep")))
        .stdout(predicate::str::contains("checkpoint"));
}

#[test]
fn help_lists_exit_codes() {
    let p = Project::bare();
    p.ctxkeep(&["verify", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("75  lock timeout"));
}
