//! The hook pipeline: one entry for hook events, `track`, the status line and MCP status,
//! and the work it does: tracking usage, checkpoint requests, loop detection, the record a checkpoint
//! takes, and the snapshots taken before destructive commands.

pub mod hook;
pub mod loop_detection;
pub mod record;
pub mod requests;
pub mod snapshot;
pub mod status;
pub mod tracking;
