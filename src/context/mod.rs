//! How full the context is: the model table, usage readings' limits (where each agent
//! compacts), stages, and token counting.

pub mod compaction;
pub mod models;
pub mod stages;
pub mod tokens;
