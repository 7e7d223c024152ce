//! ctxkeep: keep an agent's working state in `project-state.md`.
pub mod error;
pub mod redact;
