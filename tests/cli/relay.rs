//! `ctxkeep relay` with fake agents: shell scripts (in the test's HOME, out
//! of the repository) that read the prompt, write files, track usage,
//! checkpoint, fail, or do nothing at all, driven through `--agent-cmd`.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{process_running, read_pid_file, with_sigint, Project};

/// Writes an executable `sh` script; returns its path.
fn agent(p: &Project, name: &str, body: &str) -> String {
    let dir = p.home().join("agents");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// `ctxkeep relay ARGS`, with SIGINT as a terminal leaves it (the tests send it).
fn command(p: &Project, args: &[&str]) -> std::process::Command {
    let mut cmd = p.ctxkeep_std(&["relay"]);
    cmd.args(args)
        .env("CTXKEEP_BIN", assert_cmd::cargo::cargo_bin!("ctxkeep"));
    with_sigint(&mut cmd, libc::SIG_DFL);
    cmd
}

/// `ctxkeep --json relay ARGS`: the document, the exit code and stderr.
fn relay(p: &Project, args: &[&str]) -> (Value, i32, String) {
    let out = command(p, &["--json"]).args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let doc = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {stdout:?}\n{stderr}"));
    (doc, out.status.code().unwrap_or(-1), stderr)
}

fn chain(p: &Project) -> Vec<Value> {
    std::fs::read_to_string(p.path(".ctxkeep/chain.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "session")
        .collect()
}

use crate::sessions::events;

/// `--json`'s document is a contract: strict mirrors reject unknown or
/// missing keys.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Report {
    ok: bool,
    stopped: String,
    reason: String,
    exit_code: u8,
    sessions: Vec<Session>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Session {
    number: u32,
    agent: String,
    from_agent: Option<String>,
    link: Option<String>,
    resumed: Option<String>,
    session_id: String,
    ended: String,
    detail: Option<String>,
    exit_code: i32,
    seconds: f64,
    tokens: Option<u64>,
    checkpoint: Option<String>,
    checkpoint_by: String,
    progress: Progress,
    log: String,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Progress {
    commits: u64,
    plan_done: usize,
    files: usize,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DryRun {
    commands: Vec<String>,
    first_prompt: String,
    problems: Vec<String>,
}

fn field(doc: &Value, key: &str) -> Vec<Value> {
    doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[key].clone())
        .collect()
}

fn checkpoint(p: &Project, id: &str) -> Value {
    serde_json::from_str(&p.read(&format!(".ctxkeep/checkpoints/{id}.json"))).unwrap()
}

fn ready() -> Project {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p
}

#[test]
fn relay_runs_sessions_from_the_resume_prompt_until_a_check_passes() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "worker",
        &format!(
            "cat > '{home}/prompt-'$CTXKEEP_RELAY_SESSION\n\
             echo \"session $CTXKEEP_RELAY_SESSION as $CTXKEEP_SESSION\"\n\
             echo part > part-$CTXKEEP_RELAY_SESSION.txt"
        ),
    );
    let (doc, code, err) = relay(
        &p,
        &[
            "--agent-cmd",
            &a,
            "--until",
            "test -f part-2.txt",
            "--",
            "split",
            "the parser",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let _: Report = serde_json::from_value(doc.clone()).unwrap();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["stopped"], "until");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(field(&doc, "agent"), ["worker", "worker"]);
    assert_eq!(field(&doc, "ended"), ["exited", "exited"]);
    assert_eq!(field(&doc, "link"), ["session-0001", "session-0002"]);
    assert_eq!(field(&doc, "resumed"), ["ckpt-0001", "ckpt-0002"]);
    assert_eq!(field(&doc, "checkpoint"), ["ckpt-0002", "ckpt-0003"]);
    assert_eq!(field(&doc, "checkpoint_by"), ["relay", "relay"]);
    // One line per session, then why it stopped.
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("relay: ")).collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with("relay: session 1 worker: exited, exit 0 after "),
        "{err}"
    );
    assert!(lines[0].contains("ckpt-0002 by relay"), "{err}");
    assert!(
        lines[0].contains("0 commits, 0 plan items done, 0 files changed"),
        "{err}"
    );
    assert!(
        lines[2].contains("`test -f part-2.txt` passed (exit 0)"),
        "{err}"
    );

    // The first session gets the resume prompt and the task; later ones the prompt alone.
    let first = std::fs::read_to_string(p.home().join("prompt-1")).unwrap();
    let second = std::fs::read_to_string(p.home().join("prompt-2")).unwrap();
    assert!(first.contains("Recovered from ckpt-0001"), "{first}");
    assert!(first.trim_end().ends_with("split the parser"), "{first}");
    assert!(second.contains("Recovered from ckpt-0002"), "{second}");
    assert!(!second.contains("split the parser"), "{second}");
    // Its output went to the log named in the report.
    let log = p.read(doc["sessions"][0]["log"].as_str().unwrap());
    assert!(log.starts_with("session 1 as relay-"), "{log}");

    // Each session is a link of the chain, opened by relay, and in `log`.
    let links = chain(&p);
    assert_eq!(links.len(), 2);
    assert!(links.iter().all(|l| l["source"] == "relay"));
    assert_eq!(links[0]["agent"], "worker");
    assert_eq!(links[0]["from_agent"], "claude-code");
    assert_eq!(
        links[1]["from_agent"],
        Value::Null,
        "the same agent continued"
    );
    let ckpt = checkpoint(&p, "ckpt-0002");
    assert_eq!(ckpt["trigger"], "relay");
    assert_eq!(ckpt["controlling_agent"], "worker");
    assert!(
        ckpt["git"]["dirty"].to_string().contains("part-1.txt"),
        "{ckpt}"
    );
    let log = p.ctxkeep(&["log"]).output().unwrap();
    let log = String::from_utf8(log.stdout).unwrap();
    assert!(log.contains("session-0002"), "{log}");
    assert_eq!(events(&p, "relay_session").len(), 2);
    assert_eq!(events(&p, "relay_stop")[0]["stopped"], "until");
}

#[test]
fn a_handoff_stage_passes_the_work_to_the_next_agent() {
    let p = ready();
    let first = agent(
        &p,
        "first",
        "\"$CTXKEEP_BIN\" track --tokens 199000 --window 200000 >/dev/null\n\
         \"$CTXKEEP_BIN\" checkpoint --next 'finish the split' >/dev/null",
    );
    let second = agent(
        &p,
        "second",
        "grep -q 'finish the split' || exit 7\n\
         \"$CTXKEEP_BIN\" checkpoint --phase Done --next 'nothing' >/dev/null",
    );
    let (doc, code, err) = relay(
        &p,
        &[
            "--agent-cmd",
            &first,
            "--agent-cmd",
            &second,
            "--until-phase",
            "done",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["stopped"], "until-phase");
    assert_eq!(field(&doc, "agent"), ["first", "second"]);
    assert_eq!(field(&doc, "ended"), ["handoff", "exited"]);
    assert_eq!(doc["sessions"][0]["detail"], "stage-98");
    assert_eq!(doc["sessions"][0]["tokens"], 199000);
    assert_eq!(doc["sessions"][1]["from_agent"], "first");
    assert!(
        err.contains("relay: session 1 first: handoff (stage-98)"),
        "{err}"
    );
    assert!(err.contains("199,000 tokens"), "{err}");
    assert!(
        err.contains("relay: session 2 second (from first): exited"),
        "{err}"
    );
    let links = chain(&p);
    assert_eq!(links[1]["agent"], "second");
    assert_eq!(
        links[1]["from_agent"], "first",
        "the handoff is in the chain"
    );
    let log = String::from_utf8(p.ctxkeep(&["log"]).output().unwrap().stdout).unwrap();
    assert!(log.contains("second (handoff from first)"), "{log}");
}

#[test]
fn failures_and_rate_limits_rotate_and_the_relay_runs_out_of_sessions() {
    let p = ready();
    let limited = agent(
        &p,
        "limited",
        "echo 'API Error: 429 rate limit exceeded, try again later' >&2; exit 1",
    );
    let broken = agent(&p, "broken", "echo oops; exit 3");
    let (doc, code, err) = relay(
        &p,
        &[
            "--agent-cmd",
            &limited,
            "--agent-cmd",
            &broken,
            "--max-sessions",
            "3",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["stopped"], "max-sessions");
    assert_eq!(field(&doc, "agent"), ["limited", "broken", "limited"]);
    assert_eq!(
        field(&doc, "ended"),
        ["rate-limited", "failed", "rate-limited"]
    );
    assert_eq!(field(&doc, "exit_code"), [1, 3, 1]);
    assert_eq!(doc["sessions"][1]["detail"], "exit 3");
    assert!(err.contains("--max-sessions 3 reached (exit 1)"), "{err}");
}

#[test]
fn an_agent_that_goes_round_in_circles_stops_the_relay_as_stuck() {
    let p = ready();
    let idle = agent(&p, "idle", "cat >/dev/null");
    let (doc, code, err) = relay(&p, &["--agent-cmd", &idle]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(doc["stopped"], "stuck");
    assert!(
        doc["reason"]
            .as_str()
            .unwrap()
            .contains("max_handoffs_without_progress (3)"),
        "{doc}"
    );
    // Nothing new to record after each: the checkpoint stands, no copy of it.
    assert_eq!(field(&doc, "checkpoint_by"), ["relay", "none", "none"]);
    assert_eq!(chain(&p).len(), 3);
    let stuck = events(&p, "stuck");
    assert_eq!(stuck.last().unwrap()["refused"], true);
    // The front matter's own limit wins over relay's default.
    let text = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nmax_handoffs_without_progress: 5\n",
        1,
    );
    p.write("project-state.md", text);
    p.write("note.txt", "progress");
    p.commit_all("progress");
    let (doc, code, _) = relay(&p, &["--agent-cmd", &idle, "--max-sessions", "9"]);
    assert_eq!((code, doc["sessions"].as_array().unwrap().len()), (1, 5));
}

#[test]
fn a_session_that_writes_no_checkpoint_gets_one_from_its_transcript() {
    let p = ready();
    crate::sessions::busy_transcript(&p);
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "transcribed",
        &format!("cp transcript.jsonl \"$CTXKEEP_RELAY_TRANSCRIPT\"; mkdir -p src; echo 'fn lex() {{}}' > src/lexer.rs; echo ran >> '{home}/runs'"),
    );
    let b = agent(&p, "other", "exit 0");
    let (doc, code, err) = relay(
        &p,
        &["--agent-cmd", &a, "--agent-cmd", &b, "--max-sessions", "2"],
    );
    assert_eq!(code, 1, "{err}");
    let s = &doc["sessions"][0];
    assert_eq!(s["checkpoint_by"], "relay");
    // Three failures of `cargo test` in a row: the gutter, so the next agent takes over.
    assert_eq!(s["ended"], "gutter");
    assert_eq!(s["detail"], "`cargo test` failed 3 times in a row");
    assert_eq!(s["tokens"], 20010);
    assert_eq!(s["progress"]["files"], 1);
    assert_eq!(doc["sessions"][1]["agent"], "other");
    let ckpt = checkpoint(&p, s["checkpoint"].as_str().unwrap());
    assert_eq!(ckpt["trigger"], "relay");
    assert_eq!(
        ckpt["observed"]["files"],
        serde_json::json!(["src/lexer.rs"])
    );
    assert_eq!(
        ckpt["observed"]["request"],
        "Add CRLF handling to the front matter parser and make the tests pass"
    );
}

/// Ctrl-C while an agent works: relay stops it (SIGTERM to its group), writes a checkpoint of
/// what it left and exits 130. Proved by what the agent did, not by a clock: it got SIGTERM and
/// never reached the line after its long wait.
#[test]
fn an_interrupt_stops_the_agent_writes_a_checkpoint_and_exits_130() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "slow",
        &format!(
            "trap 'echo term > \"{home}/got-term\"; exit 143' TERM\n\
             echo half-done > work.txt\n\
             echo $$ > '{home}/started'\n\
             sleep 30 & wait\n\
             echo finished > '{home}/finished'"
        ),
    );
    let child = command(&p, &["--json", "--agent-cmd", &a])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    read_pid_file(&p.home().join("started"));
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(p.home().join("got-term").exists(), "the agent got SIGTERM");
    assert!(
        !p.home().join("finished").exists(),
        "the agent ran to its end"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["stopped"], "interrupted");
    assert_eq!(doc["exit_code"], 130);
    assert_eq!(field(&doc, "ended"), ["interrupted"]);
    assert!(err.contains("relay: session 1 slow: interrupted"), "{err}");
    // Nothing lost: the half-done file is in the checkpoint written on the way out.
    let id = doc["sessions"][0]["checkpoint"].as_str().unwrap();
    let ckpt = checkpoint(&p, id);
    assert_eq!(ckpt["trigger"], "relay-interrupt");
    assert!(
        ckpt["git"]["dirty"].to_string().contains("work.txt"),
        "{ckpt}"
    );
    p.ctxkeep(&["verify"]).assert().success();
}

/// SIGINT to the relay process, as a terminal's Ctrl-C does.
fn interrupt(child: &std::process::Child) {
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// An agent that carries on after SIGTERM gets the grace period, and a second Ctrl-C cuts it
/// short. The grace is made longer than the test may take (`CTXKEEP_TEST_RELAY_GRACE_SECS`), so
/// the relay ends only if the second interrupt killed the agent: no clock decides. The second
/// is sent once the agent shows it got the first's SIGTERM (two signals sent at once can
/// arrive as one).
#[test]
fn a_second_interrupt_kills_an_agent_that_ignores_sigterm() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "stubborn",
        &format!(
            "trap 'echo term >> \"{home}/got-term\"' TERM\necho $$ > '{home}/started'\n\
             while :; do sleep 0.1; done"
        ),
    );
    let child = command(&p, &["--agent-cmd", &a])
        .env("CTXKEEP_TEST_RELAY_GRACE_SECS", "3600")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let agent_pid = read_pid_file(&p.home().join("started"));
    interrupt(&child);
    wait_for_file(&p.home().join("got-term"));
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("relay: session 1 stubborn: interrupted"),
        "{err}"
    );
    // The script `sh -c` started, which outlived it, is gone too.
    assert!(
        crate::support::process_ends(agent_pid),
        "the agent's loop {agent_pid} still runs"
    );
}

/// Ctrl-C and SIGTERM that arrive together, before relay looked (a quick double Ctrl-C): the
/// second cuts the grace short all the same (it used to count as the first, and the relay
/// waited the whole grace). The grace is longer than the test may take, so only the kill ends it.
#[test]
fn two_signals_at_once_kill_an_agent_that_ignores_sigterm() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "stubborn",
        &format!(
            "trap 'echo term >> \"{home}/got-term\"' TERM\necho $$ > '{home}/started'\n\
             while :; do sleep 0.1; done"
        ),
    );
    let mut child = command(&p, &["--agent-cmd", &a])
        .env("CTXKEEP_TEST_RELAY_GRACE_SECS", "3600")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let agent_pid = read_pid_file(&p.home().join("started"));
    let relay_pid = child.id() as libc::pid_t;
    // SAFETY: kill(2) to the relay this test started; no memory is shared.
    unsafe {
        assert_eq!(libc::kill(relay_pid, libc::SIGINT), 0);
        assert_eq!(libc::kill(relay_pid, libc::SIGTERM), 0);
    }
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if t0.elapsed() > Duration::from_secs(300) {
            child.kill().unwrap();
            panic!("the relay waited out its grace: the second signal was lost");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    assert!(
        crate::support::process_ends(agent_pid),
        "the agent {agent_pid} still runs"
    );
}

/// Waits for a file a test's child writes (a sync point; the bound only guards against a hang).
fn wait_for_file(path: &std::path::Path) {
    let t0 = Instant::now();
    while !path.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `--max-time` stops a session still running: it ends as timed out, before the line after
/// the agent's long wait.
#[test]
fn max_time_stops_a_running_session() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "sleeper",
        &format!("sleep 30\necho finished > '{home}/finished'"),
    );
    let (doc, code, err) = relay(&p, &["--agent-cmd", &a, "--max-time", "1s"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(doc["stopped"], "max-time");
    assert_eq!(field(&doc, "ended"), ["timed-out"]);
    assert!(
        !p.home().join("finished").exists(),
        "the agent ran to its end"
    );
}

#[test]
fn without_a_checkpoint_the_first_session_gets_the_prompt_alone() {
    let p = Project::initialized();
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "fresh",
        &format!(
            "cat > '{home}/prompt-'$CTXKEEP_RELAY_SESSION; echo x > out-$CTXKEEP_RELAY_SESSION.txt"
        ),
    );
    let none = p.ctxkeep(&["relay", "--agent-cmd", &a]).output().unwrap();
    assert_eq!(none.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&none.stderr).contains("give the first session a PROMPT"));

    let (doc, code, err) = relay(
        &p,
        &[
            "--agent-cmd",
            &a,
            "--until",
            "test -f out-2.txt",
            "--",
            "write the parser",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(p.home().join("prompt-1")).unwrap(),
        "write the parser"
    );
    assert_eq!(
        field(&doc, "link"),
        [Value::Null, Value::from("session-0001")]
    );
    assert_eq!(field(&doc, "checkpoint"), ["ckpt-0001", "ckpt-0002"]);
    let second = std::fs::read_to_string(p.home().join("prompt-2")).unwrap();
    assert!(second.contains("Recovered from ckpt-0001"), "{second}");
}

#[test]
fn dry_run_prints_the_commands_and_changes_nothing() {
    let p = ready();
    // The agents' CLIs, as stand-ins on PATH: a dry run checks they are there.
    agent(&p, "claude", "exit 0");
    agent(&p, "codex", "exit 0");
    let path = format!(
        "{}:{}",
        p.home().join("agents").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let before = p.snapshot();
    let out = command(
        &p,
        &[
            "--dry-run",
            "--agent",
            "claude-code",
            "--agent",
            "codex",
            "--agent-args",
            "claude-code=--permission-mode acceptEdits",
            "--agent-args",
            "--verbose",
            "--",
            "go on",
        ],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "first prompt: the resume prompt of ckpt-0001, then PROMPT\n\
         claude --permission-mode acceptEdits --verbose -p \"$PROMPT\"\n\
         codex exec --verbose -- \"$PROMPT\"\n"
    );
    let (doc, code, _) = relay(&p, &["--dry-run", "--agent-cmd", "./agent --fast"]);
    assert_eq!(code, 0);
    let dry: DryRun = serde_json::from_value(doc).unwrap();
    assert_eq!(dry.commands, ["sh -c './agent --fast' < \"$PROMPT\""]);
    assert!(dry.problems.is_empty(), "{:?}", dry.problems);
    assert!(crate::support::diff(&before, &p.snapshot()).is_empty());
}

#[test]
fn dry_run_checks_what_would_stop_the_real_run() {
    let p = ready();
    let s = p.state().replace(
        "  phase: \"implementing the parser\"",
        "  phase: \"edited by hand\"",
    );
    p.write("project-state.md", &s);
    let before = p.snapshot();
    let out = command(&p, &["--dry-run", "--agent", "gemini"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a dry run that found problems");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("warning: `gemini` is not on PATH"), "{err}");
    assert!(
        err.contains("warning: checkpoint ckpt-0001 was changed by hand"),
        "{err}"
    );
    assert!(crate::support::diff(&before, &p.snapshot()).is_empty());
}

#[test]
fn bad_flags_are_usage_errors_and_a_missing_agent_cli_is_refused() {
    let p = ready();
    for args in [
        vec![],
        vec!["--agent-cmd", "true", "--max-time", "soon"],
        vec!["--agent-cmd", "true", "--max-sessions", "0"],
        vec!["--agent-cmd", "true", "--agent-args", "--yolo"],
    ] {
        let out = command(&p, &args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let out = command(&p, &["--agent", "gemini"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`gemini` is not on PATH"));
    assert!(!p.path(".ctxkeep/chain.jsonl").exists());
}

/// What an agent leaves running in its process group (`sleep … & exit 0`)
/// is stopped when its session ends: nothing outlives the relay.
#[test]
fn an_agent_leaves_nothing_running_after_its_session() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(
        &p,
        "leaver",
        &format!("sleep 1017 & echo $! > '{home}/bg.pid'\nexit 0"),
    );
    let (doc, code, err) = relay(&p, &["--agent-cmd", &a, "--max-sessions", "1"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(doc["stopped"], "max-sessions");
    assert_eq!(field(&doc, "ended"), ["exited"]);
    let pid = read_pid_file(&p.home().join("bg.pid"));
    assert!(
        !process_running(pid),
        "the agent's background sleep still runs"
    );
}

/// SIGTERM or SIGINT while `--until` runs stops the check's whole process
/// group and the relay exits 130 (before, `--until 'sleep 1017'` ran on
/// after both).
#[test]
fn a_signal_during_the_until_check_stops_it_and_exits_130() {
    for signal in ["TERM", "INT"] {
        let p = ready();
        let home = p.home().display().to_string();
        let a = agent(&p, "quick", "exit 0");
        let until = format!("sleep 1017 & echo $! > '{home}/until.pid'; wait");
        let child = command(&p, &["--json", "--agent-cmd", &a, "--until", &until])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = read_pid_file(&p.home().join("until.pid"));
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(130), "{signal}: {err}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["stopped"], "interrupted", "{signal}");
        assert!(
            !process_running(pid),
            "{signal}: the --until check still runs"
        );
    }
}

/// `--until` has a timeout: a check still running then is stopped with
/// its group and counts as not passed; the relay goes on to its limits.
#[test]
fn an_until_check_past_its_timeout_is_stopped_and_does_not_pass() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(&p, "quick", "exit 0");
    let until = format!("sleep 1017 & echo $! > '{home}/until.pid'; wait");
    let (doc, code, err) = relay(
        &p,
        &[
            "--agent-cmd",
            &a,
            "--until",
            &until,
            "--until-timeout",
            "1s",
            "--max-sessions",
            "1",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(doc["stopped"], "max-sessions");
    assert!(err.contains("--until-timeout"), "{err}");
    let pid = read_pid_file(&p.home().join("until.pid"));
    assert!(!process_running(pid), "the --until check still runs");
    for (args, what) in [
        (
            vec![
                "--agent-cmd",
                &a,
                "--until",
                "true",
                "--until-timeout",
                "soon",
            ],
            "--until-timeout",
        ),
        (vec!["--agent-cmd", &a, "--until-timeout", "5m"], "--until"),
    ] {
        let out = command(&p, &args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(what), "{err}");
    }
}

/// An agent that writes NUL bytes into the state file leaves it damaged:
/// relay says so, naming the file, exit 65 (not "no checkpoint yet").
#[test]
fn an_agent_that_damages_the_state_file_stops_the_relay_as_bad_data() {
    for damage in [
        "printf 'x\\000y' > project-state.md",
        "printf '\\000\\000' >> project-state.md",
    ] {
        let p = ready();
        let a = agent(&p, "nuls", damage);
        let (doc, code, err) = relay(&p, &["--agent-cmd", &a, "--max-sessions", "2"]);
        assert_eq!(code, 65, "{damage}: {err}");
        assert_eq!(doc["error"]["code"], "bad_data", "{doc}");
        let msg = doc["error"]["message"].as_str().unwrap();
        assert!(msg.contains("project-state.md"), "{msg}");
        assert!(msg.contains("NUL byte"), "{msg}");
        assert!(!err.contains("no checkpoint yet"), "{err}");
    }
}

/// An agent that overwrites the state file with its own notes: the relay stops saying what
/// happened (the file lost the checkpoint written before), not that there is none yet.
#[test]
fn a_state_file_overwritten_by_the_agent_is_named_as_such() {
    let p = ready();
    let a = agent(
        &p,
        "scribbler",
        "cat > /dev/null\nprintf '# my own notes\\n' > project-state.md",
    );
    let out = command(&p, &["--agent-cmd", &a, "--max-sessions", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(66), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains("holds no checkpoint any more, though ckpt-0001 was written")
            && !last.contains("no checkpoint yet"),
        "{err}"
    );
}

/// `kill -9` of the relay, which leaves it no chance to stop its session: the agent dies
/// with it instead of running on unwatched.
#[test]
fn the_agent_dies_with_a_relay_killed_outright() {
    assert_the_agent_dies_with_a_relay_killed_outright(&[]);
}

/// The instant right after relay started the agent's process, held open
/// by the test-only pause: a kill there must take the agent along too.
#[test]
fn the_agent_dies_with_a_relay_killed_right_after_starting_it() {
    assert_the_agent_dies_with_a_relay_killed_outright(&[(
        "CTXKEEP_TEST_PAUSE_AFTER_SPAWN",
        "600000",
    )]);
}

/// Starts relay (with `env`) on an agent that runs a long `sleep` through
/// `sh -c`, kills relay with SIGKILL once the agent runs, and checks the
/// agent's own process, a grandchild of relay, ends.
fn assert_the_agent_dies_with_a_relay_killed_outright(env: &[(&str, &str)]) {
    let p = ready();
    let pid_file = p.home().join("agent.pid");
    let a = agent(
        &p,
        "long",
        &format!("echo $$ > '{}'\nexec sleep 600", pid_file.display()),
    );
    let mut child = command(&p, &["--agent-cmd", &a])
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let agent_pid = read_pid_file(&pid_file);
    assert!(process_running(agent_pid));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        crate::support::process_ends(agent_pid),
        "the agent {agent_pid} still runs after the relay was killed"
    );
}

/// The `--until` check runs through `sh -c` as an agent does: a relay
/// killed outright during it leaves nothing of it running either.
#[test]
fn the_until_check_dies_with_a_relay_killed_outright() {
    let p = ready();
    let home = p.home().display().to_string();
    let a = agent(&p, "quick", "exit 0");
    let until = format!("sleep 1017 & echo $! > '{home}/until.pid'; wait");
    let mut child = command(&p, &["--agent-cmd", &a, "--until", &until])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = read_pid_file(&p.home().join("until.pid"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        crate::support::process_ends(pid),
        "the --until check's sleep {pid} still runs after the relay was killed"
    );
}
