//! Infrastructure: files and the lock, processes, git, output, errors and exit codes,
//! the clock, redaction, text recorded from sessions kept as data, and word lists kept as data.

pub mod clock;
pub mod codes;
pub mod error;
pub mod file_batch;
pub mod fsutil;
pub mod git;
pub mod output;
pub mod process;
pub mod progress;
pub mod recorded;
pub mod redact;
pub mod sorting;
pub mod word_list;
