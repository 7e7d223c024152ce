//! Qwen Code: JSONL chat records under `~/.qwen/projects/<project>/chats/`,
//! hooks and MCP servers in `.qwen/settings.json`, Claude Code's hook events
//! and payload shape (docs/agents.md, "Use with Qwen Code").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod usage;

use std::path::Path;

use serde_json::{Map, Value};

use super::{AgentSpec, Headless, Policy, Transcripts};
use crate::transcripts::usage::get_str;

pub const ID: &str = "qwen-code";
const DISPLAY_NAME: &str = "Qwen Code";

pub static SPEC: AgentSpec = AgentSpec {
    id: ID,
    aliases: &["qwen", "qwen_code", "qwencode"],
    display_name: DISPLAY_NAME,
    settings: settings::SETTINGS,
    // Qwen Code 0.24.4 writes a `PreToolUse` hook's `additionalContext` to its debug log only.
    policy: Policy {
        pre_tool: super::policy::PreToolContext::Unread,
        ..Policy::USUAL
    },
    compaction_limit: |window, _model, project, env| compaction::limit(window, project, env),
    window_cap: None,
    doctor: hooks::DOCTOR_SAMPLE,
    headless: Some(Headless {
        program: "qwen",
        before_args: &[],
        before_prompt: &["-p"],
    }),
    plugin: None,
    status_line: None,
    records_dir: None,
    transcripts: &Qwen,
};

struct Qwen;

impl Transcripts for Qwen {
    from_agent_modules!(authored_text);
    fn sniff_line(&self, map: &Map<String, Value>) -> bool {
        // Claude Code's envelope with Gemini's content: `message.parts`,
        // `usageMetadata`, Qwen's own record kinds.
        let parts = map.get("message").and_then(|m| m.get("parts")).is_some();
        map.contains_key("sessionId")
            && map.contains_key("uuid")
            && (parts
                || map.contains_key("usageMetadata")
                || map.contains_key("provenance")
                || get_str(map, "type") == Some("tool_result"))
    }
    fn claims_file_name(&self, path: &Path) -> bool {
        path.components().any(|c| c.as_os_str() == ".qwen")
    }
}
