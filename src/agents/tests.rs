//! The registry: names, detection, and reading through the agent picked.
use std::path::Path;

use super::*;
use crate::system::error::{exit, exit_code_of};
use crate::transcripts::usage::echo::echoes;
use crate::transcripts::usage::testutil::write_temp;
use crate::transcripts::usage::{Usage, SNIFF_HEAD};

#[test]
fn agent_names_round_trip() {
    for a in Agent::ALL {
        assert_eq!(a.to_string().parse::<Agent>().unwrap(), a);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            format!("\"{}\"", a.as_str())
        );
    }
    assert_eq!("Claude".parse::<Agent>().unwrap(), Agent::ClaudeCode);
    assert_eq!("gemini-cli".parse::<Agent>().unwrap(), Agent::Gemini);
    assert_eq!("GitHub-Copilot".parse::<Agent>().unwrap(), Agent::Copilot);
    assert_eq!(
        "cursor".parse::<Agent>().unwrap_err().to_string(),
        "unknown agent \"cursor\": expected claude-code, codex, gemini, qwen-code, opencode or copilot"
    );
}

/// Each agent's settings end with `..AgentSettings::USUAL`, whose own fields are empty: every
/// agent states them, in agreement with its spec.
#[test]
fn every_agent_states_its_own_settings() {
    for a in Agent::ALL {
        let (spec, s) = (a.spec(), a.settings());
        assert_eq!(s.name, spec.id, "{a}");
        assert_eq!(s.display_name, spec.display_name, "{a}");
        assert!(!s.dir.is_empty() && !s.file.is_empty(), "{a}: its file");
        assert!(!s.mcp.file.is_empty(), "{a}: its MCP file");
        assert!(!s.events.is_empty(), "{a}: its events");
        assert!(
            s.hook_command
                .ends_with(&format!("ctxkeep hook {}", spec.id)),
            "{a}: {}",
            s.hook_command
        );
        assert!(s.hook_words.contains(&spec.id), "{a}: {:?}", s.hook_words);
        assert!(
            s.hook_words
                .iter()
                .all(|w| *w == spec.id || spec.aliases.contains(w)),
            "{a}: every word after `ctxkeep hook` is a name the command line takes"
        );
    }
}

/// An agent's policy agrees with the events ctxkeep hooks for it: one that hooks no
/// post-compaction event can only see a compaction as a drop in usage.
#[test]
fn every_agent_without_a_post_compaction_event_sees_compactions_by_a_drop() {
    use super::policy::CompactionSeen;
    for a in Agent::ALL {
        let post = a.settings().events.iter().any(|e| e.name == "PostCompact");
        let by_events = a.policy().compaction == CompactionSeen::ByEvents;
        assert_eq!(post, by_events, "{a}");
    }
}

#[test]
fn missing_file_is_no_input() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_usage(&dir.path().join("nope.jsonl"), None).unwrap_err();
    assert_eq!(exit_code_of(&err), exit::NO_INPUT);
    assert!(err.to_string().contains("nope.jsonl"), "{err}");
    let err = read_usage(&dir.path().join("nope.jsonl"), Some(Agent::Codex)).unwrap_err();
    assert_eq!(exit_code_of(&err), exit::NO_INPUT);
}

#[test]
fn directory_is_no_input() {
    let dir = tempfile::tempdir().unwrap();
    for agent in [None, Some(Agent::ClaudeCode), Some(Agent::Gemini)] {
        let err = read_usage(dir.path(), agent).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::NO_INPUT, "{agent:?}");
        assert!(err.to_string().contains("directory"), "{err}");
    }
}

#[cfg(unix)]
#[test]
fn fifo_is_no_input_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.jsonl");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    // Opening a FIFO for reading would block forever with no writer: this must return.
    let err = read_usage(&fifo, Some(Agent::ClaudeCode)).unwrap_err();
    assert_eq!(exit_code_of(&err), exit::NO_INPUT);
    let err = detect(&fifo).unwrap_err();
    assert_eq!(exit_code_of(&err), exit::NO_INPUT);
}

#[test]
fn unknown_format_is_data_error_naming_the_file() {
    let (_d, path) = write_temp("notes.jsonl", b"{\"hello\":\"world\"}\n[1,2]\n");
    let err = read_usage(&path, None).unwrap_err();
    assert_eq!(exit_code_of(&err), exit::DATA);
    assert!(err.to_string().contains("notes.jsonl"), "{err}");
    let (_d, path) = write_temp("bin.jsonl", b"\x00\x01\x02 binary\n");
    assert_eq!(exit_code_of(&detect(&path).unwrap_err()), exit::DATA);
}

#[test]
fn empty_file_has_unknown_tokens() {
    let (_d, path) = write_temp("s.jsonl", b"");
    let u = read_usage(&path, None).unwrap();
    assert_eq!(u, Usage::empty(Agent::ClaudeCode.as_str()));
    let (_d, path) = write_temp("rollout-2026-01-01T00-00-00-x.jsonl", b"");
    assert_eq!(
        read_usage(&path, None).unwrap(),
        Usage::empty(Agent::Codex.as_str())
    );
    for agent in Agent::ALL {
        let u = read_usage(&path, Some(agent)).unwrap();
        assert_eq!(u.tokens, None);
        assert_eq!(u.agent, agent.as_str());
    }
}

#[test]
fn a_first_line_still_being_written_is_like_an_empty_file() {
    let (_d, path) = write_temp("s.jsonl", b"{\"parentUuid\":null,\"isSidechain\":fal");
    assert_eq!(detect(&path).unwrap(), Agent::ClaudeCode);
    assert_eq!(read_usage(&path, None).unwrap().tokens, None);
    let (_d, path) = write_temp("rollout-2026-x.jsonl", b"\n{\"timestamp\":\"2026");
    assert_eq!(detect(&path).unwrap(), Agent::Codex);
    // Complete but unterminated: its shape is used for detection only.
    let (_d, path) = write_temp(
        "s.jsonl",
        b"{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}",
    );
    assert_eq!(detect(&path).unwrap(), Agent::Codex);
    assert_eq!(
        read_usage(&path, None).unwrap(),
        Usage::empty(Agent::Codex.as_str())
    );
    // Text that is not JSON at all is still unknown.
    let (_d, path) = write_temp("s.jsonl", b"hello");
    assert_eq!(exit_code_of(&detect(&path).unwrap_err()), exit::DATA);
}

#[test]
fn detects_each_format_from_its_lines() {
    let cases: [(&str, &str, Agent); 6] = [
        (
            "a.jsonl",
            "{\"type\":\"summary\",\"summary\":\"t\",\"leafUuid\":\"x\"}\n",
            Agent::ClaudeCode,
        ),
        (
            "b.jsonl",
            "{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"uuid\":\"u1\",\"sessionId\":\"s\"}\n",
            Agent::ClaudeCode,
        ),
        (
            "c.jsonl",
            "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n",
            Agent::Codex,
        ),
        (
            "d.jsonl",
            "{\"sessionId\":\"s\",\"projectHash\":\"h\",\"startTime\":\"t\",\"lastUpdated\":\"t\",\"kind\":\"main\"}\n",
            Agent::Gemini,
        ),
        (
            "e.jsonl",
            "not json\n{\"id\":\"m1\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":\"hi\"}\n",
            Agent::Gemini,
        ),
        (
            "f.json",
            "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}\n",
            Agent::Gemini,
        ),
    ];
    for (name, content, agent) in cases {
        let (_d, path) = write_temp(name, content.as_bytes());
        assert_eq!(detect(&path).unwrap(), agent, "{name}");
    }
}

#[test]
fn reading_from_memory_agrees_with_reading_the_file() {
    let cases: [(&str, &str); 5] = [
        (
            "a.jsonl",
            "{\"type\":\"assistant\",\"uuid\":\"u\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":7}}}\nnot json\n",
        ),
        (
            "b.jsonl",
            "{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"last_token_usage\":{\"input_tokens\":9,\"total_tokens\":11},\"model_context_window\":100}}}\n",
        ),
        (
            "c.jsonl",
            "{\"sessionId\":\"s\",\"projectHash\":\"h\"}\n{\"id\":\"m1\",\"type\":\"gemini\",\"tokens\":{\"input\":42}}\n",
        ),
        (
            "session-x.json",
            "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": [{\"id\":\"m\",\"type\":\"gemini\",\"tokens\":{\"input\":3}}]\n}\n",
        ),
        ("rollout-x.jsonl", ""),
    ];
    for (name, content) in cases {
        let (_d, path) = write_temp(name, content.as_bytes());
        let cursor = std::io::Cursor::new(content.as_bytes());
        let len = content.len() as u64;
        for agent in [
            None,
            Some(Agent::ClaudeCode),
            Some(Agent::Codex),
            Some(Agent::Gemini),
        ] {
            let from_file = read_usage(&path, agent).map_err(|e| e.to_string());
            let from_memory =
                read_usage_from(&path, &mut cursor.clone(), len, agent).map_err(|e| e.to_string());
            assert_eq!(from_memory, from_file, "{name} {agent:?}");
        }
        assert!(read_usage(&path, None).unwrap().tokens.is_some() || content.is_empty());
    }
    // Unrecognized content is the same one-line error.
    let e = read_usage_from(
        Path::new("notes.jsonl"),
        &mut std::io::Cursor::new(b"hello\n"),
        6,
        None,
    )
    .unwrap_err();
    assert_eq!(exit_code_of(&e), exit::DATA);
    assert!(
        e.to_string()
            .contains("notes.jsonl: not a recognized transcript"),
        "{e}"
    );
}

#[test]
fn detects_from_the_tail_when_the_first_line_is_huge() {
    // A Codex session_meta carrying instructions longer than the sniff window.
    let mut content = format!(
        "{{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"x\",\"instructions\":\"{}\"}}}}\n",
        "x".repeat(SNIFF_HEAD as usize + 10)
    );
    content.push_str(
        "{\"type\":\"event_msg\",\"timestamp\":\"t\",\"payload\":{\"type\":\"task_started\"}}\n",
    );
    let (_d, path) = write_temp("x.jsonl", content.as_bytes());
    assert_eq!(detect(&path).unwrap(), Agent::Codex);
}

// Hook payloads, parsed through each agent's integration.

#[test]
fn claude_code_events_map_to_actions() {
    let p = parse_payload(
        Agent::ClaudeCode,
        r#"{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}"#,
    )
    .unwrap();
    assert_eq!(p.session.as_deref(), Some("abc123"));
    assert_eq!(p.transcript.as_deref(), Some(Path::new("/t.jsonl")));
    assert_eq!(p.cwd.as_deref(), Some(Path::new("/w")));
    assert_eq!(
        p.action,
        crate::agents::payload::Action::PreCompact {
            trigger: Some("auto".into())
        }
    );
    let start = parse_payload(
        Agent::ClaudeCode,
        r#"{"session_id":"s","hook_event_name":"SessionStart","source":"compact"}"#,
    )
    .unwrap();
    assert_eq!(
        start.action,
        crate::agents::payload::Action::SessionStart {
            source: "compact".into()
        }
    );
    for (event, action) in [
        (
            "UserPromptSubmit",
            crate::agents::payload::Action::Track { reply: true },
        ),
        (
            "PostToolUse",
            crate::agents::payload::Action::Track { reply: true },
        ),
        (
            "PostToolUseFailure",
            crate::agents::payload::Action::Track { reply: true },
        ),
        (
            "Stop",
            crate::agents::payload::Action::Track { reply: false },
        ),
        (
            "PostCompact",
            crate::agents::payload::Action::PostCompact { trigger: None },
        ),
        ("SomethingNew", crate::agents::payload::Action::Ignore),
    ] {
        let p = parse_payload(
            Agent::ClaudeCode,
            &format!(r#"{{"session_id":"s","hook_event_name":"{event}"}}"#),
        )
        .unwrap();
        assert_eq!(p.action, action, "{event}");
        assert_eq!(p.event, event);
    }
}

#[test]
fn codex_notify_and_gemini_names() {
    let n = parse_payload(
        Agent::Codex,
        r#"{"type":"agent-turn-complete","thread-id":"019c8a70","turn-id":"t","cwd":"/w","input-messages":["hi"],"last-assistant-message":"ok"}"#,
    )
    .unwrap();
    assert_eq!(n.session.as_deref(), Some("019c8a70"));
    assert_eq!(
        n.action,
        crate::agents::payload::Action::Track { reply: false }
    );
    assert!(parse_payload(Agent::Codex, r#"{"type":"other"}"#).is_err());
    let hook = parse_payload(
        Agent::Codex,
        r#"{"session_id":"s","transcript_path":null,"hook_event_name":"UserPromptSubmit","prompt":"x"}"#,
    )
    .unwrap();
    assert_eq!(hook.transcript, None);
    assert_eq!(
        hook.action,
        crate::agents::payload::Action::Track { reply: true }
    );
    for (event, action) in [
        (
            "BeforeAgent",
            crate::agents::payload::Action::Track { reply: true },
        ),
        (
            "AfterAgent",
            crate::agents::payload::Action::Track { reply: false },
        ),
        (
            "PreCompress",
            crate::agents::payload::Action::PreCompact { trigger: None },
        ),
        ("BeforeTool", crate::agents::payload::Action::Ignore),
    ] {
        let p = parse_payload(
            Agent::Gemini,
            &format!(r#"{{"session_id":"s","hook_event_name":"{event}"}}"#),
        )
        .unwrap();
        assert_eq!(p.action, action, "{event}");
    }
}

#[test]
fn garbage_is_bad_data() {
    for bad in ["", "nope", "[1]", "{}", r#"{"hook_event_name":""}"#] {
        let err = parse_payload(Agent::ClaudeCode, bad).unwrap_err();
        assert_eq!(err.exit_code(), 65, "{bad:?}");
    }
    let big = vec![b' '; crate::agents::payload::MAX_PAYLOAD_BYTES as usize + 1];
    assert_eq!(
        read_payload(Agent::ClaudeCode, &big[..])
            .unwrap_err()
            .exit_code(),
        65
    );
    assert_eq!(
        read_payload(Agent::ClaudeCode, &b"{\"a\":\"\xff\"}"[..])
            .unwrap_err()
            .exit_code(),
        65
    );
}

// --- The tool call in a hook's payload, on the payloads the real CLIs sent ------------------

fn captured(agent: Agent, file: &str) -> crate::agents::payload::Payload {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_payload(agent, &text).unwrap()
}

fn hash(text: &str) -> Option<String> {
    Some(crate::agents::payload::content_hash(text.as_bytes()))
}

#[test]
fn claude_code_payloads_give_the_call_and_its_outcome() {
    use crate::agents::payload::{ToolAction, ToolFile, ToolOutcome};
    let dir = "claude-code-2.1.332/hooks";
    let failed = captured(
        Agent::ClaudeCode,
        &format!("{dir}/PostToolUseFailure-Bash.json"),
    );
    let tool = failed.tool.unwrap();
    assert_eq!(tool.id.as_deref(), Some("toolu_0f5f53de982249e68554"));
    assert_eq!(
        tool.action,
        ToolAction::Command("sh -c 'echo widget check failed >&2; exit 3'".into())
    );
    assert_eq!(
        tool.outcome,
        Some(ToolOutcome {
            ok: Some(false),
            exit_code: Some(3),
            output: "Exit code 3\nwidget check failed".into()
        })
    );
    let ok = captured(Agent::ClaudeCode, &format!("{dir}/PostToolUse-Bash.json"));
    let outcome = ok.tool.unwrap().outcome.unwrap();
    assert_eq!(
        (outcome.ok, outcome.exit_code, outcome.output.as_str()),
        (Some(true), Some(0), "before-compaction")
    );
    let edit = captured(Agent::ClaudeCode, &format!("{dir}/PostToolUse-Edit.json"));
    assert_eq!(
        edit.tool.unwrap().action,
        ToolAction::Files(vec![ToolFile {
            path: "/work/repo/notes.txt".into(),
            content: hash("beta\n"),
            before: hash("alpha\n"),
        }])
    );
    let write = captured(Agent::ClaudeCode, &format!("{dir}/PostToolUse-Write.json"));
    let ToolAction::Files(files) = write.tool.unwrap().action else {
        panic!("a file change")
    };
    assert_eq!(
        (files[0].content.clone(), files[0].before.clone()),
        (hash("alpha\n"), None)
    );
    for other in [
        "PostToolUse-ToolSearch.json",
        "PreToolUse-Bash.json",
        "Stop.json",
    ] {
        let p = captured(Agent::ClaudeCode, &format!("{dir}/{other}"));
        assert_eq!(p.tool, None, "{other}");
    }
}

#[test]
fn codex_payloads_give_the_call_but_a_command_outcome_only_in_the_rollout() {
    use crate::agents::payload::{ToolAction, ToolFile};
    let dir = "codex-0.171.0/hooks";
    let bash = captured(Agent::Codex, &format!("{dir}/PostToolUse-Bash.json"))
        .tool
        .unwrap();
    assert_eq!(bash.id.as_deref(), Some("call_62fbc1e31a1045fb"));
    assert!(matches!(bash.action, ToolAction::Command(_)));
    assert_eq!(
        bash.outcome, None,
        "only its output; the exit code is in the rollout"
    );
    let patch = captured(Agent::Codex, &format!("{dir}/PostToolUse-apply_patch.json"))
        .tool
        .unwrap();
    assert_eq!(
        patch.action,
        ToolAction::Files(vec![ToolFile {
            path: "notes.txt".into(),
            content: None,
            before: None,
        }])
    );
    let outcome = patch.outcome.unwrap();
    assert_eq!((outcome.ok, outcome.exit_code), (Some(true), Some(0)));
}

#[test]
fn gemini_payloads_give_the_call_and_its_outcome() {
    use crate::agents::payload::{ToolAction, ToolFile};
    let dir = "gemini-0.61.0/hooks";
    let shell = captured(
        Agent::Gemini,
        &format!("{dir}/AfterTool-run_shell_command.json"),
    )
    .tool
    .unwrap();
    assert_eq!(shell.id, None);
    let outcome = shell.outcome.unwrap();
    assert_eq!(
        (outcome.ok, outcome.exit_code, outcome.output.as_str()),
        (Some(false), Some(3), "widget check failed")
    );
    let replace = captured(Agent::Gemini, &format!("{dir}/AfterTool-replace.json"))
        .tool
        .unwrap();
    assert_eq!(
        replace.action,
        ToolAction::Files(vec![ToolFile {
            path: "/work/repo/notes.txt".into(),
            content: hash("beta\n"),
            before: hash("alpha\n"),
        }])
    );
    let todos = captured(Agent::Gemini, &format!("{dir}/AfterTool-write_todos.json"));
    assert_eq!(todos.tool, None);
}

#[test]
fn every_pre_tool_payload_names_a_destructive_command_and_only_that() {
    use crate::agents::payload::Action;
    for (agent, file) in [
        (
            Agent::ClaudeCode,
            "claude-code-2.1.332/hooks/PreToolUse-Bash.json",
        ),
        (Agent::Codex, "codex-0.171.0/hooks/PreToolUse-Bash.json"),
        (Agent::Copilot, "copilot-1.0.102/hooks/PreToolUse-Bash.json"),
        (
            Agent::Gemini,
            "gemini-0.61.0/hooks/BeforeTool-run_shell_command.json",
        ),
    ] {
        // As captured: a command that discards nothing is answered without a file read.
        assert_eq!(captured(agent, file).action, Action::Ignore, "{file}");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents")
            .join(file);
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        v["tool_input"]["command"] = "git stash drop".into();
        let p = parse_payload(agent, &v.to_string()).unwrap();
        assert_eq!(
            p.action,
            Action::BeforeDestructive {
                command: "git stash drop".into()
            },
            "{file}"
        );
    }
    // Another tool before its call: nothing.
    let edit = captured(
        Agent::ClaudeCode,
        "claude-code-2.1.332/hooks/PreToolUse-Edit.json",
    );
    assert_eq!(edit.action, Action::Ignore);
}

/// The nonce a restore asks to be acknowledged is echoed only by what each agent itself wrote
/// (its `authored_text`), never by the prompt or a tool's output that carry it.
#[test]
fn a_nonce_is_echoed_only_by_what_each_agent_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let injected = r#"{"type":"user","message":{"role":"user","content":"run `ctxkeep ack 48213907` to confirm"}}"#;
    std::fs::write(&t, format!("{injected}\n")).unwrap();
    assert!(!echoes(&t, "48213907", 1 << 20, &authored_text).unwrap());
    let side = r#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"48213907"}]}}"#;
    let tool = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ctxkeep ack 48213907"}}]}}"#;
    std::fs::write(&t, format!("{injected}\n{side}\n")).unwrap();
    assert!(!echoes(&t, "48213907", 1 << 20, &authored_text).unwrap());
    std::fs::write(&t, format!("{injected}\n{tool}\n")).unwrap();
    assert!(echoes(&t, "48213907", 1 << 20, &authored_text).unwrap());
    let codex = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ctxkeep\",\"ack\",\"48213907\"]}"}}"#;
    let output = r#"{"type":"response_item","payload":{"type":"function_call_output","output":"ctxkeep ack 48213907"}}"#;
    std::fs::write(&t, format!("{output}\n")).unwrap();
    assert!(!echoes(&t, "48213907", 1 << 20, &authored_text).unwrap());
    std::fs::write(&t, format!("{codex}\n")).unwrap();
    assert!(echoes(&t, "48213907", 1 << 20, &authored_text).unwrap());
    let inside = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"build 1482139070 and v48213907a"}]}}"#;
    std::fs::write(&t, format!("{inside}\n")).unwrap();
    assert!(
        !echoes(&t, "48213907", 1 << 20, &authored_text).unwrap(),
        "inside a longer number or word"
    );
    let gemini = r#"{"id":"m1","type":"gemini","content":"Restored; acknowledging 48213907."}"#;
    std::fs::write(&t, format!("{gemini}\n")).unwrap();
    assert!(echoes(&t, "48213907", 1 << 20, &authored_text).unwrap());
}

/// Writes `lines` as the JSONL file `name` and reads it with `read`, checking that
/// auto-detection reads the same.
pub(super) fn read_lines_detected(
    name: &str,
    lines: &[String],
    read: fn(&std::path::Path) -> anyhow::Result<Usage>,
) -> Usage {
    let (_d, path) = write_temp(name, &crate::transcripts::usage::testutil::jsonl(lines));
    let u = read(&path).unwrap();
    assert_eq!(
        u,
        crate::agents::read_usage(&path, None).unwrap(),
        "auto-detect agrees"
    );
    u
}
