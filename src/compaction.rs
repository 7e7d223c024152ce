//! Where each agent compacts on its own: the usable limit of a session, in
//! tokens, and where that figure comes from. Stages are measured against it
//! by default, so that every stage can fire before the agent compacts.
//!
//! * Claude Code: `window − 20,000` (kept for the summary's output) `− 13,000`
//!   (its buffer), e.g. 167,000 of 200,000; `CLAUDE_CODE_AUTO_COMPACT_WINDOW`
//!   lowers the window it counts from, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (a
//!   percent of `window − 20,000`) can only lower the limit, and
//!   `DISABLE_AUTO_COMPACT` turns compaction off. Read from the environment
//!   the hook runs in (Claude Code passes its own to its hooks).
//! * Codex: `model_auto_compact_token_limit` from `$CODEX_HOME/config.toml`
//!   (else `~/.codex/config.toml`) and the project's `.codex/config.toml`
//!   (the active `profile` included), never above its default of 90 % of the
//!   configured window (`model_context_window`). The rollout reports 95 % of
//!   that window (190,000 for 200,000), so without a configured one the
//!   window is the reported one ÷ 0.95.
//! * Gemini CLI: `model.compressionThreshold` (a fraction of the window,
//!   default 0.5) from `~/.gemini/settings.json` and the project's
//!   `.gemini/settings.json` (the project's wins).
//! * No agent (`track --tokens`, `--add`, `--count`): the window.
//!
//! The front matter's `compaction:` overrides any of these. A configuration
//! file that cannot be read or parsed never fails a hook: the agent's
//! default is used and the reason kept in [`Limit::note`]. Nothing is cached:
//! the files are small and read only when the session's agent is known.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::usage::Agent;

/// Claude Code keeps this much of the window for the summary's output.
pub const CLAUDE_SUMMARY_RESERVE: u64 = 20_000;
/// Claude Code compacts this far below `window − CLAUDE_SUMMARY_RESERVE`.
pub const CLAUDE_BUFFER: u64 = 13_000;
/// Codex compacts at this share (9/10) of the configured window by default.
const CODEX_DEFAULT_NUM: u64 = 9;
const CODEX_DEFAULT_DEN: u64 = 10;
/// The share (95 %) of the configured window that Codex's rollout reports.
const CODEX_REPORTED_PERCENT: u64 = 95;
/// Gemini CLI's default `model.compressionThreshold`.
pub const GEMINI_DEFAULT_THRESHOLD: f64 = 0.5;
/// Agent configuration files larger than this are not read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A session's usable limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// Tokens at which the agent compacts on its own (at most the window).
    pub tokens: u64,
    /// Where the figure comes from: `window`, `front-matter`, `default`
    /// (the agent's own default), `env:NAME[+NAME]`, or `config:PATH`.
    pub source: String,
    /// Why a configured value was not used (a file that does not parse, an
    /// environment value the agent ignores), when one was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Limit {
    fn new(tokens: u64, source: impl Into<String>) -> Limit {
        Limit {
            tokens,
            source: source.into(),
            note: None,
        }
    }

    /// The whole window: what sessions without an agent measure against.
    pub fn window(window: u64) -> Limit {
        Limit::new(window, "window")
    }
}

/// A limit given in the front matter: tokens, or a percent of the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitSpec {
    Tokens(u64),
    Percent(f64),
}

impl LimitSpec {
    fn resolve(self, window: u64) -> u64 {
        match self {
            LimitSpec::Tokens(t) => t,
            LimitSpec::Percent(p) => (window as f64 * p / 100.0).floor() as u64,
        }
    }
}

impl<'de> Deserialize<'de> for LimitSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<LimitSpec, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        let bad = || {
            serde::de::Error::custom(
                "a compaction limit is a number of tokens (150000) or a percent of the window (\"85%\")",
            )
        };
        match Raw::deserialize(d).map_err(|_| bad())? {
            Raw::Int(0) => Err(bad()),
            Raw::Int(n) => Ok(LimitSpec::Tokens(n)),
            Raw::Text(s) => {
                let p: f64 = s
                    .trim()
                    .strip_suffix('%')
                    .ok_or_else(bad)?
                    .trim()
                    .parse()
                    .map_err(|_| bad())?;
                if p > 0.0 && p <= 100.0 {
                    Ok(LimitSpec::Percent(p))
                } else {
                    Err(bad())
                }
            }
        }
    }
}

/// What the stages' percents are of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StagesAgainst {
    /// The usable limit (the default).
    #[default]
    Limit,
    /// The whole window (ctxkeep's behaviour before limits).
    Window,
}

/// The front matter's `compaction:` key.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CompactionConfig {
    #[serde(rename = "claude-code", alias = "claude_code", alias = "claude")]
    pub claude_code: Option<LimitSpec>,
    pub codex: Option<LimitSpec>,
    #[serde(alias = "gemini-cli")]
    pub gemini: Option<LimitSpec>,
    /// Sessions no agent wrote (`track --tokens`, `--add`, `--count`).
    pub default: Option<LimitSpec>,
    /// `limit` (default) or `window`.
    pub stages: Option<StagesAgainst>,
}

impl CompactionConfig {
    fn for_agent(&self, agent: Option<Agent>) -> Option<LimitSpec> {
        match agent {
            Some(Agent::ClaudeCode) => self.claude_code,
            Some(Agent::Codex) => self.codex,
            Some(Agent::Gemini) => self.gemini,
            None => self.default,
        }
    }
}

/// What the limit depends on besides the agent's own configuration.
pub struct Query<'a> {
    pub agent: Option<Agent>,
    /// The window ctxkeep measures the session against.
    pub window: u64,
    /// The project's root (for `.codex/config.toml`, `.gemini/settings.json`).
    pub project: &'a Path,
    pub front: Option<&'a CompactionConfig>,
}

/// The limit for `q`, reading the process's environment.
pub fn limit(q: &Query) -> Limit {
    limit_with(q, &|name| std::env::var(name).ok())
}

/// The limit for `q`, with `env` standing for the environment (tests).
pub fn limit_with(q: &Query, env: &dyn Fn(&str) -> Option<String>) -> Limit {
    let window = q.window.max(1);
    let mut limit = match q.front.and_then(|f| f.for_agent(q.agent)) {
        Some(spec) => Limit::new(spec.resolve(window), "front-matter"),
        None => match q.agent {
            Some(Agent::ClaudeCode) => claude_code(window, env),
            Some(Agent::Codex) => codex(window, q.project, env),
            Some(Agent::Gemini) => gemini(window, q.project, env),
            None => Limit::window(window),
        },
    };
    limit.tokens = limit.tokens.clamp(1, window);
    limit
}

fn home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// A `home`-relative path as `~/…` (shorter, and the same on every machine).
fn show(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> String {
    match home(env).and_then(|h| path.strip_prefix(h).ok().map(Path::to_path_buf)) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

fn claude_code(window: u64, env: &dyn Fn(&str) -> Option<String>) -> Limit {
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
    let effective = counted.saturating_sub(CLAUDE_SUMMARY_RESERVE);
    let mut tokens = effective.saturating_sub(CLAUDE_BUFFER);
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

/// Reads a small configuration file: None when there is none, else its
/// text or why it cannot be read.
fn read_config(path: &Path) -> Option<Result<String, String>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(Err("not a regular file".into()));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Some(Err(format!("larger than {MAX_CONFIG_BYTES} bytes")));
    }
    Some(std::fs::read_to_string(path).map_err(|e| e.to_string()))
}

fn codex(window: u64, project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Limit {
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
    for path in &files {
        let text = match read_config(path) {
            None => continue,
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                notes.push(format!("{}: {e}", show(path, env)));
                continue;
            }
        };
        let table: toml::Table = match toml::from_str(&text) {
            Ok(t) => t,
            Err(e) => {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or("not TOML").trim();
                notes.push(format!("{}: not valid TOML ({first})", show(path, env)));
                continue;
            }
        };
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
    }
    let raw_window = configured_window
        .filter(|&w| w > 0)
        .map(|w| w as u64)
        .unwrap_or_else(|| (window * 100).div_ceil(CODEX_REPORTED_PERCENT));
    let default = raw_window * CODEX_DEFAULT_NUM / CODEX_DEFAULT_DEN;
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

/// Removes `//` and `/* */` comments outside strings (Gemini's settings
/// files are JSON with comments).
fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

fn gemini(window: u64, project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Limit {
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
                    "{}: model.compressionThreshold {v} is not a fraction in (0, 1]; the default {GEMINI_DEFAULT_THRESHOLD} is used",
                    show(path, env)
                )),
            },
        }
    }
    let (t, source) = match threshold {
        Some((t, path)) => (t, format!("config:{path}")),
        None => (GEMINI_DEFAULT_THRESHOLD, "default".to_string()),
    };
    Limit {
        tokens: (window as f64 * t).floor() as u64,
        source,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Fixture {
        home: tempfile::TempDir,
        project: tempfile::TempDir,
        vars: HashMap<&'static str, String>,
    }

    impl Fixture {
        fn new() -> Fixture {
            let home = tempfile::tempdir().unwrap();
            let mut vars = HashMap::new();
            vars.insert("HOME", home.path().display().to_string());
            Fixture {
                home,
                project: tempfile::tempdir().unwrap(),
                vars,
            }
        }

        fn set(&mut self, k: &'static str, v: &str) -> &mut Self {
            self.vars.insert(k, v.to_string());
            self
        }

        fn write(&self, under_home: bool, rel: &str, text: &str) {
            let base = if under_home {
                self.home.path()
            } else {
                self.project.path()
            };
            let p = base.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }

        fn limit(&self, agent: Option<Agent>, window: u64, front: Option<&str>) -> Limit {
            let front: Option<CompactionConfig> = front.map(|f| serde_yaml::from_str(f).unwrap());
            let q = Query {
                agent,
                window,
                project: self.project.path(),
                front: front.as_ref(),
            };
            limit_with(&q, &|k| self.vars.get(k).cloned())
        }
    }

    const CC: Option<Agent> = Some(Agent::ClaudeCode);
    const CODEX: Option<Agent> = Some(Agent::Codex);
    const GEMINI: Option<Agent> = Some(Agent::Gemini);

    #[test]
    fn claude_code_compacts_33k_below_its_window() {
        let f = Fixture::new();
        assert_eq!(f.limit(CC, 200_000, None), Limit::new(167_000, "default"));
        assert_eq!(f.limit(CC, 1_000_000, None).tokens, 967_000);
    }

    #[test]
    fn claude_code_env_lowers_the_limit_and_bad_values_are_noted() {
        let mut f = Fixture::new();
        f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50");
        let l = f.limit(CC, 200_000, None);
        assert_eq!(l.tokens, 90_000, "50 % of 200,000 − 20,000");
        assert_eq!(l.source, "env:CLAUDE_AUTOCOMPACT_PCT_OVERRIDE");
        // It cannot raise the limit.
        f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "99");
        assert_eq!(f.limit(CC, 200_000, None).tokens, 167_000);
        f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "lots");
        let l = f.limit(CC, 200_000, None);
        assert_eq!((l.tokens, l.source.as_str()), (167_000, "default"));
        assert!(l
            .note
            .unwrap()
            .contains("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=\"lots\""));

        let mut f = Fixture::new();
        f.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");
        let l = f.limit(CC, 1_000_000, None);
        assert_eq!(l.tokens, 167_000);
        assert_eq!(l.source, "env:CLAUDE_CODE_AUTO_COMPACT_WINDOW");
        f.set("DISABLE_AUTO_COMPACT", "1");
        assert_eq!(
            f.limit(CC, 200_000, None),
            Limit::new(200_000, "env:DISABLE_AUTO_COMPACT")
        );
    }

    #[test]
    fn codex_defaults_to_nine_tenths_of_the_configured_window() {
        let f = Fixture::new();
        // No config: the rollout's 190,000 is 95 % of 200,000.
        assert_eq!(
            f.limit(CODEX, 190_000, None),
            Limit::new(180_000, "default")
        );
        assert_eq!(f.limit(CODEX, 258_400, None).tokens, 244_800);
        f.write(
            true,
            ".codex/config.toml",
            "model_context_window = 200000\n",
        );
        assert_eq!(f.limit(CODEX, 190_000, None).tokens, 180_000);
    }

    #[test]
    fn codex_reads_its_config_profile_and_project() {
        let mut f = Fixture::new();
        f.write(
            true,
            ".codex/config.toml",
            "model_context_window = 200_000\nmodel_auto_compact_token_limit = 120_000\n",
        );
        let l = f.limit(CODEX, 190_000, None);
        assert_eq!(l.tokens, 120_000);
        assert_eq!(l.source, "config:~/.codex/config.toml");
        // The active profile wins; the project's file wins over the user's.
        f.write(
            true,
            ".codex/config.toml",
            "profile = \"lean\"\nmodel_auto_compact_token_limit = 120000\n[profiles.lean]\nmodel_auto_compact_token_limit = 100000\n",
        );
        assert_eq!(f.limit(CODEX, 190_000, None).tokens, 100_000);
        f.write(
            false,
            ".codex/config.toml",
            "model_auto_compact_token_limit = 90000\n",
        );
        assert_eq!(f.limit(CODEX, 190_000, None).tokens, 90_000);
        // $CODEX_HOME replaces ~/.codex.
        let other = tempfile::tempdir().unwrap();
        std::fs::write(
            other.path().join("config.toml"),
            "model_auto_compact_token_limit = 150000\n",
        )
        .unwrap();
        std::fs::remove_file(f.project.path().join(".codex/config.toml")).unwrap();
        f.set("CODEX_HOME", &other.path().display().to_string());
        let l = f.limit(CODEX, 190_000, None);
        assert_eq!(l.tokens, 150_000);
        assert!(l.source.ends_with("config.toml"), "{}", l.source);
        // A limit above the default: Codex keeps its default.
        std::fs::write(
            other.path().join("config.toml"),
            "model_auto_compact_token_limit = 185000\n",
        )
        .unwrap();
        let l = f.limit(CODEX, 190_000, None);
        assert_eq!((l.tokens, l.source.as_str()), (180_000, "default"));
        assert!(l.note.unwrap().contains("above Codex's default"));
    }

    #[test]
    fn a_malformed_codex_config_falls_back_to_the_default_with_the_reason() {
        let f = Fixture::new();
        f.write(
            true,
            ".codex/config.toml",
            "model_auto_compact_token_limit = [oops\n",
        );
        let l = f.limit(CODEX, 190_000, None);
        assert_eq!((l.tokens, l.source.as_str()), (180_000, "default"));
        let note = l.note.unwrap();
        assert!(
            note.starts_with("~/.codex/config.toml: not valid TOML"),
            "{note}"
        );
        f.write(
            true,
            ".codex/config.toml",
            "model_auto_compact_token_limit = \"lots\"\n",
        );
        let l = f.limit(CODEX, 190_000, None);
        assert_eq!(l.tokens, 180_000);
        assert!(l.note.unwrap().contains("is a string, not an integer"));
    }

    #[test]
    fn gemini_compresses_at_half_the_window_unless_its_settings_say() {
        let f = Fixture::new();
        assert_eq!(
            f.limit(GEMINI, 1_048_576, None),
            Limit::new(524_288, "default")
        );
        f.write(
            true,
            ".gemini/settings.json",
            "{\n  // comments are allowed\n  \"model\": {\"compressionThreshold\": 0.3}\n}\n",
        );
        let l = f.limit(GEMINI, 1_048_576, None);
        assert_eq!(l.tokens, 314_572);
        assert_eq!(l.source, "config:~/.gemini/settings.json");
        f.write(
            false,
            ".gemini/settings.json",
            r#"{"model": {"compressionThreshold": 0.7}, "x": "http://a//b /* no */"}"#,
        );
        let l = f.limit(GEMINI, 1_048_576, None);
        assert_eq!(l.tokens, 734_003, "the project's settings win");
        assert!(l.source.ends_with(".gemini/settings.json"));
    }

    #[test]
    fn a_malformed_gemini_setting_falls_back_to_the_default_with_the_reason() {
        let f = Fixture::new();
        f.write(true, ".gemini/settings.json", "{\"model\": ");
        let l = f.limit(GEMINI, 1_048_576, None);
        assert_eq!((l.tokens, l.source.as_str()), (524_288, "default"));
        assert!(l
            .note
            .unwrap()
            .starts_with("~/.gemini/settings.json: not valid JSON"));
        f.write(
            true,
            ".gemini/settings.json",
            r#"{"model": {"compressionThreshold": 5}}"#,
        );
        let l = f.limit(GEMINI, 1_048_576, None);
        assert_eq!(l.tokens, 524_288);
        assert!(l.note.unwrap().contains("not a fraction"));
    }

    #[test]
    fn the_front_matter_overrides_every_agent_and_manual_sources_use_the_window() {
        let mut f = Fixture::new();
        f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50");
        let front = "claude-code: 150000\ncodex: \"80%\"\ngemini: 400000\n";
        assert_eq!(
            f.limit(CC, 200_000, Some(front)),
            Limit::new(150_000, "front-matter")
        );
        assert_eq!(f.limit(CODEX, 190_000, Some(front)).tokens, 152_000);
        assert_eq!(f.limit(GEMINI, 1_048_576, Some(front)).tokens, 400_000);
        assert_eq!(f.limit(None, 200_000, None), Limit::window(200_000));
        assert_eq!(f.limit(None, 200_000, Some(front)), Limit::window(200_000));
        let l = f.limit(None, 200_000, Some("default: \"90%\""));
        assert_eq!(l, Limit::new(180_000, "front-matter"));
        // Never above the window.
        assert_eq!(f.limit(CC, 200_000, Some("claude: 900000")).tokens, 200_000);
    }

    #[test]
    fn front_matter_limits_are_checked() {
        for bad in [
            "codex: 0",
            "codex: \"120\"",
            "codex: \"0%\"",
            "codex: \"101%\"",
            "codex: -5",
        ] {
            assert!(
                serde_yaml::from_str::<CompactionConfig>(bad).is_err(),
                "{bad} should be refused"
            );
        }
        let c: CompactionConfig =
            serde_yaml::from_str("stages: window\ngemini: \"45.5%\"").unwrap();
        assert_eq!(c.stages, Some(StagesAgainst::Window));
        assert_eq!(c.gemini, Some(LimitSpec::Percent(45.5)));
    }
}
