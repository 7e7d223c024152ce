//! A newcomer's first hour: what install writes and for whom, what an
//! edit of the marked block does, where decisions go, and the small untruths a first run met.

use predicates::prelude::*;

use crate::support::Project;

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn uninstall_says_removed_for_a_file_it_deleted() {
    let p = Project::initialized();
    p.ctxkeep(&["hooks", "install", "claude-code", "--team"])
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

#[test]
fn count_lists_the_known_models_and_the_projects_own() {
    let p = Project::initialized();
    let s = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nmodels:\n  house-model:\n    window: 64000\n",
        1,
    );
    p.write("project-state.md", &s);
    let a = p.ctxkeep(&["count", "--list-models"]).assert().success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(line("gpt-5"), ["gpt-5", "o200k_base", "400,000"]);
    assert_eq!(
        line("house-model"),
        ["house-model", "(table's)", "64,000", "(project)"]
    );
    let (v, code) = p.json(&["count", "--list-models"]);
    assert_eq!(code, 0);
    let models = v["models"].as_array().unwrap();
    assert!(models.len() > 30, "{v}");
    assert_eq!(
        models.last().unwrap(),
        &serde_json::json!({"name": "house-model", "encoding": null, "window": 64000, "source": "project"})
    );
    p.ctxkeep(&["count", "--list-models", "x.md"])
        .assert()
        .code(2);
}

#[test]
fn resume_says_an_edit_of_the_marked_block_changes_nothing() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let s = p.state().replace(
        "- **Next action:** run cargo test and fix the failing split test",
        "- **Next action:** write the docs instead",
    );
    assert_ne!(s, p.state(), "the block shows the next action");
    p.write("project-state.md", &s);
    for args in [&["resume", "--peek"][..], &["resume"][..]] {
        let a = p.ctxkeep(args).assert().success();
        let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
        let err = stderr(&a);
        assert!(
            out.contains("- Next action: run cargo test and fix the failing split test"),
            "{out}"
        );
        assert!(
            err.contains("was edited by hand, and an edit there changes nothing: its next action reads \"write the docs instead\", but checkpoint ckpt-0001 (which this prompt gives) says \"run cargo test and fix the failing split test\""),
            "{err}"
        );
        assert!(err.contains("ctxkeep checkpoint --next"), "{err}");
    }
    // Once recorded, nothing more to say.
    p.checkpoint_next("write the docs instead").success();
    p.ctxkeep(&["resume", "--peek"])
        .assert()
        .success()
        .stderr(predicate::str::contains("edited by hand").not());
}

#[test]
fn add_decision_adds_decision_replaces_and_both_say_where_the_old_ones_went() {
    let p = Project::initialized();
    p.checkpoint(&["--decision", "d1"]).success();
    let a = p
        .ctxkeep(&["checkpoint", "--add-decision", "d2"])
        .assert()
        .success();
    assert_eq!(stderr(&a), "", "adding drops nothing");
    let (v, _) = p.json(&["checkpoint", "--add-decision", "d3", "--add-decision", "d2"]);
    assert_eq!(v["decisions"], serde_json::json!(["d1", "d2", "d3"]));
    // Replacing says so, and where the replaced ones are.
    let a = p
        .ctxkeep(&["checkpoint", "--decision", "d4"])
        .assert()
        .success();
    assert!(
        stderr(&a).contains("--decision replaced the 3 decision(s) recorded before; checkpoint ckpt-0003 keeps them (`ctxkeep log`, .ctxkeep/checkpoints/ckpt-0003.json). Use --add-decision to add to the list"),
        "{}",
        stderr(&a)
    );
    // After a commit the decisions belong to it: not carried, and said where they are.
    p.write("a.txt", "x");
    p.commit_all("commit a");
    let a = p
        .ctxkeep(&["checkpoint", "--add-decision", "d5"])
        .assert()
        .success();
    assert!(
        stderr(&a).contains("its 1 decision(s) belong to that commit now and were not carried over; checkpoint ckpt-0004 keeps them"),
        "{}",
        stderr(&a)
    );
    let (v, _) = p.json(&["resume", "--peek"]);
    assert_eq!(v["checkpoint"]["decisions"], serde_json::json!(["d5"]));
    p.ctxkeep(&["checkpoint", "--add-decision", "x", "--clear-decisions"])
        .assert()
        .code(2);
}

/// Without `--team` the MCP server is not registered, so a teammate without ctxkeep is asked
/// nothing and sees nothing; the note says so, and how to register it for oneself.
#[test]
fn the_shared_install_asks_no_teammate_for_anything_unless_team() {
    let p = Project::initialized();
    let a = p
        .ctxkeep(&["hooks", "install", "claude-code"])
        .assert()
        .success();
    let err = stderr(&a);
    assert!(
        !p.path(".mcp.json").exists(),
        "no server for teammates to approve"
    );
    assert!(
        err.contains(".claude/settings.json; every teammate's Claude Code runs what they hold; a teammate without ctxkeep sees nothing of it: no prompt, no error, no blank status line"),
        "{err}"
    );
    assert!(
        err.contains("note: the MCP server is not registered (its file would be the team's); for yourself only: `claude mcp add --scope local ctxkeep -- ctxkeep mcp`; for everyone: `ctxkeep hooks install claude-code --team`"),
        "{err}"
    );
    assert!(!err.contains("approve"), "{err}");
    // What a teammate without ctxkeep runs: every hook and the status line, silent, exit 0.
    let settings: serde_json::Value =
        serde_json::from_str(&p.read(".claude/settings.json")).unwrap();
    let mut commands: Vec<String> = settings["hooks"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|groups| groups.as_array().unwrap().clone())
        .flat_map(|g| g["hooks"].as_array().unwrap().clone())
        .map(|h| h["command"].as_str().unwrap().to_string())
        .collect();
    commands.push(
        settings["statusLine"]["command"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    for command in commands {
        let out = p
            .sh(&command)
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            (
                out.status.code(),
                out.stdout.as_slice(),
                out.stderr.as_slice()
            ),
            (Some(0), &b""[..], &b""[..]),
            "{command}"
        );
    }
}

#[test]
fn install_says_what_the_team_shares_and_a_personal_install_writes_the_local_file() {
    let p = Project::initialized();
    let a = p
        .ctxkeep(&["hooks", "install", "claude-code", "--team"])
        .assert()
        .success();
    let err = stderr(&a);
    assert!(
        err.contains("note: shared with your team once committed: ")
            && err.contains(".claude/settings.json and ")
            && err.contains(".mcp.json; every teammate's Claude Code runs what they hold; a teammate without ctxkeep gets no error from the hooks or the status line (they exit at once, printing nothing), but Claude Code asks them to approve the ctxkeep MCP server, which then fails to start"),
        "{err}"
    );
    assert!(
        err.contains("then `ctxkeep hooks install claude-code --personal`"),
        "{err}"
    );
    p.ctxkeep(&["hooks", "uninstall", "claude-code"])
        .assert()
        .success();

    let a = p
        .ctxkeep(&["hooks", "install", "claude-code", "--personal"])
        .assert()
        .success();
    let err = stderr(&a);
    assert!(p.path(".claude/settings.local.json").is_file());
    assert!(!p.path(".claude/settings.json").exists());
    assert!(!p.path(".mcp.json").exists(), "the MCP file is the team's");
    assert!(!err.contains("shared with your team"), "{err}");
    // The hooks run from the personal file: doctor finds and runs them there.
    let out = p
        .ctxkeep(&[
            "hooks",
            "doctor",
            "claude-code",
            "--settings",
            ".claude/settings.local.json",
        ])
        .env("PATH", crate::hooks::path_with_ctxkeep())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains("ok    hooks.Stop: ctxkeep hook claude-code: runs"),
        "{report}"
    );
    p.ctxkeep(&["hooks", "uninstall", "claude-code", "--personal"])
        .assert()
        .success();
    assert!(!p.path(".claude/settings.local.json").exists());
    p.ctxkeep(&["hooks", "install", "codex", "--personal"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--personal: codex has no personal settings file",
        ));
}

#[test]
fn a_claude_code_hook_is_silent_where_ctxkeep_is_missing_and_old_entries_still_uninstall() {
    let p = Project::initialized();
    p.ctxkeep(&["hooks", "install", "claude-code", "--team"])
        .assert()
        .success();
    let s: serde_json::Value = serde_json::from_str(&p.read(".claude/settings.json")).unwrap();
    let command = s["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    // A teammate without ctxkeep: the agent runs the command through the shell.
    assert!(
        which("ctxkeep").is_none(),
        "a machine without ctxkeep on /usr/bin:/bin"
    );
    let mut run = std::process::Command::new("/bin/sh")
        .args(["-c", &command])
        .env("PATH", "/usr/bin:/bin")
        .current_dir(p.root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    // The agent writes its payload; the guard reads it, so the agent never meets a closed pipe.
    run.stdin
        .take()
        .unwrap()
        .write_all(&vec![b'x'; 1 << 20])
        .unwrap();
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{command}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // An entry written by an older ctxkeep (no guard) is still ctxkeep's.
    let old = p.read(".claude/settings.json").replace(
        "command -v ctxkeep >/dev/null 2>&1 || { cat >/dev/null; exit 0; }; ",
        "",
    );
    assert!(!old.contains("command -v"));
    p.write(".claude/settings.json", &old);
    p.ctxkeep(&["hooks", "uninstall", "claude-code"])
        .assert()
        .success();
    assert!(!p.path(".claude/settings.json").exists());
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| p.exists())
}

/// What `init` and `hooks install` wrote is ctxkeep's, not the user's work: the prompt a
/// fresh session gets does not list it as uncommitted, nor does `verify` count it; a hand
/// edit to one of those files makes it the user's again.
#[test]
fn ctxkeeps_own_files_are_not_shown_as_the_users_work() {
    let p = Project::new();
    p.git(&["init", "-q", "-b", "main"]);
    p.write("README.md", "demo\n");
    p.write(".gitignore", "target/\n");
    p.commit_all("start");
    p.ctxkeep(&["init"]).assert().success();
    p.ctxkeep(&["hooks", "install", "claude-code", "--team"])
        .assert()
        .success();
    p.write("src/lib.rs", "pub fn f() {}\n");
    p.checkpoint(&[]).success();
    let (v, _) = p.json(&["resume", "--peek"]);
    let prompt = v["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("- src/ (untracked)") || prompt.contains("- src/lib.rs (untracked)"),
        "{prompt}"
    );
    for own in [
        ".gitignore",
        ".gitattributes",
        ".claude/",
        ".mcp.json",
        ".ctxkeep",
    ] {
        assert!(
            !prompt.contains(&format!("- {own}")),
            "{own} listed:\n{prompt}"
        );
    }
    p.ctxkeep(&["verify"])
        .assert()
        .success()
        .stdout(predicates::str::contains("CK503").not());
    // The user's own line in .gitignore: now it is their work, and it shows.
    let ignore = p.read(".gitignore");
    p.write(".gitignore", format!("{ignore}*.log\n"));
    let out = p.ctxkeep(&["verify"]).output().unwrap();
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains("CK503") && said.contains(".gitignore (modified)"),
        "{said}"
    );
    assert!(
        !said.contains(".mcp.json") && !said.contains(".claude/"),
        "{said}"
    );
}
