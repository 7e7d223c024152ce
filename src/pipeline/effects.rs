//! What a decision asks of the apply stage besides the session's next state: the
//! [`Effect`]s, run in order by `apply::run` under the event's lock.

use serde_json::Value;

use crate::context::stages::Step;

/// One thing a decision asks the apply stage to do, in the order it is to be done.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// A line for the event log.
    Log(LogLine),
    /// A compaction point to remember, then its line.
    Learn(LearnPoint),
    /// A stage's checkpoint to write; its outcome (the id written, none when nothing was new)
    /// is what the next [`Effect::Settle`] names.
    StageCheckpoint(StageCheckpoint),
    /// The stages settled on the session once the stage's checkpoint ran: a pure continuation
    /// (`decide::settle_stages`), its `stage` lines logged.
    Settle(Settle),
    /// An automatic checkpoint of what the session did (read only now, through the event's
    /// view of its transcript); the session has then seen it.
    Checkpoint(AutoCheckpoint),
    /// The compaction begins with the automatic checkpoint just written (a continuation: it
    /// names that checkpoint, the one the summary is to keep): when, and its trigger.
    CompactionBegins {
        trigger: Option<String>,
        now: String,
    },
    /// A restore's acknowledgement, when the agent echoed its nonce (in its last reply, else in
    /// what the transcript gained): the session chain read and, when echoed, written.
    Acknowledge,
    /// The agent's compaction summary audited against the checkpoint, on its own lock (the
    /// event's batch is written first and loaded again after): `trigger`, what the event heard.
    /// `summary`: the summary the event carries, else it is read from the transcript.
    AuditSummary {
        trigger: Option<String>,
        summary: Option<String>,
    },
    /// A compaction the transcript shows and no start announced, given back now (its audit,
    /// the restore on the session's link, the note): its text goes into the reply.
    GiveUnannouncedCompaction,
    /// Lines an agent's pre-tool hook could not give the model (what a snapshot left out, for
    /// Gemini CLI and Qwen Code), taken from the session: they go into the reply.
    GiveNotes(Vec<String>),
    /// A start that waited for this event (deferred, or left by a compaction seen only as a
    /// drop), given now: its text goes into the reply.
    GiveWaitingStart,
    /// What a compaction's summary left out, given back now that it can be read: on its own
    /// lock, the offer read (the summary, the compaction's checkpoint, what the session did,
    /// the chain), `decide::give_back`, the facts or the prompt rendered; its text goes into
    /// the reply.
    GiveBack,
    /// What a session start gives (`decide::start`, `decide::start_gift`): performed (a link
    /// of the session chain opened or restored, the prompt or a note rendered), its text into
    /// the reply, the session's `checkpoint_seen` once something was given, and its
    /// `session_start` line logged.
    GiveStart(StartGiven),
    /// The records an agent keeps outside the project that no session wrote for a while,
    /// removed as a session starts (one listing of a folder), their paths logged.
    SweepRecords,
    /// After a tool call, a checkpoint request counted and, at a natural point, made: a pure
    /// continuation (`decide::checkpoint_request`) run once the stages settled (a stage's
    /// instruction given now asks for the same) and any start given (which the session has
    /// then seen); its words are read (a commit's message, the MCP registration) and logged.
    CheckpointRequest,
}

/// What a session start gives, by its source, and how its `session_start` line reads.
#[derive(Debug, Clone, PartialEq)]
pub struct StartGiven {
    /// The start's source (`startup`, `resume`, `clear`, `compact`, ...).
    pub source: String,
    /// None: nothing (no checkpoint yet, given already, late, or deferred).
    pub gift: Option<Gift>,
    /// The start waits for the first real prompt.
    pub deferred: bool,
    /// A key the log line sets to true: `late` (a compaction an earlier event gave back),
    /// `noticed_in_transcript` (a compaction no start announced).
    pub mark: Option<&'static str>,
}

/// The checkpoint a start gives and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Gift {
    pub checkpoint: Box<crate::domain::checkpoint::Checkpoint>,
    pub kind: GiftKind,
}

/// How a start gives its checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub enum GiftKind {
    /// A link of the session chain opened for this agent session and its prompt given;
    /// `handoff`: a new session taking the work over (not the same one going on).
    Open { handoff: bool },
    /// The prompt given again on this agent session's `link` (a compaction, a clear), with a
    /// new nonce; after a compaction, what `after` says instead of the whole prompt.
    Restore {
        link: Box<crate::handoff::chain::Link>,
        after: AfterRestore,
    },
    /// A restored conversation (a resume): a note of what changed since `seen`.
    Note { seen: Option<String> },
}

/// What a restore after a compaction gives in place of the whole prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterRestore {
    /// The whole prompt (a clear, an audit of another checkpoint, a summary unread).
    Prompt,
    /// What the summary left out (what is still true of it is given: read at apply).
    Missing(Vec<crate::transcripts::compaction_summary::Fact>),
    /// A note with the nonce while the summary cannot be read yet; the compaction's record
    /// waits on the session for the next event, `since` when it began if that was not noted.
    Waiting { since: String },
}

/// An automatic checkpoint to write: the last one's fields and what the session did, skipped
/// when nothing is new unless `asked` (the user asked for it: a manual compaction).
#[derive(Debug, Clone, PartialEq)]
pub struct AutoCheckpoint {
    pub trigger: String,
    pub budget: Option<crate::domain::checkpoint::Budget>,
    /// Fields for its log line.
    pub extra: Value,
    pub asked: bool,
    /// The agent's id, for the session's line of work.
    pub agent: String,
}

/// The stages a reading moved, to settle once its checkpoint's outcome is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Settle {
    pub step: Step,
    pub reach: Reach,
    pub now: String,
}

/// One line for the event log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub event: &'static str,
    pub fields: Value,
}

impl LogLine {
    pub fn new(event: &'static str, fields: Value) -> LogLine {
        LogLine { event, fields }
    }
}

/// Where an agent was seen compacting on its own, to remember (`.ctxkeep/compactions.json`,
/// `apply::remember_point`); `log` is written only once it is remembered.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnPoint {
    /// The agent's id.
    pub agent: &'static str,
    pub model: Option<String>,
    pub tokens: u64,
    pub log: LogLine,
}

/// The checkpoint a stage asks for, to write (`apply::write_stage_checkpoint`): what the
/// session did, from its transcript, with the stage's name as its trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct StageCheckpoint {
    pub trigger: String,
}

/// Whether what an event says can reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The reply goes to the model now (a prompt, a tool call): stages fire and are given.
    Now,
    /// Nothing said now reaches a model (`Stop`, the end of a turn): stages fire and wait
    /// in the session for the next event that can carry them.
    Later,
    /// The token count is only recorded: no stage fires or re-arms, what waits keeps waiting
    /// (the status line, the reading before a compaction's checkpoint).
    RecordOnly,
}

impl Reach {
    /// From the two switches `tracking::Options` has carried.
    pub fn of(record_only: bool, deferred: bool) -> Reach {
        match (record_only, deferred) {
            (true, _) => Reach::RecordOnly,
            (false, true) => Reach::Later,
            (false, false) => Reach::Now,
        }
    }
}
