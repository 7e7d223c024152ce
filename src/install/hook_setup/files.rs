//! The settings files an install, uninstall or check reads, each read once, and their new text
//! written all or nothing (`file_batch`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agents::Agent;
use crate::install::agent_settings::json_edit::JsonText;
use crate::install::agent_settings::kept::{self, Kept};
use crate::install::agent_settings::AgentSettings;
use crate::system::error::Error;
use crate::system::file_batch::{self, FileChange};
use crate::system::fsutil;

/// A settings file is small; anything bigger is not one.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// The files an install or uninstall reads, each once (Gemini CLI's hooks
/// and MCP server share one), with their new text.
#[derive(Default)]
pub(super) struct Pending {
    files: Vec<PendingFile>,
}

struct PendingFile {
    path: PathBuf,
    /// The text read (None: no file).
    before: Option<String>,
    doc: Doc,
    /// JSON settings: what this read found that an uninstall could not tell from ctxkeep's own
    /// (empty containers, a file holding nothing), for an install to note.
    found: Option<Kept>,
    /// JSON settings: what an earlier install noted about this file.
    noted: Option<Kept>,
}

enum Doc {
    Json(JsonText),
    Toml(String),
    /// A code file of ctxkeep's, whole (None: no file).
    Code(Option<String>),
}

impl Doc {
    /// The text to write; None: the file is to be removed (with
    /// `remove_empty`, a settings file left holding nothing is too).
    fn after(&self, remove_empty: bool) -> Option<&str> {
        match self {
            Doc::Code(text) => text.as_deref(),
            _ if remove_empty && self.holds_nothing() => None,
            Doc::Json(doc) => Some(doc.text()),
            Doc::Toml(text) => Some(text),
        }
    }

    /// What is left when nothing of the user's is: what `install` starts
    /// from where there is no file.
    fn holds_nothing(&self) -> bool {
        match self {
            Doc::Json(doc) => matches!(doc.text(), "{}\n" | "{}\r\n"),
            Doc::Toml(text) => text.is_empty(),
            Doc::Code(text) => text.is_none(),
        }
    }
}

impl Pending {
    /// The JSON settings at `path`, read on first use.
    pub(super) fn json(
        &mut self,
        settings: &AgentSettings,
        path: &Path,
    ) -> anyhow::Result<&mut JsonText> {
        let at = match self.files.iter().position(|f| f.path == path) {
            Some(at) => at,
            None => {
                let before = read(path)?;
                let mut doc = parse_json(settings, path, before.as_deref())?;
                let found = before.as_ref().and_then(|_| Kept::of(&doc));
                let noted = kept::load(path);
                if let Some(n) = &noted {
                    doc.keep_empty(n.empty.clone());
                }
                let at = self.push(path, before, Doc::Json(doc));
                self.files[at].found = found;
                self.files[at].noted = noted;
                at
            }
        };
        match &mut self.files[at].doc {
            Doc::Json(doc) => Ok(doc),
            _ => Err(Error::data(path, "read as JSON and as something else").into()),
        }
    }

    /// The TOML text at `path`, read on first use ("" when missing).
    pub(super) fn toml(&mut self, path: &Path) -> anyhow::Result<&mut String> {
        let at = match self.files.iter().position(|f| f.path == path) {
            Some(at) => at,
            None => {
                let before = read(path)?;
                let text = before.clone().unwrap_or_default();
                self.push(path, before, Doc::Toml(text))
            }
        };
        match &mut self.files[at].doc {
            Doc::Toml(text) => Ok(text),
            _ => Err(Error::data(path, "read as TOML and as something else").into()),
        }
    }

    /// The code file at `path`, read on first use (None when missing).
    pub(super) fn code(&mut self, path: &Path) -> anyhow::Result<&mut Option<String>> {
        let at = match self.files.iter().position(|f| f.path == path) {
            Some(at) => at,
            None => {
                let before = read(path)?;
                self.push(path, before.clone(), Doc::Code(before))
            }
        };
        match &mut self.files[at].doc {
            Doc::Code(text) => Ok(text),
            _ => Err(Error::data(path, "read as code and as settings").into()),
        }
    }

    fn push(&mut self, path: &Path, before: Option<String>, doc: Doc) -> usize {
        self.files.push(PendingFile {
            path: path.to_path_buf(),
            before,
            doc,
            found: None,
            noted: None,
        });
        self.files.len() - 1
    }

    /// Writes every file whose text changed, all or nothing. With
    /// `remove_empty`, a file left holding nothing is removed, and the
    /// agent's folder with it when that leaves the folder empty.
    /// A file an install noted as there before it (see [`kept`]) is never removed, and the notes
    /// follow: an install notes what it found, an uninstall forgets the note.
    pub(super) fn write(self, remove_empty: bool) -> anyhow::Result<()> {
        let mut changes = Vec::new();
        let mut notes = Vec::new();
        for f in &self.files {
            let was_there = f.noted.as_ref().is_some_and(|n| n.file);
            let after = f.doc.after(remove_empty && !was_there);
            if f.before.as_deref() == after
                || (f.before.is_none() && after.is_none_or(str::is_empty))
            {
                continue;
            }
            if remove_empty && f.noted.is_some() {
                notes.push((f.path.clone(), None));
            } else if !remove_empty && f.noted.is_none() && f.found.is_some() {
                notes.push((f.path.clone(), f.found.clone()));
            }
            changes.push(FileChange {
                path: f.path.clone(),
                before: f.before.clone().map(String::into_bytes),
                after: after.map(|a| a.as_bytes().to_vec()),
            });
        }
        // An install's notes first: one that cannot be written stops the install before it
        // writes anything. An uninstall forgets its notes once its files are written.
        let (noting, forgetting): (Vec<_>, Vec<_>) =
            notes.into_iter().partition(|(_, n)| n.is_some());
        for (path, note) in &noting {
            kept::save(path, note.clone())?;
        }
        if let Err(e) = file_batch::apply(&changes) {
            for (path, _) in &noting {
                let _ = kept::save(path, None);
            }
            return Err(e);
        }
        for (path, _) in forgetting {
            let _ = kept::save(&path, None);
        }
        for c in changes.iter().filter(|c| c.after.is_none()) {
            for d in agent_dirs(&c.path) {
                // Only when empty: anything else in it stays.
                if std::fs::remove_dir(&d).is_err() {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// The folders `install` may have made for the file at `path`, innermost first: the agent's own
/// (`.claude`, `.codex`, …), a nested one's and its parents (`.github/hooks`, then `.github`), the
/// folder of an agent's code file and its parents (`.opencode/plugins`, then `.opencode`).
fn agent_dirs(path: &Path) -> Vec<PathBuf> {
    let Some(parent) = path.parent() else {
        return Vec::new();
    };
    let made = Agent::ALL.iter().flat_map(|a| {
        let s = a.settings();
        let code = s
            .code
            .is_some()
            .then(|| Path::new(s.dir).join(s.file))
            .and_then(|p| p.parent().map(Path::to_path_buf));
        [
            Some(PathBuf::from(s.dir)),
            s.mcp.dir.map(PathBuf::from),
            code,
        ]
    });
    let depth = made
        .flatten()
        .filter(|d| parent.ends_with(d))
        .map(|d| d.components().count())
        .max()
        .unwrap_or(0);
    parent
        .ancestors()
        .take(depth)
        .map(Path::to_path_buf)
        .collect()
}

/// The file's text, None when there is no file.
pub(super) fn read(path: &Path) -> anyhow::Result<Option<String>> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    Ok(Some(fsutil::read_text(path, MAX_SETTINGS_BYTES)?))
}

/// What the settings file holds (an empty object when there is none). Only read, never edited:
/// the install's note on the file (which an edit needs) is not looked up.
pub(super) fn load(settings: &AgentSettings, path: &Path) -> anyhow::Result<Value> {
    let before = read(path)?;
    Ok(parse_json(settings, path, before.as_deref())?
        .value()
        .clone())
}

/// The JSON settings `text` read from `path` (None: no file, an empty object).
fn parse_json(
    settings: &AgentSettings,
    path: &Path,
    text: Option<&str>,
) -> anyhow::Result<JsonText> {
    JsonText::parse(text.unwrap_or(""), settings.comments_allowed).map_err(|why| {
        Error::data(path, format!("{why}; fix it by hand, nothing was changed")).into()
    })
}
