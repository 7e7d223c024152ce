//! Claude Code: `.claude/settings.json`, `hooks` by event, and the status
//! line (FORMATS: docs/agents.md, "Use with Claude Code").

use super::mcp::{Format, McpSettings};
use super::{AgentSettings, Event};
use crate::usage::Agent;

pub const SETTINGS: AgentSettings = AgentSettings {
    agent: Agent::ClaudeCode,
    dir: ".claude",
    file: "settings.json",
    hook_command: "ctxkeep hook claude-code",
    hook_words: &["claude-code", "claude"],
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        // `*`: every tool.
        Event::matching("PostToolUse", "*"),
        // A tool call that fails fires this instead of PostToolUse.
        Event::matching("PostToolUseFailure", "*"),
        Event::new("PreCompact"),
        Event::new("PostCompact"),
        Event::new("Stop"),
        Event::new("SessionEnd"),
    ],
    status_line: true,
    json_always: false,
    trust: &[],
    mcp: McpSettings {
        dir: None,
        file: ".mcp.json",
        format: Format::Json,
        key: "mcpServers",
    },
};
