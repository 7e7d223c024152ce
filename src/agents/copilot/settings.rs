//! GitHub Copilot CLI: ctxkeep's own file `.github/hooks/ctxkeep.json` (Copilot CLI loads every
//! `*.json` in that folder), with Claude Code's event names and group shape, which Copilot CLI
//! accepts beside its own camelCase names and answers with Claude Code's payload fields; MCP
//! servers in `.github/mcp.json` under `mcpServers` (docs/agents.md, "Use with GitHub Copilot
//! CLI").

use std::path::Path;

use crate::agents::settings::mcp::McpSettings;
use crate::agents::settings::{AgentSettings, Event};

pub const SETTINGS: AgentSettings = AgentSettings {
    name: super::ID,
    display_name: super::DISPLAY_NAME,
    dir: ".github/hooks",
    file: "ctxkeep.json",
    hook_command: "ctxkeep hook copilot",
    hook_words: &["copilot", "copilot-cli", "github-copilot"],
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        // A shell command that discards uncommitted work is snapshotted first.
        Event::new("PreToolUse"),
        Event::new("PostToolUse"),
        Event::new("PostToolUseFailure"),
        Event::new("PreCompact"),
        Event::new("Stop"),
        Event::new("SessionEnd"),
    ],
    trust: &[trust_folder],
    mcp: McpSettings::json(Some(".github"), "mcp.json"),
    ..AgentSettings::USUAL
};

/// Copilot CLI loads a repository's hooks and MCP servers only in a folder the user trusts.
fn trust_folder(project: &Path) -> String {
    format!(
        "trust the folder {} in Copilot CLI: accept its trust prompt there, or add it to \
         `trustedFolders` in ~/.copilot/config.json, or pass --trust-folder to one headless \
         `copilot -p` run; Copilot CLI loads no repository hooks or MCP servers in an \
         untrusted folder",
        project.display()
    )
}
