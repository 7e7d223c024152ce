//! Gemini CLI: `.gemini/settings.json`, a `hooks` object with Gemini's own
//! event names and Claude Code's group shape. Project hooks run only in a
//! trusted folder, and a hook must print JSON on stdout every time
//! (docs/agents.md, "Use with Gemini CLI").

use crate::agents::settings::mcp::McpSettings;
use std::path::Path;

use crate::agents::settings::{AgentSettings, Event};

pub const SETTINGS: AgentSettings = AgentSettings {
    name: super::ID,
    display_name: super::DISPLAY_NAME,
    dir: ".gemini",
    file: "settings.json",
    hook_command: "ctxkeep hook gemini",
    hook_words: &["gemini", "gemini-cli"],
    events: &[
        Event::new("SessionStart"),
        Event::new("BeforeAgent"),
        // A regex on the tool's name; `*` is Gemini's documented match-all.
        // Its shell: a command that discards uncommitted work is snapshotted first.
        Event::matching("BeforeTool", "run_shell_command"),
        Event::matching("AfterTool", "*"),
        Event::new("AfterAgent"),
        Event::new("PreCompress"),
        Event::new("SessionEnd"),
    ],
    json_always: true,
    trust: &[trust_folder],
    comments_allowed: true,
    mcp: McpSettings::json(Some(".gemini"), "settings.json"),
    ..AgentSettings::USUAL
};

/// Gemini CLI runs project hooks only in a trusted folder.
fn trust_folder(project: &Path) -> String {
    format!(
        "trust the folder {} in Gemini CLI: accept its trust prompt there, or set GEMINI_CLI_TRUST_WORKSPACE=true or pass --skip-trust headless; Gemini CLI runs no project hooks in an untrusted folder",
        project.display()
    )
}
