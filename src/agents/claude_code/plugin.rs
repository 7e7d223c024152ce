//! ctxkeep's Claude Code plugin (`plugins/claude-code/`, listed by the
//! marketplace in `.claude-plugin/marketplace.json`): where Claude Code
//! records that a user enabled it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::Plugin;

pub const PLUGIN: Plugin = Plugin {
    install:
        "claude plugin marketplace add ctxkeep/ctxkeep && claude plugin install ctxkeep@ctxkeep",
    enabled_in,
    other_settings: &[".claude/settings.local.json"],
    installed_version,
};

/// The plugin's name; its id in `enabledPlugins` is `ctxkeep@<marketplace>`
/// (whichever name the marketplace was added under).
const NAME: &str = "ctxkeep";

/// Settings files are small; a bigger one is not read.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// Claude Code's settings that can enable a plugin, most particular first:
/// the project's local and shared settings, then the user's
/// (`$CLAUDE_CONFIG_DIR`, else `~/.claude`). The first that names the
/// plugin in `enabledPlugins` decides.
fn enabled_in(project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let user_dir = user_dir(env);
    let candidates = [
        Some(project.join(".claude").join("settings.local.json")),
        Some(project.join(".claude").join("settings.json")),
        user_dir.map(|d| d.join("settings.json")),
    ];
    for path in candidates.into_iter().flatten() {
        match names_plugin(&path) {
            Some(true) => return Some(path),
            Some(false) => return None,
            None => {}
        }
    }
    None
}

/// The user's Claude Code folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub(crate) fn user_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".claude")))
}

/// The user's own settings file: `settings.json` in the user's Claude Code folder.
pub fn user_settings(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    user_dir(env).map(|d| d.join("settings.json"))
}

/// The installed plugin's version, from Claude Code's record of installed
/// plugins (`plugins/installed_plugins.json`: `plugins`, by id, lists each
/// install with its `installPath` and `version`). The copy's own
/// `.claude-plugin/plugin.json` is preferred: the record can say `unknown`.
fn installed_version(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let record = user_dir(env)?
        .join("plugins")
        .join("installed_plugins.json");
    let text = crate::system::fsutil::read_text(&record, MAX_SETTINGS_BYTES).ok()?;
    let doc: Value = serde_json::from_str(&text).ok()?;
    let (_, installs) = doc
        .get("plugins")?
        .as_object()?
        .iter()
        .find(|(id, _)| id.split('@').next() == Some(NAME))?;
    let install = installs.as_array()?.last()?;
    let from_manifest = install
        .get("installPath")
        .and_then(Value::as_str)
        .map(|dir| Path::new(dir).join(".claude-plugin").join("plugin.json"))
        .and_then(|manifest| crate::system::fsutil::read_text(&manifest, MAX_SETTINGS_BYTES).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|m| m.get("version")?.as_str().map(str::to_string));
    from_manifest.or_else(|| {
        install
            .get("version")?
            .as_str()
            .filter(|v| *v != "unknown")
            .map(str::to_string)
    })
}

/// Whether the file's `enabledPlugins` turns the plugin on (true) or off
/// (false); None when it does not name it (or cannot be read).
fn names_plugin(path: &Path) -> Option<bool> {
    let text = crate::system::fsutil::read_text(path, MAX_SETTINGS_BYTES).ok()?;
    let doc: Value = serde_json::from_str(&text).ok()?;
    doc.get("enabledPlugins")?
        .as_object()?
        .iter()
        .find(|(id, _)| id.split('@').next() == Some(NAME))
        .map(|(_, on)| on.as_bool().unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_most_particular_settings_that_name_it_decide() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("p"), dir.path().join("h"));
        let env = |name: &str| (name == "HOME").then(|| home.display().to_string());
        assert_eq!(enabled_in(&project, &env), None);
        let user = home.join(".claude/settings.json");
        write(&user, r#"{"enabledPlugins": {"ctxkeep@ctxkeep": true}}"#);
        assert_eq!(enabled_in(&project, &env), Some(user.clone()));
        // Another plugin's entry in the project's settings changes nothing.
        write(
            &project.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"other@ctxkeep": false}}"#,
        );
        assert_eq!(enabled_in(&project, &env), Some(user));
        // Turned off for this project only.
        write(
            &project.join(".claude/settings.local.json"),
            r#"{"enabledPlugins": {"ctxkeep@mirror": false}}"#,
        );
        assert_eq!(enabled_in(&project, &env), None);
    }

    #[test]
    fn the_installed_version_is_the_copys_own_else_the_records() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("h");
        let env = |name: &str| (name == "HOME").then(|| home.display().to_string());
        assert_eq!(installed_version(&env), None);
        let copy = home.join(".claude/plugins/cache/ctxkeep/ctxkeep/0.1.0");
        let record = home.join(".claude/plugins/installed_plugins.json");
        let entry = |version: &str| {
            serde_json::json!({"version": 2, "plugins": {
                "other@market": [{"installPath": "/x", "version": "9.9.9"}],
                "ctxkeep@ctxkeep": [{"scope": "user", "installPath": copy, "version": version}],
            }})
            .to_string()
        };
        write(&record, &entry("0.0.9"));
        assert_eq!(installed_version(&env).as_deref(), Some("0.0.9"));
        write(&record, &entry("unknown"));
        assert_eq!(installed_version(&env), None);
        write(
            &copy.join(".claude-plugin/plugin.json"),
            r#"{"name": "ctxkeep", "version": "0.1.0"}"#,
        );
        assert_eq!(installed_version(&env).as_deref(), Some("0.1.0"));
    }

    #[test]
    fn claude_config_dir_replaces_the_home_folder() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("cfg");
        write(
            &config.join("settings.json"),
            r#"{"enabledPlugins": {"ctxkeep@ctxkeep": true}}"#,
        );
        let env = |name: &str| match name {
            "CLAUDE_CONFIG_DIR" => Some(config.display().to_string()),
            "HOME" => Some("/nonexistent".to_string()),
            _ => None,
        };
        assert!(enabled_in(&dir.path().join("p"), &env).is_some());
    }
}
