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

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::{DoctorSample, Headless, HookTraits, Integration, Plugin, ReadSeek};
use crate::agents::payload::Payload;
use crate::context::compaction::Limit;
use crate::install::agent_settings::AgentSettings;
use crate::system::error::Error;
use crate::transcripts::activity::Recorder;
use crate::transcripts::usage::{get_str, StatusLine, Usage};

pub const ID: &str = "claude-code";

pub struct ClaudeCode;

impl Integration for ClaudeCode {
    fn id(&self) -> &'static str {
        ID
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["claude", "claude_code", "claudecode"]
    }
    fn display_name(&self) -> &'static str {
        "Claude Code"
    }

    fn read_usage(&self, path: &Path, src: &mut dyn ReadSeek, len: u64) -> anyhow::Result<Usage> {
        usage::read_from(path, src, len)
    }
    fn observe(&self, path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
        observe::read(path, file, len, rec)
    }
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

    fn compaction_limit(
        &self,
        window: u64,
        _project: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Limit {
        compaction::limit(window, env)
    }
    fn compaction_limit_for(
        &self,
        window: u64,
        model: Option<&str>,
        project: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Limit {
        compaction::limit_for(window, model, project, env)
    }
    fn window_cap(
        &self,
        window: u64,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Option<(u64, String)> {
        compaction::window_cap(window, env)
    }
    fn compaction_summary(
        &self,
        path: &Path,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> anyhow::Result<crate::transcripts::compaction_summary::Found> {
        summary::last(path, since)
    }

    fn payload(&self, root: &Map<String, Value>) -> Result<Payload, Error> {
        hooks::payload(root)
    }
    fn hook_traits(&self) -> HookTraits {
        // PreCompact's plain stdout is the summarizer's custom instructions;
        // SessionStart(compact) fires before PostCompact and before the
        // summary is in the transcript (FORMATS §7b, seen with 2.1.328). Under load, 2.1.331
        // ran a PostToolUse hook before the reply with the call was in the transcript (seen
        // in 1 of 20 calls with both cores busy; there 0.3 s later).
        HookTraits {
            steer_at_pre_compact: true,
            summary_after_start: true,
            call_reaches_transcript_late: true,
            ..HookTraits::default()
        }
    }
    fn settings(&self) -> &'static AgentSettings {
        &settings::SETTINGS
    }
    fn doctor_sample(&self) -> DoctorSample {
        hooks::DOCTOR_SAMPLE
    }
    fn doctor_common_fields(&self) -> Value {
        hooks::doctor_common_fields()
    }

    fn plugin(&self) -> Option<Plugin> {
        Some(plugin::PLUGIN)
    }
    fn headless(&self) -> Option<Headless> {
        Some(Headless {
            program: "claude",
            before_args: &[],
            before_prompt: &["-p"],
        })
    }
    fn read_status_line(&self, input: &mut dyn Read) -> Option<anyhow::Result<StatusLine>> {
        Some(statusline::read_statusline(input))
    }
}
