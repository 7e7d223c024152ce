//! ctxkeep's own plugin for an agent: whether one is enabled for the project.

use std::path::{Path, PathBuf};

use crate::agents::Agent;

// --- ctxkeep's agent plugins --------------------------------------------------------------
//
// When the agent's plugin is enabled and the project's settings carry
// ctxkeep's hooks too, the agent would run both for every event. The
// plugin's give way: the settings are the project's (often committed, so
// teammates without the plugin rely on them) and say exactly which events
// run, while the plugin is one user's choice for every project.
/// The settings file that enables `agent`'s plugin for the project at
/// `root`, if one does (reads the process's environment for the user's
/// settings folder).
pub fn enabled_in(agent: Agent, root: &Path) -> Option<PathBuf> {
    let plugin = agent.spec().plugin?;
    (plugin.enabled_in)(root, &|name| std::env::var(name).ok())
}

/// What `hooks install` says when the plugin is enabled as well.
pub fn install_note(agent: Agent, root: &Path) -> Option<String> {
    let enabled = enabled_in(agent, root)?;
    Some(format!(
        "ctxkeep's {} plugin is enabled too ({}); its hooks step aside in this project while these settings carry ctxkeep's, so no event runs twice",
        agent.display_name(),
        enabled.display()
    ))
}
