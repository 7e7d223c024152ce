//! Asking the model for a checkpoint at natural points of the work, not only
//! as the context fills: after a commit it made, after a plan item it
//! completed, after a long stretch of tool calls with no checkpoint of its
//! own. One short instruction, rate-limited by tool calls (an idle session
//! makes none, so it is never asked), never within `spacing` calls of the
//! last request or of a checkpoint the model wrote.

use serde::{Deserialize, Serialize};

use crate::agents::payload::{Payload, ToolAction};

/// The front matter's `checkpoint_requests:` (`false` turns them off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// After a `git commit` the agent ran.
    pub after_commit: bool,
    /// After the agent marked a plan item completed.
    pub after_plan_item: bool,
    /// After this many tool calls with no checkpoint from the model (0: never).
    pub after_calls: u32,
    /// At least this many tool calls between two requests, and after a
    /// checkpoint the model wrote.
    pub spacing: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            after_commit: true,
            after_plan_item: true,
            after_calls: 60,
            spacing: 10,
        }
    }
}

/// `checkpoint_requests: false`, or the settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Setting {
    Enabled(bool),
    Settings(Settings),
}

impl Setting {
    /// The settings in force; None when turned off.
    pub fn resolve(setting: Option<&Setting>) -> Option<Settings> {
        match setting {
            None | Some(Setting::Enabled(true)) => Some(Settings::default()),
            Some(Setting::Enabled(false)) => None,
            Some(Setting::Settings(s)) => Some(*s),
        }
    }
}

/// What a session's record keeps between hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Tool calls since the model's last checkpoint or the last request.
    #[serde(default)]
    pub calls: u32,
    /// Files those calls changed (the first few), to name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Files changed past those listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_files: u32,
    /// The checkpoint counted from: a different current one that this
    /// session did not write itself is one the model (or someone) wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Requests made in this session (`status` shows them).
    #[serde(default)]
    pub asked: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl State {
    pub fn is_empty(&self) -> bool {
        *self == State::default()
    }

    /// Starts counting again (after a request, or a checkpoint written).
    fn restart(&mut self) {
        self.calls = 0;
        self.files.clear();
        self.more_files = 0;
    }
}

/// Files named in a request.
const FILES_NAMED: usize = 4;

/// Why the model is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    Commit(Option<String>),
    PlanItem(String),
    LongStretch(u32),
}

impl Why {
    /// The word the events log records.
    pub fn name(&self) -> &'static str {
        match self {
            Why::Commit(_) => "commit",
            Why::PlanItem(_) => "plan_item",
            Why::LongStretch(_) => "long_stretch",
        }
    }
}

/// One tool call seen: counts it, and says whether to ask now. `current`
/// is the project's checkpoint, `own` the one this session last wrote or
/// was given (a different one is the model's own, or another writer's).
pub fn step(
    state: &mut State,
    settings: &Settings,
    payload: &Payload,
    current: Option<&str>,
    own: Option<&str>,
) -> Option<Why> {
    if current.is_some() && current != state.checkpoint.as_deref() {
        state.checkpoint = current.map(str::to_string);
        // Not this session's own: the model (or someone) wrote one since.
        if current != own {
            state.restart();
        }
    }
    let tool = payload.tool.as_ref();
    state.calls = state.calls.saturating_add(1);
    if let Some(ToolAction::Files(files)) = tool.map(|t| &t.action) {
        for f in files {
            let path = match &payload.cwd {
                Some(cwd) => f.path.strip_prefix(cwd).unwrap_or(&f.path),
                None => &f.path,
            };
            let name = path.to_string_lossy().into_owned();
            if state.files.contains(&name) {
                continue;
            }
            if state.files.len() < FILES_NAMED {
                state.files.push(name);
            } else {
                state.more_files = state.more_files.saturating_add(1);
            }
        }
    }
    if state.calls <= settings.spacing {
        return None;
    }
    let failed = tool
        .and_then(|t| t.outcome.as_ref())
        .is_some_and(|o| o.ok == Some(false));
    let why = match (tool.map(|t| &t.action), &payload.plan_done) {
        (Some(ToolAction::Command(c)), _) if settings.after_commit && !failed => {
            commit_message(c).map(Why::Commit)
        }
        (_, Some(item)) if settings.after_plan_item => Some(Why::PlanItem(item.clone())),
        _ => None,
    };
    let why = why.or_else(|| {
        (settings.after_calls > 0 && state.calls >= settings.after_calls)
            .then_some(Why::LongStretch(state.calls))
    })?;
    Some(why)
}

/// The request is made: counted, and the stretch starts again.
pub fn asked(state: &mut State) {
    state.asked = state.asked.saturating_add(1);
    state.restart();
}

/// A stage's instruction went to the model instead: it asks for the same.
pub fn stage_given(state: &mut State) {
    state.restart();
}

/// Whether `command` commits (`git commit …`, alone or in a line): Some
/// with its `-m` message's first line when it gives one, Some(None) without.
fn commit_message(command: &str) -> Option<Option<String>> {
    if !command.contains("commit") {
        return None;
    }
    command.split(['\n', ';', '|', '&']).find_map(|part| {
        let words = crate::transcripts::destructive::words(part);
        let at = words
            .iter()
            .position(|w| w == "git" || w.ends_with("/git"))?;
        let rest = &words[at + 1..];
        // Past git's own options (`-C DIR`, `-c KEY=VALUE` take a word).
        let mut sub = 0;
        while let Some(w) = rest.get(sub) {
            match w.as_str() {
                "-C" | "-c" => sub += 2,
                w if w.starts_with('-') => sub += 1,
                _ => break,
            }
        }
        rest.get(sub)?;
        if rest[sub] != "commit" || rest.iter().any(|w| w == "--dry-run" || w == "-h") {
            return None;
        }
        let mut args = rest[sub + 1..].iter();
        let mut message = None;
        while let Some(w) = args.next() {
            if let Some(m) = w.strip_prefix("--message=") {
                message = Some(m.to_string());
            } else if w == "--message" {
                message = args.next().cloned();
            } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.starts_with('-')) {
                // `-m MSG`, `-am MSG`, `-mMSG`.
                match cluster.split_once('m') {
                    Some((_, "")) => message = args.next().cloned(),
                    Some((_, m)) => message = Some(m.to_string()),
                    None => continue,
                }
            } else {
                continue;
            }
            break;
        }
        let message = message
            .map(|m| m.lines().next().unwrap_or("").trim().to_string())
            .filter(|m| !m.is_empty());
        Some(message)
    })
}

/// Longest request text: short enough to read at a glance.
pub const MAX_CHARS: usize = 400;

/// The instruction: what happened, what changed, the one command (or the
/// MCP tool where it is registered).
pub fn text(why: &Why, state: &State, mcp: bool) -> String {
    let clip = |s: &str, n: usize| crate::system::output::clip(s.trim(), n);
    let what = match why {
        Why::Commit(Some(m)) => format!("you committed \"{}\"", clip(m, 72)),
        Why::Commit(None) => "you committed".to_string(),
        Why::PlanItem(item) => format!("plan item \"{}\" is done", clip(item, 72)),
        Why::LongStretch(n) => format!("{n} tool calls since the last checkpoint you wrote"),
    };
    let how = match mcp {
        true => "call the ctxkeep `checkpoint` tool with phase, active_task and next_action (decisions if any)",
        false => "run `ctxkeep checkpoint --phase \"...\" --task \"...\" --next \"...\"` (`--decision` for choices made)",
    };
    let render = |files: &str| {
        format!("ctxkeep: {what}{files}. Record where the work stands in one step: {how}; then carry on.")
    };
    // The files give way, never the instruction: as many as fit are named, the rest counted.
    let mut named = state.files.len();
    loop {
        let more = state.more_files as usize + state.files.len() - named;
        let files = match (named, more) {
            (0, 0) => String::new(),
            (0, more) => format!(" ({more} files changed)"),
            (_, 0) => format!(" (changed: {})", state.files[..named].join(", ")),
            (_, more) => format!(
                " (changed: {} and {more} more)",
                state.files[..named].join(", ")
            ),
        };
        let text = render(&files);
        if text.chars().count() <= MAX_CHARS || named == 0 {
            return text;
        }
        named -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::payload::{ToolCall, ToolFile, ToolOutcome};

    fn call(action: ToolAction, ok: bool) -> Payload {
        let root = serde_json::json!({ "hook_event_name": "PostToolUse", "session_id": "s" });
        let mut p = crate::agents::payload::from_object(root.as_object().unwrap(), |e| e).unwrap();
        p.tool = Some(ToolCall {
            name: "Bash".into(),
            id: None,
            action,
            outcome: Some(match ok {
                true => ToolOutcome::succeeded(String::new()),
                false => ToolOutcome::failed("Exit code 1"),
            }),
        });
        p
    }

    fn run(cmd: &str) -> Payload {
        call(ToolAction::Command(cmd.into()), true)
    }

    fn edit(path: &str) -> Payload {
        call(
            ToolAction::Files(vec![ToolFile {
                path: path.into(),
                content: None,
                before: None,
            }]),
            true,
        )
    }

    #[test]
    fn a_commit_is_asked_about_once_spaced_and_never_right_after_the_models_own() {
        let s = Settings::default();
        let mut st = State::default();
        let ckpt = Some("ckpt-0001");
        // Too soon after the session's first checkpoint.
        for _ in 0..s.spacing {
            assert_eq!(step(&mut st, &s, &edit("src/a.rs"), ckpt, None), None);
        }
        let why = step(
            &mut st,
            &s,
            &run("cargo fmt && git commit -qam 'Parse CRLF'"),
            ckpt,
            None,
        );
        assert_eq!(why, Some(Why::Commit(Some("Parse CRLF".into()))));
        let text = text(why.as_ref().unwrap(), &st, false);
        assert!(
            text.contains("you committed \"Parse CRLF\" (changed: src/a.rs)"),
            "{text}"
        );
        assert!(text.chars().count() <= MAX_CHARS);
        asked(&mut st);
        assert_eq!(st.asked, 1);
        // Another commit right away: not twice in a short stretch.
        assert_eq!(
            step(&mut st, &s, &run("git commit -m again"), ckpt, None),
            None
        );
        // The model wrote one: the count starts again from it.
        for _ in 0..s.spacing + 5 {
            step(&mut st, &s, &edit("b.rs"), ckpt, None);
        }
        assert_eq!(
            step(
                &mut st,
                &s,
                &run("git commit -m x"),
                Some("ckpt-0002"),
                ckpt
            ),
            None
        );
        // A failed commit is no commit.
        for _ in 0..s.spacing {
            step(&mut st, &s, &edit("b.rs"), Some("ckpt-0002"), ckpt);
        }
        let failed = call(ToolAction::Command("git commit -m x".into()), false);
        assert_eq!(step(&mut st, &s, &failed, Some("ckpt-0002"), ckpt), None);
    }

    #[test]
    fn a_long_stretch_without_a_checkpoint_is_asked_about_and_the_own_ones_do_not_count() {
        let s = Settings::default();
        let mut st = State::default();
        let mut why = None;
        for i in 1..=s.after_calls {
            // The session's own automatic checkpoints are no checkpoint of the model's.
            let own = format!("ckpt-{i:04}");
            why = step(&mut st, &s, &run("cargo test"), Some(&own), Some(&own));
            if i < s.after_calls {
                assert_eq!(why, None, "{i}");
            }
        }
        assert_eq!(why, Some(Why::LongStretch(s.after_calls)));
        let off = Settings {
            after_calls: 0,
            ..s
        };
        let mut st = State::default();
        for _ in 0..200 {
            assert_eq!(step(&mut st, &off, &run("cargo test"), None, None), None);
        }
    }

    #[test]
    fn long_file_names_give_way_and_the_instruction_is_never_cut() {
        let st = State {
            files: (0..4)
                .map(|i| format!("src/{}/mod{i}.rs", "deep/".repeat(20)))
                .collect(),
            more_files: 3,
            ..State::default()
        };
        let why = Why::PlanItem("x".repeat(200));
        for mcp in [false, true] {
            let text = text(&why, &st, mcp);
            assert!(text.chars().count() <= MAX_CHARS, "{text}");
            assert!(text.ends_with("then carry on."), "{text}");
            assert!(text.contains(" more)"), "the rest are counted: {text}");
        }
    }

    #[test]
    fn commits_are_told_from_other_git_commands() {
        assert_eq!(
            commit_message("git commit -m 'a\nb'"),
            Some(Some("a".into()))
        );
        assert_eq!(
            commit_message("git -C x commit --amend --no-edit"),
            Some(None)
        );
        assert_eq!(commit_message("git commit -mfix"), Some(Some("fix".into())));
        assert_eq!(commit_message("git commit --dry-run"), None);
        assert_eq!(commit_message("git log --grep commit"), None);
        assert_eq!(commit_message("echo commit"), None);
    }

    #[test]
    fn the_setting_reads_off_and_partial() {
        let off: Setting = serde_yaml::from_str("false").unwrap();
        assert_eq!(Setting::resolve(Some(&off)), None);
        let some: Setting = serde_yaml::from_str("{after_calls: 20}").unwrap();
        let s = Setting::resolve(Some(&some)).unwrap();
        assert_eq!((s.after_calls, s.spacing, s.after_commit), (20, 10, true));
    }
}
