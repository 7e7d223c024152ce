//! ctxkeep's entries in Claude Code's `settings.json`: add, find and remove
//! them without touching anything else. Pure functions over the parsed
//! document (key order is kept: serde_json's `preserve_order`).
//!
//! An entry is ctxkeep's when its command runs `ctxkeep hook claude-code` or
//! `ctxkeep statusline` (any path to the binary, any extra flags), so a
//! hand-added `--strict` is recognized too.

use serde_json::{json, Map, Value};

pub const HOOK_COMMAND: &str = "ctxkeep hook claude-code";
pub const STATUSLINE_COMMAND: &str = "ctxkeep statusline";

/// The events ctxkeep hooks, with the matcher each gets (None: every
/// occurrence; `Stop` is not hooked: ctxkeep has nothing cheap to do there).
pub const EVENTS: &[(&str, Option<&str>)] = &[
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", Some("*")),
    ("PreCompact", None),
    ("SessionEnd", None),
];

/// One change to the document, for the report (`+`/`-` lines).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// `added` or `removed`.
    pub op: &'static str,
    /// `hooks.<Event>` or `statusLine`.
    pub key: String,
    pub command: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.op == "added" { '+' } else { '-' };
        write!(f, "{sign} {}: {}", self.key, self.command)
    }
}

/// Which of ctxkeep's commands `command` runs, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ours {
    Hook,
    StatusLine,
}

pub fn ours(command: &str) -> Option<Ours> {
    let mut words = command.split_whitespace();
    let program = words.next()?.trim_matches(['"', '\'']);
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    if name != "ctxkeep" && name != "ctxkeep.exe" {
        return None;
    }
    match (words.next(), words.next()) {
        (Some("hook"), Some("claude-code" | "claude")) => Some(Ours::Hook),
        (Some("statusline"), _) => Some(Ours::StatusLine),
        _ => None,
    }
}

/// What is installed, for `hooks doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// (event, ctxkeep's command there if any), for every event in [`EVENTS`].
    pub hooks: Vec<(&'static str, Option<String>)>,
    pub status_line: StatusLine,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusLine {
    None,
    Ours(String),
    /// The user's own command.
    Theirs(String),
}

fn command_of(entry: &Value) -> Option<&str> {
    entry.get("command").and_then(Value::as_str)
}

fn status_line(doc: &Map<String, Value>) -> StatusLine {
    match doc.get("statusLine") {
        None | Some(Value::Null) => StatusLine::None,
        Some(v) => {
            let cmd = command_of(v).unwrap_or_default().to_string();
            if ours(&cmd) == Some(Ours::StatusLine) {
                StatusLine::Ours(cmd)
            } else {
                StatusLine::Theirs(cmd)
            }
        }
    }
}

/// ctxkeep's hook command under `event`, when one is there.
fn our_hook(doc: &Map<String, Value>, event: &str) -> Option<String> {
    doc.get("hooks")?
        .get(event)?
        .as_array()?
        .iter()
        .filter_map(|group| group.get("hooks")?.as_array())
        .flatten()
        .filter_map(command_of)
        .find(|c| ours(c) == Some(Ours::Hook))
        .map(str::to_string)
}

pub fn installed(doc: &Value) -> Installed {
    let empty = Map::new();
    let doc = doc.as_object().unwrap_or(&empty);
    Installed {
        hooks: EVENTS
            .iter()
            .map(|(event, _)| (*event, our_hook(doc, event)))
            .collect(),
        status_line: status_line(doc),
    }
}

/// The outcome of [`install`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub changes: Vec<Change>,
    /// The user's status line, kept (without `force`).
    pub kept_status_line: Option<String>,
}

/// Adds what is missing of ctxkeep's hooks and status line. Errors name
/// the key whose shape is not what Claude Code reads (nothing is changed).
pub fn install(doc: &mut Value, force: bool) -> Result<Plan, String> {
    let root = doc
        .as_object_mut()
        .ok_or("the settings are not a JSON object")?;
    check_shape(root)?;
    let mut changes = Vec::new();
    for (event, matcher) in EVENTS {
        if our_hook(root, event).is_some() {
            continue;
        }
        let groups = root
            .entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .map(|hooks| hooks.entry(*event).or_insert_with(|| json!([])))
            .and_then(Value::as_array_mut)
            .ok_or("`hooks` changed shape")?;
        let mut group = Map::new();
        if let Some(m) = matcher {
            group.insert("matcher".into(), json!(m));
        }
        group.insert(
            "hooks".into(),
            json!([{ "type": "command", "command": HOOK_COMMAND }]),
        );
        groups.push(Value::Object(group));
        changes.push(Change {
            op: "added",
            key: format!("hooks.{event}"),
            command: HOOK_COMMAND.into(),
        });
    }
    let mut kept_status_line = None;
    match status_line(root) {
        StatusLine::Ours(_) => {}
        StatusLine::Theirs(cmd) if !force => kept_status_line = Some(cmd),
        other => {
            if let StatusLine::Theirs(cmd) = other {
                changes.push(Change {
                    op: "removed",
                    key: "statusLine".into(),
                    command: cmd,
                });
            }
            root.insert(
                "statusLine".into(),
                json!({ "type": "command", "command": STATUSLINE_COMMAND }),
            );
            changes.push(Change {
                op: "added",
                key: "statusLine".into(),
                command: STATUSLINE_COMMAND.into(),
            });
        }
    }
    Ok(Plan {
        changes,
        kept_status_line,
    })
}

/// Removes ctxkeep's hook entries (a group left empty goes too, and an event
/// or `hooks` left empty by that) and its status line; nothing else.
pub fn uninstall(doc: &mut Value) -> Result<Vec<Change>, String> {
    let root = doc
        .as_object_mut()
        .ok_or("the settings are not a JSON object")?;
    check_shape(root)?;
    let mut changes = Vec::new();
    if let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, groups) in hooks.iter_mut() {
            let Some(groups) = groups.as_array_mut() else {
                continue;
            };
            for group in groups.iter_mut() {
                let Some(entries) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                    continue;
                };
                entries.retain(|e| match command_of(e) {
                    Some(cmd) if ours(cmd) == Some(Ours::Hook) => {
                        changes.push(Change {
                            op: "removed",
                            key: format!("hooks.{event}"),
                            command: cmd.to_string(),
                        });
                        false
                    }
                    _ => true,
                });
            }
        }
        if !changes.is_empty() {
            // Only what ctxkeep emptied goes: a removed entry's group, then
            // its event, then `hooks`.
            let touched: Vec<String> = changes
                .iter()
                .filter_map(|c| c.key.strip_prefix("hooks.").map(str::to_string))
                .collect();
            for event in &touched {
                if let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) {
                    groups.retain(|g| {
                        g.get("hooks")
                            .and_then(Value::as_array)
                            .is_none_or(|e| !e.is_empty())
                    });
                    if groups.is_empty() {
                        hooks.remove(event);
                    }
                }
            }
            if hooks.is_empty() {
                root.remove("hooks");
            }
        }
    }
    if let StatusLine::Ours(cmd) = status_line(root) {
        root.remove("statusLine");
        changes.push(Change {
            op: "removed",
            key: "statusLine".into(),
            command: cmd,
        });
    }
    Ok(changes)
}

/// `hooks` must be an object of arrays for ctxkeep to edit it safely.
fn check_shape(root: &Map<String, Value>) -> Result<(), String> {
    match root.get("hooks") {
        None => Ok(()),
        Some(Value::Object(hooks)) => {
            for (event, groups) in hooks {
                if !groups.is_array() {
                    return Err(format!("`hooks.{event}` is not a list"));
                }
            }
            Ok(())
        }
        Some(_) => Err("`hooks` is not an object".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_recognizes_paths_and_flags_only_for_our_commands() {
        assert_eq!(ours("ctxkeep hook claude-code"), Some(Ours::Hook));
        assert_eq!(
            ours("/home/u/.cargo/bin/ctxkeep hook claude-code --strict"),
            Some(Ours::Hook)
        );
        assert_eq!(ours("\"ctxkeep\" statusline"), Some(Ours::StatusLine));
        assert_eq!(ours("ctxkeep hook codex"), None);
        assert_eq!(ours("notctxkeep hook claude-code"), None);
        assert_eq!(ours("echo ctxkeep hook claude-code"), None);
        assert_eq!(ours(""), None);
    }

    #[test]
    fn install_keeps_other_entries_and_is_idempotent() {
        let mut doc = json!({
            "model": "opus",
            "hooks": { "PostToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "fmt.sh" }] }] },
        });
        let plan = install(&mut doc, false).unwrap();
        assert_eq!(plan.changes.len(), EVENTS.len() + 1);
        let post = doc["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2);
        assert_eq!(post[0]["hooks"][0]["command"], "fmt.sh");
        assert_eq!(post[1]["matcher"], "*");
        let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["model", "hooks", "statusLine"],
            "order kept, ours last"
        );
        let before = doc.clone();
        let again = install(&mut doc, false).unwrap();
        assert!(again.changes.is_empty());
        assert_eq!(doc, before);
        assert!(installed(&doc).hooks.iter().all(|(_, c)| c.is_some()));
    }

    #[test]
    fn a_user_status_line_is_kept_unless_forced() {
        let mut doc = json!({ "statusLine": { "type": "command", "command": "~/bin/line.sh" } });
        let plan = install(&mut doc, false).unwrap();
        assert_eq!(plan.kept_status_line.as_deref(), Some("~/bin/line.sh"));
        assert_eq!(doc["statusLine"]["command"], "~/bin/line.sh");
        let plan = install(&mut doc, true).unwrap();
        assert_eq!(plan.kept_status_line, None);
        assert_eq!(doc["statusLine"]["command"], STATUSLINE_COMMAND);
        assert!(plan
            .changes
            .iter()
            .any(|c| c.op == "removed" && c.command == "~/bin/line.sh"));
    }

    #[test]
    fn uninstall_removes_only_ours() {
        let original = json!({
            "hooks": {
                "PostToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "fmt.sh" }] }],
                "Stop": [],
            },
            "env": { "A": "1" },
        });
        let mut doc = original.clone();
        install(&mut doc, false).unwrap();
        let removed = uninstall(&mut doc).unwrap();
        assert_eq!(removed.len(), EVENTS.len() + 1);
        assert_eq!(doc, original, "back to the user's document exactly");
        assert!(uninstall(&mut doc).unwrap().is_empty());
    }

    #[test]
    fn odd_shapes_are_refused() {
        assert!(install(&mut json!([1]), false).is_err());
        assert!(install(&mut json!({ "hooks": [] }), false).is_err());
        assert!(install(&mut json!({ "hooks": { "Stop": {} } }), false).is_err());
        assert!(uninstall(&mut json!({ "hooks": 3 })).is_err());
    }
}
