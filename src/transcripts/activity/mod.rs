//! What an agent session did, read from its transcript: the user's last request, the
//! agent's task list, the next step it stated, the files it changed and the last shell commands
//! with their outcome, plus the counts gutter detection needs.
//!
//! At most the last [`TAIL_BYTES`] of the transcript are read (through [`crate::transcripts::usage::tail`]):
//! first the last [`FIRST_WINDOW`], further back only while no request is found (a nudge such as
//! "continue" is not one, see [`text::weight`]), so the cost
//! stays flat however long the session runs. Lines are cheaply pre-filtered as text
//! before any JSON parsing: most of a transcript is tool output and model text that cannot
//! change the answer. Main session only: sidechains, subagent transcripts and `progress` lines
//! are ignored.

pub mod attached;
pub mod beads;
pub mod delegated;
pub mod error_sites;
pub mod event_read;
pub mod failure;
pub mod index;
pub mod left_open;
pub mod loops;
pub mod monitor;
pub mod plan_mode;
pub mod shell;
pub(crate) mod text;

pub use loops::{GutterHit, GutterLimits};

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::system::error::Error;
use crate::transcripts::usage::open_transcript;
use crate::transcripts::usage::tail::{TailLine, TailReader};

/// How much of the transcript's end is read.
pub const TAIL_BYTES: u64 = 8 * 1024 * 1024;
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
    /// characters): not a nudge such as "continue", see [`text::weight`].
    pub request: Option<String>,
    /// The user's later prompts that answer or adjust the request ("go ahead with phase 1",
    /// "yes, but keep the old flag"), oldest first, at most [`MAX_FOLLOW_UPS`], each redacted
    /// and cut to [`MAX_FOLLOW_UP_CHARS`]; see [`text::Weight::Remark`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<String>,
    /// The agent's current task list.
    pub plan: Vec<PlanItem>,
    /// The next step the agent stated in its last replies since the request ("Next: …",
    /// "Remaining steps: 1. … 2. …"), else the plan item in progress (redacted, at most
    /// [`text::MAX_NEXT_STEP_CHARS`]); never an item the plan has completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
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
    /// Every tool call read, in order, for loop detection ([`gutter`]); not serialized (a
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
    /// For the index: whether the agent's last words in this part asked the user an open
    /// question (None when the part holds no reply or prompt). Not serialized.
    #[serde(skip)]
    pub(crate) agent_asked: Option<bool>,
    /// For the index: whether a prompt in this part made what was said or planned before it
    /// out of date (see [`Recorder::request`]). Not serialized.
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
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The loops in an observation made by [`observe`] (see [`loops`]), in the order they
/// complete. A deserialized observation has no calls and gives none.
pub fn gutter(observed: &Observed, limits: &GutterLimits) -> Vec<GutterHit> {
    loops::loops_in(&observed.steps, limits)
}

/// One agent's transcript reader: what it finds goes into the [`Recorder`].
pub struct Reader<'a> {
    /// The agent's id, recorded as [`Observed::agent`].
    pub agent: &'a str,
    #[allow(clippy::type_complexity)]
    pub read: Box<dyn Fn(&Path, File, u64, &mut Recorder) -> anyhow::Result<()> + 'a>,
}

/// Reads what the session did from the transcript at `path` with `reader`: its last
/// [`TAIL_BYTES`] only. `repo_root` makes paths inside it relative; `now` is recorded as
/// `read_at`. A missing file or non-file is a `NoInput` error (naming the file); a transcript
/// with nothing to observe gives an empty observation.
pub fn observe(
    path: &Path,
    reader: &Reader,
    repo_root: Option<&Path>,
    now: DateTime<Utc>,
) -> anyhow::Result<Observed> {
    // Most sessions show their last request near the end: start small and
    // look further back (up to TAIL_BYTES) only while it is not found, so
    // the usual cost does not grow with the window.
    let mut window = FIRST_WINDOW;
    loop {
        let seen = observe_within(path, reader, repo_root, now, window)?;
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if seen.task_found || window >= TAIL_BYTES || window >= len {
            return Ok(seen);
        }
        window = (window * 4).min(TAIL_BYTES);
    }
}

/// The first window [`observe`] reads.
pub const FIRST_WINDOW: u64 = 1024 * 1024;

/// [`observe`] over only the last `window` bytes: cheaper on every turn
/// (the gutter check), at the price of not seeing what came before.
pub fn observe_within(
    path: &Path,
    reader: &Reader,
    repo_root: Option<&Path>,
    now: DateTime<Utc>,
    window: u64,
) -> anyhow::Result<Observed> {
    let (file, len) = open_transcript(path)?;
    let root = Root::new(repo_root);
    let mut rec = Recorder::new(root);
    rec.window = window.min(TAIL_BYTES);
    (reader.read)(path, file, len, &mut rec)?;
    Ok(rec.finish(reader.agent, now))
}

/// Where the last complete line in `from..len` ends (`from` when there is none).
fn last_line_end<R: Read + Seek>(
    path: &Path,
    file: &mut R,
    from: u64,
    len: u64,
) -> anyhow::Result<u64> {
    let io_err = |e| Error::io(path, "cannot read transcript", e);
    let mut end = len;
    // Transcripts end with a newline but while a line is written: a small read first.
    let mut buf = vec![0u8; 4 * 1024];
    while end > from {
        let start = end.saturating_sub(buf.len() as u64).max(from);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start)).map_err(io_err)?;
        file.read_exact(&mut buf[..n]).map_err(io_err)?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
        if buf.len() < 256 * 1024 {
            buf.resize(buf.len() * 4, 0);
        }
    }
    Ok(from)
}

/// A tool result's text: a string, or the `text` of its parts joined by lines.
pub(crate) fn parts_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A whole task list (`TodoWrite`, `update_plan`, `write_todos`): each item's
/// text under the first of `text_keys` it has, and its `status`.
pub(crate) fn plan_items(
    list: &[serde_json::Value],
    text_keys: &[&str],
) -> Vec<(String, Option<PlanStatus>)> {
    use serde_json::Value;
    list.iter()
        .filter_map(|t| {
            let text = text_keys.iter().find_map(|k| t.get(*k))?.as_str()?;
            let status = t.get("status").and_then(Value::as_str).unwrap_or("");
            Some((text.to_string(), PlanStatus::parse(status)))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Reading the window

/// `inner` seen from `base` on: offset 0 here is `base` there, so a [`TailReader`] over it never
/// reads before `base`.
struct Window<R> {
    inner: R,
    base: u64,
}

impl<R: Read> Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<R: Seek> Seek for Window<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let SeekFrom::Start(n) = pos else {
            return Err(std::io::Error::other("only absolute seeks in a window"));
        };
        Ok(self.inner.seek(SeekFrom::Start(self.base + n))? - self.base)
    }
}

/// The complete lines of the last [`TAIL_BYTES`] of `src` (first `len` bytes), in file order.
/// A line cut by the window's start and a torn last line are left out.
pub(crate) fn window_lines<R: Read + Seek>(
    path: &Path,
    mut src: R,
    len: u64,
    window: u64,
) -> anyhow::Result<Vec<Vec<u8>>> {
    let io_err = |e| Error::io(path, "cannot read transcript", e);
    let base = len.saturating_sub(window);
    // The window's first line is whole only when the byte before it ends a line.
    let first_whole = if base == 0 {
        true
    } else {
        let mut b = [0u8; 1];
        src.seek(SeekFrom::Start(base - 1)).map_err(io_err)?;
        src.read_exact(&mut b).map_err(io_err)?;
        b[0] == b'\n'
    };
    let mut reader = TailReader::new(Window { inner: src, base }, len - base).map_err(io_err)?;
    let mut lines = Vec::new();
    while let Some(line) = reader.next_line().map_err(io_err)? {
        if let TailLine::Line { offset, bytes } = line {
            if offset == 0 && !first_whole {
                break;
            }
            lines.push(bytes);
        }
    }
    lines.reverse();
    Ok(lines)
}

/// The first line of the file as a JSON object, when it is complete within 64 KiB (where
/// Codex and Gemini keep their session's metadata).
pub(crate) fn first_line_object(
    src: &mut File,
    len: u64,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let mut head = Vec::new();
    src.seek(SeekFrom::Start(0)).ok()?;
    src.take(len.min(64 * 1024)).read_to_end(&mut head).ok()?;
    let end = head.iter().position(|&b| b == b'\n')?;
    match serde_json::from_slice(&head[..end]) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Paths

/// The repository root, as given and as resolved (a temp dir may sit behind a symlink).
pub(crate) struct Root {
    given: Option<PathBuf>,
    canonical: Option<PathBuf>,
}

impl Root {
    pub(crate) fn new(root: Option<&Path>) -> Root {
        let given = root.map(normalize);
        let canonical = root
            .and_then(|r| std::fs::canonicalize(r).ok())
            .filter(|c| Some(c) != given.as_ref());
        Root { given, canonical }
    }

    /// `raw` as shown: relative to the root when inside it, else absolute when it can be made
    /// so (from `cwd`), else as written.
    pub(crate) fn display(&self, raw: &str, cwd: Option<&str>) -> Option<String> {
        let raw = raw.trim();
        if raw.is_empty() {
            return None;
        }
        if is_windows_absolute(raw) || cwd.is_some_and(is_windows_absolute) {
            let roots: Vec<String> = [&self.given, &self.canonical]
                .into_iter()
                .flatten()
                .map(|r| r.to_string_lossy().into_owned())
                .collect();
            return Some(windows_display(raw, cwd, &roots));
        }
        let p = Path::new(raw);
        let abs = if p.is_absolute() {
            normalize(p)
        } else if let Some(cwd) = cwd.filter(|c| Path::new(c).is_absolute()) {
            normalize(&Path::new(cwd).join(p))
        } else {
            let n = normalize(p);
            return Some(if n.as_os_str().is_empty() {
                ".".into()
            } else {
                n.to_string_lossy().into_owned()
            });
        };
        for root in [&self.given, &self.canonical].into_iter().flatten() {
            if let Ok(rel) = abs.strip_prefix(root) {
                if rel.as_os_str().is_empty() {
                    return Some(".".into());
                }
                return Some(rel.to_string_lossy().into_owned());
            }
        }
        // The session ran in a folder that is not this project's (the project moved, or its
        // transcript came from another machine): paths under that folder are the project's.
        if let Some(cwd) = cwd.map(|c| normalize(Path::new(c))) {
            let project_inside = [&self.given, &self.canonical]
                .into_iter()
                .flatten()
                .any(|r| r.starts_with(&cwd));
            if !project_inside {
                if let Ok(rel) = abs.strip_prefix(&cwd) {
                    if !rel.as_os_str().is_empty() {
                        return Some(rel.to_string_lossy().into_owned());
                    }
                }
            }
        }
        Some(abs.to_string_lossy().into_owned())
    }
}

/// `C:\x`, `C:/x` or `\\server\share`: a Windows path, whatever system reads it.
fn is_windows_absolute(p: &str) -> bool {
    let b = p.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/'))
        || p.starts_with("\\\\")
}

/// A path from a Windows session, with `/` for backslashes: relative to the project's root,
/// else to the session's folder, when inside it (compared without case, as Windows does),
/// else absolute as written.
fn windows_display(raw: &str, cwd: Option<&str>, roots: &[String]) -> String {
    let slashes = |s: &str| s.replace('\\', "/").trim_end_matches('/').to_string();
    let path = slashes(raw);
    let path = if is_windows_absolute(raw) {
        path
    } else {
        match cwd {
            Some(c) => format!("{}/{}", slashes(c), path.trim_start_matches("./")),
            None => return path,
        }
    };
    let bases = roots
        .iter()
        .map(String::as_str)
        .chain(cwd)
        .filter(|c| is_windows_absolute(c))
        .map(slashes);
    for base in bases {
        let prefix = format!("{}/", base.to_lowercase());
        if path.to_lowercase().starts_with(&prefix) {
            return path[prefix.len()..].to_string();
        }
    }
    path
}

/// Removes `.` and resolves `..` without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Recording, in transcript order

enum Event {
    Files(Vec<String>),
    Command(String),
    /// Files a shell command names as changed (`sed -i`, `mv`, `>`): in the record, not in
    /// loop detection (its content is not known).
    ShellFiles(Vec<String>),
    /// Files read (never waiting for an outcome: their results are not parsed).
    Read(Vec<String>),
}

struct Slot {
    event: Event,
    /// The agent's id for the call.
    id: Option<String>,
    /// Its outcome has been read (or it needs none: a change reported without a call).
    done: bool,
    ok: Option<bool>,
    exit_code: Option<i64>,
    /// A command's output (bounded), for telling one failure from another.
    output: String,
}

/// The agent's latest replies kept to look for its stated next step.
const MAX_REPLIES: usize = 8;

/// A plan item with the agent's id for it (Claude Code's task ids).
struct Task {
    id: Option<String>,
    text: String,
    status: PlanStatus,
}

/// Collects what the per-agent readers find, in transcript order; outcomes arrive later than
/// the calls and are matched by the call's id.
pub struct Recorder {
    pub(crate) root: Root,
    /// The last request that states the task, and the last bare slash command.
    request: Option<String>,
    bare_command: Option<String>,
    /// Remarks since the request, oldest first (see [`text::Weight::Remark`]).
    follow_ups: Vec<String>,
    /// The plan file the agent last wrote in plan mode.
    plan_file: Option<String>,
    /// The plan it last set out in plan mode (its raw text and when), with the call whose
    /// result says whether the user accepted it, and where it came in `seq`.
    plan_mode: Option<(String, Option<String>)>,
    plan_mode_call: Option<String>,
    plan_mode_seq: usize,
    /// The working folder of the line being read, when the agent records it.
    pub(crate) cwd: Option<String>,
    /// Where the plan last changed and the stated replies were said, in events read: the newer
    /// one gives the next step.
    plan_seq: usize,
    reply_seqs: Vec<usize>,
    seq: usize,
    /// The agent's replies since the last request, the newest last (at most [`MAX_REPLIES`]).
    replies: Vec<String>,
    /// For each reply, whether a call came after it: words said on the way to a call narrate
    /// the step in hand; the words a turn ends with say what comes next.
    mid_turn: Vec<bool>,
    plan: Vec<Task>,
    events: Vec<Slot>,
    /// Call id → its entries in `events` (a patch run through the shell is a command and a
    /// file change).
    calls: HashMap<String, Vec<usize>>,
    /// Claude Code `TaskCreate` call id → index in `plan`, until its result names the task.
    task_creates: HashMap<String, usize>,
    pub(crate) session: Option<String>,
    /// The file belongs to a subagent: nothing in it is the main session's.
    pub(crate) not_main: bool,
    /// The commands the agent's replies gave the user to run.
    handover: left_open::Handover,
    /// Where in `events` the last request that states the task came: a check that failed
    /// before it belongs to earlier work.
    task_at: usize,
    /// How much of the transcript's end is read.
    pub(crate) window: u64,
    /// Where in `events` the current context window starts (after the last compaction read),
    /// and whether one was read.
    window_start: usize,
    compacted: bool,
    /// The agent's last reply asked the user an open question (see
    /// [`text::asks_open_question`]): the prompt after it may be the answer. Set by an
    /// earlier part's reading when this one starts with the prompt.
    pub(crate) agent_asked: bool,
    /// A reply or a prompt was read (the part says whether the agent's last words asked).
    saw_turn: bool,
    /// A prompt read here made what the agent said or planned before it out of date (a new
    /// task, a bare command, a follow-up that sets work; not a question that asks for none).
    outdates_before: bool,
    /// Checks a message a tool injected reported since the task was set (see [`monitor`]).
    reported: Vec<monitor::Verdict>,
}

impl Recorder {
    fn new(root: Root) -> Recorder {
        Recorder {
            root,
            request: None,
            bare_command: None,
            follow_ups: Vec::new(),
            plan_file: None,
            plan_mode: None,
            plan_mode_call: None,
            plan_mode_seq: 0,
            cwd: None,
            plan_seq: 0,
            reply_seqs: Vec::new(),
            seq: 0,
            replies: Vec::new(),
            mid_turn: Vec::new(),
            plan: Vec::new(),
            events: Vec::new(),
            calls: HashMap::new(),
            task_creates: HashMap::new(),
            session: None,
            not_main: false,
            handover: left_open::Handover::default(),
            task_at: 0,
            window: TAIL_BYTES,
            window_start: 0,
            compacted: false,
            agent_asked: false,
            saw_turn: false,
            outdates_before: false,
            reported: Vec::new(),
        }
    }

    /// The agent compacted its context here: what was read before is no longer in view.
    pub(crate) fn context_compacted(&mut self) {
        self.window_start = self.events.len();
        self.compacted = true;
    }

    /// Whether a call with this id is waiting for its outcome (the pre-filter's question).
    pub(crate) fn is_pending(&self, call_id: &str) -> bool {
        self.calls.contains_key(call_id)
            || self.task_creates.contains_key(call_id)
            || self.plan_mode_call.as_deref() == Some(call_id)
    }

    /// What the user said, in transcript order: a task replaces the request, a bare slash
    /// command is kept in case no task is found, a nudge changes nothing. A new request makes
    /// the agent's earlier replies out of date.
    pub(crate) fn request(&mut self, text: String) {
        let weight = text::weight_after(&text, self.agent_asked);
        if weight == text::Weight::Injected {
            // A tool's message: neither the user's words nor an answer to the agent.
            return;
        }
        self.handover.prompt(self.events.len());
        // The agent's question stands until its next reply: a prompt sent again after an
        // interruption answers it too.
        self.saw_turn = true;
        // A question that asks for no work ("why do we see dupes here?") leans on the work
        // under way: what the agent said remains still stands after it.
        let sets_work = !text::asks_no_work(&text);
        match weight {
            text::Weight::Task => {
                self.task_at = self.events.len();
                // A failure a monitor reported belongs to the earlier work.
                self.reported.clear();
                self.request = Some(text);
                self.follow_ups.clear();
                self.plan_mode = None;
                self.plan_mode_call = None;
                if sets_work {
                    self.clear_replies();
                }
            }
            text::Weight::BareCommand => {
                self.bare_command = Some(text);
                self.clear_replies();
            }
            text::Weight::Remark => {
                keep_follow_up(&mut self.follow_ups, text);
                if sets_work {
                    self.clear_replies();
                }
            }
            text::Weight::Nudge | text::Weight::Injected => {}
        }
    }

    fn clear_replies(&mut self) {
        self.outdates_before = true;
        self.replies.clear();
        self.reply_seqs.clear();
        self.mid_turn.clear();
    }

    /// Text the agent wrote to the user (not its tool calls or thoughts), in transcript order.
    pub(crate) fn reply(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        if self.replies.len() == MAX_REPLIES {
            self.replies.remove(0);
            self.reply_seqs.remove(0);
            self.mid_turn.remove(0);
        }
        self.seq += 1;
        self.agent_asked = text::asks_open_question(text);
        self.saw_turn = true;
        self.handover.reply(text, self.events.len());
        self.replies.push(text.to_string());
        self.reply_seqs.push(self.seq);
        self.mid_turn.push(false);
    }

    /// The plan file the agent wrote in its plan mode (the agent's reader knows where).
    pub(crate) fn plan_file(&mut self, path: String) {
        self.plan_file = Some(path);
    }

    /// The plan the agent set out in plan mode (`call_id`'s input), at time `at`.
    pub(crate) fn plan_mode_plan(&mut self, call_id: &str, plan: &str, at: Option<String>) {
        self.seq += 1;
        self.plan_mode_seq = self.seq;
        self.plan_mode = Some((plan.to_string(), at));
        self.plan_mode_call = Some(call_id.to_string());
    }

    /// The result of the plan-mode call: a refused plan is not the plan (the agent sets out
    /// another).
    pub(crate) fn plan_mode_answered(&mut self, call_id: &str, refused: bool) {
        if self.plan_mode_call.as_deref() != Some(call_id) {
            return;
        }
        self.plan_mode_call = None;
        if refused {
            self.plan_mode = None;
        }
    }

    /// Files the agent read with a tool (not waiting for the result: it is not parsed).
    pub(crate) fn read_files(&mut self, paths: Vec<String>) {
        if !paths.is_empty() {
            self.push(None, Event::Read(paths));
        }
    }

    pub(crate) fn files(&mut self, call_id: Option<&str>, paths: Vec<String>) {
        if !paths.is_empty() {
            self.push(call_id, Event::Files(paths));
        }
    }

    /// A message a tool injected into the conversation: the checks it reports (a CI
    /// monitor's failures are left open until it reports them passing).
    pub(crate) fn injected(&mut self, text: &str) {
        if !text.contains("<ci-monitor-event>") && !text.contains("<task-notification>") {
            return;
        }
        self.reported.extend(monitor::verdicts(text));
    }

    /// Files a subagent's own call changed (read from the parent's transcript): in the
    /// record, not in the main session's loop detection; an error reported for `call_id`
    /// drops them.
    pub(crate) fn delegated_files(&mut self, call_id: &str, paths: Vec<String>) {
        if !paths.is_empty() {
            self.push(Some(call_id), Event::ShellFiles(paths));
        }
    }

    pub(crate) fn command(&mut self, call_id: Option<&str>, command: String) {
        if command.trim().is_empty() {
            return;
        }
        let named = shell::named_files(&command);
        let cwd = self.cwd.clone();
        let shown = |paths: Vec<String>, root: &Root| -> Vec<String> {
            paths
                .iter()
                .filter_map(|p| root.display(p, cwd.as_deref()))
                .collect()
        };
        let changed = shown(named.changed, &self.root);
        let read = shown(named.read, &self.root);
        self.push(call_id, Event::Command(command));
        if !changed.is_empty() {
            self.push(call_id, Event::ShellFiles(changed));
        }
        if !read.is_empty() {
            self.push(None, Event::Read(read));
        }
    }

    /// A call came: the agent's last words were on the way to it.
    fn called(&mut self) {
        if let Some(last) = self.mid_turn.last_mut() {
            *last = true;
        }
    }

    fn push(&mut self, call_id: Option<&str>, event: Event) {
        self.called();
        if let Some(id) = call_id {
            self.calls
                .entry(id.to_string())
                .or_default()
                .push(self.events.len());
        }
        self.events.push(Slot {
            event,
            id: call_id.map(str::to_string),
            done: call_id.is_none(),
            ok: None,
            exit_code: None,
            output: String::new(),
        });
    }

    /// The outcome of call `call_id` (ignored unless that call is waiting for one).
    pub(crate) fn outcome(&mut self, call_id: &str, ok: Option<bool>, exit_code: Option<i64>) {
        self.outcome_with_output(call_id, ok, exit_code, "");
    }

    /// [`Recorder::outcome`] with the call's output, which tells one failure from another.
    pub(crate) fn outcome_with_output(
        &mut self,
        call_id: &str,
        ok: Option<bool>,
        exit_code: Option<i64>,
        output: &str,
    ) {
        let mut failed_command = false;
        for i in self.calls.remove(call_id).unwrap_or_default() {
            let slot = &mut self.events[i];
            slot.done = true;
            slot.ok = ok.or(exit_code.map(|c| c == 0));
            slot.exit_code = exit_code;
            if matches!(slot.event, Event::Command(_)) {
                slot.output = failure::bounded(output);
                failed_command |= slot.ok == Some(false);
            }
        }
        if failed_command {
            self.failed_output(output);
        }
    }

    /// The output of a command that failed: a failing build or test names where its errors
    /// are, files the work goes on in (counted as read). Also for a failure whose call an
    /// earlier part of the transcript held.
    pub(crate) fn failed_output(&mut self, output: &str) {
        let cwd = self.cwd.clone();
        let sites: Vec<String> = error_sites::error_sites(output)
            .iter()
            .filter_map(|p| self.root.display(p, cwd.as_deref()))
            .filter(|p| index::inside_project(p))
            .collect();
        self.read_files(sites);
    }

    /// Calls whose outcome an earlier read did not find: their outcome may be in this one.
    pub(crate) fn waiting(&mut self, pending: &[loops::PendingCall]) {
        for p in pending {
            if !p.files.is_empty() {
                self.push(Some(&p.id), Event::Files(p.files.clone()));
            }
            if let Some(c) = &p.command {
                self.push(Some(&p.id), Event::Command(c.clone()));
            }
        }
    }

    /// The calls read, in order, for loop detection.
    fn into_steps(self) -> Vec<loops::Step> {
        self.events
            .into_iter()
            .filter_map(Slot::into_step)
            .collect()
    }

    /// Whether a call is waiting under this id (and what it was: true for a command).
    pub(crate) fn call_is_command(&self, call_id: &str) -> Option<bool> {
        self.calls.get(call_id).map(|slots| {
            slots
                .iter()
                .any(|&i| matches!(self.events[i].event, Event::Command(_)))
        })
    }

    /// The whole list at once (`TodoWrite`, `update_plan`, `write_todos`).
    pub(crate) fn replace_plan(&mut self, items: Vec<(String, Option<PlanStatus>)>) {
        self.called();
        self.seq += 1;
        self.plan_seq = self.seq;
        self.task_creates.clear();
        self.plan = items
            .into_iter()
            .filter_map(|(text, status)| {
                let text = text.trim().to_string();
                Some(Task {
                    id: None,
                    text,
                    status: status?,
                })
                .filter(|t| !t.text.is_empty())
            })
            .collect();
    }

    /// Claude Code `TaskCreate`: a new pending task whose id comes with the result.
    pub(crate) fn task_create(&mut self, call_id: &str, text: String) {
        self.called();
        self.seq += 1;
        self.plan_seq = self.seq;
        self.task_creates
            .insert(call_id.to_string(), self.plan.len());
        self.plan.push(Task {
            id: None,
            text: text.trim().to_string(),
            status: PlanStatus::Pending,
        });
    }

    /// The result of a `TaskCreate`: the task's id, or failure (the task was not created).
    pub(crate) fn task_created(&mut self, call_id: &str, id: Option<String>, failed: bool) {
        let Some(i) = self.task_creates.remove(call_id) else {
            return;
        };
        if failed {
            self.plan[i].text.clear(); // dropped in finish()
        } else {
            self.plan[i].id = id;
        }
    }

    /// Claude Code `TaskUpdate`: status (None = deleted) and subject changes by task id.
    pub(crate) fn task_update(
        &mut self,
        id: &str,
        status: Option<Option<PlanStatus>>,
        text: Option<String>,
    ) {
        self.seq += 1;
        self.plan_seq = self.seq;
        let Some(i) = self.plan.iter().position(|t| t.id.as_deref() == Some(id)) else {
            // Created before the window: known only if the update names it.
            if let (Some(text), Some(Some(status))) = (text, status) {
                self.plan.push(Task {
                    id: Some(id.to_string()),
                    text,
                    status,
                });
            }
            return;
        };
        match status {
            Some(None) => {
                self.plan[i].text.clear();
            }
            Some(Some(s)) => self.plan[i].status = s,
            None => {}
        }
        if let Some(t) = text.filter(|t| !t.trim().is_empty()) {
            if !self.plan[i].text.is_empty() {
                self.plan[i].text = t.trim().to_string();
            }
        }
    }

    fn finish(self, agent: &str, now: DateTime<Utc>) -> Observed {
        let (obs, _) = self.finish_with_reads(agent, now);
        obs
    }

    /// [`Recorder::finish`], with what the index keeps beyond the observation: every file
    /// read, how often, and whether an edit came right after.
    pub(crate) fn finish_with_reads(
        self,
        agent: &str,
        now: DateTime<Utc>,
    ) -> (Observed, Vec<index::ReadFile>) {
        let mut obs = Observed {
            agent: agent.to_string(),
            session: self.session.clone(),
            read_at: now.to_rfc3339_opts(SecondsFormat::Secs, true),
            ..Observed::default()
        };
        if self.not_main {
            return (obs, Vec::new());
        }
        obs.task_found = self.request.is_some();
        obs.outdates_before = self.outdates_before;
        obs.request = self
            .request
            .clone()
            .or(self.bare_command.clone())
            .map(|r| text::request_text(&r));
        obs.follow_ups = self.follow_ups.iter().map(|f| follow_up_text(f)).collect();
        obs.plan_file = self
            .plan_file
            .as_deref()
            .map(|p| crate::system::redact::redact(p).into_owned());
        // A task list written after the plan with every item completed: the plan is done.
        let plan_done = self.plan_seq > self.plan_mode_seq
            && !self.plan.is_empty()
            && self
                .plan
                .iter()
                .filter(|t| !t.text.is_empty())
                .all(|t| t.status == PlanStatus::Completed);
        obs.from_plan_mode = self
            .plan_mode
            .as_ref()
            .filter(|_| !plan_done)
            .and_then(|(plan, at)| plan_mode::outline(plan, at.clone()));
        obs.plan = self
            .plan
            .iter()
            .filter(|t| !t.text.is_empty())
            .map(|t| PlanItem {
                text: crate::system::redact::redact(&t.text).into_owned(),
                status: t.status,
            })
            .collect();
        let mut latest: Vec<String> = Vec::new();
        let mut commands: Vec<CommandRun> = Vec::new();
        let mut reads: Vec<index::ReadFile> = Vec::new();
        // The read whose file an edit may come right after.
        let mut last_read: Option<Vec<String>> = None;
        obs.opens_with_edit = self
            .events
            .iter()
            .find(|s| !matches!(s.event, Event::ShellFiles(_)))
            .is_some_and(|s| matches!(s.event, Event::Files(_)));
        for slot in &self.events {
            match &slot.event {
                Event::Files(paths) | Event::ShellFiles(paths) => {
                    if let Some(read) = last_read.take() {
                        for r in reads.iter_mut().filter(|r| read.contains(&r.path)) {
                            r.before_edit = true;
                        }
                    }
                    if slot.ok == Some(false) {
                        continue; // an error changed nothing
                    }
                    for p in paths {
                        latest.retain(|q| q != p);
                        latest.push(p.clone());
                    }
                }
                Event::Read(paths) => {
                    for p in paths {
                        index::note_read(&mut reads, p, 1, false);
                    }
                    last_read = Some(paths.clone());
                }
                Event::Command(cmd) => {
                    last_read = None;
                    commands.push(CommandRun {
                        command: text::cut(
                            crate::system::redact::redact(cmd.trim()).as_ref(),
                            MAX_COMMAND_CHARS,
                        ),
                        ok: slot.ok,
                        exit_code: slot.exit_code,
                        times: 1,
                    });
                }
            }
        }
        obs.ends_with_read = last_read;
        obs.left_open = self.left_open();
        obs.compacted = self.compacted;
        for slot in &self.events[self.window_start.min(self.events.len())..] {
            if let Event::Read(paths) = &slot.event {
                for p in paths {
                    index::note_window_read(&mut obs.window_reads, p);
                }
            }
        }
        obs.worked_from = index::worked_from_in_window(&reads, &latest, &obs.window_reads);
        obs.more_files = latest.len().saturating_sub(MAX_FILES) as u64;
        obs.files = latest.into_iter().rev().take(MAX_FILES).collect();
        let commands = collapse_repeats(commands);
        let skip = commands.len().saturating_sub(MAX_COMMANDS);
        obs.commands = commands.into_iter().skip(skip).collect();
        // The newest of the agent's stated step and its plan's item in progress: a plan item
        // the agent has talked past since is stale, and so is a statement the plan moved on from.
        let stated = self
            .replies
            .iter()
            .zip(&self.reply_seqs)
            .zip(&self.mid_turn)
            .rev()
            .find_map(|((r, seq), mid)| {
                let step = if *mid {
                    text::stated_next_step(r)
                } else {
                    text::stated_at_turn_end(r)
                };
                Some((step?, *seq, text::states_the_step_in_hand(r)))
            });
        let in_progress = obs
            .plan
            .iter()
            .find(|p| p.status == PlanStatus::InProgress)
            .map(|p| p.text.clone());
        let plan_said_at = self.plan_seq;
        obs.next_step = match (stated, in_progress) {
            (Some((_, said, _)), Some(item)) if plan_said_at > said => Some(item),
            (Some((step, said, in_hand)), _) => {
                // A list of what remains, said after the plan, makes its open items older; one
                // step replaces only the item in progress, and the change in hand laid out
                // leaves the plan as it is.
                let list = step.contains("; ");
                obs.next_step_newer_than_plan = list && !in_hand && said > plan_said_at;
                Some(step)
            }
            (None, item) => item,
        }
        .map(|s| {
            text::cut(
                crate::system::redact::redact(&s).as_ref(),
                text::MAX_NEXT_STEP_CHARS,
            )
        })
        .filter(|s| !completed_in(&obs.plan, s));
        obs.agent_asked = self.saw_turn.then_some(self.agent_asked);
        obs.plan_changed = plan_said_at > 0;
        obs.steps = self
            .events
            .into_iter()
            .filter_map(Slot::into_step)
            .collect();
        (obs, reads)
    }
}

impl Recorder {
    /// What the window shows left open (see [`left_open`]): the checks whose last run failed
    /// since the request that set the task, the commands handed to the user and not run
    /// since; None when nothing is.
    fn left_open(&self) -> Option<left_open::LeftOpen> {
        let commands = |from: usize| {
            self.events[from.min(self.events.len())..]
                .iter()
                .filter_map(|s| match &s.event {
                    Event::Command(c) => Some((s, c.as_str())),
                    _ => None,
                })
        };
        let runs = commands(self.task_at)
            .filter(|(s, _)| s.done)
            .map(|(s, c)| left_open::Run {
                command: c,
                ok: loops::verdict(c, s.ok, s.exit_code, &s.output),
                exit_code: s.exit_code,
                output: &s.output,
            });
        let mut failing = left_open::open_checks(runs);
        for f in &mut failing {
            f.files = f
                .files
                .iter()
                .filter_map(|p| self.root.display(p, self.cwd.as_deref()))
                .collect();
        }
        // Checks a monitor reported failing since the task, with no later pass reported.
        failing.extend(monitor::still_failing(&self.reported).into_iter().map(|v| {
            left_open::FailingCheck {
                command: format!("CI: {}", v.check),
                files: Vec::new(),
                error: crate::system::redact::redact(&v.line).into_owned(),
            }
        }));
        if failing.len() > left_open::MAX_FAILING {
            failing.drain(..failing.len() - left_open::MAX_FAILING);
        }
        let (handed, at) = self.handover.handed(self.events.len());
        let for_the_user = left_open::not_run_since(handed, commands(at).map(|(_, c)| c));
        let open = left_open::LeftOpen {
            failing,
            for_the_user,
        };
        (!open.is_empty()).then_some(open)
    }
}

/// Adds a follow-up, the newest last, keeping at most [`MAX_FOLLOW_UPS`]: when full, the
/// oldest that does not refine the task leaves first (a refinement, "let's store it in
/// metadata", carries what the task became; a reaction or a question is answered by then).
pub(crate) fn keep_follow_up(follow_ups: &mut Vec<String>, text: String) {
    if follow_ups.len() >= MAX_FOLLOW_UPS {
        let drop = follow_ups
            .iter()
            .position(|f| !text::refines(f))
            .unwrap_or(0);
        follow_ups.remove(drop);
    }
    follow_ups.push(text);
}

/// A follow-up as stored: redacted, then cut, keeping its closing ask.
fn follow_up_text(raw: &str) -> String {
    text::keep_closing_ask(
        crate::system::redact::redact(raw.trim()).as_ref(),
        MAX_FOLLOW_UP_CHARS,
    )
}

/// Whether `step` is an item the plan has completed: done work is never the next step.
pub(crate) fn completed_in(plan: &[PlanItem], step: &str) -> bool {
    let step = step.trim().to_lowercase();
    plan.iter()
        .any(|p| p.status == PlanStatus::Completed && p.text.trim().to_lowercase() == step)
}

impl Slot {
    /// The call as loop detection sees it; None for what it does not judge (reads, files a
    /// command names).
    fn into_step(self) -> Option<loops::Step> {
        let action = match self.event {
            Event::ShellFiles(_) | Event::Read(_) => return None,
            Event::Command(c) => loops::Action::Command(c),
            Event::Files(paths) => loops::Action::Files(
                paths
                    .into_iter()
                    .map(|path| loops::FileChange {
                        path,
                        content: None,
                        before: None,
                    })
                    .collect(),
            ),
        };
        let outcome = if self.done {
            loops::Outcome::Done {
                ok: self.ok,
                exit_code: self.exit_code,
                output: self.output,
            }
        } else {
            loops::Outcome::Pending
        };
        Some(loops::Step {
            id: self.id,
            action,
            outcome,
        })
    }
}

/// Runs of the same command with the same outcome, one after another, as one entry each with
/// their count: "`cargo test`: failed ×4" rather than four lines.
pub(crate) fn collapse_repeats(commands: Vec<CommandRun>) -> Vec<CommandRun> {
    let mut out: Vec<CommandRun> = Vec::with_capacity(commands.len());
    for c in commands {
        match out.last_mut() {
            Some(last)
                if last.command == c.command
                    && last.ok == c.ok
                    && last.exit_code == c.exit_code =>
            {
                last.times = last.times.saturating_add(c.times);
            }
            _ => out.push(c),
        }
    }
    out
}
