//! How full the context is: the model table, usage readings' limits (where each agent
//! compacts), stages, what a session's own readings teach, and token counting.

pub mod compaction;
pub mod models;
pub mod stages;
pub mod tokens;
