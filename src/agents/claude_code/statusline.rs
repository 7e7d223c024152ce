//! Claude Code's status-line stdin JSON (docs/agents.md, "Claude Code status line").
//!
//! Tokens in context, in order of preference:
//! 1. `context_window.current_usage`: input + cache_creation + cache_read (output excluded,
//!    as in Claude's own `used_percentage`). When the key is present but `null` (before the
//!    first API call, and right after `/compact`) the context is unknown.
//! 2. Payloads without `current_usage`: `context_window.total_input_tokens` only from Claude
//!    Code 2.1.132 on, where it is the current context. Before that version it was a cumulative
//!    session total, which is never reported as context; tokens stay unknown.
//!
//! A `current_usage` whose token counts are all zero (Claude Code sends one right after `/compact`)
//! is unknown too, never an empty context.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::system::error::Error;
use crate::transcripts::usage::{get_obj, get_str, get_u64, input_context_tokens, StatusLine};

/// Largest status-line payload accepted (real ones are a few KiB).
pub const MAX_STATUSLINE_BYTES: u64 = 1024 * 1024;

/// The first Claude Code version whose `total_input_tokens` is the current context.
const CURRENT_TOTALS_SINCE: (u64, u64, u64) = (2, 1, 132);

/// Reads a status-line payload from `input` (stdin), at most [`MAX_STATUSLINE_BYTES`].
pub fn read_statusline(input: impl Read) -> anyhow::Result<StatusLine> {
    let stdin = Path::new("<stdin>");
    let mut buf = String::new();
    input
        .take(MAX_STATUSLINE_BYTES + 1)
        .read_to_string(&mut buf)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => {
                anyhow::Error::from(Error::data(stdin, "status-line input is not UTF-8"))
            }
            _ => Error::io(stdin, "cannot read status-line input", e).into(),
        })?;
    if buf.len() as u64 > MAX_STATUSLINE_BYTES {
        return Err(Error::data(
            stdin,
            format!(
                "status-line input is over {} KiB",
                MAX_STATUSLINE_BYTES / 1024
            ),
        )
        .into());
    }
    parse_statusline(&buf)
}

/// Parses a status-line payload.
pub fn parse_statusline(text: &str) -> anyhow::Result<StatusLine> {
    let stdin = Path::new("<stdin>");
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| Error::data(stdin, format!("status-line input is not valid JSON: {e}")))?;
    let Value::Object(root) = value else {
        return Err(Error::data(stdin, "status-line input is not a JSON object").into());
    };
    let version = get_str(&root, "version").map(str::to_string);
    let model = match root.get("model") {
        Some(Value::Object(m)) => get_str(m, "id").map(str::to_string),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let cw = get_obj(&root, "context_window");
    let window = cw
        .and_then(|c| get_u64(c, "context_window_size"))
        .filter(|&w| w > 0);
    let used_percentage = cw
        .and_then(|c| c.get("used_percentage"))
        .and_then(Value::as_f64);
    let tokens = cw.and_then(|c| context_tokens(c, version.as_deref()));
    Ok(StatusLine {
        session_id: get_str(&root, "session_id").map(str::to_string),
        transcript_path: get_str(&root, "transcript_path").map(PathBuf::from),
        model,
        tokens,
        window,
        used_percentage,
        version,
    })
}

fn context_tokens(cw: &Map<String, Value>, version: Option<&str>) -> Option<u64> {
    match cw.get("current_usage") {
        // All zero right after `/compact`: nothing is known yet, not an empty context.
        Some(Value::Object(cu)) => input_context_tokens(cu).filter(|&t| t > 0),
        // Present but null (or odd): unknown right now.
        Some(_) => None,
        None => {
            let current = version
                .and_then(parse_version)
                .is_some_and(|v| v >= CURRENT_TOTALS_SINCE);
            if current {
                get_u64(cw, "total_input_tokens")
            } else {
                None
            }
        }
    }
}

/// `"2.1.132"` (optionally with a suffix such as `-beta`) → (2, 1, 132).
fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let core = v.trim().split(['-', '+', ' ']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().unwrap_or(Some(0))?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::error::{exit, exit_code_of};

    /// Current shape (official doc example, abridged).
    const NEW: &str = r#"{ "cwd":"/current/working/directory","session_id":"abc123","session_name":"my-session",
  "transcript_path":"/path/to/transcript.jsonl",
  "model":{"id":"claude-opus-5","display_name":"Opus"},
  "workspace":{"current_dir":"/w","project_dir":"/w","added_dirs":[]},
  "version":"2.1.90","output_style":{"name":"default"},
  "cost":{"total_cost_usd":0.01234,"total_duration_ms":45000,"total_api_duration_ms":2300,"total_lines_added":156,"total_lines_removed":23},
  "context_window":{"total_input_tokens":415500,"total_output_tokens":21200,"context_window_size":200000,
                    "used_percentage":8,"remaining_percentage":92,
                    "current_usage":{"input_tokens":8500,"output_tokens":1200,"cache_creation_input_tokens":5000,"cache_read_input_tokens":2000}},
  "exceeds_200k_tokens":false }"#;

    /// Old shape (Claude Code 1.0.88): no `current_usage`, no `used_percentage`, and a
    /// cumulative `total_input_tokens`.
    const OLD: &str = r#"{
	"session_id": "73cc9f9a-2775-4418-beec-bc36b62a1c6f",
	"transcript_path": "/home/u/.claude/projects/-home-u-proj/73cc9f9a-2775-4418-beec-bc36b62a1c6f.jsonl",
	"cwd": "/home/u/proj",
	"model": { "id": "claude-sonnet-4-20250514", "display_name": "Sonnet 4" },
	"version": "1.0.88",
	"cost": { "total_cost_usd": 0.05, "total_duration_ms": 164055 },
	"context_window": { "total_input_tokens": 42500, "total_output_tokens": 3200, "context_window_size": 200000 },
	"exceeds_200k_tokens": false
}"#;

    #[test]
    fn current_usage_is_preferred_over_totals() {
        let s = parse_statusline(NEW).unwrap();
        assert_eq!(s.tokens, Some(15_500));
        assert_eq!(s.window, Some(200_000));
        assert_eq!(s.used_percentage, Some(8.0));
        assert_eq!(s.model.as_deref(), Some("claude-opus-5"));
        assert_eq!(s.session_id.as_deref(), Some("abc123"));
        assert_eq!(
            s.transcript_path.as_deref(),
            Some(Path::new("/path/to/transcript.jsonl"))
        );
        assert_eq!(s.version.as_deref(), Some("2.1.90"));
    }

    #[test]
    fn old_payload_never_reports_the_cumulative_total() {
        let s = parse_statusline(OLD).unwrap();
        assert_eq!(s.tokens, None);
        assert_eq!(s.window, Some(200_000));
        assert_eq!(s.used_percentage, None);
        assert_eq!(s.model.as_deref(), Some("claude-sonnet-4-20250514"));
        assert_eq!(
            s.session_id.as_deref(),
            Some("73cc9f9a-2775-4418-beec-bc36b62a1c6f")
        );
    }

    #[test]
    fn totals_count_as_context_from_2_1_132_on() {
        let at = OLD.replace("1.0.88", "2.1.132");
        assert_eq!(parse_statusline(&at).unwrap().tokens, Some(42_500));
        let before = OLD.replace("1.0.88", "2.1.131");
        assert_eq!(parse_statusline(&before).unwrap().tokens, None);
        let later = OLD.replace("1.0.88", "2.10.0-beta");
        assert_eq!(parse_statusline(&later).unwrap().tokens, Some(42_500));
        let none = OLD.replace("\"version\": \"1.0.88\",", "");
        assert_eq!(parse_statusline(&none).unwrap().tokens, None);
    }

    #[test]
    fn null_current_usage_after_compact_is_unknown() {
        let s = NEW.replace(
            r#""current_usage":{"input_tokens":8500,"output_tokens":1200,"cache_creation_input_tokens":5000,"cache_read_input_tokens":2000}"#,
            r#""current_usage":null"#,
        ).replace(r#""used_percentage":8"#, r#""used_percentage":null"#)
        .replace("2.1.90", "2.1.140");
        let s = parse_statusline(&s).unwrap();
        assert_eq!(s.tokens, None);
        assert_eq!(s.used_percentage, None);
        assert_eq!(s.window, Some(200_000));
    }

    #[test]
    fn minimal_and_bad_payloads() {
        let s = parse_statusline(r#"{"session_id":"s","exceeds_200k_tokens":true}"#).unwrap();
        assert_eq!(s.tokens, None);
        assert_eq!(s.window, None);
        assert_eq!(s.transcript_path, None);
        for bad in ["", "not json", "[1,2]"] {
            let err = parse_statusline(bad).unwrap_err();
            assert_eq!(exit_code_of(&err), exit::DATA, "{bad:?}");
        }
    }

    #[test]
    fn reads_from_a_reader_with_a_cap() {
        let s = read_statusline(NEW.as_bytes()).unwrap();
        assert_eq!(s.tokens, Some(15_500));
        let huge = format!(
            "{{\"pad\":\"{}\"}}",
            "x".repeat(MAX_STATUSLINE_BYTES as usize)
        );
        let err = read_statusline(huge.as_bytes()).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::DATA);
        let err = read_statusline(&b"{\"a\":\"\xff\"}"[..]).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::DATA);
    }
}
