//! What the checkpoint requests (docs/state-file.md, "Checkpoint requests") add to a real session:
//! the replay over the whole sessions in `../shared/sessions` (read in place, never copied here),
//! printed as Markdown. A measurement, not a gate.
//!
//! ```sh
//! CTXKEEP_SHARED_SESSIONS=../shared/sessions \
//!     cargo test --locked --test cli replay_requests -- --ignored --nocapture
//! ```
//!
//! For each session: the tool events, the requests made (by why), their characters and o200k
//! tokens, and their share of the session's tokens. A request stays in the context until the next
//! compaction, so every later model call reads it again: its cost is its tokens times the model
//! calls after it before a compaction, against the sum of every call's context (input, cache read
//! and cache creation; Codex: `last_token_usage.input_tokens`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::run::replay_file;
use super::{Agent, Transcript};

/// The whole sessions the report reads: Claude Code's and Codex's (`shared::transcripts`).
fn sessions(root: &Path) -> Vec<(PathBuf, Agent)> {
    super::shared::transcripts(root)
        .into_iter()
        .filter(|(_, agent)| matches!(agent, Agent::ClaudeCode | Agent::Codex))
        .collect()
}

/// Each model call's context (1-based line, tokens), and the lines where the context was compacted.
fn calls(t: &Transcript, agent: Agent) -> (Vec<(usize, u64)>, Vec<usize>) {
    let mut calls = Vec::new();
    let mut compactions = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, line) in t.lines.iter().enumerate() {
        let Some(v) = &line.value else { continue };
        let n = |v: &Value| v.as_u64().unwrap_or(0);
        match agent {
            Agent::ClaudeCode => {
                if v["type"] == "system" && v["subtype"] == "compact_boundary" {
                    compactions.push(i + 1);
                }
                let u = &v["message"]["usage"];
                if v["type"] == "assistant" && u.is_object() && v["isSidechain"] != true {
                    let id = v["message"]["id"].as_str().unwrap_or_default().to_string();
                    if seen.insert(id) {
                        let tokens = n(&u["input_tokens"])
                            + n(&u["cache_read_input_tokens"])
                            + n(&u["cache_creation_input_tokens"]);
                        calls.push((i + 1, tokens));
                    }
                }
            }
            _ => {
                if v["type"] == "compacted" {
                    compactions.push(i + 1);
                }
                let info = &v["payload"]["info"];
                if v["payload"]["type"] == "token_count" && info.is_object() {
                    calls.push((i + 1, n(&info["last_token_usage"]["input_tokens"])));
                }
            }
        }
    }
    (calls, compactions)
}

#[test]
#[ignore = "a measurement over ../shared/sessions: CTXKEEP_SHARED_SESSIONS=DIR, --ignored --nocapture"]
fn replay_requests() {
    let Some(root) = std::env::var_os("CTXKEEP_SHARED_SESSIONS").map(PathBuf::from) else {
        println!("replay requests: CTXKEEP_SHARED_SESSIONS is not set; nothing to replay");
        return;
    };
    println!("| Session | Lines | Tool events | Requests (commit, plan item, long stretch) | Characters (max) | o200k tokens | Calls that read them | Share of the session's tokens |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut total_chars = 0;
    let mut total_requests = 0;
    for (path, agent) in sessions(&root) {
        let run = replay_file(&path, Some(agent));
        let (calls, compactions) = calls(&run.transcript, agent);
        let session_tokens: u64 = calls.iter().map(|c| c.1).sum();
        let tool_events = run
            .ran()
            .filter(|s| {
                matches!(
                    s.event.name.as_str(),
                    "PostToolUse" | "PostToolUseFailure" | "AfterTool"
                )
            })
            .count();
        let mut by_why: BTreeMap<String, usize> = BTreeMap::new();
        let (mut chars, mut max, mut tokens, mut reread, mut reads) = (0, 0, 0u64, 0u64, 0u64);
        for step in run.ran() {
            for r in step.logged("checkpoint_request") {
                *by_why
                    .entry(r["why"].as_str().unwrap_or("?").into())
                    .or_default() += 1;
                let text = step.context.as_deref().unwrap_or_default();
                // The request is the injection's block that starts with its own words.
                let own = text
                    .split('\n')
                    .find(|l| {
                        l.starts_with("ctxkeep: ") && l.contains("Record where the work stands")
                    })
                    .unwrap_or_default();
                let n = own.chars().count();
                assert_eq!(Some(n as u64), r["chars"].as_u64(), "{own}");
                chars += n;
                max = max.max(n);
                let t = ctxkeep::context::tokens::count(
                    own,
                    ctxkeep::context::tokens::Encoding::O200kBase,
                )
                .unwrap() as u64;
                tokens += t;
                // Read again by every model call after it until the next compaction.
                let at = step.event.cut;
                let until = compactions
                    .iter()
                    .copied()
                    .find(|c| *c > at)
                    .unwrap_or(usize::MAX);
                let later = calls.iter().filter(|c| c.0 > at && c.0 < until).count() as u64;
                reads += later;
                reread += t * later;
            }
        }
        let requests: usize = by_why.values().sum();
        total_chars += chars;
        total_requests += requests;
        let share = match session_tokens {
            0 => "–".to_string(),
            s => format!("{:.3} %", reread as f64 * 100.0 / s as f64),
        };
        println!(
            "| {} | {} | {tool_events} | {requests} ({}, {}, {}) | {chars} ({max}) | {tokens} | {reads} | {share} of {session_tokens} |",
            path.strip_prefix(&root).unwrap_or(&path).display(),
            run.lines,
            by_why.get("commit").unwrap_or(&0),
            by_why.get("plan_item").unwrap_or(&0),
            by_why.get("long_stretch").unwrap_or(&0),
        );
    }
    println!("\n{total_requests} requests, {total_chars} characters in all.");
}

/// Every text the hooks put in front of the model over the whole real sessions, read for what
/// must never be in ctxkeep's own sentences: shell syntax where a commit's subject belongs
/// (Claude Code writes its messages as `-m "$(cat <<'EOF' …)"`), and files named by the
/// absolute paths of someone's machine. Prints each "you committed" line; skips without the
/// sessions.
///
/// ```sh
/// CTXKEEP_SHARED_SESSIONS=../shared/sessions \
///     cargo test --locked --test cli replay_injections_read_right -- --ignored --nocapture
/// ```
#[test]
#[ignore = "a replay of ../shared/sessions: CTXKEEP_SHARED_SESSIONS=DIR, --ignored --nocapture"]
fn replay_injections_read_right() {
    let Some(root) = std::env::var_os("CTXKEEP_SHARED_SESSIONS").map(PathBuf::from) else {
        println!("replay injections: CTXKEEP_SHARED_SESSIONS is not set; nothing to replay");
        return;
    };
    let (mut texts, mut commits) = (0, 0);
    let mut wrong = Vec::new();
    for (path, agent) in sessions(&root) {
        let run = replay_file(&path, Some(agent));
        for step in run.ran() {
            let Some(text) = &step.context else { continue };
            texts += 1;
            // ctxkeep's own lines: not the quoted record of the session (`> …`).
            for line in text.lines().filter(|l| l.starts_with("ctxkeep: ")) {
                if line.contains("you committed") {
                    commits += 1;
                    println!("- {}: {line}", run.name);
                }
                let named = line.split_once("(changed: ").map_or("", |(_, files)| files);
                let shell = ["$(", "<<", "EOF", "`cat "]
                    .iter()
                    .any(|s| line.split("Record where").next().unwrap_or("").contains(s));
                let absolute = named.split(", ").any(|f| {
                    f.starts_with('/') || f.get(1..3) == Some(":\\") || f.get(1..3) == Some(":/")
                });
                if shell || absolute {
                    wrong.push(format!("{}: {line}", run.name));
                }
            }
        }
    }
    println!(
        "\n{texts} injections, {commits} commit requests; read wrong: {}",
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
