//! The summary Gemini CLI wrote at its last compression, from the chat file: a compression
//! replaces the message list (a `$set` of `messages`) with the session's context, a user
//! message holding `<state_snapshot>…</state_snapshot>`, the model's acknowledgement and the
//! latest turn (docs/agents.md, "Gemini CLI chat recordings"). Looked for only when a
//! compression was just seen, so the latest snapshot is that compression's.

use std::path::Path;

use serde_json::Value;

use crate::transcripts::compaction_summary::{content_text, scan_back, Found};

const OPEN: &str = "<state_snapshot>";
const CLOSE: &str = "</state_snapshot>";

pub fn last(path: &Path) -> anyhow::Result<Found> {
    let found = scan_back(path, OPEN.as_bytes(), |line| {
        let messages = line.get("$set")?.get("messages")?.as_array()?;
        messages.iter().rev().find_map(|m| {
            if m.get("type").and_then(Value::as_str) != Some("user") {
                return None;
            }
            let text = content_text(m.get("content")?)?;
            let start = text.find(OPEN)? + OPEN.len();
            let end = text[start..].find(CLOSE).map_or(text.len(), |e| start + e);
            Some(text[start..end].trim().to_string())
        })
    })?;
    Ok(found.map_or(Found::None, Found::Text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_of_the_last_compression_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-2026-11-25T10-00-abcd1234.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"sessionId":"abcd1234","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}"#, "\n",
                r#"{"$set":{"messages":[{"id":"1","type":"user","content":[{"text":"<session_context>ctx</session_context>"}]},{"id":"2","type":"user","content":[{"text":"<state_snapshot>edited src/a.rs</state_snapshot>"}]},{"id":"3","type":"gemini","content":[{"text":"Got it."}]}]}}"#, "\n",
                r#"{"id":"4","type":"user","content":[{"text":"Carry on."}]}"#, "\n",
            ),
        )
        .unwrap();
        assert_eq!(last(&path).unwrap(), Found::Text("edited src/a.rs".into()));
    }
}
