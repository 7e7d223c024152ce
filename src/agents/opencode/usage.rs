//! The session record ctxkeep's OpenCode plugin keeps (docs/agents.md, "Use with
//! OpenCode"): JSONL, one event a line as OpenCode sent it
//! to the plugin (`{type, properties}`), plus the plugin's own `chat.message`
//! and `chat.params` lines.
//!
//! Scanning from the end, the answer is the first of:
//! * a `message.updated` line of a finished assistant message of the session's own (not the
//!   summarizer's: `summary` unset) with tokens: context = `input` + `cache.read` +
//!   `cache.write` (OpenCode counts cached tokens apart from `input`); the window is the
//!   model's `limit.context` from the last `chat.params` line before it;
//! * a `session.compacted` line: the older token count is stale, and the new one unknown until the
//!   next reply; the token count before it is the compaction's starting point.

use std::io::{Read, Seek};
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::usage::{
    get_obj, get_str, get_u64, read_jsonl, Scanner, Usage, SIDE_SEARCH_BUDGET,
};

struct Reply {
    tokens: u64,
    model: Option<String>,
}

fn info(line: &Map<String, Value>) -> Option<&Map<String, Value>> {
    if get_str(line, "type") != Some("message.updated") {
        return None;
    }
    get_obj(get_obj(line, "properties")?, "info")
}

fn reply(line: &Map<String, Value>) -> Option<Reply> {
    let info = info(line)?;
    if get_str(info, "role") != Some("assistant") || info.get("summary") == Some(&Value::Bool(true))
    {
        return None;
    }
    let tokens = get_obj(info, "tokens")?;
    let cache = get_obj(tokens, "cache");
    let cached = |k: &str| cache.and_then(|c| get_u64(c, k)).unwrap_or(0);
    let context = get_u64(tokens, "input")? + cached("read") + cached("write");
    if context == 0 {
        return None;
    }
    Some(Reply {
        tokens: context,
        model: get_str(info, "modelID").map(str::to_string),
    })
}

/// A `chat.params` line's model window.
fn window(line: &Map<String, Value>) -> Option<u64> {
    if get_str(line, "type") != Some("chat.params") {
        return None;
    }
    let model = get_obj(get_obj(line, "properties")?, "model")?;
    get_u64(get_obj(model, "limit")?, "context").filter(|w| *w > 0)
}

fn compacted(line: &Map<String, Value>) -> bool {
    get_str(line, "type") == Some("session.compacted")
}

/// As `crate::agents::read_usage`, over the first `len` bytes of `src`.
pub fn read_from<R: Read + Seek>(path: &Path, src: R, len: u64) -> anyhow::Result<Usage> {
    read_jsonl(path, src, len, scan)
}

fn scan<R: Read + Seek>(scanner: &mut Scanner<R>) -> anyhow::Result<Usage> {
    let mut usage = Usage::empty(super::ID);
    let mut found = false;
    let mut floor = None;
    while let Some((offset, line)) = scanner.next_object()? {
        if !found {
            if let Some(r) = reply(&line) {
                if usage.compacted {
                    usage.pre_tokens = Some(r.tokens);
                } else {
                    usage.tokens = Some(r.tokens);
                }
                usage.model = r.model;
                found = true;
                floor = Some(offset.saturating_sub(SIDE_SEARCH_BUDGET));
                continue;
            }
            if compacted(&line) && !usage.compacted {
                usage.compacted = true;
                continue;
            }
        }
        if let Some(w) = window(&line) {
            usage.window = Some(w);
            if found {
                break;
            }
        }
        if floor.is_some_and(|f| offset < f) {
            break;
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use crate::agents::{read_usage, Agent};
    use crate::transcripts::usage::testutil::{jsonl, write_temp};

    fn reply(input: u64, cached: u64, summary: bool) -> String {
        format!(
            r#"{{"type":"message.updated","properties":{{"sessionID":"s1","info":{{"id":"msg_{input}","role":"assistant","mode":"build","agent":"build","cost":0,"tokens":{{"total":{},"input":{input},"output":30,"reasoning":0,"cache":{{"write":0,"read":{cached}}}}},"modelID":"e2e","providerID":"standin","time":{{"created":1,"completed":2}},"sessionID":"s1","finish":"tool-calls"{}}}}}}}"#,
            input + cached + 30,
            if summary { r#","summary":true"# } else { "" }
        )
    }
    const PARAMS: &str = r#"{"type":"chat.params","properties":{"sessionID":"s1","model":{"id":"e2e","providerID":"standin","limit":{"context":200000,"output":8192}}}}"#;
    const COMPACTED: &str =
        r#"{"type":"session.compacted","properties":{"sessionID":"s1","time":3}}"#;

    #[test]
    fn the_last_reply_gives_the_context_with_its_cache_and_the_window() {
        let (_d, path) = write_temp(
            "s1.jsonl",
            &jsonl(&[
                PARAMS.to_string(),
                reply(5_000, 0, false),
                reply(7_000, 1_000, false),
            ]),
        );
        let u = read_usage(&path, None).unwrap();
        assert_eq!(u.agent, "opencode");
        assert_eq!((u.tokens, u.window), (Some(8_000), Some(200_000)));
        assert_eq!(u.model.as_deref(), Some("e2e"));
        assert!(!u.compacted);
    }

    #[test]
    fn a_compaction_makes_the_older_token_count_stale_and_the_summarizer_is_not_the_session() {
        let (_d, path) = write_temp(
            "s1.jsonl",
            &jsonl(&[
                PARAMS.to_string(),
                reply(195_000, 0, false),
                reply(196_000, 0, true),
                COMPACTED.to_string(),
            ]),
        );
        let u = read_usage(&path, Some(Agent::OpenCode)).unwrap();
        assert!(u.compacted);
        assert_eq!((u.pre_tokens, u.tokens), (Some(195_000), None));
        assert_eq!(u.window, Some(200_000));
        let (_d, path) = write_temp(
            "s1.jsonl",
            &jsonl(&[
                PARAMS.to_string(),
                reply(195_000, 0, false),
                COMPACTED.to_string(),
                reply(3_000, 0, false),
            ]),
        );
        let u = read_usage(&path, None).unwrap();
        assert_eq!((u.tokens, u.compacted), (Some(3_000), false));
    }
}
