//! The decide stage: pure functions from a session's state and what the read stage found to
//! the session's next state and the effects (what to say to the model, whether a checkpoint is
//! due, the lines to log). Nothing here opens a file or reads the clock: the time is handed
//! in, so every decision can be tested in-process (each file's tests feed events to its
//! decisions; `test_support` holds what they share).
//!
//! One file per concern: the [`stages`], a reading's [`window`] and limit, [`compaction`]s,
//! session [`start`]s, [`checkpoint_requests`] and [`loops`].

mod checkpoint_requests;
mod compaction;
mod loops;
mod stages;
mod start;
mod window;

#[cfg(test)]
pub(crate) mod test_support;

pub use checkpoint_requests::{checkpoint_request, Request};
pub use compaction::{
    compaction_by_drop, compaction_ended, compaction_judged, compacts_nothing, compressed,
    note_drop, DropNoted, Judged,
};
pub use loops::loops;
pub use stages::{settle_stages, stage_checkpoint, stage_logs, stage_step, Settled};
pub use start::{gives_waiting_start, session_started, start_waits};
pub use window::{reading_limit, reading_window, WindowFacts};
