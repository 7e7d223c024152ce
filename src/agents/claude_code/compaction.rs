//! Where Claude Code compacts on its own: `window − 20,000` (kept for the
//! summary's output) `− 13,000` (its buffer), e.g. 167,000 of 200,000;
//! `CLAUDE_CODE_AUTO_COMPACT_WINDOW` lowers the window it counts from,
//! `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (a percent of `window − 20,000`) can only
//! lower the limit, and `DISABLE_AUTO_COMPACT` turns compaction off. Read from
//! the environment the hook runs in (Claude Code passes its own to its hooks).
//!
//! Since the `/autocompact` dialog (2.1.234) the window it counts from is also a
//! setting: `autoCompactWindow` (100k to 1M), per model under
//! `modelSettings.<model>.autoCompactWindow`, in the project's local and shared
//! settings and the user's (`$CLAUDE_CONFIG_DIR`, else `~/.claude`), the most
//! particular first; the environment variable wins over every file.
//! `CLAUDE_CODE_DISABLE_1M_CONTEXT` (2.1.223) holds 1M models to 200,000.

use std::path::{Path, PathBuf};

use crate::context::compaction::{read_config, show, strip_json_comments, truthy, Limit};

/// Claude Code keeps this much of the window for the summary's output.
pub const SUMMARY_RESERVE: u64 = 20_000;
/// Claude Code compacts this far below `window − SUMMARY_RESERVE`.
pub const BUFFER: u64 = 13_000;

/// `autoCompactWindow`'s accepted range.
const AUTO_COMPACT_WINDOW_RANGE: std::ops::RangeInclusive<u64> = 100_000..=1_000_000;
/// The window a 1M model is held to under `CLAUDE_CODE_DISABLE_1M_CONTEXT`.
pub const WITHOUT_1M: u64 = 200_000;

/// The window after `CLAUDE_CODE_DISABLE_1M_CONTEXT`: a 1M window held to
/// 200,000, and where that came from; None when it changes nothing.
pub fn window_cap(window: u64, env: &dyn Fn(&str) -> Option<String>) -> Option<(u64, String)> {
    (window > WITHOUT_1M && env("CLAUDE_CODE_DISABLE_1M_CONTEXT").is_some_and(|v| truthy(&v)))
        .then(|| (WITHOUT_1M, "env:CLAUDE_CODE_DISABLE_1M_CONTEXT".to_string()))
}

/// Claude Code's settings files, most particular first.
fn settings_files(project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let user_dir = env("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".claude"))
        });
    let mut files = vec![
        project.join(".claude").join("settings.local.json"),
        project.join(".claude").join("settings.json"),
    ];
    files.extend(user_dir.map(|d| d.join("settings.json")));
    files
}

/// The `autoCompactWindow` that applies to `model`: in the most particular
/// file that sets one, the model's own (`modelSettings.<model>`) ahead of the
/// file's general one. The value, `config:PATH`, and why a file or value was
/// not used.
fn auto_compact_window(
    model: Option<&str>,
    project: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Option<(u64, String)>, Vec<String>) {
    let mut notes = Vec::new();
    let model = model.map(|m| {
        let m = m.trim().to_ascii_lowercase();
        m.strip_suffix("[1m]").map(str::to_string).unwrap_or(m)
    });
    for path in settings_files(project, env) {
        let text = match read_config(&path) {
            None => continue,
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                notes.push(format!("{}: {e}", show(&path, env)));
                continue;
            }
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&strip_json_comments(&text))
        else {
            notes.push(format!("{}: not valid JSON", show(&path, env)));
            continue;
        };
        let per_model = model.as_deref().and_then(|m| {
            value
                .get("modelSettings")?
                .as_object()?
                .iter()
                .find(|(k, _)| k.trim().to_ascii_lowercase() == m)
                .and_then(|(_, v)| v.get("autoCompactWindow"))
        });
        let Some(v) = per_model.or_else(|| value.get("autoCompactWindow")) else {
            continue;
        };
        match v.as_u64().filter(|w| AUTO_COMPACT_WINDOW_RANGE.contains(w)) {
            Some(w) => return (Some((w, format!("config:{}", show(&path, env)))), notes),
            None => notes.push(format!(
                "{}: autoCompactWindow {v} is not a number of tokens from 100000 to 1000000; Claude Code ignores it",
                show(&path, env)
            )),
        }
    }
    (None, notes)
}

/// [`limit`], with the settings files' `autoCompactWindow` for `model` where
/// the environment sets no window.
pub fn limit_for(
    window: u64,
    model: Option<&str>,
    project: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Limit {
    if env("CLAUDE_CODE_AUTO_COMPACT_WINDOW").is_some()
        || env("DISABLE_AUTO_COMPACT").is_some_and(|v| truthy(&v))
    {
        return limit(window, env);
    }
    let (setting, mut notes) = auto_compact_window(model, project, env);
    let mut found = match setting {
        Some((w, source)) => {
            let mut l = limit(window.min(w), env);
            l.source = match l.source.as_str() {
                "default" => source,
                other => format!("{source}+{other}"),
            };
            l
        }
        None => limit(window, env),
    };
    if let Some(n) = found.note.take() {
        notes.push(n);
    }
    found.note = (!notes.is_empty()).then(|| notes.join("; "));
    found
}

pub fn limit(window: u64, env: &dyn Fn(&str) -> Option<String>) -> Limit {
    if env("DISABLE_AUTO_COMPACT").is_some_and(|v| truthy(&v)) {
        return Limit::new(window, "env:DISABLE_AUTO_COMPACT");
    }
    let mut notes = Vec::new();
    let mut used = Vec::new();
    let mut counted = window;
    if let Some(v) = env("CLAUDE_CODE_AUTO_COMPACT_WINDOW") {
        match v.trim().parse::<u64>() {
            Ok(w) if w > 0 => {
                counted = counted.min(w);
                used.push("CLAUDE_CODE_AUTO_COMPACT_WINDOW");
            }
            _ => notes.push(format!(
                "CLAUDE_CODE_AUTO_COMPACT_WINDOW={v:?} is not a positive number; Claude Code ignores it"
            )),
        }
    }
    let effective = counted.saturating_sub(SUMMARY_RESERVE);
    let mut tokens = effective.saturating_sub(BUFFER);
    if let Some(v) = env("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE") {
        match v.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => {
                let by_percent = (effective as f64 * p / 100.0).floor() as u64;
                tokens = tokens.min(by_percent);
                used.insert(0, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE");
            }
            _ => notes.push(format!(
                "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={v:?} is not a percent in (0, 100]; Claude Code ignores it"
            )),
        }
    }
    let source = if used.is_empty() {
        "default".to_string()
    } else {
        format!("env:{}", used.join("+"))
    };
    if tokens == 0 {
        // A window too small for Claude Code's margins: measure the window.
        notes.push(format!(
            "a {counted}-token window leaves nothing below Claude Code's margins"
        ));
        tokens = window;
    }
    Limit {
        tokens,
        source,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}
