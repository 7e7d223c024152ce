//! Gemini CLI's hooks, rebuilt from its chat recording (FORMATS §3.2, §3.4, §7, §7b; the order
//! in `tests/fixtures/agents/gemini-0.61.0/hook-order.txt`):
//!
//! - `SessionStart(startup)` before the first event; a later metadata line is a resumed run:
//!   `AfterAgent` if the turn finished, `SessionEnd` (reason `exit`), then `SessionStart(resume)`
//!   before its first message.
//! - `BeforeAgent` before each typed prompt (not a `functionResponse`, not Gemini's own "Please
//!   continue." nudge within a turn).
//! - `PreCompress` (trigger `auto`) before every model call (a `gemini` message id seen for the
//!   first time), with the recording cut before the `$set` patches and tool responses written
//!   between the previous reply and that call: Gemini CLI 0.61 fires it whether or not it then
//!   compresses. A `$set` of the whole message list that does not follow a metadata line is the
//!   compression itself.
//! - `BeforeTool` and `AfterTool` with the recording cut just before the message copy that carries
//!   the call's result (`toolCalls[].result`), the outcome in the payload's `tool_response`.
//! - `AfterAgent` when a turn whose last reply called no tool is followed by a prompt, a resumed
//!   run or the end of the file; `SessionEnd` (reason `exit`) at the end of the file.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::{content_text, fields, Agent, Compaction, Events, Replay, Transcript};

/// Gemini's own text when it makes the model go on within a turn.
const INTERNAL_PROMPTS: &[&str] = &["System: Please continue"];

#[derive(Default)]
struct Turn {
    open: bool,
    replied: bool,
    prompt: String,
    last_text: String,
    reply_line: usize,
}

pub fn reconstruct(t: &Transcript) -> Replay {
    let mut session = None;
    let mut ev = Events::new();
    let mut compactions: Vec<Compaction> = Vec::new();
    let mut waiting: Option<usize> = None;
    let mut seen_messages: HashSet<String> = HashSet::new();
    let mut seen_calls: HashSet<String> = HashSet::new();
    let mut turn = Turn::default();
    let mut last_tokens = None;
    let mut runs = 0;
    // Only `$set` records since the last metadata line: a message list set there is a resume.
    let mut after_metadata = false;
    let n = t.lines.len();
    for i in 0..n {
        let Some(v) = t.value(i) else { continue };
        if v.get("sessionId").is_some() && v.get("projectHash").is_some() && v.get("type").is_none()
        {
            if session.is_none() {
                session = v
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            if runs > 0 {
                close_turn(&mut ev, &mut turn, i);
                ev.end("SessionEnd", "exit", i, i + 1);
            }
            runs += 1;
            after_metadata = true;
            continue;
        }
        if let Some(set) = v.get("$set") {
            if let (Some(messages), false) = (
                set.get("messages").and_then(Value::as_array),
                after_metadata,
            ) {
                waiting = Some(compactions.len());
                compactions.push(Compaction {
                    line: i + 1,
                    trigger: "auto".into(),
                    pre_tokens: last_tokens,
                    summary: summary_of(messages),
                    pre_compact: None,
                });
            }
            continue;
        }
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            continue;
        };
        after_metadata = false;
        let stamp = v.get("timestamp").cloned().unwrap_or(Value::Null);
        let resumed = runs > 1;
        match kind {
            "user" => {
                let content = v.get("content").unwrap_or(&Value::Null);
                let tool_reply = content
                    .as_array()
                    .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()));
                let text = content_text(content);
                if tool_reply
                    || text.trim().is_empty()
                    || INTERNAL_PROMPTS.iter().any(|p| text.starts_with(p))
                {
                    continue;
                }
                close_turn(&mut ev, &mut turn, i);
                begin(&mut ev, resumed, i, &stamp);
                ev.push(
                    "BeforeAgent",
                    i,
                    i + 1,
                    fields(&[
                        ("timestamp", stamp.clone()),
                        ("prompt", Value::from(text.as_str())),
                    ]),
                );
                turn = Turn {
                    open: true,
                    prompt: text,
                    ..Turn::default()
                };
            }
            "gemini" => {
                let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
                begin(&mut ev, resumed, i, &stamp);
                turn.open = true;
                if seen_messages.insert(id.to_string()) {
                    let cut = before_call(t, i);
                    let pre = ev.push(
                        "PreCompress",
                        cut,
                        i + 1,
                        fields(&[
                            ("timestamp", stamp.clone()),
                            ("trigger", Value::from("auto")),
                        ]),
                    );
                    if let Some(c) = waiting.take() {
                        compactions[c].pre_compact = Some(pre);
                    }
                }
                if let Some(input) = v.pointer("/tokens/input").and_then(Value::as_u64) {
                    last_tokens = Some(input);
                }
                let text = content_text(v.get("content").unwrap_or(&Value::Null));
                if !text.trim().is_empty() {
                    turn.last_text = text;
                }
                let calls = v
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for call in &calls {
                    tool_call(&mut ev, &mut seen_calls, call, i, &stamp);
                }
                turn.replied = calls.is_empty();
                turn.reply_line = i + 1;
            }
            _ => {}
        }
    }
    close_turn(&mut ev, &mut turn, n);
    ev.end("SessionEnd", "exit", n, n);
    Replay {
        agent: Agent::Gemini,
        session: session.unwrap_or_else(|| t.file_name().trim_end_matches(".jsonl").to_string()),
        events: ev.list,
        compactions,
    }
}

/// A resumed run starts before its first message.
fn begin(ev: &mut Events, resumed: bool, i: usize, stamp: &Value) {
    if resumed && !ev.started() {
        ev.start("resume", i, i + 1, fields(&[("timestamp", stamp.clone())]));
    }
}

/// Where the recording stood when the model call that wrote line `i` was made: before the `$set`
/// patches and tool responses recorded after the previous reply.
fn before_call(t: &Transcript, i: usize) -> usize {
    let mut k = i;
    while k > 0 {
        let Some(v) = t.value(k - 1) else { break };
        let tool_reply = v.get("type").and_then(Value::as_str) == Some("user")
            && v.get("content")
                .and_then(Value::as_array)
                .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()));
        if v.get("$set").is_none() && !tool_reply {
            break;
        }
        k -= 1;
    }
    k
}

/// `BeforeTool` and `AfterTool` for a finished call not seen yet.
fn tool_call(ev: &mut Events, seen: &mut HashSet<String>, call: &Value, i: usize, stamp: &Value) {
    let status = call
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !matches!(status, "success" | "error") {
        return;
    }
    let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
    if !seen.insert(id.to_string()) {
        return;
    }
    let name = call
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let input = call
        .get("args")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let before = fields(&[
        ("timestamp", stamp.clone()),
        ("tool_name", Value::from(name)),
        ("tool_input", input.clone()),
    ]);
    ev.push("BeforeTool", i, i + 1, before.clone());
    let llm = call
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.pointer("/functionResponse/response"))
        .map(|r| match r.get("output").or_else(|| r.get("error")) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => r.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut after = before;
    after.insert(
        "tool_response".into(),
        json!({ "llmContent": llm, "returnDisplay": call.get("resultDisplay").cloned().unwrap_or(Value::Null) }),
    );
    ev.push("AfterTool", i, i + 1, after);
}

/// The summary a compression left: the message holding Gemini's `<state_snapshot>`, else the
/// first message's text.
fn summary_of(messages: &[Value]) -> Option<String> {
    let texts: Vec<String> = messages
        .iter()
        .filter_map(|m| m.get("content"))
        .map(content_text)
        .filter(|s| !s.trim().is_empty())
        .collect();
    texts
        .iter()
        .find(|s| s.contains("<state_snapshot>"))
        .or(texts.first())
        .cloned()
}

fn close_turn(ev: &mut Events, turn: &mut Turn, cut: usize) {
    if turn.open && turn.replied {
        ev.push(
            "AfterAgent",
            cut,
            turn.reply_line,
            fields(&[
                ("prompt", Value::from(turn.prompt.as_str())),
                ("prompt_response", Value::from(turn.last_text.as_str())),
                ("stop_hook_active", Value::from(false)),
            ]),
        );
    }
    *turn = Turn::default();
}
