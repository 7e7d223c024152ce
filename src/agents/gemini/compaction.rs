//! Where Gemini CLI compresses on its own: `model.compressionThreshold` (a
//! fraction of the window, default 0.5) from `~/.gemini/settings.json` and
//! the project's `.gemini/settings.json` (the project's wins).

use std::path::{Path, PathBuf};

use crate::context::compaction::{fraction_setting, home, Limit};

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
    let (t, source, notes) = fraction_setting(
        &files,
        "/model/compressionThreshold",
        DEFAULT_THRESHOLD,
        env,
    );
    Limit {
        tokens: (window as f64 * t).floor() as u64,
        source,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}
