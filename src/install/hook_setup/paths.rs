//! Where an agent's settings and MCP configuration are, and the project they belong to.

use std::path::{Path, PathBuf};

use crate::agents::Agent;
use crate::install::agent_settings::AgentSettings;

/// The agent's settings file beside the state file in `root`
/// (`.claude/settings.json`, `.codex/hooks.json`, `.gemini/settings.json`).
pub fn default_path(agent: Agent, root: &Path) -> PathBuf {
    let s = agent.settings();
    root.join(s.dir).join(s.file)
}

/// The agent's project MCP configuration for the settings file at
/// `settings_path`: `.mcp.json`, `.codex/config.toml` or
/// `.gemini/settings.json` in the project that file belongs to.
pub fn mcp_path(agent: Agent, settings_path: &Path) -> PathBuf {
    let settings = agent.settings();
    if settings.mcp.dir == Some(settings.dir) && settings.mcp.file == settings.file {
        // Gemini CLI's: the settings file itself.
        return settings_path.to_path_buf();
    }
    project_dir(settings, settings_path).join(settings.mcp.relative_path())
}

/// The folder the agent treats as the project: the one holding `.codex/`, `.gemini/`,
/// `.github/hooks/` or a plugins folder such as `.opencode/plugins/`, as an absolute path (trust
/// is keyed by it).
pub(super) fn project_dir(settings: &AgentSettings, path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    // The folders between the project and the file (`.claude`, `.github/hooks`, or a plugins
    // folder in one).
    let between = Path::new(settings.dir).join(settings.file);
    let between = between.parent().unwrap_or(Path::new(""));
    let depth = between.components().count();
    match dir.file_name() {
        Some(_) if depth > 0 && dir.ends_with(between) => dir
            .ancestors()
            .nth(depth)
            .map(Path::to_path_buf)
            .unwrap_or(dir),
        _ => dir,
    }
}
