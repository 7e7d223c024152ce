//! Safe cut points, for parallel and incremental counting.
//!
//! [`is_safe_cut`] says where the text can be cut so that the counts of the
//! two sides add up to the count of the whole. For o200k and cl100k: right
//! after a `\n` that is followed by a char that is neither whitespace nor
//! `/`. The piece holding that `\n` ends there in every alternative that can
//! hold a newline (`[\r\n/]*`, `\s*[\r\n]+`, `\s*[\r\n]`; `\s++$` at the cut
//! of a truncated text matches the same extent), and the next char starts a
//! piece that does not depend on what came before. `/` is excluded because
//! o200k's punctuation alternative `[^\s\p{L}\p{N}]+[\r\n/]*` runs on through
//! `\n/`. Cutting at every newline is not safe: `"  \n  x"` is one piece
//! `"  \n"` then `" "`, `" x"`; a cut before the spaces changes them. p50k and
//! r50k additionally need the char before the `\n` to be non-whitespace: their
//! `\s+(?!\S)` would otherwise split `"  \n"` into `" "`, `" "`... differently
//! at a truncated end.

use crate::Encoding;

/// Whether cutting `text` before byte `at` keeps `count(a) + count(b) ==
/// count(a + b)` (see the module docs for the proof sketch). `0` and
/// `text.len()` are always safe.
pub fn is_safe_cut(text: &str, at: usize, enc: Encoding) -> bool {
    if at == 0 || at == text.len() {
        return true;
    }
    let b = text.as_bytes();
    if at > b.len() || b[at - 1] != b'\n' {
        return false;
    }
    let Some(next) = text[at..].chars().next() else {
        return false;
    };
    if next.is_whitespace() || next == '/' {
        return false;
    }
    if !enc.splits_at_newline() && at >= 2 {
        // The char before the newline must not be whitespace.
        let prev = text[..at - 1].chars().next_back();
        if prev.is_some_and(char::is_whitespace) {
            return false;
        }
    }
    true
}

/// The first safe cut at or after byte `from` (any byte offset; a cut is
/// never 0), strictly inside `text`, if any.
pub fn next_safe_cut(text: &str, from: usize, enc: Encoding) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = from.max(1);
    while i < b.len() {
        let nl = memchr_nl(&b[i - 1..])? + i - 1;
        let at = nl + 1;
        if at >= b.len() {
            return None;
        }
        if is_safe_cut(text, at, enc) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// The last safe cut strictly inside `text` (0 if none). `text` may be the
/// tail of a longer text: a cut whose safety would depend on the char
/// before `text` (p50k/r50k, a `\n` at byte 0) is not taken.
pub fn last_safe_cut(text: &str, enc: Encoding) -> usize {
    let b = text.as_bytes();
    let mut end = b.len();
    while let Some(nl) = b[..end].iter().rposition(|&c| c == b'\n') {
        let unknown_before = nl == 0 && !enc.splits_at_newline();
        if nl + 1 < b.len() && !unknown_before && is_safe_cut(text, nl + 1, enc) {
            return nl + 1;
        }
        end = nl;
    }
    0
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}
