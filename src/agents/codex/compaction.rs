//! Where Codex compacts on its own: `model_auto_compact_token_limit` from
//! `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`) and the project's
//! `.codex/config.toml` (the active `profile` included), never above its
//! default of 90 % of the configured window (`model_context_window`). The
//! rollout reports 95 % of that window (190,000 for 200,000), so without a
//! configured one the window is the reported one ÷ 0.95.

use std::path::{Path, PathBuf};

use crate::context::compaction::{each_config, home, show, Limit};

/// Codex compacts at this share (9/10) of the configured window by default.
const DEFAULT_NUM: u64 = 9;
const DEFAULT_DEN: u64 = 10;
/// The share (95 %) of the configured window that Codex's rollout reports.
const REPORTED_PERCENT: u64 = 95;

pub fn limit(window: u64, project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Limit {
    let codex_home = match env("CODEX_HOME").filter(|h| !h.is_empty()) {
        Some(h) => Some(PathBuf::from(h)),
        None => home(env).map(|h| h.join(".codex")),
    };
    let files: Vec<PathBuf> = codex_home
        .map(|h| h.join("config.toml"))
        .into_iter()
        .chain(std::iter::once(project.join(".codex").join("config.toml")))
        .collect();
    let mut notes = Vec::new();
    let mut configured: Option<(i64, String)> = None;
    let mut configured_window: Option<i64> = None;
    let parse = |text: &str| {
        toml::from_str::<toml::Table>(text).map_err(|e| {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("not TOML").trim();
            format!("not valid TOML ({first})")
        })
    };
    each_config(&files, env, &mut notes, parse, |path, table, notes| {
        // The active profile's keys win over the top-level ones.
        let profile = table
            .get("profile")
            .and_then(toml::Value::as_str)
            .and_then(|p| table.get("profiles")?.get(p)?.as_table());
        let get = |key: &str| {
            profile
                .and_then(|p| p.get(key))
                .or_else(|| table.get(key))
                .map(|v| (v.as_integer(), v.type_str()))
        };
        match get("model_auto_compact_token_limit") {
            Some((Some(n), _)) => configured = Some((n, show(path, env))),
            Some((None, ty)) => notes.push(format!(
                "{}: model_auto_compact_token_limit is a {ty}, not an integer; Codex's default is used",
                show(path, env)
            )),
            None => {}
        }
        if let Some((Some(n), _)) = get("model_context_window") {
            configured_window = Some(n);
        }
    });
    let raw_window = configured_window
        .filter(|&w| w > 0)
        .map(|w| w as u64)
        .unwrap_or_else(|| (window * 100).div_ceil(REPORTED_PERCENT));
    let default = raw_window * DEFAULT_NUM / DEFAULT_DEN;
    let (tokens, source) = match configured {
        Some((n, path)) if n > 0 && (n as u64) <= default => (n as u64, format!("config:{path}")),
        Some((n, path)) if n > 0 => {
            notes.push(format!(
                "{path}: model_auto_compact_token_limit {n} is above Codex's default {default}, which Codex keeps"
            ));
            (default, "default".to_string())
        }
        // Codex ignores a limit of 0 or below.
        _ => (default, "default".to_string()),
    };
    Limit {
        tokens,
        source,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}
