//! Where each agent compacts on its own: the usable limit of a session, in
//! tokens, and where that token count comes from. Stages are measured against it
//! by default, so that every stage can fire before the agent compacts.
//!
//! * Each agent: its own rule, from its configuration (`src/agents/<agent>/compaction.rs`).
//! * No agent (`track --tokens`, `--add`, `--count`): the window.
//!
//! The front matter's `compaction:` overrides any of these. A configuration
//! file that cannot be read or parsed never fails a hook: the agent's
//! default is used and the reason kept in [`Limit::note`]. Nothing is cached:
//! the files are small and read only when the session's agent is known.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

/// Agent configuration files larger than this are not read.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A session's usable limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// Tokens at which the agent compacts on its own (at most the window).
    pub tokens: u64,
    /// Where the token count comes from: `window`, `front-matter`, `default`
    /// (the agent's own default), `env:NAME[+NAME]`, or `config:PATH`.
    pub source: String,
    /// Why a configured value was not used (a file that does not parse, an
    /// environment value the agent ignores), when one was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Limit {
    pub fn new(tokens: u64, source: impl Into<String>) -> Limit {
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
    /// Sessions no agent wrote (`track --tokens`, `--add`, `--count`).
    pub default: Option<LimitSpec>,
    /// `limit` (default) or `window`.
    pub stages: Option<StagesAgainst>,
    /// Each agent's limit, under its name or one of its aliases
    /// (`claude-code`, `claude`, `codex`, `gemini`, …).
    #[serde(flatten)]
    pub agents: BTreeMap<String, LimitSpec>,
}

impl CompactionConfig {
    /// The limit given for the first of `names` (an agent's name and aliases) that has one.
    pub fn for_names(&self, names: &[&str]) -> Option<LimitSpec> {
        names.iter().find_map(|n| self.agents.get(*n).copied())
    }
}

/// A session's limit: the front matter's for the agent named by `names`
/// (or its `default` without an agent), else `agent_default(window)`,
/// within 1 and the window.
pub fn limit_with(
    window: u64,
    front: Option<&CompactionConfig>,
    names: &[&str],
    agent_default: &dyn Fn(u64) -> Limit,
) -> Limit {
    let window = window.max(1);
    let given = front.and_then(|f| match names {
        [] => f.default,
        names => f.for_names(names),
    });
    let mut limit = match given {
        Some(spec) => Limit::new(spec.resolve(window), "front-matter"),
        None => agent_default(window),
    };
    limit.tokens = limit.tokens.clamp(1, window);
    limit
}

/// Automatic compactions kept per agent and model: the limit is their median.
pub const LEARNED_KEPT: usize = 5;
/// `compactions.json` is small; anything bigger is not ours.
const MAX_LEARNED_BYTES: u64 = 256 * 1024;

/// Where each agent was seen compacting on its own (`.ctxkeep/compactions.json`):
/// agent id → model (`*` when unknown) → the context sizes at its last
/// automatic compactions under load, oldest first, each the agent's own
/// token count (`preTokens`, the last usage before Codex's `compacted`). Manual
/// and idle ones, and one forced by a model switch, are not recorded: they
/// say nothing about where the agent compacts under load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Learned(pub BTreeMap<String, BTreeMap<String, Vec<u64>>>);

impl Learned {
    /// The file's content; an absent, unreadable or damaged file is empty
    /// (what was learned can be learned again).
    pub fn load(path: &Path) -> Learned {
        crate::system::fsutil::read_text(path, MAX_LEARNED_BYTES)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Records an automatic compaction at `tokens` (the caller holds the lock).
    pub fn record(
        path: &Path,
        agent: &str,
        model: Option<&str>,
        tokens: u64,
    ) -> Result<(), crate::system::error::Error> {
        let mut learned = Learned::load(path);
        learned.add(agent, model, tokens);
        let text = serde_json::to_string_pretty(&learned).expect("plain data serializes");
        crate::system::fsutil::replace_cache(path, format!("{text}\n").as_bytes())
    }

    /// Adds an automatic compaction at `tokens` (in memory; [`Learned::record`] keeps it), the
    /// last [`LEARNED_KEPT`] kept.
    pub fn add(&mut self, agent: &str, model: Option<&str>, tokens: u64) {
        let seen = self
            .0
            .entry(agent.to_string())
            .or_default()
            .entry(model.unwrap_or("*").to_string())
            .or_default();
        seen.push(tokens);
        let excess = seen.len().saturating_sub(LEARNED_KEPT);
        seen.drain(..excess);
    }

    /// [`Learned::point`] and how many compactions it is the median of.
    pub fn seen(&self, agent: &str, model: Option<&str>) -> LearnedPoint {
        LearnedPoint {
            point: self.point(agent, model),
            count: self
                .0
                .get(agent)
                .and_then(|m| m.get(model.unwrap_or("*")))
                .map_or(0, Vec::len),
        }
    }

    /// The observed point for `agent` and `model`: the median of the last
    /// automatic compactions (robust to one odd one), None before the first.
    pub fn point(&self, agent: &str, model: Option<&str>) -> Option<u64> {
        let seen = self.0.get(agent)?.get(model.unwrap_or("*"))?;
        let mut sorted = seen.clone();
        crate::system::sorting::sort(&mut sorted);
        sorted.get(sorted.len() / 2).copied()
    }
}

/// Where an agent was seen compacting with a model, and from how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LearnedPoint {
    pub point: Option<u64>,
    pub count: usize,
}

pub fn home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// A `home`-relative path as `~/…` (shorter, and the same on every machine).
pub fn show(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> String {
    match home(env).and_then(|h| path.strip_prefix(h).ok().map(Path::to_path_buf)) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

pub fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Reads a small configuration file: None when there is none, else its
/// text or why it cannot be read.
pub fn read_config(path: &Path) -> Option<Result<String, String>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(Err("not a regular file".into()));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Some(Err(format!("larger than {MAX_CONFIG_BYTES} bytes")));
    }
    Some(std::fs::read_to_string(path).map_err(|e| e.to_string()))
}

/// Hands each of `files` that is there, in order, to `each` as `parse` reads it; one that cannot
/// be read or parsed is noted (`PATH: why`, the path as [`show`] gives it) and skipped.
pub fn each_config<T>(
    files: &[PathBuf],
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
    parse: impl Fn(&str) -> Result<T, String>,
    mut each: impl FnMut(&Path, T, &mut Vec<String>),
) {
    for path in files {
        let parsed = match read_config(path) {
            None => continue,
            Some(Ok(text)) => parse(&text),
            Some(Err(e)) => Err(e),
        };
        match parsed {
            Ok(doc) => each(path, doc, notes),
            Err(why) => notes.push(format!("{}: {why}", show(path, env))),
        }
    }
}

/// A fraction of the window set in an agent's JSON settings (comments
/// allowed) at `pointer`, the last of `files` that sets a valid one winning:
/// the fraction, where it came from (`config:PATH` or `default`), and why a
/// file or value was not used.
pub fn fraction_setting(
    files: &[PathBuf],
    pointer: &str,
    default: f64,
    env: &dyn Fn(&str) -> Option<String>,
) -> (f64, String, Vec<String>) {
    let key = pointer.trim_start_matches('/').replace('/', ".");
    let mut notes = Vec::new();
    let mut found: Option<(f64, String)> = None;
    let parse = |text: &str| {
        serde_json::from_str::<serde_json::Value>(&strip_json_comments(text))
            .map_err(|e| format!("not valid JSON ({e})"))
    };
    each_config(files, env, &mut notes, parse, |path, value, notes| {
        if let Some(v) = value.pointer(pointer) {
            match v.as_f64() {
                Some(t) if t > 0.0 && t <= 1.0 => found = Some((t, show(path, env))),
                _ => notes.push(format!(
                    "{}: {key} {v} is not a fraction in (0, 1]; the default {default} is used",
                    show(path, env)
                )),
            }
        }
    });
    let (t, source) = match found {
        Some((t, path)) => (t, format!("config:{path}")),
        None => (default, "default".to_string()),
    };
    (t, source, notes)
}

/// Removes `//` and `/* */` comments outside strings (Gemini's settings
/// files are JSON with comments).
pub fn strip_json_comments(text: &str) -> String {
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

#[cfg(test)]
mod learned_tests {
    use super::*;

    /// Claude Code 2.1.39's automatic compactions on a 200k window in the spotter sessions
    /// (`preTokens`, as ../shared/FORMATS.md lists them), and its derived limit.
    const SEEN: [u64; 4] = [167_094, 167_117, 167_731, 170_251];
    const DERIVED: u64 = 167_000;

    #[test]
    fn the_point_is_the_median_of_the_last_five_per_agent_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("compactions.json");
        assert_eq!(Learned::load(&path).point("claude-code", None), None);
        for tokens in [170_000, 100, 160_000, 165_000, 166_000, 167_000] {
            Learned::record(&path, "claude-code", Some("opus"), tokens).unwrap();
        }
        let learned = Learned::load(&path);
        // The first one fell out; one odd reading does not move the median.
        assert_eq!(learned.0["claude-code"]["opus"].len(), LEARNED_KEPT);
        assert_eq!(learned.point("claude-code", Some("opus")), Some(165_000));
        assert_eq!(learned.point("claude-code", Some("sonnet")), None);
        assert_eq!(learned.point("codex", Some("opus")), None);
    }

    /// The calibration error: after each compaction, the observed point against where the
    /// next one really came, beside the derived limit's error (docs/agents.md gives the results).
    #[test]
    fn the_observed_point_predicts_the_next_compaction_better_than_the_derived_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("compactions.json");
        let mut observed = Vec::new();
        let mut derived = Vec::new();
        for pair in SEEN.windows(2) {
            Learned::record(&path, "claude-code", Some("claude-opus-4-6"), pair[0]).unwrap();
            let point = Learned::load(&path)
                .point("claude-code", Some("claude-opus-4-6"))
                .unwrap();
            observed.push(point.abs_diff(pair[1]));
            derived.push(DERIVED.abs_diff(pair[1]));
        }
        assert_eq!(observed, vec![23, 614, 3_134]);
        assert_eq!(derived, vec![117, 731, 3_251]);
        assert!(observed.iter().zip(&derived).all(|(o, d)| o < d));
    }
}
