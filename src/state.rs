//! `project-state.md`: split the front matter from the body, parse it, and
//! write ctxkeep's own keys back without touching anything else.
//!
//! The only user of serde_yaml. Writes edit ctxkeep's top-level keys as text
//! and copy the body as bytes, because a YAML round-trip drops comments and
//! rewrites values (`1.10` becomes `1.1`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_yaml::{Mapping, Value};

use crate::checkpoint::{Checkpoint, HistoryEntry};
use crate::error::Error;

pub const FORMAT_VERSION: u64 = 1;
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
pub const MAX_FRONT_MATTER_BYTES: usize = 64 * 1024;
pub const MAX_DEPTH: usize = 64;
pub const BEGIN_MARKER: &str = "<!-- ctxkeep:begin -->";
pub const END_MARKER: &str = "<!-- ctxkeep:end -->";

/// The top-level keys of `FrontMatter`; `verify --strict` warns about others.
pub const KNOWN_KEYS: [&str; 12] = [
    "ctxkeep",
    "model",
    "window",
    "encoding",
    "stages",
    "templates",
    "retention",
    "resume_max_tokens",
    "models",
    "max_handoffs_without_progress",
    "checkpoint",
    "history",
];

/// The keys ctxkeep reads; everything else in the front matter is the user's.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FrontMatter {
    /// Format version; 1 today.
    pub ctxkeep: Option<u64>,
    pub model: Option<String>,
    pub window: Option<u64>,
    pub encoding: Option<String>,
    pub stages: Option<Vec<Stage>>,
    /// Folder (relative to the state file) whose templates override the defaults.
    pub templates: Option<String>,
    pub retention: Option<Retention>,
    /// Token budget for `resume` and the size check of `verify`.
    pub resume_max_tokens: Option<usize>,
    /// Per-model overrides of the model table: name -> {window, encoding}.
    pub models: Option<BTreeMap<String, crate::models::ModelOverride>>,
    /// `resume` refuses (exit 1) once more handoffs than this in a row
    /// resumed the same next action with no new commit (unset: never).
    pub max_handoffs_without_progress: Option<u32>,
    pub checkpoint: Option<Checkpoint>,
    pub history: Option<Vec<HistoryEntry>>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct Retention {
    /// Archived checkpoint records kept in .ctxkeep/checkpoints (default 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<usize>,
    /// Archived records older than this many days are removed (default: no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub days: Option<u64>,
    /// `.ctxkeep/events.jsonl` is rotated to `events.jsonl.1` past this size (default 1 MiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events_max_bytes: Option<u64>,
    /// Session records kept in `.ctxkeep/chain.jsonl` (default 500).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageAction {
    Warn,
    Checkpoint,
    Handoff,
}

impl std::fmt::Display for StageAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StageAction::Warn => "warn",
            StageAction::Checkpoint => "checkpoint",
            StageAction::Handoff => "handoff",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Stage {
    /// Percent of the window at which the stage fires.
    #[serde(serialize_with = "whole_as_integer")]
    pub at: f64,
    pub action: StageAction,
    /// Name used as the checkpoint trigger; default `stage-<at>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Writes 80.0 as `80`, so the config reads as the user wrote it.
pub(crate) fn whole_as_integer<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        s.serialize_i64(*x as i64)
    } else {
        s.serialize_f64(*x)
    }
}

impl Stage {
    pub fn name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("stage-{}", crate::output::fmt_num(self.at)))
    }
}

pub const DEFAULT_STAGES: &str = "80:warn,90:checkpoint,95:checkpoint,98:handoff";

/// Parses `PCT[:ACTION],...` (ACTION defaults to warn), sorted by percent.
pub fn parse_stages(spec: &str) -> Result<Vec<Stage>, Error> {
    let mut stages = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (pct, action) = item.split_once(':').unwrap_or((item, "warn"));
        let at: f64 = pct
            .trim()
            .trim_end_matches('%')
            .parse()
            .ok()
            .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "--stages: '{item}': the percent must be a number in (0, 100]"
                ))
            })?;
        let action = match action.trim() {
            "warn" => StageAction::Warn,
            "checkpoint" => StageAction::Checkpoint,
            "handoff" => StageAction::Handoff,
            other => {
                return Err(Error::Usage(format!(
                    "--stages: '{item}': unknown action '{other}' (use warn, checkpoint or handoff)"
                )))
            }
        };
        if stages.iter().any(|s: &Stage| s.at == at) {
            return Err(Error::Usage(format!("--stages: {pct}% is given twice")));
        }
        stages.push(Stage {
            at,
            action,
            name: None,
        });
    }
    if stages.is_empty() {
        return Err(Error::Usage(
            "--stages: give at least one PCT[:ACTION]".into(),
        ));
    }
    stages.sort_by(|a, b| a.at.total_cmp(&b.at));
    Ok(stages)
}

/// A parsed `project-state.md`, able to write itself back.
#[derive(Debug, Clone)]
pub struct StateFile {
    pub path: PathBuf,
    /// The exact text read, to detect an editor's save during a write.
    pub original: String,
    bom: bool,
    newline: &'static str,
    /// `None` when the file has no front matter (it is all body).
    front: Option<Front>,
    /// The exact text after the closing delimiter: the user's, byte for byte.
    pub body: String,
    pub mapping: Mapping,
    pub fm: FrontMatter,
}

#[derive(Debug, Clone)]
struct Front {
    open: String,
    text: String,
    close: String,
    /// 1-based file line where the front matter text starts.
    first_line: usize,
}

impl StateFile {
    /// Reads and parses the file. Any defect is a one-line error naming it.
    pub fn load(path: &Path) -> Result<StateFile, Error> {
        let text = crate::fsutil::read_text(path, MAX_FILE_BYTES).map_err(|e| match e {
            Error::NoInput { path, msg } if msg == "no such file" => Error::NoInput {
                path,
                msg: "not initialized; run `ctxkeep init`".into(),
            },
            other => other,
        })?;
        Self::parse(path, text)
    }

    pub fn parse(path: &Path, text: String) -> Result<StateFile, Error> {
        let (bom, rest) = match text.strip_prefix('\u{feff}') {
            Some(r) => (true, r),
            None => (false, text.as_str()),
        };
        let first_end = rest.find('\n').map(|i| i + 1).unwrap_or(rest.len());
        let newline = if rest[..first_end].ends_with("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        let (front, body) = split(path, rest)?;
        let (mapping, fm) = match &front {
            Some(f) => parse_front(path, &f.text, f.first_line)?,
            None => (Mapping::new(), FrontMatter::default()),
        };
        let body = body.to_string();
        Ok(StateFile {
            path: path.to_path_buf(),
            original: text.clone(),
            bom,
            newline,
            front,
            body,
            mapping,
            fm,
        })
    }

    /// True when the file carries ctxkeep's front matter.
    pub fn is_initialized(&self) -> bool {
        self.fm.ctxkeep.is_some()
    }

    /// Fails unless the file is a ctxkeep state file of a supported version.
    pub fn require_initialized(&self) -> Result<(), Error> {
        match self.fm.ctxkeep {
            None => Err(Error::no_input(
                &self.path,
                "no ctxkeep front matter; run `ctxkeep init`",
            )),
            Some(FORMAT_VERSION) => Ok(()),
            Some(v) => Err(Error::data(
                &self.path,
                format!("format version {v} is not supported (this ctxkeep reads version {FORMAT_VERSION}); upgrade ctxkeep"),
            )),
        }
    }

    /// The file line (1-based) where a top-level key starts, for findings.
    pub fn key_line(&self, key: &str) -> Option<usize> {
        let f = self.front.as_ref()?;
        find_key_block(&f.text, key)
            .map(|(start, _)| f.first_line + f.text[..start].matches('\n').count())
    }

    /// The file line of a nested key under a top-level key (e.g. checkpoint.phase).
    pub fn nested_key_line(&self, top: &str, key: &str) -> Option<usize> {
        let f = self.front.as_ref()?;
        let (start, end) = find_key_block(&f.text, top)?;
        let block = &f.text[start..end];
        let first = f.first_line + f.text[..start].matches('\n').count();
        block.split_inclusive('\n').enumerate().find_map(|(i, l)| {
            let t = l.trim_start();
            (l.len() > t.len() && t.starts_with(key) && t[key.len()..].starts_with(':'))
                .then_some(first + i)
        })
    }

    /// Sets ctxkeep-owned top-level keys (a `None` value removes the key), in
    /// the text, leaving every other byte as it was. Verified by re-parsing.
    pub fn set_keys(&mut self, updates: &[(&str, Option<serde_json::Value>)]) -> Result<(), Error> {
        let mut text = self
            .front
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
        for (key, value) in updates {
            let block = value.as_ref().map(|v| emit_key(key, v, self.newline));
            text = replace_key_block(&text, key, block.as_deref(), self.newline);
        }
        let first_line = self.front.as_ref().map(|f| f.first_line).unwrap_or(2);
        let (mapping, fm) = parse_front(&self.path, &text, first_line).map_err(|e| {
            Error::data(
                &self.path,
                format!("could not update the front matter in place ({e}); nothing was written"),
            )
        })?;
        // Every key we did not set must read back exactly as before.
        for (k, v) in &self.mapping {
            let ours = k
                .as_str()
                .is_some_and(|k| updates.iter().any(|(u, _)| *u == k));
            if !ours && mapping.get(k) != Some(v) {
                return Err(Error::data(
                    &self.path,
                    format!(
                        "could not update the front matter without changing key {:?}; nothing was written",
                        k.as_str().unwrap_or("?")
                    ),
                ));
            }
        }
        let front = self.front.get_or_insert_with(|| Front {
            open: format!("---{}", self.newline),
            text: String::new(),
            close: format!("---{}", self.newline),
            first_line: 2,
        });
        front.text = text;
        self.mapping = mapping;
        self.fm = fm;
        Ok(())
    }

    /// Replaces what is between the ctxkeep markers in the body (appending a
    /// marked block when there is none). Nothing outside the markers changes.
    pub fn set_managed_block(&mut self, content: &str) -> Result<(), Error> {
        let nl = self.newline;
        let content = escape_marker_lines(&normalize_newlines(content, nl));
        let content = if content.is_empty() || content.ends_with(nl) {
            content
        } else {
            format!("{content}{nl}")
        };
        match managed_block_range(&self.body) {
            Ok(Some((start, end))) => {
                self.body.replace_range(start..end, &content);
            }
            Ok(None) => {
                // A closer at the end of the file may lack its newline; the
                // block must not be glued to it (`---<!-- ...`).
                if let Some(front) = self.front.as_mut().filter(|f| !f.close.ends_with('\n')) {
                    front.close.push_str(nl);
                }
                if !self.body.is_empty() && !self.body.ends_with('\n') {
                    self.body.push_str(nl);
                }
                if !self.body.is_empty() {
                    self.body.push_str(nl);
                }
                self.body
                    .push_str(&format!("{BEGIN_MARKER}{nl}{content}{END_MARKER}{nl}"));
            }
            Err(line) => {
                return Err(Error::data(
                    &self.path,
                    format!("{BEGIN_MARKER} at body line {line} has no {END_MARKER} after it; add one or remove the marker"),
                ))
            }
        }
        // A closer at the very end of the file has no newline; the body now
        // following it must start on its own line or the closer is lost.
        if let Some(f) = &mut self.front {
            if !self.body.is_empty() && !f.close.ends_with('\n') {
                f.close.push_str(nl);
            }
        }
        Ok(())
    }

    /// The managed block's current content, if any.
    pub fn managed_block(&self) -> Option<&str> {
        match managed_block_range(&self.body) {
            Ok(Some((s, e))) => Some(&self.body[s..e]),
            _ => None,
        }
    }

    /// The whole file as it would be written now.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.original.len() + 256);
        if self.bom {
            out.push('\u{feff}');
        }
        if let Some(f) = &self.front {
            out.push_str(&f.open);
            out.push_str(&f.text);
            out.push_str(&f.close);
        }
        out.push_str(&self.body);
        out
    }

    /// Writes the file atomically if it changed; refuses if someone else
    /// changed it since it was read. Returns whether anything was written.
    pub fn save(&mut self) -> Result<bool, Error> {
        let new = self.render();
        if new == self.original {
            return Ok(false);
        }
        crate::fsutil::atomic_write(&self.path, new.as_bytes(), Some(self.original.as_bytes()))?;
        self.original = new;
        Ok(true)
    }

    pub fn newline(&self) -> &'static str {
        self.newline
    }
}

/// Splits the text (BOM already removed) into front matter and body.
fn split<'a>(path: &Path, text: &'a str) -> Result<(Option<Front>, &'a str), Error> {
    let first_end = match text.find('\n') {
        Some(i) => i + 1,
        None => return Ok((None, text)),
    };
    let first = &text[..first_end];
    if first
        .trim_end_matches(['\n', '\r'])
        .trim_end_matches([' ', '\t'])
        != "---"
    {
        return Ok((None, text));
    }
    let mut pos = first_end;
    let mut line_no = 2;
    while pos < text.len() {
        let end = text[pos..]
            .find('\n')
            .map(|i| pos + i + 1)
            .unwrap_or(text.len());
        let line = &text[pos..end];
        let bare = line
            .trim_end_matches(['\n', '\r'])
            .trim_end_matches([' ', '\t']);
        if bare == "---" || bare == "..." {
            let front_text = &text[first_end..pos];
            if front_text.len() > MAX_FRONT_MATTER_BYTES {
                return Err(Error::data(
                    path,
                    format!(
                        "front matter too large ({} bytes, limit {MAX_FRONT_MATTER_BYTES})",
                        front_text.len()
                    ),
                ));
            }
            return Ok((
                Some(Front {
                    open: first.to_string(),
                    text: front_text.to_string(),
                    close: line.to_string(),
                    first_line: 2,
                }),
                &text[end..],
            ));
        }
        pos = end;
        line_no += 1;
    }
    let _ = line_no;
    Err(Error::data(
        path,
        "front matter opened at line 1 is not closed (add a line `---` after it)",
    ))
}

/// Rejects nesting deeper than MAX_DEPTH before the YAML parser sees it:
/// libyaml-based parsing is quadratic in depth.
fn check_depth(path: &Path, text: &str, first_line: usize) -> Result<(), Error> {
    let mut indents: Vec<usize> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        while indents.last().is_some_and(|&l| l >= indent) {
            indents.pop();
        }
        indents.push(indent);
        // Flow collections and "- - -" sequences nest on one line.
        let mut depth = indents.len();
        let mut flow = 0usize;
        let mut max_flow = 0usize;
        let mut quote: Option<char> = None;
        let mut dashes = trimmed;
        while let Some(r) = dashes.strip_prefix("- ") {
            depth += 1;
            dashes = r.trim_start();
        }
        for c in trimmed.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '[' | '{') => {
                    flow += 1;
                    max_flow = max_flow.max(flow);
                }
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                (None, '#') => break,
                _ => {}
            }
        }
        if depth + max_flow > MAX_DEPTH {
            return Err(Error::data(
                path,
                format!(
                    "front matter nested too deeply at line {} (limit {MAX_DEPTH})",
                    first_line + i
                ),
            ));
        }
    }
    Ok(())
}

fn parse_front(
    path: &Path,
    text: &str,
    first_line: usize,
) -> Result<(Mapping, FrontMatter), Error> {
    check_depth(path, text, first_line)?;
    if text.trim().is_empty() {
        return Ok((Mapping::new(), FrontMatter::default()));
    }
    let value: Value = serde_yaml::from_str(text).map_err(|e| {
        duplicate_key_error(path, text, first_line, &e)
            .unwrap_or_else(|| yaml_error(path, &e, first_line, "front matter"))
    })?;
    if !matches!(value, Value::Mapping(_) | Value::Null) {
        return Err(Error::data(
            path,
            "front matter must be a mapping of keys to values",
        ));
    }
    // From the parsed value rather than the text again: scanning the YAML is
    // most of a checkpoint's own time. Only a failure re-reads the text, for
    // an error that names the line.
    let fm: FrontMatter = match FrontMatter::deserialize(&value) {
        Ok(fm) => fm,
        Err(_) => serde_yaml::from_str(text)
            .map_err(|e| yaml_error(path, &e, first_line, "front matter"))?,
    };
    let mapping = match value {
        Value::Mapping(m) => m,
        _ => Mapping::new(),
    };
    Ok((mapping, fm))
}

/// serde_yaml places a duplicate key at the start of its mapping; name the
/// line of the repeat instead, found by scanning block-style keys.
fn duplicate_key_error(
    path: &Path,
    text: &str,
    first_line: usize,
    e: &serde_yaml::Error,
) -> Option<Error> {
    let msg = e.to_string();
    let at = msg.find("duplicate entry with key ")?;
    let key = msg[at + "duplicate entry with key ".len()..]
        .split(" at line ")
        .next()?
        .trim_matches('"')
        .to_string();
    // One set of keys per open mapping, keyed by its indentation.
    let mut open: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut indent = line.len() - trimmed.len();
        let mut rest = trimmed;
        if let Some(r) = rest.strip_prefix("- ") {
            // A sequence item opens a fresh mapping one level in.
            let r2 = r.trim_start_matches(' ');
            indent += 2 + (r.len() - r2.len());
            rest = r2;
            open.retain(|(l, _)| *l < indent);
            open.push((indent, Vec::new()));
        }
        let Some((k, _)) = rest.split_once(':') else {
            continue;
        };
        let k = k.trim().trim_matches(['"', '\'']).to_string();
        open.retain(|(l, _)| *l <= indent);
        if open.last().is_none_or(|(l, _)| *l != indent) {
            open.push((indent, Vec::new()));
        }
        let keys = &mut open.last_mut()?.1;
        if keys.contains(&k) && k == key {
            return Some(Error::data(
                path,
                format!(
                    "front matter: duplicate key {key:?} at line {} (each key may appear once)",
                    first_line + i
                ),
            ));
        }
        keys.push(k);
    }
    None
}

fn yaml_error(path: &Path, e: &serde_yaml::Error, first_line: usize, what: &str) -> Error {
    let mut msg = e.to_string();
    if msg.contains("repetition limit exceeded") {
        msg = "too many alias expansions (an alias bomb?); remove the `*` aliases".into();
    }
    // serde_yaml counts lines from the start of the front matter; name the file's.
    if let Some(i) = msg.find(" at line ") {
        msg.truncate(i);
    }
    match e.location() {
        Some(loc) => Error::data(
            path,
            format!(
                "{what}: {msg} at line {} column {}",
                loc.line() + first_line - 1,
                loc.column()
            ),
        ),
        None => Error::data(path, format!("{what}: {msg}")),
    }
}

/// Parses a YAML or JSON document given by the user (e.g. `checkpoint --from`).
pub fn parse_user_yaml<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
) -> Result<T, Error> {
    if text.len() > MAX_FRONT_MATTER_BYTES * 4 {
        return Err(Error::data(path, "input too large (limit 256 KiB)"));
    }
    check_depth(path, text, 1)?;
    // Parse untyped first so duplicate keys and aliases are rejected with a line.
    let _: Value = serde_yaml::from_str(text).map_err(|e| yaml_error(path, &e, 1, "input"))?;
    serde_yaml::from_str(text).map_err(|e| yaml_error(path, &e, 1, "input"))
}

/// The byte range of a top-level key's block: from `key:` at column 0 to the
/// next line that starts at column 0 (trailing blank lines excluded).
fn find_key_block(text: &str, key: &str) -> Option<(usize, usize)> {
    let mut pos = 0;
    let mut start = None;
    let mut last_content_end = 0;
    for line in text.split_inclusive('\n') {
        let line_start = pos;
        pos += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        let column0 = !bare.is_empty() && !bare.starts_with([' ', '\t']);
        match start {
            None => {
                if bare.starts_with(key)
                    && bare[key.len()..].starts_with(':')
                    && (bare.len() == key.len() + 1
                        || bare[key.len() + 1..].starts_with([' ', '\t']))
                {
                    start = Some(line_start);
                    last_content_end = pos;
                }
            }
            Some(s) => {
                if column0 {
                    return Some((s, last_content_end));
                }
                if !bare.trim().is_empty() {
                    last_content_end = pos;
                }
            }
        }
    }
    start.map(|s| (s, last_content_end))
}

fn replace_key_block(text: &str, key: &str, block: Option<&str>, nl: &str) -> String {
    match (find_key_block(text, key), block) {
        (Some((s, e)), Some(b)) => {
            let mut b = b.to_string();
            if e == text.len() && !text.ends_with('\n') {
                b = b.trim_end_matches(['\n', '\r']).to_string();
            }
            format!("{}{}{}", &text[..s], b, &text[e..])
        }
        (Some((s, e)), None) => format!("{}{}", &text[..s], &text[e..]),
        (None, Some(b)) => {
            let mut t = text.to_string();
            if !t.is_empty() && !t.ends_with('\n') {
                t.push_str(nl);
            }
            t.push_str(b);
            t
        }
        (None, None) => text.to_string(),
    }
}

fn managed_block_range(body: &str) -> Result<Option<(usize, usize)>, usize> {
    let mut pos = 0;
    let mut begin: Option<(usize, usize)> = None;
    for (i, line) in body.split_inclusive('\n').enumerate() {
        let bare = line.trim();
        match begin {
            None if bare == BEGIN_MARKER => begin = Some((pos + line.len(), i + 1)),
            Some((s, _)) if bare == END_MARKER => return Ok(Some((s, pos))),
            _ => {}
        }
        pos += line.len();
    }
    match begin {
        Some((_, line)) => Err(line),
        None => Ok(None),
    }
}

/// A marker line inside the content would end (or restart) the block early on
/// the next read, leaking the rest into the user's prose. Such lines are kept
/// visible as text: `&lt;!--` renders as `<!--` but is not a marker.
fn escape_marker_lines(content: &str) -> String {
    content
        .split_inclusive('\n')
        .map(|line| {
            let bare = line.trim();
            if bare == BEGIN_MARKER || bare == END_MARKER {
                line.replacen("<!--", "&lt;!--", 1)
            } else {
                line.to_string()
            }
        })
        .collect()
}

fn normalize_newlines(s: &str, nl: &str) -> String {
    let lf = s.replace("\r\n", "\n");
    if nl == "\n" {
        lf
    } else {
        lf.replace('\n', nl)
    }
}

/// Renders `key: value` as block YAML. Strings are quoted unless they are
/// plainly safe, so no YAML 1.1 reader turns `no` into false or `1.10` into 1.1.
pub fn emit_key(key: &str, value: &serde_json::Value, nl: &str) -> String {
    let mut out = String::new();
    out.push_str(key);
    out.push(':');
    emit_value(&mut out, value, 0);
    out.push('\n');
    normalize_newlines(&out, nl)
}

fn emit_value(out: &mut String, v: &serde_json::Value, indent: usize) {
    use serde_json::Value as J;
    match v {
        J::Object(m) if m.is_empty() => out.push_str(" {}"),
        J::Array(a) if a.is_empty() => out.push_str(" []"),
        J::Object(m) => {
            for (k, val) in m {
                out.push('\n');
                out.push_str(&" ".repeat(indent + 2));
                out.push_str(k);
                out.push(':');
                emit_value(out, val, indent + 2);
            }
        }
        J::Array(a) => {
            for item in a {
                out.push('\n');
                out.push_str(&" ".repeat(indent + 2));
                out.push('-');
                match item {
                    J::Object(m) if !m.is_empty() => {
                        if let Some(flow) = flow_mapping(m) {
                            out.push(' ');
                            out.push_str(&flow);
                        } else {
                            // First key on the dash line, the rest aligned under it.
                            let mut first = true;
                            for (k, val) in m {
                                if first {
                                    out.push(' ');
                                    first = false;
                                } else {
                                    out.push('\n');
                                    out.push_str(&" ".repeat(indent + 4));
                                }
                                out.push_str(k);
                                out.push(':');
                                emit_value(out, val, indent + 4);
                            }
                        }
                    }
                    _ => emit_value(out, item, indent + 2),
                }
            }
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar));
        }
    }
}

/// Small all-scalar mappings (stages) read best on one line.
fn flow_mapping(m: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    if m.len() > 3 || m.values().any(|v| v.is_object() || v.is_array()) {
        return None;
    }
    let parts: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}: {}", scalar_text(v)))
        .collect();
    let s = format!("{{{}}}", parts.join(", "));
    (s.len() <= 60).then_some(s)
}

fn scalar_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => quote_string(s),
        other => other.to_string(),
    }
}

pub fn quote_string(s: &str) -> String {
    let plain = s.len() <= 120
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Control, C1, line/paragraph separators and BOM: YAML would fold
            // or refuse them raw.
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') =>
            {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Result<StateFile, Error> {
        StateFile::parse(Path::new("project-state.md"), text.to_string())
    }

    #[test]
    fn no_front_matter_is_all_body() {
        let s = parse("# Notes\n----\nhello").unwrap();
        assert_eq!(s.body, "# Notes\n----\nhello");
        assert!(!s.is_initialized());
        let s = parse("--- x\nfoo\n").unwrap();
        assert_eq!(s.body, "--- x\nfoo\n");
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        let e = parse("---\nctxkeep: 1\nbody\n").unwrap_err();
        assert_eq!(e.exit_code(), 65);
        assert!(
            e.to_string().contains("opened at line 1 is not closed"),
            "{e}"
        );
    }

    #[test]
    fn closer_at_eof_and_empty_front_matter() {
        let s = parse("---\nctxkeep: 1\n---").unwrap();
        assert_eq!(s.fm.ctxkeep, Some(1));
        assert_eq!(s.body, "");
        let s = parse("---\n---\nbody").unwrap();
        assert_eq!(s.body, "body");
        let s = parse("---\nctxkeep: 1\n...\nbody").unwrap();
        assert_eq!(s.body, "body");
    }

    #[test]
    fn yaml_errors_name_the_file_line() {
        let e = parse("---\nctxkeep: 1\n\tmodel: x\n---\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3"), "{e}");
        let e = parse("---\nctxkeep: 1\nmodel: a\nmodel: b\n---\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("duplicate") && e.contains("model"), "{e}");
        let e = parse("---\n- a\n- b\n---\n").unwrap_err().to_string();
        assert!(e.contains("must be a mapping"), "{e}");
    }

    #[test]
    fn duplicate_keys_name_the_repeat_at_any_depth() {
        let e = parse("---\nctxkeep: 1\nteam:\n  - id: a\n    id: b\n---\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("duplicate key \"id\" at line 5"), "{e}");
        // The same key in two list items is no duplicate.
        parse("---\nctxkeep: 1\nteam:\n  - id: a\n  - id: b\n---\n").unwrap();
    }

    #[test]
    fn closer_without_newline_gets_one_when_a_block_follows() {
        let mut s = parse("---\r\nctxkeep: 1\r\n---").unwrap();
        s.set_managed_block("x").unwrap();
        let out = s.render();
        assert!(out.starts_with("---\r\nctxkeep: 1\r\n---\r\n<!-- ctxkeep:begin -->\r\n"));
        assert_eq!(parse(&out).unwrap().managed_block(), Some("x\r\n"));
    }

    #[test]
    fn ambiguous_scalars_read_as_strings() {
        let s = parse("---\nctxkeep: 1\nmodel: 1.10\nencoding: no\n---\n").unwrap();
        assert_eq!(s.fm.model.as_deref(), Some("1.10"));
        assert_eq!(s.fm.encoding.as_deref(), Some("no"));
    }

    #[test]
    fn deep_nesting_is_rejected_before_parsing() {
        let deep = format!(
            "---\na: {}{}\n---\n",
            "[".repeat(30_000),
            "]".repeat(30_000)
        );
        let e = parse(&deep).unwrap_err().to_string();
        assert!(e.contains("nested too deeply"), "{e}");
    }

    #[test]
    fn alias_bomb_is_rejected() {
        let mut y = String::from("---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        for i in 0..8u8 {
            let prev = (b'a' + i) as char;
            let next = (b'a' + i + 1) as char;
            y.push_str(&format!("{next}: &{next} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        }
        y.push_str("---\n");
        assert_eq!(parse(&y).unwrap_err().exit_code(), 65);
    }

    #[test]
    fn set_keys_keeps_comments_and_unknown_keys() {
        let text = "---\n# my comment\nctxkeep: 1\nowner: alice # inline\nmodel: old\nversion: 1.10\n---\nbody\n";
        let mut s = parse(text).unwrap();
        s.set_keys(&[
            ("model", Some(json!("claude-sonnet-4-5"))),
            ("window", Some(json!(200000))),
        ])
        .unwrap();
        let out = s.render();
        assert_eq!(
            out,
            "---\n# my comment\nctxkeep: 1\nowner: alice # inline\nmodel: claude-sonnet-4-5\nversion: 1.10\nwindow: 200000\n---\nbody\n"
        );
    }

    #[test]
    fn set_keys_replaces_nested_blocks_and_keeps_crlf() {
        let text = "---\r\nctxkeep: 1\r\nhistory:\r\n  - id: a\r\n    created_at: b\r\n\r\nuser: x\r\n---\r\nbody\r\n";
        let mut s = parse(text).unwrap();
        s.set_keys(&[(
            "history",
            Some(json!([{"id": "ckpt-0001", "created_at": "t", "phase": "no"}])),
        )])
        .unwrap();
        let out = s.render();
        assert_eq!(
            out,
            "---\r\nctxkeep: 1\r\nhistory:\r\n  - {id: ckpt-0001, created_at: t, phase: \"no\"}\r\n\r\nuser: x\r\n---\r\nbody\r\n"
        );
    }

    #[test]
    fn emitted_strings_read_back_exactly() {
        let tricky = [
            "no",
            "1.10",
            "0755",
            "- item",
            "a: b",
            "#x",
            "quote \" and \\",
            "line\nbreak",
            "\u{2028}sep\u{85}nel\u{7f}",
            "emoji 🎉",
            "  padded  ",
            "",
            "~",
            "@at",
            "`tick`",
        ];
        for t in tricky {
            let y = emit_key("k", &json!(t), "\n");
            let v: BTreeMap<String, String> = serde_yaml::from_str(&y).unwrap();
            assert_eq!(v["k"], t, "{y}");
        }
    }

    #[test]
    fn managed_block_is_replaced_and_prose_kept() {
        let text = "---\nctxkeep: 1\n---\n# Mine\n<!-- ctxkeep:begin -->\nold\n<!-- ctxkeep:end -->\nafter\n";
        let mut s = parse(text).unwrap();
        s.set_managed_block("new\nlines").unwrap();
        assert_eq!(
            s.body,
            "# Mine\n<!-- ctxkeep:begin -->\nnew\nlines\n<!-- ctxkeep:end -->\nafter\n"
        );
        let mut s = parse("---\nctxkeep: 1\n---\nno markers").unwrap();
        s.set_managed_block("x").unwrap();
        assert!(s
            .body
            .starts_with("no markers\n\n<!-- ctxkeep:begin -->\nx\n"));
        let mut s = parse("---\nctxkeep: 1\n---\n<!-- ctxkeep:begin -->\nx\n").unwrap();
        assert_eq!(s.set_managed_block("y").unwrap_err().exit_code(), 65);
    }

    #[test]
    fn managed_block_after_a_closer_without_newline_keeps_the_file_valid() {
        // Found by fuzzing (state_edit): the block was glued to the closer,
        // `---<!-- ctxkeep:begin -->`, and the file no longer parsed.
        let mut s = parse("---\nctxkeep: 1\n---").unwrap();
        s.set_managed_block("x").unwrap();
        let out = s.render();
        assert_eq!(
            out,
            "---\nctxkeep: 1\n---\n<!-- ctxkeep:begin -->\nx\n<!-- ctxkeep:end -->\n"
        );
        let again = parse(&out).unwrap();
        assert_eq!(again.fm.ctxkeep, Some(1));
        assert_eq!(again.managed_block(), Some("x\n"));
        let mut s = parse("---\r\nctxkeep: 1\r\n---").unwrap();
        s.set_managed_block("x").unwrap();
        assert!(s
            .render()
            .starts_with("---\r\nctxkeep: 1\r\n---\r\n<!-- ctxkeep:begin -->\r\n"));
    }

    #[test]
    fn marker_lines_inside_the_content_do_not_leak_into_the_prose() {
        // Found by fuzzing (state_edit): a checkpoint note holding an end
        // marker line closed the block early; the rest of the block then
        // read as user prose and was repeated after every checkpoint.
        let text = "---\nctxkeep: 1\n---\n# Mine\n<!-- ctxkeep:begin -->\nold\n<!-- ctxkeep:end -->\nafter\n";
        let note = "notes:\n  <!-- ctxkeep:end -->\ntail\n<!-- ctxkeep:begin -->\n";
        let mut s = parse(text).unwrap();
        s.set_managed_block(note).unwrap();
        let mut again = parse(&s.render()).unwrap();
        assert_eq!(
            again.managed_block(),
            Some("notes:\n  &lt;!-- ctxkeep:end -->\ntail\n&lt;!-- ctxkeep:begin -->\n")
        );
        assert!(again.body.starts_with("# Mine\n<!-- ctxkeep:begin -->\n"));
        assert!(again.body.ends_with("\n<!-- ctxkeep:end -->\nafter\n"));
        // A second checkpoint leaves the same file: nothing accumulates.
        let before = again.render();
        again.set_managed_block(note).unwrap();
        assert_eq!(again.render(), before);
        // A marker mentioned inside a line is ordinary text and kept as is.
        let mut s = parse(text).unwrap();
        s.set_managed_block("see <!-- ctxkeep:end --> here")
            .unwrap();
        assert_eq!(s.managed_block(), Some("see <!-- ctxkeep:end --> here\n"));
    }

    #[test]
    fn bom_is_kept() {
        let mut s = parse("\u{feff}---\nctxkeep: 1\n---\nbody").unwrap();
        s.set_keys(&[("model", Some(json!("m")))]).unwrap();
        assert!(s
            .render()
            .starts_with("\u{feff}---\nctxkeep: 1\nmodel: m\n---\nbody"));
    }

    #[test]
    fn stages_parse_and_sort() {
        let st = parse_stages("95:checkpoint, 80 ,98:handoff").unwrap();
        assert_eq!(
            st.iter().map(|s| s.at).collect::<Vec<_>>(),
            vec![80.0, 95.0, 98.0]
        );
        assert_eq!(st[0].action, StageAction::Warn);
        assert_eq!(st[0].name(), "stage-80");
        assert!(parse_stages("120").is_err());
        assert!(parse_stages("80:explode").is_err());
        assert!(parse_stages("80,80").is_err());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn body_survives_edits_byte_for_byte(body in "(\\PC|\r|\n|---|\u{feff}|\t)*") {
                let text = format!("---\nctxkeep: 1\n---\n{body}");
                let mut s = parse(&text).unwrap();
                prop_assert_eq!(&s.body, &body);
                s.set_keys(&[("model", Some(json!("x")))]).unwrap();
                let again = parse(&s.render()).unwrap();
                prop_assert_eq!(again.body, body);
            }

            #[test]
            fn arbitrary_text_never_panics(text in "(\\PC|\r|\n|---|\t|:|\\[|\\{|&|\\*)*") {
                let _ = parse(&text);
            }

            /// Bytes as `load` sees them: refused unless strict UTF-8
            /// without NUL, then parsed; never a panic.
            #[test]
            fn arbitrary_bytes_never_panic(
                chunks in proptest::collection::vec(
                    prop_oneof![
                        proptest::collection::vec(any::<u8>(), 0..16),
                        Just(b"---\n".to_vec()),
                        Just(b"---\r\n".to_vec()),
                        Just(b"\xef\xbb\xbf".to_vec()),
                        Just(b"ctxkeep: 1\n".to_vec()),
                        Just(b"checkpoint:\n  id: x\n".to_vec()),
                        Just(b"- ".to_vec()),
                        Just(b"&a [*a]\n".to_vec()),
                        Just(b"\t".to_vec()),
                        Just(b"{[".to_vec()),
                    ],
                    0..40,
                )
            ) {
                let bytes: Vec<u8> = chunks.concat();
                if !bytes.contains(&0) {
                    if let Ok(text) = String::from_utf8(bytes) {
                        let _ = parse(&text);
                    }
                }
            }

            /// Prose around the markers survives any number of checkpoints
            /// (keys set, block replaced, rendered, parsed again).
            #[test]
            fn body_survives_many_checkpoints(
                before in "(\\PC|\r|\n|---|\u{feff}|\t)*",
                after in "(\\PC|\r|\n|---|\u{feff}|\t)*",
                blocks in proptest::collection::vec("(\\PC|\r|\n|---)*", 1..6),
            ) {
                let marker = |t: &str| t.lines().any(|l| {
                    let l = l.trim();
                    l == BEGIN_MARKER || l == END_MARKER
                });
                prop_assume!(!marker(&before) && !marker(&after));
                let before = if before.is_empty() || before.ends_with('\n') {
                    before
                } else {
                    format!("{before}\n")
                };
                let mut text = format!(
                    "---\nctxkeep: 1\nowner: me # mine\n---\n{before}{BEGIN_MARKER}\nold\n{END_MARKER}\n{after}"
                );
                for (i, block) in blocks.iter().enumerate() {
                    let mut s = parse(&text).unwrap();
                    s.set_keys(&[
                        ("checkpoint", Some(json!({
                            "id": format!("ckpt-{i:04}"), "created_at": "t", "trigger": "manual", "phase": block,
                        }))),
                        ("history", Some(json!([{"id": "ckpt-0000", "created_at": "t", "phase": "no"}]))),
                    ])
                    .unwrap();
                    s.set_managed_block(block).unwrap();
                    text = s.render();
                }
                let s = parse(&text).unwrap();
                let begin = s.body.find(BEGIN_MARKER).unwrap();
                prop_assert_eq!(&s.body[..begin], before.as_str());
                let end = s.body.find(END_MARKER).unwrap() + END_MARKER.len() + 1;
                prop_assert_eq!(&s.body[end..], after.as_str());
                prop_assert!(text.starts_with("---\nctxkeep: 1\nowner: me # mine\n"));
            }

            #[test]
            fn rendering_unchanged_input_is_identity(text in "(\\PC|\r|\n|---|\t)*") {
                if let Ok(s) = parse(&text) {
                    prop_assert_eq!(s.render(), text);
                }
            }
        }
    }
}
