//! OpenCode: no hook settings but plugins. `hooks install` writes ctxkeep's
//! plugin (`.opencode/plugins/ctxkeep.js`), which runs `ctxkeep hook
//! opencode` for each event and keeps a record of the session's events
//! (`$XDG_STATE_HOME/ctxkeep/opencode/<session>.jsonl`): OpenCode keeps its
//! own sessions in a SQLite database whose layout is its internal business,
//! while the events a plugin gets are its published interface
//! (docs/agents.md, "Use with OpenCode").

pub mod compaction;
mod hooks;
pub mod observe;
pub mod settings;
mod summary;
pub mod usage;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::policy::{PreCompact, PreCompactFires, PreCompactOutput};
use super::{AgentSpec, Headless, Policy, Transcripts};
use crate::transcripts::compaction_summary::Found;
use crate::transcripts::usage::get_str;

pub const ID: &str = "opencode";
const DISPLAY_NAME: &str = "OpenCode";

pub static SPEC: AgentSpec = AgentSpec {
    id: ID,
    aliases: &["open-code", "opencode-ai"],
    display_name: DISPLAY_NAME,
    settings: settings::SETTINGS,
    policy: Policy {
        // `experimental.session.compacting` adds context to the summarizer's prompt.
        pre_compact: PreCompact {
            fires: PreCompactFires::WhenCompacting,
            output: PreCompactOutput::ToSummarizer,
        },
        ..Policy::USUAL
    },
    compaction_limit: |window, _model, project, env| compaction::limit(window, project, env),
    window_cap: None,
    doctor: hooks::DOCTOR_SAMPLE,
    headless: Some(Headless {
        program: "opencode",
        before_args: &["run"],
        before_prompt: &[],
    }),
    plugin: None,
    status_line: None,
    records_dir: Some(records_dir),
    transcripts: &OpenCode,
};

struct OpenCode;

/// Where the plugin keeps its records: `$XDG_STATE_HOME/ctxkeep/opencode`
/// (`~/.local/state/ctxkeep/opencode` without it).
fn records_dir() -> Option<PathBuf> {
    Some(crate::system::fsutil::user_state_dir()?.join(ID))
}

impl Transcripts for OpenCode {
    from_agent_modules!(authored_text);
    fn sniff_line(&self, map: &Map<String, Value>) -> bool {
        // An OpenCode bus event (`session.compacted`, `message.updated`, …) or the plugin's own
        // (`chat.message`, `chat.params`): a dotted `type` and an object of `properties`.
        get_str(map, "type").is_some_and(|t| t.contains('.'))
            && map.get("properties").is_some_and(Value::is_object)
    }
    fn claims_file_name(&self, path: &Path) -> bool {
        let mut parts = path.components().rev().skip(1);
        parts.next().is_some_and(|c| c.as_os_str() == ID)
            && parts.next().is_some_and(|c| c.as_os_str() == "ctxkeep")
    }
    fn find_transcript(&self, session: &str) -> Option<PathBuf> {
        if session.is_empty() {
            return None;
        }
        // The plugin's own file name for the session: anything but letters, digits, `_` and `-`
        // becomes `_`, so no id can name a file outside the records' folder.
        let name: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Some(records_dir()?.join(format!("{name}.jsonl")))
    }
    fn compaction_summary(
        &self,
        path: &Path,
        since: Option<DateTime<Utc>>,
    ) -> anyhow::Result<Found> {
        summary::read(path, since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_names_a_record_in_the_records_folder_only() {
        let dir = records_dir().expect("HOME or XDG_STATE_HOME is set where tests run");
        let plain = OpenCode.find_transcript("ses_4bX-1_a").unwrap();
        assert_eq!(plain, dir.join("ses_4bX-1_a.jsonl"));
        let hostile = OpenCode.find_transcript("../../etc/passwd").unwrap();
        assert_eq!(hostile.parent(), Some(dir.as_path()));
        assert_eq!(hostile.file_name().unwrap(), "______etc_passwd.jsonl");
        assert_eq!(OpenCode.find_transcript(""), None);
    }
}
