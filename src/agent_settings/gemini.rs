//! Gemini CLI: `.gemini/settings.json`, a `hooks` object with Gemini's own
//! event names and Claude Code's group shape. Project hooks run only in a
//! trusted folder, and a hook must print JSON on stdout every time
//! (docs/agents.md, "Use with Gemini CLI").

use super::mcp::{Format, McpSettings};
use super::{AgentSettings, Event, Trust};
use crate::usage::Agent;

pub const SETTINGS: AgentSettings = AgentSettings {
    agent: Agent::Gemini,
    dir: ".gemini",
    file: "settings.json",
    hook_command: "ctxkeep hook gemini",
    hook_words: &["gemini", "gemini-cli"],
    events: &[
        Event::new("SessionStart"),
        Event::new("BeforeAgent"),
        // A regex on the tool's name; `*` is Gemini's documented match-all.
        Event::matching("AfterTool", "*"),
        Event::new("AfterAgent"),
        Event::new("PreCompress"),
        Event::new("SessionEnd"),
    ],
    status_line: false,
    json_always: true,
    trust: &[Trust::GeminiFolder],
    mcp: McpSettings {
        dir: Some(".gemini"),
        file: "settings.json",
        format: Format::Json,
        key: "mcpServers",
    },
};
