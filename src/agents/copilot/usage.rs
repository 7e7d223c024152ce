//! Copilot CLI session logs (docs/agents.md, "Use with GitHub Copilot CLI"):
//! `~/.copilot/session-state/<session>/events.jsonl`, one event a line
//! (`type`, `data`, `id`, `timestamp`, `parentId`).
//!
//! Scanning from the end, the answer is the first of:
//! * a `session.usage_record` of the main conversation (`interactionType:
//!   conversation-agent`) with `usage.inputTokens` above 0: context = that count, the whole
//!   prompt the provider was sent (cached tokens included: for an Anthropic provider Copilot CLI
//!   adds the cache reads and writes to it, seen with 1.0.102); the window is its
//!   `maxPromptTokens`, the model its `model`; when a successful `session.compaction_complete`
//!   lies between it and the call before, it is the first reading after that compaction
//!   (`compacted`, with the call before's as `pre_tokens`);
//! * a `session.compaction_complete` that succeeded: the older token count is stale; the context is
//!   Copilot CLI's own estimate of what is left (`postCompactionTokens`) until the next call
//!   reports one.

use std::io::{Read, Seek};
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::usage::{
    get_obj, get_str, get_u64, read_jsonl, Scanner, Usage, SIDE_SEARCH_BUDGET,
};

struct Call {
    tokens: u64,
    window: Option<u64>,
    model: Option<String>,
}

fn data(line: &Map<String, Value>) -> Option<&Map<String, Value>> {
    get_obj(line, "data")
}

/// A model call of the main conversation, with its prompt's size.
fn call(line: &Map<String, Value>) -> Option<Call> {
    if get_str(line, "type") != Some("session.usage_record") {
        return None;
    }
    let usage = get_obj(data(line)?, "usage")?;
    if get_str(usage, "interactionType").is_some_and(|k| k != "conversation-agent") {
        return None;
    }
    let tokens = get_u64(usage, "inputTokens").filter(|t| *t > 0)?;
    Some(Call {
        tokens,
        window: get_u64(usage, "maxPromptTokens").filter(|w| *w > 0),
        model: get_str(usage, "model").map(str::to_string),
    })
}

/// A compaction that was applied: its trigger and Copilot CLI's estimate after it.
fn compaction(line: &Map<String, Value>) -> Option<(Option<String>, Option<u64>)> {
    if get_str(line, "type") != Some("session.compaction_complete") {
        return None;
    }
    let d = data(line)?;
    if d.get("success").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let trigger = get_str(d, "trigger").map(|t| match t {
        "threshold" => "auto".to_string(),
        other => other.to_string(),
    });
    Some((trigger, get_u64(d, "postCompactionTokens")))
}

/// As `crate::agents::read_usage`, over the first `len` bytes of `src`.
pub fn read_from<R: Read + Seek>(path: &Path, src: R, len: u64) -> anyhow::Result<Usage> {
    read_jsonl(path, src, len, scan)
}

fn scan<R: Read + Seek>(scanner: &mut Scanner<R>) -> anyhow::Result<Usage> {
    let mut usage = Usage::empty(super::ID);
    while let Some((offset, line)) = scanner.next_object()? {
        if let Some(c) = call(&line) {
            usage.tokens = Some(c.tokens);
            usage.window = c.window;
            usage.model = c.model;
            // Whether a compaction came between this call and the one before.
            let floor = offset.saturating_sub(SIDE_SEARCH_BUDGET);
            while let Some((off, line)) = scanner.next_object()? {
                if let Some(c) = call(&line) {
                    if usage.compacted {
                        usage.pre_tokens = Some(c.tokens);
                    }
                    break;
                }
                if let Some((trigger, _)) = compaction(&line) {
                    usage.compacted = true;
                    usage.compaction_trigger = trigger;
                }
                if off < floor {
                    break;
                }
            }
            return Ok(usage);
        }
        if let Some((trigger, after)) = compaction(&line) {
            usage.compacted = true;
            usage.compaction_trigger = trigger;
            usage.tokens = after;
            // The window, the model and the token count before: from the last call before it.
            if let Some(c) = scanner.find_back(offset, call)? {
                usage.pre_tokens = Some(c.tokens);
                usage.window = c.window;
                usage.model = c.model;
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

    fn call(input: u64) -> String {
        format!(
            r#"{{"type":"session.usage_record","data":{{"usage":{{"model":"gpt-4.1","inputTokens":{input},"outputTokens":20,"cacheReadTokens":0,"cacheWriteTokens":0,"initiator":"agent","interactionType":"conversation-agent","maxPromptTokens":200000,"maxOutputTokens":16384}}}},"id":"u{input}","timestamp":"2026-01-01T00:00:02.000Z","parentId":"x"}}"#
        )
    }

    const START: &str = r#"{"type":"session.start","data":{"sessionId":"s1","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102","selectedModel":"gpt-4.1"},"id":"e1","timestamp":"2026-01-01T00:00:00.000Z","parentId":null}"#;
    const COMPACTED: &str = r#"{"type":"session.compaction_complete","data":{"success":true,"outcome":"applied","preCompactionTokens":10798,"postCompactionTokens":10641,"trigger":"threshold","summaryContent":"<summary>s</summary>"},"id":"c1","timestamp":"2026-01-01T00:00:03.000Z","parentId":"x"}"#;

    #[test]
    fn the_last_call_gives_the_context_and_the_window() {
        let (_d, path) = write_temp(
            "events.jsonl",
            &jsonl(&[START.to_string(), call(5_000), call(7_000)]),
        );
        let u = read_usage(&path, None).unwrap();
        assert_eq!(u.agent, "copilot");
        assert_eq!(u.tokens, Some(7_000));
        assert_eq!(u.window, Some(200_000));
        assert_eq!(u.model.as_deref(), Some("gpt-4.1"));
        assert!(!u.compacted);
    }

    #[test]
    fn a_compaction_gives_its_estimate_until_the_next_call() {
        let (_d, path) = write_temp(
            "events.jsonl",
            &jsonl(&[call(170_000), COMPACTED.to_string()]),
        );
        let u = read_usage(&path, Some(Agent::Copilot)).unwrap();
        assert!(u.compacted);
        assert_eq!(u.compaction_trigger.as_deref(), Some("auto"));
        assert_eq!((u.pre_tokens, u.tokens), (Some(170_000), Some(10_641)));
        assert_eq!(u.window, Some(200_000));
        let (_d, path) = write_temp(
            "events.jsonl",
            &jsonl(&[call(170_000), COMPACTED.to_string(), call(12_000)]),
        );
        let u = read_usage(&path, Some(Agent::Copilot)).unwrap();
        assert!(u.compacted, "the first reading after it");
        assert_eq!((u.pre_tokens, u.tokens), (Some(170_000), Some(12_000)));
        let (_d, path) = write_temp(
            "events.jsonl",
            &jsonl(&[
                call(170_000),
                COMPACTED.to_string(),
                call(12_000),
                call(13_000),
            ]),
        );
        let u = read_usage(&path, Some(Agent::Copilot)).unwrap();
        assert!(!u.compacted);
        assert_eq!(u.tokens, Some(13_000));
    }
}
