//! The o200k_base and cl100k_base pre-tokenizers written out by hand: where
//! the piece that starts at a byte ends, exactly where the DFA of
//! `patterns.rs` ends it (leftmost-first, the alternatives tried in order),
//! a char at a time. Most text is ASCII, whose class is one table read; the
//! DFA's search was about half of the counting time.
//!
//! A char's class comes from `build.rs`, which reads it from the same
//! regex-syntax that compiles the patterns (`\p{..}` and `\s`), so both
//! agree on every Unicode version; the tests check every piece end against
//! the DFA.

/// A char's class as the patterns see it.
pub(crate) mod class {
    /// Neither a letter, a number, a mark nor whitespace (punctuation,
    /// symbols, controls, unassigned). Every test below names the others.
    #[allow(dead_code)]
    pub const OTHER: u8 = 0;
    /// `\s` (White_Space).
    pub const SPACE: u8 = 1;
    /// `\p{N}`.
    pub const NUMBER: u8 = 2;
    /// `\p{Ll}`.
    pub const LOWER: u8 = 3;
    /// `\p{Lu}` or `\p{Lt}`.
    pub const UPPER: u8 = 4;
    /// `\p{Lm}` or `\p{Lo}`: in both of o200k's letter classes.
    pub const CASELESS: u8 = 5;
    /// `\p{M}`: in both of o200k's letter classes; for cl100k, `OTHER`.
    pub const MARK: u8 = 6;
}

// ASCII_CLASS: [u8; 128]; STARTS: [u32; _] (ascending, the first 128) and
// CLASSES: [u8; _]: chars from STARTS[i] up to STARTS[i + 1] are of class
// CLASSES[i].
include!(concat!(env!("OUT_DIR"), "/classes.rs"));

/// The class of the char starting at `b[i]` (a char boundary of a `str`)
/// and its length in bytes.
#[inline(always)]
fn at(b: &[u8], i: usize) -> (u8, usize) {
    let b0 = b[i];
    if b0 < 0x80 {
        return (ASCII_CLASS[usize::from(b0)], 1);
    }
    let (cp, len) = decode(b, i, b0);
    (class_of(cp), len)
}

/// The code point starting at `b[i]` (whose first byte `b0` is not ASCII) and
/// its length: `b` is a `str`'s bytes, so the sequence is whole and valid.
#[inline(always)]
fn decode(b: &[u8], i: usize, b0: u8) -> (u32, usize) {
    let cont = |k: usize| u32::from(b[i + k] & 0x3f);
    if b0 < 0xe0 {
        ((u32::from(b0 & 0x1f) << 6) | cont(1), 2)
    } else if b0 < 0xf0 {
        ((u32::from(b0 & 0x0f) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            (u32::from(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    }
}

#[inline]
fn class_of(cp: u32) -> u8 {
    let i = STARTS.partition_point(|&s| s <= cp);
    CLASSES[i - 1]
}

#[inline(always)]
fn is_letter(c: u8) -> bool {
    matches!(c, class::LOWER | class::UPPER | class::CASELESS)
}

/// `[^\r\n\p{L}\p{N}]` (for o200k marks are in it too; so is whitespace).
#[inline(always)]
fn is_prefix(c: u8, b0: u8) -> bool {
    !is_letter(c) && c != class::NUMBER && b0 != b'\r' && b0 != b'\n'
}

/// The end of the run of chars whose class `keep` accepts, from `i`.
#[inline(always)]
fn run_end(b: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
    while i < b.len() {
        let (c, len) = at(b, i);
        if !keep(c) {
            break;
        }
        i += len;
    }
    i
}

/// `\p{N}{1,3}` from `i`, whose char is a number.
#[inline]
fn numbers_end(b: &[u8], mut i: usize) -> usize {
    for _ in 0..3 {
        if i >= b.len() {
            break;
        }
        let (c, len) = at(b, i);
        if c != class::NUMBER {
            break;
        }
        i += len;
    }
    i
}

/// cl100k's whitespace alternatives from `i`, whose char is whitespace: a
/// run that reaches the end of the text (`\s+$`);
/// then up to the run's last `\r` or `\n` (`\s*[\r\n]`, o200k's
/// `\s*[\r\n]+`: the greedy `\s*` gives back chars until one is a
/// newline); else the whole run (`\s+`).
#[inline]
fn whitespace_end(b: &[u8], i: usize) -> usize {
    let end = run_end(b, i, |c| c == class::SPACE);
    if end == b.len() {
        return end;
    }
    match b[i..end].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        Some(nl) => i + nl + 1,
        None => end,
    }
}

/// `(?i:x)` for an ASCII letter `x` at `b[i]`: only `s` has a third case
/// form (U+017F LONG S, `c5 bf`) among the letters the contractions use;
/// the tests check every char.
#[inline]
fn folds_to(b: &[u8], i: usize, x: u8) -> Option<usize> {
    let c = *b.get(i)?;
    if c.to_ascii_lowercase() == x {
        Some(i + 1)
    } else if x == b's' && c == 0xc5 && b.get(i + 1) == Some(&0xbf) {
        Some(i + 2)
    } else {
        None
    }
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` (cl100k's `'(?i:[sdmt]|ll|ve|re)` is the
/// same set) at `i`: where it ends, if it matches.
#[inline]
fn contraction(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\'') {
        return None;
    }
    let i = i + 1;
    for one in [b's', b't', b'm', b'd'] {
        if let Some(e) = folds_to(b, i, one) {
            return Some(e);
        }
    }
    for (x, y) in [(b'r', b'e'), (b'v', b'e'), (b'l', b'l')] {
        if let Some(e) = folds_to(b, i, x).and_then(|e| folds_to(b, e, y)) {
            return Some(e);
        }
    }
    None
}

/// `[^\s\p{L}\p{N}]+` then any of `tail` from `i`, whose char is of that class.
#[inline]
fn punctuation_end(b: &[u8], i: usize, tail: &[u8]) -> usize {
    let mut e = run_end(b, i, |c| {
        c != class::SPACE && c != class::NUMBER && !is_letter(c)
    });
    while e < b.len() && tail.contains(&b[e]) {
        e += 1;
    }
    e
}

/// `' ?[^\s\p{L}\p{N}]+` then `tail`, from `i` whose char is of class `c`.
#[inline]
fn spaced_punctuation_end(b: &[u8], i: usize, c: u8, tail: &[u8]) -> Option<usize> {
    let is_punct = |c: u8| c != class::SPACE && c != class::NUMBER && !is_letter(c);
    if b[i] == b' ' && i + 1 < b.len() && is_punct(at(b, i + 1).0) {
        return Some(punctuation_end(b, i + 1, tail));
    }
    is_punct(c).then(|| punctuation_end(b, i, tail))
}

/// Where cl100k_base's piece that starts at `i` (< `b.len()`) ends:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
/// ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+`.
pub(crate) fn cl100k_end(b: &[u8], i: usize) -> usize {
    let (c, len) = at(b, i);
    if is_letter(c) {
        return run_end(b, i + len, is_letter);
    }
    if let Some(e) = contraction(b, i) {
        return e;
    }
    // Marks are no letters here: `OTHER` for every purpose.
    if is_prefix(c, b[i]) && i + len < b.len() && is_letter(at(b, i + len).0) {
        return run_end(b, i + len, is_letter);
    }
    if c == class::NUMBER {
        return numbers_end(b, i);
    }
    if let Some(e) = spaced_punctuation_end(b, i, c, b"\r\n") {
        return e;
    }
    whitespace_end(b, i)
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
#[inline(always)]
fn is_upperish(c: u8) -> bool {
    matches!(c, class::UPPER | class::CASELESS | class::MARK)
}

/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
#[inline(always)]
fn is_lowerish(c: u8) -> bool {
    matches!(c, class::LOWER | class::CASELESS | class::MARK)
}

/// The end of a contraction at `e`, or `e`.
#[inline]
fn with_contraction(b: &[u8], e: usize) -> usize {
    contraction(b, e).unwrap_or(e)
}

/// o200k's first letter alternative from `i` (after its optional prefix):
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` and an
/// optional contraction. The greedy `*` takes the whole upper run; if a
/// lower letter follows, `+` runs on through lower chars; if not, the `*`
/// gives back up to the run's last char that is also lower (caseless or a
/// mark), which `+` then takes alone.
#[inline]
fn o200k_lower_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut last_lower = None;
    while i < b.len() {
        let (c, len) = at(b, i);
        if c == class::LOWER {
            return Some(with_contraction(b, run_end(b, i + len, is_lowerish)));
        }
        if !is_upperish(c) {
            break;
        }
        i += len;
        if is_lowerish(c) {
            last_lower = Some(i);
        }
    }
    last_lower.map(|e| with_contraction(b, e))
}

/// o200k's second letter alternative from `i`:
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` and an
/// optional contraction.
#[inline]
fn o200k_upper_end(b: &[u8], i: usize) -> Option<usize> {
    let upper = run_end(b, i, is_upperish);
    (upper > i).then(|| with_contraction(b, run_end(b, upper, is_lowerish)))
}

/// Where o200k_base's piece that starts at `i` (< `b.len()`) ends (the
/// pattern is `patterns::O200K_PATTERN`).
pub(crate) fn o200k_end(b: &[u8], i: usize) -> usize {
    let (c, len) = at(b, i);
    // The letter alternatives, in the pattern's order (first with the prefix, then
    // without), tried only where they can start: at a letter or a mark.
    let letterish = |c: u8| c == class::LOWER || is_upperish(c);
    let after_prefix = is_prefix(c, b[i]) && i + len < b.len() && letterish(at(b, i + len).0);
    if after_prefix {
        if let Some(e) = o200k_lower_end(b, i + len) {
            return e;
        }
    }
    if letterish(c) {
        if let Some(e) = o200k_lower_end(b, i) {
            return e;
        }
    }
    if after_prefix {
        if let Some(e) = o200k_upper_end(b, i + len) {
            return e;
        }
    }
    if letterish(c) {
        if let Some(e) = o200k_upper_end(b, i) {
            return e;
        }
    }
    if c == class::NUMBER {
        return numbers_end(b, i);
    }
    if let Some(e) = spaced_punctuation_end(b, i, c, b"\r\n/") {
        return e;
    }
    whitespace_end_o200k(b, i)
}

/// o200k has no `\s+$`: `\s*[\r\n]+` then `\s+`.
#[inline]
fn whitespace_end_o200k(b: &[u8], i: usize) -> usize {
    let end = run_end(b, i, |c| c == class::SPACE);
    match b[i..end].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        Some(nl) => i + nl + 1,
        None => end,
    }
}
