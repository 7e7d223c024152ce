//! Codex CLI rollout JSONL (docs/agents.md, "Codex CLI rollouts").
//!
//! Lines are `{timestamp, type, payload}`. Scanning from the end:
//! * Context = `payload.info.last_token_usage.total_tokens` of the last `event_msg` whose
//!   `payload.type == "token_count"` and `payload.info != null`. Never `total_token_usage`: it
//!   is cumulative over the session.
//! * Skipped as bogus (§2.4): `last_token_usage.input_tokens == 0` (around compaction Codex
//!   writes all zeros with a huge `total_tokens`), and a total above the known window.
//! * A `compacted` line or a `context_compacted` event met first means the context was reset:
//!   tokens unknown until the next valid `token_count`.
//! * Window = `info.model_context_window`, else `task_started`/`turn_started`
//!   `.model_context_window`, else None (older builds write null; the caller's configuration or
//!   model table decides). Model = the latest `turn_context.model`. Both are searched backwards
//!   at most [`SIDE_SEARCH_BUDGET`] bytes beyond the usage record, so the cost stays flat.

use std::io::{Read, Seek};
use std::path::Path;

use serde_json::{Map, Value};

use super::{
    get_obj, get_str, get_u64, open_transcript, read_jsonl, Agent, Scanner, Usage,
    SIDE_SEARCH_BUDGET,
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
        entries.sort_by(|a, b| b.cmp(a));
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

/// The context of a `token_count` info, or None if it is bogus.
fn valid_total(info: &Map<String, Value>, window: Option<u64>) -> Option<u64> {
    let last = get_obj(info, "last_token_usage")?;
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
    let mut usage = Usage::empty(Agent::Codex);
    // Offset of the line that settled the tokens (a usage record or a compaction marker).
    let mut settled_at: Option<u64> = None;
    while let Some((offset, line)) = scanner.next_object()? {
        if let Some(at) = settled_at {
            if usage.window.is_some() && usage.model.is_some() {
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
            Some("compacted") => Some("context_compacted"),
            Some("turn_context") => {
                if usage.model.is_none() {
                    usage.model = get_str(payload, "model").map(str::to_string);
                }
                continue;
            }
            _ => continue,
        };
        match event {
            Some("context_compacted") if settled_at.is_none() => {
                usage.compacted = true;
                settled_at = Some(offset);
            }
            Some("token_count") => {
                let Some(info) = get_obj(payload, "info") else {
                    continue; // info: null carries only rate limits
                };
                let info_window = get_u64(info, "model_context_window").filter(|&w| w > 0);
                usage.window = usage.window.or(info_window);
                if settled_at.is_none() {
                    if let Some(total) = valid_total(info, usage.window) {
                        usage.tokens = Some(total);
                        settled_at = Some(offset);
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
    use crate::usage::tail::CHUNK_SIZE;
    use crate::usage::testutil::{read_lines_detected, write_temp};

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
        assert_eq!(u.agent, Agent::Codex);
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
}
