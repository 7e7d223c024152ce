//! Gemini CLI: chat recordings (JSONL, or the legacy single JSON) under
//! `~/.gemini/tmp/`, hooks and MCP servers in `.gemini/settings.json`, its
//! own event names (docs/agents.md, "Use with Gemini CLI").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod summary;
pub mod usage;

use std::path::Path;

use serde_json::{Map, Value};

use super::policy::{
    CompactionSeen, PreCompact, PreCompactFires, PreCompactOutput, PreToolContext, StartContext,
};
use super::{AgentSpec, Headless, Policy, Transcripts};
use crate::transcripts::usage::get_str;

pub const ID: &str = "gemini";
const DISPLAY_NAME: &str = "Gemini CLI";

pub static SPEC: AgentSpec = AgentSpec {
    id: ID,
    aliases: &["gemini-cli"],
    display_name: DISPLAY_NAME,
    settings: settings::SETTINGS,
    // A SessionStart's context lands in front of the user's prompt; PreCompress fires before
    // nearly every model call; no event follows a compression.
    policy: Policy {
        start: StartContext::AtFirstPrompt,
        pre_compact: PreCompact {
            fires: PreCompactFires::BeforeEveryModelCall,
            output: PreCompactOutput::Unread,
        },
        compaction: CompactionSeen::ByDrop,
        pre_tool: PreToolContext::Unread,
        ..Policy::USUAL
    },
    compaction_limit: |window, _model, project, env| compaction::limit(window, project, env),
    window_cap: None,
    doctor: hooks::DOCTOR_SAMPLE,
    headless: Some(Headless {
        program: "gemini",
        before_args: &[],
        before_prompt: &["-p"],
    }),
    plugin: None,
    status_line: None,
    records_dir: None,
    transcripts: &Gemini,
};

struct Gemini;

impl Transcripts for Gemini {
    from_agent_modules!(authored_text);
    fn sniff_line(&self, map: &Map<String, Value>) -> bool {
        if map.contains_key("$set") || map.contains_key("$rewindTo") {
            return true;
        }
        if map.contains_key("sessionId") && map.contains_key("projectHash") {
            return true;
        }
        // A message record: `id` and Gemini's kinds, none of Claude Code's envelope.
        let envelope = map.contains_key("uuid")
            || map.contains_key("parentUuid")
            || map.contains_key("leafUuid")
            || map.contains_key("message");
        matches!(
            get_str(map, "type"),
            Some("user" | "gemini" | "info" | "error" | "warning")
        ) && get_str(map, "id").is_some()
            && !envelope
    }
    fn sniff_head(&self, head: &[u8]) -> bool {
        // A pretty-printed single JSON document with Gemini's session keys.
        let text = String::from_utf8_lossy(head);
        text.trim_start().starts_with('{')
            && text.contains("\"sessionId\"")
            && (text.contains("\"projectHash\"") || text.contains("\"messages\""))
    }
    fn claims_file_name(&self, path: &Path) -> bool {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        path.components().any(|c| c.as_os_str() == ".gemini")
            || (name.starts_with("session-") && name.ends_with(".json"))
    }
    fn compaction_summary(
        &self,
        path: &Path,
        _since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> anyhow::Result<crate::transcripts::compaction_summary::Found> {
        summary::last(path)
    }
}
