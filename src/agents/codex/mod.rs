//! Codex CLI: rollout JSONL under `$CODEX_HOME/sessions/`, hooks in
//! `.codex/hooks.json`, MCP servers in `.codex/config.toml`, `notify` at the
//! end of a turn (docs/agents.md, "Use with Codex CLI").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod summary;
pub mod usage;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{AgentSpec, Headless, Policy, Transcripts};
use crate::transcripts::usage::get_str;

pub const ID: &str = "codex";
const DISPLAY_NAME: &str = "Codex";

pub static SPEC: AgentSpec = AgentSpec {
    id: ID,
    aliases: &["codex-cli"],
    display_name: DISPLAY_NAME,
    settings: settings::SETTINGS,
    policy: Policy::USUAL,
    compaction_limit: |window, _model, project, env| compaction::limit(window, project, env),
    window_cap: None,
    doctor: hooks::DOCTOR_SAMPLE,
    headless: Some(Headless {
        program: "codex",
        before_args: &["exec"],
        before_prompt: &["--"],
    }),
    plugin: None,
    status_line: None,
    records_dir: None,
    transcripts: &Codex,
};

struct Codex;

impl Transcripts for Codex {
    from_agent_modules!(authored_text);
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
    fn compaction_summary(
        &self,
        path: &Path,
        _since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> anyhow::Result<crate::transcripts::compaction_summary::Found> {
        summary::last(path)
    }
}

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")),
    }
}
