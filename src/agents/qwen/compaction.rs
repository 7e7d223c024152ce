//! Where Qwen Code compacts on its own: `context.autoCompactThreshold` (a
//! fraction of the window, default 0.85) from `~/.qwen/settings.json` and the
//! project's `.qwen/settings.json` (the project's wins), never above the
//! window less the summary's reserve (20,000) and a buffer (13,000).

use std::path::{Path, PathBuf};

use crate::context::compaction::{fraction_setting, home, Limit};

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
    let (t, source, notes) = fraction_setting(
        &files,
        "/context/autoCompactThreshold",
        DEFAULT_THRESHOLD,
        env,
    );
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
