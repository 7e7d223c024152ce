//! ctxkeep's entries in an agent's hook settings: add, find and remove them
//! without touching anything else. One small file per agent says where its
//! file is, which events ctxkeep hooks and what it must be told about
//! trust; the merge, the search and the removal here are shared. They
//! decide from the parsed value and edit the file's text (`json_edit`):
//! only ctxkeep's entries are inserted or removed, every other byte stays.
//!
//! All three agents read the same shape: `hooks` maps an event to a list of
//! groups `{matcher?, hooks: [{type: "command", command}]}`. An entry is
//! ctxkeep's when its command runs `ctxkeep hook <this agent>` (any path to
//! the binary, any extra flags, so a hand-added `--strict` is recognized
//! too), or, for Claude Code's status line, `ctxkeep statusline`.

pub mod json_edit;
pub mod mcp;

use std::path::Path;

use serde_json::{json, Map, Value};

use self::json_edit::{JsonText, Step};

/// ctxkeep's status line, guarded as the hooks are: where ctxkeep is missing (a teammate's
/// clone) it prints nothing rather than `sh: ctxkeep: not found`.
pub const STATUSLINE_COMMAND: &str =
    "command -v ctxkeep >/dev/null 2>&1 || { cat >/dev/null; exit 0; }; ctxkeep statusline";

/// How a composed status line starts: where ctxkeep is missing, the user's own line runs alone.
const COMPOSED_FALLBACK: &str = "command -v ctxkeep >/dev/null 2>&1 || exec sh -c ";

/// The status line that shows the user's own `theirs` with ctxkeep's gauge after it, and
/// `theirs` alone where ctxkeep is not installed.
pub fn composed_status_line(theirs: &str) -> String {
    let q = shell_quote(theirs);
    format!("{COMPOSED_FALLBACK}{q}; exec ctxkeep statusline --with {q}")
}

/// The user's command a status line of ctxkeep's composes (`--with 'COMMAND'`), if any.
pub fn composed_with(command: &str) -> Option<String> {
    let at = command.find(" statusline --with ")? + " statusline --with ".len();
    let (theirs, rest) = shell_unquote(&command[at..])?;
    rest.trim().is_empty().then_some(theirs)
}

/// `text` as one POSIX shell word in single quotes.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The single-quoted shell word `text` starts with (`'\''` inside it is a quote), and what
/// follows it.
fn shell_unquote(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix("\\''") {
            Some(more) => {
                word.push('\'');
                rest = more;
            }
            None => return Some((word, rest)),
        }
    }
}

/// Where the user's own settings file is, from the environment handed in.
pub type UserSettings = fn(&dyn Fn(&str) -> Option<String>) -> Option<std::path::PathBuf>;

/// A status line found at another of the agent's settings levels than the file being edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherStatusLine {
    pub command: String,
    /// The file it is in, as the report names it.
    pub file: String,
    /// It wins over the file being edited (a more particular level).
    pub overrides: bool,
}

/// The start of a hook command that does nothing where `ctxkeep` is not on
/// PATH (a teammate who has not installed it): a POSIX shell test, for the
/// agents that run a hook command through `sh`. An entry with it is
/// ctxkeep's as one without it is.
pub const MISSING_GUARD: &str =
    "command -v ctxkeep >/dev/null 2>&1 || { cat >/dev/null; exit 0; }; ";

/// One event ctxkeep hooks, with the matcher its group gets (None: every
/// occurrence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub name: &'static str,
    pub matcher: Option<&'static str>,
}

impl Event {
    pub const fn new(name: &'static str) -> Event {
        Event {
            name,
            matcher: None,
        }
    }

    pub const fn matching(name: &'static str, matcher: &'static str) -> Event {
        Event {
            name,
            matcher: Some(matcher),
        }
    }
}

/// What ctxkeep writes into one agent's settings.
#[derive(Debug, Clone, Copy)]
pub struct AgentSettings {
    /// The agent's id (`claude-code`, …), as `ctxkeep hook` names it.
    pub name: &'static str,
    /// The name people read (`Claude Code`).
    pub display_name: &'static str,
    /// The folder beside `project-state.md` that holds the file.
    pub dir: &'static str,
    pub file: &'static str,
    /// The command every hook entry runs (with [`MISSING_GUARD`] where the
    /// agent runs it through `sh`).
    pub hook_command: &'static str,
    /// The agent's personal settings file beside `file` (not shared through
    /// git), which `hooks install --personal` writes; None when it has none.
    pub personal: Option<&'static str>,
    /// The words after `ctxkeep hook` that name this agent.
    pub hook_words: &'static [&'static str],
    /// The events ctxkeep hooks, in the order they are written.
    pub events: &'static [Event],
    /// Claude Code's `statusLine` is ctxkeep's too.
    pub status_line: bool,
    /// The user's own settings file, read for a status line set there (the environment is
    /// handed in), where the agent has one.
    pub user_settings: Option<UserSettings>,
    /// The agent's own command that registers `ctxkeep mcp` for this user only, where it has one.
    pub personal_mcp: Option<&'static str>,
    /// The agent wants JSON on a hook's stdout every time (Gemini CLI).
    pub json_always: bool,
    /// What the user must do before the agent runs the hooks: one line
    /// each, for the project at the path given.
    pub trust: &'static [fn(&Path) -> String],
    /// What the user must do before the agent starts a project's MCP
    /// server, when it asks.
    pub mcp_approval: Option<&'static str>,
    /// The agent reads its settings file as JSON with comments.
    pub comments_allowed: bool,
    /// Where the agent reads the project's MCP servers.
    pub mcp: mcp::McpSettings,
    /// The agent takes code, not settings (a plugin): the file at
    /// `dir`/`file` is ctxkeep's own, written whole and removed whole, and
    /// it runs `hook_command` for every event in `events`.
    pub code: Option<CodeFile>,
}

/// A file of ctxkeep's code that the agent loads (a plugin).
#[derive(Debug, Clone, Copy)]
pub struct CodeFile {
    /// Its text, as `hooks install` writes it.
    pub text: &'static str,
    /// A word only ctxkeep's file holds: a file at that path without it is
    /// the user's, and neither replaced nor removed.
    pub marker: &'static str,
}

impl CodeFile {
    /// Whether `text` is a file of ctxkeep's (this version or another).
    pub fn is_ours(&self, text: &str) -> bool {
        text.contains(self.marker)
    }
}

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

/// Which of ctxkeep's commands a command runs, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ours {
    Hook,
    StatusLine,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusLine {
    None,
    Ours(String),
    /// The user's own command.
    Theirs(String),
}

/// What is installed, for `hooks doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// (event, ctxkeep's command there if any), for every event ctxkeep hooks.
    pub hooks: Vec<(&'static str, Option<String>)>,
    /// Claude Code only; `None` for the others.
    pub status_line: StatusLine,
}

/// The outcome of [`AgentSettings::install`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub changes: Vec<Change>,
    /// The user's status line, kept (without `force`) and not composed.
    pub kept_status_line: Option<String>,
    /// The file that holds it, when it is not the one edited.
    pub kept_in: Option<String>,
    /// The user's status line that ctxkeep's now shows beside its gauge.
    pub composed_with: Option<String>,
}

fn command_of(entry: &Value) -> Option<&str> {
    entry.get("command").and_then(Value::as_str)
}

impl AgentSettings {
    /// What most agents' settings are, for the fields an agent does not state (its settings
    /// end with `..AgentSettings::USUAL`): no personal file, no status line, a hook may print
    /// nothing, no trust step or MCP approval, JSON without comments, hooks rather than code.
    /// The names, the file, the command and the events are each agent's own: empty here, and
    /// a test checks every agent states them.
    pub const USUAL: AgentSettings = AgentSettings {
        name: "",
        display_name: "",
        dir: "",
        file: "",
        hook_command: "",
        personal: None,
        hook_words: &[],
        events: &[],
        status_line: false,
        user_settings: None,
        personal_mcp: None,
        json_always: false,
        trust: &[],
        mcp_approval: None,
        comments_allowed: false,
        mcp: mcp::McpSettings::json(None, ""),
        code: None,
    };

    /// The name the command line and `ctxkeep hook` use (`claude-code`, …).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Which of ctxkeep's commands for this agent `command` runs, if any.
    pub fn ours(&self, command: &str) -> Option<Ours> {
        let command = command.trim_start();
        let command = command.strip_prefix(MISSING_GUARD).unwrap_or(command);
        // A composed status line: its fallback runs the user's line, then ctxkeep's runs.
        let command = match command.strip_prefix(COMPOSED_FALLBACK) {
            Some(rest) => shell_unquote(rest)?
                .1
                .trim_start()
                .strip_prefix("; exec ")?,
            None => command,
        };
        let mut words = command.split_whitespace();
        let program = words.next()?.trim_matches(['"', '\'']);
        let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
        if name != "ctxkeep" && name != "ctxkeep.exe" {
            return None;
        }
        match (words.next(), words.next()) {
            (Some("hook"), Some(agent)) if self.hook_words.contains(&agent) => Some(Ours::Hook),
            (Some("statusline"), _) if self.status_line => Some(Ours::StatusLine),
            _ => None,
        }
    }

    fn status_line_of(&self, doc: &Map<String, Value>) -> StatusLine {
        if !self.status_line {
            return StatusLine::None;
        }
        match doc.get("statusLine") {
            None | Some(Value::Null) => StatusLine::None,
            Some(v) => {
                let cmd = command_of(v).unwrap_or_default().to_string();
                if self.ours(&cmd) == Some(Ours::StatusLine) {
                    StatusLine::Ours(cmd)
                } else {
                    StatusLine::Theirs(cmd)
                }
            }
        }
    }

    /// ctxkeep's hook command under `event`, when one is there.
    fn our_hook(&self, doc: &Map<String, Value>, event: &str) -> Option<String> {
        doc.get("hooks")?
            .get(event)?
            .as_array()?
            .iter()
            .filter_map(|group| group.get("hooks")?.as_array())
            .flatten()
            .filter_map(command_of)
            .find(|c| self.ours(c) == Some(Ours::Hook))
            .map(str::to_string)
    }

    /// What the code file at hand (None: no file) installs: every event's
    /// command when it is ctxkeep's.
    pub fn installed_code(&self, text: Option<&str>) -> Installed {
        let ours = matches!((self.code, text), (Some(code), Some(t)) if code.is_ours(t));
        Installed {
            hooks: self
                .events
                .iter()
                .map(|e| (e.name, ours.then(|| self.hook_command.to_string())))
                .collect(),
            status_line: StatusLine::None,
        }
    }

    pub fn installed(&self, doc: &Value) -> Installed {
        let empty = Map::new();
        let doc = doc.as_object().unwrap_or(&empty);
        Installed {
            hooks: self
                .events
                .iter()
                .map(|e| (e.name, self.our_hook(doc, e.name)))
                .collect(),
            status_line: self.status_line_of(doc),
        }
    }

    /// Adds what is missing of ctxkeep's hooks (and Claude Code's status
    /// line) to the document's text, leaving every other byte as it is.
    /// Errors name the key whose shape is not what the agent reads (nothing
    /// is changed).
    pub fn install(&self, doc: &mut JsonText, force: bool) -> Result<Plan, String> {
        self.install_with(doc, force, None, false)
    }

    /// [`install`](Self::install), knowing the status line `other` at another settings level
    /// and whether the file edited is the user's own (`personal`) rather than the team's.
    pub fn install_with(
        &self,
        doc: &mut JsonText,
        force: bool,
        other: Option<&OtherStatusLine>,
        personal: bool,
    ) -> Result<Plan, String> {
        check_shape(root_of(doc)?)?;
        let mut changes = Vec::new();
        for event in self.events {
            let root = root_of(doc)?;
            if self.our_hook(root, event.name).is_some() {
                continue;
            }
            let mut group = Map::new();
            if let Some(m) = event.matcher {
                group.insert("matcher".into(), json!(m));
            }
            group.insert(
                "hooks".into(),
                json!([{ "type": "command", "command": self.hook_command }]),
            );
            let group = Value::Object(group);
            match root.get("hooks") {
                None => {
                    let mut hooks = Map::new();
                    hooks.insert(event.name.into(), json!([group]));
                    doc.set(&[], "hooks", &Value::Object(hooks))
                }
                Some(hooks) if hooks.get(event.name).is_none() => {
                    doc.set(&[Step::Key("hooks")], event.name, &json!([group]))
                }
                Some(_) => doc.push(&[Step::Key("hooks"), Step::Key(event.name)], &group),
            }?;
            changes.push(Change {
                op: "added",
                key: format!("hooks.{}", event.name),
                command: self.hook_command.into(),
            });
        }
        let mut plan = Plan {
            changes: Vec::new(),
            kept_status_line: None,
            kept_in: None,
            composed_with: None,
        };
        if self.status_line {
            self.install_status_line(doc, force, other, personal, &mut changes, &mut plan)?;
        }
        plan.changes = changes;
        Ok(plan)
    }

    /// Claude Code's status line, never a silent takeover: one of the user's in this file is
    /// composed with ctxkeep's gauge (`--force`: replaced); one at another level is composed
    /// into a personal file, and left alone (and named) by the file the team shares or by a
    /// file it wins over; with none anywhere, ctxkeep's own is written.
    fn install_status_line(
        &self,
        doc: &mut JsonText,
        force: bool,
        other: Option<&OtherStatusLine>,
        personal: bool,
        changes: &mut Vec<Change>,
        plan: &mut Plan,
    ) -> Result<(), String> {
        let write = |doc: &mut JsonText, command: &str, changes: &mut Vec<Change>| {
            doc.set(
                &[],
                "statusLine",
                &json!({ "type": "command", "command": command }),
            )?;
            changes.push(Change {
                op: "added",
                key: "statusLine".into(),
                command: command.into(),
            });
            Ok::<(), String>(())
        };
        match self.status_line_of(root_of(doc)?) {
            StatusLine::Ours(_) => {}
            StatusLine::Theirs(cmd) if force => {
                changes.push(Change {
                    op: "removed",
                    key: "statusLine".into(),
                    command: cmd,
                });
                write(doc, STATUSLINE_COMMAND, changes)?;
            }
            StatusLine::Theirs(cmd) if cmd.trim().is_empty() => {
                plan.kept_status_line = Some(cmd);
            }
            StatusLine::Theirs(cmd) => {
                // Their entry keeps its other keys (padding, …); only its command changes.
                let composed = composed_status_line(&cmd);
                doc.set(&[Step::Key("statusLine")], "command", &json!(composed))?;
                changes.push(Change {
                    op: "removed",
                    key: "statusLine".into(),
                    command: cmd.clone(),
                });
                changes.push(Change {
                    op: "added",
                    key: "statusLine".into(),
                    command: composed,
                });
                plan.composed_with = Some(cmd);
            }
            StatusLine::None => match other {
                Some(o) if !force && (o.overrides || !personal) => {
                    plan.kept_status_line = Some(o.command.clone());
                    plan.kept_in = Some(o.file.clone());
                }
                Some(o) if !force => {
                    write(doc, &composed_status_line(&o.command), changes)?;
                    plan.composed_with = Some(o.command.clone());
                }
                _ => write(doc, STATUSLINE_COMMAND, changes)?,
            },
        }
        Ok(())
    }

    /// Removes ctxkeep's hook entries for this agent under every event (a
    /// group left empty by that goes too, then an event, then `hooks`) and
    /// its status line; nothing else, not a byte.
    pub fn uninstall(&self, doc: &mut JsonText) -> Result<Vec<Change>, String> {
        self.uninstall_with(doc, None)
    }

    /// [`uninstall`](Self::uninstall), knowing the status line `other` at another settings
    /// level: a composed line that shows that one goes, rather than copying it here.
    pub fn uninstall_with(
        &self,
        doc: &mut JsonText,
        other: Option<&OtherStatusLine>,
    ) -> Result<Vec<Change>, String> {
        let root = root_of(doc)?;
        check_shape(root)?;
        let mut changes = Vec::new();
        // (event, group, entry) of each of ours, in the file's order.
        let mut ours: Vec<(String, usize, usize)> = Vec::new();
        if let Some(hooks) = root.get("hooks").and_then(Value::as_object) {
            for (event, groups) in hooks {
                let groups = groups.as_array().map(Vec::as_slice).unwrap_or_default();
                for (g, group) in groups.iter().enumerate() {
                    let entries = group.get("hooks").and_then(Value::as_array);
                    for (e, entry) in entries.into_iter().flatten().enumerate() {
                        if let Some(cmd) =
                            command_of(entry).filter(|c| self.ours(c) == Some(Ours::Hook))
                        {
                            changes.push(Change {
                                op: "removed",
                                key: format!("hooks.{event}"),
                                command: cmd.to_string(),
                            });
                            ours.push((event.clone(), g, e));
                        }
                    }
                }
            }
        }
        // From the last, so the positions of those before stay right. Only
        // what ctxkeep emptied goes: a removed entry's group, then its
        // event, then `hooks`.
        for (event, g, e) in ours.iter().rev() {
            let path = [
                Step::Key("hooks"),
                Step::Key(event),
                Step::At(*g),
                Step::Key("hooks"),
                Step::At(*e),
            ];
            doc.remove(&path)?;
            // (the list or object to look at, what goes when it is empty)
            for (looked_at, goes) in [(4, 3), (2, 2), (1, 1)] {
                if !empty_at(doc, &path[..looked_at]) || doc.kept(&path[..looked_at]) {
                    break;
                }
                doc.remove(&path[..goes])?;
            }
        }
        if let StatusLine::Ours(cmd) = self.status_line_of(root_of(doc)?) {
            // A composed line gives the user's own command back, in its entry as it was.
            let from_elsewhere = |theirs: &String| other.is_some_and(|o| &o.command == theirs);
            match composed_with(&cmd).filter(|t| !from_elsewhere(t)) {
                Some(theirs) => {
                    doc.set(&[Step::Key("statusLine")], "command", &json!(theirs))?;
                    changes.push(Change {
                        op: "removed",
                        key: "statusLine".into(),
                        command: cmd,
                    });
                    changes.push(Change {
                        op: "added",
                        key: "statusLine".into(),
                        command: theirs,
                    });
                }
                None => {
                    doc.remove(&[Step::Key("statusLine")])?;
                    changes.push(Change {
                        op: "removed",
                        key: "statusLine".into(),
                        command: cmd,
                    });
                }
            }
        }
        Ok(changes)
    }
}

/// Whether the list or object at `path` is there and empty.
fn empty_at(doc: &JsonText, path: &[Step]) -> bool {
    let mut v = doc.value();
    for step in path {
        v = match step {
            Step::Key(k) => &v[*k],
            Step::At(n) => &v[*n],
        };
    }
    v.as_array().is_some_and(Vec::is_empty) || v.as_object().is_some_and(Map::is_empty)
}

/// The document's top-level object.
fn root_of(doc: &JsonText) -> Result<&Map<String, Value>, String> {
    doc.value()
        .as_object()
        .ok_or_else(|| "the settings are not a JSON object".to_string())
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

    const CLAUDE: &AgentSettings = &crate::agents::claude_code::settings::SETTINGS;
    const CODEX: &AgentSettings = &crate::agents::codex::settings::SETTINGS;
    const GEMINI: &AgentSettings = &crate::agents::gemini::settings::SETTINGS;

    fn doc(v: Value) -> JsonText {
        JsonText::parse(&serde_json::to_string_pretty(&v).unwrap(), false).unwrap()
    }

    #[test]
    fn ours_recognizes_paths_and_flags_only_for_our_commands() {
        assert_eq!(CLAUDE.ours("ctxkeep hook claude-code"), Some(Ours::Hook));
        assert_eq!(
            CLAUDE.ours("/home/u/.cargo/bin/ctxkeep hook claude-code --strict"),
            Some(Ours::Hook)
        );
        assert_eq!(
            CLAUDE.ours("\"ctxkeep\" statusline"),
            Some(Ours::StatusLine)
        );
        assert_eq!(CLAUDE.ours("ctxkeep hook codex"), None);
        assert_eq!(CLAUDE.ours("notctxkeep hook claude-code"), None);
        assert_eq!(CLAUDE.ours("echo ctxkeep hook claude-code"), None);
        assert_eq!(CLAUDE.ours(""), None);
        assert_eq!(CODEX.ours("ctxkeep hook codex-cli"), Some(Ours::Hook));
        assert_eq!(CODEX.ours("ctxkeep statusline"), None);
        assert_eq!(
            GEMINI.ours("ctxkeep hook gemini --strict"),
            Some(Ours::Hook)
        );
        assert_eq!(GEMINI.ours("ctxkeep hook claude-code"), None);
    }

    #[test]
    fn install_keeps_other_entries_and_is_idempotent() {
        let mut text = doc(json!({
            "model": "opus",
            "hooks": { "PostToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "fmt.sh" }] }] },
        }));
        let plan = CLAUDE.install(&mut text, false).unwrap();
        assert_eq!(plan.changes.len(), CLAUDE.events.len() + 1);
        let doc = text.value().clone();
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
        let before = text.text().to_string();
        let again = CLAUDE.install(&mut text, false).unwrap();
        assert!(again.changes.is_empty());
        assert_eq!(text.text(), before);
        assert!(CLAUDE
            .installed(&doc)
            .hooks
            .iter()
            .all(|(_, c)| c.is_some()));
    }

    #[test]
    fn each_agent_gets_its_own_events_and_no_status_line_but_claudes() {
        for (agent, events) in [
            (
                CODEX,
                &[
                    "SessionStart",
                    "UserPromptSubmit",
                    "PreToolUse",
                    "PostToolUse",
                    "PreCompact",
                    "PostCompact",
                    "Stop",
                    "SessionEnd",
                ][..],
            ),
            (
                GEMINI,
                &[
                    "SessionStart",
                    "BeforeAgent",
                    "BeforeTool",
                    "AfterTool",
                    "AfterAgent",
                    "PreCompress",
                    "SessionEnd",
                ][..],
            ),
        ] {
            let mut text = JsonText::parse("{}", false).unwrap();
            let plan = agent.install(&mut text, false).unwrap();
            assert_eq!(plan.changes.len(), events.len());
            let doc = text.value().clone();
            let keys: Vec<&String> = doc["hooks"].as_object().unwrap().keys().collect();
            assert_eq!(keys, events);
            assert!(doc.get("statusLine").is_none());
            for e in events {
                assert_eq!(
                    doc["hooks"][e][0]["hooks"][0]["command"],
                    agent.hook_command
                );
            }
            assert_eq!(agent.uninstall(&mut text).unwrap().len(), events.len());
            assert_eq!(text.text(), "{}");
        }
    }

    #[test]
    fn one_agents_entries_are_not_anothers() {
        // A file holding a Claude Code entry is not Codex's install.
        let mut text = doc(
            json!({ "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": "ctxkeep hook claude-code" }] }] } }),
        );
        assert_eq!(CODEX.installed(text.value()).hooks[6], ("Stop", None));
        assert!(CODEX.uninstall(&mut text).unwrap().is_empty());
    }

    #[test]
    fn a_user_status_line_is_composed_unless_forced() {
        let mut text =
            doc(json!({ "statusLine": { "type": "command", "command": "~/bin/line.sh" } }));
        let plan = CLAUDE.install(&mut text, false).unwrap();
        assert_eq!(plan.composed_with.as_deref(), Some("~/bin/line.sh"));
        let composed = text.value()["statusLine"]["command"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(CLAUDE.ours(&composed), Some(Ours::StatusLine));
        assert_eq!(composed_with(&composed).as_deref(), Some("~/bin/line.sh"));
        assert!(CLAUDE.install(&mut text, false).unwrap().changes.is_empty());
        let plan = CLAUDE.install(&mut text, true).unwrap();
        assert_eq!(plan.kept_status_line, None);
        assert!(
            plan.changes.is_empty(),
            "a composed line is ctxkeep's already"
        );
        let mut text =
            doc(json!({ "statusLine": { "type": "command", "command": "~/bin/line.sh" } }));
        let plan = CLAUDE.install(&mut text, true).unwrap();
        assert_eq!(text.value()["statusLine"]["command"], STATUSLINE_COMMAND);
        assert!(plan
            .changes
            .iter()
            .any(|c| c.op == "removed" && c.command == "~/bin/line.sh"));
    }

    #[test]
    fn shell_quoting_round_trips() {
        for theirs in ["a", "it's", "x '' y", "printf '%s\\n' \"$(date)\"", ""] {
            let c = composed_status_line(theirs);
            assert_eq!(composed_with(&c).as_deref(), Some(theirs), "{c}");
        }
        assert_eq!(composed_with("ctxkeep statusline"), None);
        assert_eq!(composed_with("ctxkeep statusline --with 'a' extra"), None);
    }

    #[test]
    fn uninstall_removes_only_ours() {
        let original = doc(json!({
            "hooks": {
                "PostToolUse": [{ "matcher": "Write", "hooks": [{ "type": "command", "command": "fmt.sh" }] }],
                "Notification": [],
            },
            "env": { "A": "1" },
        }));
        let mut text = original.clone();
        CLAUDE.install(&mut text, false).unwrap();
        let removed = CLAUDE.uninstall(&mut text).unwrap();
        assert_eq!(removed.len(), CLAUDE.events.len() + 1);
        assert_eq!(
            text.text(),
            original.text(),
            "back to the user's bytes exactly"
        );
        assert!(CLAUDE.uninstall(&mut text).unwrap().is_empty());
    }

    #[test]
    fn odd_shapes_are_refused() {
        assert!(CLAUDE.install(&mut doc(json!([1])), false).is_err());
        assert!(CODEX
            .install(&mut doc(json!({ "hooks": [] })), false)
            .is_err());
        assert!(GEMINI
            .install(&mut doc(json!({ "hooks": { "Stop": {} } })), false)
            .is_err());
        assert!(CLAUDE.uninstall(&mut doc(json!({ "hooks": 3 }))).is_err());
    }
}
