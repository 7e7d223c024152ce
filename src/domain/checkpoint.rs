//! The checkpoint record, its digest, and the JSON archive in
//! `.ctxkeep/checkpoints/`.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::system::error::Error;
pub use crate::system::git::{DirtyFile, GitState};
use crate::transcripts::compaction_summary::{facts, Fact};

/// An archived record is one small JSON document; anything larger is not one.
const MAX_RECORD_BYTES: u64 = 8 * 1024 * 1024;

/// One checkpoint: everything a cold reader needs to continue the work.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// `ckpt-0001`, `ckpt-0002`, ... (monotonic).
    pub id: String,
    /// UTC, RFC 3339.
    pub created_at: String,
    /// `manual`, a stage name, `pre-compact`, `session-end`.
    pub trigger: String,
    #[serde(default)]
    pub phase: String,
    #[serde(default)]
    pub active_task: String,
    #[serde(default)]
    pub controlling_agent: String,
    #[serde(default)]
    pub next_action: String,
    /// Decisions made since the last commit.
    #[serde(default)]
    pub decisions: Vec<String>,
    #[serde(default)]
    pub open_questions: Vec<String>,
    /// Action items finished (the Truncation Protocol's completed items),
    /// oldest first (the rules are in the `actions` module).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done: Vec<String>,
    /// Action items still to do, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remaining: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// What the agent's transcript says the session did (request, plan,
    /// files, commands), when the writer knew the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<crate::transcripts::activity::Observed>,
    /// The other lines of work a merge brought in (see `merge`); empty
    /// for a checkpoint written by `ctxkeep checkpoint`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<MergedLine>,
    /// The line of work this checkpoint belongs to: the agent session that wrote it (an
    /// automatic checkpoint), or that ran `checkpoint` when it named one (by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<Line>,
    /// `session` when the task and next action were read from the session's own record (its
    /// request, its stated next step, its plan, its summary); absent when set by hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline_from: Option<String>,
    /// A headline set by hand on another line of work, older than this session's own record:
    /// kept to be shown as "earlier, by hand", never as the work to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_by_hand: Option<HandHeadline>,
    /// `sha256:<hex>` of the marked block written with this record
    /// (`state::block_digest`): a hand edit of the block no longer matches.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub block_digest: String,
    /// `sha256:<hex>` over the canonical record without this field.
    #[serde(default)]
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub tokens: u64,
    pub window: u64,
    pub percent: f64,
}

/// Another line of work, as a merged checkpoint records it: where that
/// line's last checkpoint left off.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedLine {
    pub id: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default)]
    pub phase: String,
    #[serde(default)]
    pub active_task: String,
    #[serde(default)]
    pub controlling_agent: String,
    #[serde(default)]
    pub next_action: String,
}

/// Whose line of work a checkpoint is: an agent's session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The agent's session id.
    pub session: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent: String,
}

impl Line {
    /// The session id as people are shown it: its first 8 characters.
    pub fn short(&self) -> String {
        self.session.chars().take(8).collect()
    }
}

/// A headline someone set by hand, as a later checkpoint of another line keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HandHeadline {
    /// The checkpoint that set it.
    pub id: String,
    pub created_at: String,
    #[serde(default)]
    pub phase: String,
    #[serde(default)]
    pub active_task: String,
    #[serde(default)]
    pub controlling_agent: String,
    #[serde(default)]
    pub next_action: String,
}

impl HandHeadline {
    pub fn of(c: &Checkpoint) -> HandHeadline {
        HandHeadline {
            id: c.id.clone(),
            created_at: c.created_at.clone(),
            phase: c.phase.clone(),
            active_task: c.active_task.clone(),
            controlling_agent: c.controlling_agent.clone(),
            next_action: c.next_action.clone(),
        }
    }
}

/// A checkpoint in brief, as kept in `history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub id: String,
    pub created_at: String,
    #[serde(default)]
    pub phase: String,
    #[serde(default)]
    pub next_action: String,
}

/// The fields a person or agent supplies (flags or `--from`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fields {
    pub phase: Option<String>,
    #[serde(alias = "task")]
    pub active_task: Option<String>,
    #[serde(alias = "agent")]
    pub controlling_agent: Option<String>,
    #[serde(alias = "next")]
    pub next_action: Option<String>,
    pub decisions: Option<Vec<String>>,
    pub open_questions: Option<Vec<String>>,
    pub notes: Option<String>,
    /// Items finished: added to `done` and taken off `remaining`.
    pub done: Option<Vec<String>>,
    /// Items still to do: added to `remaining`.
    pub remaining: Option<Vec<String>>,
    /// Empty `remaining` before adding the items given.
    pub clear_remaining: Option<bool>,
    /// Added to the decisions that stand (`--add-decision`): after
    /// `decisions` when given, else after those carried over.
    #[serde(skip)]
    pub add_decisions: Vec<String>,
}

impl Fields {
    /// Layers `over` on top of `self` (flags win over `--from`).
    pub fn merge(mut self, over: Fields) -> Fields {
        macro_rules! take {
            ($($f:ident),*) => { $( if over.$f.is_some() { self.$f = over.$f; } )* };
        }
        take!(
            phase,
            active_task,
            controlling_agent,
            next_action,
            decisions,
            open_questions,
            notes
        );
        // Action items add up: the file's, then the flags'.
        for (mine, theirs) in [
            (&mut self.done, over.done),
            (&mut self.remaining, over.remaining),
        ] {
            if let Some(items) = theirs {
                mine.get_or_insert_with(Vec::new).extend(items);
            }
        }
        if over.clear_remaining == Some(true) {
            self.clear_remaining = Some(true);
        }
        self.add_decisions.extend(over.add_decisions);
        self
    }
}

/// A field of the checkpoint that a person or agent writes: its key in the record (and in
/// `project-state.md`), the `checkpoint` flag that sets it, and whether it is a list. Code
/// that names a field names it here, so the key is spelled once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Phase,
    ActiveTask,
    ControllingAgent,
    NextAction,
    Decisions,
    OpenQuestions,
    Notes,
    Done,
    Remaining,
}

impl Field {
    /// Every field, in record order.
    pub const ALL: [Field; 9] = [
        Field::Phase,
        Field::ActiveTask,
        Field::ControllingAgent,
        Field::NextAction,
        Field::Decisions,
        Field::OpenQuestions,
        Field::Notes,
        Field::Done,
        Field::Remaining,
    ];

    /// The fields a reader cannot act without.
    pub const REQUIRED: [Field; 4] = [
        Field::Phase,
        Field::ActiveTask,
        Field::ControllingAgent,
        Field::NextAction,
    ];

    /// Its key in the record.
    pub const fn key(self) -> &'static str {
        match self {
            Field::Phase => "phase",
            Field::ActiveTask => "active_task",
            Field::ControllingAgent => "controlling_agent",
            Field::NextAction => "next_action",
            Field::Decisions => "decisions",
            Field::OpenQuestions => "open_questions",
            Field::Notes => "notes",
            Field::Done => "done",
            Field::Remaining => "remaining",
        }
    }

    /// The `checkpoint` flag that sets it.
    pub const fn flag(self) -> &'static str {
        match self {
            Field::Phase => "--phase",
            Field::ActiveTask => "--task",
            Field::ControllingAgent => "--agent",
            Field::NextAction => "--next",
            Field::Decisions => "--decision",
            Field::OpenQuestions => "--question",
            Field::Notes => "--note",
            Field::Done => "--done",
            Field::Remaining => "--remaining",
        }
    }

    /// Whether it holds a list of items rather than one text.
    pub const fn is_list(self) -> bool {
        matches!(
            self,
            Field::Decisions | Field::OpenQuestions | Field::Done | Field::Remaining
        )
    }

    /// `notes (--note)`: its key and its flag, for messages read by people (flags) and agents
    /// (the MCP tool's argument names).
    pub fn named(self) -> String {
        format!("{} ({})", self.key(), self.flag())
    }

    /// The field whose key is `key`.
    pub fn from_key(key: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.key() == key)
    }

    /// Its text in `c`; None for a list.
    pub fn text(self, c: &Checkpoint) -> Option<&String> {
        match self {
            Field::Phase => Some(&c.phase),
            Field::ActiveTask => Some(&c.active_task),
            Field::ControllingAgent => Some(&c.controlling_agent),
            Field::NextAction => Some(&c.next_action),
            Field::Notes => Some(&c.notes),
            _ => None,
        }
    }

    /// Its items in `c`; None for a text.
    pub fn items(self, c: &Checkpoint) -> Option<&Vec<String>> {
        match self {
            Field::Decisions => Some(&c.decisions),
            Field::OpenQuestions => Some(&c.open_questions),
            Field::Done => Some(&c.done),
            Field::Remaining => Some(&c.remaining),
            _ => None,
        }
    }
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// The required fields `c` leaves empty.
pub fn missing_fields(c: &Checkpoint) -> Vec<Field> {
    Field::REQUIRED
        .into_iter()
        .filter(|f| f.text(c).is_some_and(|v| v.trim().is_empty()))
        .collect()
}

impl Checkpoint {
    /// Its facts an agent's compaction summary should keep, in the order a reader needs them
    /// (the rules are `compaction_summary::facts`').
    pub fn facts(&self) -> Vec<Fact> {
        facts::of(&facts::Recorded {
            active_task: &self.active_task,
            next_action: &self.next_action,
            remaining: &self.remaining,
            decisions: &self.decisions,
            observed: self.observed.as_ref(),
        })
    }

    pub fn brief(&self) -> HistoryEntry {
        HistoryEntry {
            id: self.id.clone(),
            created_at: self.created_at.clone(),
            phase: self.phase.clone(),
            next_action: self.next_action.clone(),
        }
    }

    /// The record as JSON without its digest: what the digest covers.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("checkpoint serializes")
    }

    pub fn seal(&mut self) {
        self.sealed_json();
    }

    /// Seals the record and gives it as JSON: [`Self::seal`] then [`Self::to_json`], with the
    /// record serialized once (the digest leaves its own key out, so it is filled in after).
    pub fn sealed_json(&mut self) -> serde_json::Value {
        let mut json = self.to_json();
        self.digest = digest_of(&json);
        json["digest"] = serde_json::Value::String(self.digest.clone());
        json
    }

    pub fn number(&self) -> Option<u64> {
        id_number(&self.id)
    }

    /// The agent session whose line this is, when recorded.
    pub fn session(&self) -> Option<&str> {
        self.line.as_ref().map(|l| l.session.as_str())
    }

    /// Whether the record says what the work is without a hand-set headline: its headline was
    /// read from the session, or the session's own request is recorded.
    pub fn says_the_work(&self) -> bool {
        (self.headline_from_session() && !self.active_task.trim().is_empty())
            || self
                .observed
                .as_ref()
                .is_some_and(|o| o.carried_from.is_none() && o.request.is_some())
    }

    /// Whether the task and next action were read from the session's own record.
    pub fn headline_from_session(&self) -> bool {
        self.headline_from.as_deref() == Some(HEADLINE_FROM_SESSION)
    }
}

/// `headline_from`'s value for a headline read from the session's own record.
pub const HEADLINE_FROM_SESSION: &str = "session";

/// The last checkpoint, as `status` and `statusline` show it.
#[derive(Debug, Serialize)]
pub struct CheckpointRef {
    pub id: String,
    pub created_at: String,
}

impl CheckpointRef {
    pub fn of(c: &Checkpoint) -> CheckpointRef {
        CheckpointRef {
            id: c.id.clone(),
            created_at: c.created_at.clone(),
        }
    }
}

pub fn id_number(id: &str) -> Option<u64> {
    id.strip_prefix("ckpt-")?.parse().ok()
}

pub fn format_id(n: u64) -> String {
    format!("ckpt-{n:04}")
}

/// `sha256:<hex>` over canonical JSON (sorted keys, no spaces) of `record`
/// with any `digest` key removed. Hashing the parsed value, not the text,
/// ignores formatting but catches every change of content, added keys included.
pub fn digest_of(record: &serde_json::Value) -> String {
    // Written straight into one buffer, the record not copied to drop its digest: a checkpoint
    // seals its record and its checks recompute the seal (a string per key and value and a copy
    // of the record were 1 M instructions each time).
    let mut canon = Vec::with_capacity(8192);
    match record {
        serde_json::Value::Object(m) => canonical_object(m, Some("digest"), &mut canon),
        other => canonical_json(other, &mut canon),
    }
    let hash = Sha256::digest(&canon);
    format!("sha256:{hash:x}")
}

fn canonical_json(v: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value as J;
    match v {
        J::Object(m) => canonical_object(m, None, out),
        J::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(x, out);
            }
            out.push(b']');
        }
        // serde_json's compact form, as `Value`'s Display writes it.
        other => write_compact(other, out),
    }
}

/// An object's entries sorted by key, without the key `skip`.
fn canonical_object(
    m: &serde_json::Map<String, serde_json::Value>,
    skip: Option<&str>,
    out: &mut Vec<u8>,
) {
    let mut entries: Vec<(&String, &serde_json::Value)> =
        m.iter().filter(|(k, _)| Some(k.as_str()) != skip).collect();
    crate::system::sorting::sort_by(&mut entries, |a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_compact(k, out);
        out.push(b':');
        canonical_json(v, out);
    }
    out.push(b'}');
}

fn write_compact<T: Serialize + ?Sized>(v: &T, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail, and a string or number always serializes.
    let _ = serde_json::to_writer(&mut *out, v);
}

/// Converts the checkpoint as found in the YAML front matter to JSON, so its
/// digest can be recomputed from what is actually in the file.
pub fn yaml_to_json(v: &serde_yaml::Value) -> serde_json::Value {
    use serde_yaml::Value as Y;
    match v {
        Y::Null => serde_json::Value::Null,
        Y::Bool(b) => (*b).into(),
        Y::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into()
            } else if let Some(i) = n.as_i64() {
                i.into()
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map(serde_json::Value::Number)
                    .unwrap_or(serde_json::Value::Null)
            }
        }
        Y::String(s) => s.clone().into(),
        Y::Sequence(s) => s.iter().map(yaml_to_json).collect(),
        Y::Mapping(m) => m
            .iter()
            .map(|(k, v)| {
                let key = match k {
                    Y::String(s) => s.clone(),
                    other => serde_yaml::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                };
                (key, yaml_to_json(v))
            })
            .collect::<serde_json::Map<_, _>>()
            .into(),
        Y::Tagged(t) => yaml_to_json(&t.value),
    }
}

/// The archive of full records, `.ctxkeep/checkpoints/<id>.json`.
pub struct Archive<'a> {
    pub dir: &'a Path,
}

impl Archive<'_> {
    /// Highest archived checkpoint number (0 when none).
    pub fn max_number(&self) -> u64 {
        self.ids()
            .into_iter()
            .filter_map(|id| id_number(&id))
            .max()
            .unwrap_or(0)
    }

    pub fn ids(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.dir) else {
            return Vec::new();
        };
        let mut ids: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let id = name.strip_suffix(".json")?;
                id_number(id).map(|_| id.to_string())
            })
            .collect();
        crate::system::sorting::sort_by_key(&mut ids, |id| id_number(id));
        ids
    }

    /// Archives `record`; `replaced_block` is the marked block as it stood
    /// edited by hand before this checkpoint replaced it, kept beside the
    /// record (key `replaced_block`) so that the edit is not lost.
    pub fn store(&self, record: &Checkpoint, replaced_block: Option<&str>) -> Result<(), Error> {
        crate::system::fsutil::ensure_dir(self.dir)?;
        let mut json = match replaced_block {
            None => serde_json::to_string_pretty(record),
            Some(block) => {
                let mut value = record.to_json();
                if let Some(map) = value.as_object_mut() {
                    map.insert("replaced_block".into(), block.into());
                }
                serde_json::to_string_pretty(&value)
            }
        }
        .expect("checkpoint serializes");
        json.push('\n');
        let path = self.path(&record.id);
        if !crate::system::fsutil::create_new(&path, json.as_bytes())? {
            return Err(Error::Conflict {
                path,
                msg: "a checkpoint with this id is already archived; run the command again".into(),
            });
        }
        Ok(())
    }

    pub fn load(&self, id: &str) -> Result<Checkpoint, Error> {
        self.load_as(id)
    }

    /// Where record `id` is archived.
    pub fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Takes record `id` back out: for a write that stored it and then failed.
    pub fn take_back(&self, id: &str) {
        let _ = fs::remove_file(self.path(id));
    }

    /// The archived record `id` read as `T`: a part of a checkpoint (serde skips the keys `T`
    /// has no field for without building them), for readers that look at many records.
    pub fn load_as<T: serde::de::DeserializeOwned>(&self, id: &str) -> Result<T, Error> {
        let path = self.path(id);
        let text = crate::system::fsutil::read_text(&path, MAX_RECORD_BYTES)?;
        serde_json::from_str(&text)
            .map_err(|e| Error::data(&path, format!("not a checkpoint record: {e}")))
    }

    /// Keeps the newest `keep` records (and, with `max_age_days`, only those
    /// younger). Returns the ids removed.
    pub fn prune(
        &self,
        keep: usize,
        max_age_days: Option<u64>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Vec<String> {
        self.expired(keep, max_age_days, now)
            .into_iter()
            .filter(|id| {
                let gone = fs::remove_file(self.path(id)).is_ok();
                let _ = fs::remove_file(self.merging_marker(id));
                gone
            })
            .collect()
    }

    /// Notes that the archived `record` was made by the merge driver for a merge that has not
    /// concluded yet (best effort). `log` leaves such a record out unless the state file holds
    /// it: an aborted merge leaves none. Call under the lock.
    pub fn mark_merging(&self, record: &Checkpoint) {
        let _ = crate::system::fsutil::create_new(&self.merging_marker(&record.id), b"");
    }

    /// Whether the archived `id` is a merge's that has not concluded (see [`mark_merging`]).
    pub fn is_merging(&self, id: &str) -> bool {
        self.merging_marker(id).exists()
    }

    /// The merge that made `current` (the state file's checkpoint, which a new one follows)
    /// concluded: its record stands like any other. Call under the lock.
    pub fn settle_merge(&self, current: &Checkpoint) {
        let _ = fs::remove_file(self.merging_marker(&current.id));
    }

    fn merging_marker(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.merging"))
    }

    /// The ids `prune` would remove, oldest first. Age is the file's
    /// modification time; the newest record is never too old.
    pub fn expired(
        &self,
        keep: usize,
        max_age_days: Option<u64>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Vec<String> {
        let ids = self.ids();
        let excess = ids.len().saturating_sub(keep);
        ids.iter()
            .enumerate()
            .filter(|(i, id)| {
                let too_old = max_age_days.is_some_and(|days| {
                    i + 1 < ids.len()
                        && fs::metadata(self.path(id))
                            .and_then(|m| m.modified())
                            .ok()
                            .map(chrono::DateTime::<chrono::Utc>::from)
                            .is_some_and(|t| (now - t).num_days() >= days as i64)
                });
                *i < excess || too_old
            })
            .map(|(_, id)| id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each field's key is the record's own (as serde writes it), and it reads that value.
    #[test]
    fn each_field_names_and_reads_its_key_in_the_record() {
        let c = Checkpoint {
            phase: "p".into(),
            active_task: "t".into(),
            controlling_agent: "a".into(),
            next_action: "n".into(),
            decisions: vec!["d".into()],
            open_questions: vec!["q".into()],
            notes: "o".into(),
            done: vec!["x".into()],
            remaining: vec!["r".into()],
            ..Checkpoint::default()
        };
        let json = serde_json::to_value(&c).unwrap();
        for f in Field::ALL {
            let on_disk = &json[f.key()];
            match (f.text(&c), f.items(&c)) {
                (Some(text), None) => assert_eq!(on_disk, text.as_str(), "{f}"),
                (None, Some(items)) => assert_eq!(on_disk, &serde_json::json!(items), "{f}"),
                other => panic!("{f}: {other:?}"),
            }
            assert_eq!(f.is_list(), f.items(&c).is_some(), "{f}");
            assert_eq!(Field::from_key(f.key()), Some(f));
        }
        assert_eq!(Field::from_key("digest"), None);
        assert_eq!(Field::Notes.named(), "notes (--note)");
        let missing = missing_fields(&Checkpoint {
            phase: "p".into(),
            next_action: " ".into(),
            ..Checkpoint::default()
        });
        assert_eq!(
            missing,
            [
                Field::ActiveTask,
                Field::ControllingAgent,
                Field::NextAction
            ]
        );
    }

    #[test]
    fn a_corrupt_archive_record_is_65_and_skipped_by_numbering() {
        let dir = tempfile::tempdir().unwrap();
        let archive = Archive { dir: dir.path() };
        std::fs::write(dir.path().join("ckpt-0003.json"), "{not json").unwrap();
        std::fs::write(dir.path().join("ckpt-0004.json"), b"\xff\xfe").unwrap();
        assert_eq!(archive.load("ckpt-0003").unwrap_err().exit_code(), 65);
        assert_eq!(archive.load("ckpt-0004").unwrap_err().exit_code(), 65);
        assert_eq!(
            archive.max_number(),
            4,
            "a damaged record still reserves its id"
        );
    }
    use serde_json::json;

    fn sample() -> Checkpoint {
        Checkpoint {
            id: "ckpt-0001".into(),
            created_at: "2026-01-02T03:04:05Z".into(),
            trigger: "manual".into(),
            phase: "build".into(),
            active_task: "parser".into(),
            controlling_agent: "alice".into(),
            next_action: "write the tests".into(),
            decisions: vec!["use serde".into()],
            budget: Some(Budget {
                tokens: 1000,
                window: 200000,
                percent: 0.5,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn digest_detects_changes_and_ignores_key_order() {
        let mut c = sample();
        c.seal();
        assert!(c.digest.starts_with("sha256:") && c.digest.len() == 71);
        assert_eq!(digest_of(&c.to_json()), c.digest);
        let mut changed = c.to_json();
        changed["phase"] = json!("other");
        assert_ne!(digest_of(&changed), c.digest);
        let mut added = c.to_json();
        added["extra"] = json!(1);
        assert_ne!(digest_of(&added), c.digest);
    }

    /// The digest as it was first written (a copy of the record without `digest`, each key and
    /// value turned into a string): records sealed by earlier versions must still read intact.
    fn digest_as_first_written(record: &serde_json::Value) -> String {
        fn canon(v: &serde_json::Value, out: &mut String) {
            use serde_json::Value as J;
            match v {
                J::Object(m) => {
                    let mut keys: Vec<&String> = m.keys().collect();
                    keys.sort();
                    out.push('{');
                    for (i, k) in keys.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&J::String((*k).clone()).to_string());
                        out.push(':');
                        canon(&m[*k], out);
                    }
                    out.push('}');
                }
                J::Array(a) => {
                    out.push('[');
                    for (i, x) in a.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        canon(x, out);
                    }
                    out.push(']');
                }
                other => out.push_str(&other.to_string()),
            }
        }
        let mut v = record.clone();
        if let serde_json::Value::Object(m) = &mut v {
            m.remove("digest");
        }
        let mut text = String::new();
        canon(&v, &mut text);
        format!("sha256:{:x}", Sha256::digest(text.as_bytes()))
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            (-1e9f64..1e9).prop_map(serde_json::Value::from),
            "(\\PC|[\"\\\\/\u{0}-\u{1f}\u{7f}\u{2028}])*".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                prop::collection::vec(("(digest|[a-z_\"\\\\]{0,6}|\\PC{0,3})", inner), 0..6)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn the_digest_is_the_one_first_written(v in json_value()) {
            proptest::prop_assert_eq!(digest_of(&v), digest_as_first_written(&v));
        }
    }

    #[test]
    fn a_sealed_record_digests_as_first_written() {
        let mut c = sample();
        c.notes = "tab\t, quote \", slash /, é, \u{7f}".into();
        c.seal();
        assert_eq!(c.digest, digest_as_first_written(&c.to_json()));
    }

    #[test]
    fn digest_survives_the_yaml_round_trip() {
        let mut c = sample();
        c.notes = "no\n1.10 \"quoted\"".into();
        c.seal();
        let yaml = crate::domain::yaml_emit::emit_key("checkpoint", &c.to_json(), "\n");
        let v: serde_yaml::Mapping = serde_yaml::from_str(&yaml).unwrap();
        let back = yaml_to_json(&v[&serde_yaml::Value::from("checkpoint")]);
        assert_eq!(digest_of(&back), c.digest);
    }

    #[test]
    fn archive_ids_prune() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive { dir: dir.path() };
        for n in 1..=5 {
            let mut c = sample();
            c.id = format_id(n);
            a.store(&c, None).unwrap();
        }
        assert!(
            a.store(&sample(), None).is_err(),
            "ids are never overwritten"
        );
        assert_eq!(a.max_number(), 5);
        let removed = a.prune(2, None, chrono::Utc::now());
        assert_eq!(removed, vec!["ckpt-0001", "ckpt-0002", "ckpt-0003"]);
        assert_eq!(a.ids(), vec!["ckpt-0004", "ckpt-0005"]);
        assert_eq!(a.load("ckpt-0005").unwrap().id, "ckpt-0005");
    }
}
