//! The summary Claude Code wrote at its last compaction, from the transcript: the `user` line
//! with `isCompactSummary: true` that follows a `compact_boundary` (docs/agents.md, "Claude
//! Code transcripts"). `PostCompact` carries the same text as `compact_summary`; the
//! transcript is the fallback, and Claude Code writes these lines only after `PostCompact` has
//! run, so a summary older than the compaction (`since`) is an earlier one and not returned.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::transcripts::compaction_summary::{content_text, scan_back, Found};

pub fn last(path: &Path, since: Option<DateTime<Utc>>) -> anyhow::Result<Found> {
    let found = scan_back(path, b"isCompactSummary", |line| {
        if line.get("isCompactSummary") != Some(&Value::Bool(true))
            || line.get("isSidechain") == Some(&Value::Bool(true))
        {
            return None;
        }
        let text = content_text(line.get("message")?.get("content")?)?;
        let at = line
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc));
        Some((text, at))
    })?;
    Ok(match found {
        Some((text, at)) if since.is_none_or(|s| at.is_none_or(|a| a >= s)) => Found::Text(text),
        _ => Found::None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(lines: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        (dir, path)
    }

    const BOUNDARY: &str = r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":167094},"uuid":"b"}"#;

    #[test]
    fn the_summary_line_after_the_boundary_is_read() {
        let (_d, path) = write(&[
            BOUNDARY,
            r#"{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued. Files: src/a.rs"},"timestamp":"2026-11-25T10:00:00Z","uuid":"s"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"isCompactSummary is a word"}]},"uuid":"x"}"#,
        ]);
        assert_eq!(
            last(&path, None).unwrap(),
            Found::Text("This session is being continued. Files: src/a.rs".into())
        );
        // One written before the compaction began is an older compaction's.
        let since = DateTime::parse_from_rfc3339("2026-11-25T10:05:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(last(&path, Some(since)).unwrap(), Found::None);
    }

    #[test]
    fn no_summary_yet_is_none() {
        let (_d, path) = write(&[BOUNDARY]);
        assert_eq!(last(&path, None).unwrap(), Found::None);
    }
}
