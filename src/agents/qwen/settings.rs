//! Qwen Code: `.qwen/settings.json`, a `hooks` object with Claude Code's
//! event names and group shape, MCP servers under `mcpServers` in the same
//! file (docs/agents.md, "Use with Qwen Code").

use crate::agents::settings::mcp::McpSettings;
use crate::agents::settings::{AgentSettings, Event};

pub const SETTINGS: AgentSettings = AgentSettings {
    name: super::ID,
    display_name: super::DISPLAY_NAME,
    dir: ".qwen",
    file: "settings.json",
    hook_command: "ctxkeep hook qwen-code",
    hook_words: &["qwen-code", "qwen"],
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        // Its shell: a command that discards uncommitted work is snapshotted first.
        Event::matching("PreToolUse", "run_shell_command"),
        Event::matching("PostToolUse", "*"),
        Event::matching("PostToolUseFailure", "*"),
        Event::new("PreCompact"),
        Event::new("PostCompact"),
        Event::new("Stop"),
        Event::new("SessionEnd"),
    ],
    comments_allowed: true,
    mcp: McpSettings::json(Some(".qwen"), "settings.json"),
    ..AgentSettings::USUAL
};
