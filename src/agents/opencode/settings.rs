//! OpenCode: no hook settings but plugins, so `hooks install` writes a
//! plugin of ctxkeep's, `.opencode/plugins/ctxkeep.js`, whole; it runs
//! `ctxkeep hook opencode` for every event below. The MCP server goes under
//! `mcp` in the project's `opencode.json`, as a local server whose command is
//! a list of words (docs/agents.md, "Use with OpenCode").

use std::path::Path;

use crate::agents::settings::mcp::{Format, McpSettings};
use crate::agents::settings::{AgentSettings, CodeFile, Event};

/// What the plugin says it is, near its top; a file at its path without it
/// is the user's.
pub const MARKER: &str = "ctxkeep-opencode-plugin";

pub const SETTINGS: AgentSettings = AgentSettings {
    name: super::ID,
    display_name: super::DISPLAY_NAME,
    dir: ".opencode",
    file: "plugins/ctxkeep.js",
    hook_command: "ctxkeep hook opencode",
    hook_words: &["opencode"],
    // The names the plugin gives ctxkeep (hooks.rs maps them to OpenCode's).
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        Event::new("PreToolUse"),
        Event::new("PostToolUse"),
        Event::new("PreRequest"),
        Event::new("PreCompact"),
        Event::new("PostCompact"),
        Event::new("Stop"),
        Event::new("SessionEnd"),
    ],
    // OpenCode 1.18 loads a project's plugins without asking, but only when it starts.
    trust: &[restart],
    comments_allowed: true,
    mcp: McpSettings {
        dir: None,
        file: "opencode.json",
        format: Format::JsonLocal,
        key: "mcp",
    },
    code: Some(CodeFile {
        text: include_str!("plugin.js"),
        marker: MARKER,
    }),
    ..AgentSettings::USUAL
};

/// OpenCode reads a project's plugins when it starts.
fn restart(project: &Path) -> String {
    format!(
        "start OpenCode afresh in {} (a running one loads no new plugin); it asks no trust for a project's plugins",
        project.display()
    )
}
