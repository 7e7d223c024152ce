//! Counting text as it is read, in bounded memory. The text is read a block
//! at a time; everything up to the last safe cut read so far is counted and
//! dropped, so only the stretch after that cut is held. The count is the
//! same as counting the whole text at once, because the counts of the two
//! sides of a safe cut add up ([`is_safe_cut`](super::is_safe_cut)).
//!
//! A stretch with no safe cut (no line break followed by a character that
//! is neither whitespace nor `/`: one endless line, a file of NUL bytes, a
//! pretty-printed JSON whose lines are all indented) cannot be split without
//! changing the count, so it is held whole, up to [`MAX_RUN`]; past that the
//! count stops with an error rather than growing without bound.

use std::io::{self, Read};
use std::path::Path;

use anyhow::{Context, Result};

use super::parallel::Counters;
use super::Encoding;
use crate::system::error::Error;
use ctxkeep_bpe::last_safe_cut;

/// How much is read before each count: large enough that every core has
/// work (`count` splits it again at safe cuts), small enough to keep
/// memory flat.
pub const READ_BLOCK: usize = 4 << 20;

/// The longest stretch without a safe cut that is counted (64 MiB). No more
/// than this (and a byte) is held, whatever the input.
pub const MAX_RUN: usize = 64 << 20;

/// How much of the text before the last safe cut is kept, for the cursor's
/// check (see `cursor.rs`).
pub(super) const KEEP_BEFORE: usize = super::CHECK_WINDOW as usize;

/// Where a streamed count starts: byte `offset` of the whole text, a safe
/// cut with `tokens` tokens before it. `before` holds the bytes just before
/// it (at most [`KEEP_BEFORE`]), for the cursor's check.
#[derive(Debug, Default)]
pub(super) struct Start {
    pub offset: u64,
    pub tokens: usize,
    pub before: Vec<u8>,
}

/// What a streamed count found.
#[derive(Debug)]
pub(super) struct Streamed {
    /// Tokens of the whole text (the start's included).
    pub tokens: usize,
    /// Byte length of the whole text.
    pub len: u64,
    /// The last safe cut of the whole text that was seen (at least the
    /// start's offset).
    pub boundary: u64,
    pub tokens_before_boundary: usize,
    /// The bytes just before `boundary` (at most [`KEEP_BEFORE`], none from
    /// before the start's `before`).
    pub before: Vec<u8>,
    /// The bytes of the char after `boundary` (empty at the end).
    pub next_char: Vec<u8>,
}

/// The block size and the run limit, as knobs for the tests.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub block: usize,
    pub max_run: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            block: READ_BLOCK,
            max_run: MAX_RUN,
        }
    }
}

/// Counts what `reader` yields to its end, as the text after `start`.
/// `name` labels errors; `progress` hears of the bytes counted.
pub(super) fn count_stream(
    reader: &mut dyn Read,
    name: &Path,
    enc: Encoding,
    start: Start,
    limits: Limits,
    progress: &mut dyn FnMut(u64),
) -> Result<Streamed> {
    let context = || format!("{}: counting tokens", name.display());
    // `pending` starts at byte `at` of the text, a safe cut with `tokens`
    // before it; its first `valid` bytes are checked UTF-8, and no cut
    // before `checked` is safe.
    let mut pending: Vec<u8> = Vec::new();
    let mut at = start.offset;
    let mut tokens = start.tokens;
    let mut valid = 0usize;
    let mut checked = 1usize;
    let mut before = start.before;
    let mut counters = Counters::new(enc);
    loop {
        // Never more than one byte past the limit: enough to know a run is
        // over it.
        let room = limits.block.min(
            limits
                .max_run
                .saturating_add(1)
                .saturating_sub(pending.len()),
        );
        let eof = fill(reader, &mut pending, room.max(1))
            .map_err(|e| Error::io(name, "cannot read", e))?;
        valid += valid_utf8(&pending[valid..], eof, name, at + valid as u64)?;
        let text = as_text(&pending[..valid]);
        let cut = last_cut_from(text, checked, enc);
        checked = valid.max(1);
        match cut {
            _ if eof && (cut.is_some() || valid <= limits.max_run) => break,
            Some(cut) => {
                tokens += counters.count(&text[..cut]).with_context(context)?;
                progress(cut as u64);
                keep_last(&mut before, &pending[..cut]);
                pending.drain(..cut);
                at += cut as u64;
                valid -= cut;
                checked = valid.max(1);
            }
            None if valid > limits.max_run => {
                return Err(Error::data(
                    name,
                    format!(
                        "over {} MiB from byte offset {at} with no line break followed by text, \
                         where the count could be split; ctxkeep counts at most {} MiB in one piece",
                        limits.max_run >> 20,
                        limits.max_run >> 20
                    ),
                )
                .into());
            }
            None => {}
        }
    }
    // The rest, cut once more at its last safe cut: where the next
    // incremental count can start.
    let text = as_text(&pending[..valid]);
    let cut = last_safe_cut(text, enc);
    let tokens_before_boundary = tokens + counters.count(&text[..cut]).with_context(context)?;
    let total = tokens_before_boundary + counters.count(&text[cut..]).with_context(context)?;
    progress(valid as u64);
    keep_last(&mut before, &pending[..cut]);
    let next = text[cut..].chars().next().map_or(0, char::len_utf8);
    Ok(Streamed {
        tokens: total,
        len: at + valid as u64,
        boundary: at + cut as u64,
        tokens_before_boundary,
        before,
        next_char: pending[cut..cut + next].to_vec(),
    })
}

/// Reads up to `block` more bytes onto `buf`; whether the reader is done.
/// The buffer grows by exactly what is read, never by doubling, and is
/// not zeroed first.
fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, block: usize) -> io::Result<bool> {
    let start = buf.len();
    buf.reserve_exact(block);
    reader.take(block as u64).read_to_end(buf)?;
    Ok(buf.len() - start < block)
}

/// How many bytes of `new` are complete UTF-8; a char cut at the end of a
/// block waits for the next one, unless the text ends there.
fn valid_utf8(new: &[u8], eof: bool, name: &Path, offset: u64) -> Result<usize, Error> {
    match std::str::from_utf8(new) {
        Ok(_) => Ok(new.len()),
        Err(e) if e.error_len().is_none() && !eof => Ok(e.valid_up_to()),
        Err(e) => Err(Error::data(
            name,
            format!(
                "not valid UTF-8 (at byte offset {})",
                offset + e.valid_up_to() as u64
            ),
        )),
    }
}

fn as_text(bytes: &[u8]) -> &str {
    // Checked by `valid_utf8` as it was read; a failure here would be a bug,
    // and counting nothing is safer than a panic.
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// The last safe cut of `text` at or after `from` (and before its end).
fn last_cut_from(text: &str, from: usize, enc: Encoding) -> Option<usize> {
    let b = text.as_bytes();
    let mut end = b.len().saturating_sub(1);
    // Not a newline at byte 0: whether a cut after it is safe can depend on
    // the char before it, which was dropped (as in `last_safe_cut`).
    let lowest = from.max(2) - 1;
    while end > lowest {
        let nl = lowest + b[lowest..end].iter().rposition(|&c| c == b'\n')?;
        if super::is_safe_cut(text, nl + 1, enc) {
            return Some(nl + 1);
        }
        end = nl;
    }
    None
}

/// Appends `more` to `kept`, keeping only its last [`KEEP_BEFORE`] bytes.
fn keep_last(kept: &mut Vec<u8>, more: &[u8]) {
    if more.len() >= KEEP_BEFORE {
        kept.clear();
        kept.extend_from_slice(&more[more.len() - KEEP_BEFORE..]);
        return;
    }
    let drop = (kept.len() + more.len()).saturating_sub(KEEP_BEFORE);
    kept.drain(..drop);
    kept.extend_from_slice(more);
}

#[cfg(test)]
mod tests {
    use super::super::count;
    use super::super::texts::{reference, text_strategy};
    use super::*;
    use proptest::prelude::*;

    fn streamed(text: &str, enc: Encoding, block: usize) -> Result<Streamed> {
        let limits = Limits {
            block,
            max_run: usize::MAX,
        };
        let mut reader = text.as_bytes();
        count_stream(
            &mut reader,
            Path::new("t"),
            enc,
            Start::default(),
            limits,
            &mut |_| {},
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Whatever the block size, the streamed count is tiktoken's, and
        /// its boundary is a safe cut with the right count before it.
        #[test]
        fn streamed_counts_equal_tiktoken(text in text_strategy(), block in 1usize..64) {
            for enc in Encoding::built() {
                let s = streamed(&text, enc, block).unwrap();
                prop_assert_eq!(s.tokens, reference(&text, enc), "{}", enc);
                prop_assert_eq!(s.len, text.len() as u64);
                let b = s.boundary as usize;
                prop_assert!(super::super::is_safe_cut(&text, b, enc));
                prop_assert_eq!(s.tokens_before_boundary, reference(&text[..b], enc));
                let want_before = &text.as_bytes()[b.saturating_sub(KEEP_BEFORE)..b];
                prop_assert_eq!(&s.before[..], want_before);
            }
        }
    }

    #[test]
    fn a_char_split_between_blocks_is_joined_and_bad_bytes_are_located() {
        let text = "é€😀\nword\n".repeat(50);
        for block in 1..9 {
            let s = streamed(&text, Encoding::O200kBase, block).unwrap();
            assert_eq!(s.tokens, count(&text, Encoding::O200kBase).unwrap());
        }
        let mut bad = b"line\nnext\n".to_vec();
        bad.extend_from_slice(b"ok \xe2\x82");
        for block in [1, 3, 64] {
            let mut reader = &bad[..];
            let limits = Limits {
                block,
                max_run: usize::MAX,
            };
            let e = count_stream(
                &mut reader,
                Path::new("t"),
                Encoding::O200kBase,
                Start::default(),
                limits,
                &mut |_| {},
            )
            .unwrap_err();
            assert!(e.to_string().contains("offset 13"), "{e}");
        }
    }

    #[test]
    fn memory_is_held_only_for_a_run_without_a_safe_cut() {
        let limits = Limits {
            block: 16,
            max_run: 64,
        };
        let run = |text: &[u8]| {
            let mut reader = text;
            count_stream(
                &mut reader,
                Path::new("t"),
                Encoding::O200kBase,
                Start::default(),
                limits,
                &mut |_| {},
            )
        };
        // Lines of any number: cut at every block.
        let lines = "a line\n".repeat(1000);
        assert_eq!(
            run(lines.as_bytes()).unwrap().tokens,
            count(&lines, Encoding::O200kBase).unwrap()
        );
        // A run under the limit is counted whole.
        let short = format!("start\n{}\nend", "\0".repeat(40));
        assert_eq!(
            run(short.as_bytes()).unwrap().tokens,
            count(&short, Encoding::O200kBase).unwrap()
        );
        // Past it: an error naming where the run started.
        let long = format!("start\n{}", "\0".repeat(200));
        let e = run(long.as_bytes()).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("from byte offset 6"), "{msg}");
        assert!(msg.contains("no line break followed by text"), "{msg}");
        assert_eq!(
            crate::system::error::exit_code_of(&e),
            crate::system::error::exit::DATA,
            "{msg}"
        );
    }

    #[test]
    fn only_the_last_bytes_are_kept() {
        let mut kept = b"abc".to_vec();
        keep_last(&mut kept, b"de");
        assert_eq!(kept, b"abcde");
        let big = vec![7u8; KEEP_BEFORE + 10];
        keep_last(&mut kept, &big);
        assert_eq!(kept.len(), KEEP_BEFORE);
        keep_last(&mut kept, b"xy");
        assert_eq!(kept.len(), KEEP_BEFORE);
        assert_eq!(&kept[KEEP_BEFORE - 2..], b"xy");
    }
}
