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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::agent_settings::json_edit::JsonText;

    /// The settings text `hooks install` writes for `agent` over `before` (in memory: no lock,
    /// no note in the user's state folder).
    fn installed_over(agent: Agent, before: &str) -> String {
        let settings = agent.settings();
        let mut doc = JsonText::parse(before, settings.comments_allowed).unwrap();
        settings.install_with(&mut doc, false, None, false).unwrap();
        doc.text().to_string()
    }

    fn write(root: &Path, relative: &str, text: &str) -> PathBuf {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A user's own hook in Claude Code's shape.
    const USERS_HOOK: &str = r#"{
  "hooks": {
    "PostToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./lint.sh" }] }
    ]
  }
}
"#;

    #[test]
    fn a_project_without_settings_carries_no_hooks() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(settings_with_hooks(Agent::ClaudeCode, dir.path()), None);
        assert_eq!(settings_with_hooks(Agent::Codex, dir.path()), None);
    }

    #[test]
    fn the_users_own_hooks_are_not_ctxkeeps() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), ".claude/settings.json", USERS_HOOK);
        assert!(!has_hooks(Agent::ClaudeCode, &path));
        assert_eq!(settings_with_hooks(Agent::ClaudeCode, dir.path()), None);
    }

    #[test]
    fn installed_hooks_beside_the_users_are_found_in_the_shared_settings() {
        let dir = tempfile::tempdir().unwrap();
        let text = installed_over(Agent::ClaudeCode, USERS_HOOK);
        let path = write(dir.path(), ".claude/settings.json", &text);
        assert_eq!(
            settings_with_hooks(Agent::ClaudeCode, dir.path()),
            Some(path)
        );
    }

    #[test]
    fn the_personal_settings_file_counts_too() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".claude/settings.json", USERS_HOOK);
        let text = installed_over(Agent::ClaudeCode, "");
        let personal = write(dir.path(), ".claude/settings.local.json", &text);
        assert_eq!(
            settings_with_hooks(Agent::ClaudeCode, dir.path()),
            Some(personal)
        );
    }

    #[test]
    fn settings_that_do_not_parse_carry_none() {
        let dir = tempfile::tempdir().unwrap();
        let text = installed_over(Agent::ClaudeCode, "");
        // Cut short: no longer JSON, though ctxkeep's command is in it.
        let path = write(dir.path(), ".claude/settings.json", &text[..text.len() / 2]);
        assert!(!has_hooks(Agent::ClaudeCode, &path));
        assert_eq!(settings_with_hooks(Agent::ClaudeCode, dir.path()), None);
    }

    #[test]
    fn another_agents_settings_are_read_in_their_own_place() {
        let dir = tempfile::tempdir().unwrap();
        let text = installed_over(Agent::ClaudeCode, "");
        write(dir.path(), ".claude/settings.json", &text);
        assert_eq!(settings_with_hooks(Agent::Codex, dir.path()), None);
        let codex = write(
            dir.path(),
            ".codex/hooks.json",
            &installed_over(Agent::Codex, ""),
        );
        assert_eq!(settings_with_hooks(Agent::Codex, dir.path()), Some(codex));
    }

    #[test]
    fn a_code_file_carries_the_hooks_only_when_it_is_ctxkeeps() {
        let dir = tempfile::tempdir().unwrap();
        let agent = Agent::OpenCode;
        let settings = agent.settings();
        let code = settings.code.expect("OpenCode takes a code file");
        let path = default_path(agent, dir.path());
        assert!(!has_hooks(agent, &path));
        write(
            dir.path(),
            &format!("{}/{}", settings.dir, settings.file),
            "export const mine = {};\n",
        );
        assert!(!has_hooks(agent, &path));
        std::fs::write(&path, code.text).unwrap();
        assert!(has_hooks(agent, &path));
    }
}
