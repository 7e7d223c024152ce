//! Whether the agent itself wrote a word (a restore nonce) in its
//! transcript: only assistant text and tool calls count, never the prompt
//! injected into the session or tool output, which carry the nonce too.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Map, Value};

use crate::system::error::Error;

/// Whether an agent-authored line in the transcript's tail contains `nonce`;
/// `authored` gives the text of a line that the agent itself wrote (its
/// replies and tool calls, never prompts, injected context or tool results).
pub fn echoes(
    path: &Path,
    nonce: &str,
    scan_bytes: u64,
    authored: &dyn Fn(&Map<String, Value>) -> Vec<String>,
) -> Result<bool, Error> {
    let (file, len) = crate::system::fsutil::open_input(path)?;
    echoes_in(path, &file, 0, len, nonce, scan_bytes, authored)
}

/// [`echoes`] over bytes `from..len` of a transcript already open (`path` names it in
/// errors); `from` is at most `scan_bytes` before `len`.
pub fn echoes_in(
    path: &Path,
    mut file: &std::fs::File,
    from: u64,
    len: u64,
    nonce: &str,
    scan_bytes: u64,
    authored: &dyn Fn(&Map<String, Value>) -> Vec<String>,
) -> Result<bool, Error> {
    // Only the tail: an ack is echoed soon after the resume, near the end.
    let start = from.max(len.saturating_sub(scan_bytes)).min(len);
    let mut tail = Vec::with_capacity((len - start) as usize);
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.take(len - start).read_to_end(&mut tail))
        .map_err(|e| Error::io(path, "cannot read", e))?;
    Ok(echoed_in(&tail, nonce, authored))
}

/// Whether an agent-authored line among the JSONL `lines` contains `nonce` (see [`echoes`]).
pub fn echoed_in(
    lines: &[u8],
    nonce: &str,
    authored: &dyn Fn(&Map<String, Value>) -> Vec<String>,
) -> bool {
    let nonce = nonce.to_ascii_lowercase();
    if !nonce.is_empty() && !nonce.bytes().any(|b| b.is_ascii_alphabetic()) {
        return echoed_caseless(lines, &nonce, authored);
    }
    for line in lines.split(|&b| b == b'\n').rev() {
        // Cheap test first: most lines do not contain the nonce at all.
        if line.len() < nonce.len() || !contains_ignore_case(line, nonce.as_bytes()) {
            continue;
        }
        let Ok(Value::Object(v)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if authored(&v).iter().any(|text| has_word(text, &nonce)) {
            return true;
        }
    }
    false
}

/// [`echoed_in`] for a word without letters (a nonce is digits): one forward search over all
/// the lines (vectorized; memchr's reverse search is not, and cost 25 instructions a byte), and
/// only the lines it hits are cut out and parsed, each once, the last first. Splitting every
/// line first cost more than the rest of a hook event while a restore waited.
fn echoed_caseless(
    lines: &[u8],
    word: &str,
    authored: &dyn Fn(&Map<String, Value>) -> Vec<String>,
) -> bool {
    let mut hit_lines: Vec<(usize, usize)> = Vec::new();
    for at in memchr::memmem::find_iter(lines, word.as_bytes()) {
        if hit_lines.last().is_some_and(|&(_, stop)| at < stop) {
            continue; // the line just kept holds it again
        }
        let start = memchr::memrchr(b'\n', &lines[..at]).map_or(0, |i| i + 1);
        let stop = memchr::memchr(b'\n', &lines[at..]).map_or(lines.len(), |i| at + i);
        hit_lines.push((start, stop));
    }
    hit_lines.iter().rev().any(|&(start, stop)| {
        matches!(
            serde_json::from_slice::<Value>(&lines[start..stop]),
            Ok(Value::Object(v)) if authored(&v).iter().any(|text| has_word(text, word))
        )
    })
}

/// Whether `word` occurs in `text` on its own, not inside a longer number
/// or identifier.
pub fn has_word(text: &str, word: &str) -> bool {
    let text = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let end = at + word.len();
        (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
            && (end == bytes.len() || !bytes[end].is_ascii_alphanumeric())
    })
}

fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    // A nonce is digits: no case to ignore, and a plain search is far quicker.
    if !needle.iter().any(u8::is_ascii_alphabetic) {
        return memchr::memmem::find(hay, needle).is_some();
    }
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each agent's reader says what its agent wrote (the agents' tests hand in theirs); here a
    /// line's `said`.
    fn said(line: &Map<String, Value>) -> Vec<String> {
        line.get("said")
            .map(|s| vec![s.to_string()])
            .unwrap_or_default()
    }

    #[test]
    fn only_the_nonce_as_a_word_in_what_the_reader_hands_back_is_an_echo() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t.jsonl");
        let echoed = |lines: &str| {
            std::fs::write(&t, lines).unwrap();
            echoes(&t, "48213907", 1 << 20, &said).unwrap()
        };
        assert!(
            !echoed("{\"heard\":\"ctxkeep ack 48213907\"}\n"),
            "not what the agent wrote"
        );
        assert!(echoed("{\"said\":\"ctxkeep ack 48213907\"}\n"));
        assert!(
            !echoed("{\"said\":\"build 1482139070 and v48213907a\"}\n"),
            "inside a longer number or word"
        );
    }

    #[test]
    fn an_echo_is_found_behind_later_lines_that_only_quote_it() {
        // The reader above: what a line `said` is the agent's own; what it `heard` is quoted to it.
        let authored = &said;
        let tool = r#"{"said":"ctxkeep ack 48213907"}"#;
        let injected = r#"{"heard":"48213907 and 48213907 again"}"#;
        let plain = r#"{"said":"done"}"#;
        // The agent's echo first, then lines that hold the nonce (twice) without echoing it.
        let lines = format!("{plain}\n{tool}\n{plain}\n{injected}\n{injected}\n{plain}");
        assert!(echoed_in(lines.as_bytes(), "48213907", authored));
        // The echo as the first line and as the last, unterminated one.
        assert!(echoed_in(
            format!("{tool}\n{injected}\n").as_bytes(),
            "48213907",
            authored
        ));
        assert!(echoed_in(
            format!("{injected}\n{tool}").as_bytes(),
            "48213907",
            authored
        ));
        // Only quotes, or another nonce: no echo.
        let quoted = format!("{injected}\n{plain}\n{injected}\n");
        assert!(!echoed_in(quoted.as_bytes(), "48213907", authored));
        assert!(!echoed_in(lines.as_bytes(), "48213908", authored));
        assert!(!echoed_in(b"", "48213907", authored));
    }
}
