//! Where Gemini CLI compresses on its own: `model.compressionThreshold` (a
//! fraction of the window, default 0.5) from `~/.gemini/settings.json` and
//! the project's `.gemini/settings.json` (the project's wins).

use std::path::{Path, PathBuf};

use crate::compaction::{home, read_config, show, strip_json_comments, Limit};

/// Gemini CLI's default `model.compressionThreshold`.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

pub fn limit(window: u64, project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Limit {
    let files: Vec<PathBuf> = home(env)
        .map(|h| h.join(".gemini").join("settings.json"))
        .into_iter()
        .chain(std::iter::once(
            project.join(".gemini").join("settings.json"),
        ))
        .collect();
    let mut notes = Vec::new();
    let mut threshold: Option<(f64, String)> = None;
    for path in &files {
        let text = match read_config(path) {
            None => continue,
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                notes.push(format!("{}: {e}", show(path, env)));
                continue;
            }
        };
        let value: serde_json::Value = match serde_json::from_str(&strip_json_comments(&text)) {
            Ok(v) => v,
            Err(e) => {
                notes.push(format!("{}: not valid JSON ({e})", show(path, env)));
                continue;
            }
        };
        match value.pointer("/model/compressionThreshold") {
            None => {}
            Some(v) => match v.as_f64() {
                Some(t) if t > 0.0 && t <= 1.0 => threshold = Some((t, show(path, env))),
                _ => notes.push(format!(
                    "{}: model.compressionThreshold {v} is not a fraction in (0, 1]; the default {DEFAULT_THRESHOLD} is used",
                    show(path, env)
                )),
            },
        }
    }
    let (t, source) = match threshold {
        Some((t, path)) => (t, format!("config:{path}")),
        None => (DEFAULT_THRESHOLD, "default".to_string()),
    };
    Limit {
        tokens: (window as f64 * t).floor() as u64,
        source,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}
