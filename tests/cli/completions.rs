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
fn help_is_short_and_the_exit_codes_have_their_own_page() {
    let p = Project::bare();
    let help = p
        .ctxkeep(&["--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8(help).unwrap();
    assert!(!help.contains("75  lock timeout"), "{help}");
    assert!(help.contains("`ctxkeep help exit-codes`"), "{help}");
    assert!(help.lines().count() <= 75, "{} lines", help.lines().count());
    for args in [&["help", "exit-codes"][..], &["exit-codes"][..]] {
        p.ctxkeep(args)
            .assert()
            .success()
            .stdout(predicate::str::contains("75  lock timeout"));
    }
    // A subcommand's page points to the table rather than repeating it.
    p.ctxkeep(&["verify", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("75  lock timeout").not())
        .stdout(predicate::str::contains(
            "the table: `ctxkeep help exit-codes`, the man page, docs/codes.md",
        ));
    // And the man page has it.
    p.ctxkeep(&["man", "exit-codes"])
        .assert()
        .success()
        .stdout(predicate::str::contains("lock timeout"));
}

#[test]
fn man_dir_writes_a_page_for_every_subcommand_the_top_page_names() {
    let p = Project::bare();
    p.ctxkeep(&["man", "--dir", "pages"])
        .assert()
        .success()
        .stderr(predicate::str::contains("man pages into pages"));
    let top = p.read("pages/ctxkeep.1");
    // Every page the top page refers to exists, nested ones included.
    let named: Vec<String> = top
        .lines()
        .filter_map(|l| l.strip_suffix("(1)"))
        .map(|l| format!("{}.1", l.replace("\\-", "-")))
        .collect();
    assert!(named.len() >= 17, "{named:?}");
    for page in named
        .iter()
        .chain(["ctxkeep-hooks-install.1".to_string()].iter())
    {
        let text = p.read(&format!("pages/{page}"));
        assert!(text.contains(".TH"), "{page} is not roff");
    }
    assert!(p.read("pages/ctxkeep-checkpoint.1").contains("\\-\\-phase"));
    assert!(!p.path("pages/ctxkeep-help.1").exists());

    // One page printed; the same text as the file.
    let one = p.ctxkeep(&["man", "checkpoint"]).assert().success();
    let printed = String::from_utf8(one.get_output().stdout.clone()).unwrap();
    assert_eq!(printed, p.read("pages/ctxkeep-checkpoint.1"));
    p.ctxkeep(&["man", "hooks", "install"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ctxkeep\\-hooks\\-install"));
    p.ctxkeep(&["man", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no command `nope`"));
}

#[test]
fn json_is_refused_where_there_is_no_data_and_works_for_man_dir() {
    let p = Project::bare();
    for args in [&["--json", "man"][..], &["--json", "completions", "bash"]] {
        let out = p.ctxkeep(args).assert().code(2).get_output().clone();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["error"]["code"], "usage", "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("without --json"));
    }
    let (v, code) = p.json(&["man", "--dir", "m"]);
    assert_eq!(code, 0);
    assert!(v["pages"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("ctxkeep-verify.1")));
}

#[test]
fn every_command_shows_global_options_under_their_own_heading() {
    let p = Project::bare();
    for cmd in ["checkpoint", "resume", "verify", "track", "status", "log"] {
        let out = p
            .ctxkeep(&["help", cmd])
            .assert()
            .success()
            .get_output()
            .clone();
        let help = String::from_utf8(out.stdout).unwrap();
        let (own, global) = help
            .split_once("Global options:")
            .unwrap_or_else(|| panic!("{cmd}: no global heading\n{help}"));
        for flag in ["--json", "--state", "--lock-timeout", "--quiet", "--ascii"] {
            assert!(
                global.contains(flag),
                "{cmd}: {flag} not under Global options"
            );
            assert!(!own.contains(flag), "{cmd}: {flag} among the command's own");
        }
    }
    let out = p
        .ctxkeep(&["help", "checkpoint"])
        .assert()
        .success()
        .get_output()
        .clone();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("The first checkpoint needs all four required fields"));
    for field in [
        "phase",
        "active_task",
        "controlling_agent",
        "next_action",
        "decisions",
        "open_questions",
        "notes",
    ] {
        assert!(help.contains(field), "--from's field {field} not listed");
    }
}

#[test]
fn ascii_mode_and_a_non_utf8_locale_print_no_utf8() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let log = |flag: Option<&str>, env: Option<(&str, &str)>| {
        let mut args: Vec<&str> = flag.into_iter().collect();
        args.push("log");
        let mut cmd = p.ctxkeep(&args);
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
    };
    assert!(log(None, None).contains(" · "), "no locale set: UTF-8");
    assert!(log(None, Some(("LC_ALL", "de_DE.UTF-8"))).contains(" · "));
    for (flag, env) in [
        (Some("--ascii"), None),
        (None, Some(("LC_ALL", "C"))),
        (None, Some(("LANG", "en_US.ISO-8859-1"))),
    ] {
        let shown = log(flag, env);
        assert!(
            shown.is_ascii() && shown.contains(" | "),
            "{flag:?} {env:?}: {shown}"
        );
    }
    // The file itself stays UTF-8 whatever the terminal.
    p.ctxkeep(&["--ascii", "checkpoint", "--note", "Überprüfe – done"])
        .assert()
        .success();
    assert!(p.state().contains("Überprüfe – done"));
}

/// The help speaks plainly: a context's size, not its "figure"; a drop, not a "fall" (the
/// jargon of the code's comments). Every subcommand's page is read, nested ones included.
#[test]
fn help_pages_say_size_and_drop_not_figure_and_fall() {
    let p = Project::bare();
    p.ctxkeep(&["man", "--dir", "pages"]).assert().success();
    let mut pages = 0;
    for entry in std::fs::read_dir(p.path("pages")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap().to_lowercase();
        pages += 1;
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            assert!(
                !matches!(word, "figure" | "figures" | "fall" | "falls"),
                "{} says {word:?}",
                path.display()
            );
        }
    }
    assert!(pages > 10, "{pages} pages");
}
