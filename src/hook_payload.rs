//! Agents' hook payloads (docs/agents.md, "Hook payloads"), reduced to the
//! one thing ctxkeep does for each event.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::Error;
use crate::usage::Agent;

/// Largest payload accepted (real ones are a few KiB; a prompt can be long).
pub const MAX_PAYLOAD_BYTES: u64 = 1024 * 1024;

/// What ctxkeep does for an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Track usage from the transcript; `reply`: the agent reads
    /// `additionalContext` from this event, so a fired stage's instruction
    /// reaches the model.
    Track { reply: bool },
    /// Checkpoint before the context is compacted; `trigger` is `auto` or
    /// `manual` when the agent says.
    PreCompact { trigger: Option<String> },
    /// A session starts (`startup`, `resume`, `clear`, `compact`, `fork`).
    SessionStart { source: String },
    /// The session ends; `reason` as the agent gives it.
    SessionEnd { reason: Option<String> },
    /// The agent compacted its context (Claude Code and Codex `PostCompact`):
    /// the old figure is gone and every stage re-arms.
    PostCompact { trigger: Option<String> },
    /// Nothing to do (e.g. `Stop`): answered without reading any file.
    Ignore,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// The event's name as the agent spelled it (echoed in the reply).
    pub event: String,
    pub session: Option<String>,
    pub transcript: Option<PathBuf>,
    /// The agent's working directory, where the project is looked for first.
    pub cwd: Option<PathBuf>,
    pub action: Action,
    /// The model's last reply, where the event carries it (Claude Code and
    /// Codex `Stop`: `last_assistant_message`; Gemini `AfterAgent`:
    /// `prompt_response`; Codex `notify`): a nonce echoed there is found
    /// without reading the transcript.
    pub last_message: Option<String>,
    /// The user's prompt (`UserPromptSubmit`, Gemini `BeforeAgent`).
    pub prompt: Option<String>,
    /// Claude Code's `SessionStart`: the context size the restored session
    /// starts with, and the model.
    pub context_tokens: Option<u64>,
    pub model: Option<String>,
}

/// Reads a payload from `input`, at most [`MAX_PAYLOAD_BYTES`].
pub fn read(agent: Agent, input: impl Read) -> Result<Payload, Error> {
    let stdin = Path::new("<stdin>");
    let mut bytes = Vec::new();
    input
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(stdin, "cannot read the hook input", e))?;
    if bytes.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(Error::data(
            stdin,
            format!("hook input is over {} KiB", MAX_PAYLOAD_BYTES / 1024),
        ));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| Error::data(stdin, "hook input is not UTF-8"))?;
    parse(agent, &text)
}

/// Parses one payload of `agent`'s.
pub fn parse(agent: Agent, text: &str) -> Result<Payload, Error> {
    let stdin = Path::new("<stdin>");
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| Error::data(stdin, format!("hook input is not valid JSON: {e}")))?;
    let Value::Object(root) = value else {
        return Err(Error::data(stdin, "hook input is not a JSON object"));
    };
    let text_of = |key: &str| {
        root.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let session = text_of("session_id");
    let transcript = text_of("transcript_path").map(PathBuf::from);
    let cwd = text_of("cwd").map(PathBuf::from);
    // Codex's `notify` program gets `{"type": "agent-turn-complete", "thread-id": …}`.
    if agent == Agent::Codex && root.get("hook_event_name").is_none() {
        return match text_of("type").as_deref() {
            Some(kind @ "agent-turn-complete") => Ok(Payload {
                event: kind.to_string(),
                session: text_of("thread-id"),
                transcript: None,
                cwd,
                action: Action::Track { reply: false },
                last_message: text_of("last-assistant-message"),
                prompt: None,
                context_tokens: None,
                model: None,
            }),
            _ => Err(Error::data(
                stdin,
                "hook input has neither hook_event_name nor a notify type",
            )),
        };
    }
    let event = text_of("hook_event_name")
        .ok_or_else(|| Error::data(stdin, "hook input has no hook_event_name"))?;
    let action = action_for(agent, &event, &root);
    Ok(Payload {
        event,
        session,
        transcript,
        cwd,
        action,
        last_message: text_of("last_assistant_message").or_else(|| text_of("prompt_response")),
        prompt: text_of("prompt"),
        context_tokens: root.get("context_tokens").and_then(Value::as_u64),
        model: text_of("model"),
    })
}

impl Payload {
    /// Whether the event follows a tool call (Claude Code's and Codex's
    /// `PostToolUse`/`PostToolUseFailure`, Gemini's `AfterTool`).
    pub fn after_tool(&self) -> bool {
        matches!(
            self.event.as_str(),
            "PostToolUse" | "PostToolUseFailure" | "AfterTool"
        )
    }
}

fn action_for(agent: Agent, event: &str, root: &Map<String, Value>) -> Action {
    let field = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| root.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    // Codex's hooks copy Claude Code's names; Gemini has its own.
    let event = match (agent, event) {
        (Agent::Gemini, "BeforeAgent" | "AfterTool") => "UserPromptSubmit",
        (Agent::Gemini, "AfterAgent") => "AfterTurn",
        (Agent::Gemini, "PreCompress") => "PreCompact",
        (_, e) => e,
    };
    match event {
        // A failing tool call fires Claude Code's `PostToolUseFailure`, not
        // `PostToolUse`.
        "UserPromptSubmit" | "PostToolUse" | "PostToolUseFailure" => Action::Track { reply: true },
        // The turn is over: the figure is fresh (Codex writes its last
        // `token_count` before `Stop`) and the reply may echo the nonce.
        "AfterTurn" | "Stop" => Action::Track { reply: false },
        "PostCompact" => Action::PostCompact {
            trigger: field(&["trigger"]),
        },
        "PreCompact" => Action::PreCompact {
            trigger: field(&["trigger"]),
        },
        // Gemini's documentation names the field `source` in one place and
        // `trigger` in another.
        "SessionStart" => Action::SessionStart {
            source: field(&["source", "trigger"]).unwrap_or_else(|| "startup".into()),
        },
        "SessionEnd" => Action::SessionEnd {
            reason: field(&["reason", "trigger"]),
        },
        _ => Action::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_events_map_to_actions() {
        let p = parse(
            Agent::ClaudeCode,
            r#"{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}"#,
        )
        .unwrap();
        assert_eq!(p.session.as_deref(), Some("abc123"));
        assert_eq!(p.transcript.as_deref(), Some(Path::new("/t.jsonl")));
        assert_eq!(p.cwd.as_deref(), Some(Path::new("/w")));
        assert_eq!(
            p.action,
            Action::PreCompact {
                trigger: Some("auto".into())
            }
        );
        let start = parse(
            Agent::ClaudeCode,
            r#"{"session_id":"s","hook_event_name":"SessionStart","source":"compact"}"#,
        )
        .unwrap();
        assert_eq!(
            start.action,
            Action::SessionStart {
                source: "compact".into()
            }
        );
        for (event, action) in [
            ("UserPromptSubmit", Action::Track { reply: true }),
            ("PostToolUse", Action::Track { reply: true }),
            ("PostToolUseFailure", Action::Track { reply: true }),
            ("Stop", Action::Track { reply: false }),
            ("PostCompact", Action::PostCompact { trigger: None }),
            ("SomethingNew", Action::Ignore),
        ] {
            let p = parse(
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
        let n = parse(
            Agent::Codex,
            r#"{"type":"agent-turn-complete","thread-id":"019c8a70","turn-id":"t","cwd":"/w","input-messages":["hi"],"last-assistant-message":"ok"}"#,
        )
        .unwrap();
        assert_eq!(n.session.as_deref(), Some("019c8a70"));
        assert_eq!(n.action, Action::Track { reply: false });
        assert!(parse(Agent::Codex, r#"{"type":"other"}"#).is_err());
        let hook = parse(
            Agent::Codex,
            r#"{"session_id":"s","transcript_path":null,"hook_event_name":"UserPromptSubmit","prompt":"x"}"#,
        )
        .unwrap();
        assert_eq!(hook.transcript, None);
        assert_eq!(hook.action, Action::Track { reply: true });
        for (event, action) in [
            ("BeforeAgent", Action::Track { reply: true }),
            ("AfterAgent", Action::Track { reply: false }),
            ("PreCompress", Action::PreCompact { trigger: None }),
            ("BeforeTool", Action::Ignore),
        ] {
            let p = parse(
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
            let err = parse(Agent::ClaudeCode, bad).unwrap_err();
            assert_eq!(err.exit_code(), 65, "{bad:?}");
        }
        let big = vec![b' '; MAX_PAYLOAD_BYTES as usize + 1];
        assert_eq!(
            read(Agent::ClaudeCode, &big[..]).unwrap_err().exit_code(),
            65
        );
        assert_eq!(
            read(Agent::ClaudeCode, &b"{\"a\":\"\xff\"}"[..])
                .unwrap_err()
                .exit_code(),
            65
        );
    }
}
