//! Token counting: the encodings, exact counts (on several threads for
//! large texts), and incremental counts of growing files.
//!
//! Counts are tiktoken's `encode_ordinary(text).len()` exactly (special
//! tokens count as ordinary text), computed by our own engine
//! ([`crate::bpe`]) over tiktoken's rank tables extracted at build time. The
//! test suite compares it with tiktoken-rs on generated inputs.
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

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bpe::{Tables, Tokenizer};
use crate::error::Error;
use crate::fsutil::text_from_bytes;

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

/// Texts larger than this are counted on several threads.
pub const PARALLEL_MIN: usize = 256 * 1024;

// tiktoken's pre-tokenizer patterns with `\s+(?!\S)` and the alternative
// after it replaced by `\s+`, and possessive quantifiers made greedy (see
// `bpe`'s module docs for why the counts stay the same).
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);
const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+";
const P50K_PATTERN: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+$|\s+";

macro_rules! table {
    ($name:literal) => {
        Tables {
            tokens: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".tokens")),
            ends: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".ends")),
            index: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".index")),
            split: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".split")),
            prefix: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".prefix")),
            longest: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".longest")),
            pairs: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".pairs")),
        }
    };
}

/// The encoding's tokenizer, built once per process on first use (a few
/// milliseconds: the rank table is compiled in; only its regex is built).
pub(crate) fn tokenizer(enc: Encoding) -> Result<&'static Tokenizer> {
    static SLOTS: [OnceLock<std::result::Result<Tokenizer, String>>; 4] =
        [const { OnceLock::new() }; 4];
    SLOTS[enc.index()]
        .get_or_init(|| {
            let (tables, pattern) = match enc {
                Encoding::O200kBase => (table!("o200k_base"), O200K_PATTERN),
                Encoding::Cl100kBase => (table!("cl100k_base"), CL100K_PATTERN),
                Encoding::P50kBase => (table!("p50k_base"), P50K_PATTERN),
                Encoding::R50kBase => (table!("r50k_base"), P50K_PATTERN),
            };
            Tokenizer::new(tables, pattern, enc.splits_at_newline())
        })
        .as_ref()
        .map_err(|e| anyhow!("cannot build the {enc} tokenizer: {e}"))
}

fn count_segment(tok: &Tokenizer, text: &str) -> Result<usize> {
    tok.counter()
        .count(text)
        .map_err(|e| anyhow!("tokenizer failed on a {}-byte text: {e}", text.len()))
}

/// The exact number of tokens `encode_ordinary` gives (special tokens count
/// as ordinary text). Large texts are counted on several threads: one per
/// core, or `CTXKEEP_THREADS` (the benchmark uses it to measure the speedup).
pub fn count(text: &str, enc: Encoding) -> Result<usize> {
    count_with(text, enc, threads(), PARALLEL_MIN)
}

fn threads() -> usize {
    std::env::var("CTXKEEP_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `count` with the knobs exposed (tests use tiny values to exercise every
/// path; benchmarks pick the thread count).
pub fn count_with(text: &str, enc: Encoding, threads: usize, parallel_min: usize) -> Result<usize> {
    if text.is_empty() {
        return Ok(0);
    }
    let tok = tokenizer(enc)?;
    if threads <= 1 || text.len() < parallel_min.max(1) {
        return count_segment(tok, text);
    }
    // More chunks than threads so an uneven chunk does not leave a core idle.
    let target = (text.len() / (threads * 4))
        .max(parallel_min.max(1) / 4)
        .max(1);
    let chunks = split_at_safe_cuts(text, enc, target);
    if chunks.len() <= 1 {
        return count_segment(tok, text);
    }
    let next = AtomicUsize::new(0);
    let workers = threads.min(chunks.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| -> Result<usize> {
                    // One counter per thread: the regex scratch space is not shared.
                    let mut counter = tok.counter();
                    let mut sum = 0;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(i) else {
                            return Ok(sum);
                        };
                        sum += counter.count(chunk).map_err(|e| {
                            anyhow!("tokenizer failed on a {}-byte text: {e}", chunk.len())
                        })?;
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

/// The last safe cut strictly inside `text` (0 if none). `text` may be the
/// tail of a longer text: a cut whose safety would depend on the char
/// before `text` (p50k/r50k, a `\n` at byte 0) is not taken.
fn last_safe_cut(text: &str, enc: Encoding) -> usize {
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

fn open_file(path: &Path) -> Result<File> {
    if path.is_dir() {
        return Err(Error::no_input(path, "is a directory, not a file").into());
    }
    File::open(path).map_err(|e| {
        match e.kind() {
            std::io::ErrorKind::NotFound => Error::no_input(path, "no such file"),
            _ => Error::io(path, "cannot read", e),
        }
        .into()
    })
}

fn read_file(path: &Path) -> Result<String> {
    let mut bytes = Vec::new();
    open_file(path)?
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    Ok(text_from_bytes(bytes, path, 0)?)
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
    let text = text_from_bytes(bytes, Path::new(name), 0)?;
    count(&text, enc)
}

/// How many bytes before a cursor's boundary are checked for change
/// (see [`count_file_incremental`]).
pub const CHECK_WINDOW: u64 = 64 * 1024;

/// Where the previous incremental count stopped. `boundary` is a safe cut of
/// the text counted then; the tokens before it are taken as still valid when
/// the bytes `[check_from, prefix_len)` (the last [`CHECK_WINDOW`] bytes
/// before the boundary, the boundary's `\n` and the char after it, on which
/// the cut's safety depends) are unchanged, which `check_sha256` checks, and
/// for a file, when it is still the same file (`file_id`).
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
    /// Where the checked bytes start: `boundary - CHECK_WINDOW`, or 0.
    #[serde(default)]
    pub check_from: u64,
    /// Lower-case hex SHA-256 of the bytes `[check_from, prefix_len)`. A
    /// cursor without it (written by an older version) is not reused.
    #[serde(default)]
    pub check_sha256: String,
    /// The file's (device, inode) when it was counted from a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<(u64, u64)>,
}

fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    let mut s = String::with_capacity(64);
    for byte in h.finalize() {
        use std::fmt::Write;
        let _ = write!(s, "{byte:02x}");
    }
    s
}

/// Counts `tail`, the text from byte `from` (a safe cut before which there
/// are `base` tokens), and builds the cursor for the next call. `before`
/// holds the bytes `[before_from, from)`, for the new cursor's check.
fn count_tail(
    before: &[u8],
    before_from: u64,
    tail: &str,
    from: u64,
    base: usize,
    enc: Encoding,
    file_id: Option<(u64, u64)>,
) -> Result<(usize, CountCursor)> {
    // Re-anchor at the last safe cut of the new text so the next call
    // recounts as little as possible.
    let cut_in_tail = last_safe_cut(tail, enc);
    let before_cut = base + count(&tail[..cut_in_tail], enc)?;
    let total = before_cut + count(&tail[cut_in_tail..], enc)?;
    let next_char = tail[cut_in_tail..].chars().next().map_or(0, char::len_utf8);
    let cut = from + cut_in_tail as u64;
    let prefix_len = cut + next_char as u64;
    let check_from = cut.saturating_sub(CHECK_WINDOW).max(before_from);
    let from_before = &before[(check_from.min(from) - before_from) as usize..];
    let from_tail =
        &tail.as_bytes()[(check_from.max(from) - from) as usize..(prefix_len - from) as usize];
    let cursor = CountCursor {
        encoding: enc,
        len: from + tail.len() as u64,
        tokens: total as u64,
        boundary: cut,
        tokens_before_boundary: before_cut as u64,
        prefix_len,
        check_from,
        check_sha256: sha256_hex(&[from_before, from_tail]),
        file_id,
    };
    Ok((total, cursor))
}

/// Whether `prev` is internally consistent for `enc` and a text of `len` bytes.
fn plausible(p: &CountCursor, enc: Encoding, len: u64) -> bool {
    p.encoding == enc
        && !p.check_sha256.is_empty()
        && p.check_from <= p.boundary
        && p.boundary <= p.prefix_len
        && p.prefix_len <= len
        && p.boundary - p.check_from <= CHECK_WINDOW
        && p.tokens_before_boundary <= p.tokens
}

/// Counts `text`, reusing `prev` when `text` still has the bytes `prev`
/// checks (typically: the text grew by appending). Only the text from
/// `prev.boundary` on is counted then.
pub fn count_incremental(
    text: &str,
    enc: Encoding,
    prev: Option<&CountCursor>,
) -> Result<(usize, CountCursor)> {
    let b = text.as_bytes();
    if let Some(p) = prev.filter(|p| plausible(p, enc, text.len() as u64)) {
        let (from, check, end) = (
            p.boundary as usize,
            p.check_from as usize,
            p.prefix_len as usize,
        );
        if text.is_char_boundary(from)
            && is_safe_cut(text, from, enc)
            && sha256_hex(&[&b[check..end]]) == p.check_sha256
        {
            let base = p.tokens_before_boundary as usize;
            return count_tail(
                &b[check..from],
                p.check_from,
                &text[from..],
                p.boundary,
                base,
                enc,
                None,
            );
        }
    }
    count_tail(&[], 0, text, 0, 0, enc, None)
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// [`count_incremental`] on a file (errors as in [`count_file`]), reading
/// only what it needs: when `prev` still applies, the file is read from
/// `prev.check_from`, so the cost follows what was appended, not the file's
/// size.
///
/// Soundness trade-off: the bytes before `check_from` are not read again.
/// We trust them when the file is the same file (device and inode), is at
/// least as long as the text counted then, and the last 64 KiB before the
/// cut (plus the cut's own bytes) are unchanged. An append-only file
/// (logs, transcripts, what `track --count` is for) always passes, and
/// anything that replaces the file (editors saving via a new file, `mv`,
/// rotation) or rewrites it near its end fails and is counted afresh. What
/// is missed is an in-place rewrite that changes only bytes more than 64 KiB
/// before the last safe cut and leaves the rest byte-identical; we accept
/// that for a budget estimate rather than re-hash the whole file each time.
pub fn count_file_incremental(
    path: &Path,
    enc: Encoding,
    prev: Option<&CountCursor>,
) -> Result<(usize, CountCursor)> {
    let mut file = open_file(path)?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let id = file_id(&meta);
    let context = || format!("{}: counting tokens", path.display());
    let read_from = |file: &mut File, at: u64| -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(at))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(|e| Error::io(path, "cannot read", e))?;
        Ok(bytes)
    };
    let reusable = prev.filter(|p| plausible(p, enc, meta.len()) && p.file_id == id);
    if let Some(p) = reusable {
        let mut bytes = read_from(&mut file, p.check_from)?;
        let checked = (p.prefix_len - p.check_from) as usize;
        let cut = (p.boundary - p.check_from) as usize;
        if bytes.len() >= checked && sha256_hex(&[&bytes[..checked]]) == p.check_sha256 {
            let tail = text_from_bytes(bytes.split_off(cut), path, p.boundary)?;
            let base = p.tokens_before_boundary as usize;
            return count_tail(&bytes, p.check_from, &tail, p.boundary, base, enc, id)
                .with_context(context);
        }
    }
    let text = text_from_bytes(read_from(&mut file, 0)?, path, 0)?;
    count_tail(&[], 0, &text, 0, 0, enc, id).with_context(context)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// tiktoken's own answer (only for inputs where it does not panic).
    fn reference(text: &str, enc: Encoding) -> usize {
        static SLOTS: [OnceLock<tiktoken_rs::CoreBPE>; 4] = [const { OnceLock::new() }; 4];
        let bpe = SLOTS[enc.index()].get_or_init(|| {
            match enc {
                Encoding::O200kBase => tiktoken_rs::o200k_base(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
                Encoding::P50kBase => tiktoken_rs::p50k_base(),
                Encoding::R50kBase => tiktoken_rs::r50k_base(),
            }
            .unwrap()
        });
        bpe.encode_ordinary(text).len()
    }

    fn all_safe_cuts_sum(text: &str, enc: Encoding) -> usize {
        let mut cuts: Vec<usize> = (1..text.len())
            .filter(|&i| is_safe_cut(text, i, enc))
            .collect();
        cuts.push(text.len());
        let mut start = 0;
        let mut sum = 0;
        for c in cuts {
            sum += count_with(&text[start..c], enc, 1, usize::MAX).unwrap();
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
        "'ſ",
        "'\u{212a}",
        "DON'T",
        "\r",
        "\u{2029}",
        "\u{1680}",
        "ǅungla",
        "x\u{0300}\u{0301}",
        "١٢٣٤",
        "Ⅻ",
        "🙂🙂",
        "€100",
        "    \n\n    ",
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

        /// The whole text, every safe cut at once, and the threaded splitter
        /// all agree with tiktoken.
        #[test]
        fn split_counts_equal_tiktoken(text in text_strategy()) {
            for enc in Encoding::ALL {
                let want = reference(&text, enc);
                prop_assert_eq!(count_with(&text, enc, 1, usize::MAX).unwrap(), want, "whole {}", enc);
                prop_assert_eq!(all_safe_cuts_sum(&text, enc), want, "cuts {}", enc);
                prop_assert_eq!(count_with(&text, enc, 3, 1).unwrap(), want, "threads {}", enc);
            }
        }

        /// Arbitrary Unicode (controls, marks, every script) through every
        /// regex class.
        #[test]
        fn arbitrary_text_equals_tiktoken(text in any::<String>()) {
            for enc in Encoding::ALL {
                prop_assert_eq!(count_with(&text, enc, 1, usize::MAX).unwrap(), reference(&text, enc), "{}", enc);
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
    fn long_runs_match_tiktoken() {
        // Sizes tiktoken itself survives (whitespace runs of a million
        // chars overflow its regex engine's backtracking stack).
        for n in [1_000, 50_000, 100_000] {
            for enc in Encoding::ALL {
                for (pre, unit, post) in [
                    ("x", " ", "y"),
                    ("x.", " ", ""),
                    ("x", "\t", "\n z"),
                    ("a\n", " ", "."),
                    ("a.\n\n", "\u{3000}", "/b"),
                    ("", " \n", "  q"),
                    ("", "a", ""),
                    ("b", "ab", "."),
                    ("", "!", "?"),
                    ("", "12", ""),
                    // Run-on pieces over 17 KiB take the linear count.
                    ("", "=", ""),
                    ("", "的一", "。"),
                    ("", "xyzzy", ""),
                ] {
                    let text = format!("{pre}{}{post}", unit.repeat(n));
                    let want = reference(&text, enc);
                    assert_eq!(
                        count_with(&text, enc, 1, usize::MAX).unwrap(),
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
                assert!(n > 0);
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

    /// The documented trade-off: an appended file is read from the check
    /// window on (bytes before it are trusted), while a change inside the
    /// window, or a new file at the path, is counted afresh.
    #[test]
    fn incremental_file_trusts_only_the_unchanged_window() {
        use std::io::{Seek, SeekFrom, Write};
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("log.txt");
        let enc = Encoding::O200kBase;
        let line = "the agent keeps the state of the project\n";
        let body = line.repeat((3 * CHECK_WINDOW as usize) / line.len());
        std::fs::write(&f, &body).unwrap();
        let (_, c1) = count_file_incremental(&f, enc, None).unwrap();
        assert!(c1.boundary > CHECK_WINDOW && c1.check_from == c1.boundary - CHECK_WINDOW);

        // In place, same inode: the first line changes (before the window)
        // and a line is appended. The old prefix count is reused.
        let mut file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        file.write_all(b"XQZJ XQZJ XQZJ XQZJ XQZJ XQZJ XQZJ XQZJ XQ\n")
            .unwrap();
        file.seek(SeekFrom::End(0)).unwrap();
        file.write_all(b"appended words\n").unwrap();
        drop(file);
        let (n2, c2) = count_file_incremental(&f, enc, Some(&c1)).unwrap();
        let as_counted = format!("{body}appended words\n");
        assert_eq!(n2, count(&as_counted, enc).unwrap());
        assert_ne!(n2, count_file(&f, enc).unwrap());

        // A change inside the window is seen: exact count of the file.
        let mut file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        file.seek(SeekFrom::Start(c2.boundary - 10)).unwrap();
        file.write_all(b"Z").unwrap();
        drop(file);
        let (n3, c3) = count_file_incremental(&f, enc, Some(&c2)).unwrap();
        assert_eq!(n3, count_file(&f, enc).unwrap());

        // The same bytes in a new file (new inode) are counted afresh.
        let g = dir.path().join("new.txt");
        std::fs::write(
            &g,
            format!("{}more\n", std::fs::read_to_string(&f).unwrap()),
        )
        .unwrap();
        std::fs::rename(&g, &f).unwrap();
        let (n4, c4) = count_file_incremental(&f, enc, Some(&c3)).unwrap();
        assert_eq!(n4, count_file(&f, enc).unwrap());
        assert_ne!(c4.file_id, c3.file_id);

        // A cursor written before the check fields existed is not reused.
        let mut old = serde_json::to_value(&c4).unwrap();
        let obj = old.as_object_mut().unwrap();
        obj.remove("check_from");
        obj.remove("check_sha256");
        obj.insert("prefix_sha256".into(), "00".into());
        let old: CountCursor = serde_json::from_value(old).unwrap();
        std::fs::write(&f, "a\nb\n").unwrap();
        assert_eq!(
            count_file_incremental(&f, enc, Some(&old)).unwrap().0,
            count_file(&f, enc).unwrap()
        );
    }
}
