//! `ctxkeep hook`, `statusline` and `hooks install|uninstall|doctor`: agents'
//! payloads in their real shapes, a transcript the test grows, settings files
//! with the user's own entries.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::support::{self, Project};
use crate::transcripts::*;

/// What a hook prints when it has something for the model.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Reply {
    hook_specific_output: SpecificOutput,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SpecificOutput {
    hook_event_name: String,
    additional_context: String,
}

/// `statusline --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StatusLineView {
    session: String,
    tokens: Option<u64>,
    window: u64,
    percent: Option<f64>,
    limit: u64,
    limit_percent: Option<f64>,
    limit_source: String,
    stage: Option<String>,
    handoff_due: bool,
    last_checkpoint: Option<CheckpointRef>,
    line: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CheckpointRef {
    id: String,
    created_at: String,
}

/// `hooks install|uninstall --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Edit {
    settings: String,
    dry_run: bool,
    changed: bool,
    changes: Vec<EditChange>,
    kept_status_line: Option<String>,
    kept_in: Option<String>,
    composed_with: Option<String>,
    pub next_steps: Vec<String>,
    pub mcp: Option<McpEdit>,
    pub plugin: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpEdit {
    pub config: String,
    pub changed: bool,
    pub changes: Vec<EditChange>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditChange {
    pub op: String,
    pub key: String,
    pub command: String,
}

/// `hooks doctor --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Doctor {
    settings: String,
    ok: bool,
    checks: Vec<DoctorCheck>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DoctorCheck {
    name: String,
    ok: bool,
    detail: String,
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

fn hook(p: &Project, agent: &str, payload: &str, extra: &[&str]) -> Ran {
    let mut args = vec!["hook", agent];
    args.extend_from_slice(extra);
    let out = p.ctxkeep(&args).write_stdin(payload).output().unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// A Claude Code hook payload for `event` in `session`, with `extra` fields.
fn claude(p: &Project, event: &str, session: &str, extra: Value) -> String {
    let mut v = json!({
        "session_id": session,
        "transcript_path": p.path("transcript.jsonl"),
        "cwd": p.root(),
        "permission_mode": "default",
        "hook_event_name": event,
    });
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v.to_string()
}

fn reply(ran: &Ran) -> SpecificOutput {
    assert_eq!(ran.code, 0, "stderr: {}", ran.stderr);
    serde_json::from_str::<Reply>(&ran.stdout)
        .unwrap_or_else(|e| panic!("{e}: {:?}", ran.stdout))
        .hook_specific_output
}

fn events(p: &Project, kind: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(p.path(".ctxkeep/events.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == kind)
        .collect()
}

fn archived(p: &Project, id: &str) -> Value {
    serde_json::from_str(&p.read(&format!(".ctxkeep/checkpoints/{id}.json"))).unwrap()
}

fn session(p: &Project, id: &str) -> Value {
    serde_json::from_str(&p.read(&format!(".ctxkeep/sessions/{id}.json"))).unwrap()
}

/// Appends an assistant reply with `context` tokens to the transcript.
fn grow(p: &Project, n: u32, context: u64) {
    let mut text = std::fs::read_to_string(p.path("transcript.jsonl")).unwrap_or_default();
    text.push_str(&jsonl(&[
        claude_user(&format!("prompt{n}")),
        claude_assistant(&format!("msg_{n}"), 6, 1_000, context - 1_006),
    ]));
    p.write("transcript.jsonl", text);
}

#[test]
fn a_whole_claude_code_session_closes_the_compaction_loop() {
    let mut p = Project::initialized();
    p.checkpoint(&["--decision", "keep serde_yaml behind a cap"])
        .success();
    // This session's token counts are percents of the window, as stages were
    // measured before limits (tests/cli/limits.rs has them against the limit).
    let text = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\ncompaction:\n  stages: window\n",
        1,
    );
    p.write("project-state.md", text);

    // A new session: the checkpoint is newer than any session, so it is injected.
    p.set_now("2026-01-15T10:01:00Z");
    let start = reply(&hook(
        &p,
        "claude-code",
        &claude(
            &p,
            "SessionStart",
            "sess-1",
            json!({ "source": "startup", "model": "claude-opus-4-6" }),
        ),
        &[],
    ));
    assert_eq!(start.hook_event_name, "SessionStart");
    assert!(start
        .additional_context
        .contains("Recovered from ckpt-0001"));

    // Usage climbs; nothing is said until a stage is crossed.
    for (n, context) in [(1, 40_000), (2, 100_000), (3, 150_000)] {
        grow(&p, n, context);
        let ran = hook(
            &p,
            "claude-code",
            &claude(
                &p,
                "UserPromptSubmit",
                "sess-1",
                json!({ "prompt": "go on" }),
            ),
            &[],
        );
        assert_eq!((ran.code, ran.stdout.as_str()), (0, ""), "{}", ran.stderr);
    }
    assert_eq!(session(&p, "sess-1")["tokens"], 150_000);

    grow(&p, 4, 170_000);
    let warn = reply(&hook(
        &p,
        "claude-code",
        &claude(
            &p,
            "UserPromptSubmit",
            "sess-1",
            json!({ "prompt": "go on" }),
        ),
        &[],
    ));
    assert_eq!(warn.hook_event_name, "UserPromptSubmit");
    assert!(
        warn.additional_context.contains("stage-80 (warn)"),
        "{}",
        warn.additional_context
    );
    assert!(warn.additional_context.contains("ctxkeep checkpoint"));

    p.set_now("2026-01-15T10:20:00Z");
    grow(&p, 5, 182_000);
    let stage = reply(&hook(
        &p,
        "claude-code",
        &claude(
            &p,
            "PostToolUse",
            "sess-1",
            json!({ "tool_name": "Bash", "tool_input": {}, "tool_response": {} }),
        ),
        &[],
    ));
    assert_eq!(stage.hook_event_name, "PostToolUse");
    assert!(stage.additional_context.contains("stage-90 (checkpoint)"));
    assert!(stage
        .additional_context
        .contains("Checkpoint ckpt-0002 was written"));
    assert_eq!(archived(&p, "ckpt-0002")["trigger"], "stage-90");

    // Claude compacts on its own: the checkpoint records the budget before
    // (and is written because there is new work since the stage's); the
    // answer, plain text, is the brief Claude Code hands its summarizer.
    p.set_now("2026-01-15T10:30:00Z");
    p.write("src/lexer.rs", "fn lex() {}\n");
    let ran = hook(
        &p,
        "claude-code",
        &claude(
            &p,
            "PreCompact",
            "sess-1",
            json!({ "trigger": "auto", "custom_instructions": null }),
        ),
        &[],
    );
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stdout.contains("checkpoint ckpt-0003") && !ran.stdout.starts_with('{'),
        "{}",
        ran.stdout
    );
    let pre = archived(&p, "ckpt-0003");
    assert_eq!(pre["trigger"], "pre-compact");
    assert_eq!(pre["budget"]["tokens"], 182_000);
    assert_eq!(pre["budget"]["percent"], 91.0);
    // The session's own record says what the work is ("prompt5"): the hand-set headline,
    // about other work, is kept as earlier.
    assert_eq!(pre["headline_from"], "session");
    assert_eq!(pre["line"]["session"], "sess-1");
    assert_eq!(
        pre["earlier_by_hand"]["next_action"],
        "run cargo test and fix the failing split test"
    );
    let logged = events(&p, "checkpoint");
    let last = logged.last().unwrap();
    assert_eq!(
        (last["id"].as_str(), last["compaction"].as_str()),
        (Some("ckpt-0003"), Some("auto"))
    );
    assert!(p.state().contains("trigger: pre-compact"));

    // The restored session starts before the summary can be read: a short
    // note with the checkpoint's id and a nonce, not the whole prompt.
    let mut text = p.read("transcript.jsonl");
    text.push_str(&jsonl(&[claude_compact_boundary(Some(30_000))]));
    p.write("transcript.jsonl", text);
    p.set_now("2026-01-15T10:31:00Z");
    let resumed = reply(&hook(
        &p,
        "claude-code",
        &claude(&p, "SessionStart", "sess-1", json!({ "source": "compact" })),
        &[],
    ));
    let note = &resumed.additional_context;
    assert!(note.contains("checkpoint ckpt-0003"), "{note}");
    assert!(!note.contains("Recovered from"), "{note}");
    let started = events(&p, "session_start");
    assert_eq!(started.last().unwrap()["after_summary"], "waiting");
    assert_eq!(
        session(&p, "sess-1")["fired"],
        json!([]),
        "every stage re-armed"
    );

    // The note asks for an acknowledgement; echoing the nonce is one.
    let nonce = note
        .split("(ctxkeep ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("a nonce in the note")
        .to_string();
    let (status, _) = p.json(&["status", "--session", "sess-1"]);
    assert_eq!(status["acknowledged"], false);
    let echo = json!({
        "type": "assistant", "isSidechain": false, "uuid": "ack-1",
        "message": {"id": "msg_ack", "model": "claude-opus-4-6", "role": "assistant",
            "content": [{"type": "text", "text": format!("Resuming from ckpt-0003 (ctxkeep {nonce})\n\nRunning the tests first.")}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 29_990, "output_tokens": 5}}
    });
    let mut text = p.read("transcript.jsonl");
    text.push_str(&format!("{echo}\n"));
    p.write("transcript.jsonl", text);

    // PostCompact without its summary, and none in the transcript: the audit
    // says so, and the next prompt gets the whole prompt after all.
    let ran = hook(
        &p,
        "claude-code",
        &claude(&p, "PostCompact", "sess-1", json!({ "trigger": "auto" })),
        &[],
    );
    assert_eq!((ran.code, ran.stdout.as_str()), (0, ""), "{}", ran.stderr);
    assert!(events(&p, "compaction_audit").is_empty());
    let given = reply(&hook(
        &p,
        "claude-code",
        &claude(
            &p,
            "UserPromptSubmit",
            "sess-1",
            json!({ "prompt": "next" }),
        ),
        &[],
    ));
    let prompt = &given.additional_context;
    assert!(prompt.chars().count() <= 10_000);
    for recovered in [
        "Recovered from ckpt-0003",
        "(pre-compact",
        "- Task and next step: from this session's own record",
        "- Controlling agent: claude-code",
        "Earlier, by hand",
        "> - Phase: implementing the parser; Task: parse front matter in src/state.rs; next action then: run cargo test and fix the failing split test",
        &format!("`Resuming from ckpt-0003 (ctxkeep {nonce})`"),
    ] {
        assert!(
            prompt.contains(recovered),
            "{recovered:?} missing from {prompt}"
        );
    }
    let audits = events(&p, "compaction_audit");
    assert_eq!(audits.len(), 1);
    assert_eq!(
        (&audits[0]["unreadable"], &audits[0]["summary_chars"]),
        (&json!("not found"), &Value::Null)
    );
    assert_eq!(session(&p, "sess-1")["tokens"], 30_000);
    let (status, _) = p.json(&["status", "--session", "sess-1"]);
    assert_eq!(
        status["acknowledged"], true,
        "the echoed nonce acknowledges the restore"
    );

    // The gauge starts again from the compacted size; a new climb fires again.
    grow(&p, 6, 165_000);
    let again = reply(&hook(
        &p,
        "claude-code",
        &claude(
            &p,
            "UserPromptSubmit",
            "sess-1",
            json!({ "prompt": "more" }),
        ),
        &[],
    ));
    assert!(again.additional_context.contains("stage-80"));
    assert!(events(&p, "error").is_empty());
}

#[test]
fn startup_injects_only_a_checkpoint_newer_than_the_last_session() {
    let mut p = Project::initialized();
    let start = |p: &Project, id: &str| {
        hook(
            p,
            "claude-code",
            &claude(p, "SessionStart", id, json!({ "source": "startup" })),
            &[],
        )
    };
    // No checkpoint yet: nothing to inject.
    let ran = start(&p, "a");
    assert_eq!((ran.code, ran.stdout.as_str()), (0, ""));

    p.set_now("2026-01-15T11:00:00Z");
    p.checkpoint(&[]).success();
    p.set_now("2026-01-15T11:05:00Z");
    assert!(reply(&start(&p, "b"))
        .additional_context
        .contains("ckpt-0001"));

    // The last session started after that checkpoint: a plain new session.
    p.set_now("2026-01-15T12:00:00Z");
    let ran = start(&p, "c");
    assert_eq!((ran.code, ran.stdout.as_str()), (0, ""));

    // resume and clear always get it.
    for source in ["resume", "clear"] {
        let ran = hook(
            &p,
            "claude-code",
            &claude(&p, "SessionStart", "d", json!({ "source": source })),
            &[],
        );
        assert!(
            reply(&ran).additional_context.contains("ckpt-0001"),
            "{source}"
        );
    }
}

#[test]
fn the_injected_prompt_fits_claudes_limit_and_warns_of_hand_edits() {
    let p = Project::initialized();
    let long_next = "check every parser branch ".repeat(600);
    p.ctxkeep(&[
        "checkpoint",
        "--phase",
        "p",
        "--task",
        "t",
        "--agent",
        "a",
        "--next",
        &long_next,
    ])
    .assert()
    .success();
    let clear = claude(&p, "SessionStart", "s", json!({ "source": "clear" }));
    let prompt = reply(&hook(&p, "claude-code", &clear, &[])).additional_context;
    assert_eq!(prompt.chars().count(), 10_000);
    assert!(prompt.contains("Recovered from ckpt-0001"));
    assert!(
        prompt.ends_with("run `ctxkeep resume` for the rest]\n"),
        "{}",
        &prompt[9_900..]
    );
    assert_eq!(events(&p, "session_start")[0]["cut"], true);

    p.checkpoint(&[]).success();
    let edited = p.state().replace(
        "run cargo test and fix the failing split test",
        "fix the CRLF case first",
    );
    p.write("project-state.md", edited);
    let prompt = reply(&hook(&p, "claude-code", &clear, &[])).additional_context;
    assert!(
        prompt.starts_with("WARNING: checkpoint ckpt-0002 was changed by hand"),
        "{prompt}"
    );
    assert!(prompt.contains("- Next action: fix the CRLF case first"));
}

#[test]
fn garbage_fails_open_with_an_error_event_and_strict_blocks() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let state = p.state();
    for garbage in ["not json at all", "[1,2]", "{\"session_id\":\"s\"}", ""] {
        let ran = hook(&p, "claude-code", garbage, &[]);
        assert_eq!(ran.code, 0, "{garbage:?}");
        assert_eq!(ran.stdout, "");
        assert_eq!(ran.stderr.lines().count(), 1, "{:?}", ran.stderr);
        assert!(ran
            .stderr
            .starts_with("ctxkeep: hook error: <stdin>: hook input"));
    }
    let errors = events(&p, "error");
    assert_eq!(errors.len(), 4);
    assert_eq!(errors[0]["command"], "hook");
    assert_eq!(errors[0]["code"], "bad_data");
    assert_eq!(p.state(), state, "nothing else changed");

    let ran = hook(&p, "claude-code", "nope", &["--strict"]);
    assert_eq!(ran.code, 2);
    assert_eq!(ran.stderr.lines().count(), 1);

    // A payload without a session id fails open too, naming the problem.
    let ran = hook(
        &p,
        "claude-code",
        r#"{"hook_event_name":"UserPromptSubmit","prompt":"x"}"#,
        &[],
    );
    assert_eq!(ran.code, 0);
    assert!(ran.stderr.contains("no session_id"), "{}", ran.stderr);
    assert_eq!(
        events(&p, "error").last().unwrap()["hook_event"],
        "UserPromptSubmit"
    );
}

#[test]
fn a_broken_state_file_fails_open_and_strict_says_so() {
    let p = Project::initialized();
    p.write("project-state.md", "---\ncheckpoint: [unclosed\n---\n");
    let payload = claude(&p, "PreCompact", "s", json!({ "trigger": "manual" }));
    let ran = hook(&p, "claude-code", &payload, &[]);
    assert_eq!(ran.code, 0);
    assert!(ran.stderr.contains("project-state.md"), "{}", ran.stderr);
    assert_eq!(events(&p, "error").len(), 1);
    assert_eq!(hook(&p, "claude-code", &payload, &["--strict"]).code, 2);
}

#[test]
fn stop_unknown_events_and_a_missing_transcript_do_nothing() {
    let p = Project::initialized();
    for event in ["Stop", "Notification", "SubagentStop"] {
        let ran = hook(&p, "claude-code", &claude(&p, event, "s", json!({})), &[]);
        assert_eq!(
            (ran.code, ran.stdout.as_str(), ran.stderr.as_str()),
            (0, "", "")
        );
    }
    // The first prompt of a session comes before its transcript exists.
    let ran = hook(
        &p,
        "claude-code",
        &claude(&p, "UserPromptSubmit", "s", json!({ "prompt": "hi" })),
        &[],
    );
    assert_eq!(
        (ran.code, ran.stdout.as_str(), ran.stderr.as_str()),
        (0, "", "")
    );
    assert!(!p.path(".ctxkeep/events.jsonl").exists() || events(&p, "error").is_empty());
    assert!(!p.path(".ctxkeep/sessions/s.json").exists());
}

#[test]
fn session_end_writes_a_cheap_checkpoint_once_there_is_one() {
    let p = Project::initialized();
    let end = claude(
        &p,
        "SessionEnd",
        "s",
        json!({ "reason": "prompt_input_exit" }),
    );
    let ran = hook(&p, "claude-code", &end, &[]);
    assert_eq!((ran.code, ran.stderr.as_str()), (0, ""));
    assert!(
        !p.state().contains("ckpt-"),
        "no checkpoint before the first one"
    );

    p.checkpoint(&[]).success();
    p.ctxkeep(&["track", "--session", "s", "--tokens", "50000"])
        .assert()
        .success();
    p.write("src/lexer.rs", "fn lex() {}\n");
    let ran = hook(&p, "claude-code", &end, &[]);
    assert_eq!(
        (ran.code, ran.stdout.as_str(), ran.stderr.as_str()),
        (0, "", "")
    );
    let c = archived(&p, "ckpt-0002");
    assert_eq!(c["trigger"], "session-end");
    assert_eq!(c["budget"]["tokens"], 50_000);
    assert_eq!(c["phase"], "implementing the parser");
    assert_eq!(
        events(&p, "checkpoint").last().unwrap()["reason"],
        "prompt_input_exit"
    );

    // Another end with nothing new since: skipped, the file untouched.
    let before = p.state();
    let ran = hook(&p, "claude-code", &end, &[]);
    assert_eq!((ran.code, ran.stderr.as_str()), (0, ""));
    assert_eq!(
        p.state(),
        before,
        "nothing new: project-state.md not rewritten"
    );
    assert!(!p.path(".ctxkeep/checkpoints/ckpt-0003.json").exists());
    let skipped = events(&p, "checkpoint_skipped");
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["same_as"], "ckpt-0002");
    assert_eq!(skipped[0]["trigger"], "session-end");
}

fn statusline(p: &Project, payload: &str) -> StatusLineView {
    let out = p
        .ctxkeep(&["--json", "statusline"])
        .write_stdin(payload)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_status_line_prefers_current_usage_and_remembers_the_window() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    // `total_input_tokens` is a cumulative token count here: never the context.
    let payload = json!({
        "session_id": "sl-1", "transcript_path": p.path("transcript.jsonl"), "cwd": p.root(),
        "model": { "id": "claude-opus-4-6[1m]", "display_name": "Opus" }, "version": "2.1.90",
        "context_window": { "total_input_tokens": 915_500, "context_window_size": 1_000_000,
            "used_percentage": 17, "current_usage": { "input_tokens": 8_500, "output_tokens": 1_200,
            "cache_creation_input_tokens": 5_000, "cache_read_input_tokens": 156_500 } },
    });
    let v = statusline(&p, &payload.to_string());
    assert_eq!(
        (v.session.as_str(), v.tokens, v.window),
        ("sl-1", Some(170_000), 1_000_000)
    );
    assert_eq!(v.percent, Some(17.0));
    assert_eq!(v.stage, None);
    assert!(!v.handoff_due);
    assert_eq!(v.last_checkpoint.unwrap().id, "ckpt-0001");
    assert!(
        v.line
            .starts_with("ctxkeep ▰▱▱▱▱▱▱▱▱▱ 17 % to compaction · 170k/967k · ckpt-0001"),
        "{}",
        v.line
    );

    let plain = p
        .ctxkeep(&["statusline"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(plain.stdout).unwrap(),
        format!("{}\n", v.line)
    );
    assert!(
        events(&p, "stage").is_empty(),
        "the status line fires no stage"
    );

    // A later hook reads 170k from the transcript: 17 % of the remembered
    // 1M window, not 85 % of the model table's 200k, so nothing fires.
    grow(&p, 1, 170_000);
    let ran = hook(
        &p,
        "claude-code",
        &claude(&p, "UserPromptSubmit", "sl-1", json!({ "prompt": "x" })),
        &[],
    );
    assert_eq!((ran.code, ran.stdout.as_str()), (0, ""), "{}", ran.stderr);
    let s = session(&p, "sl-1");
    assert_eq!(
        (s["window"].as_u64(), s["percent"].as_f64()),
        (Some(1_000_000), Some(17.0))
    );
}

#[test]
fn an_old_status_line_payload_falls_back_to_the_transcript() {
    let p = Project::initialized();
    grow(&p, 1, 90_000);
    let old = json!({
        "session_id": "old", "transcript_path": p.path("transcript.jsonl"), "cwd": p.root(),
        "model": { "id": "claude-sonnet-4-20250514", "display_name": "Sonnet 4" }, "version": "1.0.88",
        "context_window": { "total_input_tokens": 420_000, "total_output_tokens": 3_200, "context_window_size": 200_000 },
    });
    let v = statusline(&p, &old.to_string());
    assert_eq!(
        (v.tokens, v.window, v.percent),
        (Some(90_000), 200_000, Some(45.0))
    );
    assert!(v.line.contains("90k/167k · no checkpoint"), "{}", v.line);

    // No context window at all, no transcript: drawn as unknown.
    let bare = json!({ "session_id": "bare", "exceeds_200k_tokens": false });
    let v = statusline(&p, &bare.to_string());
    assert_eq!(v.tokens, None);
    assert!(
        v.line.starts_with("ctxkeep ready · no checkpoint"),
        "{}",
        v.line
    );

    // Garbage still draws a line (saying what is wrong), and exits 0.
    let out = p
        .ctxkeep(&["statusline"])
        .write_stdin("{oops")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.starts_with("ctxkeep: <stdin>: status-line input is not valid JSON"),
        "{line}"
    );
}

const USER_SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": { "allow": ["Bash(cargo test:*)"] },
  "hooks": {
    "PostToolUse": [
      { "matcher": "Write|Edit", "hooks": [{ "type": "command", "command": "cargo fmt" }] }
    ],
    "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]
  },
  "env": { "FOO": "1" }
}
"#;

fn edit(p: &Project, args: &[&str]) -> Edit {
    let mut all = vec!["hooks"];
    all.extend_from_slice(args);
    let (v, code) = p.json(&all);
    assert_eq!(code, 0, "{v}");
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

/// Claude Code's status line: silent where ctxkeep is not installed.
const CC_STATUS_LINE: &str =
    "command -v ctxkeep >/dev/null 2>&1 || { cat >/dev/null; exit 0; }; ctxkeep statusline";

/// Claude Code's hook command: silent where ctxkeep is not installed.
const CC_HOOK: &str =
    "command -v ctxkeep >/dev/null 2>&1 || { cat >/dev/null; exit 0; }; ctxkeep hook claude-code";

fn settings(p: &Project) -> Value {
    serde_json::from_str(&p.read(".claude/settings.json")).unwrap()
}

#[test]
fn install_merges_keeps_the_users_settings_and_uninstall_restores_them() {
    let p = Project::initialized();
    p.write(".claude/settings.json", USER_SETTINGS);
    let original: Value = serde_json::from_str(USER_SETTINGS).unwrap();

    let dry = edit(&p, &["install", "claude-code", "--team", "--dry-run"]);
    assert!(dry.dry_run && dry.changed);
    assert_eq!(dry.changes.len(), 11, "ten events and the status line");
    assert_eq!(
        p.read(".claude/settings.json"),
        USER_SETTINGS,
        "dry run writes nothing"
    );
    let text = p
        .ctxkeep(&["hooks", "install", "claude-code", "--team", "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("+ hooks.PreCompact: command -v ctxkeep >/dev/null 2>&1 || { cat >/dev/null; exit 0; }; ctxkeep hook claude-code"),
        "{text}"
    );
    assert!(text.contains(&format!("+ statusLine: {CC_STATUS_LINE}")));

    let done = edit(&p, &["install", "claude-code", "--team"]);
    assert!(done.changed && !done.dry_run);
    assert!(done.settings.ends_with(".claude/settings.json"));
    assert_eq!(done.kept_status_line, None);
    assert_eq!(
        done.plugin, None,
        "no ctxkeep plugin is enabled in this HOME"
    );
    let keys: Vec<(String, String)> = done
        .changes
        .iter()
        .map(|c| (c.op.clone(), c.key.clone()))
        .collect();
    assert!(keys.contains(&("added".into(), "hooks.SessionStart".into())));
    assert!(done
        .changes
        .iter()
        .all(|c| c.op == "added" && c.command.contains("ctxkeep ")));

    let s = settings(&p);
    let top: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(
        top,
        ["model", "permissions", "hooks", "env", "statusLine"],
        "order kept"
    );
    assert_eq!(s["permissions"], original["permissions"]);
    assert_eq!(s["env"], original["env"]);
    assert_eq!(
        s["hooks"]["Stop"][0], original["hooks"]["Stop"][0],
        "the user's Stop entry first, untouched"
    );
    let post = s["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(
        post[0], original["hooks"]["PostToolUse"][0],
        "the user's entry first, untouched"
    );
    assert_eq!(post[1]["hooks"][0]["command"], CC_HOOK);
    assert_eq!(s["hooks"]["Stop"][1]["hooks"][0]["command"], CC_HOOK);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "PostCompact",
        "SessionEnd",
    ] {
        assert_eq!(
            s["hooks"][event][0]["hooks"][0]["command"], CC_HOOK,
            "{event}"
        );
    }
    assert_eq!(
        s["statusLine"],
        json!({ "type": "command", "command": CC_STATUS_LINE })
    );

    // Twice changes nothing, not even a byte.
    let written = p.read(".claude/settings.json");
    let again = edit(&p, &["install", "claude-code", "--team"]);
    assert!(!again.changed && again.changes.is_empty());
    assert_eq!(p.read(".claude/settings.json"), written);

    let dry = edit(&p, &["uninstall", "claude-code", "--dry-run"]);
    assert!(dry.changed && dry.changes.iter().all(|c| c.op == "removed"));
    assert_eq!(p.read(".claude/settings.json"), written);
    let gone = edit(&p, &["uninstall", "claude-code"]);
    assert_eq!(gone.changes.len(), 11);
    assert_eq!(settings(&p), original, "exactly the user's settings again");
    assert!(!edit(&p, &["uninstall", "claude-code"]).changed);
}

#[test]
fn a_status_line_in_the_same_file_is_composed_and_given_back_unless_forced() {
    let p = Project::initialized();
    let mine = r#"{"statusLine":{"type":"command","command":"~/bin/my 'line'.sh","padding":0}}"#;
    p.write(".claude/settings.json", mine);
    let composed = edit(&p, &["install", "claude-code"]);
    assert_eq!(
        composed.composed_with.as_deref(),
        Some("~/bin/my 'line'.sh")
    );
    assert_eq!(composed.kept_status_line, None);
    let line = settings(&p)["statusLine"].clone();
    assert_eq!(line["padding"], 0, "their entry's other keys stay");
    assert_eq!(
        line["command"],
        r#"command -v ctxkeep >/dev/null 2>&1 || exec sh -c '~/bin/my '\''line'\''.sh'; exec ctxkeep statusline --with '~/bin/my '\''line'\''.sh'"#
    );
    let out = p
        .ctxkeep(&["hooks", "install", "claude-code"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8(out.stdout).unwrap().is_empty(),
        "twice: nothing to change"
    );
    // Uninstall gives their line back, byte for byte.
    edit(&p, &["uninstall", "claude-code"]);
    assert_eq!(p.read(".claude/settings.json"), mine);

    p.write(".claude/settings.json", mine);
    let forced = edit(&p, &["install", "claude-code", "--force"]);
    assert!(forced
        .changes
        .iter()
        .any(|c| c.op == "removed" && c.key == "statusLine" && c.command == "~/bin/my 'line'.sh"));
    assert_eq!(settings(&p)["statusLine"]["command"], CC_STATUS_LINE);
}

/// The status line of the user's at each of Claude Code's levels, and what an install at the
/// shared and at the personal level does with it: never a silent takeover.
#[test]
fn install_over_a_status_line_at_each_level_keeps_it_or_composes_it() {
    let line = |cmd: &str| format!(r#"{{"statusLine":{{"type":"command","command":"{cmd}"}}}}"#);
    let composed = |cmd: &str| {
        format!("command -v ctxkeep >/dev/null 2>&1 || exec sh -c '{cmd}'; exec ctxkeep statusline --with '{cmd}'")
    };
    // (where the user's line is, what a shared install writes, what a personal one writes)
    let user = |p: &Project| p.home().join(".claude/settings.json");
    let plugin_line = "node ~/.claude/plugins/cache/market/statusline/1.0.0/line.js";
    for (level, cmd) in [
        ("user", "ccusage statusline"),
        ("plugin", plugin_line),
        ("local", "~/bin/local-line.sh"),
    ] {
        let p = Project::initialized();
        let place = |p: &Project| match level {
            "local" => p.path(".claude/settings.local.json"),
            _ => user(p),
        };
        std::fs::create_dir_all(place(&p).parent().unwrap()).unwrap();
        std::fs::write(place(&p), line(cmd)).unwrap();
        let before = std::fs::read_to_string(place(&p)).unwrap();

        // The shared file gets no status line: it would replace every teammate's own.
        let shared = edit(&p, &["install", "claude-code"]);
        assert_eq!(shared.kept_status_line.as_deref(), Some(cmd), "{level}");
        assert_eq!(
            shared.kept_in.as_deref(),
            Some(place(&p).display().to_string().as_str()),
            "{level}"
        );
        assert!(settings(&p).get("statusLine").is_none(), "{level}");
        let out = p
            .ctxkeep(&["hooks", "install", "claude-code"])
            .output()
            .unwrap();
        let warned = String::from_utf8(out.stderr).unwrap();
        assert!(
            warned.contains("kept your status line") && warned.contains(&composed(cmd)),
            "{level}: {warned}"
        );
        assert_eq!(
            std::fs::read_to_string(place(&p)).unwrap(),
            before,
            "{level}: theirs untouched"
        );
        edit(&p, &["uninstall", "claude-code"]);

        // The personal file composes a line set below it; one set in it is composed in place.
        let personal = edit(&p, &["install", "claude-code", "--personal"]);
        assert_eq!(personal.composed_with.as_deref(), Some(cmd), "{level}");
        let local: Value = serde_json::from_str(&p.read(".claude/settings.local.json")).unwrap();
        assert_eq!(local["statusLine"]["command"], composed(cmd), "{level}");
        edit(&p, &["uninstall", "claude-code", "--personal"]);
        if level == "local" {
            assert_eq!(
                std::fs::read_to_string(place(&p)).unwrap(),
                before,
                "{level}"
            );
        } else {
            assert!(!p.path(".claude/settings.local.json").exists(), "{level}");
            assert_eq!(
                std::fs::read_to_string(place(&p)).unwrap(),
                before,
                "{level}"
            );
        }
    }
    // A line in the shared file: composed there (a teammate without ctxkeep runs it alone).
    let p = Project::initialized();
    p.write(".claude/settings.json", line("~/bin/team-line.sh"));
    let shared = edit(&p, &["install", "claude-code"]);
    assert_eq!(shared.composed_with.as_deref(), Some("~/bin/team-line.sh"));
    // And a personal install over it: the shared one is composed into the personal file.
    edit(&p, &["uninstall", "claude-code"]);
    let personal = edit(&p, &["install", "claude-code", "--personal"]);
    assert_eq!(
        personal.composed_with.as_deref(),
        Some("~/bin/team-line.sh")
    );
}

/// What a composed status line prints: the user's line, then ctxkeep's gauge; and where
/// ctxkeep is missing (a teammate's machine), the user's line alone, and for ctxkeep's own
/// line nothing at all: no error, no blank line.
#[test]
fn a_composed_status_line_shows_both_and_nothing_breaks_without_ctxkeep() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let payload = json!({
        "session_id": "sl-c", "transcript_path": p.path("transcript.jsonl"), "cwd": p.root(),
        "model": {"id": "claude-opus-4-6"}, "version": "2.1.200",
        "context_window": {"context_window_size": 200_000,
            "current_usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 113_000, "output_tokens": 5}},
    })
    .to_string();
    let run = |command: &str, path: &str| {
        let mut cmd = p.sh(command);
        cmd.env("PATH", path).env("COLUMNS", "120");
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        // A line that reads no input (theirs alone, where ctxkeep is missing) closes the pipe.
        let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
        let out = child.wait_with_output().unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
            out.status.code(),
        )
    };
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_ctxkeep"))
        .parent()
        .unwrap()
        .to_path_buf();
    let with_ctxkeep = format!("{}:/usr/bin:/bin", bin.display());
    let without = "/usr/bin:/bin";
    let theirs = "printf 'main ~/proj\\n'";
    let composed = format!(
        "command -v ctxkeep >/dev/null 2>&1 || exec sh -c '{}'; exec ctxkeep statusline --with '{}'",
        theirs.replace('\'', "'\\''"),
        theirs.replace('\'', "'\\''")
    );
    let (out, err, code) = run(&composed, &with_ctxkeep);
    assert_eq!((err.as_str(), code), ("", Some(0)));
    assert!(
        out.starts_with(
            "main ~/proj │ ctxkeep ▰▰▰▰▰▰▱▱▱▱ 67 % to compaction · 113k/167k · ckpt-0001"
        ),
        "{out:?}"
    );
    assert_eq!(out.lines().count(), 1);
    let (out, err, code) = run(&composed, without);
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("main ~/proj\n", "", Some(0))
    );
    let (out, err, code) = run(CC_STATUS_LINE, without);
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("", "", Some(0)),
        "nothing, not a blank line"
    );
}

#[test]
fn install_refuses_settings_it_cannot_read_and_changes_nothing() {
    let p = Project::initialized();
    for bad in ["{ \"model\": ", "[1, 2]", "{\"hooks\": []}"] {
        p.write(".claude/settings.json", bad);
        let out = p
            .ctxkeep(&["hooks", "install", "claude-code", "--team"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(65), "{bad}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(".claude/settings.json"), "{err}");
        assert_eq!(p.read(".claude/settings.json"), bad);
    }
    // --settings names another file; a missing one is created.
    let other = p.path("elsewhere/settings.local.json");
    let e = edit(
        &p,
        &[
            "install",
            "claude-code",
            "--settings",
            other.to_str().unwrap(),
        ],
    );
    assert!(e.changed);
    assert!(other.is_file());
}

/// The built binary's folder first on the PATH, as after `cargo install`.
pub(crate) fn path_with_ctxkeep() -> String {
    let bin = PathBuf::from(assert_cmd::cargo::cargo_bin!("ctxkeep"));
    format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `hooks doctor AGENT` as text, with this build's ctxkeep on the PATH the hooks run with: the
/// report and the exit code.
pub(crate) fn doctor_text(p: &Project, agent: &str) -> (String, Option<i32>) {
    let out = p
        .ctxkeep(&["hooks", "doctor", agent])
        .env("PATH", path_with_ctxkeep())
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

fn doctor(p: &Project) -> (Doctor, i32) {
    let out = p
        .ctxkeep(&["--json", "hooks", "doctor"])
        .env("PATH", path_with_ctxkeep())
        .output()
        .unwrap();
    let v: Doctor = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (v, out.status.code().unwrap())
}

#[test]
fn doctor_runs_each_installed_command_without_touching_the_project() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let (report, code) = doctor(&p);
    assert_eq!(code, 1, "nothing installed yet");
    assert!(!report.ok);
    assert!(report
        .checks
        .iter()
        .any(|c| c.name == "settings" && c.detail.contains("does not exist")));

    edit(&p, &["install", "claude-code", "--team"]);
    let state = p.state();
    let events_before = p.read(".ctxkeep/events.jsonl");
    let (report, code) = doctor(&p);
    assert_eq!(code, 0, "{report:?}");
    assert!(report.ok && report.settings.ends_with("settings.json"));
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "hooks.SessionStart",
            "hooks.UserPromptSubmit",
            "hooks.PreToolUse",
            "hooks.PostToolUse",
            "hooks.PostToolUseFailure",
            "hooks.PreCompact",
            "hooks.PostCompact",
            "hooks.PostModelSwitch",
            "hooks.Stop",
            "hooks.SessionEnd",
            "statusLine",
            "mcp"
        ]
    );
    assert!(report.checks.iter().all(|c| c.ok), "{report:?}");
    let status_line = &report.checks[names.iter().position(|n| *n == "statusLine").unwrap()];
    assert!(
        status_line
            .detail
            .contains("ctxkeep ▰▱▱▱▱▱▱▱▱▱ 12 % to compaction · 20k/167k"),
        "{:?}",
        status_line
    );
    // The line names the project's checkpoint, not one a hook wrote in the copy.
    assert!(
        status_line.detail.contains("ckpt-0001"),
        "{:?}",
        status_line
    );
    assert_eq!(p.state(), state, "the checks ran against a copy");
    assert_eq!(p.read(".ctxkeep/events.jsonl"), events_before);
    assert!(!p.path(".ctxkeep/sessions/ctxkeep-doctor.json").exists());

    // A hook command that fails is reported, and doctor exits 1.
    let mut s = settings(&p);
    s["hooks"]["PreCompact"][0]["hooks"][0]["command"] =
        json!("ctxkeep hook claude-code --no-such-flag");
    p.write(".claude/settings.json", s.to_string());
    let (report, code) = doctor(&p);
    assert_eq!(code, 1);
    let bad = report
        .checks
        .iter()
        .find(|c| c.name == "hooks.PreCompact")
        .unwrap();
    assert!(!bad.ok && bad.detail.contains("exit 2"), "{bad:?}");
}

#[test]
fn codex_notify_tracks_the_rollout_it_finds_by_thread_id() {
    let p = Project::initialized();
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join("sessions/2026/02/23");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(
        day.join("rollout-2026-02-23T12-19-38-019c8a70-dda7.jsonl"),
        jsonl(&[
            codex_meta(),
            codex_turn_context("gpt-5.3-codex"),
            codex_token_count((30_000, 51_680), 900_000, Some(258_400)),
        ]),
    )
    .unwrap();
    let notify = json!({
        "type": "agent-turn-complete", "thread-id": "019c8a70-dda7", "turn-id": "t1",
        "cwd": p.path("src"), "input-messages": ["fix it"], "last-assistant-message": "done",
        "client": "codex-tui",
    });
    // Run from elsewhere: the project is found from the payload's cwd.
    let out = p
        .ctxkeep(&["hook", "codex", &notify.to_string()])
        .env("CODEX_HOME", home.path())
        .current_dir(home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!((out.stdout.len(), out.stderr.len()), (0, 0));
    let s = session(&p, "019c8a70-dda7");
    assert_eq!(
        (s["tokens"].as_u64(), s["window"].as_u64()),
        (Some(51_680), Some(258_400))
    );
    assert_eq!(s["agent"], "codex");
}

#[test]
fn codex_and_gemini_hooks_track_and_reply_in_their_shapes() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write(
        "rollout.jsonl",
        jsonl(&[
            codex_meta(),
            codex_token_count((200_000, 210_000), 900_000, Some(258_400)),
        ]),
    );
    let codex = json!({
        "session_id": "cx", "transcript_path": p.path("rollout.jsonl"), "cwd": p.root(),
        "hook_event_name": "UserPromptSubmit", "model": "gpt-5.3-codex", "turn_id": "t", "prompt": "go",
    });
    let r = reply(&hook(&p, "codex", &codex.to_string(), &[]));
    assert_eq!(r.hook_event_name, "UserPromptSubmit");
    assert!(
        r.additional_context.contains("stage-80"),
        "81 %: {}",
        r.additional_context
    );

    p.write(
        "gemini.jsonl",
        jsonl(&[
            gemini_meta(),
            gemini_user("u1"),
            gemini_reply("g1", 120_000),
        ]),
    );
    let gemini = |event: &str, extra: Value| {
        let mut v = json!({
            "session_id": "gm", "transcript_path": p.path("gemini.jsonl"), "cwd": p.root(),
            "hook_event_name": event, "timestamp": "2026-04-23T12:53:10.000Z",
        });
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        hook(&p, "gemini", &v.to_string(), &[])
    };
    let ran = gemini("BeforeAgent", json!({ "prompt": "go" }));
    assert_eq!(
        (ran.code, ran.stdout.trim()),
        (0, "{}"),
        "Gemini wants JSON even when empty"
    );
    let s = session(&p, "gm");
    assert_eq!(
        (s["tokens"].as_u64(), s["agent"].as_str()),
        (Some(120_000), Some("gemini"))
    );

    // 120,000 tokens is far below Gemini's compression point (half of
    // 1,048,576): its PreCompress, fired before nearly every call, writes no
    // checkpoint.
    let ran = gemini("PreCompress", json!({ "trigger": "auto" }));
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(!p.path(".ctxkeep/checkpoints/ckpt-0002.json").exists());

    // Gemini puts a SessionStart's context in front of the prompt, so the
    // resume prompt waits for the first prompt that is not a slash command.
    let started = gemini("SessionStart", json!({ "source": "clear" }));
    assert_eq!((started.code, started.stdout.trim()), (0, "{}"));
    let slash = gemini("BeforeAgent", json!({ "prompt": "/compress" }));
    assert_eq!(
        slash.stdout.trim(),
        "{}",
        "nothing in front of a slash command"
    );
    let first = gemini("BeforeAgent", json!({ "prompt": "go on" }));
    assert!(reply(&first)
        .additional_context
        .contains("Recovered from ckpt-0001"));
    let next = gemini("BeforeAgent", json!({ "prompt": "and then" }));
    assert_eq!(next.stdout.trim(), "{}", "given once");
}

/// A Codex project's `.codex/hooks.json` with the user's own hooks.
const USER_CODEX_HOOKS: &str = r#"{
  "hooks": {
    "PostToolUse": [
      { "matcher": "^Bash$", "hooks": [{ "type": "command", "command": "./audit.sh", "timeout": 5 }] }
    ],
    "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]
  }
}
"#;

/// A Gemini project's `.gemini/settings.json` with settings and a hook of the user's.
const USER_GEMINI_SETTINGS: &str = r#"{
  "general": { "vimMode": true },
  "model": { "compressionThreshold": 0.7 },
  "hooks": {
    "AfterTool": [
      { "matcher": "write_file", "hooks": [{ "type": "command", "command": "./lint.sh", "name": "lint" }] }
    ]
  },
  "hooksConfig": { "enabled": true }
}
"#;

/// (agent, its file, the user's file, the events ctxkeep hooks in order)
const AGENTS: [(&str, &str, &str, &[&str]); 2] = [
    (
        "codex",
        ".codex/hooks.json",
        USER_CODEX_HOOKS,
        &[
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "Stop",
            "SessionEnd",
        ],
    ),
    (
        "gemini",
        ".gemini/settings.json",
        USER_GEMINI_SETTINGS,
        &[
            "SessionStart",
            "BeforeAgent",
            "BeforeTool",
            "AfterTool",
            "AfterAgent",
            "PreCompress",
            "SessionEnd",
        ],
    ),
];

/// What `hooks install AGENT` writes into a project without the file.
fn fresh_install(agent: &str, events: &[&str]) -> Value {
    let command = format!("ctxkeep hook {agent}");
    let mut hooks = serde_json::Map::new();
    for event in events {
        let group = if matches!(*event, "PostToolUse" | "AfterTool") {
            json!({ "matcher": "*", "hooks": [{ "type": "command", "command": command }] })
        } else if let Some(shell) = match *event {
            "PreToolUse" => Some("Bash"),
            "BeforeTool" => Some("run_shell_command"),
            _ => None,
        } {
            json!({ "matcher": shell, "hooks": [{ "type": "command", "command": command }] })
        } else {
            json!({ "hooks": [{ "type": "command", "command": command }] })
        };
        hooks.insert(event.to_string(), json!([group]));
    }
    let mut doc = json!({ "hooks": hooks });
    // Gemini CLI reads its MCP servers from the same file.
    if agent == "gemini" {
        doc["mcpServers"] = json!({ "ctxkeep": { "command": "ctxkeep", "args": ["mcp"] } });
    }
    doc
}

#[test]
fn codex_and_gemini_installers_write_every_event_and_say_what_to_trust() {
    for (agent, file, _, events) in AGENTS {
        let p = Project::initialized();
        let dry = edit(&p, &["install", agent, "--team", "--dry-run"]);
        assert!(dry.dry_run && dry.changed, "{agent}");
        assert!(!p.path(file).exists(), "{agent}: a dry run writes nothing");

        let out = p
            .ctxkeep(&["hooks", "install", agent, "--team"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{agent}");
        let text = String::from_utf8(out.stdout).unwrap();
        for event in events {
            assert!(
                text.contains(&format!("+ hooks.{event}: ctxkeep hook {agent}")),
                "{agent}: {text}"
            );
        }
        let written: Value = serde_json::from_str(&p.read(file)).unwrap();
        assert_eq!(written, fresh_install(agent, events), "{agent}");
        let keys: Vec<&String> = written["hooks"].as_object().unwrap().keys().collect();
        assert_eq!(keys, events, "{agent}: in order");

        // The trust step, on stderr and in --json.
        let stderr = String::from_utf8(out.stderr).unwrap();
        let project = std::fs::canonicalize(p.root()).unwrap();
        let steps = edit(&p, &["install", agent, "--team"]).next_steps;
        let wanted: &[&str] = if agent == "codex" {
            &[
                "trust_level = \"trusted\"",
                "~/.codex/config.toml",
                "/hooks",
                "--dangerously-bypass-hook-trust",
            ]
        } else {
            &["GEMINI_CLI_TRUST_WORKSPACE=true", "--skip-trust"]
        };
        for w in wanted {
            assert!(
                steps.iter().any(|s| s.contains(w)),
                "{agent}: {w} in {steps:?}"
            );
            assert!(stderr.contains(w), "{agent}: {w} in {stderr}");
        }
        let root = project.display().to_string();
        assert!(steps[0].contains(&root), "{agent}: {steps:?}");
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("next: ")).count(),
            steps.len(),
            "{stderr}"
        );

        // The same file again: nothing to change, not a byte.
        let before = p.read(file);
        let again = edit(&p, &["install", agent, "--team"]);
        assert!(!again.changed && again.changes.is_empty(), "{agent}");
        assert_eq!(p.read(file), before);

        // Claude Code's installer says nothing about trust; only that its
        // project MCP servers wait for approval.
        assert!(edit(&p, &["install", "claude-code", "--no-mcp"])
            .next_steps
            .is_empty());
        let steps = edit(&p, &["install", "claude-code", "--team"]).next_steps;
        assert!(steps.len() == 1 && steps[0].contains("approve the ctxkeep MCP server"));

        // --force is Claude Code's status line only.
        let out = p
            .ctxkeep(&["hooks", "install", agent, "--team", "--force"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{agent}");
    }
}

#[test]
fn codex_and_gemini_installers_keep_the_users_entries_and_uninstall_restores_them() {
    for (agent, file, user, events) in AGENTS {
        let p = Project::initialized();
        p.write(file, user);
        let original: Value = serde_json::from_str(user).unwrap();

        let dry = edit(&p, &["install", agent, "--team", "--dry-run"]);
        assert_eq!(dry.changes.len(), events.len(), "{agent}");
        assert_eq!(p.read(file), user, "{agent}: dry run writes nothing");

        let done = edit(&p, &["install", agent, "--team"]);
        assert!(done.changed && done.settings.ends_with(file), "{agent}");
        let s: Value = serde_json::from_str(&p.read(file)).unwrap();
        let top: Vec<&String> = s.as_object().unwrap().keys().collect();
        let mut top_before: Vec<&String> = original.as_object().unwrap().keys().collect();
        // Gemini CLI reads its MCP servers from the same file: ours goes last.
        let servers = "mcpServers".to_string();
        if agent == "gemini" {
            top_before.push(&servers);
        }
        assert_eq!(
            top, top_before,
            "{agent}: order kept, nothing added at the top"
        );
        for (key, value) in original.as_object().unwrap() {
            if key != "hooks" {
                assert_eq!(&s[key], value, "{agent}: {key} untouched");
            }
        }
        for (event, groups) in original["hooks"].as_object().unwrap() {
            let now = s["hooks"][event].as_array().unwrap();
            let before = groups.as_array().unwrap();
            assert_eq!(
                &now[..before.len()],
                &before[..],
                "{agent}: the user's {event} first"
            );
        }
        for event in events {
            let last = s["hooks"][event]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            assert_eq!(
                last["hooks"][0]["command"],
                format!("ctxkeep hook {agent}"),
                "{agent}: {event}"
            );
        }

        let written = p.read(file);
        assert!(!edit(&p, &["install", agent, "--team"]).changed);
        assert_eq!(p.read(file), written);

        let dry = edit(&p, &["uninstall", agent, "--dry-run"]);
        assert!(dry.changed && dry.changes.iter().all(|c| c.op == "removed"));
        assert!(dry.next_steps.is_empty());
        assert_eq!(p.read(file), written, "{agent}: dry run writes nothing");

        // Another agent's uninstall leaves this file alone.
        let other = if agent == "codex" { "gemini" } else { "codex" };
        let path = p.path(file);
        let e = edit(
            &p,
            &["uninstall", other, "--settings", path.to_str().unwrap()],
        );
        assert!(!e.changed, "{agent}");

        let gone = edit(&p, &["uninstall", agent]);
        assert_eq!(gone.changes.len(), events.len(), "{agent}");
        let s: Value = serde_json::from_str(&p.read(file)).unwrap();
        assert_eq!(s, original, "{agent}: exactly the user's file again");
        assert!(!edit(&p, &["uninstall", agent]).changed);
    }
}

#[test]
fn codex_and_gemini_installers_refuse_files_they_cannot_read() {
    for (agent, file, _, _) in AGENTS {
        let p = Project::initialized();
        for bad in [
            "{ \"hooks\": ",
            "[1, 2]",
            "{\"hooks\": {\"Stop\": {}}}",
            "{\n  // mine\n  \"hooks\": {}\n}",
            "{ \"hooks\": {}, }",
        ] {
            if agent == "gemini" && bad.contains("//") {
                // Gemini CLI allows comments; so does its installer (below).
                continue;
            }
            p.write(file, bad);
            for cmd in ["install", "uninstall"] {
                let out = p.ctxkeep(&["hooks", cmd, agent]).output().unwrap();
                assert_eq!(out.status.code(), Some(65), "{agent} {cmd} {bad}");
                let err = String::from_utf8(out.stderr).unwrap();
                assert_eq!(err.lines().count(), 1, "{err}");
                assert!(err.contains(file), "{err}");
                assert_eq!(p.read(file), bad, "{agent}: untouched");
            }
        }
    }
}

fn doctor_for(p: &Project, agent: &str) -> (Doctor, i32, String) {
    let out = p
        .ctxkeep(&["--json", "hooks", "doctor", agent])
        .env("PATH", path_with_ctxkeep())
        .output()
        .unwrap();
    let v: Doctor = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (
        v,
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn doctor_runs_codex_and_gemini_hooks_in_their_shapes() {
    for (agent, file, _, events) in AGENTS {
        let p = Project::initialized();
        p.checkpoint(&[]).success();
        let (report, code, _) = doctor_for(&p, agent);
        assert_eq!(code, 1, "{agent}: nothing installed yet");
        assert!(report
            .checks
            .iter()
            .any(|c| c.name == "settings" && c.detail.contains("does not exist")));
        assert!(report
            .checks
            .iter()
            .any(|c| c.detail.contains(&format!("ctxkeep hooks install {agent}"))));

        edit(&p, &["install", agent, "--team"]);
        let state = p.state();
        let events_before = p.read(".ctxkeep/events.jsonl");
        let (report, code, stderr) = doctor_for(&p, agent);
        assert_eq!(code, 0, "{agent}: {report:?}");
        assert!(report.ok && report.settings.ends_with(file));
        let names: Vec<String> = report.checks.iter().map(|c| c.name.clone()).collect();
        let mut wanted: Vec<String> = events.iter().map(|e| format!("hooks.{e}")).collect();
        wanted.push("mcp".into());
        assert_eq!(names, wanted, "{agent}: no status line but Claude Code's");
        if agent == "gemini" {
            assert!(
                report
                    .checks
                    .iter()
                    .filter(|c| c.name != "mcp")
                    .all(|c| c.detail.ends_with("prints JSON")),
                "{report:?}"
            );
        }
        assert!(stderr.contains("also: trust"), "{stderr}");
        assert_eq!(p.state(), state, "{agent}: the checks ran against a copy");
        assert_eq!(p.read(".ctxkeep/events.jsonl"), events_before);

        // A missing entry fails the check, and doctor exits 1.
        let mut s: Value = serde_json::from_str(&p.read(file)).unwrap();
        s["hooks"].as_object_mut().unwrap().remove(events[3]);
        p.write(file, s.to_string());
        let (report, code, _) = doctor_for(&p, agent);
        assert_eq!(code, 1, "{agent}");
        let missing = report
            .checks
            .iter()
            .find(|c| c.name == format!("hooks.{}", events[3]))
            .unwrap();
        assert!(
            !missing.ok && missing.detail.contains("not installed"),
            "{missing:?}"
        );
    }
}

#[test]
fn gemini_doctor_fails_a_hook_that_prints_no_json() {
    let p = Project::initialized();
    edit(&p, &["install", "gemini", "--team"]);
    let mut s: Value = serde_json::from_str(&p.read(".gemini/settings.json")).unwrap();
    s["hooks"]["BeforeAgent"][0]["hooks"][0]["command"] = json!("ctxkeep hook gemini >/dev/null");
    p.write(".gemini/settings.json", s.to_string());
    let (report, code, _) = doctor_for(&p, "gemini");
    assert_eq!(code, 1);
    let quiet = report
        .checks
        .iter()
        .find(|c| c.name == "hooks.BeforeAgent")
        .unwrap();
    assert!(
        !quiet.ok && quiet.detail.contains("printed nothing on stdout"),
        "{quiet:?}"
    );
    // The same command is fine for Codex, which takes an empty stdout.
    edit(&p, &["install", "codex", "--team"]);
    let mut s: Value = serde_json::from_str(&p.read(".codex/hooks.json")).unwrap();
    s["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] =
        json!("ctxkeep hook codex >/dev/null");
    p.write(".codex/hooks.json", s.to_string());
    let (report, code, _) = doctor_for(&p, "codex");
    assert_eq!(code, 0, "{report:?}");
}

#[test]
fn a_stage_crossed_at_stop_is_given_once_at_the_next_prompt() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    // A text-only turn: its only hook is Stop, whose output reaches no model.
    grow(&p, 1, 150_000);
    let stop = hook(
        &p,
        "claude-code",
        &claude(&p, "Stop", "pend-1", json!({ "stop_hook_active": false })),
        &[],
    );
    assert_eq!(
        (stop.code, stop.stdout.as_str()),
        (0, ""),
        "{}",
        stop.stderr
    );
    assert_eq!(events(&p, "stage").len(), 1, "the stage fired at Stop");
    assert_eq!(
        session(&p, "pend-1")["pending_stages"][0]["name"],
        "stage-80"
    );

    // The next prompt carries it, though usage crossed nothing new.
    let prompt = claude(
        &p,
        "UserPromptSubmit",
        "pend-1",
        json!({ "prompt": "next" }),
    );
    let said = reply(&hook(&p, "claude-code", &prompt, &[]));
    assert!(
        said.additional_context.contains("stage stage-80"),
        "{}",
        said.additional_context
    );
    assert!(session(&p, "pend-1").get("pending_stages").is_none());
    // Once.
    let again = hook(&p, "claude-code", &prompt, &[]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (0, ""),
        "{}",
        again.stderr
    );
}

#[test]
fn a_jump_past_every_stage_gives_one_instruction_for_the_highest() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    grow(&p, 1, 20_000);
    let tool = claude(
        &p,
        "PostToolUse",
        "jump-1",
        json!({ "tool_name": "Bash", "tool_input": {}, "tool_response": {} }),
    );
    let ran = hook(&p, "claude-code", &tool, &[]);
    assert_eq!(ran.stdout, "", "{}", ran.stderr);
    p.write("src/lexer.rs", "fn lex() {}\n");
    grow(&p, 2, 199_000);
    let said = reply(&hook(&p, "claude-code", &tool, &[]));
    let text = &said.additional_context;
    assert!(events(&p, "stage").len() >= 3, "every stage crossed fired");
    assert_eq!(text.matches("ctxkeep: context is at").count(), 1, "{text}");
    assert!(
        text.contains("(handoff)"),
        "the highest is the handoff: {text}"
    );
    assert!(text.matches("Recorded now").count() <= 1, "{text}");
    assert!(
        text.chars().count() <= 1_200,
        "{} chars: {text}",
        text.chars().count()
    );
}

#[test]
fn a_restore_after_compaction_does_not_repeat_the_stuck_warning() {
    let mut p = Project::initialized();
    fn start(p: &Project, id: &str, source: &str) -> String {
        let payload = claude(p, "SessionStart", id, json!({ "source": source }));
        reply(&hook(p, "claude-code", &payload, &[])).additional_context
    }
    // Three sessions in a row resume the same next action with no commit.
    for n in 1..=3 {
        p.set_now(&format!("2026-01-15T1{n}:00:00Z"));
        p.checkpoint(&[]).success();
        let prompt = start(&p, &format!("stuck-{n}"), "startup");
        assert_eq!(
            prompt.contains("WARNING: this is handoff 3 in a row"),
            n == 3,
            "{prompt}"
        );
    }
    // The third clears its context: the restore gives the prompt, not the
    // warning again.
    p.set_now("2026-01-15T13:30:00Z");
    let restored = start(&p, "stuck-3", "clear");
    assert!(restored.contains("You are continuing"), "{restored}");
    assert!(!restored.contains("WARNING: this is handoff"), "{restored}");
}

/// A status-line payload of Claude Code's for session `id`.
fn status_payload(p: &Project, id: &str, usage: Value) -> String {
    json!({
        "session_id": id, "transcript_path": p.path("transcript.jsonl"), "cwd": p.root(),
        "model": { "id": "claude-sonnet-4-5" }, "version": "2.1.331",
        "context_window": { "context_window_size": 200_000, "current_usage": usage },
    })
    .to_string()
}

#[test]
fn the_status_line_fits_80_columns_and_leads_with_the_share_the_stages_use() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    // Past the handoff stage: a hook fires it, the line says so.
    grow(&p, 1, 199_000);
    let prompt = claude(&p, "UserPromptSubmit", "wide-1", json!({ "prompt": "x" }));
    reply(&hook(&p, "claude-code", &prompt, &[]));
    let usage = json!({ "input_tokens": 9_000, "cache_read_input_tokens": 190_000 });
    let payload = status_payload(&p, "wide-1", usage);
    let line = |columns: &str| {
        let out = p
            .ctxkeep(&["statusline"])
            .env("COLUMNS", columns)
            .write_stdin(payload.clone())
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string()
    };
    let narrow = line("80");
    assert!(narrow.chars().count() <= 80, "{narrow}");
    // 199k of Claude Code's 167k limit: the share the stages went by leads, never
    // above 100.
    assert!(
        narrow.starts_with("ctxkeep ") && narrow.contains("100 %"),
        "{narrow}"
    );
    assert!(
        narrow.contains("handoff due") && narrow.contains("ckpt-000"),
        "{narrow}"
    );
    assert!(
        !narrow.contains("99.5 %") && !narrow.contains("119.2"),
        "no second, disagreeing share: {narrow}"
    );
    let wide = line("200");
    assert!(
        wide.contains("▰▰▰▰▰▰▰▰▰▰ 100 % to compaction") && wide.contains("199k/167k"),
        "{wide}"
    );
    let tiny = line("40");
    assert!(
        tiny.contains("100 %") && tiny.contains("handoff due"),
        "{tiny}"
    );
}

#[test]
fn after_compact_the_status_line_says_compacted_or_the_restored_size_never_zero() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    grow(&p, 1, 190_000);
    let prompt = claude(&p, "UserPromptSubmit", "cmp-1", json!({ "prompt": "x" }));
    reply(&hook(&p, "claude-code", &prompt, &[]));
    // `/compact` in the real CLI: PreCompact, SessionStart(compact), PostCompact, the
    // transcript's boundary; then the status line arrives with an all-zero `current_usage`.
    let mut text = p.read("transcript.jsonl");
    text.push_str(&jsonl(&[claude_compact_boundary(None)]));
    p.write("transcript.jsonl", text);
    let zero = json!({ "input_tokens": 0, "output_tokens": 0,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 });
    for (event, extra) in [
        (
            "PreCompact",
            json!({ "trigger": "manual", "custom_instructions": "" }),
        ),
        ("SessionStart", json!({ "source": "compact" })),
        (
            "PostCompact",
            json!({ "trigger": "manual", "compact_summary": "s" }),
        ),
    ] {
        let ran = hook(&p, "claude-code", &claude(&p, event, "cmp-1", extra), &[]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
    }
    let v = statusline(&p, &status_payload(&p, "cmp-1", zero.clone()));
    assert_eq!(
        v.tokens, None,
        "an all-zero reading is not an empty context"
    );
    assert!(!v.handoff_due);
    assert!(v.line.starts_with("ctxkeep compacted · "), "{}", v.line);
    assert!(!v.line.contains("0 %"), "{}", v.line);
    assert!(session(&p, "cmp-1")["tokens"].is_null(), "no 0 saved");

    // When the agent states the restored size, the line shows it.
    let start = json!({ "source": "compact", "context_tokens": 31_000 });
    for (event, extra) in [
        (
            "PreCompact",
            json!({ "trigger": "auto", "custom_instructions": "" }),
        ),
        ("SessionStart", start),
        (
            "PostCompact",
            json!({ "trigger": "auto", "compact_summary": "s" }),
        ),
    ] {
        let ran = hook(&p, "claude-code", &claude(&p, event, "cmp-1", extra), &[]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
    }
    let v = statusline(&p, &status_payload(&p, "cmp-1", zero));
    assert_eq!(v.tokens, Some(31_000), "{}", v.line);
    assert!(
        v.line.contains("31k/167k") && !v.line.contains("handoff due"),
        "{}",
        v.line
    );
}

#[test]
fn a_pending_stage_survives_readings_that_only_record() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    grow(&p, 1, 150_000);
    let stop = claude(&p, "Stop", "pend-2", json!({ "stop_hook_active": false }));
    assert_eq!(hook(&p, "claude-code", &stop, &[]).stdout, "");
    // A status line and a pre-compaction hook read the token count and say nothing to the model.
    let usage = json!({ "input_tokens": 150_000 });
    statusline(&p, &status_payload(&p, "pend-2", usage));
    let pre = claude(&p, "PreCompact", "pend-2", json!({ "trigger": "manual" }));
    assert_eq!(hook(&p, "claude-code", &pre, &[]).code, 0);
    assert_eq!(
        session(&p, "pend-2")["pending_stages"][0]["name"],
        "stage-80"
    );
    let prompt = claude(
        &p,
        "UserPromptSubmit",
        "pend-2",
        json!({ "prompt": "next" }),
    );
    let said = reply(&hook(&p, "claude-code", &prompt, &[]));
    assert!(
        said.additional_context.contains("stage stage-80"),
        "{}",
        said.additional_context
    );
}
/// Valid JSON settings written the way people and other tools write them;
/// each must come back byte for byte after `install` then `uninstall`.
const HOSTILE_JSON: [(&str, &str); 12] = [
    (
        "three-space indent",
        "{\n   \"model\": \"opus\",\n   \"env\": {\n      \"A\": \"1\"\n   }\n}\n",
    ),
    (
        "tabs and the user's hooks",
        "{\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{ \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-send done\" } ] }\n\t\t],\n\t\t\"Notification\": []\n\t}\n}\n",
    ),
    (
        "CRLF",
        "{\r\n  \"model\": \"opus\",\r\n  \"permissions\": { \"allow\": [\"Bash(ls)\"] }\r\n}\r\n",
    ),
    (
        "escapes and number spellings, no final newline",
        r#"{"name": "caf\u00e9 \/ \"q\" \ud83d\udc22", "n": 1e3, "big": 12345678901234567890123, "neg": -0.0, "f": 1.50, "E": 2E-7}"#,
    ),
    (
        "duplicate keys",
        "{\n  \"model\": \"a\",\n  \"model\": \"b\",\n  \"hooks\": { \"Stop\": [] },\n  \"hooks\": { \"Notification\": [] },\n  \"mcpServers\": 1,\n  \"mcpServers\": { \"docs\": { \"command\": \"docs-mcp\" } }\n}\n",
    ),
    ("minified", "{\"model\":\"opus\",\"env\":{\"A\":\"1\"}}"),
    ("empty object, no newline", "{}"),
    ("empty object with a space", "{ }\n"),
    (
        "one line with spaces",
        "{ \"model\": \"opus\", \"mcpServers\": { \"docs\": { \"command\": \"d\" } } }\n",
    ),
    (
        "blank lines around, lists across lines",
        "\n\n  {\n    \"a\": [1,\n      2],\n\n    \"b\": [\n    ]\n  }  \n\n",
    ),
    (
        "raw unicode",
        "{\n  \"name\": \"żółw 🐢\",\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"Write\",\n        \"hooks\": [{ \"type\": \"command\", \"command\": \"fmt ✓\" }]\n      }\n    ]\n  }\n}\n",
    ),
    (
        "four spaces, one event of every agent's taken",
        "{\n    \"hooks\": {\n        \"SessionStart\": [\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"echo hi\"\n                    }\n                ]\n            }\n        ]\n    }\n}\n",
    ),
];

/// Gemini CLI's settings may hold comments.
const GEMINI_COMMENTS: [(&str, &str); 4] = [
    (
        "line comments",
        "// project settings\n{\n  // the model\n  \"model\": { \"name\": \"gemini-2.5-pro\" }, // trailing\n  \"general\": { \"vimMode\": true } // last\n  // before the brace\n}\n",
    ),
    (
        "block comments",
        "/* head */\n{ /* inside */ \"a\": 1 /* after */ }\n/* tail */",
    ),
    ("an object holding only a comment", "{\n  // nothing yet\n}\n"),
    (
        "slashes and quotes in strings and comments",
        "{\n  \"url\": \"http://x//y/*z*/\", // a \"quoted\" // comment\n  \"b\": 2\n}\n",
    ),
];

/// Codex's `.codex/config.toml`, commented and laid out by hand.
const HOSTILE_TOML: [(&str, &str); 7] = [
    (
        "comments and a server",
        "# Codex project settings\nmodel = \"o4-mini\" # inline\n\n# servers\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\nargs = [\n  \"--port\", # why\n  \"9\",\n]\n",
    ),
    (
        "CRLF",
        "model = \"o4\"\r\n\r\n[profiles.fast]\r\nmodel = \"o4-mini\"\r\n",
    ),
    ("no final newline", "model = \"o4\""),
    ("blank lines at the end", "model = \"o4\"\n\n\n"),
    ("only a comment", "# nothing yet\n"),
    ("an empty servers table", "[mcp_servers]\n"),
    (
        "escapes and numbers",
        "name = \"caf\\u00e9\"\nbig = 1_000_000\nf = 1e3\n'literal key' = 'x'\n",
    ),
];

/// Whether `small`'s bytes all appear in `big`, in order: what an edit
/// that only inserts leaves.
fn only_inserted(small: &str, big: &str) -> bool {
    let mut rest = big.bytes();
    small.bytes().all(|b| rest.any(|c| c == b))
}

/// The files one agent's install edits, each with the fixtures to try.
fn hostile_files(agent: &str) -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    let json = HOSTILE_JSON.to_vec();
    match agent {
        "claude-code" => vec![(".claude/settings.json", json.clone()), (".mcp.json", json)],
        "codex" => vec![
            (".codex/hooks.json", json),
            (".codex/config.toml", HOSTILE_TOML.to_vec()),
        ],
        _ => {
            let mut all = json;
            all.extend(GEMINI_COMMENTS);
            vec![(".gemini/settings.json", all)]
        }
    }
}

#[test]
fn install_then_uninstall_gives_back_every_settings_file_byte_for_byte() {
    let mut tried = 0;
    for agent in ["claude-code", "codex", "gemini"] {
        let files = hostile_files(agent);
        let rounds = files.iter().map(|(_, f)| f.len()).max().unwrap();
        for round in 0..rounds {
            let p = Project::initialized();
            // Every file of the agent at once, each with one of its fixtures.
            let mut case = Vec::new();
            for (file, fixtures) in &files {
                let (name, text) = fixtures[round % fixtures.len()];
                p.write(file, text);
                case.push((*file, name, text));
            }
            let before = p.snapshot();
            let out = p
                .ctxkeep(&["hooks", "install", agent, "--team"])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{agent} {case:?}: {err}");
            for (file, name, text) in &case {
                let now = p.read(file);
                assert_ne!(&now, text, "{agent} {file} ({name}): nothing added");
                assert!(
                    only_inserted(text, &now),
                    "{agent} {file} ({name}): a byte of the user's changed:\n{now}"
                );
            }
            edit(&p, &["uninstall", agent]);
            for (file, name, text) in &case {
                assert_eq!(&p.read(file), text, "{agent} {file} ({name})");
            }
            assert!(
                p.snapshot() == before,
                "{agent} {case:?}: {:?}",
                support::diff(&before, &p.snapshot())
            );
            tried += case.len();
        }
    }
    // Claude Code 2 × 12 files, Codex 2 × 12, Gemini 16.
    assert_eq!(tried, 64);
}

/// Empty containers and files of the user's look like what ctxkeep makes and takes away again
/// (`"hooks": {}`, `"mcpServers": {}`, a file holding `{}`): the install notes them (outside the
/// project, in the state folder), so the uninstall leaves them and gives the bytes back. The
/// uninstall had deleted a user's `.mcp.json` holding `{"mcpServers": {}}`.
#[test]
fn the_users_empty_containers_and_files_come_back_after_uninstall() {
    let cases: [(&str, &[(&str, &str)]); 3] = [
        (
            "claude-code",
            &[
                (
                    ".claude/settings.json",
                    "{\n    \"hooks\": {\"Stop\": []},\n    \"n\": 1e3\n}\n",
                ),
                (".mcp.json", "{\n  \"mcpServers\": {}\n}\n"),
            ],
        ),
        (
            "gemini",
            &[(
                ".gemini/settings.json",
                "// mine\n{\n  \"hooks\": {},\n  \"mcpServers\": {}\n}\n",
            )],
        ),
        ("codex", &[(".codex/hooks.json", "{}\n")]),
    ];
    let note = |p: &Project| p.home().join(".local/state/ctxkeep/settings-kept.json");
    for (agent, files) in cases {
        let p = Project::initialized();
        for (file, text) in files {
            p.write(file, text);
        }
        edit(&p, &["install", agent, "--team"]);
        assert!(note(&p).exists(), "{agent}: nothing noted");
        edit(&p, &["uninstall", agent]);
        for (file, text) in files {
            assert_eq!(&p.read(file), text, "{agent} {file}");
        }
        assert!(
            !note(&p).exists(),
            "{agent}: the note outlived the uninstall"
        );
    }
    // Without the note (another clone, an older install), what ctxkeep emptied goes.
    let p = Project::initialized();
    p.write(".mcp.json", "{\n  \"mcpServers\": {}\n}\n");
    edit(&p, &["install", "claude-code", "--team"]);
    std::fs::remove_file(note(&p)).unwrap();
    edit(&p, &["uninstall", "claude-code"]);
    assert!(!p.path(".mcp.json").exists());
    // A file with no empty container needs no note.
    let p = Project::initialized();
    p.write(
        ".mcp.json",
        "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}}\n",
    );
    edit(&p, &["install", "claude-code", "--team"]);
    assert!(!note(&p).exists());
}

#[test]
fn uninstall_removes_the_files_install_created_and_nothing_else() {
    for agent in ["claude-code", "codex", "gemini"] {
        let p = Project::initialized();
        let before = p.snapshot();
        edit(&p, &["install", agent, "--team"]);
        assert_ne!(p.snapshot(), before, "{agent}");
        let gone = edit(&p, &["uninstall", agent]);
        assert!(gone.changed, "{agent}");
        assert!(
            p.snapshot() == before,
            "{agent}: {:?}",
            support::diff(&before, &p.snapshot())
        );
        // A file the user keeps something else in stays, even when ctxkeep
        // made it: here a key added after the install.
        edit(&p, &["install", agent, "--team"]);
        let file = hostile_files(agent)[0].0;
        let mut s: Value = serde_json::from_str(&p.read(file)).unwrap();
        s["mine"] = json!(true);
        p.write(file, serde_json::to_string_pretty(&s).unwrap());
        edit(&p, &["uninstall", agent]);
        let left: Value = serde_json::from_str(&p.read(file)).unwrap();
        assert_eq!(left, json!({ "mine": true }), "{agent}");
    }
    // An empty file holds nothing either.
    let p = Project::initialized();
    p.write(".codex/hooks.json", "");
    p.write(".codex/config.toml", "");
    edit(&p, &["install", "codex", "--team"]);
    edit(&p, &["uninstall", "codex"]);
    assert!(!p.path(".codex").exists());
}

#[test]
fn uninstall_codex_keeps_the_comment_above_the_users_next_table() {
    let p = Project::initialized();
    let mine = "# mine\nmodel = \"o4\"\n";
    p.write(".codex/config.toml", mine);
    edit(&p, &["install", "codex", "--team"]);
    let installed = p.read(".codex/config.toml");
    assert!(installed.starts_with(mine), "{installed}");
    // The user adds a table of their own after ctxkeep's, with a comment.
    let later = "\n# fast profile, for quick fixes\n[profiles.fast]\nmodel = \"o4-mini\" # cheap\n";
    p.write(".codex/config.toml", format!("{installed}{later}"));
    edit(&p, &["uninstall", "codex"]);
    assert_eq!(p.read(".codex/config.toml"), format!("{mine}{later}"));

    // A comment inside ctxkeep's own table goes with it; one above it stays.
    let p = Project::initialized();
    p.write(
        ".codex/config.toml",
        "model = \"o4\"\n\n# ctxkeep's server\n[mcp_servers.ctxkeep]\ncommand = \"ctxkeep\"\n# its arguments\nargs = [\"mcp\"] # the server\n\n# next\n[profiles.x]\nmodel = \"o3\"\n",
    );
    let gone = edit(&p, &["uninstall", "codex"]);
    assert_eq!(gone.mcp.unwrap().changes.len(), 1);
    assert_eq!(
        p.read(".codex/config.toml"),
        "model = \"o4\"\n\n# ctxkeep's server\n# next\n[profiles.x]\nmodel = \"o3\"\n"
    );
}

/// Runs `hooks ARGS` expecting a refusal: the exit code and the one line.
fn refused(p: &Project, args: &[&str], code: i32) -> String {
    let mut all = vec!["hooks"];
    all.extend_from_slice(args);
    let out = p.ctxkeep(&all).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn a_file_that_cannot_take_the_change_leaves_every_file_as_it_was() {
    // A malformed .codex/config.toml: .codex/hooks.json is not written either.
    let p = Project::initialized();
    p.write(".codex/config.toml", "model = [\n");
    let before = p.snapshot();
    let err = refused(&p, &["install", "codex", "--team"], 65);
    assert!(
        err.contains(".codex/config.toml") && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(
        p.snapshot() == before,
        "{:?}",
        support::diff(&before, &p.snapshot())
    );

    // `"mcpServers": []` in .mcp.json: .claude/settings.json is not written.
    let p = Project::initialized();
    p.write(".mcp.json", "{ \"mcpServers\": [] }\n");
    let before = p.snapshot();
    let err = refused(&p, &["install", "claude-code", "--team"], 65);
    assert!(
        err.contains(".mcp.json") && err.contains("`mcpServers` is not an object"),
        "{err}"
    );
    assert!(
        p.snapshot() == before,
        "{:?}",
        support::diff(&before, &p.snapshot())
    );

    // The same for uninstall: the hooks stay while the MCP file is broken.
    for (agent, broken, text) in [
        ("claude-code", ".mcp.json", "{ \"mcpServers\": "),
        ("codex", ".codex/config.toml", "[mcp_servers.ctxkeep\n"),
    ] {
        let p = Project::initialized();
        edit(&p, &["install", agent, "--team"]);
        p.write(broken, text);
        let before = p.snapshot();
        let err = refused(&p, &["uninstall", agent], 65);
        assert!(err.contains(broken), "{err}");
        assert!(
            p.snapshot() == before,
            "{agent}: {:?}",
            support::diff(&before, &p.snapshot())
        );
    }
}

#[test]
fn a_write_that_fails_mid_way_puts_back_the_files_already_written() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::initialized();
    p.write(".claude/settings.json", "{\n  \"model\": \"opus\"\n}\n");
    let Some(uid) = crate::hostile::unprivileged(&p) else {
        return;
    };
    // .claude/ can be written, the project's root (where .mcp.json goes) not.
    std::fs::set_permissions(p.root(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = p.snapshot();
    let args = ["hooks", "install", "claude-code", "--team"];
    let out = if uid == support::euid() {
        p.ctxkeep(&args).output().unwrap()
    } else {
        p.ctxkeep_as(uid, &args).output().unwrap()
    };
    std::fs::set_permissions(p.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(": nothing was changed (put back ")
            && err.contains(".claude/settings.json")
            && err.contains(".mcp.json")
            && err.contains("need write access"),
        "{err}"
    );
    assert!(
        p.snapshot() == before,
        "{:?}",
        support::diff(&before, &p.snapshot())
    );
}

#[test]
fn a_file_changed_by_someone_else_mid_way_puts_back_the_first() {
    let p = Project::initialized();
    let settings = "{\n  \"model\": \"opus\"\n}\n";
    p.write(".claude/settings.json", settings);
    p.write(".mcp.json", "{}\n");
    // Each write waits before its rename; the user saves .mcp.json while
    // the second one waits.
    let mut child = p
        .ctxkeep_std(&["hooks", "install", "claude-code", "--team"])
        .env("CTXKEEP_TEST_PAUSE_BEFORE_RENAME", "3000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while p.read(".claude/settings.json") == settings && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let saved = "{ \"mcpServers\": { \"docs\": { \"command\": \"d\" } } }\n";
    p.write(".mcp.json", saved);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert!(
        err.contains("changed by another program") && err.contains("put back"),
        "{err}"
    );
    assert_eq!(p.read(".claude/settings.json"), settings);
    assert_eq!(p.read(".mcp.json"), saved, "the user's save wins");
}

#[test]
fn doctor_passes_on_files_edited_in_place() {
    for (agent, file, text) in [
        ("claude-code", ".claude/settings.json", HOSTILE_JSON[2].1),
        ("codex", ".codex/hooks.json", HOSTILE_JSON[1].1),
        ("gemini", ".gemini/settings.json", GEMINI_COMMENTS[0].1),
    ] {
        let p = Project::initialized();
        p.checkpoint(&[]).success();
        p.write(file, text);
        edit(&p, &["install", agent, "--team"]);
        let (report, code, _) = doctor_for(&p, agent);
        assert_eq!(code, 0, "{agent}: {report:?}");
        let mcp = report.checks.iter().find(|c| c.name == "mcp").unwrap();
        assert!(mcp.detail.contains("checkpoint"), "{agent}: {mcp:?}");
    }
}

#[test]
fn a_forecast_from_the_last_turns_in_status_the_status_line_and_the_first_stage() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let stop = claude(&p, "Stop", "fc-1", json!({ "stop_hook_active": false }));
    // Too little data: no forecast.
    grow(&p, 1, 60_000);
    hook(&p, "claude-code", &stop, &[]);
    let (st, _) = p.json(&["status", "--session", "fc-1"]);
    assert!(st.get("forecast").is_none(), "{st}");
    // Turns of 10k, 12k and 10k (one large tool result must not sway it: the median).
    for (n, tokens) in [(2, 70_000), (3, 82_000), (4, 92_000), (5, 102_000)] {
        grow(&p, n, tokens);
        hook(&p, "claude-code", &stop, &[]);
    }
    let (st, _) = p.json(&["status", "--session", "fc-1"]);
    assert_eq!(
        st["forecast"],
        json!({ "tokens_per_turn": 10_000, "turns_left": 6 }),
        "{st}"
    );
    let text = String::from_utf8(
        p.ctxkeep(&["status", "--session", "fc-1"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.contains("forecast: about 10,000 tokens a turn, some 6 turns left"),
        "{text}"
    );
    let usage = json!({ "input_tokens": 102_000 });
    let v = statusline(&p, &status_payload(&p, "fc-1", usage));
    assert!(v.line.contains("~6 turns left"), "{}", v.line);
    // The first stage crossed says it too.
    grow(&p, 6, 136_000);
    let prompt = claude(&p, "UserPromptSubmit", "fc-1", json!({ "prompt": "go" }));
    let said = reply(&hook(&p, "claude-code", &prompt, &[]));
    assert!(
        said.additional_context
            .contains("turns are left before then"),
        "{}",
        said.additional_context
    );
}
/// A folder where project-state.md should be: a hook names that folder and
/// says it is not a file (it named `…/project-state.md/project-state.md`,
/// a path that does not exist, and called the project not initialized).
#[test]
fn a_folder_in_place_of_the_state_file_is_named_as_such_by_a_hook() {
    let p = Project::new();
    std::fs::create_dir(p.path("project-state.md")).unwrap();
    let payload = claude(&p, "SessionStart", "s1", json!({ "source": "startup" }));
    let ran = hook(&p, "claude-code", &payload, &[]);
    assert_eq!(ran.code, 0, "a hook never breaks the agent: {}", ran.stderr);
    let dir = p.path("project-state.md").display().to_string();
    assert!(
        ran.stderr
            .contains(&format!("{dir}: is a directory, not a regular file")),
        "{}",
        ran.stderr
    );
    assert!(
        !ran.stderr.contains("project-state.md/project-state.md"),
        "{}",
        ran.stderr
    );
    // `--state` naming the folder reads the same.
    let out = p.ctxkeep(&["--state", &dir, "status"]).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(66), "{err}");
    assert!(err.contains(&format!("{dir}: is a directory")), "{err}");
}

#[test]
fn a_pending_stage_given_when_no_usage_is_known_says_the_one_it_fired_at() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    grow(&p, 1, 150_000);
    let stop = claude(&p, "Stop", "pend-3", json!({ "stop_hook_active": false }));
    assert_eq!(hook(&p, "claude-code", &stop, &[]).stdout, "");
    // The conversation resumes into a new, still empty transcript: no token count yet.
    p.write("resumed.jsonl", "");
    let mut prompt: Value = serde_json::from_str(&claude(
        &p,
        "UserPromptSubmit",
        "pend-3",
        json!({ "prompt": "on" }),
    ))
    .unwrap();
    prompt["transcript_path"] = json!(p.path("resumed.jsonl"));
    let said = reply(&hook(&p, "claude-code", &prompt.to_string(), &[]));
    let text = &said.additional_context;
    assert!(
        text.contains("context is at 75.0 % (150000 of 200000 tokens)"),
        "{text}"
    );
    assert!(!text.contains("None"), "{text}");
}

/// Claude Code writes the reply that made a tool call on its own schedule: under load its
/// `PostToolUse` hook has run before that reply was in the transcript. The hook waits for the
/// call's id, so the stage the reply crossed is given in that same hook, not a turn later.
#[test]
fn a_tool_hook_that_runs_before_its_reply_is_written_waits_for_it() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    grow(&p, 1, 20_000);
    let payload = claude(
        &p,
        "PostToolUse",
        "late-1",
        json!({ "tool_name": "Bash", "tool_use_id": "toolu_late_7",
                "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "ok"} }),
    );
    let mut child = p
        .ctxkeep_std(&["hook", "claude-code"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes()).unwrap();
    // The reply with the call, and the usage that crosses the first stage, lands after the
    // hook has started (it waits up to 1.5 s).
    std::thread::sleep(std::time::Duration::from_millis(150));
    let line = claude_assistant("msg_late", 6, 1_000, 140_000 - 1_006).replace(
        r#"[{"type":"text","text":"ok"}]"#,
        r#"[{"type":"tool_use","id":"toolu_late_7","name":"Bash","input":{"command":"cargo test"}}]"#,
    );
    assert!(line.contains("toolu_late_7"));
    let mut text = p.read("transcript.jsonl");
    text.push_str(&line);
    text.push('\n');
    p.write("transcript.jsonl", text);
    let out = child.wait_with_output().unwrap();
    let ran = Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    let said = reply(&ran);
    assert!(
        said.additional_context.contains("stage stage-80"),
        "{}",
        said.additional_context
    );
}

/// Claude Code creates a new session's transcript just after its first `PostToolUse` hook has
/// started: the hook waits for the file and the call in it, so the first reading is recorded and
/// the stage it crossed is given in that same hook.
#[test]
fn a_new_sessions_first_tool_hook_waits_for_the_transcript_to_be_created() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let start = claude(
        &p,
        "SessionStart",
        "first-1",
        json!({ "source": "startup" }),
    );
    assert_eq!(hook(&p, "claude-code", &start, &[]).code, 0);
    assert!(!p.path("transcript.jsonl").exists());
    let payload = claude(
        &p,
        "PostToolUse",
        "first-1",
        json!({ "tool_name": "Bash", "tool_use_id": "toolu_first_1",
                "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok"} }),
    );
    let mut child = p
        .ctxkeep_std(&["hook", "claude-code"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes()).unwrap();
    // The agent creates the transcript, with the reply that made the call, after the hook started.
    let path = p.path("transcript.jsonl");
    let line = claude_assistant("msg_first", 6, 1_000, 140_000 - 1_006).replace(
        r#"[{"type":"text","text":"ok"}]"#,
        r#"[{"type":"tool_use","id":"toolu_first_1","name":"Bash","input":{"command":"ls"}}]"#,
    );
    assert!(line.contains("toolu_first_1"));
    let agent = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::fs::write(&path, jsonl(&[claude_user("list the files"), line])).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    agent.join().unwrap();
    let ran = Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    };
    let said = reply(&ran);
    assert!(
        said.additional_context.contains("stage stage-80"),
        "{}",
        said.additional_context
    );
    assert_eq!(session(&p, "first-1")["tokens"], json!(140_000));
    assert!(events(&p, "transcript_not_created").is_empty());
}

/// The transcript comes, but without the call: the wait ends as a late call's does (one
/// `call_not_in_transcript` event), and the token count the file holds is recorded.
#[test]
fn a_new_transcript_without_the_call_is_read_as_it_is() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let payload = claude(
        &p,
        "PostToolUse",
        "first-2",
        json!({ "tool_name": "Bash", "tool_use_id": "toolu_first_2",
                "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok"} }),
    );
    let mut child = p
        .ctxkeep_std(&["hook", "claude-code"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes()).unwrap();
    let path = p.path("transcript.jsonl");
    let agent = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let lines = [
            claude_user("list the files"),
            claude_assistant("msg_other", 6, 1_000, 30_000 - 1_006),
        ];
        std::fs::write(&path, jsonl(&lines)).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    agent.join().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let logged = events(&p, "call_not_in_transcript");
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["tool_use_id"], "toolu_first_2");
    assert!(events(&p, "transcript_not_created").is_empty());
    assert_eq!(session(&p, "first-2")["tokens"], json!(30_000));
}

/// An agent run that keeps no transcript (its path is named but never written): the first tool
/// hook's wait ends in one `transcript_not_created` event, and later hooks do not wait again.
#[test]
fn a_transcript_that_never_comes_is_waited_for_once() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let start = claude(&p, "SessionStart", "none-1", json!({ "source": "startup" }));
    assert_eq!(hook(&p, "claude-code", &start, &[]).code, 0);
    for n in 1..=2 {
        let payload = claude(
            &p,
            "PostToolUse",
            "none-1",
            json!({ "tool_name": "Bash", "tool_use_id": format!("toolu_none_{n}"),
                    "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok"} }),
        );
        let ran = hook(&p, "claude-code", &payload, &[]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
    }
    let logged = events(&p, "transcript_not_created");
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["session"], "none-1");
    assert!(session(&p, "none-1")["tokens"].is_null());
    // A session with a token count whose transcript is gone is not new: it does not wait either.
    grow(&p, 1, 20_000);
    let payload = claude(
        &p,
        "PostToolUse",
        "old-1",
        json!({ "tool_name": "Bash", "tool_use_id": "toolu_old_1",
                "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok"} }),
    );
    hook(&p, "claude-code", &payload, &[]);
    assert_eq!(session(&p, "old-1")["tokens"], json!(20_000));
    std::fs::remove_file(p.path("transcript.jsonl")).unwrap();
    let ran = hook(&p, "claude-code", &payload, &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(events(&p, "transcript_not_created").len(), 1);
}

/// A hook fired inside a subagent names the main transcript, where the subagent's calls never
/// appear: it does not wait for them.
#[test]
fn a_subagents_tool_hook_does_not_wait_for_its_call_in_the_main_transcript() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    grow(&p, 1, 140_000);
    let payload = claude(
        &p,
        "PostToolUse",
        "late-2",
        json!({ "tool_name": "Bash", "tool_use_id": "toolu_sub_1", "agent_id": "a1b2",
                "agent_type": "general-purpose",
                "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok"} }),
    );
    // The stage is given from what the transcript holds; the call is never written there.
    let said = reply(&hook(&p, "claude-code", &payload, &[]));
    assert!(said.additional_context.contains("stage stage-80"));
    assert!(events(&p, "call_not_in_transcript").is_empty());
    // The same call outside a subagent is waited for, then logged as never written.
    let main = payload.replace(r#""agent_id":"a1b2","#, "");
    assert_ne!(main, payload);
    let ran = hook(&p, "claude-code", &main, &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let logged = events(&p, "call_not_in_transcript");
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["tool_use_id"], "toolu_sub_1");
}

/// A FIFO at the transcript's path, with a payload naming a tool call (the hook then waits for
/// the call to show in the transcript): the hook finishes and answers as usual. The command's
/// timeout is a guard, not a timing assertion: a blocked hook fails the test instead of hanging.
#[test]
fn a_fifo_transcript_never_blocks_a_hook_that_waits_for_its_call() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let fifo = p.path("transcript.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let payload = claude(
        &p,
        "PostToolUse",
        "s-fifo",
        json!({ "tool_name": "Bash", "tool_input": { "command": "ls" }, "tool_use_id": "toolu_fifo" }),
    );
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
}

/// Where the note of what the settings held cannot be written (the user's state folder
/// cannot be made), an install that needs one refuses in one line naming the file, and
/// writes nothing: its uninstall would otherwise remove the user's own `{}` file.
#[test]
fn an_install_that_cannot_keep_its_note_refuses_and_changes_nothing() {
    let p = Project::initialized();
    p.write(".mcp.json", "{}\n");
    p.write("not-a-folder", "a file where the state folder should be\n");
    let before = p.snapshot();
    let out = p
        .ctxkeep(&["hooks", "install", "claude-code", "--team"])
        .env("XDG_STATE_HOME", p.path("not-a-folder/state"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(".mcp.json") && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(support::diff(&before, &p.snapshot()).is_empty());
}

/// A `PreCompact` whose transcript cannot be read (here a folder at its path) still writes its
/// checkpoint, as one with no transcript does, and logs why the token count was not read.
#[test]
fn a_pre_compact_with_an_unreadable_transcript_writes_its_checkpoint() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    std::fs::create_dir(p.path("transcript.jsonl")).unwrap();
    let ran = hook(
        &p,
        "claude-code",
        &claude(
            &p,
            "PreCompact",
            "s-unreadable",
            json!({ "trigger": "manual", "custom_instructions": "" }),
        ),
        &[],
    );
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let written: Vec<Value> = events(&p, "checkpoint")
        .into_iter()
        .filter(|e| e["trigger"] == "pre-compact")
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(events(&p, "transcript_unreadable").len(), 1);
}
