//! Gemini CLI: chat recordings (JSONL, or the legacy single JSON) under
//! `~/.gemini/tmp/`, hooks and MCP servers in `.gemini/settings.json`, its
//! own event names (docs/agents.md, "Use with Gemini CLI").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod summary;
pub mod usage;

use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use super::{DoctorSample, Headless, HookTraits, Integration, ReadSeek};
use crate::agents::payload::Payload;
use crate::context::compaction::Limit;
use crate::install::agent_settings::AgentSettings;
use crate::system::error::Error;
use crate::transcripts::activity::Recorder;
use crate::transcripts::usage::{get_str, Usage};

pub const ID: &str = "gemini";

pub struct Gemini;

impl Integration for Gemini {
    fn id(&self) -> &'static str {
        ID
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["gemini-cli"]
    }
    fn display_name(&self) -> &'static str {
        "Gemini CLI"
    }

    fn read_usage(&self, path: &Path, src: &mut dyn ReadSeek, len: u64) -> anyhow::Result<Usage> {
        usage::read_from(path, src, len)
    }
    fn observe(&self, path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
        observe::read(path, file, len, rec)
    }
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
    fn authored_text(&self, line: &Map<String, Value>) -> Vec<String> {
        hooks::authored_text(line)
    }

    fn compaction_limit(
        &self,
        window: u64,
        project: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Limit {
        compaction::limit(window, project, env)
    }
    fn compaction_summary(
        &self,
        path: &Path,
        _since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> anyhow::Result<crate::transcripts::compaction_summary::Found> {
        summary::last(path)
    }

    fn payload(&self, root: &Map<String, Value>) -> Result<Payload, Error> {
        hooks::payload(root)
    }
    fn hook_traits(&self) -> HookTraits {
        HookTraits {
            defer_start_context: true,
            pre_compact_fires_often: true,
            compaction_seen_as_drop: true,
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
    fn doctor_event_fields(&self, event: &str) -> Option<Value> {
        hooks::doctor_event_fields(event)
    }

    fn headless(&self) -> Option<Headless> {
        Some(Headless {
            program: "gemini",
            before_args: &[],
            before_prompt: &["-p"],
        })
    }
}
