//! Whether a project's settings already carry ctxkeep's hooks: asked on every `--plugin` event
//! (the plugin's hooks step aside then), so it reads those few files and nothing else.

use std::path::{Path, PathBuf};

use super::files::{load, read};
use super::paths::default_path;
use crate::agents::Agent;
use crate::install::agent_settings::AgentSettings;

/// The project's settings file that carries ctxkeep's hooks for `agent`,
/// if one does: then the plugin's hooks step aside.
pub fn settings_with_hooks(agent: Agent, root: &Path) -> Option<PathBuf> {
    let others = agent
        .spec()
        .plugin
        .map(|p| p.other_settings)
        .unwrap_or_default();
    std::iter::once(default_path(agent, root))
        .chain(others.iter().map(|f| root.join(f)))
        .find(|path| has_hooks(agent, path))
}

/// Whether the settings file at `path` carries any of ctxkeep's hooks for
/// `agent` (a file that is missing or unreadable carries none).
pub fn has_hooks(agent: Agent, path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let settings = agent.settings();
    installed_at(settings, path)
        .is_ok_and(|found| found.hooks.iter().any(|(_, command)| command.is_some()))
}

/// What of ctxkeep's the file at `path` installs: its hook entries, or,
/// for an agent that takes code, every event when the file is ctxkeep's.
pub(super) fn installed_at(
    settings: &AgentSettings,
    path: &Path,
) -> anyhow::Result<crate::install::agent_settings::Installed> {
    match settings.code {
        Some(_) => Ok(settings.installed_code(read(path)?.as_deref())),
        None => Ok(settings.installed(&load(settings, path)?)),
    }
}
