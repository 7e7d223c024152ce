//! Codex CLI: `<repo>/.codex/hooks.json` in Claude Code's shape. Codex has
//! no `SessionEnd` hook (its events: `SessionStart`, `UserPromptSubmit`,
//! `Pre/PostToolUse`, `PermissionRequest`, `PreCompact`, `PostCompact`,
//! `SubagentStart/Stop`, `Stop`), and runs project hooks only in a trusted
//! project whose hooks are trusted too (docs/agents.md, "Use with Codex CLI").

use super::mcp::{Format, McpSettings};
use super::{AgentSettings, Event, Trust};
use crate::usage::Agent;

pub const SETTINGS: AgentSettings = AgentSettings {
    agent: Agent::Codex,
    dir: ".codex",
    file: "hooks.json",
    hook_command: "ctxkeep hook codex",
    hook_words: &["codex", "codex-cli"],
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        // Codex reads `*` as every tool, as Claude Code does.
        Event::matching("PostToolUse", "*"),
        Event::new("PreCompact"),
        Event::new("PostCompact"),
        Event::new("Stop"),
    ],
    status_line: false,
    json_always: false,
    trust: &[Trust::CodexProject, Trust::CodexHooks],
    // Read only in a trusted project, as `.codex/hooks.json` is.
    mcp: McpSettings {
        dir: Some(".codex"),
        file: "config.toml",
        format: Format::Toml,
        key: "mcp_servers",
    },
};
