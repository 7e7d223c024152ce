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
}
