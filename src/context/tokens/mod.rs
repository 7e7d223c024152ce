//! Token counting: the encodings, exact counts (on several threads for
//! large texts), counts of files and streams as they are read (bounded
//! memory), and incremental counts of growing files.
//!
//! Counts are tiktoken's `encode_ordinary(text).len()` exactly (special
//! tokens count as ordinary text), computed by the `ctxkeep-bpe` crate
//! (crates/ctxkeep-bpe) over tiktoken's rank tables extracted at build time;
//! its tests compare it with tiktoken-rs on generated inputs. Parallel and
//! incremental counts cut the text where the counts of the parts add up
//! ([`is_safe_cut`]; the proof sketch is in that crate's `cut` module).

mod cursor;
mod encoding;
mod file;
mod parallel;
mod stream;

pub use ctxkeep_bpe::{is_safe_cut, next_safe_cut};
pub use cursor::{count_file_incremental, count_incremental, CountCursor, CHECK_WINDOW};
pub use encoding::{Encoding, EncodingParser, UnknownEncoding};
pub use file::{count_file, count_file_with_progress, count_reader, countable_len};
pub use parallel::{count, count_with, PARALLEL_MIN};
pub use stream::{MAX_RUN, READ_BLOCK};

/// A cheap estimate (bytes / 4) for hook paths that must not build an encoder.
pub fn estimate(bytes: usize) -> usize {
    bytes / 4
}

/// The test inputs and tiktoken-rs reference shared with `ctxkeep-bpe`.
#[cfg(test)]
#[path = "../../../crates/ctxkeep-bpe/src/texts.rs"]
mod texts;
