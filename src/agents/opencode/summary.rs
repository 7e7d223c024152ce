//! The summary OpenCode's summarizer wrote at a compaction, from the
//! plugin's record: the text of the assistant message with `summary: true`
//! (its `message.updated` line may come before or after its text part's).

use std::collections::HashSet;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::transcripts::compaction_summary::Found;

pub fn read(path: &Path, since: Option<DateTime<Utc>>) -> anyhow::Result<Found> {
    let (file, len) = crate::transcripts::usage::open_transcript(path)?;
    let lines = crate::transcripts::activity::window_lines(
        path,
        file,
        len,
        crate::transcripts::activity::TAIL_BYTES,
    )?;
    let mut summaries = HashSet::new();
    let mut texts: Vec<(String, String, Option<i64>)> = Vec::new();
    for bytes in &lines {
        let Ok(line) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        let props = &line["properties"];
        match line["type"].as_str() {
            Some("message.updated") if props["info"]["summary"] == Value::Bool(true) => {
                if let Some(id) = props["info"]["id"].as_str() {
                    summaries.insert(id.to_string());
                }
            }
            Some("message.part.updated") if props["part"]["type"] == "text" => {
                let part = &props["part"];
                if let (Some(m), Some(t)) = (part["messageID"].as_str(), part["text"].as_str()) {
                    texts.push((m.to_string(), t.to_string(), part["time"]["end"].as_i64()));
                }
            }
            _ => {}
        }
    }
    let last = texts
        .into_iter()
        .rev()
        .find(|(m, _, _)| summaries.contains(m));
    Ok(match last {
        Some((_, _, Some(end))) if since.is_some_and(|s| end < s.timestamp_millis()) => Found::None,
        Some((_, text, _)) if !text.trim().is_empty() => Found::Text(text),
        _ => Found::None,
    })
}
