//! Context usage from agent transcripts: one module per format, one common [`Usage`].
//!
//! The rules are in docs/agents.md ("Transcript formats": Claude Code, Codex, Gemini). JSONL
//! transcripts are scanned backwards from the end with [`tail::TailReader`], so the cost does not
//! grow with the file's size; only the legacy single-JSON Gemini file is parsed whole (capped).

pub mod claude_code;
pub mod codex;
pub mod echo;
pub mod gemini;
pub mod statusline;
pub mod tail;

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::error::Error;
use tail::{TailLine, TailReader};

pub use statusline::{parse_statusline, read_statusline, StatusLine};

/// The agent that wrote a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::Gemini];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown agent {0:?}: expected claude-code, codex or gemini")]
pub struct ParseAgentError(pub String);

impl FromStr for Agent {
    type Err = ParseAgentError;

    /// Accepts the canonical names and the common aliases `claude` and `gemini-cli`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "claude-code" | "claude" | "claude_code" | "claudecode" => Ok(Agent::ClaudeCode),
            "codex" | "codex-cli" => Ok(Agent::Codex),
            "gemini" | "gemini-cli" => Ok(Agent::Gemini),
            _ => Err(ParseAgentError(s.to_string())),
        }
    }
}

/// What a transcript says about the main session's context at its end.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Usage {
    pub agent: Agent,
    /// Tokens currently in the main session's context; None when unknown (no qualifying record,
    /// or just compacted with no `postTokens`).
    pub tokens: Option<u64>,
    /// Window size when the transcript states it (Codex `model_context_window`; Gemini, whose
    /// CLI uses one limit for every model), else None: the caller's model table decides.
    pub window: Option<u64>,
    pub model: Option<String>,
    /// A compaction happened after the last usage record (the old figure is stale).
    pub compacted: bool,
    /// The compaction's trigger (`auto`/`manual`) when `compacted` and the transcript says.
    pub compaction_trigger: Option<String>,
    /// The context size just before that compaction, when the transcript says (Claude Code
    /// `compactMetadata.preTokens`).
    pub pre_tokens: Option<u64>,
    /// Lines skipped because they were not valid JSON objects (invalid JSON or UTF-8, non-object
    /// values, lines over the length cap), among those scanned: every line back to the record
    /// used, and at least the last [`DIAG_WINDOW`] bytes of the file (all of it when smaller).
    /// A torn final line (no newline yet) is not counted.
    pub malformed_lines: u64,
}

impl Usage {
    pub(crate) fn empty(agent: Agent) -> Self {
        Usage {
            agent,
            tokens: None,
            window: None,
            model: None,
            compacted: false,
            compaction_trigger: None,
            pre_tokens: None,
            malformed_lines: 0,
        }
    }
}

/// Malformed lines are counted over at least this many bytes at the end of the file, so that the
/// count does not depend on how close to the end the usage record happened to be. Every hook call
/// reads and parses this much, so it is kept small (at 1 MiB it was most of the hook's time).
pub const DIAG_WINDOW: u64 = 256 * 1024;
/// How far beyond the usage record a scan may go to find secondary facts (window, model).
pub const SIDE_SEARCH_BUDGET: u64 = 4 * 1024 * 1024;

/// Which agent wrote the transcript at `path`, from its content (first lines, then last lines),
/// else from its name when it is empty.
pub fn detect_agent(path: &Path) -> anyhow::Result<Agent> {
    let (file, len) = open_transcript(path)?;
    detect_from(path, file, len)?.ok_or_else(|| not_recognized(path))
}

fn not_recognized(path: &Path) -> anyhow::Error {
    Error::data(
        path,
        "not a recognized transcript (expected Claude Code, Codex or Gemini CLI \
         JSONL, or a Gemini session JSON); `track` takes --agent claude-code|codex|gemini to name it",
    )
    .into()
}

/// Reads the context usage at the end of the transcript at `path`. `agent: None` auto-detects.
pub fn read_transcript(path: &Path, agent: Option<Agent>) -> anyhow::Result<Usage> {
    let agent = match agent {
        Some(a) => a,
        None => detect_agent(path)?,
    };
    match agent {
        Agent::ClaudeCode => claude_code::read(path),
        Agent::Codex => codex::read(path),
        Agent::Gemini => gemini::read(path),
    }
}

/// As [`read_transcript`], over the first `len` bytes of an open source instead of a file (the
/// fuzz targets feed bytes through a `Cursor`). `path` names the transcript in errors and is the
/// name detection falls back on.
pub fn read_transcript_from<R: Read + Seek>(
    path: &Path,
    mut src: R,
    len: u64,
    agent: Option<Agent>,
) -> anyhow::Result<Usage> {
    let agent = match agent {
        Some(a) => a,
        None => detect_from(path, &mut src, len)?.ok_or_else(|| not_recognized(path))?,
    };
    match agent {
        Agent::ClaudeCode => claude_code::read_from(path, src, len),
        Agent::Codex => codex::read_from(path, src, len),
        Agent::Gemini => gemini::read_from(path, src, len),
    }
}

/// Opens a transcript after checking it is a regular file (a FIFO would block, a directory
/// can't be read): a missing file or a non-file is `NoInput`.
pub(crate) fn open_transcript(path: &Path) -> anyhow::Result<(File, u64)> {
    Ok(crate::fsutil::open_input(path)?)
}

/// A line's verdict.
pub(crate) enum Parsed {
    Object(Map<String, Value>),
    Blank,
    Malformed,
}

/// Parses one JSONL line: a JSON object, a blank line, or malformed (bad UTF-8, bad JSON,
/// not an object).
pub(crate) fn parse_line(bytes: &[u8]) -> Parsed {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Parsed::Malformed;
    };
    let text = text.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\u{feff}');
    if text.is_empty() {
        return Parsed::Blank;
    }
    if !text.starts_with('{') {
        return Parsed::Malformed;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Parsed::Object(map),
        _ => Parsed::Malformed,
    }
}

/// Like [`parse_line`] but only says whether the line is malformed, without building a value.
fn line_is_malformed(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return true;
    };
    let text = text.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\u{feff}');
    if text.is_empty() {
        return false;
    }
    !text.starts_with('{') || serde_json::from_str::<serde::de::IgnoredAny>(text).is_err()
}

/// Drives a [`TailReader`] over a transcript: yields parsed JSON objects last first, counting
/// malformed lines on the way.
pub(crate) struct Scanner<R = File> {
    reader: TailReader<R>,
    path: std::path::PathBuf,
    malformed: u64,
}

impl Scanner<File> {
    #[cfg(test)]
    pub(crate) fn open(path: &Path) -> anyhow::Result<Self> {
        let (file, len) = open_transcript(path)?;
        Self::new(path, file, len)
    }
}

impl<R: Read + Seek> Scanner<R> {
    pub(crate) fn new(path: &Path, src: R, len: u64) -> anyhow::Result<Self> {
        let reader =
            TailReader::new(src, len).map_err(|e| Error::io(path, "cannot read transcript", e))?;
        Ok(Scanner {
            reader,
            path: path.to_path_buf(),
            malformed: 0,
        })
    }

    fn next_line(&mut self) -> anyhow::Result<Option<TailLine>> {
        Ok(self
            .reader
            .next_line()
            .map_err(|e| Error::io(&self.path, "cannot read transcript", e))?)
    }

    /// The next JSON object backwards with its byte offset, or None at the start of the file.
    pub(crate) fn next_object(&mut self) -> anyhow::Result<Option<(u64, Map<String, Value>)>> {
        loop {
            match self.next_line()? {
                None => return Ok(None),
                Some(TailLine::TooLong { .. }) => self.malformed += 1,
                Some(TailLine::Line { offset, bytes }) => match parse_line(&bytes) {
                    Parsed::Object(map) => return Ok(Some((offset, map))),
                    Parsed::Blank => {}
                    Parsed::Malformed => self.malformed += 1,
                },
            }
        }
    }

    /// The transcript's path (its name can carry the session's id).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// File length the scan works on.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u64 {
        self.reader.len()
    }

    #[cfg(test)]
    pub(crate) fn bytes_read(&self) -> u64 {
        self.reader.bytes_read()
    }

    /// Ends the scan: checks the rest of the diagnostic window for malformed lines (without
    /// building values) and returns the total count.
    pub(crate) fn finish(&mut self) -> anyhow::Result<u64> {
        let floor = self.reader.len().saturating_sub(DIAG_WINDOW);
        loop {
            match self.next_line()? {
                None => break,
                Some(l) if l.offset() < floor => break,
                Some(TailLine::TooLong { .. }) => self.malformed += 1,
                Some(TailLine::Line { bytes, .. }) => {
                    if line_is_malformed(&bytes) {
                        self.malformed += 1;
                    }
                }
            }
        }
        Ok(self.malformed)
    }
}

/// Reads a JSONL transcript backwards with `scan`, then counts the malformed lines of the
/// diagnostic window.
pub(crate) fn read_jsonl<R: Read + Seek>(
    path: &Path,
    src: R,
    len: u64,
    scan: fn(&mut Scanner<R>) -> anyhow::Result<Usage>,
) -> anyhow::Result<Usage> {
    let mut scanner = Scanner::new(path, src, len)?;
    let mut usage = scan(&mut scanner)?;
    usage.malformed_lines = scanner.finish()?;
    Ok(usage)
}

/// Field helpers over `serde_json` maps.
pub(crate) fn get_str<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

pub(crate) fn get_obj<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Option<&'a Map<String, Value>> {
    map.get(key).and_then(Value::as_object)
}

/// A non-negative integer token count (floats with no fraction are accepted; anything else is
/// None).
pub(crate) fn get_u64(map: &Map<String, Value>, key: &str) -> Option<u64> {
    value_u64(map.get(key)?)
}

/// Tokens an API usage object puts in the context: input + cache creation + cache read (output
/// is not context); None without `input_tokens`.
pub(crate) fn input_context_tokens(usage: &Map<String, Value>) -> Option<u64> {
    Some(
        get_u64(usage, "input_tokens")?
            .saturating_add(get_u64(usage, "cache_creation_input_tokens").unwrap_or(0))
            .saturating_add(get_u64(usage, "cache_read_input_tokens").unwrap_or(0)),
    )
}

pub(crate) fn value_u64(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64()?;
    (f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64).then_some(f as u64)
}

// ---------------------------------------------------------------------------------------------
// Detection

/// Bytes of the head examined when sniffing the format.
const SNIFF_HEAD: u64 = 256 * 1024;
/// Lines examined at each end when sniffing.
const SNIFF_LINES: usize = 32;

fn detect_from<R: Read + Seek>(path: &Path, mut src: R, len: u64) -> anyhow::Result<Option<Agent>> {
    if len == 0 {
        return Ok(Some(agent_from_name(path).unwrap_or(Agent::ClaudeCode)));
    }
    let mut head = Vec::new();
    src.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;
    (&mut src)
        .take(SNIFF_HEAD.min(len))
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;

    // Complete lines of the head (the last piece may be cut by the sniff limit).
    let mut pieces: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    if (head.len() as u64) < len || !head.ends_with(b"\n") {
        pieces.pop();
    }
    let mut saw_json_line = false;
    for piece in pieces.iter().take(SNIFF_LINES) {
        if let Parsed::Object(map) = parse_line(piece) {
            saw_json_line = true;
            if let Some(agent) = classify(&map) {
                return Ok(Some(agent));
            }
        }
    }
    if !saw_json_line && looks_like_gemini_legacy(&head) {
        return Ok(Some(Agent::Gemini));
    }

    // Then the last lines (the head may be one huge first line).
    let mut scanner = Scanner::new(path, src, len)?;
    for _ in 0..SNIFF_LINES {
        match scanner.next_object()? {
            Some((_, map)) => {
                if let Some(agent) = classify(&map) {
                    return Ok(Some(agent));
                }
            }
            None => break,
        }
    }
    // No complete line yet (blank, or the first line is still being written): like an empty
    // file, unless the unterminated line already shows its shape.
    let complete = head.iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
    if head.len() as u64 == len && head[..complete].iter().all(u8::is_ascii_whitespace) {
        if let Parsed::Object(map) = parse_line(&head[complete..]) {
            if let Some(agent) = classify(&map) {
                return Ok(Some(agent));
            }
        }
        let rest = head[complete..].trim_ascii_start();
        if rest.is_empty() || rest.starts_with(b"{") {
            return Ok(Some(agent_from_name(path).unwrap_or(Agent::ClaudeCode)));
        }
    }
    Ok(None)
}

/// A pretty-printed single JSON document with Gemini's session keys.
fn looks_like_gemini_legacy(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    text.trim_start().starts_with('{')
        && text.contains("\"sessionId\"")
        && (text.contains("\"projectHash\"") || text.contains("\"messages\""))
}

/// Which agent writes a line of this shape.
fn classify(map: &Map<String, Value>) -> Option<Agent> {
    let ty = get_str(map, "type");
    if map.contains_key("payload") {
        if let Some(
            "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
            | "token_usage_record",
        ) = ty
        {
            return Some(Agent::Codex);
        }
    }
    if map.contains_key("$set") || map.contains_key("$rewindTo") {
        return Some(Agent::Gemini);
    }
    if map.contains_key("sessionId") && map.contains_key("projectHash") {
        return Some(Agent::Gemini);
    }
    let claude_envelope = map.contains_key("uuid")
        || map.contains_key("parentUuid")
        || map.contains_key("leafUuid")
        || map.contains_key("message");
    if let (Some("user" | "gemini" | "info" | "error" | "warning"), Some(_), false) =
        (ty, get_str(map, "id"), claude_envelope)
    {
        return Some(Agent::Gemini);
    }
    if let Some(
        "user"
        | "assistant"
        | "system"
        | "summary"
        | "progress"
        | "file-history-snapshot"
        | "queue-operation"
        | "attachment",
    ) = ty
    {
        if claude_envelope || map.contains_key("sessionId") || ty == Some("summary") {
            return Some(Agent::ClaudeCode);
        }
    }
    // Codex before RolloutItem (2025): a header with `instructions`, then bare items.
    if map.contains_key("record_type") {
        return Some(Agent::Codex);
    }
    None
}

/// A guess from the file name, for files with no content to sniff.
fn agent_from_name(path: &Path) -> Option<Agent> {
    let name = path.file_name()?.to_str()?;
    let in_gemini_dir = path.components().any(|c| c.as_os_str() == ".gemini");
    if name.starts_with("rollout-") && name.ends_with(".jsonl") {
        Some(Agent::Codex)
    } else if in_gemini_dir || (name.starts_with("session-") && name.ends_with(".json")) {
        Some(Agent::Gemini)
    } else {
        None
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use std::path::PathBuf;

    /// Writes `content` to a file in a fresh temp dir; returns both (keep the dir alive).
    pub fn write_temp(name: &str, content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    /// The lines as a JSONL file's content (each terminated by a newline).
    pub fn jsonl(lines: &[String]) -> Vec<u8> {
        let mut s = lines.join("\n");
        s.push('\n');
        s.into_bytes()
    }

    /// Writes `lines` as the JSONL file `name` and reads it with `read`, checking that
    /// auto-detection reads the same.
    pub fn read_lines_detected(
        name: &str,
        lines: &[String],
        read: fn(&std::path::Path) -> anyhow::Result<super::Usage>,
    ) -> super::Usage {
        let (_d, path) = write_temp(name, &jsonl(lines));
        let u = read(&path).unwrap();
        assert_eq!(
            u,
            super::read_transcript(&path, None).unwrap(),
            "auto-detect agrees"
        );
        u
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::write_temp;
    use super::*;
    use crate::error::{exit, exit_code_of};

    #[test]
    fn agent_names_round_trip() {
        for a in Agent::ALL {
            assert_eq!(a.to_string().parse::<Agent>().unwrap(), a);
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                format!("\"{}\"", a.as_str())
            );
        }
        assert_eq!("Claude".parse::<Agent>().unwrap(), Agent::ClaudeCode);
        assert_eq!("gemini-cli".parse::<Agent>().unwrap(), Agent::Gemini);
        assert_eq!(
            "cursor".parse::<Agent>().unwrap_err().to_string(),
            "unknown agent \"cursor\": expected claude-code, codex or gemini"
        );
    }

    #[test]
    fn missing_file_is_no_input() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_transcript(&dir.path().join("nope.jsonl"), None).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::NO_INPUT);
        assert!(err.to_string().contains("nope.jsonl"), "{err}");
        let err = read_transcript(&dir.path().join("nope.jsonl"), Some(Agent::Codex)).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::NO_INPUT);
    }

    #[test]
    fn directory_is_no_input() {
        let dir = tempfile::tempdir().unwrap();
        for agent in [None, Some(Agent::ClaudeCode), Some(Agent::Gemini)] {
            let err = read_transcript(dir.path(), agent).unwrap_err();
            assert_eq!(exit_code_of(&err), exit::NO_INPUT, "{agent:?}");
            assert!(err.to_string().contains("directory"), "{err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn fifo_is_no_input_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.jsonl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
        // Opening a FIFO for reading would block forever with no writer: this must return.
        let err = read_transcript(&fifo, Some(Agent::ClaudeCode)).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::NO_INPUT);
        let err = detect_agent(&fifo).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::NO_INPUT);
    }

    #[test]
    fn unknown_format_is_data_error_naming_the_file() {
        let (_d, path) = write_temp("notes.jsonl", b"{\"hello\":\"world\"}\n[1,2]\n");
        let err = read_transcript(&path, None).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::DATA);
        assert!(err.to_string().contains("notes.jsonl"), "{err}");
        let (_d, path) = write_temp("bin.jsonl", b"\x00\x01\x02 binary\n");
        assert_eq!(exit_code_of(&detect_agent(&path).unwrap_err()), exit::DATA);
    }

    #[test]
    fn empty_file_has_unknown_tokens() {
        let (_d, path) = write_temp("s.jsonl", b"");
        let u = read_transcript(&path, None).unwrap();
        assert_eq!(u, Usage::empty(Agent::ClaudeCode));
        let (_d, path) = write_temp("rollout-2026-01-01T00-00-00-x.jsonl", b"");
        assert_eq!(
            read_transcript(&path, None).unwrap(),
            Usage::empty(Agent::Codex)
        );
        for agent in Agent::ALL {
            let u = read_transcript(&path, Some(agent)).unwrap();
            assert_eq!(u.tokens, None);
            assert_eq!(u.agent, agent);
        }
    }

    #[test]
    fn a_first_line_still_being_written_is_like_an_empty_file() {
        let (_d, path) = write_temp("s.jsonl", b"{\"parentUuid\":null,\"isSidechain\":fal");
        assert_eq!(detect_agent(&path).unwrap(), Agent::ClaudeCode);
        assert_eq!(read_transcript(&path, None).unwrap().tokens, None);
        let (_d, path) = write_temp("rollout-2026-x.jsonl", b"\n{\"timestamp\":\"2026");
        assert_eq!(detect_agent(&path).unwrap(), Agent::Codex);
        // Complete but unterminated: its shape is used for detection only.
        let (_d, path) = write_temp(
            "s.jsonl",
            b"{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}",
        );
        assert_eq!(detect_agent(&path).unwrap(), Agent::Codex);
        assert_eq!(
            read_transcript(&path, None).unwrap(),
            Usage::empty(Agent::Codex)
        );
        // Text that is not JSON at all is still unknown.
        let (_d, path) = write_temp("s.jsonl", b"hello");
        assert_eq!(exit_code_of(&detect_agent(&path).unwrap_err()), exit::DATA);
    }

    #[test]
    fn detects_each_format_from_its_lines() {
        let cases: [(&str, &str, Agent); 6] = [
            (
                "a.jsonl",
                "{\"type\":\"summary\",\"summary\":\"t\",\"leafUuid\":\"x\"}\n",
                Agent::ClaudeCode,
            ),
            (
                "b.jsonl",
                "{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"uuid\":\"u1\",\"sessionId\":\"s\"}\n",
                Agent::ClaudeCode,
            ),
            (
                "c.jsonl",
                "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n",
                Agent::Codex,
            ),
            (
                "d.jsonl",
                "{\"sessionId\":\"s\",\"projectHash\":\"h\",\"startTime\":\"t\",\"lastUpdated\":\"t\",\"kind\":\"main\"}\n",
                Agent::Gemini,
            ),
            (
                "e.jsonl",
                "not json\n{\"id\":\"m1\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":\"hi\"}\n",
                Agent::Gemini,
            ),
            (
                "f.json",
                "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}\n",
                Agent::Gemini,
            ),
        ];
        for (name, content, agent) in cases {
            let (_d, path) = write_temp(name, content.as_bytes());
            assert_eq!(detect_agent(&path).unwrap(), agent, "{name}");
        }
    }

    #[test]
    fn reading_from_memory_agrees_with_reading_the_file() {
        let cases: [(&str, &str); 5] = [
            (
                "a.jsonl",
                "{\"type\":\"assistant\",\"uuid\":\"u\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":7}}}\nnot json\n",
            ),
            (
                "b.jsonl",
                "{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"last_token_usage\":{\"input_tokens\":9,\"total_tokens\":11},\"model_context_window\":100}}}\n",
            ),
            (
                "c.jsonl",
                "{\"sessionId\":\"s\",\"projectHash\":\"h\"}\n{\"id\":\"m1\",\"type\":\"gemini\",\"tokens\":{\"input\":42}}\n",
            ),
            (
                "session-x.json",
                "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": [{\"id\":\"m\",\"type\":\"gemini\",\"tokens\":{\"input\":3}}]\n}\n",
            ),
            ("rollout-x.jsonl", ""),
        ];
        for (name, content) in cases {
            let (_d, path) = write_temp(name, content.as_bytes());
            let cursor = std::io::Cursor::new(content.as_bytes());
            let len = content.len() as u64;
            for agent in [
                None,
                Some(Agent::ClaudeCode),
                Some(Agent::Codex),
                Some(Agent::Gemini),
            ] {
                let from_file = read_transcript(&path, agent).map_err(|e| e.to_string());
                let from_memory = read_transcript_from(&path, cursor.clone(), len, agent)
                    .map_err(|e| e.to_string());
                assert_eq!(from_memory, from_file, "{name} {agent:?}");
            }
            assert!(read_transcript(&path, None).unwrap().tokens.is_some() || content.is_empty());
        }
        // Unrecognized content is the same one-line error.
        let e = read_transcript_from(
            Path::new("notes.jsonl"),
            std::io::Cursor::new(b"hello\n"),
            6,
            None,
        )
        .unwrap_err();
        assert_eq!(exit_code_of(&e), exit::DATA);
        assert!(
            e.to_string()
                .contains("notes.jsonl: not a recognized transcript"),
            "{e}"
        );
    }

    #[test]
    fn detects_from_the_tail_when_the_first_line_is_huge() {
        // A Codex session_meta carrying instructions longer than the sniff window.
        let mut content = format!(
            "{{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"x\",\"instructions\":\"{}\"}}}}\n",
            "x".repeat(SNIFF_HEAD as usize + 10)
        );
        content.push_str(
            "{\"type\":\"event_msg\",\"timestamp\":\"t\",\"payload\":{\"type\":\"task_started\"}}\n",
        );
        let (_d, path) = write_temp("x.jsonl", content.as_bytes());
        assert_eq!(detect_agent(&path).unwrap(), Agent::Codex);
    }
}
