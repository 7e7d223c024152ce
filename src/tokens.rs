//! Token counting. This is the only module that touches `tiktoken-rs`.
//!
//! # Exactness and the whitespace panic
//!
//! tiktoken-rs 0.12 `CoreBPE::encode_ordinary` unwraps the result of
//! fancy-regex. In every encoding's pre-tokenizer the alternative
//! `\s+(?!\S)` needs a look-ahead, so fancy-regex runs it in its backtracking
//! VM, which pushes one backtrack entry per character of `\s+` and fails at a
//! fixed (not configurable) 1,000,000-entry stack. A run of about a million
//! whitespace characters therefore panics. All other alternatives are
//! delegated to the `regex` crate and are linear (measured: 2 M newlines, 2 M
//! letters, 2 M punctuation all fine).
//!
//! We never call `encode_ordinary`. We call `CoreBPE::count(text, &{})`,
//! which runs the same regex and BPE (with no special tokens allowed, it is
//! `encode_ordinary`) but returns the regex error instead of unwrapping it,
//! so there is no panic path. To give the *right* count instead of an error,
//! long whitespace runs are taken out of the regex's hands:
//!
//! For a maximal whitespace run `R = [s, e)` followed by a non-whitespace
//! char (or the end of text), let `t0` be just after the last `\r`/`\n` in
//! `R` (o200k, cl100k), or `s` (p50k, r50k, whose regex treats newlines like
//! any whitespace). Reading the patterns:
//! * o200k `\s*[\r\n]+` (and cl100k `\s*[\r\n]`, `\s++$`) end a piece exactly
//!   at `t0`; the punctuation alternative's `[\r\n/]*` tail stops there too,
//!   since `text[t0]` is whitespace that is not a newline. A piece starts at
//!   `s` in p50k/r50k because none of their alternatives swallow whitespace
//!   after a non-whitespace char.
//! * From `t0` the rest of the run has no newline, so `\s+(?!\S)` matches
//!   `[t0, e-1)` (the last whitespace char is left to join the next word, or
//!   to stand alone); at the end of text o200k's matches `[t0, e)`.
//! * Truncating the text at `t0`, or restarting it at `e-1`, gives the same
//!   pieces on each side (no look-behind; at a truncation the only alternatives
//!   that see the new end are greedy runs that stop there anyway, or `\s++$`
//!   which then matches the same extent).
//!
//! So `count(text) = count(text[..t0]) + bpe(text[t0..m]) + count(text[m..])`
//! with `m = e-1` (or `e` at the end of text for o200k). `bpe` of that single
//! piece is computed by tiktoken's own BPE code: a second `CoreBPE` built
//! from the same rank table (read back with `decode_bytes`) whose split
//! pattern `(?s:.+)` is plain `regex` (linear, no VM), so the piece reaches
//! `byte_pair_encode` whole. This is exact, not an approximation; the
//! property tests force this path with a tiny threshold and compare with
//! tiktoken on every input. The rank-table copy is only built when a text has
//! such a run ([`LONG_RUN`] bytes or more).
//!
//! # Safe cut points (parallel and incremental counting)
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

use std::collections::HashSet;
use std::fmt;
use std::io::Read;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tiktoken_rs::CoreBPE;

use crate::error::Error;

/// A tiktoken encoding. `o200k_base` is the default.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub enum Encoding {
    #[default]
    #[serde(rename = "o200k_base")]
    O200kBase,
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
    #[serde(rename = "p50k_base")]
    P50kBase,
    #[serde(rename = "r50k_base")]
    R50kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 4] = [
        Encoding::O200kBase,
        Encoding::Cl100kBase,
        Encoding::P50kBase,
        Encoding::R50kBase,
    ];

    /// The canonical tiktoken name, e.g. `o200k_base`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::P50kBase => "p50k_base",
            Encoding::R50kBase => "r50k_base",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Whether the pre-tokenizer has its own newline alternative
    /// (`\s*[\r\n]`), which makes the whitespace after the last newline of a
    /// run start a new piece.
    fn splits_at_newline(self) -> bool {
        matches!(self, Encoding::O200kBase | Encoding::Cl100kBase)
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An encoding name that is not one of [`Encoding::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown encoding `{0}`; valid encodings: o200k_base, cl100k_base, p50k_base, r50k_base")]
pub struct UnknownEncoding(pub String);

impl FromStr for Encoding {
    type Err = UnknownEncoding;

    /// Accepts the canonical names, case-insensitively.
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let t = s.trim();
        Encoding::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownEncoding(s.to_string()))
    }
}

/// A cheap estimate (bytes / 4) for hook paths that must not build an encoder.
pub fn estimate(bytes: usize) -> usize {
    bytes / 4
}

/// Runs of whitespace at least this long (in bytes) are counted through the
/// rank-table path (see the module docs). Far below the ~1,000,000 chars at
/// which fancy-regex overflows, far above anything common.
pub const LONG_RUN: usize = 128 * 1024;

/// Texts larger than this are counted on several threads.
pub const PARALLEL_MIN: usize = 256 * 1024;

type Slot = OnceLock<std::result::Result<CoreBPE, String>>;

fn slot_get(
    slot: &'static Slot,
    enc: Encoding,
    build: fn() -> Result<CoreBPE>,
) -> Result<&'static CoreBPE> {
    slot.get_or_init(|| build().map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow!("cannot build the {enc} tokenizer: {e}"))
}

/// The tiktoken encoder, built once per process on first use (~150 ms).
fn encoder(enc: Encoding) -> Result<&'static CoreBPE> {
    static SLOTS: [Slot; 4] = [const { OnceLock::new() }; 4];
    let build: fn() -> Result<CoreBPE> = match enc {
        Encoding::O200kBase => tiktoken_rs::o200k_base,
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base,
        Encoding::P50kBase => tiktoken_rs::p50k_base,
        Encoding::R50kBase => tiktoken_rs::r50k_base,
    };
    slot_get(&SLOTS[enc.index()], enc, build)
}

/// A `CoreBPE` with the same ranks whose split pattern matches the whole
/// input as one piece: `count` on it is tiktoken's BPE of that piece.
fn whole_piece_encoder(enc: Encoding) -> Result<&'static CoreBPE> {
    static SLOTS: [Slot; 4] = [const { OnceLock::new() }; 4];
    let slot = &SLOTS[enc.index()];
    if let Some(r) = slot.get() {
        return r
            .as_ref()
            .map_err(|e| anyhow!("cannot build the {enc} rank table: {e}"));
    }
    let base = encoder(enc)?;
    slot.get_or_init(|| build_whole_piece(base).map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow!("cannot build the {enc} rank table: {e}"))
}

fn build_whole_piece(base: &CoreBPE) -> Result<CoreBPE> {
    let specials: HashSet<&str> = base.special_tokens();
    let mut ranks = rustc_hash_map();
    // Every vocabulary has fewer than 201,088 ranks; decode each one back to
    // its bytes. Special tokens decode to their names and are skipped: the
    // ordinary encoder does not contain them.
    for rank in 0..210_000u32 {
        if let Ok(bytes) = base.decode_bytes(&[rank]) {
            let special = std::str::from_utf8(&bytes).is_ok_and(|s| specials.contains(s));
            if !special {
                ranks.insert(bytes, rank);
            }
        }
    }
    CoreBPE::new(ranks, Default::default(), "(?s:.+)")
}

// tiktoken-rs wants its `FxHashMap`; `Default` builds one without naming
// the hasher crate.
fn rustc_hash_map<K, V, S: Default>() -> std::collections::HashMap<K, V, S> {
    std::collections::HashMap::default()
}

fn tiktoken_count(bpe: &CoreBPE, text: &str) -> Result<usize> {
    if text.is_empty() {
        return Ok(0);
    }
    // `count` with no allowed special tokens is `encode_ordinary(..).len()`,
    // but returns fancy-regex errors instead of panicking.
    bpe.count(text, &HashSet::new())
        .map_err(|e| anyhow!("tokenizer failed on a {}-byte text: {e:#}", text.len()))
}

/// The exact number of tokens `encode_ordinary` gives (special tokens count
/// as ordinary text). Large texts are counted on several threads.
pub fn count(text: &str, enc: Encoding) -> Result<usize> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    count_with(text, enc, threads, PARALLEL_MIN, LONG_RUN)
}

/// `count` with the knobs exposed (tests use tiny values to exercise every
/// path; benchmarks pick the thread count).
pub fn count_with(
    text: &str,
    enc: Encoding,
    threads: usize,
    parallel_min: usize,
    long_run: usize,
) -> Result<usize> {
    if text.is_empty() {
        return Ok(0);
    }
    let bpe = encoder(enc)?;
    if threads <= 1 || text.len() < parallel_min.max(1) {
        return count_segment(bpe, text, enc, long_run);
    }
    // More chunks than threads so an uneven chunk does not leave a core idle.
    let target = (text.len() / (threads * 4))
        .max(parallel_min.max(1) / 4)
        .max(1);
    let chunks = split_at_safe_cuts(text, enc, target);
    if chunks.len() <= 1 {
        return count_segment(bpe, text, enc, long_run);
    }
    let next = AtomicUsize::new(0);
    let workers = threads.min(chunks.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| -> Result<usize> {
                    let mut sum = 0;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(i) else {
                            return Ok(sum);
                        };
                        sum += count_segment(bpe, chunk, enc, long_run)?;
                    }
                })
            })
            .collect();
        let mut total = 0;
        for h in handles {
            total += h
                .join()
                .map_err(|_| anyhow!("a token-counting thread panicked"))??;
        }
        Ok(total)
    })
}

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

/// The first safe cut at or after `from` (exclusive of 0), if any.
fn next_safe_cut(text: &str, from: usize, enc: Encoding) -> Option<usize> {
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

/// The last safe cut strictly inside `text` (0 if none).
fn last_safe_cut(text: &str, enc: Encoding) -> usize {
    let b = text.as_bytes();
    let mut end = b.len();
    while let Some(nl) = b[..end].iter().rposition(|&c| c == b'\n') {
        if nl + 1 < b.len() && is_safe_cut(text, nl + 1, enc) {
            return nl + 1;
        }
        end = nl;
    }
    0
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

fn split_at_safe_cuts(text: &str, enc: Encoding, target: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while text.len() - start > target {
        match next_safe_cut(text, start + target, enc) {
            Some(at) => {
                out.push(&text[start..at]);
                start = at;
            }
            None => break,
        }
    }
    out.push(&text[start..]);
    out
}

/// Counts one segment on this thread, routing whitespace runs of `long_run`
/// bytes or more around the regex (module docs).
fn count_segment(bpe: &CoreBPE, text: &str, enc: Encoding, long_run: usize) -> Result<usize> {
    let long_run = long_run.max(1);
    if text.len() < long_run {
        return tiktoken_count(bpe, text);
    }
    let b = text.as_bytes();
    let mut total = 0;
    let mut start = 0; // first byte not yet counted
    let mut i = 0;
    while i < b.len() {
        // Find the next whitespace run [s, e). ASCII fast path; other chars
        // are decoded.
        let c = text[i..].chars().next().unwrap_or('\0');
        if !c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let s = i;
        let mut e = i;
        for ch in text[s..].chars() {
            if !ch.is_whitespace() {
                break;
            }
            e += ch.len_utf8();
        }
        i = e;
        if e - s < long_run {
            continue;
        }
        let run = &text[s..e];
        let t0 = if enc.splits_at_newline() {
            run.rfind(['\r', '\n']).map_or(s, |q| s + q + 1)
        } else {
            s
        };
        let at_end = e == b.len();
        let m = if at_end {
            if enc != Encoding::O200kBase {
                // cl100k/p50k/r50k match a final run with `\s++$`, which the
                // regex crate handles; nothing to do.
                continue;
            }
            e
        } else {
            // The last whitespace char stays with what follows.
            let last = run.chars().next_back().map_or(0, char::len_utf8);
            e - last
        };
        if m <= t0 || m - t0 < long_run {
            continue;
        }
        total += tiktoken_count(bpe, &text[start..t0])?;
        total += tiktoken_count(whole_piece_encoder(enc)?, &text[t0..m])?;
        start = m;
    }
    total += tiktoken_count(bpe, &text[start..])?;
    Ok(total)
}

fn read_utf8(bytes: Vec<u8>, path: &Path) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        Error::data(
            path,
            format!("not UTF-8 text (invalid byte at offset {at})"),
        )
        .into()
    })
}

fn read_file(path: &Path) -> Result<String> {
    if path.is_dir() {
        return Err(Error::no_input(path, "is a directory, not a file").into());
    }
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::no_input(path, "no such file"),
        _ => Error::io(path, "cannot read", e),
    })?;
    read_utf8(bytes, path)
}

/// Counts a UTF-8 file. A missing path or a directory is `Error::NoInput`;
/// non-UTF-8 content is `Error::Data` naming the first bad byte's offset.
pub fn count_file(path: &Path, enc: Encoding) -> Result<usize> {
    let text = read_file(path)?;
    count(&text, enc).with_context(|| format!("{}: counting tokens", path.display()))
}

/// Counts everything a reader yields (stdin); `name` labels errors (`-`).
pub fn count_reader(mut reader: impl Read, name: &str, enc: Encoding) -> Result<usize> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(name, "cannot read", e))?;
    let text = read_utf8(bytes, Path::new(name))?;
    count(&text, enc)
}

/// Where the previous incremental count stopped. `boundary` is a safe cut of
/// the text counted then; the tokens before it stay valid while the bytes
/// `[0, prefix_len)` (the boundary plus the char after it, which the cut's
/// safety depends on) are unchanged, which `prefix_sha256` checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountCursor {
    pub encoding: Encoding,
    /// Byte length of the text last counted.
    pub len: u64,
    /// Total tokens of the text last counted.
    pub tokens: u64,
    /// A safe cut (byte offset) in that text.
    pub boundary: u64,
    pub tokens_before_boundary: u64,
    /// `boundary` plus the length of the char after it.
    pub prefix_len: u64,
    /// Lower-case hex SHA-256 of the first `prefix_len` bytes.
    pub prefix_sha256: String,
}

fn sha256_hex(b: &[u8]) -> String {
    let digest = Sha256::digest(b);
    let mut s = String::with_capacity(64);
    for byte in digest {
        use std::fmt::Write;
        let _ = write!(s, "{byte:02x}");
    }
    s
}

/// Counts `text`, reusing `prev` when `text` still starts with the bytes
/// `prev` was anchored on (typically: the file grew by appending). Only the
/// text from `prev.boundary` on is counted then. The result always equals
/// `count(text, enc)`.
pub fn count_incremental(
    text: &str,
    enc: Encoding,
    prev: Option<&CountCursor>,
) -> Result<(usize, CountCursor)> {
    let (base, from) = match prev {
        Some(p) if reusable(p, text, enc) => {
            (p.tokens_before_boundary as usize, p.boundary as usize)
        }
        _ => (0, 0),
    };
    let rest = &text[from..];
    // Re-anchor at the last safe cut of the new text so the next call
    // recounts as little as possible.
    let cut = from + last_safe_cut(rest, enc);
    let before = base + count(&text[from..cut], enc)?;
    let total = before + count(&text[cut..], enc)?;
    let prefix_len = cut + text[cut..].chars().next().map_or(0, char::len_utf8);
    let cursor = CountCursor {
        encoding: enc,
        len: text.len() as u64,
        tokens: total as u64,
        boundary: cut as u64,
        tokens_before_boundary: before as u64,
        prefix_len: prefix_len as u64,
        prefix_sha256: sha256_hex(&text.as_bytes()[..prefix_len]),
    };
    Ok((total, cursor))
}

fn reusable(p: &CountCursor, text: &str, enc: Encoding) -> bool {
    let (Ok(boundary), Ok(prefix_len)) =
        (usize::try_from(p.boundary), usize::try_from(p.prefix_len))
    else {
        return false;
    };
    p.encoding == enc
        && boundary <= prefix_len
        && prefix_len <= text.len()
        && text.is_char_boundary(boundary)
        && is_safe_cut(text, boundary, enc)
        && sha256_hex(&text.as_bytes()[..prefix_len]) == p.prefix_sha256
}

/// [`count_incremental`] on a file (errors as in [`count_file`]).
pub fn count_file_incremental(
    path: &Path,
    enc: Encoding,
    prev: Option<&CountCursor>,
) -> Result<(usize, CountCursor)> {
    let text = read_file(path)?;
    count_incremental(&text, enc, prev)
        .with_context(|| format!("{}: counting tokens", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// tiktoken's own answer (only for inputs where it does not panic).
    fn reference(text: &str, enc: Encoding) -> usize {
        encoder(enc).unwrap().encode_ordinary(text).len()
    }

    fn all_safe_cuts_sum(text: &str, enc: Encoding, long_run: usize) -> usize {
        let bpe = encoder(enc).unwrap();
        let mut cuts: Vec<usize> = (1..text.len())
            .filter(|&i| is_safe_cut(text, i, enc))
            .collect();
        cuts.push(text.len());
        let mut start = 0;
        let mut sum = 0;
        for c in cuts {
            sum += count_segment(bpe, &text[start..c], enc, long_run).unwrap();
            start = c;
        }
        sum
    }

    const FRAGMENTS: &[&str] = &[
        "hello",
        "The",
        " world",
        "fn main() {",
        "    let x = 1;",
        "}",
        "\n",
        "\n\n",
        "\r\n",
        " ",
        "  ",
        "   ",
        "\t",
        "\t\t",
        "/",
        "//",
        "./",
        ".\n/",
        "'s",
        "'LL",
        "123456",
        "3.14",
        "漢字",
        "é",
        "e\u{301}",
        "\u{301}",
        "\u{3000}",
        "\u{a0}",
        "\u{2028}",
        "\u{0b}",
        "\u{0c}",
        "\u{85}",
        "<|endoftext|>",
        ".",
        "!?",
        "  \n",
        " \n ",
        "\n  ",
        "# Title",
        "- item",
        "{\"k\": [1, 2]}",
        "ÀB",
        "ǅ",
        "😀",
        "\n/",
        "*/",
        "/*",
        ":\n\n",
    ];

    fn text_strategy() -> impl Strategy<Value = String> {
        let frag = prop_oneof![
            4 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
            1 => any::<char>().prop_map(|c| c.to_string()),
            1 => (proptest::sample::select(&[" ", "\n", "\t", " \n", "\u{3000}"][..]), 1usize..40)
                .prop_map(|(s, n)| s.repeat(n)),
        ];
        proptest::collection::vec(frag, 0..80).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Every safe cut at once, the long-run path forced on every
        /// whitespace run, and the threaded splitter all agree with tiktoken.
        #[test]
        fn split_counts_equal_tiktoken(text in text_strategy()) {
            for enc in Encoding::ALL {
                let want = reference(&text, enc);
                prop_assert_eq!(all_safe_cuts_sum(&text, enc, usize::MAX), want, "cuts {}", enc);
                prop_assert_eq!(all_safe_cuts_sum(&text, enc, 1), want, "cuts+runs {}", enc);
                prop_assert_eq!(count_with(&text, enc, 3, 1, 2).unwrap(), want, "threads {}", enc);
            }
        }

        #[test]
        fn incremental_equals_full_recount(pieces in proptest::collection::vec(text_strategy(), 1..8)) {
            for enc in [Encoding::O200kBase, Encoding::P50kBase] {
                let mut text = String::new();
                let mut cursor: Option<CountCursor> = None;
                for p in &pieces {
                    text.push_str(p);
                    let (n, c) = count_incremental(&text, enc, cursor.as_ref()).unwrap();
                    prop_assert_eq!(n, reference(&text, enc));
                    prop_assert_eq!(c.tokens as usize, n);
                    cursor = Some(c);
                }
            }
        }
    }

    #[test]
    fn cut_rule_examples() {
        let e = Encoding::O200kBase;
        assert!(is_safe_cut("a\nb", 2, e));
        assert!(!is_safe_cut("a\n b", 2, e));
        assert!(!is_safe_cut("a.\n/b", 3, e));
        assert!(is_safe_cut("a \nb", 3, e));
        assert!(!is_safe_cut("a \nb", 3, Encoding::P50kBase));
        assert!(is_safe_cut("a\nb", 2, Encoding::R50kBase));
        assert!(!is_safe_cut("ab", 1, e));
        // Why not every newline: "x\n  \n y" has the piece "\n  \n", which a
        // cut after the first newline breaks in two.
        let t = "x\n  \n y";
        assert!(!is_safe_cut(t, 2, e));
        assert_ne!(
            reference(&t[..2], e) + reference(&t[2..], e),
            reference(t, e)
        );
    }

    #[test]
    fn long_whitespace_runs_match_tiktoken() {
        // Sizes tiktoken itself survives; a low threshold forces our path.
        for n in [10_000, 50_000, 100_000] {
            for enc in Encoding::ALL {
                for (pre, unit, post) in [
                    ("x", " ", "y"),
                    ("x.", " ", ""),
                    ("x", "\t", "\n z"),
                    ("a\n", " ", "."),
                    ("a.\n\n", "\u{3000}", "/b"),
                    ("", " \n", "  q"),
                ] {
                    let text = format!("{pre}{}{post}", unit.repeat(n));
                    let want = reference(&text, enc);
                    assert_eq!(
                        count_with(&text, enc, 1, usize::MAX, 4096).unwrap(),
                        want,
                        "{enc} {n} {pre:?}{unit:?}{post:?}"
                    );
                }
            }
        }
    }

    /// Run with `cargo test --release -- --ignored`: multi-megabyte runs.
    #[test]
    #[ignore]
    fn huge_whitespace_runs_do_not_fail() {
        for enc in Encoding::ALL {
            for text in [
                format!("x{}y", " ".repeat(2_000_000)),
                format!("x{}", "\t".repeat(2_000_000)),
                format!("x.\n{}\n{}", "\n".repeat(1_500_000), " ".repeat(1_500_000)),
                format!("{}z", "\u{3000}".repeat(1_100_000)),
            ] {
                let n = count(&text, enc).unwrap();
                // Same answer through the long-run path at a lower threshold.
                assert_eq!(count_with(&text, enc, 1, usize::MAX, 4096).unwrap(), n);
            }
            // Below tiktoken's limit, the default thresholds agree with it.
            let text = format!("a{}b", " ".repeat(600_000));
            assert_eq!(count(&text, enc).unwrap(), reference(&text, enc));
        }
    }

    #[test]
    fn encoding_names() {
        for e in Encoding::ALL {
            assert_eq!(e.to_string().parse::<Encoding>().unwrap(), e);
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, format!("\"{}\"", e.name()));
            assert_eq!(serde_json::from_str::<Encoding>(&json).unwrap(), e);
        }
        assert_eq!(
            "O200K_BASE".parse::<Encoding>().unwrap(),
            Encoding::O200kBase
        );
        let err = "gpt2".parse::<Encoding>().unwrap_err().to_string();
        assert!(err.contains("gpt2") && err.contains("cl100k_base"), "{err}");
        assert!(serde_json::from_str::<Encoding>("\"gpt2\"").is_err());
        assert_eq!(Encoding::default(), Encoding::O200kBase);
    }

    #[test]
    fn small_counts_and_estimate() {
        assert_eq!(count("", Encoding::O200kBase).unwrap(), 0);
        assert_eq!(count("hello world", Encoding::O200kBase).unwrap(), 2);
        // Special tokens are ordinary text.
        let t = "a <|endoftext|> b";
        assert_eq!(
            count(t, Encoding::Cl100kBase).unwrap(),
            reference(t, Encoding::Cl100kBase)
        );
        assert!(count(t, Encoding::Cl100kBase).unwrap() > 3);
        assert_eq!(estimate(4000), 1000);
    }

    #[test]
    fn file_errors_map_to_exit_codes() {
        use crate::error::{exit, exit_code_of};
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.txt");
        let e = count_file(&missing, Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::NO_INPUT);
        let e = count_file(dir.path(), Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::NO_INPUT);
        let bad = dir.path().join("bad.txt");
        std::fs::write(&bad, b"abc\xffdef").unwrap();
        let e = count_file(&bad, Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::DATA);
        assert!(e.to_string().contains("offset 3"), "{e}");
        let good = dir.path().join("good.txt");
        std::fs::write(&good, "hello world").unwrap();
        assert_eq!(count_file(&good, Encoding::O200kBase).unwrap(), 2);
        assert_eq!(
            count_reader(&b"hello world"[..], "-", Encoding::O200kBase).unwrap(),
            2
        );
        let e = count_reader(&b"\xc3"[..], "-", Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::DATA);
    }

    #[test]
    fn incremental_file_reuses_and_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("log.txt");
        let enc = Encoding::O200kBase;
        std::fs::write(&f, "line one\nline two\nthree").unwrap();
        let (n1, c1) = count_file_incremental(&f, enc, None).unwrap();
        assert_eq!(n1, count_file(&f, enc).unwrap());
        assert_eq!(c1.boundary, "line one\nline two\n".len() as u64);
        std::fs::write(&f, "line one\nline two\nthree and more\nfour").unwrap();
        let (n2, c2) = count_file_incremental(&f, enc, Some(&c1)).unwrap();
        assert_eq!(n2, count_file(&f, enc).unwrap());
        assert!(c2.boundary > c1.boundary);
        // Rewritten (not appended): falls back to a full count.
        std::fs::write(&f, "LINE ONE\nline two\nthree and more\nfour").unwrap();
        let (n3, _) = count_file_incremental(&f, enc, Some(&c2)).unwrap();
        assert_eq!(n3, count_file(&f, enc).unwrap());
        // Truncated, or another encoding: full count too.
        std::fs::write(&f, "li").unwrap();
        assert_eq!(count_file_incremental(&f, enc, Some(&c2)).unwrap().0, 1);
        let (n5, _) = count_file_incremental(&f, Encoding::Cl100kBase, Some(&c2)).unwrap();
        assert_eq!(n5, count_file(&f, Encoding::Cl100kBase).unwrap());
        let json = serde_json::to_string(&c2).unwrap();
        assert_eq!(serde_json::from_str::<CountCursor>(&json).unwrap(), c2);
    }
}
