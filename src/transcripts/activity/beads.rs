//! The project's task tracker, when it is beads: `.beads/issues.jsonl` (or the older
//! `.beads/beads.jsonl`), one issue per line as JSON (`id`, `title`, `status`, `priority`,
//! `dependencies` with `depends_on_id` and `type`), a later line for an id replacing an
//! earlier one. Read from its file, never by running `bd`: the issues in progress, then those
//! ready (open, with no open issue blocking them), by priority.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// At most this many issues are kept.
pub const MAX_ISSUES: usize = 10;
/// A title is cut to this many characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// A tracker file larger than this is not read.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// One issue of the tracker, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackerIssue {
    pub id: String,
    pub title: String,
    /// `in_progress` or `ready`.
    pub status: String,
}

struct Issue {
    title: String,
    status: String,
    priority: i64,
    blocked_by: Vec<String>,
}

/// The issues in progress and ready in the beads tracker under `root`; none when it has no
/// tracker or its file cannot be read.
pub fn issues(root: &Path) -> Vec<TrackerIssue> {
    let dir = root.join(".beads");
    let Some(text) = ["issues.jsonl", "beads.jsonl"]
        .iter()
        .find_map(|name| crate::system::fsutil::read_text(&dir.join(name), MAX_FILE_BYTES).ok())
    else {
        return Vec::new();
    };
    let mut order: Vec<String> = Vec::new();
    let mut all: HashMap<String, Issue> = HashMap::new();
    for line in text.lines() {
        let Ok(Value::Object(v)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
        let id = s("id");
        if id.is_empty() {
            continue;
        }
        let blocked_by = v
            .get("dependencies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|d| d.get("type").and_then(Value::as_str).unwrap_or("blocks") == "blocks")
            .filter_map(|d| d.get("depends_on_id").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        if !all.contains_key(id) {
            order.push(id.to_string());
        }
        all.insert(
            id.to_string(),
            Issue {
                title: s("title").to_string(),
                status: if s("status").is_empty() {
                    "open".into()
                } else {
                    s("status").to_string()
                },
                priority: v.get("priority").and_then(Value::as_i64).unwrap_or(2),
                blocked_by,
            },
        );
    }
    let open = |id: &String| {
        all.get(id)
            .is_some_and(|i| !matches!(i.status.as_str(), "closed" | "tombstone"))
    };
    let mut picked: Vec<(u8, i64, usize, &String)> = Vec::new();
    for (at, id) in order.iter().enumerate() {
        let issue = &all[id];
        let rank = match issue.status.as_str() {
            "in_progress" => 0,
            "open" if !issue.blocked_by.iter().any(open) => 1,
            _ => continue,
        };
        picked.push((rank, issue.priority, at, id));
    }
    crate::system::sorting::sort(&mut picked);
    picked
        .into_iter()
        .take(MAX_ISSUES)
        .map(|(rank, _, _, id)| TrackerIssue {
            id: id.clone(),
            title: crate::transcripts::activity::text::cut(
                crate::system::redact::redact(all[id].title.trim()).as_ref(),
                MAX_TITLE_CHARS,
            ),
            status: if rank == 0 { "in_progress" } else { "ready" }.into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_progress_then_ready_by_priority_and_blocked_or_closed_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".beads")).unwrap();
        let lines = [
            r#"{"id":"sp-1","title":"Parse the config","status":"closed","priority":1}"#,
            r#"{"id":"sp-2","title":"Wire the flag","status":"open","priority":2,"dependencies":[{"issue_id":"sp-2","depends_on_id":"sp-1","type":"blocks"}]}"#,
            r#"{"id":"sp-3","title":"Write docs","status":"open","priority":3,"dependencies":[{"issue_id":"sp-3","depends_on_id":"sp-4","type":"blocks"}]}"#,
            r#"{"id":"sp-4","title":"Release","status":"open","priority":0}"#,
            r#"{"id":"sp-5","title":"Old title","status":"open"}"#,
            r#"{"id":"sp-5","title":"Fix the CRLF test","status":"in_progress","priority":2}"#,
            "not json",
        ];
        std::fs::write(dir.path().join(".beads/issues.jsonl"), lines.join("\n")).unwrap();
        let got: Vec<(String, String)> = issues(dir.path())
            .into_iter()
            .map(|i| (i.id, i.status))
            .collect();
        let want = [
            ("sp-5", "in_progress"),
            ("sp-4", "ready"),
            ("sp-2", "ready"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
        assert!(issues(&dir.path().join("nowhere")).is_empty());
    }
}
