//! Loop detection through `ctxkeep hook AGENT`, in each agent's real order: the tool call is in
//! the transcript when its hook runs, its result only after (FORMATS §7b). Payloads have the
//! shapes captured from the real CLIs (tests/fixtures/agents/). A loop is given in the failing
//! call's own hook; one found at an event that cannot reach the model waits for the next.

use std::io::Write;

use serde_json::{json, Value};

use crate::sessions::events;
use crate::support::Project;

/// One agent session: its transcript grows as the agent writes it, and hooks run in between.
struct Session<'a> {
    p: &'a Project,
    agent: &'static str,
    id: &'static str,
    transcript: std::path::PathBuf,
}

impl<'a> Session<'a> {
    fn new(p: &'a Project, agent: &'static str, file: &str) -> Session<'a> {
        let transcript = p.path(file);
        std::fs::write(&transcript, "").unwrap();
        Session {
            p,
            agent,
            id: "s1",
            transcript,
        }
    }

    fn append(&self, lines: &[Value]) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.transcript)
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    }

    /// The payload with the fields every event of this agent has.
    fn payload(&self, event: &str, extra: Value) -> Value {
        let mut v = json!({
            "session_id": self.id,
            "transcript_path": self.transcript,
            "cwd": self.p.root(),
            "hook_event_name": event,
        });
        match self.agent {
            "claude-code" => {
                v["permission_mode"] = json!("bypassPermissions");
                v["prompt_id"] = json!("709ec45b-bf81-4027-8af8-472ca531a482");
            }
            "codex" => {
                v["turn_id"] = json!("01a20a1d-7ef2-7b70-82a8-d09aac8f76c3");
                v["model"] = json!("gpt-5.5");
                v["permission_mode"] = json!("bypassPermissions");
            }
            _ => v["timestamp"] = json!("2026-11-23T20:34:17.024Z"),
        }
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    }

    /// Runs the hook; returns what it adds to the model's context ("" when nothing).
    fn hook(&self, event: &str, extra: Value) -> String {
        let payload = self.payload(event, extra);
        let out = self
            .p
            .ctxkeep(&["hook", self.agent])
            .write_stdin(payload.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{payload}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        // Claude Code's PreCompact answers in plain text, for the summarizer, not the model.
        if stdout.trim().is_empty() || (event == "PreCompact" && !stdout.starts_with('{')) {
            return String::new();
        }
        // Claude Code's PreCompact answer is plain text for its summarizer.
        let Ok(v) = serde_json::from_str::<Value>(&stdout) else {
            return stdout;
        };
        if let Some(text) = v["hookSpecificOutput"]["additionalContext"].as_str() {
            assert_eq!(v["hookSpecificOutput"]["hookEventName"], event);
            return text.to_string();
        }
        String::new()
    }
}

const LOOP: &str = "you look stuck in a loop";

/// Which of the hooks' answers carry a loop warning, by index.
fn warned_at(said: &[String]) -> Vec<usize> {
    said.iter()
        .enumerate()
        .filter(|(_, t)| t.contains(LOOP))
        .map(|(i, _)| i)
        .collect()
}

fn project() -> Project {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p
}

// --- Claude Code ---------------------------------------------------------------------------

fn cc_call(id: &str, name: &str, input: Value) -> Value {
    json!({"parentUuid": "x", "isSidechain": false, "sessionId": "s1", "type": "assistant",
        "uuid": format!("a-{id}"), "timestamp": "2026-11-23T20:33:56.000Z",
        "message": {"model": "claude-opus-4-6", "id": format!("m-{id}"), "role": "assistant",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 20000, "output_tokens": 5}}})
}

fn cc_result(id: &str, text: &str, is_error: bool) -> Value {
    json!({"parentUuid": "x", "isSidechain": false, "sessionId": "s1", "type": "user",
        "uuid": format!("r-{id}"), "timestamp": "2026-11-23T20:33:57.000Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
            "content": text, "is_error": is_error}]},
        "toolUseResult": if is_error { json!(format!("Error: {text}")) } else { json!({"stdout": text, "stderr": ""}) }})
}

fn cc_text(text: &str) -> Value {
    json!({"parentUuid": "x", "isSidechain": false, "sessionId": "s1", "type": "assistant",
        "uuid": "t-1", "timestamp": "2026-11-23T20:33:58.000Z",
        "message": {"model": "claude-opus-4-6", "id": "m-text", "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 20000, "output_tokens": 5}}})
}

/// A `Bash` call as Claude Code runs it: the call in the transcript, the hook
/// (`PostToolUseFailure` for a non-zero exit), then the result. Returns what the hook said.
fn cc_bash(s: &Session, id: &str, command: &str, exit: i64, output: &str) -> String {
    s.append(&[cc_call(
        id,
        "Bash",
        json!({"command": command, "description": "run the tests"}),
    )]);
    let said = if exit == 0 {
        s.hook(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": id,
                "tool_input": {"command": command, "description": "run the tests"},
                "tool_response": {"stdout": output, "stderr": "", "interrupted": false,
                    "isImage": false, "noOutputExpected": false}, "duration_ms": 68}),
        )
    } else {
        s.hook(
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_use_id": id,
                "tool_input": {"command": command, "description": "run the tests"},
                "error": format!("Exit code {exit}\n{output}"), "is_interrupt": false,
                "duration_ms": 194}),
        )
    };
    let text = if exit == 0 {
        output.to_string()
    } else {
        format!("Exit code {exit}\n{output}")
    };
    s.append(&[cc_result(id, &text, exit != 0)]);
    said
}

/// An `Edit` of `path` from `before` to `after`, as Claude Code reports it.
fn cc_edit(s: &Session, id: &str, path: &str, before: &str, after: &str) -> String {
    let file = s.p.path(path).display().to_string();
    let input = json!({"file_path": file, "old_string": before, "new_string": after,
        "replace_all": false});
    s.append(&[cc_call(id, "Edit", input.clone())]);
    std::fs::write(s.p.path(path), after).unwrap();
    let said = s.hook(
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_use_id": id, "tool_input": input,
            "tool_response": {"filePath": file, "oldString": before, "newString": after,
                "originalFile": before, "structuredPatch": [], "userModified": false,
                "replaceAll": false}, "duration_ms": 54}),
    );
    s.append(&[cc_result(
        id,
        &format!("The file {file} has been updated."),
        false,
    )]);
    said
}

const PYTEST_FAIL: &str =
    "FAILED tests/test_table.py::test_blank_lines - assert 3 == 4\n1 failed, 39 passed in 1.21s";

#[test]
fn claude_code_a_real_failure_loop_is_given_once_in_the_failing_calls_own_hook() {
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    s.hook(
        "UserPromptSubmit",
        json!({"prompt": "make the table tests pass"}),
    );
    let mut said = Vec::new();
    for i in 0..5 {
        said.push(cc_edit(
            &s,
            &format!("e{i}"),
            "table.py",
            &format!("v{i}"),
            &format!("v{}", i + 1),
        ));
        said.push(cc_bash(
            &s,
            &format!("b{i}"),
            "pytest -q tests",
            1,
            PYTEST_FAIL,
        ));
    }
    let warned = warned_at(&said);
    assert_eq!(
        warned,
        vec![5],
        "the third failing run's own hook: {said:#?}"
    );
    let text = &said[5];
    assert!(
        text.contains("`pytest -q tests` has failed 3 times in a row with the same error"),
        "{text}"
    );
    assert!(
        text.contains("test_blank_lines"),
        "names the failure: {text}"
    );
    s.append(&[cc_text("The tests still fail.")]);
    s.hook(
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "The tests still fail."}),
    );
    assert_eq!(s.hook("UserPromptSubmit", json!({"prompt": "go on"})), "");
    let logged = events(&p, "gutter");
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["kind"], "same_failure");
    assert_eq!(logged[0]["told"], true);
    let (status, _) = p.json(&["status", "--session", "s1"]);
    assert_eq!(status["gutter"][0]["count"], 3);
}

#[test]
fn claude_code_a_converging_fix_loop_is_never_given() {
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    let names: Vec<String> = (0..12).map(|i| format!("test_case_{i}")).collect();
    for (round, n) in [12usize, 11, 2, 1].into_iter().enumerate() {
        let mut out = String::new();
        for t in &names[..n] {
            out.push_str(&format!(
                "FAILED tests/test_table.py::{t} - AssertionError\n"
            ));
        }
        out.push_str(&format!("{n} failed, {} passed in 1.0s", 40 - n));
        assert_eq!(
            cc_bash(&s, &format!("b{round}"), "pytest -q tests", 1, &out),
            ""
        );
        let edit = cc_edit(
            &s,
            &format!("e{round}"),
            "table.py",
            &format!("v{round}"),
            &format!("v{}", round + 1),
        );
        assert_eq!(edit, "");
    }
    assert_eq!(
        cc_bash(&s, "b9", "pytest -q tests", 0, "40 passed in 1.0s"),
        ""
    );
    assert!(events(&p, "gutter").is_empty());
}

#[test]
fn claude_code_ten_green_edits_of_one_file_are_never_given() {
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    for i in 0..10 {
        let edit = cc_edit(
            &s,
            &format!("e{i}"),
            "src_parser.rs",
            &format!("fn v{i}() {{}}"),
            &format!("fn v{}() {{}}", i + 1),
        );
        let test = cc_bash(
            &s,
            &format!("t{i}"),
            "cargo test",
            0,
            "test result: ok. 12 passed; 0 failed",
        );
        assert_eq!((edit.as_str(), test.as_str()), ("", ""), "round {i}");
    }
    assert!(events(&p, "gutter").is_empty());
}

#[test]
fn claude_code_a_file_flip_flopping_is_given_once() {
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    let mut said = Vec::new();
    for i in 0..8 {
        let (before, after) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
        said.push(cc_edit(&s, &format!("e{i}"), "fmt.rs", before, after));
    }
    let warned = warned_at(&said);
    // a→b, b→a, a→b, b→a, a→b: the same change a third time.
    assert_eq!(warned, vec![4], "{said:#?}");
    assert!(
        said[4].contains("fmt.rs` keeps going back and forth"),
        "{}",
        said[4]
    );
    assert_eq!(events(&p, "gutter")[0]["kind"], "oscillation");
}

#[test]
fn claude_code_failures_seen_only_in_the_transcript_are_given_at_the_next_prompt() {
    // Settings installed before PostToolUseFailure was hooked: the failures reach ctxkeep only
    // through the transcript, first at the turn's `Stop`, whose reply cannot reach the model.
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    for i in 0..3 {
        let id = format!("b{i}");
        s.append(&[
            cc_call(&id, "Bash", json!({"command": "make check"})),
            cc_result(&id, "Exit code 2\nmake: *** [check] Error 2", true),
        ]);
    }
    s.append(&[cc_text("It keeps failing; I will stop here.")]);
    let stop = s.hook(
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "I will stop here."}),
    );
    assert_eq!(stop, "");
    let logged = events(&p, "gutter");
    assert_eq!((logged.len(), &logged[0]["told"]), (1, &json!(false)));
    let next = s.hook("UserPromptSubmit", json!({"prompt": "try again"}));
    assert!(
        next.contains("`make check` has failed 3 times in a row"),
        "{next}"
    );
    assert_eq!(
        s.hook("UserPromptSubmit", json!({"prompt": "and?"})),
        "",
        "once"
    );
}

#[test]
fn claude_code_pre_compact_records_the_failing_call_from_its_payload() {
    // Compacted in the middle of a turn: the failing command's result is not in the
    // transcript yet when PreCompact runs, only in its PostToolUseFailure's payload.
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    s.append(&[
        json!({"parentUuid": "x", "isSidechain": false, "sessionId": "s1", "type": "user",
        "uuid": "u1", "message": {"role": "user", "content": "fix the widget check"}}),
    ]);
    s.append(&[cc_call("b1", "Bash", json!({"command": "make widgets"}))]);
    s.hook(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_use_id": "b1", "tool_input": {"command": "make widgets"},
            "error": "Exit code 3\nwidget check failed", "is_interrupt": false}),
    );
    s.hook(
        "PreCompact",
        json!({"trigger": "auto", "custom_instructions": null}),
    );
    let ckpt: Value = serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0002.json")).unwrap();
    let commands = ckpt["observed"]["commands"].clone();
    assert_eq!(
        commands,
        json!([{"command": "make widgets", "ok": false, "exit_code": 3,
                 "at": "2026-11-23T20:33:56Z"}]),
        "{ckpt}"
    );
}

// --- Codex -----------------------------------------------------------------------------------

fn cx(kind: &str, payload: Value) -> Value {
    json!({"timestamp": "2026-11-23T20:33:56.074Z", "type": kind, "payload": payload})
}

fn cx_call(id: &str, cmd: &str) -> Value {
    cx(
        "response_item",
        json!({"type": "function_call", "status": "completed", "id": format!("fc_{id}"),
            "name": "exec_command", "arguments": json!({"cmd": cmd}).to_string(), "call_id": id}),
    )
}

/// What Codex 0.169 writes before running the call's PostToolUse hook.
fn cx_completed(id: &str, cmd: &str, exit: i64, output: &str) -> Value {
    cx(
        "event_msg",
        json!({"type": "item_completed", "thread_id": "t", "turn_id": "u",
            "item": {"type": "CommandExecution", "id": id, "process_id": "83734",
                "command": ["/bin/bash", "-lc", cmd], "status": if exit == 0 { "completed" } else { "failed" },
                "aggregated_output": output, "exit_code": exit,
                "duration": {"secs": 0, "nanos": 6570}}}),
    )
}

fn cx_output(id: &str, exit: i64, output: &str) -> Value {
    cx(
        "response_item",
        json!({"type": "function_call_output", "id": format!("fco_{id}"), "call_id": id,
            "output": format!("Chunk ID: 1d383c\nWall time: 0.0000 seconds\nProcess exited with code {exit}\nOriginal token count: 5\nOutput:\n{output}")}),
    )
}

fn cx_bash(s: &Session, id: &str, cmd: &str, exit: i64, output: &str, early: bool) -> String {
    s.append(&[cx_call(id, cmd)]);
    if early {
        s.append(&[cx_completed(id, cmd, exit, output)]);
    }
    let said = s.hook(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": cmd}, "tool_response": output,
            "tool_use_id": id}),
    );
    s.append(&[cx_output(id, exit, output)]);
    said
}

const WIDGET: &str = "sh -c 'echo widget check failed >&2; exit 3'";

#[test]
fn codex_a_real_failure_loop_is_given_in_the_failing_calls_own_hook() {
    let p = project();
    let s = Session::new(&p, "codex", "rollout-2026-11-23T20-33-54-01a20a1d.jsonl");
    let said: Vec<String> = (0..4)
        .map(|i| {
            cx_bash(
                &s,
                &format!("call_{i}"),
                WIDGET,
                3,
                "widget check failed\n",
                true,
            )
        })
        .collect();
    assert!(said[0].is_empty() && said[1].is_empty(), "{said:#?}");
    assert!(said[2].contains(LOOP), "{said:#?}");
    assert!(said[2].contains("widget check failed"), "{}", said[2]);
    assert_eq!(said[3], "");
    assert_eq!(events(&p, "gutter").len(), 1);
}

#[test]
fn codex_three_failures_then_a_text_reply_are_given_at_the_next_prompt() {
    // The exit code reaches the rollout only after the hooks ran (the payload has none).
    let p = project();
    let s = Session::new(&p, "codex", "rollout-2026-11-23T20-33-54-01a20a1d.jsonl");
    for i in 0..3 {
        let said = cx_bash(
            &s,
            &format!("call_{i}"),
            WIDGET,
            3,
            "widget check failed\n",
            false,
        );
        assert_eq!(said, "", "no outcome yet at call {i}");
    }
    s.append(&[cx(
        "response_item",
        json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "The check keeps failing."}]}),
    )]);
    let stop = s.hook(
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "The check keeps failing."}),
    );
    assert_eq!(stop, "");
    let next = s.hook("UserPromptSubmit", json!({"prompt": "fix it"}));
    assert!(
        next.contains(LOOP) && next.contains("widget check failed"),
        "{next}"
    );
}

// --- Gemini ----------------------------------------------------------------------------------

fn gm_message(n: usize, call: &str, cmd: &str, llm: &str) -> Value {
    json!({"id": format!("g{n}"), "timestamp": "2026-11-23T20:34:16.475Z", "type": "gemini",
        "content": "Running the check.", "model": "gemini-2.5-pro",
        "tokens": {"input": 24000, "output": 20, "cached": 0, "thoughts": 0, "tool": 0, "total": 24020},
        "toolCalls": [{"id": call, "name": "run_shell_command", "args": {"command": cmd},
            "result": [{"functionResponse": {"id": call, "name": "run_shell_command",
                "response": {"output": llm}}}],
            "status": "success", "resultDisplay": "widget check failed"}]})
}

fn gm_llm(exit: i64, output: &str) -> String {
    let code = if exit == 0 {
        String::new()
    } else {
        format!("Exit Code: {exit}\n")
    };
    format!("<untrusted_context>\nOutput: {output}\n{code}Process Group PGID: 2631{exit}\n</untrusted_context>")
}

fn gm_shell(s: &Session, n: usize, cmd: &str, exit: i64, output: &str) -> String {
    let llm = gm_llm(exit, output);
    let said = s.hook(
        "AfterTool",
        json!({"tool_name": "run_shell_command", "tool_input": {"command": cmd},
            "tool_response": {"llmContent": llm, "returnDisplay": output}}),
    );
    // Gemini records the finished call after the hook, in a new copy of its message.
    s.append(&[gm_message(
        n,
        &format!("run_shell_command__run_shell_command_17954660564{n}_0"),
        cmd,
        &llm,
    )]);
    said
}

#[test]
fn gemini_a_real_failure_loop_is_given_in_the_failing_calls_own_hook() {
    let p = project();
    let s = Session::new(&p, "gemini", "session-2026-11-23T20-34-ac089633.jsonl");
    s.append(&[
        json!({"sessionId": "s1", "projectHash": "0", "startTime": "2026-11-23T20:34:00.000Z",
        "lastUpdated": "2026-11-23T20:34:00.000Z", "kind": "main"}),
    ]);
    let mut said = Vec::new();
    for i in 0..4 {
        said.push(gm_shell(&s, i, WIDGET, 3, "widget check failed"));
        // A prompt in between reads the transcript's copies of the calls: they are not
        // counted twice.
        said.push(s.hook("BeforeAgent", json!({"prompt": "go on"})));
    }
    let warned = warned_at(&said);
    assert_eq!(warned, vec![4], "the third AfterTool: {said:#?}");
    assert!(
        said[4].contains("exit 3: widget check failed"),
        "{}",
        said[4]
    );
    assert_eq!(events(&p, "gutter").len(), 1);
}

#[test]
fn gemini_a_checkpoint_records_the_call_its_transcript_does_not_show_yet() {
    // Gemini writes a call to its recording only once it is finished, after AfterTool: a
    // checkpoint written then takes the call and its outcome from the payload.
    let p = project();
    let s = Session::new(&p, "gemini", "session-2026-11-23T20-34-ac089633.jsonl");
    s.append(&[
        json!({"sessionId": "s1", "projectHash": "0", "startTime": "2026-11-23T20:34:00.000Z",
        "lastUpdated": "2026-11-23T20:34:00.000Z", "kind": "main"}),
    ]);
    s.hook("BeforeAgent", json!({"prompt": "run the widget check"}));
    s.hook(
        "AfterTool",
        json!({"tool_name": "run_shell_command", "tool_input": {"command": WIDGET},
            "tool_response": {"llmContent": gm_llm(3, "widget check failed"),
                "returnDisplay": "widget check failed"}}),
    );
    s.hook("SessionEnd", json!({"reason": "exit"}));
    let ckpt: Value = serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0002.json")).unwrap();
    assert_eq!(ckpt["trigger"], "session-end");
    assert_eq!(
        ckpt["observed"]["commands"],
        json!([{"command": WIDGET, "ok": false, "exit_code": 3}]),
        "{ckpt}"
    );
}

#[test]
fn gemini_passing_and_changing_checks_are_never_given() {
    let p = project();
    let s = Session::new(&p, "gemini", "session-2026-11-23T20-34-ac089633.jsonl");
    s.append(&[
        json!({"sessionId": "s1", "projectHash": "0", "startTime": "2026-11-23T20:34:00.000Z",
        "lastUpdated": "2026-11-23T20:34:00.000Z", "kind": "main"}),
    ]);
    let errors = [
        "no such table: widgets",
        "column name missing",
        "syntax error near FROM",
    ];
    for (i, e) in errors.iter().enumerate() {
        assert_eq!(gm_shell(&s, i, "make db", 2, e), "");
    }
    for i in 3..8 {
        assert_eq!(gm_shell(&s, i, "make db", 0, "ok"), "");
    }
    assert!(events(&p, "gutter").is_empty());
}

// --- Settings --------------------------------------------------------------------------------

#[test]
fn the_limits_are_front_matter_settings_old_keys_included() {
    for (setting, warned) in [
        ("loops: false\n", false),
        ("loops:\n  same_failure: 3\n  same_file: 10\n", true),
        ("loops:\n  same_failure: 4\n", false),
        // `gutter`, the setting's older name, is still read.
        ("gutter: false\n", false),
        ("gutter:\n  same_failure: 3\n  same_file: 10\n", true),
        ("gutter:\n  same_failure: 4\n", false),
        ("gutter:\n  same_failure: 0\n  oscillation: 2\n", false),
    ] {
        let p = Project::initialized();
        let text = p
            .state()
            .replacen("ctxkeep: 1\n", &format!("ctxkeep: 1\n{setting}"), 1);
        p.write("project-state.md", text);
        p.checkpoint(&[]).success();
        let s = Session::new(&p, "claude-code", "cc.jsonl");
        let said: String = (0..3)
            .map(|i| cc_bash(&s, &format!("b{i}"), "make check", 2, "Error 2"))
            .collect();
        assert_eq!(said.contains(LOOP), warned, "{setting}: {said}");
    }
}

#[test]
fn calls_already_read_are_never_counted_again() {
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    for i in 0..2 {
        assert_eq!(
            cc_bash(&s, &format!("b{i}"), "make check", 2, "Error 2"),
            ""
        );
    }
    // Events with nothing new in the transcript: it is read on from where the last one
    // stopped, so the two failures are not counted again.
    for _ in 0..4 {
        assert_eq!(s.hook("UserPromptSubmit", json!({"prompt": "go on"})), "");
        assert_eq!(s.hook("Stop", json!({"stop_hook_active": false})), "");
    }
    let record: Value = serde_json::from_str(&p.read(".ctxkeep/sessions/s1.json")).unwrap();
    let len = std::fs::metadata(&s.transcript).unwrap().len();
    assert_eq!(record["loops"]["cursor"]["offset"], len);
    assert!(cc_bash(&s, "b2", "make check", 2, "Error 2").contains(LOOP));
}

// --- Qwen Code -------------------------------------------------------------------------------

/// Qwen Code's frame around a shell command's result, as its hooks and chat records carry it.
fn qw_frame(cmd: &str, exit: i64, output: &str) -> String {
    format!(
        "Command: {cmd}\nDirectory: (root)\nOutput: {output}\nError: (none)\nExit Code: {exit}\n\
         Signal: (none)\nProcess Group PGID: (none)"
    )
}

/// One shell call: its hook (`PostToolUseFailure` for a non-zero exit, as Qwen Code 0.24.4 fires
/// it), and the reply and the result in the chat file, which Qwen usually writes after the hook.
fn qw_shell(s: &Session, n: usize, cmd: &str, exit: i64, output: &str) -> String {
    qw_shell_ordered(s, n, cmd, exit, output, false)
}

fn qw_shell_ordered(
    s: &Session,
    n: usize,
    cmd: &str,
    exit: i64,
    output: &str,
    chat_first: bool,
) -> String {
    let frame = qw_frame(cmd, exit, output);
    let call = format!("call_{n}");
    let record = |kind: &str, provenance: &str, message: Value| {
        json!({"uuid": format!("{kind}{n}"), "sessionId": "s1", "timestamp": "2026-11-25T05:50:40.294Z",
            "type": kind, "provenance": provenance, "cwd": s.p.root(), "version": "0.24.4",
            "message": message})
    };
    // A failed command's frame is the response's `error`, a finished one's its `output`.
    let response = if exit == 0 {
        json!({"output": frame})
    } else {
        json!({"error": frame})
    };
    let chat = [
        record(
            "assistant",
            "assistant_output",
            json!({"role": "model", "parts": [{"functionCall": {"id": call, "name": "run_shell_command",
                "args": {"command": cmd, "is_background": false}}}]}),
        ),
        record(
            "tool_result",
            "tool_result",
            json!({"role": "user", "parts": [{"functionResponse": {"id": call, "name": "run_shell_command",
                "response": response}}]}),
        ),
    ];
    if chat_first {
        s.append(&chat);
    }
    let said = if exit == 0 {
        s.hook(
            "PostToolUse",
            json!({"tool_name": "run_shell_command", "tool_use_id": format!("toolu_{n}"), "tool_call_id": call,
                "tool_input": {"command": cmd, "is_background": false},
                "tool_response": {"llmContent": frame, "returnDisplay": output}}),
        )
    } else {
        s.hook(
            "PostToolUseFailure",
            json!({"tool_name": "run_shell_command", "tool_use_id": format!("toolu_{n}"), "tool_call_id": call,
                "tool_input": {"command": cmd, "is_background": false},
                "error": frame, "is_interrupt": false}),
        )
    };
    if !chat_first {
        s.append(&chat);
    }
    said
}

/// Qwen Code sometimes writes the result to its chat file before the call's hook has run: the
/// failure read there is the one the payload gives, so the count goes on either way.
#[test]
fn qwen_a_failure_loop_is_given_whether_the_chat_file_or_the_hook_comes_first() {
    let p = project();
    let s = Session::new(&p, "qwen-code", "chat.jsonl");
    let mut said = Vec::new();
    for i in 0..4 {
        said.push(qw_shell_ordered(
            &s,
            i,
            WIDGET,
            3,
            "widget check failed",
            i % 2 == 0,
        ));
        said.push(s.hook("UserPromptSubmit", json!({"prompt": "go on"})));
    }
    let warned = warned_at(&said);
    assert_eq!(warned, vec![4], "the third failing call: {said:#?}");
    assert!(
        said[4].contains("exit 3: widget check failed"),
        "{}",
        said[4]
    );
}

#[test]
fn qwen_a_real_failure_loop_is_given_in_the_failing_calls_own_hook() {
    let p = project();
    let s = Session::new(&p, "qwen-code", "chat.jsonl");
    let mut said = Vec::new();
    for i in 0..4 {
        said.push(qw_shell(&s, i, WIDGET, 3, "widget check failed"));
        // A prompt in between reads the chat file's copies of the calls: not counted twice.
        said.push(s.hook("UserPromptSubmit", json!({"prompt": "go on"})));
    }
    let warned = warned_at(&said);
    assert_eq!(warned, vec![4], "the third failing call: {said:#?}");
    assert!(
        said[4].contains("exit 3: widget check failed"),
        "{}",
        said[4]
    );
    assert_eq!(events(&p, "gutter").len(), 1);
}

#[test]
fn qwen_a_checkpoint_records_the_call_its_chat_file_does_not_show_yet() {
    let p = project();
    let s = Session::new(&p, "qwen-code", "chat.jsonl");
    s.hook(
        "UserPromptSubmit",
        json!({"prompt": "run the widget check"}),
    );
    s.hook(
        "PostToolUseFailure",
        json!({"tool_name": "run_shell_command", "tool_use_id": "toolu_1",
            "tool_input": {"command": WIDGET, "is_background": false},
            "error": qw_frame(WIDGET, 3, "widget check failed"), "is_interrupt": false}),
    );
    s.hook("PreCompact", json!({"trigger": "auto"}));
    let ckpt: Value = serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0002.json")).unwrap();
    assert_eq!(ckpt["trigger"], "pre-compact");
    assert_eq!(
        ckpt["observed"]["commands"],
        json!([{"command": WIDGET, "ok": false, "exit_code": 3}]),
        "{ckpt}"
    );
}

#[test]
fn qwen_passing_checks_and_edits_are_never_given() {
    let p = project();
    let s = Session::new(&p, "qwen-code", "chat.jsonl");
    let mut said = Vec::new();
    for i in 0..5 {
        said.push(qw_shell(&s, i, "cargo test", 0, "test result: ok"));
        said.push(s.hook(
            "PostToolUse",
            json!({"tool_name": "edit", "tool_use_id": format!("toolu_e{i}"),
                "tool_input": {"file_path": p.path("src.rs"), "old_string": format!("v{i}"),
                    "new_string": format!("v{}", i + 1)},
                "tool_response": {"llmContent": "The file has been updated.",
                    "returnDisplay": {"fileName": "src.rs", "originalContent": format!("v{i}\n"),
                        "newContent": format!("v{}\n", i + 1)}}}),
        ));
    }
    assert!(said.iter().all(|t| !t.contains(LOOP)), "{said:#?}");
    assert!(events(&p, "gutter").is_empty());
}

/// Qwen Code 0.24.4 sometimes records a failing command's stderr as `Output: (empty)`, in the
/// payload and the chat file alike: the lost output is not taken for a new error.
#[test]
fn qwen_a_failure_whose_output_qwen_lost_still_counts() {
    let p = project();
    let s = Session::new(&p, "qwen-code", "chat.jsonl");
    let mut said = Vec::new();
    for (i, out) in ["widget check failed", "(empty)", "widget check failed"]
        .iter()
        .enumerate()
    {
        said.push(qw_shell(&s, i, WIDGET, 3, out));
    }
    assert!(
        !said[1].contains(LOOP) && said[2].contains(LOOP),
        "{said:#?}"
    );
    assert!(
        said[2].contains("exit 3: widget check failed"),
        "{}",
        said[2]
    );
}

/// What a pre-commit hook prints when it blocks a commit: its stash file, then ruff's finding
/// at `line`.
fn pre_commit_blocked(line: u32, stash: &str, code: &str) -> String {
    format!(
        "[WARNING] Unstaged files detected.\n[INFO] Stashing unstaged files to /home/u/.cache/pre-commit/patch{stash}.\nruff.....................................................................Failed\n- hook id: ruff\n- exit code: 1\n\nsrc/app.py:{line}:5: {code} Local variable `parsed` is assigned to but never used\nFound 1 error.\nNo fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n\nruff-format..............................................................Passed\n[INFO] Restored changes from /home/u/.cache/pre-commit/patch{stash}."
    )
}

/// A commit blocked again and again by the same hook failure, the agent fixing with `sed` and
/// rewording its message each time: the failure moves down the file, nothing else changes.
#[test]
fn claude_code_a_commit_blocked_by_the_same_pre_commit_failure_is_one_loop() {
    let p = project();
    let s = Session::new(&p, "claude-code", "cc.jsonl");
    s.hook("UserPromptSubmit", json!({"prompt": "commit the parser"}));
    let messages = [
        "Add the record parser",
        "Add the record parser (lint fix)",
        "Add the record parser and fix lint",
        "Add record parser",
        "Parser: add records",
        "Add the parser for records",
    ];
    let mut said = Vec::new();
    for (i, msg) in messages.iter().enumerate() {
        said.push(cc_bash(
            &s,
            &format!("f{i}"),
            "sed -i 's/parsed = parse(x)/parse(x)/' src/app.py",
            0,
            "",
        ));
        let staged = if i % 2 == 0 {
            "src/app.py"
        } else {
            "src/app.py src/util.py"
        };
        let cmd = format!(
            "git add {staged} && git commit -m \"$(cat <<'EOF'\n{msg}\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\""
        );
        let stash = format!("{}-{}", 1764268123 + i * 61, 48213 + i * 7);
        said.push(cc_bash(
            &s,
            &format!("c{i}"),
            &cmd,
            1,
            &pre_commit_blocked(41 + 3 * i as u32, &stash, "F841"),
        ));
    }
    let warned = warned_at(&said);
    assert_eq!(warned, vec![5], "the third blocked commit, once: {said:#?}");
    let text = &said[5];
    assert!(
        text.contains("has failed 3 times in a row with the same error"),
        "{text}"
    );
    assert!(text.contains("ruff"), "names the failure: {text}");
    let logged = events(&p, "gutter");
    assert_eq!(logged.len(), 1, "{logged:?}");

    // Another finding is progress: a new loop needs three more of it.
    let more: Vec<String> = (0..2)
        .map(|i| {
            cc_bash(
                &s,
                &format!("d{i}"),
                "git commit -m \"Add the parser\"",
                1,
                &pre_commit_blocked(12 + i, "1764269999-1", "E501"),
            )
        })
        .collect();
    assert!(warned_at(&more).is_empty(), "{more:#?}");
}
