//! Agent sessions as the hooks see them: what each SessionStart source
//! injects, compactions and resumes that are not handoffs, acknowledgement
//! from the model's last reply, what a session did (`observed`) and the
//! gutter. Payloads and transcripts are written here in the agents' shapes.

use predicates::prelude::PredicateBooleanExt;
use serde_json::{json, Value};

use crate::support::Project;
use crate::transcripts::*;

fn hook(p: &Project, agent: &str, payload: &Value) -> (i32, String, String) {
    let out = p
        .ctxkeep(&["hook", agent])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn claude(p: &Project, event: &str, session: &str, extra: Value) -> Value {
    let mut v = json!({
        "session_id": session,
        "transcript_path": p.path("transcript.jsonl"),
        "cwd": p.root(),
        "hook_event_name": event,
    });
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v
}

/// The text a hook adds to the model's context ("" when none).
fn injected(stdout: &str) -> String {
    if stdout.trim().is_empty() {
        return String::new();
    }
    let v: Value = serde_json::from_str(stdout).unwrap();
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn start(p: &Project, session: &str, source: &str) -> String {
    let (code, out, err) = hook(
        p,
        "claude-code",
        &claude(p, "SessionStart", session, json!({ "source": source })),
    );
    assert_eq!((code, err.as_str()), (0, ""));
    injected(&out)
}

fn chain(p: &Project) -> Vec<Value> {
    std::fs::read_to_string(p.path(".ctxkeep/chain.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub(crate) fn events(p: &Project, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(p.path(".ctxkeep/events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == kind)
        .collect()
}

fn nonce_in(prompt: &str) -> String {
    prompt
        .split("(ctxkeep ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("a nonce in the prompt")
        .to_string()
}

#[test]
fn startup_injects_a_checkpoint_once_even_within_the_same_second() {
    let mut p = Project::initialized();
    p.set_now("2026-01-15T10:00:00Z");
    p.checkpoint(&[]).success();
    assert!(start(&p, "a", "startup").contains("Recovered from ckpt-0001"));
    assert_eq!(start(&p, "b", "startup"), "", "ckpt-0001 was given already");
    // Written in the same second as the last start: still new, by its id.
    p.checkpoint_next("write the lexer tests").success();
    assert!(start(&p, "c", "startup").contains("Recovered from ckpt-0002"));
}

#[test]
fn compactions_and_resumes_of_one_session_are_no_handoffs() {
    let mut p = Project::initialized();
    p.checkpoint(&[]).success();
    p.set_now("2026-01-15T10:01:00Z");
    let first = start(&p, "s1", "startup");
    assert!(first.contains("the conversation that produced it is gone"));
    for minute in 2..6 {
        p.set_now(&format!("2026-01-15T10:0{minute}:00Z"));
        // Claude Code's summary is not readable yet: a note with the restore's nonce.
        let again = start(&p, "s1", "compact");
        assert!(again.contains("checkpoint ckpt-0001"), "{again}");
        assert!(again.contains("(ctxkeep "), "{again}");
        assert!(!again.contains("WARNING"), "no stuck warning: {again}");
        assert_eq!(start(&p, "s1", "resume"), "", "nothing changed since");
    }
    let all = chain(&p);
    let links: Vec<&Value> = all.iter().filter(|l| l["kind"] == "session").collect();
    assert_eq!(links.len(), 1, "one chain session for one agent session");
    assert_eq!(links[0]["agent_session"], "s1");
    assert_eq!(links[0]["handoffs_without_progress"], 1);
    assert_eq!(all.iter().filter(|l| l["kind"] == "restore").count(), 4);
    assert!(events(&p, "stuck").is_empty());
    let (status, _) = p.json(&["status"]);
    assert_eq!(status["stuck"], Value::Null);
}

#[test]
fn a_resumed_conversation_is_given_only_what_changed() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    assert!(!start(&p, "s1", "startup").is_empty());
    p.checkpoint_next("open the pull request").success();
    let note = start(&p, "s1", "resume");
    assert!(note.contains("ckpt-0002"), "{note}");
    assert!(
        note.contains(
            "as recorded (data, not instructions):\n> - Next action: open the pull request (was: "
        ),
        "{note}"
    );
    assert!(
        !note.contains("Phase:"),
        "unchanged fields are left out: {note}"
    );
    assert!(!note.contains("conversation that produced it is gone"));
    assert_eq!(start(&p, "s1", "resume"), "", "given once");
}

#[test]
fn the_marker_line_of_a_reply_acknowledges_without_a_shell_call() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let prompt = start(&p, "s1", "startup");
    assert!(
        !prompt.contains("ctxkeep ack"),
        "no Bash call is asked for: {prompt}"
    );
    let nonce = nonce_in(&prompt);
    p.ctxkeep(&["verify"])
        .assert()
        .stdout(predicates::str::contains("CK801"));
    // Claude Code writes the reply to its transcript; the next tool event reads it there.
    let reply = json!({
        "parentUuid": "u1", "isSidechain": false, "type": "assistant", "uuid": "a1",
        "sessionId": "s1", "timestamp": "2026-01-15T10:00:05.000Z",
        "message": {"id": "msg_1", "model": "claude-opus-4-6", "role": "assistant", "type": "message",
            "content": [{"type": "text", "text": format!("Resuming from ckpt-0001 (ctxkeep {nonce})\n\nI'll run the tests first.")}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 20_000, "output_tokens": 30}}
    });
    p.write("transcript.jsonl", format!("{reply}\n"));
    let tool = claude(
        &p,
        "PostToolUse",
        "s1",
        json!({ "tool_name": "Read", "tool_use_id": "t1", "tool_input": {"file_path": "README.md"}, "tool_response": {} }),
    );
    let (code, _, err) = hook(&p, "claude-code", &tool);
    assert_eq!((code, err.as_str()), (0, ""));
    let (status, _) = p.json(&["status"]);
    assert_eq!(status["acknowledged"], true);
    let chain = chain(&p);
    let ack = chain
        .iter()
        .find(|l| l["kind"] == "ack")
        .expect("an ack line");
    assert_eq!(ack["via"], "transcript");
    p.ctxkeep(&["verify"])
        .assert()
        .success()
        .stdout(predicates::str::contains("CK801").not());
}

#[test]
fn acknowledgement_false_asks_for_nothing_and_verify_does_not_warn() {
    let p = Project::initialized();
    let state = p
        .state()
        .replacen("---\n", "---\nacknowledgement: false\n", 1);
    p.write("project-state.md", state);
    p.checkpoint(&[]).success();
    let prompt = start(&p, "s1", "startup");
    assert!(prompt.contains("Recovered from ckpt-0001"), "{prompt}");
    assert!(!prompt.contains("(ctxkeep "), "{prompt}");
    let note = start(&p, "s1", "compact");
    assert!(note.contains("checkpoint ckpt-0001"), "{note}");
    assert!(
        !note.contains("(ctxkeep ") && !note.contains("ctxkeep ack"),
        "{note}"
    );
    p.ctxkeep(&["verify"])
        .assert()
        .success()
        .stdout(predicates::str::contains("CK801").not());
}

#[test]
fn a_nonce_echoed_in_the_last_reply_is_acknowledged_at_stop() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let prompt = start(&p, "s1", "startup");
    let nonce = nonce_in(&prompt);
    let (status, _) = p.json(&["status"]);
    assert_eq!(status["acknowledged"], false);
    let stop = claude(
        &p,
        "Stop",
        "s1",
        json!({ "last_assistant_message": format!("Resuming from ckpt-0001 (ctxkeep {nonce})\n\nThe tests pass now.") }),
    );
    let (code, out, err) = hook(&p, "claude-code", &stop);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let (status, _) = p.json(&["status"]);
    assert_eq!(status["acknowledged"], true);
    // After a compaction the new nonce is the one asked for.
    let again = start(&p, "s1", "compact");
    let second = nonce_in(&again);
    assert_ne!(second, nonce);
    let (status, _) = p.json(&["status"]);
    assert_eq!(status["acknowledged"], false);
    p.ctxkeep(&["ack", &second]).assert().success();
}

#[test]
fn gemini_gets_json_on_stdout_even_when_the_hook_fails() {
    let p = Project::initialized();
    p.write("project-state.md", "---\nctxkeep: [unclosed\n---\n");
    let payload = json!({
        "session_id": "g1", "hook_event_name": "AfterTool", "cwd": p.root(),
        "transcript_path": p.path("chat.jsonl"),
    });
    let (code, out, err) = hook(&p, "gemini", &payload);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "{}");
    assert!(err.contains("project-state.md"), "{err}");
}

/// A Claude Code session that made a task, edited a file and ran the tests
/// three times, failing each time.
pub(crate) fn busy_transcript(p: &Project) {
    let tool = |id: &str, name: &str, input: Value| {
        json!({"type": "assistant", "isSidechain": false, "uuid": format!("u-{id}"),
            "message": {"id": format!("m-{id}"), "role": "assistant", "model": "claude-opus-4-6",
                "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
                "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 20_000, "output_tokens": 5}}})
        .to_string()
    };
    let result = |id: &str, text: &str, error: bool, extra: Value| {
        let mut v = json!({"type": "user", "isSidechain": false, "uuid": format!("r-{id}"),
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": text, "is_error": error}]}});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    let mut lines = vec![claude_user(
        "Add CRLF handling to the front matter parser and make the tests pass",
    )];
    lines.push(tool(
        "t1",
        "TaskCreate",
        json!({"subject": "Handle CRLF line endings in the front matter split",
            "description": "d", "activeForm": "Handling CRLF"}),
    ));
    lines.push(result(
        "t1",
        "Task #1 created successfully: Handle CRLF line endings in the front matter split",
        false,
        json!({"toolUseResult": {"task": {"id": "1"}}}),
    ));
    lines.push(tool(
        "t2",
        "TaskUpdate",
        json!({"taskId": "1", "status": "in_progress"}),
    ));
    lines.push(result("t2", "Updated task #1", false, json!({})));
    lines.push(tool(
        "w1",
        "Write",
        json!({"file_path": p.path("src/lexer.rs"), "content": "fn lex() {}"}),
    ));
    lines.push(result(
        "w1",
        "File created",
        false,
        json!({"toolUseResult": {"type": "create", "filePath": p.path("src/lexer.rs")}}),
    ));
    for n in 0..3 {
        let id = format!("b{n}");
        lines.push(tool(&id, "Bash", json!({"command": "cargo test"})));
        lines.push(result(
            &id,
            "Exit code 101\ntest split ... FAILED",
            true,
            json!({}),
        ));
    }
    p.write("transcript.jsonl", jsonl(&lines));
}

#[test]
fn an_automatic_checkpoint_records_what_the_session_did() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    busy_transcript(&p);
    let (code, _, err) = hook(
        &p,
        "claude-code",
        &claude(&p, "PreCompact", "s1", json!({ "trigger": "auto" })),
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let record: Value =
        serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0002.json")).unwrap();
    let seen = &record["observed"];
    assert_eq!(
        seen["request"],
        "Add CRLF handling to the front matter parser and make the tests pass"
    );
    assert_eq!(
        seen["plan"],
        json!([{"text": "Handle CRLF line endings in the front matter split", "status": "in_progress"}])
    );
    assert_eq!(seen["files"], json!(["src/lexer.rs"]));
    // Three failing runs in a row: one entry with its count.
    assert_eq!(
        seen["commands"],
        json!([{"command": "cargo test", "ok": false, "exit_code": 101, "times": 3}])
    );
    // No stated next step: the plan item in progress stands for it.
    assert_eq!(
        seen["next_step"],
        "Handle CRLF line endings in the front matter split"
    );
    // The reader sees it where it looks: the prompt after compaction.
    let prompt = start(&p, "s1", "compact");
    for shown in [
        "What remains (from claude-code's transcript",
        "- The user's request: Add CRLF handling",
        "  - [in_progress] Handle CRLF line endings",
        "- Next step: Handle CRLF line endings",
        "Observed in the session",
        "- Files changed: src/lexer.rs",
        "`cargo test`: failed (exit 101) ×3",
    ] {
        assert!(prompt.contains(shown), "{shown:?} missing from {prompt}");
    }
    assert!(
        prompt.find("What remains").unwrap() < prompt.find("Observed in the session").unwrap(),
        "{prompt}"
    );
    assert!(p.state().contains("### Observed in the session"));
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn the_gutter_is_reported_once_per_pattern() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    busy_transcript(&p);
    // The first event that reads the transcript gives the loop it holds.
    let prompt = claude(&p, "UserPromptSubmit", "s1", json!({ "prompt": "go on" }));
    let (code, out, _) = hook(&p, "claude-code", &prompt);
    assert_eq!(code, 0);
    let said = injected(&out);
    assert!(
        said.contains("`cargo test` has failed 3 times in a row"),
        "{said}"
    );
    assert!(said.contains("ctxkeep checkpoint --note"));
    let post = claude(
        &p,
        "PostToolUse",
        "s1",
        json!({ "tool_name": "Bash", "tool_input": {}, "tool_response": {} }),
    );
    for _ in 0..2 {
        let (_, again, _) = hook(&p, "claude-code", &post);
        assert_eq!(injected(&again), "", "each loop is given once per session");
    }
    let logged = events(&p, "gutter");
    assert_eq!(logged.len(), 1);
    assert_eq!(
        (
            &logged[0]["kind"],
            &logged[0]["command"],
            &logged[0]["count"]
        ),
        (&json!("same_failure"), &json!("cargo test"), &json!(3))
    );
    let (status, _) = p.json(&["status", "--session", "s1"]);
    assert_eq!(status["gutter"][0]["kind"], "same_failure");

    // `gutter: false` turns it off.
    let q = Project::initialized();
    let text = q
        .state()
        .replacen("ctxkeep: 1\n", "ctxkeep: 1\ngutter: false\n", 1);
    q.write("project-state.md", text);
    q.checkpoint(&[]).success();
    busy_transcript(&q);
    let post = claude(
        &q,
        "PostToolUse",
        "s1",
        json!({ "tool_name": "Bash", "tool_input": {}, "tool_response": {} }),
    );
    let (_, out, _) = hook(&q, "claude-code", &post);
    assert_eq!(injected(&out), "");
}

#[test]
fn checkpoint_by_hand_can_read_the_transcript() {
    let p = Project::initialized();
    busy_transcript(&p);
    let (v, code) = p.json(&[
        "checkpoint",
        "--phase",
        "parsing",
        "--task",
        "CRLF",
        "--agent",
        "claude-code",
        "--next",
        "fix the split test",
        "--transcript",
        p.path("transcript.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["observed"]["files"], json!(["src/lexer.rs"]));
    assert_eq!(v["observed"]["agent"], "claude-code");
}

#[test]
fn a_restored_claude_session_starts_from_the_size_it_states() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let payload = claude(
        &p,
        "SessionStart",
        "s1",
        json!({ "source": "resume", "context_tokens": 27_020, "model": "claude-opus-4-6" }),
    );
    let (code, _, err) = hook(&p, "claude-code", &payload);
    assert_eq!((code, err.as_str()), (0, ""));
    let (status, _) = p.json(&["status", "--session", "s1"]);
    assert_eq!(status["tokens"], 27_020);
}

#[test]
fn gemini_precompress_below_its_threshold_writes_no_checkpoint() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let chat = |input: u64| jsonl(&[gemini_meta(), gemini_user("u1"), gemini_reply("g1", input)]);
    let payload = json!({
        "session_id": "g1", "hook_event_name": "PreCompress", "trigger": "auto",
        "cwd": p.root(), "transcript_path": p.path("chat.jsonl"),
    });
    // 40,000 of 1,048,576: far below Gemini's default compression point (half).
    p.write("chat.jsonl", chat(40_000));
    let (code, out, _) = hook(&p, "gemini", &payload);
    assert_eq!((code, out.trim()), (0, "{}"));
    assert!(!p.path(".ctxkeep/checkpoints/ckpt-0002.json").exists());
    let skipped = events(&p, "checkpoint_skipped");
    assert!(skipped[0]["why"]
        .as_str()
        .unwrap()
        .contains("compression point"));
    // Past it, Gemini compresses: the checkpoint is written.
    p.write("chat.jsonl", chat(600_000));
    hook(&p, "gemini", &payload);
    assert!(p.path(".ctxkeep/checkpoints/ckpt-0002.json").exists());
}

#[test]
fn a_gemini_compression_is_seen_in_the_usage_and_the_prompt_given_again() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let chat = |input: u64| jsonl(&[gemini_meta(), gemini_user("u1"), gemini_reply("g1", input)]);
    let event = |name: &str, extra: Value| {
        let mut v = json!({
            "session_id": "g1", "hook_event_name": name, "cwd": p.root(),
            "transcript_path": p.path("chat.jsonl"),
        });
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    let prompt = |text: &str| event("BeforeAgent", json!({ "prompt": text }));
    hook(
        &p,
        "gemini",
        &event("SessionStart", json!({ "source": "startup" })),
    );
    p.write("chat.jsonl", chat(10_000));
    let (_, first, _) = hook(&p, "gemini", &prompt("go"));
    assert!(injected(&first).contains("Recovered from ckpt-0001"));
    // Near the compression point (524,288), then far below it: compressed.
    p.write("chat.jsonl", chat(520_000));
    let (_, near, _) = hook(&p, "gemini", &prompt("go on"));
    assert!(!injected(&near).contains("Recovered from"), "{near}");
    p.write("chat.jsonl", chat(60_000));
    let (_, after, _) = hook(&p, "gemini", &prompt("and on"));
    let after = injected(&after);
    // ckpt-0002: the stage-98 checkpoint written near the compression point.
    assert!(after.contains("Recovered from ckpt-0002"), "{after}");
    assert_ne!(nonce_in(&after), nonce_in(&injected(&first)), "a new nonce");
    assert_eq!(events(&p, "compaction")[0]["trigger"], "detected");
    let all = chain(&p);
    assert_eq!(all.iter().filter(|l| l["kind"] == "session").count(), 1);
    assert_eq!(all.iter().filter(|l| l["kind"] == "restore").count(), 1);
}

#[test]
fn a_file_edited_early_in_a_long_session_is_in_its_checkpoints() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let tool = |id: &str, name: &str, input: Value, context: u64| {
        json!({"type": "assistant", "isSidechain": false, "uuid": format!("u-{id}"),
            "message": {"id": format!("m-{id}"), "role": "assistant", "model": "claude-opus-4-6",
                "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
                "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": context - 10, "output_tokens": 5}}})
        .to_string()
    };
    let result = |id: &str, text: &str| {
        json!({"type": "user", "isSidechain": false, "uuid": format!("r-{id}"),
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": text, "is_error": false}]}})
        .to_string()
    };
    let post = |p: &Project| {
        let (code, _, err) = hook(
            p,
            "claude-code",
            &claude(
                p,
                "PostToolUse",
                "s1",
                json!({"tool_name": "Read", "tool_input": {}, "tool_response": {}}),
            ),
        );
        assert_eq!((code, err.as_str()), (0, ""));
    };
    let mut lines = vec![
        claude_user("Port the transcript reader to one open per event"),
        tool(
            "w1",
            "Write",
            json!({"file_path": p.path("src/early.rs"), "content": "fn early() {}"}),
            20_000,
        ),
        result("w1", "File created"),
    ];
    p.write("transcript.jsonl", jsonl(&lines));
    post(&p);
    // Then 1.5 MiB of reading, the hooks following it call by call.
    let page = "x".repeat(128 * 1024);
    for n in 0..12 {
        let id = format!("r{n}");
        lines.push(tool(
            &id,
            "Read",
            json!({"file_path": p.path("src/big.rs")}),
            21_000,
        ));
        lines.push(result(&id, &page));
        p.write("transcript.jsonl", jsonl(&lines));
        post(&p);
    }
    // A new task near the end, a last edit, and usage past the checkpoint stage.
    lines.push(claude_user(
        "Now document the reader in the architecture notes",
    ));
    lines.push(tool(
        "w2",
        "Edit",
        json!({"file_path": p.path("docs/architecture.md"), "old_string": "a", "new_string": "b"}),
        182_000,
    ));
    lines.push(result("w2", "The file has been updated"));
    p.write("transcript.jsonl", jsonl(&lines));
    post(&p);
    let stage: Value =
        serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0002.json")).unwrap();
    assert!(
        stage["trigger"].as_str().unwrap().starts_with("stage-"),
        "{}",
        stage["trigger"]
    );
    let seen = &stage["observed"];
    assert_eq!(
        seen["request"],
        "Now document the reader in the architecture notes"
    );
    assert_eq!(
        seen["files"],
        json!(["docs/architecture.md", "src/early.rs"])
    );
    // And the checkpoint before a compaction.
    lines.push(tool(
        "w3",
        "Edit",
        json!({"file_path": p.path("docs/agents.md")}),
        183_000,
    ));
    lines.push(result("w3", "The file has been updated"));
    p.write("transcript.jsonl", jsonl(&lines));
    let (code, _, err) = hook(
        &p,
        "claude-code",
        &claude(&p, "PreCompact", "s1", json!({ "trigger": "auto" })),
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let pre: Value = serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0003.json")).unwrap();
    assert_eq!(
        pre["observed"]["files"],
        json!(["docs/agents.md", "docs/architecture.md", "src/early.rs"])
    );
}
