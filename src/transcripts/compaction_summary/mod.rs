//! The agent's own compaction summary against ctxkeep's checkpoint: the brief that
//! steers the summarizer (`text::brief`), the audit of what the summary kept ([`audit`]), and
//! what is given back after it (`text::give_back`). Each agent's reader of its summary is in
//! its folder (`Integration::compaction_summary`); the scan they share is [`scan_back`].

pub mod facts;
pub mod remains;
pub mod text;

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::transcripts::usage::tail::{TailLine, TailReader};
pub use facts::{Fact, Kind};

/// What an agent's transcript holds of its last compaction summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Text(String),
    /// The summary is there but only the agent's provider can read it (Codex's remote
    /// compaction).
    Encrypted,
    /// No summary of this compaction (yet).
    None,
}

impl Found {
    /// Why no text could be read, in the words `compaction_audit` logs.
    pub fn unreadable(&self) -> Option<&'static str> {
        match self {
            Found::Text(_) => None,
            Found::Encrypted => Some("encrypted"),
            Found::None => Some("not found"),
        }
    }
}

/// One compaction's summary compared with a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audit {
    pub checkpoint: String,
    pub kept: Vec<Fact>,
    pub missing: Vec<Fact>,
    pub summary_chars: usize,
}

/// Compares `summary` with `facts`, those of the checkpoint `checkpoint` (see [`facts`] for
/// the rules).
pub fn audit(checkpoint: &str, facts: &[Fact], summary: &str) -> Audit {
    let (kept, missing) = facts::split(facts, summary);
    Audit {
        checkpoint: checkpoint.to_string(),
        kept,
        missing,
        summary_chars: summary.chars().count(),
    }
}

/// What a session remembers of its last audit, for `status` and `log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditNote {
    /// When it was made (RFC 3339).
    pub at: String,
    pub agent: Option<String>,
    /// `auto`, `manual`, or `detected` (a compression seen as a drop in usage).
    pub trigger: Option<String>,
    pub checkpoint: String,
    /// How many of the checkpoint's facts the summary kept, and the ones it did not.
    pub kept: usize,
    pub missing: Vec<String>,
    /// None when the summary could not be read.
    pub summary_chars: Option<usize>,
    /// Why the summary could not be read (`encrypted`, `not found`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// Of the facts it did not keep, those newer evidence had replaced by the time they would
    /// have been given back (a failure a later run passed, an item completed since): not
    /// given back, and no longer missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<String>,
}

impl AuditNote {
    /// When it was made, for people ("3 min ago", else the time).
    pub fn when(&self) -> String {
        crate::system::clock::age(&self.at)
            .map(|a| format!("{a} ago"))
            .unwrap_or_else(|| self.at.clone())
    }

    /// One line for people, `when` saying when it was made: "last compaction (claude-code,
    /// auto, 3 min ago): the summary kept 5 of 7 facts of ckpt-0004; missing …".
    pub fn line(&self, when: &str) -> String {
        let trigger = self.trigger.as_deref().unwrap_or("compaction");
        let agent = self.agent.as_deref().unwrap_or("the agent");
        if let Some(why) = &self.unreadable {
            return format!(
                "last compaction ({agent}, {trigger}, {when}): summary {why}, so the whole checkpoint {} was given back",
                self.checkpoint
            );
        }
        let total = self.kept + self.missing.len() + self.replaced.len();
        let missing = if self.missing.is_empty() {
            "nothing missing".to_string()
        } else {
            let shown: Vec<String> = self
                .missing
                .iter()
                .take(3)
                .map(|m| crate::system::output::clip(m, 60))
                .collect();
            let more = self.missing.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("missing {}{more}", shown.join("; "))
        };
        let missing = match self.replaced.len() {
            0 => missing,
            n => format!("{missing}; {n} more replaced by newer evidence since"),
        };
        format!(
            "last compaction ({agent}, {trigger}, {when}): the summary kept {} of {total} facts of {}; {missing}",
            self.kept, self.checkpoint
        )
    }
}

/// How far back a summary is looked for in a transcript.
pub const SCAN_BYTES: u64 = 8 * 1024 * 1024;

/// Reads the transcript at `path` backwards (at most [`SCAN_BYTES`]) and gives the first
/// answer `found` makes of a line holding `needle` (a cheap test before parsing). Torn, bad
/// and overlong lines are passed over.
pub fn scan_back<T>(
    path: &Path,
    needle: &[u8],
    mut found: impl FnMut(&Map<String, Value>) -> Option<T>,
) -> anyhow::Result<Option<T>> {
    let (file, len) = crate::transcripts::usage::open_transcript(path)?;
    let mut reader = TailReader::new(file, len)?;
    while let Some(line) = reader.next_line()? {
        if reader.bytes_read() > SCAN_BYTES {
            break;
        }
        let TailLine::Line { bytes, .. } = line else {
            continue;
        };
        if !contains(&bytes, needle) {
            continue;
        }
        let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if let Some(t) = found(&map) {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

/// The text of a message's content: a string, or the `text` of its parts.
pub fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_matching_line_is_found_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            "{\"k\":\"summary\",\"n\":1}\nnot json summary\n{\"k\":\"summary\",\"n\":2}\n{\"k\":\"other\"}\n{\"k\":\"summary\",\"n\":3",
        )
        .unwrap();
        let got = scan_back(&path, b"summary", |m| m.get("n").and_then(Value::as_u64)).unwrap();
        // The torn last line is not read.
        assert_eq!(got, Some(2));
        assert_eq!(scan_back(&path, b"absent", |_| Some(0)).unwrap(), None);
    }

    #[test]
    fn an_audit_note_reads_as_one_line() {
        let note = AuditNote {
            at: "2026-11-25T10:00:00Z".into(),
            agent: Some("claude-code".into()),
            trigger: Some("auto".into()),
            checkpoint: "ckpt-0004".into(),
            kept: 5,
            missing: vec!["tests/blank.rs".into(), "run the widget tests".into()],
            summary_chars: Some(900),
            unreadable: None,
            replaced: Vec::new(),
        };
        assert_eq!(
            note.line("2 min ago"),
            "last compaction (claude-code, auto, 2 min ago): the summary kept 5 of 7 facts of ckpt-0004; missing tests/blank.rs; run the widget tests"
        );
        let later = AuditNote {
            missing: vec!["tests/blank.rs".into()],
            replaced: vec!["cargo test".into()],
            ..note
        };
        assert_eq!(
            later.line("2 min ago"),
            "last compaction (claude-code, auto, 2 min ago): the summary kept 5 of 7 facts of ckpt-0004; missing tests/blank.rs; 1 more replaced by newer evidence since"
        );
    }
}
