//! Claude Code: `.claude/settings.json`, `hooks` by event, and the status
//! line (FORMATS: docs/agents.md, "Use with Claude Code").

use crate::agents::settings::mcp::McpSettings;
use crate::agents::settings::{AgentSettings, Event};

pub const SETTINGS: AgentSettings = AgentSettings {
    name: super::ID,
    display_name: super::DISPLAY_NAME,
    dir: ".claude",
    file: "settings.json",
    // Claude Code runs a hook command through the shell: where ctxkeep is
    // missing (a teammate's clone) the hook exits 0 and says nothing.
    hook_command: "command -v ctxkeep >/dev/null 2>&1 || { cat >/dev/null; exit 0; }; ctxkeep hook claude-code",
    personal: Some("settings.local.json"),
    hook_words: &["claude-code", "claude"],
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        // Its shell: a command that discards uncommitted work is snapshotted first.
        Event::matching("PreToolUse", "Bash"),
        // `*`: every tool.
        Event::matching("PostToolUse", "*"),
        // A tool call that fails fires this instead of PostToolUse.
        Event::matching("PostToolUseFailure", "*"),
        Event::new("PreCompact"),
        Event::new("PostCompact"),
        // A `/model` switch: the new model's window and compaction point apply.
        Event::new("PostModelSwitch"),
        Event::new("Stop"),
        Event::new("SessionEnd"),
    ],
    status_line: true,
    user_settings: Some(super::plugin::user_settings),
    // `local` scope: this user, this project; kept in ~/.claude.json, never in the repository.
    personal_mcp: Some("claude mcp add --scope local ctxkeep -- ctxkeep mcp"),
    mcp_approval: Some(
        "approve the ctxkeep MCP server when Claude Code asks (or in /mcp); it leaves a project's .mcp.json servers off until they are approved",
    ),
    mcp: McpSettings::json(None, ".mcp.json"),
    ..AgentSettings::USUAL
};
