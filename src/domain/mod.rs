//! The project's own records: the state file and its format, checkpoints and their action items,
//! sessions, the event log, settings (checkpoint requests' among them), templates and the merge
//! rules.

pub mod actions;
pub mod checkpoint;
pub mod config;
pub mod events;
pub mod lines;
pub mod merge;
pub mod requests;
pub mod session;
pub mod state;
pub mod templates;
pub mod workspace;
pub mod yaml_emit;
