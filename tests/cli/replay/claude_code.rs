//! Claude Code's hooks, rebuilt from its project transcript (FORMATS §1.9, §7, §7b; the order in
//! `tests/fixtures/agents/claude-code-2.1.332/hook-order.txt`):
//!
//! - `SessionStart`: where the transcript marks one (a `hook_progress` line or a `hook_success`
//!   attachment named `SessionStart:SOURCE`), else before the first event; a later start closes
//!   the session before it (`Stop` if the turn finished, `SessionEnd` reason `other`).
//! - `UserPromptSubmit` before each prompt line (typed text, not a command's echo, a meta line,
//!   an interruption or a compaction summary).
//! - `PreToolUse` after the assistant line that calls the tool; `PostToolUse` (or
//!   `PostToolUseFailure` for an `is_error` result) with the transcript cut just before the
//!   result line, the outcome taken from the result (`toolUseResult`, or the error text). A call
//!   that never ran (an unknown tool, one the user refused) fires neither.
//! - `Stop` when a turn that ended in a reply is followed by a prompt, a start, a manual
//!   compaction or the end of the file.
//! - At a `compact_boundary`: `PreCompact` (cut before it; `custom_instructions` from the
//!   `/compact` command's arguments when it was manual), then `SessionStart(compact)` and
//!   `PostCompact` (with `compact_summary` from the `isCompactSummary` line) once the summary and
//!   the lines written with it are there.
//! - `SessionEnd` (reason `other`) at the end of the file.
//!
//! Sidechain lines (subagents) and `progress` lines fire nothing.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{content_text, fields, Agent, Compaction, Events, Replay, Transcript};

const NO_SUCH_TOOL: &str = "No such tool available";

/// Results of calls that never ran: no Post hook fires for them.
const NOT_RUN: &[&str] = &[
    NO_SUCH_TOOL,
    "The user doesn't want to proceed with this tool use",
    "[Request interrupted by user for tool use]",
];

/// User lines that are not a typed prompt.
const NOT_PROMPTS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "[Request interrupted by user",
];

struct Call {
    name: String,
    input: Value,
}

/// The turn in progress.
#[derive(Default)]
struct Turn {
    open: bool,
    /// The last conversational line was a reply with no tool call in it.
    replied: bool,
    last_text: String,
    /// 1-based line of the turn's last reply.
    reply_line: usize,
}

pub fn reconstruct(t: &Transcript) -> Replay {
    let session = t
        .lines
        .iter()
        .filter_map(|l| l.value.as_ref())
        .find_map(|v| v.get("sessionId").and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| t.file_name().trim_end_matches(".jsonl").to_string());
    let mut ev = Events::new();
    let mut compactions = Vec::new();
    let mut calls: HashMap<String, Call> = HashMap::new();
    let mut turn = Turn::default();
    let mut model: Option<String> = None;
    // Something happened since the last start marker: a run of markers for one start counts once.
    let mut activity_since_start = true;
    let n = t.lines.len();
    let mut i = 0;
    while i < n {
        let Some(v) = t.value(i) else {
            i += 1;
            continue;
        };
        if let Some(source) = start_marker(v) {
            if source != "compact" && activity_since_start {
                close_turn(&mut ev, &mut turn, i);
                ev.end("SessionEnd", "other", i, i + 1);
                ev.start(&source, i, i + 1, Map::new());
            }
            activity_since_start = false;
            i += 1;
            continue;
        }
        if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            i += 1;
            continue;
        }
        match v.get("type").and_then(Value::as_str) {
            Some("system")
                if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") =>
            {
                activity_since_start = true;
                let meta = v
                    .get("compactMetadata")
                    .or_else(|| v.get("compact_metadata"));
                let trigger = meta
                    .and_then(|m| m.get("trigger"))
                    .and_then(Value::as_str)
                    .unwrap_or("auto")
                    .to_string();
                let pre_tokens = meta
                    .and_then(|m| m.get("preTokens").or_else(|| m.get("pre_tokens")))
                    .and_then(Value::as_u64);
                // A manual compaction is a command between turns.
                if trigger == "manual" {
                    close_turn(&mut ev, &mut turn, i);
                }
                let (after, summary, args) = after_boundary(t, i + 1);
                let custom = match (trigger.as_str(), args) {
                    ("manual", Some(a)) => Value::from(a),
                    ("manual", None) => Value::from(""),
                    _ => Value::Null,
                };
                let pre = ev.push(
                    "PreCompact",
                    i,
                    i + 1,
                    fields(&[
                        ("trigger", Value::from(trigger.as_str())),
                        ("custom_instructions", custom),
                    ]),
                );
                let mut start = Map::new();
                if let Some(m) = &model {
                    start.insert("model".into(), Value::from(m.as_str()));
                }
                let summary_line = summary.as_ref().map(|(l, _)| *l).unwrap_or(i + 1);
                ev.start("compact", after, summary_line, start);
                let mut post = fields(&[("trigger", Value::from(trigger.as_str()))]);
                if let Some((_, text)) = &summary {
                    post.insert("compact_summary".into(), Value::from(text.as_str()));
                }
                ev.push("PostCompact", after, summary_line, post);
                compactions.push(Compaction {
                    line: i + 1,
                    trigger,
                    pre_tokens,
                    summary: summary.map(|(_, s)| s),
                    pre_compact: Some(pre),
                });
                i = after;
                continue;
            }
            Some("assistant") => {
                let synthetic = v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
                    || v.pointer("/message/model").and_then(Value::as_str) == Some("<synthetic>");
                if !synthetic {
                    activity_since_start = true;
                    assistant(&mut ev, &mut turn, &mut calls, &mut model, t, i);
                }
            }
            Some("user") => {
                if let Some(results) = tool_results(v) {
                    activity_since_start = true;
                    for r in results {
                        result(&mut ev, &mut turn, &mut calls, t, v, &r, i);
                    }
                } else if let Some(prompt) = prompt_text(v) {
                    activity_since_start = true;
                    close_turn(&mut ev, &mut turn, i);
                    ev.push(
                        "UserPromptSubmit",
                        i,
                        i + 1,
                        fields(&[
                            ("permission_mode", Value::from("default")),
                            ("prompt", Value::from(prompt)),
                        ]),
                    );
                    turn = Turn {
                        open: true,
                        ..Turn::default()
                    };
                } else if content_text(v.pointer("/message/content").unwrap_or(&Value::Null))
                    .starts_with("[Request interrupted by user")
                {
                    // An interrupted turn fires no Stop.
                    turn.replied = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    close_turn(&mut ev, &mut turn, n);
    ev.end("SessionEnd", "other", n, n);
    Replay {
        agent: Agent::ClaudeCode,
        session,
        events: ev.list,
        compactions,
    }
}

/// `SessionStart:SOURCE` on a hook progress line or a hook attachment.
fn start_marker(v: &Value) -> Option<String> {
    let name = v
        .pointer("/data/hookName")
        .or_else(|| v.pointer("/attachment/hookName"))
        .and_then(Value::as_str)?;
    name.strip_prefix("SessionStart:").map(str::to_string)
}

/// After a boundary: the index where the agent is done writing the compaction (the summary line
/// and the meta lines, attachments and command echoes written with it), the summary with its
/// 1-based line, and a manual `/compact`'s arguments.
fn after_boundary(t: &Transcript, from: usize) -> (usize, Option<(usize, String)>, Option<String>) {
    let mut summary = None;
    let mut args = None;
    let mut j = from;
    while let Some(line) = t.lines.get(j) {
        let Some(v) = &line.value else {
            j += 1;
            continue;
        };
        if start_marker(v).is_some() {
            break;
        }
        match v.get("type").and_then(Value::as_str) {
            Some("assistant") => break,
            Some("user") => {
                let content = v.pointer("/message/content").unwrap_or(&Value::Null);
                if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
                    summary = Some((j + 1, content_text(content)));
                } else if tool_results(v).is_some() || prompt_text(v).is_some() {
                    break;
                } else {
                    let text = content_text(content);
                    if text.contains("<command-name>/compact</command-name>") {
                        args = between(&text, "<command-args>", "</command-args>")
                            .map(str::trim)
                            .filter(|a| !a.is_empty())
                            .map(str::to_string);
                    }
                }
            }
            _ => {}
        }
        j += 1;
    }
    (j, summary, args)
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

fn assistant(
    ev: &mut Events,
    turn: &mut Turn,
    calls: &mut HashMap<String, Call>,
    model: &mut Option<String>,
    t: &Transcript,
    i: usize,
) {
    let Some(v) = t.value(i) else { return };
    if let Some(m) = v.pointer("/message/model").and_then(Value::as_str) {
        *model = Some(m.to_string());
    }
    // A window may start in the middle of a turn.
    turn.open = true;
    let mut called = false;
    for block in v
        .pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                called = true;
                let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                // A tool the CLI does not have fires no hook at all.
                if result_of(t, id, i).is_some_and(|r| r.contains(NO_SUCH_TOOL)) {
                    continue;
                }
                ev.push(
                    "PreToolUse",
                    i + 1,
                    i + 1,
                    fields(&[
                        ("permission_mode", Value::from("default")),
                        ("tool_name", Value::from(name)),
                        ("tool_input", input.clone()),
                        ("tool_use_id", Value::from(id)),
                    ]),
                );
                calls.insert(
                    id.to_string(),
                    Call {
                        name: name.to_string(),
                        input,
                    },
                );
            }
            Some("text") => {
                let text = block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !text.trim().is_empty() {
                    turn.last_text = text.to_string();
                }
            }
            _ => {}
        }
    }
    turn.replied = !called;
    turn.reply_line = i + 1;
}

/// The `tool_result` blocks of a user line, if it has any.
fn tool_results(v: &Value) -> Option<Vec<Value>> {
    let parts = v.pointer("/message/content")?.as_array()?;
    let results: Vec<Value> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool_result"))
        .cloned()
        .collect();
    (!results.is_empty()).then_some(results)
}

fn result(
    ev: &mut Events,
    turn: &mut Turn,
    calls: &mut HashMap<String, Call>,
    t: &Transcript,
    line: &Value,
    block: &Value,
    i: usize,
) {
    turn.open = true;
    turn.replied = false;
    let id = block
        .get("tool_use_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let text = content_text(block.get("content").unwrap_or(&Value::Null));
    if NOT_RUN.iter().any(|s| text.contains(s)) {
        calls.remove(id);
        return;
    }
    // A window may start after the call: its name is on the hook's own progress lines.
    let call = calls.remove(id).unwrap_or_else(|| Call {
        name: progress_tool_name(t, id, i).unwrap_or_else(|| "unknown".into()),
        input: Value::Object(Map::new()),
    });
    let mut f = fields(&[
        ("permission_mode", Value::from("default")),
        ("tool_name", Value::from(call.name.as_str())),
        ("tool_input", call.input),
        ("tool_use_id", Value::from(id)),
    ]);
    let outcome = line.get("toolUseResult");
    if block.get("is_error").and_then(Value::as_bool) == Some(true) {
        let error = match outcome.and_then(Value::as_str) {
            Some(s) => s.strip_prefix("Error: ").unwrap_or(s).to_string(),
            None => text,
        };
        f.insert("error".into(), Value::from(error));
        f.insert("is_interrupt".into(), Value::from(false));
        ev.push("PostToolUseFailure", i, i + 1, f);
    } else {
        let response = outcome.cloned().unwrap_or(Value::from(text));
        f.insert("tool_response".into(), response);
        ev.push("PostToolUse", i, i + 1, f);
    }
}

/// The text of the result of call `id`, looked for after line `from`.
fn result_of(t: &Transcript, id: &str, from: usize) -> Option<String> {
    (from + 1..t.lines.len()).find_map(|j| {
        tool_results(t.value(j)?)?
            .into_iter()
            .find(|r| r.get("tool_use_id").and_then(Value::as_str) == Some(id))
            .map(|r| content_text(r.get("content").unwrap_or(&Value::Null)))
    })
}

fn progress_tool_name(t: &Transcript, id: &str, before: usize) -> Option<String> {
    (0..before).rev().find_map(|j| {
        let v = t.value(j)?;
        if v.get("toolUseID").and_then(Value::as_str) != Some(id) {
            return None;
        }
        let name = v.pointer("/data/hookName").and_then(Value::as_str)?;
        let (_, tool) = name.split_once(':')?;
        Some(tool.to_string())
    })
}

/// The typed prompt of a user line, if it is one.
fn prompt_text(v: &Value) -> Option<String> {
    for flag in ["isMeta", "isCompactSummary", "isVisibleInTranscriptOnly"] {
        if v.get(flag).and_then(Value::as_bool) == Some(true) {
            return None;
        }
    }
    let content = v.pointer("/message/content")?;
    if let Some(parts) = content.as_array() {
        if parts
            .iter()
            .any(|p| p.get("type").and_then(Value::as_str) == Some("tool_result"))
        {
            return None;
        }
    }
    let text = content_text(content);
    let trimmed = text.trim_start();
    if trimmed.is_empty() || NOT_PROMPTS.iter().any(|p| trimmed.starts_with(p)) {
        return None;
    }
    Some(text)
}

/// The turn is over: `Stop` if it ended in a reply.
fn close_turn(ev: &mut Events, turn: &mut Turn, cut: usize) {
    if turn.open && turn.replied {
        ev.push(
            "Stop",
            cut,
            turn.reply_line,
            fields(&[
                ("permission_mode", Value::from("default")),
                ("stop_hook_active", Value::from(false)),
                (
                    "last_assistant_message",
                    Value::from(turn.last_text.as_str()),
                ),
            ]),
        );
    }
    *turn = Turn::default();
}
