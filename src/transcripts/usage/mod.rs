//! Context usage from agent transcripts: one module per format, one common [`Usage`].
//!
//! The rules are in docs/agents.md ("Transcript formats": Claude Code, Codex, Gemini). JSONL
//! transcripts are scanned backwards from the end with [`tail::TailReader`], so the cost does not
//! grow with the file's size; only the legacy single-JSON Gemini file is parsed whole (capped).

pub mod echo;
pub mod tail;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::system::error::Error;
use tail::{TailLine, TailReader};

/// What a transcript says about the main session's context at its end.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Usage {
    /// The id of the agent that wrote the transcript (`claude-code`, …).
    pub agent: &'static str,
    /// Tokens currently in the main session's context; None when unknown (no qualifying record,
    /// or just compacted with no `postTokens`).
    pub tokens: Option<u64>,
    /// Window size when the transcript states it (Codex `model_context_window`; Gemini, whose
    /// CLI uses one limit for every model), else None: the caller's model table decides.
    pub window: Option<u64>,
    pub model: Option<String>,
    /// A compaction happened after the last usage record (the old token count is stale).
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
    pub fn empty(agent: &'static str) -> Self {
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

/// What an agent's status-line input says (Claude Code's, `src/agents/claude_code/statusline.rs`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StatusLine {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    /// The model's id (may carry a `[1m]` suffix).
    pub model: Option<String>,
    /// Tokens currently in context; None when unknown (see the module doc).
    pub tokens: Option<u64>,
    /// The context window's size.
    pub window: Option<u64>,
    /// The share of the window used, as the agent computed it; None early in a session and in
    /// old payloads.
    pub used_percentage: Option<f64>,
    /// The agent's version that sent the payload.
    pub version: Option<String>,
}

/// Malformed lines are counted over at least this many bytes at the end of the file, so that the
/// count does not depend on how close to the end the usage record happened to be. Every hook call
/// reads and parses this much, so it is kept small (at 1 MiB it was most of the hook's time).
pub const DIAG_WINDOW: u64 = 256 * 1024;
/// Whether readings count the malformed lines of the [`DIAG_WINDOW`] (what `track` reports).
static COUNT_MALFORMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Readings in this process leave the [`DIAG_WINDOW`] unchecked: the agent hooks show no count
/// of malformed lines, and checking was a third of their work. Lines the scan itself meets are
/// still counted.
pub fn skip_malformed_count() {
    COUNT_MALFORMED.store(false, std::sync::atomic::Ordering::Relaxed);
}

/// How far beyond the usage record a scan may go to find secondary facts (window, model).
pub const SIDE_SEARCH_BUDGET: u64 = 4 * 1024 * 1024;

/// Opens a transcript after checking it is a regular file (a FIFO would block, a directory
/// can't be read): a missing file or a non-file is `NoInput`.
pub fn open_transcript(path: &Path) -> anyhow::Result<(File, u64)> {
    Ok(crate::system::fsutil::open_input(path)?)
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

    /// The first thing `found` finds in the objects before `offset`, going back at most
    /// [`SIDE_SEARCH_BUDGET`] bytes (a compaction's side facts: the window, model and token count
    /// of the last reply before it), so the cost stays flat whatever the file's size.
    pub(crate) fn find_back<T>(
        &mut self,
        offset: u64,
        found: impl Fn(&Map<String, Value>) -> Option<T>,
    ) -> anyhow::Result<Option<T>> {
        let floor = offset.saturating_sub(SIDE_SEARCH_BUDGET);
        while let Some((off, line)) = self.next_object()? {
            if let Some(t) = found(&line) {
                return Ok(Some(t));
            }
            if off < floor {
                break;
            }
        }
        Ok(None)
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
        if !COUNT_MALFORMED.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(self.malformed);
        }
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
pub const SNIFF_HEAD: u64 = 256 * 1024;
/// Lines examined at each end when sniffing.
const SNIFF_LINES: usize = 32;

/// Which writer a transcript has, judged by `by_line` on its first complete lines, then (when
/// none of them is JSON) by `by_head` on its first bytes, then on its last lines; a file with
/// nothing to judge yet (empty, or its first line still being written) is `by_name`'s. None: not
/// a transcript any judge recognizes.
pub fn sniff<T>(
    path: &Path,
    src: &mut dyn ReadSeek,
    len: u64,
    by_line: &dyn Fn(&Map<String, Value>) -> Option<T>,
    by_head: &dyn Fn(&[u8]) -> Option<T>,
    by_name: &dyn Fn() -> T,
) -> anyhow::Result<Option<T>> {
    if len == 0 {
        return Ok(Some(by_name()));
    }
    let mut head = Vec::new();
    src.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;
    (&mut *src)
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
            if let Some(found) = by_line(&map) {
                return Ok(Some(found));
            }
        }
    }
    if !saw_json_line {
        if let Some(found) = by_head(&head) {
            return Ok(Some(found));
        }
    }

    // Then the last lines (the head may be one huge first line).
    let mut scanner = Scanner::new(path, &mut *src, len)?;
    for _ in 0..SNIFF_LINES {
        match scanner.next_object()? {
            Some((_, map)) => {
                if let Some(found) = by_line(&map) {
                    return Ok(Some(found));
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
            if let Some(found) = by_line(&map) {
                return Ok(Some(found));
            }
        }
        let rest = head[complete..].trim_ascii_start();
        if rest.is_empty() || rest.starts_with(b"{") {
            return Ok(Some(by_name()));
        }
    }
    Ok(None)
}

/// A source a transcript reader can seek in (a file, or bytes in memory for the fuzz targets).
pub trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

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
}
