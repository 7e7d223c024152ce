//! Claude Code: JSONL transcripts under `~/.claude/projects/`, hooks in
//! `.claude/settings.json`, the status line (docs/agents.md, "Use with
//! Claude Code").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod plugin;
pub mod settings;
pub mod statusline;
pub mod summary;
pub mod usage;

use std::path::Path;

use serde_json::{Map, Value};

use super::policy::{
    PreCompact, PreCompactFires, PreCompactOutput, SummaryReadable, ToolCallRecorded,
};
use super::{AgentSpec, Headless, Policy, Transcripts};
use crate::transcripts::usage::get_str;

pub const ID: &str = "claude-code";
const DISPLAY_NAME: &str = "Claude Code";

pub static SPEC: AgentSpec = AgentSpec {
    id: ID,
    aliases: &["claude", "claude_code", "claudecode"],
    display_name: DISPLAY_NAME,
    settings: settings::SETTINGS,
    // PreCompact's plain stdout is the summarizer's custom instructions;
    // SessionStart(compact) fires before PostCompact and before the
    // summary is in the transcript (FORMATS §7b, seen with 2.1.328). Under load, 2.1.331
    // ran a PostToolUse hook before the reply with the call was in the transcript (seen
    // in 1 of 20 calls with both cores busy; there 0.3 s later).
    policy: Policy {
        pre_compact: PreCompact {
            fires: PreCompactFires::WhenCompacting,
            output: PreCompactOutput::ToSummarizer,
        },
        summary: SummaryReadable::AfterRestoredStart,
        tool_calls: ToolCallRecorded::MayFollowHook,
        ..Policy::USUAL
    },
    compaction_limit: compaction::limit_for,
    window_cap: Some(compaction::window_cap),
    doctor: hooks::DOCTOR_SAMPLE,
    headless: Some(Headless {
        program: "claude",
        before_args: &[],
        before_prompt: &["-p"],
    }),
    plugin: Some(plugin::PLUGIN),
    status_line: Some(|input| statusline::read_statusline(input)),
    records_dir: None,
    transcripts: &ClaudeCode,
};

struct ClaudeCode;

impl Transcripts for ClaudeCode {
    from_agent_modules!();
    fn sniff_line(&self, map: &Map<String, Value>) -> bool {
        let ty = get_str(map, "type");
        let envelope = map.contains_key("uuid")
            || map.contains_key("parentUuid")
            || map.contains_key("leafUuid")
            || map.contains_key("message");
        matches!(
            ty,
            Some(
                "user"
                    | "assistant"
                    | "system"
                    | "summary"
                    | "progress"
                    | "file-history-snapshot"
                    | "queue-operation"
                    | "attachment"
            )
        ) && (envelope || map.contains_key("sessionId") || ty == Some("summary"))
    }
    fn authored_text(&self, line: &Map<String, Value>) -> Vec<String> {
        // Main-chain assistant lines: text and tool calls.
        if get_str(line, "type") != Some("assistant")
            || line.get("isSidechain") == Some(&Value::Bool(true))
        {
            return Vec::new();
        }
        line.get("message")
            .and_then(|m| m.get("content"))
            .map(|c| vec![c.to_string()])
            .unwrap_or_default()
    }
    fn compaction_summary(
        &self,
        path: &Path,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> anyhow::Result<crate::transcripts::compaction_summary::Found> {
        summary::last(path, since)
    }
}
