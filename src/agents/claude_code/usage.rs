//! Claude Code transcript JSONL (docs/agents.md, "Claude Code transcripts").
//!
//! Scanning from the end, the answer is the first of:
//! * a qualifying assistant line: top-level `type:"assistant"`, `isSidechain != true`, not
//!   `isApiErrorMessage`, `message.model != "<synthetic>"`, with `message.usage` carrying
//!   `input_tokens`; context = input + cache_creation + cache_read. Duplicate `message.id` lines
//!   (one per content block) repeat the same input/cache token counts, so the last one is as good
//!   as any; only `output_tokens` grows, and it is not context.
//! * a main-chain `system`/`compact_boundary` line: the older usage is stale. Tokens are
//!   `compactMetadata.postTokens` when present, else unknown.
//!
//! Everything else is ignored: `progress` lines (whose `agent_progress` embeds a subagent's usage
//! under `data.message.message.usage`), sidechain lines, summaries, snapshots, user lines.

use std::io::{Read, Seek};
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::usage::{
    get_obj, get_str, get_u64, input_context_tokens, open_transcript, read_jsonl, Scanner, Usage,
};

/// A usage record found on a qualifying assistant line.
struct AssistantUsage {
    tokens: u64,
    model: Option<String>,
}

/// The context held by a qualifying main-chain assistant line, or None if the line does not
/// qualify.
fn assistant_usage(line: &Map<String, Value>) -> Option<AssistantUsage> {
    if get_str(line, "type") != Some("assistant") {
        return None;
    }
    if line.get("isSidechain") == Some(&Value::Bool(true))
        || line.get("isApiErrorMessage") == Some(&Value::Bool(true))
    {
        return None;
    }
    let message = get_obj(line, "message")?;
    let model = get_str(message, "model");
    if model == Some("<synthetic>") {
        return None;
    }
    let tokens = input_context_tokens(get_obj(message, "usage")?)?;
    // An all-zero usage is an error placeholder (§1.6), never a real context: a request always
    // carries at least the system prompt.
    if tokens == 0 {
        return None;
    }
    Some(AssistantUsage {
        tokens,
        model: model.map(str::to_string),
    })
}

/// A main-chain compact boundary's metadata: (trigger, preTokens, postTokens).
fn compact_boundary(
    line: &Map<String, Value>,
) -> Option<(Option<String>, Option<u64>, Option<u64>)> {
    if get_str(line, "type") != Some("system")
        || get_str(line, "subtype") != Some("compact_boundary")
        || line.get("isSidechain") == Some(&Value::Bool(true))
    {
        return None;
    }
    // The transcript writes `compactMetadata`; the SDK stream spells it `compact_metadata`.
    let meta = get_obj(line, "compactMetadata").or_else(|| get_obj(line, "compact_metadata"));
    let Some(meta) = meta else {
        return Some((None, None, None));
    };
    let trigger = get_str(meta, "trigger").map(str::to_string);
    let pre = get_u64(meta, "preTokens").or_else(|| get_u64(meta, "pre_tokens"));
    let post = get_u64(meta, "postTokens").or_else(|| get_u64(meta, "post_tokens"));
    Some((trigger, pre, post))
}

pub fn read(path: &Path) -> anyhow::Result<Usage> {
    let (file, len) = open_transcript(path)?;
    read_from(path, file, len)
}

/// As [`read`], over the first `len` bytes of `src`; `path` names it in errors.
pub fn read_from<R: Read + Seek>(path: &Path, src: R, len: u64) -> anyhow::Result<Usage> {
    read_jsonl(path, src, len, scan)
}

pub(crate) fn scan<R: Read + Seek>(scanner: &mut Scanner<R>) -> anyhow::Result<Usage> {
    let mut usage = Usage::empty(super::ID);
    while let Some((offset, line)) = scanner.next_object()? {
        if let Some(found) = assistant_usage(&line) {
            usage.tokens = Some(found.tokens);
            usage.model = found.model;
            return Ok(usage);
        }
        if let Some((trigger, pre, post)) = compact_boundary(&line) {
            usage.compacted = true;
            usage.compaction_trigger = trigger;
            usage.pre_tokens = pre;
            usage.tokens = post;
            // The model is still worth knowing (for the window): take it from the last
            // qualifying line before the boundary, within a bounded distance.
            if let Some(found) = scanner.find_back(offset, assistant_usage)? {
                usage.model = found.model;
            }
            return Ok(usage);
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::read_usage as read_transcript;
    use crate::transcripts::usage::testutil::{jsonl, write_temp};
    use crate::transcripts::usage::DIAG_WINDOW;

    /// A real-shaped main-chain assistant line (Claude Code 2.1.x envelope).
    fn assistant(id: &str, model: &str, input: u64, create: u64, read: u64, out: u64) -> String {
        format!(
            r#"{{"parentUuid":"p-{id}","isSidechain":false,"userType":"external","cwd":"/home/u/proj","sessionId":"sess-1","version":"2.1.39","gitBranch":"main","message":{{"model":"{model}","id":"{id}","type":"message","role":"assistant","content":[{{"type":"text","text":"ok"}}],"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":{input},"cache_creation_input_tokens":{create},"cache_read_input_tokens":{read},"output_tokens":{out},"service_tier":"standard","cache_creation":{{"ephemeral_1h_input_tokens":{create},"ephemeral_5m_input_tokens":0}}}}}},"requestId":"req-{id}","type":"assistant","uuid":"u-{id}-{out}","timestamp":"2026-02-11T21:10:52.295Z"}}"#
        )
    }

    fn sidechain_assistant(id: &str, input: u64, read: u64) -> String {
        assistant(id, "claude-haiku-4-5", input, 0, read, 10).replace(
            r#""isSidechain":false"#,
            r#""isSidechain":true,"agentId":"a1b2""#,
        )
    }

    fn user(text: &str) -> String {
        format!(
            r#"{{"parentUuid":"x","isSidechain":false,"userType":"external","sessionId":"sess-1","type":"user","message":{{"role":"user","content":"{text}"}},"uuid":"u-{text}","timestamp":"2026-02-11T21:11:00.000Z"}}"#
        )
    }

    fn compact_boundary_line(post: Option<u64>) -> String {
        let post = post
            .map(|p| format!(r#","postTokens":{p}"#))
            .unwrap_or_default();
        format!(
            r#"{{"parentUuid":null,"logicalParentUuid":"u-last","isSidechain":false,"userType":"external","sessionId":"sess-1","version":"2.1.39","type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-02-11T21:18:41.543Z","uuid":"cb-1","level":"info","compactMetadata":{{"trigger":"auto","preTokens":167094{post}}}}}"#
        )
    }

    fn compact_summary() -> String {
        r#"{"parentUuid":"cb-1","isSidechain":false,"type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation that ran out of context."},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":"cs-1","timestamp":"2026-02-11T21:18:41.543Z"}"#.to_string()
    }

    fn agent_progress(read: u64) -> String {
        format!(
            r#"{{"parentUuid":"x","isSidechain":false,"userType":"external","sessionId":"sess-1","type":"progress","data":{{"type":"agent_progress","agentId":"a1b2","message":{{"type":"assistant","message":{{"model":"claude-haiku-4-5","id":"msg_sub","role":"assistant","content":[],"usage":{{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":{read},"output_tokens":50}}}}}}}},"uuid":"pr-{read}","timestamp":"2026-02-11T21:12:00.000Z"}}"#
        )
    }

    fn synthetic_error() -> String {
        r#"{"parentUuid":"x","isSidechain":false,"type":"assistant","isApiErrorMessage":true,"error":"rate_limit","apiErrorStatus":429,"message":{"id":"e1","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"You've hit your session limit"}],"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"uuid":"err-1","timestamp":"2026-02-11T21:20:00.000Z"}"#.to_string()
    }

    fn read_lines(lines: &[String]) -> Usage {
        let (_d, path) = write_temp("session.jsonl", &jsonl(lines));
        read(&path).unwrap()
    }

    #[test]
    fn duplicate_message_ids_with_growing_output() {
        let u = read_lines(&[
            user("hi"),
            assistant("msg_A", "claude-opus-4-6", 1, 619, 160115, 1),
            assistant("msg_A", "claude-opus-4-6", 1, 619, 160115, 1),
            assistant("msg_A", "claude-opus-4-6", 1, 619, 160115, 198),
        ]);
        assert_eq!(u.tokens, Some(160_735));
        assert_eq!(u.model.as_deref(), Some("claude-opus-4-6"));
        assert!(!u.compacted);
        assert_eq!(u.window, None);
        assert_eq!(u.malformed_lines, 0);
        assert_eq!(u.agent, super::super::ID);
    }

    #[test]
    fn inline_sidechains_after_the_last_main_usage_are_ignored() {
        let u = read_lines(&[
            assistant("msg_main", "claude-sonnet-4-5", 3, 1200, 140072, 365),
            user("run the agent"),
            sidechain_assistant("msg_side", 4, 19829),
            sidechain_assistant("msg_side", 4, 19829),
            r#"{"parentUuid":"x","isSidechain":true,"agentId":"a1b2","type":"user","message":{"role":"user","content":"tool result"},"uuid":"su"}"#.to_string(),
        ]);
        assert_eq!(u.tokens, Some(141_275));
        assert_eq!(u.model.as_deref(), Some("claude-sonnet-4-5"));
    }

    #[test]
    fn agent_progress_with_nested_usage_is_ignored() {
        let u = read_lines(&[
            assistant("msg_B", "claude-opus-4-6", 1, 500, 55110, 972),
            agent_progress(90_000),
            agent_progress(91_000),
            r#"{"type":"progress","isSidechain":false,"data":{"type":"hook_progress","hookEvent":"PostToolUse"},"uuid":"hp"}"#.to_string(),
            r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#.to_string(),
        ]);
        assert_eq!(u.tokens, Some(55_611));
    }

    #[test]
    fn synthetic_and_api_error_lines_are_skipped() {
        let mut no_flag = synthetic_error().replace(r#""isApiErrorMessage":true,"#, "");
        no_flag = no_flag.replace("err-1", "err-2");
        let flagged_real_model = synthetic_error().replace("<synthetic>", "claude-opus-4-6");
        let u = read_lines(&[
            assistant("msg_C", "claude-opus-4-6", 2, 10, 30000, 40),
            synthetic_error(),
            no_flag,
            flagged_real_model,
        ]);
        assert_eq!(u.tokens, Some(30_012));
        assert_eq!(u.model.as_deref(), Some("claude-opus-4-6"));
    }

    #[test]
    fn compact_boundary_without_post_tokens_makes_tokens_unknown() {
        let u = read_lines(&[
            assistant("msg_D", "claude-opus-4-6", 1, 301, 166457, 301),
            compact_boundary_line(None),
            compact_summary(),
        ]);
        assert_eq!(u.tokens, None);
        assert!(u.compacted);
        assert_eq!(u.pre_tokens, Some(167_094));
        assert_eq!(u.compaction_trigger.as_deref(), Some("auto"));
        assert_eq!(u.model.as_deref(), Some("claude-opus-4-6"));
    }

    #[test]
    fn compact_boundary_with_post_tokens_reports_them() {
        let u = read_lines(&[
            assistant("msg_D", "claude-opus-4-6", 1, 301, 166457, 301),
            compact_boundary_line(Some(31_250)),
            compact_summary(),
        ]);
        assert_eq!(u.tokens, Some(31_250));
        assert!(u.compacted);
        assert_eq!(u.pre_tokens, Some(167_094));
    }

    #[test]
    fn assistant_line_after_compaction_wins() {
        for post in [None, Some(31_250)] {
            let u = read_lines(&[
                assistant("msg_D", "claude-haiku-4-5", 1, 301, 166457, 301),
                compact_boundary_line(post),
                compact_summary(),
                user("go on"),
                assistant("msg_E", "claude-opus-4-6", 3, 30000, 3957, 12),
            ]);
            assert_eq!(u.tokens, Some(33_960), "post {post:?}");
            assert!(!u.compacted);
            assert_eq!(u.pre_tokens, None);
            assert_eq!(u.model.as_deref(), Some("claude-opus-4-6"));
        }
    }

    #[test]
    fn sidechain_compact_boundary_is_not_the_main_sessions() {
        let side =
            compact_boundary_line(None).replace(r#""isSidechain":false"#, r#""isSidechain":true"#);
        let u = read_lines(&[assistant("msg_F", "claude-opus-4-6", 5, 5, 5, 5), side]);
        assert_eq!(u.tokens, Some(15));
        assert!(!u.compacted);
    }

    #[test]
    fn malformed_non_object_and_torn_lines() {
        let mut content = jsonl(&[
            user("first"),
            "\"massive error\"".to_string(),
            "42".to_string(),
            "[1]".to_string(),
            r#"{"silly": "this"}"#.to_string(),
            r#"{"type":"user","message":"error","uuid":"odd"}"#.to_string(),
            "{\"type\":\"assistant\",".to_string(),
            String::new(),
            // Usage without cache fields (older builds).
            r#"{"type":"assistant","message":{"id":"msg_004","role":"assistant","model":"claude-sonnet-4","content":[],"usage":{"input_tokens":168,"output_tokens":85}}}"#.to_string(),
            r#"{"type":"summary","summary":"Tested edge cases","leafUuid":"edge_011"}"#.to_string(),
        ]);
        // An invalid UTF-8 line, then a torn last line that would win if it were complete.
        content.extend_from_slice(b"{\"type\":\"user\",\"x\":\"\xff\xfe\"}\n");
        content.extend_from_slice(assistant("msg_torn", "claude-opus-4-6", 1, 1, 1, 1).as_bytes());
        content.truncate(content.len() - 20);
        let (_d, path) = write_temp("edge.jsonl", &content);
        let u = read(&path).unwrap();
        assert_eq!(u.tokens, Some(168));
        assert_eq!(u.model.as_deref(), Some("claude-sonnet-4"));
        // "massive error", 42, [1], the cut line, the bad UTF-8 line; not blank, not torn.
        assert_eq!(u.malformed_lines, 5);
    }

    #[test]
    fn a_complete_but_unterminated_last_line_is_treated_as_torn() {
        let mut content = jsonl(&[assistant("msg_1", "claude-opus-4-6", 10, 0, 0, 1)]);
        content.extend_from_slice(assistant("msg_2", "claude-opus-4-6", 20, 0, 0, 1).as_bytes());
        let (_d, path) = write_temp("s.jsonl", &content);
        let u = read(&path).unwrap();
        assert_eq!(u.tokens, Some(10));
        assert_eq!(u.malformed_lines, 0);
    }

    #[test]
    fn all_sidechain_file_has_no_main_value() {
        let u = read_lines(&[
            r#"{"parentUuid":null,"isSidechain":true,"type":"user","message":{"role":"user","content":"Run the test suite"},"uuid":"a1"}"#.to_string(),
            sidechain_assistant("msg_test", 4, 42178),
        ]);
        assert_eq!(u.tokens, None);
        assert_eq!(u.model, None);
        assert!(!u.compacted);
    }

    #[test]
    fn only_noise_gives_unknown() {
        let u = read_lines(&[
            r#"{"type":"summary","summary":"t","leafUuid":"x"}"#.to_string(),
            user("hello"),
        ]);
        assert_eq!(u, Usage::empty(super::super::ID));
    }

    #[test]
    fn auto_detected_and_explicit_agree() {
        let (_d, path) = write_temp(
            "s.jsonl",
            &jsonl(&[user("a"), assistant("m", "claude-opus-4-6", 7, 8, 9, 1)]),
        );
        let auto = read_transcript(&path, None).unwrap();
        assert_eq!(
            auto,
            read_transcript(&path, Some(crate::agents::Agent::ClaudeCode)).unwrap()
        );
        assert_eq!(auto.tokens, Some(24));
    }

    #[test]
    fn malformed_lines_are_counted_in_the_diagnostic_window_only() {
        // A bad line far before the record (outside the last DIAG_WINDOW bytes) is not seen;
        // one inside the window is, even though it precedes the record used.
        let pad = user(&"p".repeat(1000));
        let mut lines = vec!["not json (far)".to_string()];
        let n_pad = (DIAG_WINDOW as usize / pad.len()) + 50;
        lines.extend(std::iter::repeat_n(pad.clone(), n_pad));
        lines.push("not json (near)".to_string());
        lines.push(pad);
        lines.push(assistant("m", "claude-opus-4-6", 1, 2, 3, 4));
        let u = read_lines(&lines);
        assert_eq!(u.tokens, Some(6));
        assert_eq!(u.malformed_lines, 1);
    }

    #[test]
    fn finds_the_last_record_of_a_50_mb_file_reading_only_its_tail() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let old = assistant("msg_old", "claude-opus-4-6", 1, 1, 1, 1);
        let pad = user(&"p".repeat(2000));
        let mut written = 0u64;
        while written < 50 * 1024 * 1024 {
            for l in [&old, &pad] {
                f.write_all(l.as_bytes()).unwrap();
                f.write_all(b"\n").unwrap();
                written += l.len() as u64 + 1;
            }
        }
        for l in [
            assistant("msg_last", "claude-opus-4-6", 1, 619, 160115, 198),
            agent_progress(5),
            user("tail"),
        ] {
            writeln!(f, "{l}").unwrap();
        }
        f.flush().unwrap();
        drop(f);
        let mut scanner = Scanner::open(&path).unwrap();
        let u = scan(&mut scanner).unwrap();
        assert_eq!(u.tokens, Some(160_735));
        assert_eq!(
            scanner.bytes_read(),
            crate::transcripts::usage::tail::CHUNK_SIZE as u64
        );
        assert!(scanner.len() > 50 * 1024 * 1024);
        // Counting malformed lines over the diagnostic window stays bounded too.
        assert_eq!(scanner.finish().unwrap(), 0);
        let chunk = crate::transcripts::usage::tail::CHUNK_SIZE as u64;
        assert!(
            scanner.bytes_read() <= DIAG_WINDOW + 2 * chunk,
            "{}",
            scanner.bytes_read()
        );
    }
}
