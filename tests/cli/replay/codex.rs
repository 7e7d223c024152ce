//! Codex's hooks, rebuilt from its rollout (FORMATS §2.4, §2.6, §7, §7b; the order in
//! `tests/fixtures/agents/codex-0.171.0/hook-order.txt`):
//!
//! - `SessionStart(startup)` before the first event.
//! - `UserPromptSubmit` before the prompt's `response_item` (the `user` message of the turn that
//!   the `user_message` event repeats; in rollouts without those events, a user message that is
//!   not one of Codex's own `<…>` blocks).
//! - `PreToolUse` after a call, `PostToolUse` with the rollout cut just before the call's output
//!   (failures too: Codex has no PostToolUseFailure), for the tools Codex runs hooks for: the
//!   shell (`tool_name` `Bash`), `apply_patch` and MCP tools (`mcp__server__tool`).
//! - `Stop` before a turn's `task_complete`.
//! - At a `compacted` line: `PreCompact` (cut before it), then `PostCompact` and
//!   `SessionStart(compact)` after it and the events written with it.
//! - `SessionEnd` (reason `other`) at the end of the file (`codex exec` fires it).
//!
//! A resumed run leaves no mark in the rollout, so the starts and ends in between are not seen.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{content_text, fields, Agent, Compaction, Events, Replay, Transcript};

/// What Codex calls its shell tool in rollouts, old and new.
const SHELL_TOOLS: &[&str] = &["exec_command", "shell", "local_shell", "container.exec"];

struct Call {
    name: String,
    input: Value,
}

pub fn reconstruct(t: &Transcript) -> Replay {
    let mut session = None;
    let mut model: Option<String> = None;
    let mut ev = Events::new();
    let mut compactions = Vec::new();
    let mut calls: HashMap<String, Call> = HashMap::new();
    let mut last_text = String::new();
    let mut last_reply_line = 0;
    let mut last_tokens: Option<u64> = None;
    let has_prompt_events = t.lines.iter().any(|l| {
        l.value
            .as_ref()
            .is_some_and(|v| kind(v) == ("event_msg", "user_message"))
    });
    // Index of the last user message item not yet claimed by a prompt.
    let mut user_item: Option<usize> = None;
    let n = t.lines.len();
    let mut i = 0;
    while i < n {
        let Some(v) = t.value(i) else {
            i += 1;
            continue;
        };
        let p = v.get("payload").unwrap_or(&Value::Null);
        match kind(v) {
            ("session_meta", _) if session.is_none() => {
                session = p.get("id").and_then(Value::as_str).map(str::to_string);
            }
            ("event_msg", "task_started") => user_item = None,
            ("turn_context", _) => {
                if let Some(m) = p.get("model").and_then(Value::as_str) {
                    model = Some(m.to_string());
                }
            }
            ("event_msg", "token_count") => {
                if let Some(total) = p
                    .pointer("/info/last_token_usage")
                    .filter(|u| u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0) > 0)
                    .and_then(|u| u.get("total_tokens"))
                    .and_then(Value::as_u64)
                {
                    last_tokens = Some(total);
                }
            }
            ("response_item", "message") => {
                let text = content_text(p.get("content").unwrap_or(&Value::Null));
                match p.get("role").and_then(Value::as_str) {
                    Some("user") if !text.trim_start().starts_with('<') => {
                        if has_prompt_events {
                            user_item = Some(i);
                        } else {
                            prompt(&mut ev, &model, &text, i, i);
                        }
                    }
                    Some("assistant") if !text.trim().is_empty() => {
                        last_text = text;
                        last_reply_line = i + 1;
                    }
                    _ => {}
                }
            }
            ("event_msg", "user_message") => {
                let text = p.get("message").and_then(Value::as_str).unwrap_or_default();
                let cut = user_item.take().unwrap_or(i);
                prompt(&mut ev, &model, text, cut, cut);
            }
            ("response_item", "function_call" | "custom_tool_call" | "local_shell_call") => {
                if let Some((name, input)) = hooked_call(p) {
                    let id = p.get("call_id").and_then(Value::as_str).unwrap_or_default();
                    ev.push(
                        "PreToolUse",
                        i + 1,
                        i + 1,
                        with_model(
                            &model,
                            &[
                                ("tool_name", Value::from(name.as_str())),
                                ("tool_input", input.clone()),
                                ("tool_use_id", Value::from(id)),
                            ],
                        ),
                    );
                    calls.insert(id.to_string(), Call { name, input });
                }
            }
            ("response_item", "function_call_output" | "custom_tool_call_output") => {
                let id = p.get("call_id").and_then(Value::as_str).unwrap_or_default();
                if let Some(call) = calls.remove(id) {
                    let output = output_text(p.get("output").unwrap_or(&Value::Null));
                    if !output.starts_with("unsupported call") {
                        ev.push(
                            "PostToolUse",
                            i,
                            i + 1,
                            with_model(
                                &model,
                                &[
                                    ("tool_name", Value::from(call.name.as_str())),
                                    ("tool_input", call.input),
                                    ("tool_response", Value::from(response(&call.name, &output))),
                                    ("tool_use_id", Value::from(id)),
                                ],
                            ),
                        );
                    }
                }
            }
            ("event_msg", "task_complete") => {
                let last = p
                    .get("last_agent_message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| last_text.clone());
                ev.push(
                    "Stop",
                    i,
                    last_reply_line,
                    with_model(
                        &model,
                        &[
                            ("stop_hook_active", Value::from(false)),
                            ("last_assistant_message", Value::from(last)),
                        ],
                    ),
                );
            }
            ("compacted", _) => {
                // A turn that only compacts is a `/compact`.
                let manual = (0..i)
                    .rev()
                    .filter_map(|j| t.value(j))
                    .map(kind)
                    .find(|k| !matches!(k, ("turn_context", _) | ("event_msg", "token_count")))
                    == Some(("event_msg", "task_started"));
                let trigger = if manual { "manual" } else { "auto" };
                let pre = ev.push(
                    "PreCompact",
                    i,
                    i + 1,
                    with_model(&model, &[("trigger", Value::from(trigger))]),
                );
                let mut after = i + 1;
                while let Some(w) = t.value(after) {
                    match kind(w) {
                        ("response_item", _) | ("event_msg", "task_complete" | "user_message") => {
                            break
                        }
                        _ => after += 1,
                    }
                }
                ev.push(
                    "PostCompact",
                    after,
                    i + 1,
                    with_model(&model, &[("trigger", Value::from(trigger))]),
                );
                let mut start = with_model(&model, &[]);
                start.insert("permission_mode".into(), Value::from("default"));
                ev.start("compact", after, i + 1, start);
                let summary = p
                    .get("message")
                    .and_then(Value::as_str)
                    .filter(|m| !m.trim().is_empty() && !m.starts_with("[REDACTED"))
                    .map(str::to_string);
                compactions.push(Compaction {
                    line: i + 1,
                    trigger: trigger.to_string(),
                    pre_tokens: last_tokens,
                    summary,
                    pre_compact: Some(pre),
                });
                i = after;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    ev.end("SessionEnd", "other", n, n);
    Replay {
        agent: Agent::Codex,
        session: session.unwrap_or_else(|| t.file_name().trim_end_matches(".jsonl").to_string()),
        events: ev.list,
        compactions,
    }
}

fn kind(v: &Value) -> (&str, &str) {
    let t = v.get("type").and_then(Value::as_str).unwrap_or_default();
    let p = v
        .pointer("/payload/type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    (t, p)
}

fn with_model(model: &Option<String>, pairs: &[(&str, Value)]) -> Map<String, Value> {
    let mut f = fields(pairs);
    if let Some(m) = model {
        f.insert("model".into(), Value::from(m.as_str()));
    }
    f
}

fn prompt(ev: &mut Events, model: &Option<String>, text: &str, cut: usize, line: usize) {
    ev.push(
        "UserPromptSubmit",
        cut,
        line + 1,
        with_model(
            model,
            &[
                ("permission_mode", Value::from("default")),
                ("prompt", Value::from(text)),
            ],
        ),
    );
}

/// The hook's `tool_name` and `tool_input` for a call Codex runs hooks for.
fn hooked_call(p: &Value) -> Option<(String, Value)> {
    let name = p
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("local_shell");
    let args: Value = match p.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        Some(other) => other.clone(),
        None => p
            .get("action")
            .or_else(|| p.get("input"))
            .cloned()
            .unwrap_or(Value::Null),
    };
    if SHELL_TOOLS.contains(&name) {
        let command = match args.get("cmd").or_else(|| args.get("command")) {
            Some(Value::String(s)) => s.clone(),
            // `["bash", "-lc", "cargo test"]`: the script is the last word.
            Some(Value::Array(words)) => {
                let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                match words.as_slice() {
                    [_, flag, script] if flag.starts_with('-') => script.to_string(),
                    _ => words.join(" "),
                }
            }
            _ => args.as_str().unwrap_or_default().to_string(),
        };
        return Some(("Bash".into(), serde_json::json!({ "command": command })));
    }
    if name == "apply_patch" {
        let patch = match p.get("input").and_then(Value::as_str) {
            Some(s) => s.to_string(),
            None => args
                .get("input")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        };
        return Some((
            "apply_patch".into(),
            serde_json::json!({ "command": patch }),
        ));
    }
    name.starts_with("mcp__").then(|| (name.to_string(), args))
}

/// A call's output as the rollout holds it: text, or `{"output": …}` as older versions wrote.
fn output_text(output: &Value) -> String {
    let text = match output {
        Value::String(s) => s.clone(),
        Value::Object(_) => output
            .get("content")
            .or_else(|| output.get("output"))
            .map(content_text)
            .unwrap_or_default(),
        _ => String::new(),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v) if v.get("output").is_some() => content_text(&v["output"]),
        _ => text,
    }
}

/// What the hook's `tool_response` carries: the command's own output for the shell (the rollout
/// wraps it in `Chunk ID`/`Wall time`/`Process exited with code` lines), the whole text for
/// the rest (as Codex 0.169 sent it for `apply_patch`).
fn response(tool: &str, output: &str) -> String {
    if tool == "Bash" {
        if let Some((_, rest)) = output.split_once("\nOutput:\n") {
            return rest.to_string();
        }
    }
    output.to_string()
}
