//! Qwen Code chat records (docs/agents.md, "Qwen Code chat records"): JSONL,
//! one record a line, in Claude Code's envelope (`uuid`, `parentUuid`,
//! `sessionId`, `type`) with Gemini's content (`message.parts`).
//!
//! Scanning from the end, the answer is the first of:
//! * an `assistant` record with `usageMetadata.promptTokenCount` above 0: context = that
//!   count (it includes cached tokens); the window is the record's `contextWindowSize`;
//! * a `system` record of subtype `chat_compression`: the older token count is stale, and the new
//!   one unknown until the next reply: its `systemPayload.info.newTokenCount` is Qwen Code's
//!   estimate from the old token count less what it dropped, which can be far off.

use std::io::{Read, Seek};
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::usage::{get_obj, get_str, get_u64, read_jsonl, Scanner, Usage};

struct Reply {
    tokens: u64,
    window: Option<u64>,
    model: Option<String>,
}

fn reply(line: &Map<String, Value>) -> Option<Reply> {
    if get_str(line, "type") != Some("assistant") {
        return None;
    }
    let tokens = get_u64(get_obj(line, "usageMetadata")?, "promptTokenCount")?;
    if tokens == 0 {
        return None;
    }
    Some(Reply {
        tokens,
        window: get_u64(line, "contextWindowSize").filter(|w| *w > 0),
        model: get_str(line, "model").map(str::to_string),
    })
}

/// A compression record's token count before it.
fn compression(line: &Map<String, Value>) -> Option<Option<u64>> {
    if get_str(line, "type") != Some("system")
        || get_str(line, "subtype") != Some("chat_compression")
    {
        return None;
    }
    let info = get_obj(line, "systemPayload").and_then(|p| get_obj(p, "info"));
    Some(info.and_then(|i| get_u64(i, "originalTokenCount")))
}

/// As `crate::agents::read_usage`, over the first `len` bytes of `src`.
pub fn read_from<R: Read + Seek>(path: &Path, src: R, len: u64) -> anyhow::Result<Usage> {
    read_jsonl(path, src, len, scan)
}

fn scan<R: Read + Seek>(scanner: &mut Scanner<R>) -> anyhow::Result<Usage> {
    let mut usage = Usage::empty(super::ID);
    while let Some((offset, line)) = scanner.next_object()? {
        if let Some(r) = reply(&line) {
            usage.tokens = Some(r.tokens);
            usage.window = r.window;
            usage.model = r.model;
            return Ok(usage);
        }
        if let Some(before) = compression(&line) {
            usage.compacted = true;
            usage.compaction_trigger = Some("auto".to_string());
            usage.pre_tokens = before;
            usage.tokens = None;
            // The window and model still matter: from the last reply before it.
            if let Some(r) = scanner.find_back(offset, reply)? {
                usage.window = r.window;
                usage.model = r.model;
            }
            return Ok(usage);
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use crate::agents::{read_usage, Agent};
    use crate::transcripts::usage::testutil::{jsonl, write_temp};

    fn assistant(prompt: u64) -> String {
        format!(
            r#"{{"uuid":"a{prompt}","parentUuid":"x","sessionId":"s1","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","provenance":"assistant_output","cwd":"/p","version":"0.24.4","model":"qwen3-coder-plus","message":{{"role":"model","parts":[{{"text":"ok"}}]}},"usageMetadata":{{"promptTokenCount":{prompt},"candidatesTokenCount":20,"totalTokenCount":{},"cachedContentTokenCount":0}},"contextWindowSize":262144}}"#,
            prompt + 20
        )
    }

    const USER: &str = r#"{"uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","cwd":"/p","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}"#;
    const COMPRESSED: &str = r#"{"uuid":"c1","parentUuid":"x","sessionId":"s1","timestamp":"2026-01-01T00:00:03.000Z","type":"system","subtype":"chat_compression","systemPayload":{"info":{"originalTokenCount":240000,"newTokenCount":1200,"compressionStatus":1}}}"#;

    #[test]
    fn the_last_reply_gives_the_context_and_the_window() {
        let (_d, path) = write_temp(
            "s1.jsonl",
            &jsonl(&[USER.to_string(), assistant(5_000), assistant(7_000)]),
        );
        // Detected as Qwen Code's, not Claude Code's, despite the envelope.
        let u = read_usage(&path, None).unwrap();
        assert_eq!(u.agent, "qwen-code");
        assert_eq!(u.tokens, Some(7_000));
        assert_eq!(u.window, Some(262_144));
        assert_eq!(u.model.as_deref(), Some("qwen3-coder-plus"));
        assert!(!u.compacted);
    }

    #[test]
    fn a_compression_makes_the_older_token_count_stale() {
        let (_d, path) = write_temp(
            "s1.jsonl",
            &jsonl(&[assistant(240_000), COMPRESSED.to_string(), USER.to_string()]),
        );
        let u = read_usage(&path, Some(Agent::QwenCode)).unwrap();
        assert!(u.compacted);
        assert_eq!((u.pre_tokens, u.tokens), (Some(240_000), None));
        assert_eq!(u.window, Some(262_144));
    }
}
