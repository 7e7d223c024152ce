//! The summary Codex wrote at its last compaction, from the rollout: the last `compacted` line
//! (docs/agents.md, "Codex CLI rollouts"), written before `PostCompact` runs. A compaction done
//! by the model provider itself (OpenAI's, the default) replaces the history with an item of
//! type `compaction` whose `encrypted_content` only the provider can read: then the summary is
//! encrypted, whatever `message` says. Otherwise (a local compaction) `message` is the summary.

use std::path::Path;

use serde_json::Value;

use crate::transcripts::compaction_summary::{scan_back, Found};

pub fn last(path: &Path) -> anyhow::Result<Found> {
    let found = scan_back(path, b"compacted", |line| {
        if line.get("type").and_then(Value::as_str) != Some("compacted") {
            return None;
        }
        let payload = line.get("payload")?;
        let encrypted = payload
            .get("replacement_history")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|item| item.get("encrypted_content").is_some());
        if encrypted {
            return Some(Found::Encrypted);
        }
        let message = payload.get("message").and_then(Value::as_str).unwrap_or("");
        Some(match message.trim() {
            "" => Found::None,
            text => Found::Text(text.to_string()),
        })
    })?;
    Ok(found.unwrap_or(Found::None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-2026-11-25T10-00-00-x.jsonl");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_local_compaction_gives_its_message() {
        let (_d, path) = write(concat!(
            r#"{"timestamp":"t","type":"compacted","payload":{"message":"old summary","replacement_history":[]}}"#,
            "\n",
            r#"{"timestamp":"t","type":"compacted","payload":{"message":"Summary: edited src/a.rs","replacement_history":[{"type":"message","role":"user","content":[]}]}}"#,
            "\n",
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"context_compacted"}}"#,
            "\n",
        ));
        assert_eq!(
            last(&path).unwrap(),
            Found::Text("Summary: edited src/a.rs".into())
        );
    }

    #[test]
    fn a_remote_compaction_is_encrypted() {
        let (_d, path) = write(concat!(
            r#"{"timestamp":"t","type":"compacted","payload":{"message":"","replacement_history":[{"type":"compaction","encrypted_content":"gAAA"}]}}"#,
            "\n",
        ));
        assert_eq!(last(&path).unwrap(), Found::Encrypted);
    }
}
