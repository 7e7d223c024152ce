//! Codex CLI rollout JSONL (docs/agents.md, "Codex CLI rollouts").
//!
//! Lines are `{timestamp, type, payload}`. Scanning from the end, the first of these settles the
//! token count:
//! * A `token_usage_record` line (Codex 0.169 and later), written right after each response:
//!   `payload.usage.total_tokens`. It is the freshest token count: the `token_count` event for the
//!   same response comes only after the tool output, so a `PostToolUse` hook reading
//!   `token_count` alone is one response late. Records of another thread (a subagent's response
//!   forwarded into this rollout: `thread_id` other than the one in the file's name, or a
//!   `parent_thread_id` when the name has none) are skipped, and so is the record of a
//!   compaction's own request (its `response_id` is the `compacted` line's
//!   `compaction_response_id`): its input is the old context.
//! * The last `event_msg` whose `payload.type == "token_count"` and `payload.info != null`:
//!   `payload.info.last_token_usage.total_tokens`. Never `total_token_usage`: it is cumulative
//!   over the session.
//! * Skipped as bogus (§2.4): `last_token_usage.input_tokens == 0` (around compaction older
//!   builds write all zeros with a huge `total_tokens`), and a total above the known window.
//! * A `compacted` line or a `context_compacted` event means the context was reset. A
//!   `token_count` after it (before any response) is Codex's own estimate of the new size and
//!   is taken even with `input_tokens == 0` while within the window; without one, tokens are
//!   unknown until the next response. The last valid token count before it (before the compaction's
//!   own request, whose total holds the summary's output) is `pre_tokens`: where Codex
//!   compacted, in its own token count.
//! * Window = `info.model_context_window`, else `task_started`/`turn_started`
//!   `.model_context_window`, else None (older builds write null; the caller's configuration or
//!   model table decides). Model = the latest `turn_context.model`. Both are searched backwards
//!   at most [`SIDE_SEARCH_BUDGET`] bytes beyond the usage record, so the cost stays flat.

use std::io::{Read, Seek};
use std::path::Path;

use serde_json::{Map, Value};

use crate::transcripts::usage::{
    get_obj, get_str, get_u64, open_transcript, read_jsonl, Scanner, Usage, SIDE_SEARCH_BUDGET,
};

pub fn read(path: &Path) -> anyhow::Result<Usage> {
    let (file, len) = open_transcript(path)?;
    read_from(path, file, len)
}

/// As [`read`], over the first `len` bytes of `src`; `path` names it in errors.
pub fn read_from<R: Read + Seek>(path: &Path, src: R, len: u64) -> anyhow::Result<Usage> {
    read_jsonl(path, src, len, scan)
}

/// The rollout of thread `thread_id` under `codex_home`
/// (`sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, docs/agents.md "Codex CLI rollouts"),
/// newest day first; None when there is none. Codex's `notify` payload names
/// only the thread.
pub fn find_rollout(codex_home: &Path, thread_id: &str) -> Option<std::path::PathBuf> {
    let suffix = format!("-{thread_id}.jsonl");
    let newest_first = |dir: &Path| -> Vec<std::path::PathBuf> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        crate::system::sorting::sort_by(&mut entries, |a, b| b.cmp(a));
        entries
    };
    for year in newest_first(&codex_home.join("sessions")) {
        for month in newest_first(&year) {
            for day in newest_first(&month) {
                let found = newest_first(&day).into_iter().find(|f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix))
                });
                if found.is_some() {
                    return found;
                }
            }
        }
    }
    None
}

/// The session's thread id from a rollout's name (`rollout-<time>-<uuid>.jsonl`).
fn thread_id_of(path: &Path) -> Option<String> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    let shape = id.char_indices().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => c == '-',
        _ => c.is_ascii_hexdigit(),
    });
    (stem.starts_with("rollout-") && shape).then(|| id.to_ascii_lowercase())
}

/// A usage record of this rollout's own thread (not a subagent's forwarded into it).
fn is_own_record(payload: &Map<String, Value>, own_thread: Option<&str>) -> bool {
    match (own_thread, get_str(payload, "thread_id")) {
        (Some(own), Some(thread)) => thread.eq_ignore_ascii_case(own),
        _ => payload.get("parent_thread_id").is_none_or(Value::is_null),
    }
}

/// The context of a `token_count` info, or None if it is bogus.
fn valid_total(info: &Map<String, Value>, window: Option<u64>) -> Option<u64> {
    valid_usage(get_obj(info, "last_token_usage")?, window)
}

/// The context of one response's usage (`input + output`, as `total_tokens`), or None if it
/// is bogus.
fn valid_usage(last: &Map<String, Value>, window: Option<u64>) -> Option<u64> {
    let input = get_u64(last, "input_tokens")?;
    if input == 0 {
        return None;
    }
    let total = get_u64(last, "total_tokens")
        .or_else(|| Some(input.saturating_add(get_u64(last, "output_tokens").unwrap_or(0))))?;
    if window.is_some_and(|w| total > w) {
        return None;
    }
    Some(total)
}

pub(crate) fn scan<R: Read + Seek>(scanner: &mut Scanner<R>) -> anyhow::Result<Usage> {
    let mut usage = Usage::empty(super::ID);
    let own_thread = thread_id_of(scanner.path());
    // Offset of the line that settled the tokens (a usage record or a compaction marker).
    let mut settled_at: Option<u64> = None;
    // Lines looked at since: a compaction's own usage record is followed (backwards) by its
    // `compacted` line within a few lines, so the side search goes at least this far.
    let mut since_settled = 0u32;
    // The response id of the usage record that settled the token count.
    let mut record_id: Option<String> = None;
    // A `token_count` with no input, met before anything settled: Codex's estimate after a
    // compaction if a compaction marker comes next (backwards).
    let mut estimate: Option<u64> = None;
    // The response id of the last compaction's own request (its usage is not a token count before
    // it).
    let mut compaction_request: Option<String> = None;
    while let Some((offset, line)) = scanner.next_object()? {
        if let Some(at) = settled_at {
            since_settled += 1;
            let pre_wanted = usage.compacted && usage.pre_tokens.is_none();
            if usage.window.is_some() && usage.model.is_some() && since_settled > 8 && !pre_wanted {
                break;
            }
            if offset.saturating_add(SIDE_SEARCH_BUDGET) < at {
                break;
            }
        }
        let Some(payload) = get_obj(&line, "payload") else {
            continue;
        };
        let event = match get_str(&line, "type") {
            Some("event_msg") => get_str(payload, "type"),
            Some("compacted") => {
                compaction_request = get_str(payload, "compaction_response_id").map(str::to_string);
                let own_request = record_id.is_some()
                    && get_str(payload, "compaction_response_id") == record_id.as_deref();
                if own_request {
                    // The record that settled the token count was the compaction's request (its
                    // total holds the summary's output): the token count before it is found going
                    // on.
                    usage.tokens = estimate;
                    usage.compacted = true;
                    record_id = None;
                    settled_at = Some(offset);
                    since_settled = 0;
                    continue;
                }
                Some("context_compacted")
            }
            Some("turn_context") => {
                if usage.model.is_none() {
                    usage.model = get_str(payload, "model").map(str::to_string);
                }
                continue;
            }
            Some("token_usage_record") => {
                if usage.compacted
                    && usage.pre_tokens.is_none()
                    && is_own_record(payload, own_thread.as_deref())
                    && (compaction_request.is_none()
                        || get_str(payload, "response_id") != compaction_request.as_deref())
                {
                    usage.pre_tokens =
                        get_obj(payload, "usage").and_then(|u| valid_usage(u, usage.window));
                }
                if settled_at.is_none() && is_own_record(payload, own_thread.as_deref()) {
                    if let Some(total) =
                        get_obj(payload, "usage").and_then(|u| valid_usage(u, usage.window))
                    {
                        usage.tokens = Some(total);
                        settled_at = Some(offset);
                        record_id = get_str(payload, "response_id").map(str::to_string);
                        if usage.model.is_none() {
                            usage.model = get_obj(payload, "attribution")
                                .and_then(|a| get_str(a, "model"))
                                .map(str::to_string);
                        }
                    }
                }
                continue;
            }
            _ => continue,
        };
        match event {
            Some("context_compacted") if settled_at.is_none() => {
                usage.compacted = true;
                usage.tokens = estimate;
                settled_at = Some(offset);
            }
            Some("token_count") => {
                let Some(info) = get_obj(payload, "info") else {
                    continue; // info: null carries only rate limits
                };
                let info_window = get_u64(info, "model_context_window").filter(|&w| w > 0);
                usage.window = usage.window.or(info_window);
                if usage.compacted && usage.pre_tokens.is_none() && settled_at.is_some() {
                    usage.pre_tokens = valid_total(info, usage.window);
                }
                if settled_at.is_none() {
                    if let Some(total) = valid_total(info, usage.window) {
                        usage.tokens = Some(total);
                        settled_at = Some(offset);
                    } else if estimate.is_none() {
                        estimate = get_obj(info, "last_token_usage")
                            .and_then(|l| get_u64(l, "total_tokens"))
                            .filter(|&t| t > 0 && usage.window.is_none_or(|w| t <= w));
                    }
                }
            }
            Some("task_started" | "turn_started") => {
                let w = get_u64(payload, "model_context_window").filter(|&w| w > 0);
                usage.window = usage.window.or(w);
            }
            _ => {}
        }
    }
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::tests::read_lines_detected;
    use crate::transcripts::usage::tail::CHUNK_SIZE;
    use crate::transcripts::usage::testutil::write_temp;

    #[test]
    fn the_rollout_of_a_thread_is_found_newest_day_first() {
        let home = tempfile::tempdir().unwrap();
        let old = home.path().join("sessions/2026/01/31");
        let new = home.path().join("sessions/2026/02/01");
        std::fs::create_dir_all(&old).unwrap();
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(old.join("rollout-2026-01-31T10-00-00-aaa.jsonl"), "").unwrap();
        std::fs::write(new.join("rollout-2026-02-01T09-00-00-bbb.jsonl"), "").unwrap();
        std::fs::write(new.join("notes-aaa.jsonl"), "").unwrap();
        let found = find_rollout(home.path(), "aaa").unwrap();
        assert!(found.ends_with("2026/01/31/rollout-2026-01-31T10-00-00-aaa.jsonl"));
        assert!(find_rollout(home.path(), "ccc").is_none());
        assert!(find_rollout(&home.path().join("missing"), "aaa").is_none());
    }

    fn session_meta() -> String {
        r#"{"timestamp":"2026-02-23T12:19:38.123Z","type":"session_meta","payload":{"id":"019c8a70-dda7-7f33-98ea-f30553347322","timestamp":"2026-02-23T12:19:38.100Z","cwd":"/home/u/proj","originator":"codex_cli_rs","cli_version":"0.104.0","source":"cli","model_provider":"openai"}}"#.to_string()
    }

    fn task_started(window: Option<u64>) -> String {
        let w = window.map_or("null".to_string(), |w| w.to_string());
        format!(
            r#"{{"timestamp":"2026-02-23T12:19:42.562Z","type":"event_msg","payload":{{"type":"task_started","turn_id":"t1","model_context_window":{w},"collaboration_mode_kind":"default"}}}}"#
        )
    }

    fn turn_context(model: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-02-23T12:19:42.600Z","type":"turn_context","payload":{{"turn_id":"t1","cwd":"/home/u/proj","approval_policy":"on-request","sandbox_policy":{{"type":"workspace-write"}},"model":"{model}","effort":"medium","summary":"auto"}}}}"#
        )
    }

    fn token_count_null() -> String {
        r#"{"timestamp":"2026-02-23T12:19:43.421Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","primary":{"used_percent":19.0,"window_minutes":300,"resets_at":1771864834}}}}"#.to_string()
    }

    /// `last` = (input, cached, output, total); `cumulative` = the session total.
    fn token_count(last: (u64, u64, u64, u64), cumulative: u64, window: Option<u64>) -> String {
        let (i, c, o, t) = last;
        let w = window.map_or("null".to_string(), |w| w.to_string());
        format!(
            r#"{{"timestamp":"2026-02-23T12:19:52.689Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{cumulative},"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":{cumulative}}},"last_token_usage":{{"input_tokens":{i},"cached_input_tokens":{c},"output_tokens":{o},"reasoning_output_tokens":0,"total_tokens":{t}}},"model_context_window":{w}}},"rate_limits":null}}}}"#
        )
    }

    fn response_item(text: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-02-23T12:19:50.000Z","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}}}"#
        )
    }

    fn compacted() -> String {
        r#"{"timestamp":"2026-02-23T12:30:00.000Z","type":"compacted","payload":{"message":"summary of the work so far","replacement_history":[]}}"#.to_string()
    }

    fn context_compacted() -> String {
        r#"{"timestamp":"2026-02-23T12:30:00.100Z","type":"event_msg","payload":{"type":"context_compacted"}}"#.to_string()
    }

    fn read_lines(lines: &[String]) -> Usage {
        read_lines_detected("rollout-2026-02-23T13-19-38-x.jsonl", lines, read)
    }

    const W: Option<u64> = Some(258_400);

    #[test]
    fn info_null_first_then_last_token_usage() {
        let u = read_lines(&[
            session_meta(),
            task_started(W),
            turn_context("gpt-5.3-codex"),
            token_count_null(),
            response_item("done"),
            token_count((34469, 3456, 431, 34900), 34900, W),
        ]);
        assert_eq!(u.tokens, Some(34_900));
        assert_eq!(u.window, Some(258_400));
        assert_eq!(u.model.as_deref(), Some("gpt-5.3-codex"));
        assert!(!u.compacted);
        assert_eq!(u.malformed_lines, 0);
        assert_eq!(u.agent, super::super::ID);
    }

    #[test]
    fn trailing_info_null_and_duplicates_do_not_hide_the_value() {
        let u = read_lines(&[
            task_started(W),
            turn_context("gpt-5.3-codex"),
            token_count((42772, 3456, 204, 42976), 42976, W),
            token_count((63441, 49664, 286, 63727), 299_496, W),
            token_count((63441, 49664, 286, 63727), 299_496, W),
            token_count_null(),
        ]);
        // Never the cumulative 299,496 (which is even above the window).
        assert_eq!(u.tokens, Some(63_727));
    }

    #[test]
    fn compaction_artefacts_are_skipped_and_reset_the_context() {
        let before = [
            task_started(W),
            turn_context("gpt-5.3-codex"),
            token_count((209950, 208640, 2184, 212134), 22_545_849, W),
            token_count((0, 0, 0, 940_499), 22_545_849, W),
            compacted(),
            context_compacted(),
            turn_context("gpt-5.3-codex"),
            token_count((0, 0, 0, 940_499), 22_545_849, W),
        ];
        let u = read_lines(&before);
        assert_eq!(u.tokens, None);
        assert!(u.compacted);
        assert_eq!(
            u.pre_tokens,
            Some(212_134),
            "Codex's own last token count before it, not the bogus one"
        );
        assert_eq!(u.window, Some(258_400));
        assert_eq!(u.model.as_deref(), Some("gpt-5.3-codex"));

        let mut after = before.to_vec();
        after.push(response_item("continuing"));
        after.push(token_count((48297, 22912, 390, 48687), 22_594_536, W));
        let u = read_lines(&after);
        assert_eq!(u.tokens, Some(48_687));
        assert!(!u.compacted);
    }

    #[test]
    fn a_total_above_the_window_is_bogus_even_with_input() {
        let u = read_lines(&[
            token_count((1000, 0, 10, 1010), 1010, W),
            token_count((5, 0, 0, 940_499), 941_509, W),
        ]);
        assert_eq!(u.tokens, Some(1010));
    }

    #[test]
    fn null_window_with_custom_model_stays_unknown() {
        let u = read_lines(&[
            session_meta(),
            turn_context("aide-gpt-5"),
            token_count((22224, 17920, 45, 22269), 258_923, None),
            turn_context("aide-gpt-5"),
            token_count((22279, 13184, 1879, 24158), 283_081, None),
        ]);
        assert_eq!(u.tokens, Some(24_158));
        assert_eq!(u.window, None);
        assert_eq!(u.model.as_deref(), Some("aide-gpt-5"));
    }

    #[test]
    fn window_falls_back_to_task_started() {
        let u = read_lines(&[
            task_started(Some(272_000)),
            turn_context("gpt-5-codex"),
            token_count((100, 0, 5, 105), 105, None),
        ]);
        assert_eq!(u.tokens, Some(105));
        assert_eq!(u.window, Some(272_000));
    }

    #[test]
    fn side_search_for_the_window_is_bounded() {
        // task_started far before the usage record (beyond the side-search budget) is not
        // reached: the scan stays flat and the window stays unknown.
        let mut lines = vec![task_started(W)];
        let pad = response_item(&"p".repeat(4000));
        let n = (SIDE_SEARCH_BUDGET as usize / pad.len()) + 100;
        lines.extend(std::iter::repeat_n(pad, n));
        lines.push(turn_context("gpt-5.3-codex"));
        lines.push(token_count((100, 0, 5, 105), 105, None));
        let mut s = lines.join("\n");
        s.push('\n');
        let (_d, path) = write_temp("rollout-x.jsonl", s.as_bytes());
        let mut scanner = Scanner::open(&path).unwrap();
        let u = scan(&mut scanner).unwrap();
        assert_eq!(u.tokens, Some(105));
        assert_eq!(u.window, None);
        assert!(
            scanner.bytes_read() <= SIDE_SEARCH_BUDGET + 2 * CHUNK_SIZE as u64,
            "read {}",
            scanner.bytes_read()
        );
        assert!(scanner.len() > SIDE_SEARCH_BUDGET + 300_000);
    }

    #[test]
    fn no_token_count_at_all() {
        let u = read_lines(&[session_meta(), turn_context("gpt-5"), response_item("hi")]);
        assert_eq!(u.tokens, None);
        assert!(!u.compacted);
        assert_eq!(u.model.as_deref(), Some("gpt-5"));
    }

    const THREAD: &str = "019c8a70-dda7-7f33-98ea-f30553347322";

    /// A `token_usage_record` line as Codex 0.169 writes it right after each response.
    fn usage_record(thread: &str, response: &str, input: u64, output: u64) -> String {
        let usage = |i: u64, o: u64| {
            format!(
                r#"{{"input_tokens":{i},"cached_input_tokens":0,"output_tokens":{o},"reasoning_output_tokens":0,"total_tokens":{}}}"#,
                i + o
            )
        };
        format!(
            r#"{{"timestamp":"2026-11-23T10:00:01.000Z","type":"token_usage_record","payload":{{"thread_id":"{thread}","turn_id":"t1","session_id":"{thread}","root_turn_id":"t1","response_id":"{response}","usage":{u},"turn_token_usage":{u},"thread_token_usage":{big},"attribution":{{"model":"gpt-5.5","model_provider":"standin","service_tier":null,"context_length":null}},"completed_at_ms":1795000000000}}}}"#,
            u = usage(input, output),
            big = usage(input * 7, output * 7),
        )
    }

    fn function_call_output() -> String {
        r#"{"timestamp":"2026-11-23T10:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"before-compaction"}}"#.to_string()
    }

    fn read_rollout(lines: &[String]) -> Usage {
        read_lines_detected(
            &format!("rollout-2026-11-23T10-00-00-{THREAD}.jsonl"),
            lines,
            read,
        )
    }

    const W190: Option<u64> = Some(190_000);

    #[test]
    fn a_usage_record_is_read_before_the_token_count_of_its_response() {
        // What a PostToolUse hook sees: the response that called the tool has its record, its
        // token_count comes only after the tool output.
        let lines = vec![
            session_meta(),
            task_started(W190),
            turn_context("gpt-5.5"),
            usage_record(THREAD, "r1", 20_000, 100),
            token_count((20_000, 0, 100, 20_100), 20_100, W190),
            usage_record(THREAD, "r2", 150_000, 200),
            function_call_output(),
        ];
        let u = read_rollout(&lines);
        assert_eq!(
            u.tokens,
            Some(150_200),
            "not the previous response's 20,100"
        );
        assert_eq!(u.window, Some(190_000));
        assert_eq!(u.model.as_deref(), Some("gpt-5.5"));
        // Then the token_count of the same response: the same token count.
        let mut later = lines.clone();
        later.push(token_count((150_000, 0, 200, 150_200), 170_300, W190));
        assert_eq!(read_rollout(&later).tokens, Some(150_200));
    }

    #[test]
    fn a_subagents_record_is_not_this_sessions_context() {
        let child = "019c8a70-0000-7000-8000-000000000001";
        let u = read_rollout(&[
            task_started(W190),
            usage_record(THREAD, "r1", 30_000, 100),
            usage_record(child, "c1", 90_000, 100),
        ]);
        assert_eq!(u.tokens, Some(30_100));
        // Without an id in the file's name, a forwarded record says whose it is.
        let forwarded = usage_record(child, "c1", 90_000, 100).replace(
            r#""thread_id":"#,
            &format!(r#""parent_thread_id":"{THREAD}","thread_id":"#),
        );
        let u = read_lines(&[usage_record(THREAD, "r1", 30_000, 100), forwarded]);
        assert_eq!(u.tokens, Some(30_100));
    }

    fn compacted_by(response: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-11-23T10:05:00.000Z","type":"compacted","payload":{{"message":"summary","replacement_history":[],"compaction_response_id":"{response}"}}}}"#
        )
    }

    #[test]
    fn after_a_compaction_codex_s_own_estimate_is_the_token_count() {
        let before = vec![
            task_started(W190),
            turn_context("gpt-5.5"),
            usage_record(THREAD, "r1", 150_000, 200),
            token_count((150_000, 0, 200, 150_200), 150_200, W190),
            // The compaction's own request: its input is the old context.
            usage_record(THREAD, "rc", 150_200, 3_000),
            compacted_by("rc"),
            context_compacted(),
        ];
        let u = read_rollout(&before);
        assert!(u.compacted);
        assert_eq!(u.tokens, None, "unknown until Codex says");
        assert_eq!(
            u.pre_tokens,
            Some(150_200),
            "the last token count before the compaction's own request"
        );
        // Codex's estimate of the new size, with no input of its own.
        let mut after = before.clone();
        after.push(token_count((0, 0, 0, 9_500), 153_200, W190));
        let u = read_rollout(&after);
        assert!(u.compacted);
        assert_eq!(u.tokens, Some(9_500));
        // The compaction's record written after the `compacted` line is not the token count either.
        let swapped = vec![
            task_started(W190),
            usage_record(THREAD, "r1", 150_000, 200),
            compacted_by("rc"),
            usage_record(THREAD, "rc", 150_200, 3_000),
            token_count((0, 0, 0, 9_500), 153_200, W190),
        ];
        let u = read_rollout(&swapped);
        assert_eq!((u.tokens, u.compacted), (Some(9_500), true));
        // The next response's record settles it as usual.
        let mut next = after;
        next.push(usage_record(THREAD, "r2", 12_000, 300));
        let u = read_rollout(&next);
        assert_eq!((u.tokens, u.compacted), (Some(12_300), false));
    }

    #[test]
    fn the_order_codex_0_169_writes_around_a_compaction() {
        // As captured from Codex 0.169: the compaction request's record and its token_count,
        // then `compacted`, then Codex's estimate with no input of its own.
        let mut lines = vec![
            task_started(W190),
            turn_context("gpt-5.5"),
            usage_record(THREAD, "r1", 150_000, 20),
            function_call_output(),
            token_count((150_000, 0, 20, 150_020), 150_020, W190),
            usage_record(THREAD, "rc", 9_582, 20),
            token_count((9_582, 0, 20, 9_602), 159_622, W190),
            compacted_by("rc"),
            turn_context("gpt-5.5"),
        ];
        assert_eq!(read_rollout(&lines).tokens, None);
        lines.push(token_count((0, 0, 0, 6_912), 159_622, W190));
        let u = read_rollout(&lines);
        assert_eq!((u.tokens, u.compacted), (Some(6_912), true));
        lines.push(usage_record(THREAD, "r2", 3_000, 20));
        assert_eq!(read_rollout(&lines).tokens, Some(3_020));
    }

    #[test]
    fn malformed_lines_are_counted() {
        let u = read_lines(&[
            session_meta(),
            "{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payl".to_string(),
            token_count((7, 0, 1, 8), 8, W),
            "null".to_string(),
        ]);
        assert_eq!(u.tokens, Some(8));
        assert_eq!(u.malformed_lines, 2);
    }

    /// Codex 0.169/0.171 lines carry `ordinal` and a top-level `metadata` (with
    /// `model_search_state` from 0.171), and usage has a sixth field, `cache_write_input_tokens`:
    /// none of them moves the token count, which is still `total_tokens`.
    #[test]
    fn the_fields_newer_codex_adds_change_no_token_count() {
        let with_new_fields = |line: String, ordinal: u64| {
            let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
            v["ordinal"] = ordinal.into();
            v["metadata"] = serde_json::json!({"history_sequence": ordinal,
                "client_authored": false, "model_search_state": "unused"});
            let text = v.to_string().replace(
                r#""cached_input_tokens":0,"#,
                r#""cached_input_tokens":0,"cache_write_input_tokens":5000,"#,
            );
            assert!(text.contains("cache_write_input_tokens") || !line.contains("cached_input"));
            text
        };
        let lines: Vec<String> = [
            session_meta(),
            task_started(W190),
            turn_context("gpt-5.5"),
            response_item("writing it"),
            usage_record(THREAD, "r1", 150_000, 200),
            function_call_output(),
            token_count((150_000, 0, 200, 150_200), 150_200, W190),
        ]
        .into_iter()
        .enumerate()
        .map(|(n, l)| with_new_fields(l, n as u64))
        .collect();
        let u = read_rollout(&lines);
        assert_eq!(u.tokens, Some(150_200));
        assert_eq!(u.window, Some(190_000));
        assert_eq!(u.malformed_lines, 0);
        // The usage record alone, before its token_count: the same token count.
        assert_eq!(read_rollout(&lines[..6]).tokens, Some(150_200));
    }
}
