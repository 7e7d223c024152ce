//! The record of what a session did ([`Observed`]) and its parts, with the limits that bound it.

use serde::{Deserialize, Serialize};

use super::{beads, left_open, loops, plan_mode, LoopHit, LoopLimits};

/// At most this many changed files are listed (most recent first); the rest are counted.
pub const MAX_FILES: usize = 60;
/// At most this many files worked from are listed (most recent first).
pub const MAX_WORKED_FROM: usize = 30;
/// The files read last in the current context window (since the last compaction) that count
/// as worked from even when read once: at most this many, the most recent that the session
/// has not changed.
pub const MAX_WINDOW_READS: usize = 15;
/// At most this many follow-ups are kept (the last ones).
pub const MAX_FOLLOW_UPS: usize = 4;
/// A follow-up is cut to this many characters.
pub const MAX_FOLLOW_UP_CHARS: usize = 300;
/// At most this many commands are kept (the last ones, oldest first).
pub const MAX_COMMANDS: usize = 5;
/// The request is cut to this many characters (the cut marker included).
pub const MAX_REQUEST_CHARS: usize = 500;
/// A command's text is cut to this many characters in `commands` (heredoc patches are long).
pub const MAX_COMMAND_CHARS: usize = 200;

/// What the session did, as read from its transcript.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    /// The user's last request that states the task (redacted, at most [`MAX_REQUEST_CHARS`]
    /// characters): not a nudge such as "continue", see
    /// [`text::Weight::Nudge`](super::text::Weight::Nudge).
    pub request: Option<String>,
    /// When the user said the request: its transcript line's time (RFC 3339, seconds, UTC),
    /// as every `*_at` of the record; absent when the transcript gives its lines no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_at: Option<String>,
    /// The user's later prompts that answer or adjust the request ("go ahead with phase 1",
    /// "yes, but keep the old flag"), oldest first, at most [`MAX_FOLLOW_UPS`], each redacted
    /// and cut to [`MAX_FOLLOW_UP_CHARS`]; see [`text::Weight::Remark`](super::text::Weight::Remark).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<String>,
    /// The agent's current task list.
    pub plan: Vec<PlanItem>,
    /// When the plan last changed (a list written, a task created or updated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_at: Option<String>,
    /// The next step the agent stated in its last replies since the request ("Next: …",
    /// "Remaining steps: 1. … 2. …"), else the plan item in progress (redacted, at most
    /// [`text::MAX_NEXT_STEP_CHARS`](super::text::MAX_NEXT_STEP_CHARS)); never an item the plan has completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
    /// When the next step was said: the reply that states it, the plan change that set the
    /// item in progress, or the compaction whose summary gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step_at: Option<String>,
    /// The agent has said what remains (a stated next step, its compaction summary) since the
    /// plan last changed: the plan's open items are out of date (not shown as what remains)
    /// until the plan changes again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub next_step_newer_than_plan: bool,
    /// Files the agent changed, most recent first, unique, at most [`MAX_FILES`]; relative to
    /// the repository when inside it.
    pub files: Vec<String>,
    /// How many more files it changed than `files` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_files: u64,
    /// Files the session worked from without changing them: read again and again, or read
    /// just before an edit; most recent first, at most [`MAX_WORKED_FROM`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worked_from: Vec<String>,
    /// What remained by the agent's own summary at its last compaction (pending tasks, current
    /// work, next step), as it wrote it: recorded text, not ctxkeep's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_summary: Option<SummaryRemains>,
    /// The plan file the agent wrote in its plan mode (a path the reader can open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_file: Option<String>,
    /// The plan the agent set out in plan mode, as its outline (`ExitPlanMode`'s `plan`): kept
    /// until a new task, a newer plan of that kind, or a task list written after it with every
    /// item completed; never the next step (a plan item or a step stated since is newer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_plan_mode: Option<plan_mode::PlanModePlan>,
    /// The project's task tracker (beads, read from `.beads/`): the issues in progress, then
    /// those ready.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tracker: Vec<beads::TrackerIssue>,
    /// What the session left open without saying so: checks whose last run failed with no
    /// passing run since, and commands the reply that ended the agent's turn gave the user to
    /// run (see [`left_open`]); read from the same window as `commands`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_open: Option<left_open::LeftOpen>,
    /// The last [`MAX_COMMANDS`] shell commands, oldest first.
    pub commands: Vec<CommandRun>,
    /// `claude-code`, `codex` or `gemini`.
    pub agent: String,
    /// The agent's session id, when the transcript (or its name) says.
    pub session: Option<String>,
    /// When the transcript was read (RFC 3339, seconds).
    pub read_at: String,
    /// Every tool call read, in order, for loop detection ([`loops_found`]); not serialized (a
    /// stored observation has none).
    #[serde(skip)]
    pub steps: Vec<loops::Step>,
    /// Set when a later automatic checkpoint kept this block because its own session did no
    /// work: the checkpoint that first recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_from: Option<String>,
    /// Whether `request` states the task (not only a bare slash command); not serialized.
    #[serde(skip)]
    pub(crate) task_found: bool,
    /// For the index, which reads a transcript a part at a time: whether this part's first
    /// call changed a file (an edit right after the read the part before ended with), and the
    /// files of the read it ends with (no call after it yet). Not serialized.
    #[serde(skip)]
    pub(crate) opens_with_edit: bool,
    #[serde(skip)]
    pub(crate) ends_with_read: Option<Vec<String>>,
    /// For the index: the project's files read since the context was last compacted in this
    /// part (or since its start), the most recent last, and whether a compaction came in this
    /// part (what was read before it is out of the window). Not serialized.
    #[serde(skip)]
    pub(crate) window_reads: Vec<String>,
    #[serde(skip)]
    pub(crate) compacted: bool,
    /// For the index: when the last compaction read in this part came. Not serialized.
    #[serde(skip)]
    pub(crate) compacted_at: Option<String>,
    /// For the index: whether the agent's last words in this part asked the user an open
    /// question (None when the part holds no reply or prompt). Not serialized.
    #[serde(skip)]
    pub(crate) agent_asked: Option<bool>,
    /// For the index: whether a prompt in this part made what was said or planned before it
    /// out of date (see [`Recorder::request`](super::Recorder::request)). Not serialized.
    #[serde(skip)]
    pub(crate) outdates_before: bool,
    /// For the index: the plan changed in this part (a list written, a task created or
    /// updated, even one created in an earlier part). Not serialized.
    #[serde(skip)]
    pub(crate) plan_changed: bool,
}

/// What remained by the agent's own compaction summary (read by `compaction_summary::remains`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryRemains {
    /// When the summary was read (RFC 3339, seconds).
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_work: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Observed {
    /// Nothing seen: no request, plan, file or command.
    pub fn is_empty(&self) -> bool {
        self.request.is_none() && !self.did_work()
    }

    /// Whether the session did any work: a plan, a changed file or a command.
    pub fn did_work(&self) -> bool {
        !(self.plan.is_empty() && self.files.is_empty() && self.commands.is_empty())
    }

    /// The plan items still to do (pending and in progress), in the plan's order; none when
    /// the agent has stated what remains since the plan last changed (its newer word wins).
    pub fn open_items(&self) -> impl Iterator<Item = &PlanItem> {
        let current = !self.next_step_newer_than_plan;
        self.plan
            .iter()
            .filter(move |p| current && p.status != PlanStatus::Completed)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanItem {
    pub text: String,
    pub status: PlanStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

impl PlanStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Completed => "completed",
        }
    }

    /// An agent's status word; None for an item that left the list (cancelled, deleted).
    pub(crate) fn parse(s: &str) -> Option<PlanStatus> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "completed" | "complete" | "done" => Some(PlanStatus::Completed),
            "in_progress" | "active" | "running" => Some(PlanStatus::InProgress),
            "cancelled" | "canceled" | "deleted" | "removed" => None,
            _ => Some(PlanStatus::Pending),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRun {
    /// The command as run (redacted, cut to [`MAX_COMMAND_CHARS`]).
    pub command: String,
    /// Whether it succeeded; None when the transcript does not say (yet).
    pub ok: Option<bool>,
    pub exit_code: Option<i64>,
    /// How many runs in a row this entry stands for: the same command with the same outcome
    /// (absent for one).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub times: u32,
    /// When it (the last of `times`) was run: its call's transcript line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The loops in an observation made by [`observe`](super::observe) (see [`loops`]), in the order
/// they complete. A deserialized observation has no calls and gives none.
pub fn loops_found(observed: &Observed, limits: &LoopLimits) -> Vec<LoopHit> {
    loops::loops_in(&observed.steps, limits)
}
