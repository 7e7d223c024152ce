//! Reading agents' transcripts: context usage, what the session did (its activity and
//! the per-session index; the index on disk is `pipeline::session_index`), the agent's
//! compaction summary and its audit, and the shell commands that can discard work.

pub mod activity;
pub mod compaction_summary;
pub mod destructive;
pub mod shell_words;
pub mod usage;
