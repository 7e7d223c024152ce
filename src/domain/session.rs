//! Live budgets, one JSON file per session under `.ctxkeep/sessions/`.
//! Read, changed and written back under the project lock, so concurrent
//! sessions and hooks never lose an update; `project-state.md` is not touched.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::{self, Lock};

mod reads;
mod transitions;

/// The session used when neither `--session` nor `CTXKEEP_SESSION` names one.
pub const DEFAULT_SESSION: &str = "default";
/// Session ids longer than this are refused (they become file names).
const MAX_ID_BYTES: usize = 128;
/// A session record is small; anything bigger is not ours.
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

/// Where the session's token count came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Exact, from the provider's usage in the agent's transcript.
    Usage,
    /// Counted with a BPE tokenizer.
    Estimate,
    /// Given by hand (`--tokens`, `--add`).
    Manual,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Usage => "usage",
            Source::Estimate => "estimate",
            Source::Manual => "manual",
        })
    }
}

/// What `track --count FILE` remembers, so counting the same file again
/// after it grew costs only what was appended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountState {
    /// The file counted, absolute.
    pub path: String,
    pub cursor: crate::context::tokens::CountCursor,
}

/// Turn-end token counts kept for the forecast.
const TURNS_KEPT: usize = 9;
/// Turns of growth the forecast needs.
pub const MIN_TURNS: usize = 3;

/// Where the session is heading (`status --json`'s `forecast`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Forecast {
    pub tokens_per_turn: u64,
    /// Whole turns of that size that still fit below the limit.
    pub turns_left: u64,
}

/// One session's live budget. Its fields are private: read through the accessors of the
/// same name (`session/reads.rs`), changed only by its transitions (`session/transitions.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    id: String,
    /// None when unknown (e.g. just compacted, no token count since).
    tokens: Option<u64>,
    window: u64,
    /// Percent of the window, rounded to one decimal; None with `tokens`.
    percent: Option<f64>,
    source: Source,
    /// Stages fired and not re-armed yet, lowest first.
    #[serde(default)]
    fired: Vec<crate::context::stages::FiredStage>,
    /// The last message count recorded with `--messages`.
    #[serde(default)]
    messages: Option<u64>,
    /// A handoff stage fired: the session should hand off and stop.
    #[serde(default)]
    handoff_due: bool,
    updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transcript: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    count: Option<CountState>,
    /// The window Claude Code's status line reported for this session: exact,
    /// so later hooks use it ahead of the config and the model table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    statusline_window: Option<u64>,
    /// When an agent's hook last started this session (startup, resume,
    /// clear or compact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_at: Option<String>,
    /// When an agent's hook first started this session: a checkpoint written by hand since,
    /// naming no session, is taken as this session's (its line of work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    began_at: Option<String>,
    /// The checkpoint this agent session last saw (given to it, or written
    /// by it): a resume of the conversation is given only what changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seen_checkpoint: Option<String>,
    /// Loops found in this session (each is given once).
    /// (`gutter` in the session's record, the name older records have.)
    #[serde(rename = "gutter", default, skip_serializing_if = "Vec::is_empty")]
    loops_told: Vec<crate::transcripts::activity::LoopHit>,
    /// What loop detection learned so far, and how far it read the transcript: each hook
    /// goes on from there instead of reading it again.
    #[serde(
        default,
        skip_serializing_if = "crate::transcripts::activity::loops::LoopState::is_empty"
    )]
    loops: crate::transcripts::activity::loops::LoopState,
    /// When the agent last compacted this session's context, while no token count
    /// has been read since (the status line then says "compacted").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    compacted_at: Option<String>,
    /// An agent whose compaction shows only as a drop in its usage reading: the reading the
    /// last drop was noted from. A late reading of that size, applied again, is not taken for a
    /// second compaction when usage drops from it once more. (Kept on disk as `fall_noted_from`.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "fall_noted_from")]
    drop_noted_from: Option<u64>,
    /// The token count at the end of each of the last turns, oldest first, since
    /// the context last shrank: what the forecast is made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    turn_ends: Vec<u64>,
    /// When a session start after compaction stated the restored size (Claude
    /// Code's `SessionStart` `compact`): the `PostCompact` that follows keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    restored_at: Option<String>,
    /// Stages fired at an event whose output cannot reach the model (`Stop`),
    /// given at the next event that can, once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pending_stages: Vec<crate::context::stages::FiredStage>,
    /// Lines for the model an agent's pre-tool hook could not give (what a snapshot left
    /// out, for Gemini CLI and Qwen Code): given at the next after-tool event, once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pending_notes: Vec<String>,
    /// Gemini: a session start whose prompt waits for the first real prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending_start: Option<String>,
    /// A first tool hook waited for this session's transcript and it never came (an agent
    /// run that keeps none): later hooks do not wait again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    transcript_awaited: bool,
    /// Tokens at which the agent compacts on its own (src/compaction.rs);
    /// None in records written before limits, read as the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit: Option<u64>,
    /// Percent of the limit, rounded to one decimal; None with `tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit_percent: Option<f64>,
    /// Where the limit comes from (see `compaction::Limit::source`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit_source: Option<String>,
    /// Why a configured limit was not used, when one was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit_note: Option<String>,
    /// For an agent whose pre-compaction event fires before every model call
    /// (Gemini CLI): the token count at the last such event past the limit that
    /// got a checkpoint. Until a compaction is seen, another one past the
    /// limit means the agent compacted nothing the last time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pre_compact_at: Option<u64>,
    /// For the same agent: the token count at which its last pre-compaction event was found below
    /// the limit. The agent compresses only at that event, so a drop that follows is no
    /// compression (a resumed conversation reported smaller, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    below_point_at: Option<u64>,
    /// The compaction under way or just done: its summary against the
    /// checkpoint, and what is still to be given back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    after_compaction: Option<AfterCompaction>,
    /// The last compaction's audit (`status` shows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_audit: Option<crate::transcripts::compaction_summary::AuditNote>,
    /// Where the window comes from (`status-line`, `agent`, `model`,
    /// `front-matter`, `evidence`, `unknown`, …; see docs/state-file.md).
    /// `unknown`: usage passed every window this model's family is known to
    /// have, so no percent is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window_source: Option<String>,
    /// The larger window this session's usage proved (it passed the assumed
    /// one without a compaction), kept until the model changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window_evidence: Option<u64>,
    /// How many automatic compactions the learned limit is the median of
    /// (with `limit_source: observed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit_learned_from: Option<usize>,
    /// The last compaction read from the transcript, noted once: whether it
    /// teaches where the agent compacts is decided at the next reading (the
    /// model then in use tells a compaction forced by a model switch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    compaction_seen: Option<SeenCompaction>,
    /// Tool calls since the model last recorded a checkpoint, and the requests made.
    #[serde(
        default,
        skip_serializing_if = "crate::domain::requests::State::is_empty"
    )]
    requests: crate::domain::requests::State,
}

/// A compaction as the agent recorded it (`crate::transcripts::usage::Usage::pre_tokens`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenCompaction {
    /// The context just before it, as the agent states it.
    pub pre_tokens: u64,
    /// `auto`, `manual`, `idle`, … as the agent or the hook said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// The model in use before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Whether it was judged (learned, or recorded as teaching nothing).
    #[serde(default)]
    pub judged: bool,
}

/// A compaction between its start and what ctxkeep gives back after it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AfterCompaction {
    /// When it began (the pre-compaction hook, else when a hook first saw it):
    /// a summary in the transcript older than this is an earlier one's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// `auto` or `manual`, when the agent said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// The checkpoint the summary was compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// What the summary left out of it; None until the summary is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<crate::transcripts::compaction_summary::Fact>>,
    /// Why the summary could not be read, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// The restore's nonce, when the session start gave only a note and what
    /// the summary left out waits for the next prompt or tool event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<String>,
    /// The audit was logged (one `compaction_audit` per compaction).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub audited: bool,
}

impl AfterCompaction {
    /// When the compaction began, as a time.
    pub fn since_time(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        let t = chrono::DateTime::parse_from_rfc3339(self.since.as_deref()?).ok()?;
        Some(t.with_timezone(&chrono::Utc))
    }
}

impl Session {
    pub fn new(id: &str, window: u64) -> Session {
        Session {
            id: id.to_string(),
            tokens: None,
            window,
            percent: None,
            source: Source::Manual,
            fired: Vec::new(),
            messages: None,
            handoff_due: false,
            updated_at: crate::system::clock::now_rfc3339(),
            agent: None,
            transcript: None,
            model: None,
            count: None,
            statusline_window: None,
            started_at: None,
            began_at: None,
            seen_checkpoint: None,
            loops_told: Vec::new(),
            loops: Default::default(),
            pending_start: None,
            transcript_awaited: false,
            pending_stages: Vec::new(),
            pending_notes: Vec::new(),
            compacted_at: None,
            drop_noted_from: None,
            restored_at: None,
            turn_ends: Vec::new(),
            limit: None,
            limit_percent: None,
            limit_source: None,
            limit_note: None,
            pre_compact_at: None,
            below_point_at: None,
            after_compaction: None,
            last_audit: None,
            window_source: None,
            window_evidence: None,
            limit_learned_from: None,
            compaction_seen: None,
            requests: Default::default(),
        }
    }

    /// Whether the window is known (usage did not pass every window its
    /// model's family has).
    pub fn window_known(&self) -> bool {
        self.window_source.as_deref() != Some("unknown")
    }

    /// Sets the token count and recomputes both percents.
    fn set_tokens(&mut self, tokens: Option<u64>, window: u64) {
        if tokens.is_some() {
            self.compacted_at = None;
        }
        self.tokens = tokens;
        self.window = window;
        let known = self.window_known();
        self.percent = tokens.filter(|_| known).map(|t| shown_percent(t, window));
        self.limit_percent = tokens
            .filter(|_| known)
            .map(|t| shown_percent(t, self.limit()));
    }

    /// A turn ended: notes its token count for the forecast. A token count below the last one
    /// (the context was compacted) starts the history again.
    pub fn note_turn_end(&mut self) {
        let Some(t) = self.tokens else {
            return;
        };
        match self.turn_ends.last() {
            Some(&last) if t < last => self.turn_ends.clear(),
            Some(&last) if t == last => return,
            _ => {}
        }
        self.turn_ends.push(t);
        let excess = self.turn_ends.len().saturating_sub(TURNS_KEPT);
        self.turn_ends.drain(..excess);
    }

    /// How fast the context grows and how many turns are left before the
    /// agent compacts: the median growth of the last turns (robust to one
    /// large tool result); None with fewer than [`MIN_TURNS`] turns of growth.
    pub fn forecast(&self) -> Option<Forecast> {
        let tokens = self.tokens?;
        let mut growth: Vec<u64> = self.turn_ends.windows(2).map(|w| w[1] - w[0]).collect();
        if growth.len() < MIN_TURNS {
            return None;
        }
        crate::system::sorting::sort(&mut growth);
        let per_turn = growth[growth.len() / 2].max(1);
        Some(Forecast {
            tokens_per_turn: per_turn,
            turns_left: self.limit().saturating_sub(tokens) / per_turn,
        })
    }

    /// Sets the usable limit and recomputes its percent.
    fn set_limit(&mut self, limit: crate::context::compaction::Limit) {
        self.limit = Some(limit.tokens);
        self.limit_source = Some(limit.source);
        self.limit_note = limit.note;
        let known = self.window_known();
        self.limit_percent = self
            .tokens
            .filter(|_| known)
            .map(|t| shown_percent(t, limit.tokens));
    }

    /// The usable limit: the window for records written before limits.
    pub fn limit(&self) -> u64 {
        self.limit.unwrap_or(self.window)
    }

    /// Where the limit comes from.
    pub fn limit_source(&self) -> &str {
        self.limit_source.as_deref().unwrap_or("window")
    }

    /// The percent stages are measured with: of the limit (the default), or
    /// of the window.
    pub fn stage_percent(&self, against: crate::context::compaction::StagesAgainst) -> Option<f64> {
        match against {
            crate::context::compaction::StagesAgainst::Limit => self.limit_percent.or(self.percent),
            crate::context::compaction::StagesAgainst::Window => self.percent,
        }
    }

    pub fn budget(&self) -> Option<crate::domain::checkpoint::Budget> {
        Some(crate::domain::checkpoint::Budget {
            tokens: self.tokens?,
            window: self.window,
            percent: self.percent?,
        })
    }
}

/// Where a session stands between two events: the states its record's fields make up
/// together. Read through [`Session::phase`]; the transitions are `Session`'s methods
/// (`session/transitions.rs` lists how each moves it, and [`Session::context_emptied`],
/// [`Session::restored`], [`Session::started`] below), chosen by the hook pipeline's
/// `decide` stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing read yet: no token count, no compaction seen.
    New,
    /// A token count is known and nothing waits for the next event.
    Tracking,
    /// Stages fired at an event whose reply reaches no model (`Stop`): they are given with
    /// the next event that can.
    StagePending,
    /// A session start whose prompt waits for the next prompt or tool event (an agent that
    /// defers it, or a compaction seen only as a drop in usage).
    StartPending,
    /// A compaction began (its checkpoint is written) and its summary is not audited yet.
    Compacting,
    /// The context was emptied (a compaction, `/clear`) and no token count has been read since.
    Emptied,
    /// Restored after a compaction with a note: what the summary left out waits for the
    /// next prompt or tool event.
    RestoredWaiting,
}

impl Phase {
    /// The name `status` and the logs may show.
    pub fn name(self) -> &'static str {
        match self {
            Phase::New => "new",
            Phase::Tracking => "tracking",
            Phase::StagePending => "stage-pending",
            Phase::StartPending => "start-pending",
            Phase::Compacting => "compacting",
            Phase::Emptied => "emptied",
            Phase::RestoredWaiting => "restored-waiting",
        }
    }
}

impl Session {
    /// The session's state, from the fields that make it up (the most pressing first).
    pub fn phase(&self) -> Phase {
        let after = self.after_compaction.as_ref();
        if after.is_some_and(|a| a.waiting.is_some()) {
            Phase::RestoredWaiting
        } else if self.pending_start.is_some() {
            Phase::StartPending
        } else if !self.pending_stages.is_empty() {
            Phase::StagePending
        } else if after.is_some_and(|a| !a.audited && a.missing.is_none()) {
            Phase::Compacting
        } else if self.tokens.is_none() && self.compacted_at.is_some() {
            Phase::Emptied
        } else if self.tokens.is_none() {
            Phase::New
        } else {
            Phase::Tracking
        }
    }

    /// The context was emptied (a compaction, `/clear`): the token count is gone with it, every
    /// stage re-arms, nothing waits to be given, and the forecast starts again.
    pub fn context_emptied(&mut self, now: &str) {
        self.set_tokens(None, self.window);
        self.compacted_at = Some(now.to_string());
        self.fired.clear();
        self.pending_stages.clear();
        self.turn_ends.clear();
        self.handoff_due = false;
    }

    /// A start after a compaction stated the restored conversation's size: that token count
    /// stands, and the compaction's end that follows keeps it.
    pub fn restored(&mut self, tokens: u64, now: &str) {
        self.set_tokens(Some(tokens), self.window);
        self.restored_at = Some(now.to_string());
    }

    /// An agent's process started (or restarted) the session.
    pub fn started(&mut self, now: &str, agent: &str, transcript: Option<String>) {
        // A new process of the agent: whether it compacted before is not known.
        self.pre_compact_at = None;
        self.below_point_at = None;
        self.started_at = Some(now.to_string());
        if self.began_at.is_none() {
            self.began_at = Some(now.to_string());
        }
        self.updated_at = now.to_string();
        self.agent = Some(agent.to_string());
        if transcript.is_some() {
            self.transcript = transcript;
        }
    }
}

/// `tokens` as a percent of `window`, rounded to one decimal. The rounded
/// value is the one shown, compared with stages and with `--fail-at`, so what
/// a user reads and what fires always agree.
pub fn percent(tokens: u64, window: u64) -> f64 {
    if window == 0 {
        return 0.0;
    }
    (tokens as f64 * 1000.0 / window as f64).round() / 10.0
}

/// [`percent`], never above 100: a token count past the window or the limit is
/// "all of it", not more (a window found too small is replaced by the
/// evidence rule before this is shown).
pub fn shown_percent(tokens: u64, of: u64) -> f64 {
    percent(tokens, of).min(100.0)
}

/// Checks a session id given by a user or a hook.
pub fn validate_id(id: &str) -> Result<String, Error> {
    let id = id.trim();
    if id.is_empty() {
        return Err(Error::Usage(
            "--session: the session id is empty (unset CTXKEEP_SESSION or give an id)".into(),
        ));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(Error::Usage(format!(
            "--session: the session id is {} bytes long (limit {MAX_ID_BYTES})",
            id.len()
        )));
    }
    if id.chars().any(char::is_control) {
        return Err(Error::Usage(
            "--session: the session id contains control characters".into(),
        ));
    }
    // The id names a file and is printed and logged as is, so it must not
    // be something the redaction rules would hide.
    if crate::system::redact::contains_secret(id) {
        return Err(Error::Usage(
            "--session: the session id looks like a secret (a key or token); use another id".into(),
        ));
    }
    Ok(id.to_string())
}

/// A file name for a session id: letters, digits, `-`, `_` and inner dots
/// stay; every other byte becomes `%XX`, so distinct ids never share a file
/// and no id can climb out of the folder.
pub fn file_name(id: &str) -> String {
    let mut name = String::with_capacity(id.len() + 5);
    let mut whole = true;
    for (i, b) in id.bytes().enumerate() {
        let keep = b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0);
        // Each byte written in place: every hook event names its session's files this way.
        let len = if keep { 1 } else { 3 };
        if name.len() + len > MAX_ESCAPED_NAME {
            whole = false;
            break;
        }
        if keep {
            name.push(b as char);
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            name.push('%');
            name.push(HEX[usize::from(b >> 4)] as char);
            name.push(HEX[usize::from(b & 0xF)] as char);
        }
    }
    if !whole {
        name.push_str(&long_id_suffix(id));
    }
    name.push_str(".json");
    name
}

/// How much of an escaped id a file name holds: with the suffix, the extension and the
/// temp-file prefix of a write, well under the 255 bytes a file name may have.
const MAX_ESCAPED_NAME: usize = 120;

/// What stands for the rest of an id too long to escape whole (128 bytes of punctuation
/// escape to 384): `~` (escaped in every id, so no whole id's name ends this way) and the
/// id's SHA-256, so distinct ids keep distinct files.
fn long_id_suffix(id: &str) -> String {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(id.as_bytes());
    let hex: String = hash.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("~{hex}")
}

pub fn path(ws: &Workspace, id: &str) -> PathBuf {
    ws.sessions_dir().join(file_name(id))
}

/// The session's record, or None when it was never tracked, or when its record is damaged
/// (the next write under the lock sets it aside: [`load_setting_aside`]).
pub fn load(ws: &Workspace, id: &str) -> Result<Option<Session>, Error> {
    Ok(match read_record(&path(ws, id))? {
        OnDisk::Record(s) => Some(*s),
        OnDisk::Absent | OnDisk::Damaged(_) => None,
    })
}

/// As [`load`], for the writer that holds the lock: a damaged record (cut short, garbage,
/// not text) is set aside as `<name>.json.bad` (replacing an older one) with one `error`
/// event, and the session starts afresh, so that one bad file never fails every later hook
/// of the session, nor its pre-compaction checkpoint.
pub fn load_setting_aside(ws: &Workspace, held: &Lock, id: &str) -> Result<Option<Session>, Error> {
    let path = path(ws, id);
    match read_record(&path)? {
        OnDisk::Record(s) => Ok(Some(*s)),
        OnDisk::Absent => Ok(None),
        OnDisk::Damaged(why) => {
            let mut bad = path.clone().into_os_string();
            bad.push(".bad");
            let bad = PathBuf::from(bad);
            std::fs::rename(&path, &bad)
                .map_err(|e| Error::io(&path, "cannot set the damaged record aside", e))?;
            let _ = crate::domain::events::append(
                ws,
                held,
                "error",
                serde_json::json!({
                    "command": "session",
                    "session": id,
                    "code": why.code_name(),
                    "message": format!("{why}; kept as {} and the session started afresh", bad.display()),
                }),
            );
            Ok(None)
        }
    }
}

/// A session's record as found on disk.
enum OnDisk {
    Absent,
    Record(Box<Session>),
    Damaged(Error),
}

fn read_record(path: &Path) -> Result<OnDisk, Error> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(OnDisk::Absent);
    }
    let text = match fsutil::read_text(path, MAX_RECORD_BYTES) {
        Ok(text) => text,
        Err(e @ (Error::Data { .. } | Error::TooLarge { .. })) => return Ok(OnDisk::Damaged(e)),
        // Set aside meanwhile by another writer.
        Err(Error::NotFound { .. }) => return Ok(OnDisk::Absent),
        Err(e) => return Err(e),
    };
    if text.trim().is_empty() {
        // What a power cut can leave of a cache written without fsync.
        return Ok(OnDisk::Absent);
    }
    Ok(match parse(path, &text) {
        Ok(s) => OnDisk::Record(Box::new(s)),
        Err(e) => OnDisk::Damaged(e),
    })
}

fn parse(path: &Path, text: &str) -> Result<Session, Error> {
    serde_json::from_str(text).map_err(|e| Error::data(path, format!("not a session record ({e})")))
}

/// Every readable session record; damaged ones are skipped (a listing must
/// not fail because of one bad file).
pub fn all(ws: &Workspace) -> Vec<Session> {
    let Ok(entries) = std::fs::read_dir(ws.sessions_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| {
            let path = e.path();
            parse(&path, &fsutil::read_text(&path, MAX_RECORD_BYTES).ok()?).ok()
        })
        .collect()
}

/// Writes the record atomically (the caller holds the lock).
pub fn save(ws: &Workspace, _held: &Lock, session: &Session) -> Result<(), Error> {
    let dir = ws.sessions_dir();
    fsutil::ensure_dir(&dir)?;
    // Compact: read and written at every agent turn, and a long run's loop state makes it
    // kilobytes, which indentation nearly doubles (`jq` shows it for a person).
    let mut json = serde_json::to_string(session).expect("session serializes");
    json.push('\n');
    // A live budget is a cache the next reading rebuilds: no fsync on the
    // path every agent turn takes.
    fsutil::replace_cache(&path(ws, &session.id), json.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_distinct() {
        assert_eq!(file_name("default"), "default.json");
        assert_eq!(
            file_name("3f2a-b_c.d"),
            "3f2a-b_c.d.json",
            "uuids and dotted ids stay readable"
        );
        assert_eq!(file_name("../x"), "%2E.%2Fx.json");
        assert_eq!(file_name(".hidden"), "%2Ehidden.json");
        assert_ne!(file_name("a/b"), file_name("a_b"));
        assert_ne!(file_name("a%2Fb"), file_name("a/b"));
        assert!(!file_name("ü/..").contains('/'));
        // Ids too long to escape whole: within a file name's length, and still distinct.
        let long = "!".repeat(MAX_ID_BYTES);
        let other = format!("{}?", "!".repeat(MAX_ID_BYTES - 1));
        assert!(file_name(&long).len() <= 180, "{}", file_name(&long));
        assert_ne!(file_name(&long), file_name(&other));
        assert_eq!(file_name(&long), file_name(&long));
        assert!(!file_name(&long).contains('/'));
    }

    #[test]
    fn ids_are_validated() {
        assert!(validate_id("  ").is_err());
        assert!(validate_id(&"x".repeat(200)).is_err());
        assert!(validate_id("a\nb").is_err());
        assert_eq!(validate_id(" s1 ").unwrap(), "s1");
        let uuid = "3f2a9c1e-8b4d-4e6f-9a1b-2c3d4e5f6a7b";
        assert_eq!(validate_id(uuid).unwrap(), uuid);
        let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF2hJ4");
        assert_eq!(validate_id(&token).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn percent_is_rounded_to_one_decimal() {
        assert_eq!(percent(170_000, 200_000), 85.0);
        assert_eq!(percent(159_999, 200_000), 80.0);
        assert_eq!(percent(1, 3), 33.3);
        assert_eq!(percent(5, 0), 0.0);
    }

    #[test]
    fn a_record_round_trips_and_garbage_names_the_file() {
        let mut s = Session::new("s", 200_000);
        s.set_tokens(Some(1_000), 200_000);
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(parse(Path::new("x.json"), &text).unwrap(), s);
        let err = parse(Path::new("x.json"), "[1]").unwrap_err();
        assert_eq!(err.exit_code(), 65);
        assert!(err.to_string().starts_with("x.json: not a session record"));
    }
}
