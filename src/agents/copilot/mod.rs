//! GitHub Copilot CLI: session logs in `~/.copilot/session-state/<session>/events.jsonl`, hooks
//! in ctxkeep's own `.github/hooks/ctxkeep.json` with Claude Code's event names (which give
//! Claude Code's payload fields), MCP servers in `.github/mcp.json` (docs/agents.md, "Use with
//! GitHub Copilot CLI").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
pub mod usage;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::policy::{CompactionSeen, ContextReply};
use super::{AgentSpec, Headless, Policy, Transcripts};
use crate::transcripts::usage::get_str;

pub const ID: &str = "copilot";
const DISPLAY_NAME: &str = "GitHub Copilot CLI";

pub static SPEC: AgentSpec = AgentSpec {
    id: ID,
    aliases: &["copilot-cli", "github-copilot"],
    display_name: DISPLAY_NAME,
    settings: settings::SETTINGS,
    // Copilot CLI reads `additionalContext` at the top of a hook's reply (Claude Code's
    // `hookSpecificOutput` is ignored there, seen with 1.0.102); `PreCompact`'s output
    // reaches no one; no event follows a compaction: it is seen when usage drops and
    // the session log has a compaction since the call before.
    policy: Policy {
        compaction: CompactionSeen::ByDropTheTranscriptRecords,
        reply: ContextReply::TopLevel,
        ..Policy::USUAL
    },
    compaction_limit: |window, _model, _project, _env| compaction::limit(window),
    window_cap: None,
    doctor: hooks::DOCTOR_SAMPLE,
    // `-p` denies what it would have to ask about; `--allow-all-tools` is the user's to add.
    headless: Some(Headless {
        program: "copilot",
        before_args: &[],
        before_prompt: &["-p"],
    }),
    plugin: None,
    status_line: None,
    records_dir: None,
    transcripts: &Copilot,
};

struct Copilot;

impl Transcripts for Copilot {
    from_agent_modules!(authored_text);
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
    fn compaction_summary(
        &self,
        path: &Path,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> anyhow::Result<crate::transcripts::compaction_summary::Found> {
        compaction::summary(path, since)
    }
}

/// `COPILOT_HOME`, else `~/.copilot`.
fn copilot_home() -> Option<PathBuf> {
    match std::env::var_os("COPILOT_HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".copilot")),
    }
}
