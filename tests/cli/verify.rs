use predicates::prelude::*;

use crate::support::{with_sigint, Project};

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
    p.checkpoint(&[]).success();
    // `checkpoint` refuses empty fields; a hand edit can still leave them so.
    let mut s = p.state();
    for field in ["active_task", "controlling_agent", "next_action"] {
        let at = s.find(&format!("  {field}: ")).unwrap();
        let end = at + s[at..].find('\n').unwrap();
        s.replace_range(at..end, &format!("  {field}: ''"));
    }
    p.write("project-state.md", &s);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    assert_eq!(v["ok"], false);
    let codes: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    // The edit also broke the seal, which `resume` refuses: CK110.
    assert_eq!(codes, vec!["CK102", "CK103", "CK104", "CK110"]);
    assert_eq!(v["errors"][0]["field"], "active_task");
}

/// The gate fails whatever the reader it guards refuses: `resume` refuses
/// a hand-edited record (65), so `verify` fails on it (it passed with a
/// warning before), with or without `--strict`.
#[test]
fn a_hand_edited_field_fails_verify_as_resume_refuses_it() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let s = p.state().replace(
        "  controlling_agent: claude-code",
        "  controlling_agent: codex",
    );
    p.write("project-state.md", &s);
    p.ctxkeep(&["resume", "--peek"]).assert().code(65);
    for args in [&["verify"][..], &["verify", "--strict"]] {
        let (v, code) = p.json(args);
        assert_eq!(code, 1, "{args:?}");
        assert_eq!(v["errors"][0]["code"], "CK110");
        assert_eq!(v["errors"][0]["line"], line_of(&s, "  digest:"));
        let msg = v["errors"][0]["message"].as_str().unwrap();
        assert!(msg.contains("`resume` refuses it"), "{msg}");
    }
    // A checkpoint re-seals it, with the edit: both read it again.
    p.ctxkeep(&["checkpoint"]).assert().success();
    p.ctxkeep(&["resume", "--peek"]).assert().success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0, "{v}");
    assert!(p.state().contains("  controlling_agent: codex\n"));
}

#[test]
fn no_checkpoint_is_66_as_for_resume() {
    let p = Project::initialized();
    p.ctxkeep(&["verify"]).assert().code(66).stdout(
        predicate::str::contains("CK002")
            .and(predicate::str::contains("failed: no checkpoint yet")),
    );
    p.ctxkeep(&["resume"]).assert().code(66);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(
        (code, &v["errors"][0]["code"]),
        (66, &serde_json::json!("CK002"))
    );
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

/// Codes of a `--json` verify's errors or warnings.
fn codes(v: &serde_json::Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

/// The file line (1-based) of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

/// An initialized project whose default checkpoint names only files that exist.
fn project() -> Project {
    let p = Project::initialized();
    p.write("src/state.rs", "// state\n");
    p.commit_all("add src/state.rs");
    p
}

#[test]
fn a_clean_checkpoint_has_no_findings_and_no_notes() {
    let p = project();
    p.checkpoint(&["--decision", "keep serde_yaml behind a 64 KiB cap"])
        .success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["errors"], serde_json::json!([]));
    assert_eq!(v["warnings"], serde_json::json!([]));
    assert_eq!(v["notes"], serde_json::json!([]));
}

#[test]
fn a_cold_read_phrase_is_an_error_naming_the_phrase_the_field_and_the_line() {
    let p = project();
    p.checkpoint(&["--decision", "use the approach we just decided on"])
        .success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    assert_eq!(codes(&v, "errors"), ["CK301"]);
    let e = &v["errors"][0];
    assert_eq!(e["field"], "decisions");
    assert_eq!(e["severity"], "error");
    assert!(
        e["message"].as_str().unwrap().contains("we just decided"),
        "{e}"
    );
    assert_eq!(
        e["line"],
        line_of(&p.state(), "use the approach we just decided on")
    );
    // The human report names the place and the code.
    p.ctxkeep(&["verify"]).assert().code(1).stdout(
        predicate::str::contains("1 error:")
            .and(predicate::str::contains("CK301"))
            .and(predicate::str::contains("[decisions]")),
    );
}

#[test]
fn a_vague_next_action_is_an_error_and_one_without_a_verb_a_warning() {
    let p = project();
    p.checkpoint(&[]).success();
    p.ctxkeep(&["checkpoint", "--next", "keep going"])
        .assert()
        .success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!((codes(&v, "errors"), code), (vec!["CK302".to_string()], 1));
    assert_eq!(v["errors"][0]["line"], line_of(&p.state(), "next_action:"));
    p.ctxkeep(&["checkpoint", "--next", "the lexer needs more tests"])
        .assert()
        .success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0);
    assert_eq!(codes(&v, "warnings"), ["CK303"]);
}

#[test]
fn placeholders_are_errors() {
    let p = project();
    p.checkpoint(&["--question", "cache size: TBD"]).success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!((codes(&v, "errors"), code), (vec!["CK202".to_string()], 1));
    assert_eq!(v["errors"][0]["field"], "open_questions");
}

#[test]
fn unknown_references_warn_and_a_vanished_dirty_file_fails() {
    let p = project();
    p.write("src/lexer.rs", "// new, not committed\n");
    p.checkpoint(&["--note", "see DEC-0099 and src/nope.rs"])
        .success();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(codes(&v, "warnings"), ["CK401", "CK403"]);
    std::fs::remove_file(p.path("src/lexer.rs")).unwrap();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    assert_eq!(codes(&v, "errors"), ["CK410"]);
    assert!(v["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("src/lexer.rs"));
    assert_eq!(v["errors"][0]["line"], line_of(&p.state(), "src/lexer.rs"));
}

#[test]
fn head_moved_is_a_stale_warning_counting_commits_but_not_the_one_that_carries_it() {
    let p = project();
    p.checkpoint(&[]).success();
    p.commit_all("checkpoint"); // the checkpoint's own commit: not stale
    let (v, code) = p.json(&["verify"]);
    assert_eq!((code, codes(&v, "warnings")), (0, Vec::<String>::new()));
    p.git(&["commit", "-q", "--allow-empty", "-m", "later 1"]);
    p.git(&["commit", "-q", "--allow-empty", "-m", "later 2"]);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0);
    assert_eq!(codes(&v, "warnings"), ["CK502"]);
    let msg = v["warnings"][0]["message"].as_str().unwrap();
    assert!(msg.contains("moved 2 commit(s)"), "{msg}");
}

#[test]
fn a_recorded_head_unknown_to_the_repository_is_an_error() {
    let p = project();
    p.checkpoint(&[]).success();
    let head = p.head();
    let s = p
        .state()
        .replace(&head, "0123456789abcdef0123456789abcdef01234567");
    p.write("project-state.md", &s);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    // The hand edit broke the seal too (CK110).
    assert_eq!(codes(&v, "errors"), ["CK110", "CK501"]);
    assert_eq!(v["errors"][1]["line"], line_of(&s, "head:"));
}

#[test]
fn undescribed_changes_warn_and_fail_with_strict() {
    let p = project();
    p.checkpoint(&[]).success();
    // project-state.md itself is uncommitted now; it never counts.
    let (v, _) = p.json(&["verify"]);
    assert!(codes(&v, "warnings").is_empty(), "{v}");
    p.write("src/extra.rs", "// written after the checkpoint\n");
    let (v, code) = p.json(&["verify"]);
    assert_eq!(
        (code, codes(&v, "warnings")),
        (0, vec!["CK503".to_string()])
    );
    assert!(v["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("src/extra.rs (untracked)"));
    let (v, code) = p.json(&["verify", "--strict"]);
    assert_eq!((code, codes(&v, "errors")), (1, vec!["CK503".to_string()]));
}

#[test]
fn without_git_the_git_checks_are_skipped_with_a_note() {
    let p = project();
    p.checkpoint(&[]).success();
    p.write("src/extra.rs", "// would be CK503 with git\n");
    let out = p
        .ctxkeep(&["--json", "verify"])
        .env("CTXKEEP_GIT", p.path("no-such-git"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(codes(&v, "warnings").is_empty(), "{v}");
    assert!(v["notes"][0]
        .as_str()
        .unwrap()
        .contains("git checks skipped: git is not installed"));
    p.ctxkeep(&["verify"])
        .env("CTXKEEP_GIT", p.path("no-such-git"))
        .assert()
        .success()
        .stdout(predicate::str::contains("note: git checks skipped"));

    // Not a repository at all.
    let b = Project::bare();
    b.ctxkeep(&["init"]).assert().success();
    b.write("src/state.rs", "// state\n");
    b.checkpoint(&[]).success();
    let (v, code) = b.json(&["verify"]);
    assert_eq!(code, 0, "{v}");
    assert!(v["notes"][0]
        .as_str()
        .unwrap()
        .contains("not a git repository"));
}

#[test]
fn the_resume_prompt_must_fit_the_token_budget() {
    let p = project();
    let long = "the lexer keeps a table of escapes per quote style. ".repeat(60);
    p.checkpoint(&["--note", &long]).success();
    let (v, _) = p.json(&["resume", "--max-tokens", "100000"]);
    let full = v["tokens"].as_u64().unwrap();
    // Acknowledged, so the only findings are about size.
    p.ctxkeep(&["ack", v["nonce"].as_str().unwrap()])
        .assert()
        .success();
    let (v, code) = p.json(&["verify", "--max-tokens", &(full + 10).to_string()]);
    assert_eq!((code, codes(&v, "warnings")), (0, Vec::<String>::new()));
    // Fits only without the notes: a warning naming them.
    let (v, code) = p.json(&["verify", "--max-tokens", &(full - 1).to_string()]);
    assert_eq!(
        (code, codes(&v, "warnings")),
        (0, vec!["CK602".to_string()])
    );
    assert!(v["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("notes"));
    // Does not fit at all.
    let (v, code) = p.json(&["verify", "--max-tokens", "20"]);
    assert_eq!((code, codes(&v, "errors")), (1, vec!["CK601".to_string()]));
    // The default budget comes from the config.
    let s = p
        .state()
        .replacen("ctxkeep: 1\n", "ctxkeep: 1\nresume_max_tokens: 20\n", 1);
    p.write("project-state.md", &s);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    assert!(v["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("resume_max_tokens 20"));
}

#[test]
fn a_secret_anywhere_in_the_file_is_an_error_that_does_not_echo_it() {
    let p = project();
    p.checkpoint(&[]).success();
    // Built at run time so no scanner flags this source file.
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0".repeat(2));
    let s = format!("{}\nDeploy token: {token}\n", p.state());
    p.write("project-state.md", &s);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(codes(&v, "errors"), ["CK701"]);
    assert_eq!(v["errors"][0]["field"], "body");
    assert_eq!(v["errors"][0]["line"], line_of(&s, "Deploy token"));
    assert!(
        !v.to_string().contains(&token),
        "the secret was echoed: {v}"
    );
}

#[test]
fn a_file_cut_short_in_the_marked_block_is_an_error() {
    let p = project();
    p.checkpoint(&[]).success();
    let s = p.state();
    let cut = &s[..s.find("<!-- ctxkeep:end -->").unwrap() - 5];
    p.write("project-state.md", cut);
    let (v, code) = p.json(&["verify"]);
    assert_eq!((code, codes(&v, "errors")), (1, vec!["CK120".to_string()]));
    assert_eq!(
        v["errors"][0]["line"],
        line_of(cut, "<!-- ctxkeep:begin -->")
    );
}

#[test]
fn the_report_lists_errors_before_warnings() {
    let p = project();
    p.checkpoint(&[]).success();
    p.ctxkeep(&["checkpoint", "--next", "do it", "--note", "see src/nope.rs"])
        .assert()
        .success();
    let out = p
        .ctxkeep(&["verify"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let (e, w) = (
        text.find("1 error:").unwrap(),
        text.find("1 warning:").unwrap(),
    );
    assert!(
        e < w && text.trim_end().ends_with("has 1 error(s)"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colour without a terminal");
}

#[test]
fn a_fresh_clone_verifies_without_creating_local_data() {
    let p = project();
    p.checkpoint(&[]).success();
    p.commit_all("checkpoint");
    let clone = tempfile::tempdir().unwrap();
    let dest = clone.path().join("c");
    p.git(&["clone", "-q", ".", dest.to_str().unwrap()]);
    let state = dest.join("project-state.md");
    let (v, code) = p.json(&["verify", "--state", state.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    // The clone has .gitattributes but not the driver's local config.
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["warnings"][0]["code"], "CK510");
    assert_eq!(v["notes"], serde_json::json!([]));
    assert!(!dest.join(".ctxkeep").exists(), "verify created .ctxkeep");
    // In CI, where a checkout never merges, it is a note.
    let out = p
        .ctxkeep(&["--json", "verify", "--state", state.to_str().unwrap()])
        .env("CI", "true")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"], serde_json::json!([]), "{v}");
    assert!(v["notes"][0].as_str().unwrap().contains("CK510"), "{v}");

    // A shallow clone lacks the recorded HEAD: a note, not an error.
    let shallow = clone.path().join("s");
    let url = format!("file://{}", p.root().display());
    p.git(&[
        "clone",
        "-q",
        "--depth",
        "1",
        &url,
        shallow.to_str().unwrap(),
    ]);
    let state = shallow.join("project-state.md");
    let (v, code) = p.json(&["verify", "--state", state.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    assert!(
        v["notes"][0].as_str().unwrap().contains("shallow clone"),
        "{v}"
    );
}

/// A fake reader: saves what it was given, answers with `answer`.
fn reader(p: &Project, answer: &str) -> String {
    p.write("reader.out", answer);
    format!(
        "cat > '{}'; cat '{}'",
        p.path("reader.in").display(),
        p.path("reader.out").display()
    )
}

#[test]
fn probe_asks_a_fresh_reader_and_reports_what_it_could_not_resolve() {
    let p = project();
    p.checkpoint(&[]).success();
    let good = r#"Here is what I understood:
```json
{"phase": "implementing the parser", "active_task": "parse front matter in src/state.rs",
 "next_action": "run cargo test and fix the failing split test", "unresolved": []}
```"#;
    let (v, code) = p.json(&["verify", "--probe", &reader(&p, good)]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["probe"]["status"], "answered");
    assert!(v["probe"]["raw_answer"]
        .as_str()
        .unwrap()
        .contains("```json"));
    let sent = p.read("reader.in");
    assert!(
        sent.contains("Recovered from ckpt-0001"),
        "the resume prompt is sent"
    );
    assert!(
        !p.path(".ctxkeep/chain.jsonl").exists(),
        "no session opened"
    );

    let lost = r#"{"phase": "implementing the parser", "active_task": "parse front matter in src/state.rs",
 "next_action": "something about tests", "unresolved": [{"field": "next_action", "phrase": "the failing split test", "why": "which test?"}]}"#;
    let (v, code) = p.json(&["verify", "--probe", &reader(&p, lost)]);
    assert_eq!(code, 0, "warnings only without --strict: {v}");
    let warned = codes(&v, "warnings");
    assert!(warned.contains(&"CK304".to_string()), "{v}");
    assert!(warned.contains(&"CK305".to_string()), "{v}");
    let (v, code) = p.json(&["verify", "--strict", "--probe", &reader(&p, lost)]);
    assert_eq!(code, 1, "{v}");

    let (v, code) = p.json(&["verify", "--probe", "echo no answer; exit 3"]);
    assert_eq!(code, 0, "{v}");
    assert!(codes(&v, "warnings").contains(&"CK306".to_string()), "{v}");
}

/// An edit inside the marked block was overwritten at the next checkpoint
/// without a word. Now `verify` reports it (CK124, a warning: `resume`
/// does not read the block), and the next checkpoint warns and keeps the
/// edited text in the archive.
#[test]
fn a_hand_edit_inside_the_marked_block_is_reported_and_kept() {
    let p = project();
    p.checkpoint(&[]).success();
    let s = p.state();
    let edited = s.replace(
        "- **Next action:** run cargo test and fix the failing split test\n",
        "- **Next action:** run cargo test and fix the failing split test\n- Mine: ask Ana about CRLF first\n",
    );
    assert_ne!(edited, s);
    p.write("project-state.md", &edited);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0, "a warning: {v}");
    assert_eq!(codes(&v, "warnings"), ["CK124"]);
    assert_eq!(
        v["warnings"][0]["line"],
        line_of(&edited, "<!-- ctxkeep:begin -->")
    );
    p.ctxkeep(&["resume", "--peek"]).assert().success();

    let out = p.ctxkeep(&["checkpoint"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "the marked block (between the ctxkeep markers) was edited by hand since ckpt-0001"
        ) && err.contains(".ctxkeep/checkpoints/ckpt-0002.json (key replaced_block)"),
        "{err}"
    );
    assert!(!p.state().contains("ask Ana"), "the block is rewritten");
    let archived: serde_json::Value =
        serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0002.json")).unwrap();
    assert!(
        archived["replaced_block"]
            .as_str()
            .unwrap()
            .contains("- Mine: ask Ana about CRLF first\n"),
        "{archived}"
    );
    // Written again, the block is intact: no finding, no warning.
    let (v, _) = p.json(&["verify"]);
    assert_eq!(codes(&v, "warnings"), Vec::<&str>::new());
    p.ctxkeep(&["checkpoint"])
        .assert()
        .success()
        .stderr(predicate::str::contains("marked block").not());
    // Trailing blanks an editor strips, or CRLF line ends, are no edit.
    let trimmed = p.state().replace(" \n", "\n").replace('\n', "\r\n");
    p.write("project-state.md", &trimmed);
    let (v, _) = p.json(&["verify"]);
    assert!(!v.to_string().contains("CK124"), "{v}");
}
/// The reader's whole process group is stopped when it has answered:
/// `(sleep … &); echo "{}"` leaves no sleep behind.
#[test]
fn the_probe_leaves_nothing_running() {
    let p = project();
    p.checkpoint(&[]).success();
    let pid_file = p.home().join("probe.pid");
    let probe = format!(
        "(sleep 1017 & echo $! > '{}'); echo '{{}}'",
        pid_file.display()
    );
    let (v, code) = p.json(&["verify", "--probe", &probe]);
    assert_eq!(code, 0, "{v}");
    let pid = crate::support::read_pid_file(&pid_file);
    assert!(
        !crate::support::process_running(pid),
        "the reader's background sleep still runs"
    );
}

/// Ctrl-C during the probe stops the reader's group, then verify ends as
/// it would have (killed by SIGINT), leaving nothing behind.
#[test]
fn an_interrupted_probe_leaves_nothing_running() {
    let p = project();
    p.checkpoint(&[]).success();
    let pid_file = p.home().join("probe.pid");
    let probe = format!("sleep 1017 & echo $! > '{}'; wait", pid_file.display());
    let mut verify = p.ctxkeep_std(&["verify", "--probe", &probe]);
    // As from a terminal, however the suite was started (a background job inherits SIGINT
    // ignored, which ctxkeep then keeps: see the test below).
    with_sigint(&mut verify, libc::SIG_DFL);
    let child = verify
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = crate::support::read_pid_file(&pid_file);
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(2), "{:?}", out.status);
    assert!(
        !crate::support::process_running(pid),
        "the reader's sleep still runs"
    );
}

/// A verify started with SIGINT ignored (a background job of a script, `nohup`) keeps it
/// ignored: a Ctrl-C meant for the foreground neither stops its probe nor ends it as if the
/// probe had answered. (It used to catch the signal, stop the reader, and then exit 0.)
#[test]
fn a_probe_started_with_sigint_ignored_runs_to_its_end() {
    let p = project();
    p.checkpoint(&[]).success();
    let started = p.home().join("started");
    let probe = format!("touch '{}'; sleep 1; echo '{{}}'", started.display());
    let mut verify = p.ctxkeep_std(&["--json", "verify", "--probe", &probe]);
    with_sigint(&mut verify, libc::SIG_IGN);
    let child = verify
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while !started.exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["probe"]["exit_code"], 0,
        "the reader ran to its end: {text}"
    );
    assert_eq!(v["probe"]["raw_answer"], "{}\n", "{text}");
}

#[test]
fn a_misspelled_setting_is_named_without_strict() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let s = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nstags: \"50:warn\"\nowner: alice\n",
        1,
    );
    p.write("project-state.md", &s);
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 0, "a warning: {v}");
    let typos: Vec<(&str, &str)> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "CK130")
        .map(|w| (w["field"].as_str().unwrap(), w["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        typos.len(),
        1,
        "only the near miss, not the team's own key: {v}"
    );
    assert_eq!(typos[0].0, "stags");
    assert!(
        typos[0].1.contains("did you mean `stages`?"),
        "{}",
        typos[0].1
    );
}
