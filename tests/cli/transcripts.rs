//! Small transcripts in each agent's real shape (docs/agents.md, "Transcript formats"), written by the
//! tests themselves, with the traps each format sets.

#![allow(dead_code)]

/// A Claude Code main-chain assistant line; context = input + create + read.
pub fn claude_assistant(id: &str, input: u64, create: u64, read: u64) -> String {
    format!(
        r#"{{"parentUuid":"p-{id}","isSidechain":false,"userType":"external","cwd":"/home/u/proj","sessionId":"sess-1","version":"2.1.39","gitBranch":"main","message":{{"model":"claude-opus-4-6","id":"{id}","type":"message","role":"assistant","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":{input},"cache_creation_input_tokens":{create},"cache_read_input_tokens":{read},"output_tokens":42,"service_tier":"standard"}}}},"requestId":"req-{id}","type":"assistant","uuid":"u-{id}","timestamp":"2026-02-11T21:10:52.295Z"}}"#
    )
}

pub fn claude_user(text: &str) -> String {
    format!(
        r#"{{"parentUuid":"x","isSidechain":false,"userType":"external","sessionId":"sess-1","type":"user","message":{{"role":"user","content":"{text}"}},"uuid":"u-{text}","timestamp":"2026-02-11T21:11:00.000Z"}}"#
    )
}

/// A subagent's line inside the parent file: must never count.
pub fn claude_sidechain(read: u64) -> String {
    claude_assistant("msg_side", 4, 0, read).replace(
        r#""isSidechain":false"#,
        r#""isSidechain":true,"agentId":"a1b2""#,
    )
}

/// `agent_progress` embeds a subagent's usage under a main-chain line.
pub fn claude_agent_progress(read: u64) -> String {
    format!(
        r#"{{"parentUuid":"x","isSidechain":false,"sessionId":"sess-1","type":"progress","data":{{"type":"agent_progress","agentId":"a1b2","message":{{"type":"assistant","message":{{"model":"claude-haiku-4-5","id":"msg_sub","role":"assistant","content":[],"usage":{{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":{read},"output_tokens":50}}}}}}}},"uuid":"pr-{read}","timestamp":"2026-02-11T21:12:00.000Z"}}"#
    )
}

/// A rate-limit placeholder with all-zero usage.
pub fn claude_synthetic_error() -> String {
    r#"{"parentUuid":"x","isSidechain":false,"type":"assistant","isApiErrorMessage":true,"message":{"id":"e1","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"limit"}],"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"uuid":"err-1","timestamp":"2026-02-11T21:20:00.000Z"}"#.to_string()
}

pub fn claude_compact_boundary(post: Option<u64>) -> String {
    let post = post
        .map(|p| format!(r#","postTokens":{p}"#))
        .unwrap_or_default();
    format!(
        r#"{{"parentUuid":null,"logicalParentUuid":"u-last","isSidechain":false,"sessionId":"sess-1","type":"system","subtype":"compact_boundary","content":"Conversation compacted","timestamp":"2026-02-11T21:18:41.543Z","uuid":"cb-1","level":"info","compactMetadata":{{"trigger":"auto","preTokens":167094{post}}}}}"#
    )
}

pub fn codex_meta() -> String {
    r#"{"timestamp":"2026-02-23T12:19:38.123Z","type":"session_meta","payload":{"id":"019c8a70","cwd":"/home/u/proj","originator":"codex_cli_rs","cli_version":"0.104.0"}}"#.to_string()
}

pub fn codex_turn_context(model: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-02-23T12:19:42.600Z","type":"turn_context","payload":{{"turn_id":"t1","model":"{model}"}}}}"#
    )
}

/// `info: null` carries only rate limits.
pub fn codex_token_count_null() -> String {
    r#"{"timestamp":"2026-02-23T12:19:43.421Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":19.0}}}}"#.to_string()
}

/// `last` = (input, total); `cumulative` is the session total, never the context.
pub fn codex_token_count(last: (u64, u64), cumulative: u64, window: Option<u64>) -> String {
    let (i, t) = last;
    let w = window.map_or("null".to_string(), |w| w.to_string());
    format!(
        r#"{{"timestamp":"2026-02-23T12:19:52.689Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{cumulative},"cached_input_tokens":0,"output_tokens":0,"total_tokens":{cumulative}}},"last_token_usage":{{"input_tokens":{i},"cached_input_tokens":0,"output_tokens":{},"total_tokens":{t}}},"model_context_window":{w}}},"rate_limits":null}}}}"#,
        t.saturating_sub(i)
    )
}

pub fn gemini_meta() -> String {
    r#"{"sessionId":"0ab84937","projectHash":"9da8b3df","startTime":"2026-04-23T12:52:52.759Z","lastUpdated":"2026-04-23T12:52:52.759Z","kind":"main"}"#.to_string()
}

pub fn gemini_user(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","timestamp":"2026-04-23T12:53:00.000Z","type":"user","content":[{{"text":"do it"}}]}}"#
    )
}

pub fn gemini_reply(id: &str, input: u64) -> String {
    format!(
        r#"{{"id":"{id}","timestamp":"2026-04-23T12:53:05.000Z","type":"gemini","content":"done","tokens":{{"input":{input},"output":185,"cached":0,"thoughts":306,"tool":0,"total":{}}},"model":"gemini-2.5-pro","toolCalls":[]}}"#,
        input + 491
    )
}

/// Lines joined with newlines, each terminated.
pub fn jsonl(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// A Claude Code assistant line calling tool `name` with `input` (context = `context`).
pub fn claude_tool_use(id: &str, name: &str, input: &str, context: u64) -> String {
    format!(
        r#"{{"parentUuid":"p-{id}","isSidechain":false,"userType":"external","cwd":"/home/u/proj","sessionId":"sess-1","version":"2.1.39","message":{{"model":"claude-opus-4-6","id":"m-{id}","type":"message","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}],"usage":{{"input_tokens":6,"cache_creation_input_tokens":1000,"cache_read_input_tokens":{},"output_tokens":42}}}},"type":"assistant","uuid":"u-{id}","timestamp":"2026-02-11T21:12:00.000Z"}}"#,
        context - 1_006
    )
}

/// The result of tool call `id`.
pub fn claude_tool_result(id: &str, is_error: bool, content: &str) -> String {
    format!(
        r#"{{"parentUuid":"u-{id}","isSidechain":false,"userType":"external","sessionId":"sess-1","type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{id}","type":"tool_result","content":"{content}","is_error":{is_error}}}]}},"uuid":"r-{id}","timestamp":"2026-02-11T21:12:01.000Z"}}"#
    )
}

/// [`claude_assistant`] on another model.
pub fn claude_assistant_on(model: &str, id: &str, context: u64) -> String {
    claude_assistant(id, 6, 1_000, context - 1_006).replace("claude-opus-4-6", model)
}

/// A compaction boundary as Claude Code writes it: its trigger (`auto`,
/// `manual`) and its own token count before the compaction.
pub fn claude_compaction(trigger: &str, pre: u64) -> String {
    claude_compact_boundary(None)
        .replace(r#""trigger":"auto""#, &format!(r#""trigger":"{trigger}""#))
        .replace("167094", &pre.to_string())
}
