//! The hook pipeline: every entry that moves a session (a hook event, `track`, the status
//! line, MCP `status`) goes the same way:
//!
//! - **read** ([`read`]): the payload, the transcript (through one [`read::TranscriptView`]
//!   per event) and the session's record, each loaded once;
//! - **decide** ([`decide`]): pure functions from the session's state and that reading to
//!   its next state and the [`effects`]: what to tell the model, a checkpoint to write, lines
//!   to log; no file and no clock (the time is handed in);
//! - **apply** ([`apply`]): the project lock taken once, the session's record written once
//!   (only when it changed), atomically, the log lines appended under the same lock;
//! - **reply**: what the event answers, rendered from the decisions.

pub mod apply;
pub mod decide;
pub mod effects;
pub mod read;
