//! Codex CLI: `<repo>/.codex/hooks.json` in Claude Code's shape (its events:
//! `SessionStart`, `UserPromptSubmit`, `Pre/PostToolUse`, `PermissionRequest`,
//! `PreCompact`, `PostCompact`, `SubagentStart/Stop`, `Stop`, and
//! `SessionEnd`, which `codex exec` fires with `reason: "other"`). It runs
//! project hooks only in a trusted project whose hooks are trusted too
//! (docs/agents.md, "Use with Codex CLI").

use crate::agents::settings::mcp::{Format, McpSettings};
use std::path::Path;

use crate::agents::settings::{AgentSettings, Event};

pub const SETTINGS: AgentSettings = AgentSettings {
    name: super::ID,
    display_name: super::DISPLAY_NAME,
    dir: ".codex",
    file: "hooks.json",
    hook_command: "ctxkeep hook codex",
    hook_words: &["codex", "codex-cli"],
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        // Codex reads `*` as every tool, as Claude Code does.
        // Its shell: a command that discards uncommitted work is snapshotted first.
        Event::matching("PreToolUse", "Bash"),
        Event::matching("PostToolUse", "*"),
        Event::new("PreCompact"),
        Event::new("PostCompact"),
        Event::new("Stop"),
        Event::new("SessionEnd"),
    ],
    trust: &[trust_project, trust_hooks],
    // Read only in a trusted project, as `.codex/hooks.json` is.
    mcp: McpSettings {
        dir: Some(".codex"),
        file: "config.toml",
        format: Format::Toml,
        key: "mcp_servers",
    },
    ..AgentSettings::USUAL
};

/// Codex loads `.codex/` only in a trusted project.
fn trust_project(project: &Path) -> String {
    format!(
        "trust the project in Codex: add `[projects.\"{}\"]` with `trust_level = \"trusted\"` to ~/.codex/config.toml ($CODEX_HOME/config.toml), or accept Codex's trust prompt in that folder; Codex ignores .codex/ in an untrusted project",
        project.display()
    )
}

/// Codex runs hooks only once they are trusted.
fn trust_hooks(_project: &Path) -> String {
    "trust the hooks in Codex: review and trust them with /hooks in the TUI, or run `codex exec --dangerously-bypass-hook-trust` headless; Codex skips hooks it has not been told to trust".into()
}
