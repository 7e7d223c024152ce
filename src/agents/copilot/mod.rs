//! GitHub Copilot CLI: session logs in `~/.copilot/session-state/<session>/events.jsonl`, hooks
//! in ctxkeep's own `.github/hooks/ctxkeep.json` with Claude Code's event names (which give
//! Claude Code's payload fields), MCP servers in `.github/mcp.json` (docs/agents.md, "Use with
//! GitHub Copilot CLI").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod usage;

use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{DoctorSample, Headless, HookTraits, Integration, ReadSeek};
use crate::agents::payload::Payload;
use crate::context::compaction::Limit;
use crate::install::agent_settings::AgentSettings;
use crate::system::error::Error;
use crate::transcripts::activity::Recorder;
use crate::transcripts::usage::{get_str, Usage};

pub const ID: &str = "copilot";
const DISPLAY_NAME: &str = "GitHub Copilot CLI";

pub struct Copilot;

impl Integration for Copilot {
    fn id(&self) -> &'static str {
        ID
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["copilot-cli", "github-copilot"]
    }
    fn display_name(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn read_usage(&self, path: &Path, src: &mut dyn ReadSeek, len: u64) -> anyhow::Result<Usage> {
        usage::read_from(path, src, len)
    }
    fn observe(&self, path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()> {
        observe::read(path, file, len, rec)
    }
    fn sniff_line(&self, map: &Map<String, Value>) -> bool {
        // `type` is a dotted event name (`session.start`, `assistant.message`), `data` an
        // object, and the line names its parent event.
        get_str(map, "type").is_some_and(|t| t.contains('.'))
            && map.get("data").is_some_and(Value::is_object)
            && map.contains_key("parentId")
            && map.contains_key("id")
    }
    fn claims_file_name(&self, path: &Path) -> bool {
        path.components().any(|c| c.as_os_str() == "session-state")
            && path.file_name().is_some_and(|n| n == "events.jsonl")
    }
    fn find_transcript(&self, session: &str) -> Option<PathBuf> {
        // Only `Stop` and `PreCompact` name it; the session id is a folder's name.
        if session.is_empty() || session.contains(['/', '\\']) || session.starts_with('.') {
            return None;
        }
        Some(
            copilot_home()?
                .join("session-state")
                .join(session)
                .join("events.jsonl"),
        )
    }
    fn authored_text(&self, line: &Map<String, Value>) -> Vec<String> {
        hooks::authored_text(line)
    }

    fn compaction_limit(
        &self,
        window: u64,
        _project: &Path,
        _env: &dyn Fn(&str) -> Option<String>,
    ) -> Limit {
        compaction::limit(window)
    }
    fn compaction_summary(
        &self,
        path: &Path,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> anyhow::Result<crate::transcripts::compaction_summary::Found> {
        compaction::summary(path, since)
    }

    fn payload(&self, root: &Map<String, Value>) -> Result<Payload, Error> {
        hooks::payload(root)
    }
    fn hook_traits(&self) -> HookTraits {
        // Copilot CLI reads `additionalContext` at the top of a hook's reply (Claude Code's
        // `hookSpecificOutput` is ignored there, seen with 1.0.102); `PreCompact`'s output
        // reaches no one; no event follows a compaction: it is seen when the figure falls and
        // the session log has a compaction since the call before.
        HookTraits {
            compaction_seen_as_drop: true,
            compaction_in_transcript: true,
            context_at_top_level: true,
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

    fn headless(&self) -> Option<Headless> {
        // `-p` denies what it would have to ask about; `--allow-all-tools` is the user's to add.
        Some(Headless {
            program: "copilot",
            before_args: &[],
            before_prompt: &["-p"],
        })
    }
}

/// `COPILOT_HOME`, else `~/.copilot`.
fn copilot_home() -> Option<PathBuf> {
    match std::env::var_os("COPILOT_HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".copilot")),
    }
}
