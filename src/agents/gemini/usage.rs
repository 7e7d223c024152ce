//! Gemini CLI chat recordings (docs/agents.md, "Gemini CLI chat recordings").
//!
//! Two shapes:
//! * JSONL (current): a metadata first line, message records `{id, type, …}` that are
//!   re-appended in full whenever they change (the last copy of an id wins, in the position of
//!   its first appearance), `{"$set": {…}}` metadata patches (a `$set.messages` array replaces
//!   the whole list), and `{"$rewindTo": id}` (drops that message and everything after it; an
//!   unknown id clears the list). Scanned backwards with the tail reader.
//! * Legacy single JSON document `{sessionId, projectHash, startTime, lastUpdated, messages[]}`:
//!   parsed whole, so its size is capped at [`LEGACY_MAX_BYTES`].
//!
//! Context = `tokens.input` (promptTokenCount, which includes cached tokens) of the last
//! `type:"gemini"` message that has tokens.
//!
//! Window: Gemini CLI's `tokenLimit(model)` returns 1,048,576 for every model it knows and as
//! its default for unknown ones, so the window is a property of the agent, not of the model
//! string: it is returned here for every Gemini transcript, and the model table need not know
//! Gemini model names.
//!
//! Backward-scan approximations (documented, not seen in real files): a message's position is
//! taken to be its last copy rather than its first appearance, and a `$rewindTo` met while
//! already undoing a later one is assumed to be subsumed by it.

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Map, Value};

use crate::system::error::Error;
use crate::transcripts::usage::{
    get_obj, get_str, get_u64, open_transcript, parse_line, read_jsonl, Parsed, Scanner, Usage,
};

/// Gemini CLI's token limit for every current model (`DEFAULT_TOKEN_LIMIT`).
pub const GEMINI_WINDOW: u64 = 1_048_576;
/// Largest legacy single-JSON session file that is parsed.
pub const LEGACY_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// The first line of a JSONL recording (metadata) is small; without a newline in this many bytes
/// the file is a single JSON document.
const FIRST_LINE_MAX: u64 = 64 * 1024;

pub fn read(path: &Path) -> anyhow::Result<Usage> {
    let (file, len) = open_transcript(path)?;
    read_from(path, file, len)
}

/// As [`read`], over the first `len` bytes of `src`; `path` names it in errors.
pub fn read_from<R: Read + Seek>(path: &Path, mut src: R, len: u64) -> anyhow::Result<Usage> {
    if len == 0 {
        return Ok(empty());
    }
    let mut head = Vec::new();
    src.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;
    (&mut src)
        .take(FIRST_LINE_MAX.min(len))
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;
    let first_line = head.iter().position(|&b| b == b'\n').map(|n| &head[..n]);
    let jsonl = match first_line {
        Some(line) => match parse_line(line) {
            Parsed::Object(_) => true,
            // A pretty-printed document starts with a lone `{`.
            _ => !starts_with_brace(&head),
        },
        None => !starts_with_brace(&head),
    };
    if jsonl {
        read_jsonl(path, src, len, scan)
    } else {
        read_legacy(path, src, len)
    }
}

fn starts_with_brace(head: &[u8]) -> bool {
    head.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

fn empty() -> Usage {
    let mut u = Usage::empty(super::ID);
    u.window = Some(GEMINI_WINDOW);
    u
}

/// `(tokens.input, model)` of a qualifying `gemini` message.
fn gemini_tokens(msg: &Map<String, Value>) -> Option<(u64, Option<String>)> {
    if get_str(msg, "type") != Some("gemini") {
        return None;
    }
    let input = get_u64(get_obj(msg, "tokens")?, "input")?;
    (input > 0).then(|| (input, get_str(msg, "model").map(str::to_string)))
}

fn found(input: u64, model: Option<String>) -> Usage {
    let mut u = empty();
    u.tokens = Some(input);
    u.model = model;
    u
}

/// The last qualifying message of a full message list, applying a pending rewind target and
/// ignoring ids whose later copies were already judged.
fn last_in_list(
    messages: &[Value],
    rewind: Option<&str>,
    seen: &HashSet<String>,
) -> Option<(u64, Option<String>)> {
    let end = match rewind {
        None => messages.len(),
        Some(target) => messages
            .iter()
            .position(|m| m.get("id").and_then(Value::as_str) == Some(target))
            .unwrap_or(0),
    };
    messages[..end].iter().rev().find_map(|m| {
        let m = m.as_object()?;
        if get_str(m, "id").is_some_and(|id| seen.contains(id)) {
            return None;
        }
        gemini_tokens(m)
    })
}

pub(crate) fn scan<R: Read + Seek>(scanner: &mut Scanner<R>) -> anyhow::Result<Usage> {
    let mut seen: HashSet<String> = HashSet::new();
    // While Some, records are being undone by a later `$rewindTo` until its target is passed.
    let mut rewind: Option<String> = None;
    while let Some((_, line)) = scanner.next_object()? {
        if let Some(target) = get_str(&line, "$rewindTo") {
            if rewind.is_none() {
                rewind = Some(target.to_string());
            }
            continue;
        }
        // A full message list: `$set.messages`, or a metadata line that carries one.
        let list = match get_obj(&line, "$set") {
            Some(set) => set.get("messages"),
            None if get_str(&line, "id").is_none() => line.get("messages"),
            None => None,
        };
        if let Some(list) = list.and_then(Value::as_array) {
            let hit = last_in_list(list, rewind.as_deref(), &seen);
            return Ok(hit.map_or_else(empty, |(t, m)| found(t, m)));
        }
        let Some(id) = get_str(&line, "id") else {
            continue; // metadata line or another `$set`
        };
        if !seen.insert(id.to_string()) {
            continue; // an older copy of a record already judged
        }
        if let Some(target) = &rewind {
            if target == id {
                rewind = None;
            }
            continue; // undone by the rewind
        }
        if let Some((t, m)) = gemini_tokens(&line) {
            return Ok(found(t, m));
        }
    }
    Ok(empty())
}

fn read_legacy<R: Read + Seek>(path: &Path, mut src: R, len: u64) -> anyhow::Result<Usage> {
    if len > LEGACY_MAX_BYTES {
        return Err(Error::data(
            path,
            format!(
                "Gemini session JSON is {len} bytes, over the {} MiB limit for single-document \
                 sessions",
                LEGACY_MAX_BYTES / (1024 * 1024)
            ),
        )
        .into());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    src.seek(SeekFrom::Start(0))
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;
    src.take(len)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "cannot read transcript", e))?;
    let doc: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::data(path, format!("not a valid Gemini session JSON: {e}")))?;
    let messages = doc
        .as_object()
        .and_then(|d| d.get("messages"))
        .and_then(Value::as_array)
        .ok_or_else(|| Error::data(path, "Gemini session JSON has no messages array"))?;
    Ok(last_in_list(messages, None, &HashSet::new()).map_or_else(empty, |(t, m)| found(t, m)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::read_usage as read_transcript;
    use crate::agents::tests::read_lines_detected;
    use crate::system::error::{exit, exit_code_of};
    use crate::transcripts::usage::testutil::write_temp;

    fn meta() -> String {
        r#"{"sessionId":"0ab84937-9fe7-4284-986a-33c832af0b6a","projectHash":"9da8b3df","startTime":"2026-04-23T12:52:52.759Z","lastUpdated":"2026-04-23T12:52:52.759Z","kind":"main"}"#.to_string()
    }

    fn set_updated() -> String {
        r#"{"$set":{"lastUpdated":"2026-04-23T12:53:10.000Z"}}"#.to_string()
    }

    fn user(id: &str) -> String {
        format!(
            r#"{{"id":"{id}","timestamp":"2026-04-23T12:53:00.000Z","type":"user","content":[{{"text":"do it"}}]}}"#
        )
    }

    fn info(id: &str) -> String {
        format!(
            r#"{{"id":"{id}","timestamp":"2026-04-23T12:53:00.000Z","type":"info","content":"Switched model"}}"#
        )
    }

    fn gemini(id: &str, model: &str, input: Option<u64>) -> String {
        let tokens = input.map_or("null".to_string(), |i| {
            format!(
                r#"{{"input":{i},"output":185,"cached":0,"thoughts":306,"tool":0,"total":{}}}"#,
                i + 491
            )
        });
        format!(
            r#"{{"id":"{id}","timestamp":"2026-04-23T12:53:05.000Z","type":"gemini","content":"done","thoughts":[],"tokens":{tokens},"model":"{model}","toolCalls":[]}}"#
        )
    }

    fn read_lines(lines: &[String]) -> Usage {
        read_lines_detected("session-2026-04-23T12-52-0ab84937.jsonl", lines, read)
    }

    #[test]
    fn reappended_ids_and_set_lines_last_copy_wins() {
        let u = read_lines(&[
            meta(),
            info("i1"),
            set_updated(),
            user("u1"),
            gemini("g1", "gemini-3-flash-preview", None),
            set_updated(),
            gemini("g1", "gemini-3-flash-preview", Some(13906)),
            user("u2"),
            gemini("g2", "gemini-3.1-pro-preview", Some(40238)),
            set_updated(),
            gemini("g2", "gemini-3.1-pro-preview", Some(40238)),
            info("i2"),
            set_updated(),
        ]);
        assert_eq!(u.tokens, Some(40_238));
        assert_eq!(u.model.as_deref(), Some("gemini-3.1-pro-preview"));
        assert_eq!(u.window, Some(GEMINI_WINDOW));
        assert!(!u.compacted);
        assert_eq!(u.agent, super::super::ID);
        assert_eq!(u.malformed_lines, 0);
    }

    #[test]
    fn a_later_copy_without_tokens_hides_the_earlier_one() {
        let u = read_lines(&[
            meta(),
            gemini("g1", "gemini-3-flash-preview", Some(13906)),
            gemini("g2", "gemini-3-flash-preview", Some(20000)),
            gemini("g2", "gemini-3-flash-preview", None),
        ]);
        assert_eq!(u.tokens, Some(13_906));
    }

    #[test]
    fn rewind_drops_the_target_and_what_follows() {
        let u = read_lines(&[
            meta(),
            user("u1"),
            gemini("g1", "gemini-2.5-pro", Some(1000)),
            user("u2"),
            gemini("g2", "gemini-2.5-pro", Some(2000)),
            r#"{"$rewindTo":"u2"}"#.to_string(),
            set_updated(),
        ]);
        assert_eq!(u.tokens, Some(1000));

        // A message appended after the rewind counts.
        let u = read_lines(&[
            meta(),
            gemini("g1", "gemini-2.5-pro", Some(1000)),
            user("u2"),
            gemini("g2", "gemini-2.5-pro", Some(2000)),
            r#"{"$rewindTo":"u2"}"#.to_string(),
            gemini("g3", "gemini-2.5-flash", Some(1500)),
        ]);
        assert_eq!(u.tokens, Some(1500));
        assert_eq!(u.model.as_deref(), Some("gemini-2.5-flash"));

        // An unknown target clears everything.
        let u = read_lines(&[
            meta(),
            gemini("g1", "gemini-2.5-pro", Some(1000)),
            r#"{"$rewindTo":"nope"}"#.to_string(),
        ]);
        assert_eq!(u.tokens, None);
    }

    #[test]
    fn set_messages_replaces_the_list() {
        let list = format!(
            r#"{{"$set":{{"messages":[{},{},{}]}}}}"#,
            user("u9"),
            gemini("g9", "gemini-2.5-pro", Some(777)),
            user("u10")
        );
        let u = read_lines(&[
            meta(),
            gemini("g1", "gemini-2.5-pro", Some(99_999)),
            list.clone(),
            user("u11"),
        ]);
        assert_eq!(u.tokens, Some(777));
        // A record appended after the replacement still wins.
        let u = read_lines(&[meta(), list, gemini("g12", "gemini-2.5-pro", Some(888))]);
        assert_eq!(u.tokens, Some(888));
    }

    #[test]
    fn legacy_single_json_document() {
        let doc = format!(
            "{{\n  \"sessionId\": \"eefc44a3\",\n  \"projectHash\": \"ab14fe39\",\n  \"startTime\": \"2025-10-05T07:11:03.979Z\",\n  \"lastUpdated\": \"2025-10-05T07:16:07.473Z\",\n  \"messages\": [\n    {},\n    {},\n    {},\n    {}\n  ]\n}}\n",
            user("u1"),
            gemini("g1", "gemini-2.5-pro", Some(33471)),
            gemini("g2", "gemini-2.5-pro", Some(37206)),
            user("u2"),
        );
        let (_d, path) = write_temp("session-2025-10-05T07-11-eefc44a3.json", doc.as_bytes());
        let u = read_transcript(&path, None).unwrap();
        assert_eq!(u.agent, super::super::ID);
        assert_eq!(u.tokens, Some(37_206));
        assert_eq!(u.window, Some(1_048_576));
        assert_eq!(u.model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(u.malformed_lines, 0);

        // The same document on one line reads the same.
        let one_line: Value = serde_json::from_str(&doc).unwrap();
        let (_d, path) = write_temp("s.json", one_line.to_string().as_bytes());
        assert_eq!(read(&path).unwrap().tokens, Some(37_206));
    }

    #[test]
    fn legacy_broken_document_is_a_data_error() {
        let (_d, path) = write_temp(
            "session-x.json",
            b"{\n  \"sessionId\": \"s\",\n  \"messages\": [\n",
        );
        let err = read(&path).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::DATA);
        assert!(err.to_string().contains("session-x.json"), "{err}");
    }

    #[test]
    fn oversized_legacy_document_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-big.json");
        std::fs::write(&path, b"{").unwrap();
        // Sparse: costs no disk.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(LEGACY_MAX_BYTES + 1).unwrap();
        let err = read(&path).unwrap_err();
        assert_eq!(exit_code_of(&err), exit::DATA);
        assert!(err.to_string().contains("over the 256 MiB limit"), "{err}");
    }

    #[test]
    fn no_gemini_message_with_tokens() {
        let u = read_lines(&[meta(), user("u1"), gemini("g1", "gemini-2.5-pro", None)]);
        assert_eq!(u.tokens, None);
        assert_eq!(u.window, Some(GEMINI_WINDOW));
    }
}
