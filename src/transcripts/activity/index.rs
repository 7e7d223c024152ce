//! The session's index: what it did from its start, kept as it goes, so that nothing depends
//! on how much of the transcript's end a later read takes. Each hook event adds only what the
//! transcript gained since the last one (from the offset kept here); an automatic checkpoint
//! then takes the request, the follow-ups, every changed file, the files worked from and the
//! latest stated next step from here, and the last commands and the plan from the
//! transcript's tail when it has them (else from here too).

use serde::{Deserialize, Serialize};

use super::{Observed, PlanItem};

/// At most this many changed files are kept (the most recent).
pub const MAX_INDEX_FILES: usize = 1000;
/// At most this many read files are counted (the most recent).
pub const MAX_INDEX_READS: usize = 1000;
/// A read that leaves the file unchanged counts as worked from when it is read this often.
pub const READS_TO_WORK_FROM: u32 = 2;
/// The first read of a transcript the index has not seen takes at most this much of it (its
/// end); every later read takes what it gained.
pub const FIRST_READ: u64 = 16 * 1024 * 1024;

/// How many bytes before the offset tell an appended transcript from a rewritten one.
pub const MARK_BYTES: u64 = 32;

/// A file the session read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadFile {
    pub path: String,
    pub times: u32,
    /// An edit came right after a read of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_edit: bool,
}

/// Counts a read of `path` (moved to the end: the most recent last).
pub(crate) fn note_read(reads: &mut Vec<ReadFile>, path: &str, times: u32, before_edit: bool) {
    let mut entry = match reads.iter().position(|r| r.path == path) {
        Some(i) => reads.remove(i),
        None => ReadFile {
            path: path.to_string(),
            times: 0,
            before_edit: false,
        },
    };
    entry.times = entry.times.saturating_add(times);
    entry.before_edit |= before_edit;
    reads.push(entry);
    if reads.len() > MAX_INDEX_READS {
        reads.remove(0);
    }
}

/// How many of the window's reads are kept: enough that [`super::MAX_WINDOW_READS`] remain
/// once the files changed since are set aside.
pub const MAX_WINDOW_KEPT: usize = 4 * super::MAX_WINDOW_READS;

/// Notes a read of `path` in the current context window (the most recent last, at most
/// [`MAX_WINDOW_KEPT`]): only a file of the project (a path shown relative to it), never one
/// outside it (another repository, a temporary file, the user's home).
pub(crate) fn note_window_read(window: &mut Vec<String>, path: &str) {
    if !inside_project(path) {
        return;
    }
    window.retain(|p| p != path);
    window.push(path.to_string());
    let over = window.len().saturating_sub(MAX_WINDOW_KEPT);
    window.drain(..over);
}

/// Whether a path as the record shows it is the project's: relative, not above it.
pub(crate) fn inside_project(path: &str) -> bool {
    let p = path.replace('\\', "/");
    let b = p.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    !(p.is_empty()
        || p == "."
        || p.starts_with('/')
        || p.starts_with("~")
        || p.starts_with("../")
        || drive)
}

/// The project's files worked from without changing them: read [`READS_TO_WORK_FROM`] times or
/// more, or right before an edit, or among the last [`super::MAX_WINDOW_READS`] read in the
/// current context window even once (`window`, the most recent last: the files the agent had
/// in view when the record was taken). Never a file outside the project (another repository,
/// a scratch file in `/tmp`). Most recent first, at most [`super::MAX_WORKED_FROM`].
pub(crate) fn worked_from_in_window(
    reads: &[ReadFile],
    changed: &[String],
    window: &[String],
) -> Vec<String> {
    let window: Vec<&String> = window
        .iter()
        .rev()
        .filter(|p| !changed.contains(p))
        .take(super::MAX_WINDOW_READS)
        .collect();
    reads
        .iter()
        .rev()
        .filter(|r| r.times >= READS_TO_WORK_FROM || r.before_edit || window.contains(&&r.path))
        .filter(|r| !changed.contains(&r.path) && inside_project(&r.path))
        .map(|r| r.path.clone())
        .take(super::MAX_WORKED_FROM)
        .collect()
}

/// The index of one session, stored beside its record in `.ctxkeep/sessions/`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionIndex {
    /// The transcript read (redacted as the session's record keeps it) and where the next read
    /// starts.
    pub transcript: String,
    pub offset: u64,
    /// The bytes just before `offset` (hex, at most [`MARK_BYTES`]): a transcript rewritten
    /// rather than appended to no longer has them there, and is read afresh.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mark: String,
    /// The folder paths are shown relative to (the repository around the project), found
    /// when the index was started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The request that set the task (stored text: redacted and cut), and the follow-ups since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// When the request, the plan and the next step were said ([`Observed::request_at`] …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step_at: Option<String>,
    /// When the last compaction read came (its line's time): a step stated after it is newer
    /// than what its summary says remains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacted_at: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<String>,
    /// Every file changed, the oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// Every file read, the most recently read last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<ReadFile>,
    /// The agent's latest plan and stated next step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<PlanItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
    /// `next_step` is the plan's item in progress, not a step the agent stated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub next_step_from_plan: bool,
    /// The agent said what remains after the plan last changed (see
    /// [`Observed::next_step_newer_than_plan`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub next_step_newer_than_plan: bool,
    /// The agent's last words read so far asked the user an open question: the prompt the
    /// next part opens with may be the answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent_asked: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_file: Option<String>,
    /// The plan the agent last set out in plan mode, as its outline, while it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_plan_mode: Option<super::plan_mode::PlanModePlan>,
    /// The last [`super::MAX_COMMANDS`] shell commands, oldest first, as each read saw them (a
    /// call's outcome written after the read stays unknown here: the tail's copy has it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<super::CommandRun>,
    /// What remained by the agent's summary at its last compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_summary: Option<super::SummaryRemains>,
    /// Where the look for a restore's nonce echoed back stopped: the next look reads only
    /// what the transcript gained since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo: Option<EchoCursor>,
    /// The files of the read the transcript read so far ends with: an edit that opens the next
    /// part comes right after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_read: Vec<String>,
    /// The project's files read since the agent last compacted its context, the most recent
    /// last, at most [`super::MAX_WINDOW_READS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub window: Vec<String>,
    /// Compactions read in the transcript (its summary) since the index began, those of its
    /// first read aside (they came before ctxkeep followed the session).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compactions: u32,
    /// Compactions a restore answered: a session start after one, or the give-back at the
    /// event that noticed it in the transcript. Fewer than `compactions`: one no hook announced.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restored: u32,
    /// The compaction (by its number in `compactions`) given back at an event that noticed it
    /// in the transcript, no session start having come for it: a start that comes for it
    /// later is late, and gives nothing again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub noticed: u32,
    /// Compactions whose summary's remains were noted (by their number in `compactions`):
    /// one read in the transcript beyond it is the compaction a summary noted now belongs to.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub summarised: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How far the transcript was looked through for one nonce.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EchoCursor {
    pub nonce: String,
    pub offset: u64,
    /// The bytes before `offset`, as [`SessionIndex::mark`] keeps them.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mark: String,
}

impl SessionIndex {
    /// Adds what one read found, in transcript order after everything before it.
    pub fn add(&mut self, seen: &Observed, reads: &[ReadFile]) {
        if let Some(r) = &seen.request {
            if seen.task_found || self.request.is_none() {
                if seen.task_found {
                    self.follow_ups.clear();
                }
                self.request = Some(r.clone());
                self.request_at = seen.request_at.clone();
            }
        }
        for f in &seen.follow_ups {
            super::keep_follow_up(&mut self.follow_ups, f.clone());
        }
        // `seen.files` is the most recent first.
        for f in seen.files.iter().rev() {
            self.changed.retain(|c| c != f);
            self.changed.push(f.clone());
        }
        let over = self.changed.len().saturating_sub(MAX_INDEX_FILES);
        self.changed.drain(..over);
        // A read at the end of one part and the edit that opens the next: read before an edit.
        if seen.opens_with_edit {
            for r in self
                .reads
                .iter_mut()
                .filter(|r| self.last_read.contains(&r.path))
            {
                r.before_edit = true;
            }
        }
        for r in reads {
            note_read(&mut self.reads, &r.path, r.times, r.before_edit);
        }
        if seen.compacted {
            self.window.clear();
            self.compactions += 1;
            self.compacted_at = seen.compacted_at.clone();
        }
        for p in &seen.window_reads {
            note_window_read(&mut self.window, p);
        }
        if let Some(last) = &seen.ends_with_read {
            self.last_read = last.clone();
        } else if seen.opens_with_edit || !seen.commands.is_empty() || !seen.files.is_empty() {
            self.last_read.clear();
        }
        if !seen.plan.is_empty() {
            self.plan = seen.plan.clone();
            self.plan_at = seen.plan_at.clone();
        }
        let from_plan = seen.plan.iter().any(|p| {
            p.status == super::PlanStatus::InProgress && seen.next_step.as_ref() == Some(&p.text)
        });
        if let Some(asked) = seen.agent_asked {
            self.agent_asked = asked;
        }
        let stated = seen.next_step.is_some() && !from_plan;
        if seen.outdates_before || stated {
            // What the agent's summary left pending is older than a new task or a step the
            // agent stated since.
            self.from_summary = None;
        }
        if seen.outdates_before || seen.next_step.is_some() {
            // The newest word wins: a new task or a word from the user that sets work makes
            // what was said or planned before it out of date, even when nothing has been said
            // since (a question that asks for no work does not).
            self.next_step = seen.next_step.clone();
            self.next_step_at = seen.next_step_at.clone();
            self.next_step_from_plan = from_plan;
        } else if !seen.plan.is_empty() && self.next_step_from_plan {
            // The plan was written again with no item in progress: its older item is done.
            self.next_step = None;
            self.next_step_at = None;
            self.next_step_from_plan = false;
        }
        // The plan's open items are out of date once the agent has said what remains after the
        // plan last changed, and stay so until the plan changes again.
        if !seen.plan.is_empty() || seen.plan_changed {
            self.next_step_newer_than_plan = seen.next_step_newer_than_plan;
        } else if stated && seen.next_step_newer_than_plan && !self.plan.is_empty() {
            self.next_step_newer_than_plan = true;
        }
        // Done work is never the next step.
        if self
            .next_step
            .as_deref()
            .is_some_and(|s| super::completed_in(&self.plan, s))
        {
            self.next_step = None;
            self.next_step_at = None;
        }
        if seen.plan_file.is_some() {
            self.plan_file = seen.plan_file.clone();
        }
        // The newest plan-mode plan holds until a new task, or a task list written after it
        // with every item completed (this part's reading has already judged its own plan).
        let list_done = !seen.plan.is_empty()
            && seen
                .plan
                .iter()
                .all(|p| p.status == super::PlanStatus::Completed);
        if seen.from_plan_mode.is_some() {
            self.from_plan_mode = seen.from_plan_mode.clone();
        } else if seen.task_found || list_done {
            self.from_plan_mode = None;
        }
        if !seen.commands.is_empty() {
            let mut commands = std::mem::take(&mut self.commands);
            commands.extend(seen.commands.iter().cloned());
            let commands = super::collapse_repeats(commands);
            let skip = commands.len().saturating_sub(super::MAX_COMMANDS);
            self.commands = commands.into_iter().skip(skip).collect();
        }
    }

    /// Whether the transcript shows a compaction that no session start answered (a server-side
    /// compaction, a host that deferred or skipped its post-compaction hook).
    pub fn compaction_unannounced(&self) -> bool {
        self.compactions > self.restored
    }

    /// The compactions the transcript shows are given back now, at an event no start came
    /// before.
    pub fn compaction_noticed(&mut self) {
        self.restored = self.compactions;
        self.noticed = self.compactions;
    }

    /// Whether the summary noted now belongs to the last compaction read in the transcript
    /// (`compacted_at` is its time), counting it noted; else its lines are not written yet.
    pub fn summary_noted(&mut self) -> bool {
        let read = self.compactions > self.summarised;
        self.summarised = if read {
            self.compactions
        } else {
            self.summarised.max(self.compactions) + 1
        };
        read
    }

    /// A session start after a compaction: false when it is late, for a compaction already
    /// given back at the event that noticed it (it gives nothing again); else the compaction
    /// it answers is counted restored, read in the transcript yet or not (Claude Code writes
    /// the summary after the start).
    pub fn restore_started(&mut self) -> bool {
        if self.noticed > 0 && self.noticed == self.compactions {
            self.noticed = 0;
            return false;
        }
        self.restored = (self.restored + 1).max(self.compactions);
        true
    }

    /// The observation `tail` (a read of the transcript's end) completed from the index: the
    /// request and follow-ups, every changed file, the files worked from, the plan and next
    /// step when the tail has none newer.
    pub fn complete(&self, tail: &mut Observed) {
        if self.request.is_some() {
            tail.request = self.request.clone();
            tail.request_at = self.request_at.clone();
            tail.task_found = true;
        }
        if self.request.is_some() || !self.follow_ups.is_empty() {
            tail.follow_ups = self.follow_ups.clone();
        }
        let mut files: Vec<String> = tail.files.clone();
        for f in self.changed.iter().rev() {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
        tail.more_files = files.len().saturating_sub(super::MAX_FILES) as u64;
        files.truncate(super::MAX_FILES);
        tail.files = files;
        tail.worked_from = worked_from_in_window(&self.reads, &self.changed, &self.window);
        if tail.plan.is_empty() {
            tail.plan = self.plan.clone();
            tail.plan_at = self.plan_at.clone();
        }
        // A tail with no command in it (a long stretch of edits): the last ones the index saw.
        if tail.commands.is_empty() {
            tail.commands = self.commands.clone();
        }
        // The index read everything the tail did, in order: its next step is the newest,
        // unless the tail's was said later (the transcript grew between the two reads).
        let tail_newer =
            super::line_time::later(tail.next_step_at.as_deref(), self.next_step_at.as_deref());
        if self.next_step.is_some() && !tail_newer {
            tail.next_step = self.next_step.clone();
            tail.next_step_at = self.next_step_at.clone();
        }
        if !self.plan.is_empty() {
            tail.next_step_newer_than_plan = self.next_step_newer_than_plan;
        } else if tail.plan.is_empty() {
            tail.next_step_newer_than_plan = false;
        }
        if self.from_summary.is_some() {
            tail.from_summary = self.from_summary.clone();
        }
        if tail.plan_file.is_none() {
            tail.plan_file = self.plan_file.clone();
        }
        // The index read everything in order: whether the plan still holds is its answer.
        tail.from_plan_mode = self.from_plan_mode.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_keeps_when_each_fact_was_said_and_the_later_step_wins() {
        let mut index = SessionIndex::default();
        let part = Observed {
            request: Some("Port the reader".into()),
            request_at: Some("2026-11-28T10:00:00Z".into()),
            task_found: true,
            next_step: Some("Move the lexer".into()),
            next_step_at: Some("2026-11-28T10:05:00Z".into()),
            ..Observed::default()
        };
        index.add(&part, &[]);
        // A tail read after the index caught up, with a step said later: the tail's holds.
        let mut tail = Observed {
            next_step: Some("Commit the port".into()),
            next_step_at: Some("2026-11-28T10:09:00Z".into()),
            ..Observed::default()
        };
        index.complete(&mut tail);
        assert_eq!(tail.request_at.as_deref(), Some("2026-11-28T10:00:00Z"));
        assert_eq!(tail.next_step.as_deref(), Some("Commit the port"));
        assert_eq!(tail.next_step_at.as_deref(), Some("2026-11-28T10:09:00Z"));
        // An older one (or one without a time) gives way to the index's, with its time.
        for at in [Some("2026-11-28T10:01:00Z"), None] {
            let mut tail = Observed {
                next_step: Some("Read the reader".into()),
                next_step_at: at.map(str::to_string),
                ..Observed::default()
            };
            index.complete(&mut tail);
            assert_eq!(tail.next_step.as_deref(), Some("Move the lexer"));
            assert_eq!(tail.next_step_at.as_deref(), Some("2026-11-28T10:05:00Z"));
        }
    }

    #[test]
    fn a_summary_noted_belongs_to_the_compaction_read_only_once() {
        let mut index = SessionIndex::default();
        // Noted before its lines are read (Claude Code writes them after the hook).
        assert!(!index.summary_noted());
        let compacted = Observed {
            compacted: true,
            ..Observed::default()
        };
        index.add(&compacted, &[]);
        // The next compaction, read before its summary is noted.
        index.add(&compacted, &[]);
        assert!(index.summary_noted());
        assert!(!index.summary_noted());
    }

    #[test]
    fn a_plan_stays_older_than_a_later_stated_step_until_it_changes_again() {
        use super::super::{PlanItem, PlanStatus};
        let item = |t: &str, status| PlanItem {
            text: t.into(),
            status,
        };
        let mut index = SessionIndex::default();
        let planned = Observed {
            plan: vec![item("Wire the lexer", PlanStatus::InProgress)],
            next_step: Some("Wire the lexer".into()),
            ..Observed::default()
        };
        index.add(&planned, &[]);
        assert!(!index.next_step_newer_than_plan);
        let stated = Observed {
            next_step: Some("Remaining steps: rerun the tests; commit".into()),
            next_step_newer_than_plan: true,
            ..Observed::default()
        };
        index.add(&stated, &[]);
        assert!(index.next_step_newer_than_plan);
        let new_task = Observed {
            request: Some("Port the reader".into()),
            task_found: true,
            outdates_before: true,
            ..Observed::default()
        };
        index.add(&new_task, &[]);
        assert!(index.next_step_newer_than_plan, "until the plan changes");
        let mut tail = Observed::default();
        index.complete(&mut tail);
        assert_eq!(tail.open_items().count(), 0);
        let replanned = Observed {
            plan: vec![item("Port the reader", PlanStatus::InProgress)],
            next_step: Some("Port the reader".into()),
            ..Observed::default()
        };
        index.add(&replanned, &[]);
        assert!(!index.next_step_newer_than_plan);
        // A step the plan has completed is never next.
        let done = Observed {
            plan: vec![item("Port the reader", PlanStatus::Completed)],
            ..Observed::default()
        };
        index.add(&stated, &[]);
        index.next_step = Some("Port the reader".into());
        index.add(&done, &[]);
        assert_eq!(index.next_step, None);
    }

    #[test]
    fn a_compaction_no_start_answered_is_noticed_once_and_a_late_start_gives_nothing() {
        let compacted = Observed {
            compacted: true,
            ..Observed::default()
        };
        let mut index = SessionIndex::default();
        // Claude Code's order: the start comes before the summary is written.
        assert!(index.restore_started());
        index.add(&compacted, &[]);
        assert!(!index.compaction_unannounced());
        // No start for the next one: the event that reads it notices it, once.
        index.add(&compacted, &[]);
        assert!(index.compaction_unannounced());
        index.compaction_noticed();
        assert!(!index.compaction_unannounced());
        // The host's start comes late: nothing again; the next compaction's start is not late.
        assert!(!index.restore_started());
        assert!(index.restore_started());
        index.add(&compacted, &[]);
        assert!(!index.compaction_unannounced());
    }

    #[test]
    fn only_the_projects_files_are_in_the_window_posix_and_windows_alike() {
        let mut window = Vec::new();
        for p in [
            "src/lib.rs",
            "website/docs/a.md",
            "/tmp/transcript.jsonl",
            "D:/other/repo/a.md",
            "~/.claude/plans/x.md",
            "../sibling/b.rs",
            "src/lib.rs",
        ] {
            note_window_read(&mut window, p);
        }
        assert_eq!(window, ["website/docs/a.md", "src/lib.rs"]);
    }
}
