//! The hook pipeline: one entry for hook events, `track`, the status line and MCP status,
//! and the work it does: tracking usage, what a session's own readings teach, checkpoint
//! requests, loop detection, the session's index on disk, the record a checkpoint takes, and
//! the snapshots taken before destructive commands; and `relay`, headless sessions one after
//! another, checkpointed through that record.
//!
//! Every entry that moves a session goes the same way:
//!
//! - **read** ([`read`]): the event's [`read::Reading`], built once: the payload, the settings,
//!   the transcript (through one [`read::TranscriptView`]); the session's record is loaded once,
//!   under the lock;
//! - **decide** ([`decide`]): `decide(session, facts) -> (session', effects)`, pure: the
//!   session's next state and the [`effects`] in order (lines to log, a point to remember, a
//!   checkpoint to write, what waited to give); no file and no clock (the time is handed in);
//! - **apply** ([`apply`]): the effects run in order under the project lock, taken once; an
//!   effect that needs an earlier one's outcome (the stages a checkpoint settles) is a pure
//!   continuation run with it; the session's record written last, once (only when it
//!   changed), atomically;
//! - **reply** ([`hook::reply`]): what the event answers, rendered from what it decided and
//!   what its effects gave.
//!
//! [`hook`] holds a handler file per event family (track, start, compaction, end, the look
//! before a destructive command); [`track`] is `ctxkeep track`'s pass. `harness` (tests only)
//! runs one event in-process and returns what the hook printed and the files it wrote.

pub mod apply;
pub mod decide;
pub mod effects;
#[cfg(test)]
pub(crate) mod harness;
pub mod headline;
pub mod hook;
pub mod learning;
pub mod loop_detection;
#[cfg(test)]
mod prompt_tests;
pub mod read;
pub mod record;
pub mod relay;
pub mod requests;
#[cfg(test)]
mod resume_tests;
pub mod session_index;
pub mod snapshot;
pub mod status;
pub mod track;
pub mod tracking;
