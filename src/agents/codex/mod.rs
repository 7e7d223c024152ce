//! Codex CLI: rollout JSONL under `$CODEX_HOME/sessions/`, hooks in
//! `.codex/hooks.json`, MCP servers in `.codex/config.toml`, `notify` at the
//! end of a turn (docs/agents.md, "Use with Codex CLI").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod summary;
pub mod usage;

use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{DoctorSample, Headless, Integration, ReadSeek};
use crate::agents::payload::Payload;
use crate::context::compaction::Limit;
use crate::install::agent_settings::AgentSettings;
use crate::system::error::Error;
use crate::transcripts::activity::Recorder;
use crate::transcripts::usage::{get_str, Usage};

pub const ID: &str = "codex";

pub struct Codex;

impl Integration for Codex {
    fn id(&self) -> &'static str {
        ID
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["codex-cli"]
    }
    fn display_name(&self) -> &'static str {
        "Codex"
    }

    fn read_usage(&self, path: &Path, src: &mut dyn ReadSeek, len: u64) -> anyhow::Result<Usage> {
        usage::read_from(path, src, len)
    }
    fn observe(&self, path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
        observe::read(path, file, len, rec)
    }
    fn sniff_line(&self, map: &Map<String, Value>) -> bool {
        let rollout_item = map.contains_key("payload")
            && matches!(
                get_str(map, "type"),
                Some(
                    "session_meta"
                        | "response_item"
                        | "event_msg"
                        | "turn_context"
                        | "compacted"
                        | "token_usage_record"
                )
            );
        // Codex before RolloutItem (2025): a header with `instructions`, then bare items.
        rollout_item || map.contains_key("record_type")
    }
    fn claims_file_name(&self, path: &Path) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
    }
    fn find_transcript(&self, session: &str) -> Option<PathBuf> {
        usage::find_rollout(&codex_home()?, session)
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
            program: "codex",
            before_args: &["exec"],
            before_prompt: &["--"],
        })
    }
}

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")),
    }
}
