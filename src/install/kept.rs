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
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agents::settings::json_edit::JsonText;
use crate::system::error::Error;
use crate::system::fsutil::Lock;
use crate::system::output::Output;

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
    Some(crate::system::fsutil::user_state_dir()?.join("settings-kept.json"))
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
    crate::system::fsutil::read_text(store, MAX_BYTES)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The note about `settings`, if an install left one.
pub fn load(settings: &Path) -> Option<Kept> {
    read_all(&store()?).remove(&key(settings))
}

/// How long an install waits for another one to finish.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// The lock an install or uninstall holds from reading the settings to writing them and the
/// note: the note is one file for every project, and two installs at once in one project
/// would otherwise each write what it read before the other (and one's roll-back undo the
/// other's write). In the user's state folder beside the note. None where there is no such
/// folder or it cannot be made (`$HOME` unwritable): then an install that needs a note
/// refuses when it cannot write it ([`save`]).
pub fn lock() -> Result<Option<Lock>, Error> {
    let Some(store) = store() else {
        return Ok(None);
    };
    let Some(dir) = store.parent() else {
        return Ok(None);
    };
    if crate::system::fsutil::ensure_dir(dir).is_err() {
        return Ok(None);
    }
    match Lock::acquire(&dir.join("settings.lock"), LOCK_WAIT, &Output::SILENT) {
        Ok(lock) => Ok(Some(lock)),
        Err(e @ Error::LockTimeout { .. }) => Err(e),
        Err(_) => Ok(None),
    }
}

/// Notes `kept` for `settings` (None: forgets it), under [`lock`]. An install whose note
/// cannot be written fails, before it writes anything: without the note its uninstall would
/// remove what the user had (their empty containers, a file holding `{}`).
pub fn save(settings: &Path, kept: Option<Kept>) -> Result<(), Error> {
    let forget = kept.is_none();
    let Some(store) = store() else {
        return match forget {
            true => Ok(()),
            false => Err(Error::data(
                settings,
                "its uninstall needs a note of what the file held before, and neither XDG_STATE_HOME nor HOME is set to keep it; nothing was changed",
            )),
        };
    };
    let mut all = read_all(&store);
    let changed = match kept {
        Some(k) => all.insert(key(settings), k.clone()) != Some(k),
        None => all.remove(&key(settings)).is_some(),
    };
    if !changed {
        return Ok(());
    }
    if all.is_empty() {
        let _ = std::fs::remove_file(&store);
        return Ok(());
    }
    let text = serde_json::to_string_pretty(&all).unwrap_or_default();
    let written = store
        .parent()
        .map_or(Ok(()), crate::system::fsutil::ensure_dir)
        .and_then(|_| {
            crate::system::fsutil::atomic_write(&store, format!("{text}\n").as_bytes(), None)
        });
    let (Err(e), false) = (written, forget) else {
        return Ok(());
    };
    let why = format!(
        "its uninstall needs a note of what the file held before, in {}, which cannot be written; nothing was changed; make that folder writable or set XDG_STATE_HOME",
        store.display()
    );
    Err(match e {
        Error::Io { source, .. } => Error::io(settings, why, source),
        other => Error::data(settings, format!("{why} ({other})")),
    })
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
            let settings = agent.settings();
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
