//! Reading agents' transcripts: context usage, what the session did (its activity and
//! the per-session index), the agent's compaction summary and its audit, and the shell commands that
//! can discard work.

pub mod activity;
pub mod compaction_summary;
pub mod destructive;
pub mod session_index;
pub mod shell_words;
pub mod usage;
