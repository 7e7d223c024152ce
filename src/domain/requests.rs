//! Checkpoint requests' settings (the front matter's `checkpoint_requests:`) and what a
//! session's record keeps of them between hooks. When to ask, and the words, are the
//! pipeline's (`pipeline::requests`).

use serde::{Deserialize, Serialize};

/// The front matter's `checkpoint_requests:` (`false` turns them off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// After a `git commit` the agent ran.
    pub after_commit: bool,
    /// After the agent marked a plan item completed.
    pub after_plan_item: bool,
    /// After this many tool calls with no checkpoint from the model (0: never).
    pub after_calls: u32,
    /// At least this many tool calls between two requests, and after a
    /// checkpoint the model wrote.
    pub spacing: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            after_commit: true,
            after_plan_item: true,
            after_calls: 60,
            spacing: 10,
        }
    }
}

/// `checkpoint_requests: false`, or the settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Setting {
    Enabled(bool),
    Settings(Settings),
}

impl Setting {
    /// The settings in force; None when turned off.
    pub fn resolve(setting: Option<&Setting>) -> Option<Settings> {
        match setting {
            None | Some(Setting::Enabled(true)) => Some(Settings::default()),
            Some(Setting::Enabled(false)) => None,
            Some(Setting::Settings(s)) => Some(*s),
        }
    }
}

/// What a session's record keeps between hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Tool calls since the model's last checkpoint or the last request.
    #[serde(default)]
    pub calls: u32,
    /// Files those calls changed (the first few), to name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Files changed past those listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_files: u32,
    /// The checkpoint counted from: a different current one that this
    /// session did not write itself is one the model (or someone) wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Requests made in this session (`status` shows them).
    #[serde(default)]
    pub asked: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl State {
    pub fn is_empty(&self) -> bool {
        *self == State::default()
    }

    /// Starts counting again (after a request, or a checkpoint written).
    pub fn restart(&mut self) {
        self.calls = 0;
        self.files.clear();
        self.more_files = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_reads_off_and_partial() {
        let off: Setting = serde_yaml::from_str("false").unwrap();
        assert_eq!(Setting::resolve(Some(&off)), None);
        let some: Setting = serde_yaml::from_str("{after_calls: 20}").unwrap();
        let s = Setting::resolve(Some(&some)).unwrap();
        assert_eq!((s.after_calls, s.spacing, s.after_commit), (20, 10, true));
    }
}
