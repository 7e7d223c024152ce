//! `project-state.md`: split the front matter from the body, parse it, and
//! write ctxkeep's own keys back without touching anything else.
//!
//! The only user of serde_yaml. Writes edit ctxkeep's top-level keys as text
//! and copy the body as bytes, because a YAML round-trip drops comments and
//! rewrites values (`1.10` becomes `1.1`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_yaml::Mapping;

use crate::context::stages::Stage;
use crate::domain::checkpoint::{digest_of, yaml_to_json, Checkpoint, HistoryEntry};
use crate::domain::yaml_emit::{emit_key, normalize_newlines};
use crate::system::error::Error;

pub mod conflicts;
mod front_matter;
mod kept;
pub mod limits;
pub use front_matter::parse_user_yaml;
use front_matter::*;

pub const FORMAT_VERSION: u64 = 1;
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
pub const MAX_FRONT_MATTER_BYTES: usize = 64 * 1024;
pub const MAX_DEPTH: usize = 64;
pub const BEGIN_MARKER: &str = "<!-- ctxkeep:begin -->";
pub const END_MARKER: &str = "<!-- ctxkeep:end -->";

/// The top-level keys of `FrontMatter`; `verify --strict` warns about others.
pub const KNOWN_KEYS: [&str; 22] = [
    "ctxkeep",
    "model",
    "window",
    "encoding",
    "stages",
    "templates",
    "retention",
    "resume_max_tokens",
    "models",
    "max_handoffs_without_progress",
    "loops",
    "gutter",
    "compaction",
    "snapshots",
    "checkpoint_requests",
    "acknowledgement",
    "reminders",
    "brief",
    "give_back",
    "status_line",
    "checkpoint",
    "history",
];

/// The `loops` setting (`gutter` in older files): on/off, or the limits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum LoopSetting {
    Enabled(bool),
    Limits(crate::transcripts::activity::LoopLimits),
}

/// The keys ctxkeep reads; everything else in the front matter is the user's.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FrontMatter {
    /// Format version; 1 today.
    pub ctxkeep: Option<u64>,
    pub model: Option<String>,
    pub window: Option<u64>,
    pub encoding: Option<String>,
    pub stages: Option<Vec<Stage>>,
    /// Folder (relative to the state file) whose templates override the defaults.
    pub templates: Option<String>,
    pub retention: Option<Retention>,
    /// Token budget for `resume` and the size check of `verify`.
    pub resume_max_tokens: Option<usize>,
    /// Per-model overrides of the model table: name -> {window, encoding}.
    pub models: Option<BTreeMap<String, crate::context::models::ModelOverride>>,
    /// `resume` refuses (exit 1) once more handoffs than this in a row
    /// resumed the same next action with no new commit (unset: never).
    pub max_handoffs_without_progress: Option<u32>,
    /// Loop detection: `false` turns it off; `{same_failure, same_file,
    /// oscillation}` sets its limits (defaults 3, 3 and 3; 0 turns one off).
    /// (`gutter`, its older name, is still read.)
    #[serde(alias = "gutter")]
    pub loops: Option<LoopSetting>,
    /// Where each agent compacts on its own, overriding what ctxkeep reads
    /// from the agent's configuration, and what stages are measured against.
    pub compaction: Option<crate::context::compaction::CompactionConfig>,
    /// Automatic checkpoints store the uncommitted work in git (default true).
    pub snapshots: Option<bool>,
    /// When the model is asked for a checkpoint between stages (`false`: never).
    pub checkpoint_requests: Option<crate::domain::requests::Setting>,
    /// A restored session is asked to confirm it read the checkpoint, by a marker line in its
    /// reply (`false`: never asked, and `verify` does not warn CK801).
    pub acknowledgement: Option<bool>,
    /// The note a resumed conversation gets when the checkpoint changed since it saw one
    /// (`false`: none).
    pub reminders: Option<bool>,
    /// The brief for the agent's summarizer at a compaction (`false`: none).
    pub brief: Option<bool>,
    /// After a compaction, what the summary left out (or the resume prompt) is given back
    /// (`false`: nothing is given after a compaction).
    pub give_back: Option<bool>,
    /// ctxkeep's part of the status line (`false`: it prints nothing; the reading is still
    /// recorded, and a status line of yours it composes still shows).
    pub status_line: Option<bool>,
    pub checkpoint: Option<Checkpoint>,
    pub history: Option<Vec<HistoryEntry>>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct Retention {
    /// Archived checkpoint records kept in .ctxkeep/checkpoints (default 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<usize>,
    /// Archived records older than this many days are removed (default: no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub days: Option<u64>,
    /// `.ctxkeep/events.jsonl` is rotated to `events.jsonl.1` past this size (default 1 MiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events_max_bytes: Option<u64>,
    /// Session records kept in `.ctxkeep/chain.jsonl` (default 500).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<usize>,
}

/// A parsed `project-state.md`, able to write itself back.
#[derive(Debug, Clone)]
pub struct StateFile {
    pub path: PathBuf,
    /// The exact text read, to detect an editor's save during a write.
    pub original: String,
    bom: bool,
    newline: &'static str,
    /// `None` when the file has no front matter (it is all body).
    front: Option<Front>,
    /// The exact text after the closing delimiter: the user's, byte for byte.
    pub body: String,
    pub mapping: Mapping,
    pub fm: FrontMatter,
}

impl StateFile {
    /// Reads and parses the file. Any defect is a one-line error naming it.
    /// While git rewrites the work tree (a merge, a checkout), a file that reads as missing,
    /// empty or half-written is read again until git is done (bounded: see
    /// [`crate::system::git::read_settled`]).
    pub fn load(path: &Path) -> Result<StateFile, Error> {
        Self::load_with(path, None)
    }

    /// [`StateFile::load`] for a hook event: the parse of the front matter is read from
    /// `cache_dir` (the project's `.ctxkeep/`) when that holds the same text, and kept there
    /// otherwise, for the next event (`kept.rs`: never stale, the text is compared whole).
    pub fn load_kept(path: &Path, cache_dir: &Path) -> Result<StateFile, Error> {
        Self::load_with(path, Some(cache_dir))
    }

    fn load_with(path: &Path, cache_dir: Option<&Path>) -> Result<StateFile, Error> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        crate::system::git::read_settled(
            dir,
            || {
                Self::read_text(path).and_then(|text| {
                    Self::refuse_conflicts(path, &text)?;
                    Self::parse_with(path, text, cache_dir).map_err(with_way_back)
                })
            },
            |got| match got {
                Ok(sf) => sf.is_initialized(),
                Err(Error::NotInitialized { .. } | Error::NotFound { .. } | Error::Data { .. }) => {
                    false
                }
                Err(_) => true,
            },
        )
    }

    /// The file's text; a missing file reads as a project not set up yet.
    pub fn read_text(path: &Path) -> Result<String, Error> {
        crate::system::fsutil::read_text(path, MAX_FILE_BYTES).map_err(|e| match e {
            Error::NotFound {
                path,
                dangling_to: None,
            } => Error::NotInitialized {
                path,
                why: "not initialized",
            },
            other => with_way_back(other),
        })
    }

    /// Parses `text` as the file at `path` holds it (another version of it,
    /// e.g. the one in git's index), conflict markers refused first.
    pub fn from_text(path: &Path, text: String) -> Result<StateFile, Error> {
        Self::refuse_conflicts(path, &text)?;
        Self::parse(path, text).map_err(with_way_back)
    }

    /// Fails with one line naming the lines when git's conflict markers
    /// are anywhere in the text (front matter included): a merge left half
    /// done must read as that, not as a YAML error.
    pub fn refuse_conflicts(path: &Path, text: &str) -> Result<(), Error> {
        let regions = conflicts::regions(text);
        if regions.is_empty() {
            return Ok(());
        }
        Err(Error::Conflicted {
            path: path.to_path_buf(),
            lines: conflicts::describe(&regions),
        })
    }

    pub fn parse(path: &Path, text: String) -> Result<StateFile, Error> {
        Self::parse_with(path, text, None)
    }

    fn parse_with(path: &Path, text: String, cache_dir: Option<&Path>) -> Result<StateFile, Error> {
        let (bom, rest) = match text.strip_prefix('\u{feff}') {
            Some(r) => (true, r),
            None => (false, text.as_str()),
        };
        let first_end = rest.find('\n').map(|i| i + 1).unwrap_or(rest.len());
        let newline = if rest[..first_end].ends_with("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        let (front, body) = split(path, rest)?;
        let (mapping, fm) = match &front {
            Some(f) => kept::parse_front(path, &f.text, f.first_line, cache_dir)?,
            None => (Mapping::new(), FrontMatter::default()),
        };
        let body = body.to_string();
        Ok(StateFile {
            path: path.to_path_buf(),
            original: text.clone(),
            bom,
            newline,
            front,
            body,
            mapping,
            fm,
        })
    }

    /// True when the file carries ctxkeep's front matter.
    pub fn is_initialized(&self) -> bool {
        self.fm.ctxkeep.is_some()
    }

    /// Fails unless the file is a ctxkeep state file of a supported version.
    pub fn require_initialized(&self) -> Result<(), Error> {
        match self.fm.ctxkeep {
            None => Err(Error::NotInitialized {
                path: self.path.clone(),
                why: "no ctxkeep front matter",
            }),
            Some(FORMAT_VERSION) => Ok(()),
            Some(v) => Err(Error::data(
                &self.path,
                format!("format version {v} is not supported (this ctxkeep reads version {FORMAT_VERSION}); upgrade ctxkeep"),
            )),
        }
    }

    /// The file line (1-based) where a top-level key starts, for findings.
    pub fn key_line(&self, key: &str) -> Option<usize> {
        let f = self.front.as_ref()?;
        find_key_block(&f.text, key)
            .map(|(start, _)| f.first_line + f.text[..start].matches('\n').count())
    }

    /// The file line of a nested key under a top-level key (e.g. checkpoint.phase).
    pub fn nested_key_line(&self, top: &str, key: &str) -> Option<usize> {
        let f = self.front.as_ref()?;
        let (start, end) = find_key_block(&f.text, top)?;
        let block = &f.text[start..end];
        let first = f.first_line + f.text[..start].matches('\n').count();
        block.split_inclusive('\n').enumerate().find_map(|(i, l)| {
            let t = l.trim_start();
            (l.len() > t.len() && t.starts_with(key) && t[key.len()..].starts_with(':'))
                .then_some(first + i)
        })
    }

    /// Sets ctxkeep-owned top-level keys (a `None` value removes the key), in
    /// the text, leaving every other byte as it was. Verified by re-parsing.
    pub fn set_keys(&mut self, updates: &[(&str, Option<serde_json::Value>)]) -> Result<(), Error> {
        let text = self.front_text_with(updates.iter().map(|(k, v)| (*k, v.as_ref())));
        let first_line = self.front.as_ref().map(|f| f.first_line).unwrap_or(2);
        let (mapping, fm) =
            kept::parse_front(&self.path, &text, first_line, None).map_err(|e| {
                Error::data(
                    &self.path,
                    format!(
                        "could not update the front matter in place ({e}); nothing was written"
                    ),
                )
            })?;
        // Every key we did not set must read back exactly as before.
        for (k, v) in &self.mapping {
            let ours = k
                .as_str()
                .is_some_and(|k| updates.iter().any(|(u, _)| *u == k));
            if !ours && mapping.get(k) != Some(v) {
                return Err(Error::data(
                    &self.path,
                    format!(
                        "could not update the front matter without changing key {:?}; nothing was written",
                        k.as_str().unwrap_or("?")
                    ),
                ));
            }
        }
        let front = self.front.get_or_insert_with(|| Front {
            open: format!("---{}", self.newline),
            text: String::new(),
            close: format!("---{}", self.newline),
            first_line: 2,
        });
        front.text = text;
        self.mapping = mapping;
        self.fm = fm;
        Ok(())
    }

    /// The exact text of a top-level key's block (`key: ...` and its
    /// indented lines), as written.
    pub fn key_text(&self, key: &str) -> Option<String> {
        let f = self.front.as_ref()?;
        find_key_block(&f.text, key).map(|(s, e)| f.text[s..e].to_string())
    }

    /// The size in bytes the front matter would have with `updates` made
    /// (as [`StateFile::set_keys`] would make them), without making them.
    pub fn front_matter_len_with(&self, updates: &[(&str, Option<&serde_json::Value>)]) -> usize {
        self.front_text_with(updates.iter().copied()).len()
    }

    /// The front matter's text with `updates` made (a `None` value removes the key).
    fn front_text_with<'a>(
        &self,
        updates: impl Iterator<Item = (&'a str, Option<&'a serde_json::Value>)>,
    ) -> String {
        let mut text = self
            .front
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
        for (key, value) in updates {
            let block = value.map(|v| emit_key(key, v, self.newline));
            text = replace_key_block(&text, key, block.as_deref(), self.newline);
        }
        text
    }

    /// Replaces a top-level key's block by `block` (exact text, `None`
    /// removes it), leaving every other byte as it was. Verified by re-parsing.
    pub fn set_key_text(&mut self, key: &str, block: Option<&str>) -> Result<(), Error> {
        let nl = self.newline;
        let block = block.map(|b| {
            let b = normalize_newlines(b, nl);
            if b.ends_with('\n') {
                b
            } else {
                format!("{b}{nl}")
            }
        });
        let old = self
            .front
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default();
        let text = replace_key_block(&old, key, block.as_deref(), nl);
        let first_line = self.front.as_ref().map(|f| f.first_line).unwrap_or(2);
        let (mapping, fm) = kept::parse_front(&self.path, &text, first_line, None)?;
        let front = self.front.get_or_insert_with(|| Front {
            open: format!("---{nl}"),
            text: String::new(),
            close: format!("---{nl}"),
            first_line: 2,
        });
        front.text = text;
        self.mapping = mapping;
        self.fm = fm;
        Ok(())
    }

    /// Writes both sides of a key that a merge could not settle between
    /// git's conflict markers, in place of the key. The file no longer
    /// parses until someone picks one: the last edit before rendering.
    pub fn mark_key_conflict(&mut self, key: &str, ours: Option<&str>, theirs: Option<&str>) {
        let nl = self.newline;
        let line = |b: Option<&str>| {
            let b = normalize_newlines(b.unwrap_or(""), nl);
            if b.is_empty() || b.ends_with('\n') {
                b
            } else {
                format!("{b}{nl}")
            }
        };
        let block = format!(
            "<<<<<<< ours{nl}{}======={nl}{}>>>>>>> theirs{nl}",
            line(ours),
            line(theirs)
        );
        if let Some(f) = self.front.as_mut() {
            f.text = replace_key_block(&f.text, key, Some(&block), nl);
        }
    }

    /// The body with the marked block's content left out (the markers
    /// kept): the user's prose alone, for a three-way text merge.
    pub fn prose(&self) -> String {
        match managed_block_range(&self.body) {
            Ok(Some((s, e))) => format!("{}{}", &self.body[..s], &self.body[e..]),
            _ => self.body.clone(),
        }
    }

    /// Replaces what is between the ctxkeep markers in the body (appending a
    /// marked block when there is none). Nothing outside the markers changes.
    pub fn set_managed_block(&mut self, content: &str) -> Result<(), Error> {
        let nl = self.newline;
        let content = normalize_newlines(&limits::escape_block(content), nl);
        let content = if content.is_empty() || content.ends_with(nl) {
            content
        } else {
            format!("{content}{nl}")
        };
        match managed_block_range(&self.body) {
            Ok(Some((start, end))) => {
                self.body.replace_range(start..end, &content);
            }
            Ok(None) => {
                // A closer at the end of the file may lack its newline; the
                // block must not be glued to it (`---<!-- ...`).
                if let Some(front) = self.front.as_mut().filter(|f| !f.close.ends_with('\n')) {
                    front.close.push_str(nl);
                }
                if !self.body.is_empty() && !self.body.ends_with('\n') {
                    self.body.push_str(nl);
                }
                if !self.body.is_empty() {
                    self.body.push_str(nl);
                }
                self.body
                    .push_str(&format!("{BEGIN_MARKER}{nl}{content}{END_MARKER}{nl}"));
            }
            Err(line) => {
                return Err(Error::data(
                    &self.path,
                    format!("{BEGIN_MARKER} at body line {line} has no {END_MARKER} after it; add one or remove the marker"),
                ))
            }
        }
        // A closer at the very end of the file has no newline; the body now
        // following it must start on its own line or the closer is lost.
        if let Some(f) = &mut self.front {
            if !self.body.is_empty() && !f.close.ends_with('\n') {
                f.close.push_str(nl);
            }
        }
        Ok(())
    }

    /// The managed block's current content, if any.
    pub fn managed_block(&self) -> Option<&str> {
        match managed_block_range(&self.body) {
            Ok(Some((s, e))) => Some(&self.body[s..e]),
            _ => None,
        }
    }

    /// The whole file as it would be written now.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.original.len() + 256);
        if self.bom {
            out.push('\u{feff}');
        }
        if let Some(f) = &self.front {
            out.push_str(&f.open);
            out.push_str(&f.text);
            out.push_str(&f.close);
        }
        out.push_str(&self.body);
        out
    }

    /// Writes the file atomically if it changed; refuses if someone else
    /// changed it since it was read, or if a reader could not take the new
    /// text back (see [`limits::check_text`]). Returns whether anything was
    /// written.
    pub fn save(&mut self) -> Result<bool, Error> {
        let new = self.render();
        if new == self.original {
            return Ok(false);
        }
        limits::check_text(&self.path, &new, false)?;
        crate::system::fsutil::atomic_write(
            &self.path,
            new.as_bytes(),
            Some(self.original.as_bytes()),
        )?;
        self.original = new;
        Ok(true)
    }

    pub fn newline(&self) -> &'static str {
        self.newline
    }
}

/// The way back from a state file that no longer reads, appended to the
/// error: git has the last committed version, the archive each checkpoint.
fn with_way_back(e: Error) -> Error {
    let way_back = |path: &Path| {
        format!(
            "; to go back, `git checkout -- {}` restores the last committed version, and .ctxkeep/checkpoints/ beside it keeps the checkpoints ctxkeep wrote",
            path.display()
        )
    };
    match e {
        Error::Data { path, msg } => {
            let msg = format!("{msg}{}", way_back(&path));
            Error::Data { path, msg }
        }
        Error::TooLarge {
            path,
            what,
            size,
            limit,
            hint,
        } => Error::TooLarge {
            hint: format!("{hint}{}", way_back(&path)).into(),
            path,
            what,
            size,
            limit,
        },
        other => other,
    }
}

/// `sha256:<hex>` of the marked block's content as a reader sees it: line
/// ends and trailing blanks do not count, so an editor that strips
/// trailing spaces or a checkout that converts line ends is no edit.
pub fn block_digest(content: &str) -> String {
    use sha2::{Digest, Sha256};
    let normal: Vec<&str> = content.lines().map(str::trim_end).collect();
    let normal = normal.join("\n");
    let hash = Sha256::digest(normal.trim_matches('\n').as_bytes());
    format!("sha256:{hash:x}")
}

/// The marked block's text when it was edited by hand since ctxkeep wrote
/// it (its digest differs from the one the checkpoint recorded); None when
/// intact, or when the checkpoint recorded none.
pub fn edited_block(sf: &StateFile) -> Option<&str> {
    let recorded = sf.fm.checkpoint.as_ref()?.block_digest.as_str();
    let block = sf.managed_block()?;
    (!recorded.is_empty() && block_digest(block) != recorded).then_some(block)
}

/// Whether the checkpoint in the file is the one ctxkeep sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seal {
    Intact,
    /// Edited since ctxkeep wrote it.
    Altered,
    /// No digest at all (written by hand, or cut).
    Missing,
}

/// Whether `sf`'s checkpoint is sealed, and intact; None without one.
pub fn seal(sf: &StateFile) -> Option<Seal> {
    let c = sf.fm.checkpoint.as_ref()?;
    if c.digest.trim().is_empty() {
        return Some(Seal::Missing);
    }
    let raw = sf.mapping.get("checkpoint")?;
    Some(if digest_of(&yaml_to_json(raw)) == c.digest {
        Seal::Intact
    } else {
        Seal::Altered
    })
}

#[cfg(test)]
mod tests;
