//! Where Copilot CLI compacts on its own: in the background, once a model call's prompt
//! passes 80 % of the model's prompt limit (`maxPromptTokens`, which is ctxkeep's window; for
//! a provider of the user's own, `COPILOT_PROVIDER_MAX_PROMPT_TOKENS`). Measured with 1.0.102:
//! 49,000 of 64,000 tokens did not compact, 52,000 did. No setting moves it.
//!
//! The summary it wrote is the last `session.compaction_complete`'s `summaryContent` in the
//! session's `events.jsonl`.

use chrono::{DateTime, Utc};
use serde_json::Value;
use std::path::Path;

use crate::context::compaction::Limit;
use crate::transcripts::compaction_summary::{scan_back, Found};

/// The share of the prompt limit past which Copilot CLI compacts.
pub const THRESHOLD: f64 = 0.8;

pub fn limit(window: u64) -> Limit {
    Limit::new((window as f64 * THRESHOLD).floor() as u64, "default")
}

/// The summary of the last compaction that was applied, unless it finished before `since`.
pub fn summary(path: &Path, since: Option<DateTime<Utc>>) -> anyhow::Result<Found> {
    let found = scan_back(path, b"session.compaction_complete", |line| {
        if line.get("type").and_then(Value::as_str) != Some("session.compaction_complete") {
            return None;
        }
        let data = line.get("data")?;
        if data.get("success").and_then(Value::as_bool) != Some(true) {
            return None;
        }
        let at = line
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc));
        if let (Some(at), Some(since)) = (at, since) {
            if at < since {
                return Some(Found::None);
            }
        }
        let text = data
            .get("summaryContent")
            .and_then(Value::as_str)
            .unwrap_or("");
        Some(match text.trim() {
            "" => Found::None,
            t => Found::Text(t.to_string()),
        })
    })?;
    Ok(found.unwrap_or(Found::None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eighty_percent_of_the_prompt_limit() {
        assert_eq!(limit(64_000).tokens, 51_200);
        assert_eq!(limit(200_000).tokens, 160_000);
    }

    #[test]
    fn the_last_applied_summary_not_older_than_the_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"type":"session.compaction_complete","data":{"success":true,"summaryContent":"old"},"id":"a","timestamp":"2026-01-01T00:00:01.000Z","parentId":null}"#,
                "\n",
                r#"{"type":"session.compaction_complete","data":{"success":true,"summaryContent":"<summary>new</summary>"},"id":"b","timestamp":"2026-01-01T00:00:05.000Z","parentId":"a"}"#,
                "\n",
            ),
        )
        .unwrap();
        assert_eq!(
            summary(&path, None).unwrap(),
            Found::Text("<summary>new</summary>".into())
        );
        let later = "2026-01-01T00:00:09Z".parse().unwrap();
        assert_eq!(summary(&path, Some(later)).unwrap(), Found::None);
    }
}
