//! The user's state directory, for what belongs to this machine rather than to a project.

use std::path::PathBuf;

/// ctxkeep's folder in the user's state directory, for what belongs to this machine rather than
/// to a project: `$XDG_STATE_HOME/ctxkeep` (`~/.local/state/ctxkeep` without it). None without
/// either variable.
pub fn user_state_dir() -> Option<PathBuf> {
    let state = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?)
            .join(".local")
            .join("state"),
    };
    Some(state.join("ctxkeep"))
}
