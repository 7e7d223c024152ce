//! What `hooks install` found empty in an agent's JSON settings, for `hooks uninstall` to leave.
//!
//! An empty `"hooks": {}` or `"mcpServers": {}` the user had, or a file holding only `{}`, reads
//! the same once ctxkeep's entries are taken out again as a container or a file ctxkeep made
//! itself, which an uninstall removes. So an install that finds such things notes them, by the
//! settings file's full path, in `$XDG_STATE_HOME/ctxkeep/settings-kept.json` (outside the
//! project: the note is about this machine's files). Without a note (another clone, an install
//! by an older ctxkeep) an uninstall removes what it emptied, as before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::json_edit::JsonText;

/// The largest note file read; a bigger one is ignored.
const MAX_BYTES: u64 = 1 << 20;

/// What one settings file held before the first install.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    /// The file was there: an uninstall that leaves it holding nothing keeps it.
    pub file: bool,
    /// Its empty lists and objects (see [`JsonText::empty_containers`]).
    pub empty: Vec<Vec<String>>,
}

impl Kept {
    /// What an install must note about `doc`, the file as it was read (None: nothing an
    /// uninstall would lose).
    pub fn of(doc: &JsonText) -> Option<Kept> {
        // A blank file holds nothing: one ctxkeep filled is removed again, as one it made.
        if doc.text().trim().is_empty() {
            return None;
        }
        let empty = doc.empty_containers();
        let holds_nothing = doc.value().as_object().is_some_and(|m| m.is_empty());
        (holds_nothing || !empty.is_empty()).then_some(Kept { file: true, empty })
    }
}

fn store() -> Option<PathBuf> {
    Some(crate::fsutil::user_state_dir()?.join("settings-kept.json"))
}

/// The settings file's full path, symlinks resolved: the note's key.
fn key(settings: &Path) -> String {
    let full = std::path::absolute(settings).unwrap_or_else(|_| settings.to_path_buf());
    std::fs::canonicalize(&full)
        .unwrap_or(full)
        .display()
        .to_string()
}

fn read_all(store: &Path) -> BTreeMap<String, Kept> {
    crate::fsutil::read_text(store, MAX_BYTES)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The note about `settings`, if an install left one.
pub fn load(settings: &Path) -> Option<Kept> {
    read_all(&store()?).remove(&key(settings))
}

/// Notes `kept` for `settings` (None: forgets it). Best effort: without the note an uninstall
/// only removes more, so a note that cannot be written is not an error.
pub fn save(settings: &Path, kept: Option<Kept>) {
    let Some(store) = store() else {
        return;
    };
    let mut all = read_all(&store);
    let changed = match kept {
        Some(k) => all.insert(key(settings), k.clone()) != Some(k),
        None => all.remove(&key(settings)).is_some(),
    };
    if !changed {
        return;
    }
    if all.is_empty() {
        let _ = std::fs::remove_file(&store);
        return;
    }
    let Ok(text) = serde_json::to_string_pretty(&all) else {
        return;
    };
    if let Some(dir) = store.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = crate::fsutil::atomic_write(&store, format!("{text}\n").as_bytes(), None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;

    /// Install then uninstall with the note, as `hooks install|uninstall` do it, in the layouts
    /// editors and the agents write: the bytes come back.
    #[test]
    fn the_users_empty_containers_come_back_in_common_layouts() {
        let originals = [
            "{\n  \"hooks\": {},\n  \"mcpServers\": {}\n}\n",
            "{\r\n    \"hooks\": {\r\n        \"Stop\": []\r\n    },\r\n    \"mcpServers\": {}\r\n}\r\n",
            "{\"hooks\": {}, \"mcpServers\": {}}",
            "{\n\t\"model\": \"x\",\n\t\"hooks\": {}\n}\n",
            "{}\n",
        ];
        for agent in [Agent::ClaudeCode, Agent::Gemini] {
            let settings = agent.integration().settings();
            for original in originals {
                let mut doc = JsonText::parse(original, settings.comments_allowed).unwrap();
                let noted = Kept::of(&doc).expect("something to note");
                settings.install(&mut doc, false).unwrap();
                settings.mcp.register_json(&mut doc).unwrap();
                doc.keep_empty(noted.empty);
                settings.uninstall(&mut doc).unwrap();
                settings.mcp.unregister_json(&mut doc).unwrap();
                assert_eq!(doc.text(), original, "{agent}");
            }
        }
    }

    #[test]
    fn nothing_is_noted_where_an_uninstall_loses_nothing() {
        let plain = JsonText::parse("{\"model\": \"x\"}\n", false).unwrap();
        assert_eq!(Kept::of(&plain), None);
        let blank = JsonText::parse("\n", false).unwrap();
        assert_eq!(Kept::of(&blank), None);
    }
}
