//! Qwen Code: JSONL chat records under `~/.qwen/projects/<project>/chats/`,
//! hooks and MCP servers in `.qwen/settings.json`, Claude Code's hook events
//! and payload shape (docs/agents.md, "Use with Qwen Code").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod usage;

use std::fs::File;
use std::path::Path;

use serde_json::{Map, Value};

use super::{DoctorSample, Headless, Integration, ReadSeek};
use crate::agents::payload::Payload;
use crate::context::compaction::Limit;
use crate::install::agent_settings::AgentSettings;
use crate::system::error::Error;
use crate::transcripts::activity::Recorder;
use crate::transcripts::usage::{get_str, Usage};

pub const ID: &str = "qwen-code";

pub struct Qwen;

impl Integration for Qwen {
    fn id(&self) -> &'static str {
        ID
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["qwen", "qwen_code", "qwencode"]
    }
    fn display_name(&self) -> &'static str {
        "Qwen Code"
    }

    fn read_usage(&self, path: &Path, src: &mut dyn ReadSeek, len: u64) -> anyhow::Result<Usage> {
        usage::read_from(path, src, len)
    }
    fn observe(&self, path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
        observe::read(path, file, len, rec)
    }
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
    fn authored_text(&self, line: &Map<String, Value>) -> Vec<String> {
        hooks::authored_text(line)
    }

    fn payload(&self, root: &Map<String, Value>) -> Result<Payload, Error> {
        hooks::payload(root)
    }

    fn compaction_limit(
        &self,
        window: u64,
        project: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Limit {
        compaction::limit(window, project, env)
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

    fn headless(&self) -> Option<Headless> {
        Some(Headless {
            program: "qwen",
            before_args: &[],
            before_prompt: &["-p"],
        })
    }
}
