//! Where Claude Code compacts on its own: `window − 20,000` (kept for the
//! summary's output) `− 13,000` (its buffer), e.g. 167,000 of 200,000;
//! `CLAUDE_CODE_AUTO_COMPACT_WINDOW` lowers the window it counts from,
//! `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (a percent of `window − 20,000`) can only
//! lower the limit, and `DISABLE_AUTO_COMPACT` turns compaction off. Read from
//! the environment the hook runs in (Claude Code passes its own to its hooks).

use crate::compaction::{truthy, Limit};

/// Claude Code keeps this much of the window for the summary's output.
pub const SUMMARY_RESERVE: u64 = 20_000;
/// Claude Code compacts this far below `window − SUMMARY_RESERVE`.
pub const BUFFER: u64 = 13_000;

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
