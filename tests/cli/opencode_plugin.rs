//! The OpenCode plugin ctxkeep writes into a project, run under node against a fake
//! `ctxkeep` (one that answers, floods, hangs, or prints a banner first): only a valid answer
//! reaches the model, a hung or broken `ctxkeep` is stopped with its children and not called
//! again, and the host process survives a flood.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command as StdCommand;

use serde_json::Value;

use crate::support::{process_running, Project};

const PLUGIN: &str = ".opencode/plugins/ctxkeep.js";

/// A valid answer of `ctxkeep hook opencode --json`.
const ANSWER: &str = r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctxkeep: the parser is half done"}}"#;

/// Drives the installed plugin as OpenCode does: three prompts in one session. Prints, as
/// JSON, the text the plugin added to each prompt.
const HARNESS: &str = r#"
const { CtxkeepPlugin } = await import(process.argv[2]);
const plugin = await CtxkeepPlugin({ client: { app: { log: async () => {} } }, directory: process.cwd() });
const added = [];
for (let i = 0; i < 3; i++) {
  const output = { message: { id: `msg_${i}`, sessionID: "ses_1" }, parts: [{ id: `prt_0123456789abcdef${i}`, type: "text", text: "go on" }] };
  await plugin["chat.message"]({ sessionID: "ses_1" }, output);
  added.push(output.parts.filter((p) => p.synthetic).map((p) => p.text));
}
console.log(JSON.stringify(added));
"#;

fn node_available() -> bool {
    StdCommand::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

struct Ran {
    /// The texts added to each of the three prompts.
    added: Vec<Vec<String>>,
    /// How often the fake `ctxkeep` ran.
    calls: usize,
    stderr: String,
}

/// Installs the plugin, puts a fake `ctxkeep` running `script` first on the PATH and drives
/// the plugin under node. The command's timeout is a guard, not a timing assertion.
fn run(p: &Project, script: &str) -> Ran {
    p.ctxkeep(&["hooks", "install", "opencode", "--team"])
        .assert()
        .success();
    let bin = p.path("fake-bin");
    fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("ctxkeep");
    let calls = p.path("calls.log");
    let _ = fs::remove_file(&calls);
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncat > /dev/null\n{script}\n",
            calls.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let harness = p.path("harness.mjs");
    fs::write(&harness, HARNESS).unwrap();
    let mut cmd = StdCommand::new("node");
    p.env(&mut cmd);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path)
        .env("CTXKEEP_PLUGIN_TIMEOUT_MS", "1500")
        .arg(&harness)
        .arg(format!("file://{}", p.path(PLUGIN).display()));
    let out = assert_cmd::Command::from_std(cmd)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "node: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let added: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout} / {stderr}"));
    let added = serde_json::from_value(added).unwrap();
    let calls = fs::read_to_string(&calls).unwrap_or_default();
    for line in calls.lines() {
        assert_eq!(line, "--json hook opencode", "{calls}");
    }
    Ran {
        added,
        calls: calls.lines().count(),
        stderr,
    }
}

fn nothing_added(ran: &Ran) -> bool {
    ran.added.iter().all(Vec::is_empty)
}

#[test]
fn a_valid_answer_reaches_the_model_at_every_prompt() {
    if !node_available() {
        eprintln!("node not found: skipped");
        return;
    }
    let p = Project::initialized();
    let ran = run(&p, &format!("echo '{ANSWER}'"));
    assert_eq!(ran.calls, 4, "a start and three prompts: {}", ran.stderr);
    for texts in &ran.added {
        assert_eq!(texts.len(), 1, "{:?}", ran.added);
        assert!(texts[0].contains("the parser is half done"), "{texts:?}");
    }
}

#[test]
fn a_banner_before_the_answer_never_reaches_the_model_and_ctxkeep_is_not_called_again() {
    if !node_available() {
        eprintln!("node not found: skipped");
        return;
    }
    let p = Project::initialized();
    let ran = run(
        &p,
        &format!("echo 'Now using node v20.20.2 (npm v10.8.2)'\necho '{ANSWER}'"),
    );
    assert!(nothing_added(&ran), "{:?}", ran.added);
    assert_eq!(ran.calls, 1, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("something other than its JSON"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_flood_is_cut_off_and_the_host_survives() {
    if !node_available() {
        eprintln!("node not found: skipped");
        return;
    }
    let p = Project::initialized();
    let ran = run(
        &p,
        "exec yes 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
    );
    assert!(nothing_added(&ran), "{:?}", ran.added);
    assert_eq!(ran.calls, 1, "{}", ran.stderr);
    assert!(ran.stderr.contains("over 1 MiB"), "{}", ran.stderr);
}

#[test]
fn a_hung_ctxkeep_is_killed_with_its_children_and_not_called_again() {
    if !node_available() {
        eprintln!("node not found: skipped");
        return;
    }
    let p = Project::initialized();
    let pid_file = p.path("sleeper.pid");
    let ran = run(
        &p,
        &format!("sleep 600 &\necho $! > '{}'\nwait", pid_file.display()),
    );
    assert!(nothing_added(&ran), "{:?}", ran.added);
    assert_eq!(ran.calls, 1, "{}", ran.stderr);
    assert!(ran.stderr.contains("gave no answer"), "{}", ran.stderr);
    let sleeper = crate::support::read_pid_file(Path::new(&pid_file));
    assert!(
        crate::support::process_ends(sleeper),
        "the hung wrapper's child {sleeper} is still running"
    );
    assert!(!process_running(sleeper));
}

/// What the plugin runs before a compaction: with `--json`, the summarizer's brief comes as
/// the plugin reads every answer (without, it stays plain text, as before).
#[test]
fn the_brief_comes_as_json_when_asked() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let payload = serde_json::json!({
        "hook_event_name": "PreCompact",
        "session_id": "ses_1",
        "transcript_path": p.path("missing.jsonl"),
        "cwd": p.root(),
        "trigger": "manual",
        "custom_instructions": "",
    });
    let out = p
        .ctxkeep(&["--json", "hook", "opencode"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let reply: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let brief = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(brief.contains("ckpt-0002"), "{brief}");
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "PreCompact");
}
