//! Where Qwen Code compacts on its own: `context.autoCompactThreshold` (a
//! fraction of the window, default 0.85) from `~/.qwen/settings.json` and the
//! project's `.qwen/settings.json` (the project's wins), never above the
//! window less the summary's reserve (20,000) and a buffer (13,000).

use std::path::{Path, PathBuf};

use crate::compaction::{home, read_config, show, strip_json_comments, Limit};

/// Qwen Code's default `context.autoCompactThreshold`.
pub const DEFAULT_THRESHOLD: f64 = 0.85;
/// What Qwen Code keeps free below the window: the summary's output and a buffer.
const RESERVE: u64 = 20_000 + 13_000;

pub fn limit(window: u64, project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Limit {
    let files: Vec<PathBuf> = home(env)
        .map(|h| h.join(".qwen").join("settings.json"))
        .into_iter()
        .chain(std::iter::once(project.join(".qwen").join("settings.json")))
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
        if let Some(v) = value.pointer("/context/autoCompactThreshold") {
            match v.as_f64() {
                Some(t) if t > 0.0 && t <= 1.0 => threshold = Some((t, show(path, env))),
                _ => notes.push(format!(
                    "{}: context.autoCompactThreshold {v} is not a fraction in (0, 1]; the default {DEFAULT_THRESHOLD} is used",
                    show(path, env)
                )),
            }
        }
    }
    let (t, source) = match threshold {
        Some((t, path)) => (t, format!("config:{path}")),
        None => (DEFAULT_THRESHOLD, "default".to_string()),
    };
    let proportional = (window as f64 * t).floor() as u64;
    let ceiling = window.saturating_sub(RESERVE);
    Limit {
        tokens: if ceiling > 0 {
            proportional.min(ceiling)
        } else {
            proportional
        },
        source,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_capped_below_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let env = |_: &str| None;
        // 0.85 of 262,144 is 222,822; the ceiling (229,144) is higher.
        assert_eq!(limit(262_144, dir.path(), &env).tokens, 222_822);
        // On a small window the reserve decides: 0.85 of 100,000 is above 67,000.
        assert_eq!(limit(100_000, dir.path(), &env).tokens, 67_000);
        std::fs::create_dir_all(dir.path().join(".qwen")).unwrap();
        std::fs::write(
            dir.path().join(".qwen/settings.json"),
            r#"{"context": {"autoCompactThreshold": 0.5}}"#,
        )
        .unwrap();
        let l = limit(200_000, dir.path(), &env);
        assert_eq!(l.tokens, 100_000);
        assert!(l.source.starts_with("config:"));
    }
}
