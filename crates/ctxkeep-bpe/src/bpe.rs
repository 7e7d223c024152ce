//! A byte-pair-encoding token counter that gives exactly tiktoken's
//! `encode_ordinary(text).len()`, built to start in a few milliseconds.
//!
//! tiktoken-rs builds its encoder from base64 text on every start (~150 ms
//! for o200k: decoding, two 200k-entry hash maps, a sorted copy, 256 regex
//! clones). Here the rank tables (a perfect hash, `bpe/packed.rs`) and the
//! pre-tokenizer's DFA come from build time (`build.rs`) and are read in
//! place: nothing is decoded, inflated, hashed or compiled to count a small
//! text; a large one builds a lazy DFA (about a millisecond) for its faster
//! search.
//! The tables and patterns are chosen in `lib.rs`.
//!
//! # Pre-tokenizer
//!
//! tiktoken splits the text with a regex, then merges each piece. Its
//! patterns need `fancy-regex` for one alternative only, `\s+(?!\S)`. We
//! run the rest on `regex-automata`'s DFA (linear time, no backtracking
//! stack, so no failure on a million spaces either), with `\s+(?!\S)` and
//! the alternative after it (`\s+` in o200k, `\s` in the others) replaced
//! by one `\s+`, and correct its match afterwards:
//! * That alternative is tried last, after the newline alternatives
//!   (`\s*[\r\n]+` in o200k, `\s*[\r\n]` in cl100k, which win whenever the
//!   whitespace run from here has a newline) and `\s++$` (which wins at the
//!   end of the text). So it runs to the end of a newline-free whitespace
//!   run (any run in p50k/r50k), which a non-space char follows.
//! * There `\s+(?!\S)` would have given back the run's last char (when the
//!   run has two or more), and `\s` / `\s+` would have matched a single char.
//!   So: a match that ends in whitespace, has no `\r`/`\n` (o200k, cl100k),
//!   is followed by text and holds two or more chars loses its last char.
//!   No other alternative ends in whitespace without a newline.
//! * The possessive quantifiers of cl100k/p50k (`?+`, `++`, `*+`) never give
//!   back anything a greedy one would in these patterns (what follows them
//!   cannot match what they hold), so plain greedy ones match the same.
//!
//! o200k_base and cl100k_base, which is nearly all counting, do not run the
//! DFA: `split.rs` writes their two patterns out by hand (a class table read
//! per char, no state machine), and a test holds every piece end to the
//! DFA's. The DFA was about half of the counting time.
//!
//! Every char starts a match (it is a letter, a number, whitespace or
//! something else, and each has an alternative), so matches are contiguous
//! and each search is anchored where the previous piece ended.
//!
//! # Merging
//!
//! [`Vocab::count_piece`] is tiktoken's `byte_pair_encode` (MIT, OpenAI),
//! ported to count instead of collect: the quadratic scan under 100 bytes,
//! the heap above, the same tie-break (lowest rank, then leftmost). Pieces
//! over 17 KiB (run-on text: a long word, a line of `=`, a run of spaces)
//! are counted in linear time instead ([`Vocab::count_long`]): the heap is
//! O(n log n) there and 4 MB of one letter took 5.8 times as long as 1 MB.

mod index;
mod packed;
mod split;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use regex_automata::dfa::{sparse, Automaton};
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson;
use regex_automata::{Anchored, HalfMatch, Input, MatchError};

/// Texts from this long are split with the lazy DFA, whose search is faster
/// once built (about a millisecond); shorter ones with the compiled-in one.
const LAZY_FROM: usize = 64 * 1024;

/// Where the piece that starts at a byte of a text ends.
pub(crate) type PieceEnd = fn(&[u8], usize) -> usize;

/// The hand-written pre-tokenizer of o200k_base (`split.rs`).
pub(crate) const O200K_SPLIT: PieceEnd = split::o200k_end;
/// The hand-written pre-tokenizer of cl100k_base (`split.rs`).
pub(crate) const CL100K_SPLIT: PieceEnd = split::cl100k_end;

/// One encoding: its ranks and its pre-tokenizer ([`crate::tokenizer`]).
pub struct Tokenizer {
    vocab: Vocab,
    /// The pre-tokenizer written out by hand (o200k, cl100k), which the
    /// DFAs below then never run for.
    by_hand: Option<PieceEnd>,
    /// The pre-tokenizer as `build.rs` compiled it (a sparse DFA, anchored
    /// searches only), read in place: nothing is built to count a small
    /// text. Only the encodings without `by_hand` have one.
    compiled: Option<sparse::DFA<&'static [u8]>>,
    /// The same pattern as a lazy DFA (no capture groups, no reverse
    /// automaton), built for the first large text.
    lazy: OnceLock<Result<DFA, String>>,
    pattern: &'static str,
    /// The pattern has newline alternatives (o200k, cl100k).
    newline_alts: bool,
}

impl Tokenizer {
    /// `tables` and `dfa` as `build.rs` writes them from `pattern`, which is
    /// tiktoken's with `\s+(?!\S)` and the alternative after it replaced by
    /// `\s+` (module docs); `by_hand` splits as `pattern` does, and then
    /// there is no `dfa`.
    pub(crate) fn new(
        tables: Tables,
        split: Result<PieceEnd, &'static [u8]>,
        pattern: &'static str,
        newline_alts: bool,
    ) -> Result<Tokenizer, String> {
        // SAFETY: `dfa` is what `build.rs` serialized for this target with `to_sparse` and
        // `to_bytes_*_endian`, with the same regex-automata (the build and the run resolve to
        // one version of it); `from_bytes` would check every transition again, which cost
        // more than counting a small text. Its basic checks (format, version, byte order) still
        // run, and a test checks the whole DFA with `from_bytes`.
        let (by_hand, compiled) = match split {
            Ok(by_hand) => (Some(by_hand), None),
            Err(dfa) => {
                let (compiled, _) = unsafe { sparse::DFA::from_bytes_unchecked(dfa) }
                    .map_err(|e| format!("the compiled-in pre-tokenizer is broken: {e}"))?;
                (None, Some(compiled))
            }
        };
        Ok(Tokenizer {
            vocab: Vocab::new(tables)?,
            by_hand,
            compiled,
            lazy: OnceLock::new(),
            pattern,
            newline_alts,
        })
    }

    /// The lazy DFA, built on first use.
    fn lazy(&self) -> Result<&DFA, String> {
        self.lazy
            .get_or_init(|| {
                DFA::builder()
                    .thompson(thompson::Config::new().which_captures(thompson::WhichCaptures::None))
                    .build(self.pattern)
                    .map_err(|e| format!("bad pre-tokenizer pattern: {e}"))
            })
            .as_ref()
            .map_err(String::clone)
    }

    /// A counter for one thread (it owns the lazy DFA's scratch space).
    pub fn counter(&self) -> Counter<'_> {
        Counter {
            tok: self,
            cache: None,
            scratch: Scratch::default(),
        }
    }
}

/// Counts texts with one [`Tokenizer`], on one thread.
pub struct Counter<'a> {
    tok: &'a Tokenizer,
    /// The lazy DFA's scratch space, made for the first large text.
    cache: Option<Cache>,
    scratch: Scratch,
}

/// Buffers the merges reuse from piece to piece.
#[derive(Default)]
struct Scratch {
    /// `merge_small`: (start, rank of the pair starting there).
    parts: Vec<(usize, u32)>,
    /// `merge_large`: where each token ends.
    ends: Vec<u32>,
    /// `count_backtracking`: the tokens chosen so far, as (rank, start).
    chosen: Vec<(u32, u32)>,
    /// `count_backtracking`: one bit per position, set once no encoding can
    /// continue from there.
    dead: Vec<u64>,
    /// How many pieces `count_windowed` handed to `count_backtracking`.
    #[cfg(test)]
    fallbacks: usize,
    /// Recent answers of `is_valid_pair`, which depend on the
    /// two ranks only (run-on text asks about the same few pairs again and
    /// again). Direct-mapped: `(left << 32 | right, answer)`.
    pairs: Vec<(u64, bool)>,
}

/// Slots of the pair-answer cache (64 KiB).
const PAIR_CACHE: usize = 4096;

impl Scratch {
    /// `vocab.is_valid_pair`, remembered.
    #[inline]
    fn is_valid_pair(
        &mut self,
        vocab: &Vocab,
        text: &[u8],
        at: usize,
        left: u32,
        right: u32,
    ) -> bool {
        if self.pairs.is_empty() {
            // (NONE, NONE) is no pair of tokens, so it marks an empty slot.
            self.pairs = vec![(u64::MAX, false); PAIR_CACHE];
        }
        let key = u64::from(left) << 32 | u64::from(right);
        let slot = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52) as usize;
        let entry = &mut self.pairs[slot];
        if entry.0 != key {
            *entry = (key, vocab.is_valid_pair(text, at, left, right));
        }
        entry.1
    }
}

impl Counter<'_> {
    /// The number of tokens `encode_ordinary(text)` gives.
    pub fn count(&mut self, text: &str) -> Result<usize, crate::Error> {
        self.count_pieces(text)
            .map_err(|reason| crate::Error::Failed {
                bytes: text.len(),
                reason,
            })
    }

    fn count_pieces(&mut self, text: &str) -> Result<usize, String> {
        let tok = self.tok;
        if let Some(by_hand) = tok.by_hand {
            let b = text.as_bytes();
            return self.split_and_count(text, |pos| Ok(by_hand(b, pos)));
        }
        if let (Some(compiled), true) = (&tok.compiled, text.len() < LAZY_FROM) {
            return self.split_and_count(text, |pos| {
                piece_end(pos, compiled.try_search_fwd(&anchored(text, pos)))
            });
        }
        self.count_by_lazy_dfa(text)
    }

    fn count_by_lazy_dfa(&mut self, text: &str) -> Result<usize, String> {
        let lazy = self.tok.lazy()?;
        let mut cache = self.cache.take().unwrap_or_else(|| lazy.create_cache());
        let total = self.split_and_count(text, |pos| {
            piece_end(pos, lazy.try_search_fwd(&mut cache, &anchored(text, pos)))
        });
        self.cache = Some(cache);
        total
    }

    /// Splits `text` into pieces with `piece_end` (where the piece starting
    /// at a byte ends) and counts each.
    fn split_and_count(
        &mut self,
        text: &str,
        mut piece_end: impl FnMut(usize) -> Result<usize, String>,
    ) -> Result<usize, String> {
        let len = text.len();
        let mut pos = 0;
        let mut total = 0;
        while pos < len {
            let end = piece_end(pos)?;
            let end = self.lookahead_end(text, pos, end);
            total += self
                .tok
                .vocab
                .count_piece(&text.as_bytes()[pos..end], &mut self.scratch)?;
            pos = end;
        }
        Ok(total)
    }

    /// Where `\s+(?!\S)` would have ended the match `text[start..end]`.
    #[inline]
    fn lookahead_end(&self, text: &str, start: usize, end: usize) -> usize {
        if end == text.len() {
            return end;
        }
        // Most pieces end in an ASCII char that is not whitespace (U+0009..U+000D, U+0020).
        let last_byte = text.as_bytes()[end - 1];
        if last_byte < 0x80 && !matches!(last_byte, b'\t'..=b'\r' | b' ') {
            return end;
        }
        let piece = &text[start..end];
        let Some(last) = piece.chars().next_back() else {
            return end;
        };
        if !last.is_whitespace() || last.len_utf8() == piece.len() {
            return end;
        }
        if self.tok.newline_alts && piece.bytes().any(|b| b == b'\r' || b == b'\n') {
            return end;
        }
        end - last.len_utf8()
    }
}

/// An anchored search of `text` from `pos`.
fn anchored(text: &str, pos: usize) -> Input<'_> {
    Input::new(text).range(pos..).anchored(Anchored::Yes)
}

/// The end of a DFA's match from `pos`, which is never empty.
fn piece_end(pos: usize, found: Result<Option<HalfMatch>, MatchError>) -> Result<usize, String> {
    match found {
        Ok(Some(m)) if m.offset() > pos => Ok(m.offset()),
        // Unreachable by the argument in the module docs.
        _ => Err(format!("the pre-tokenizer found no piece at byte {pos}")),
    }
}

/// Pieces shorter than this get tiktoken's quadratic merge, which is the
/// fastest there.
const SMALL_PIECE: usize = 100;
/// Long pieces are merged this many bytes at a time ([`Vocab::count_windowed`]):
/// measured, tiktoken's heap merge beats the backtracking search on pieces
/// of this size on every text tried but runs of one letter or of spaces.
const WINDOW: usize = 16 * 1024;
/// How much of each window is merged again with the next one.
const MARGIN: usize = 1024;

const NONE: u32 = u32::MAX;
/// In the split table: a single byte, made of nothing.
const BASE: u32 = u32::MAX - 1;
/// In the split table: parts not looked for yet (no rank is `NONE` twice
/// but an unused one's, which is never asked about).
const UNKNOWN: u64 = u64::MAX;

/// One encoding's tables as `build.rs` laid them out, read in place.
pub(crate) type Tables = packed::Layout<'static>;

/// What only the linear-time count of long pieces reads, made on its first
/// use: a rank lookup per prefix would cost every count some milliseconds,
/// and storing them in the binary cost 0.45 MB.
struct Parts {
    /// Per rank: the (left, right) ranks whose merge made it (`left << 32 |
    /// right`; `BASE` twice for a single byte), found the first time a long
    /// piece asks ([`packed::last_merge`]: a run-on piece asks about a few
    /// ranks again and again, and finding all 200,000 took some 100 ms).
    /// `UNKNOWN` until then; threads that find one at once store the same.
    split: Vec<AtomicU64>,
    /// Per rank: the longest token that is a strict prefix of it, or `NONE`.
    prefix: Vec<u32>,
    /// Per slot of a token's first three bytes ([`index::head_slot`]): an
    /// upper bound on the length of a token starting with them (0: none of
    /// three bytes or more).
    longest: Vec<u8>,
    /// One bit per two bytes (`b0 << 8 | b1`): whether they are a token.
    pairs: Vec<u8>,
    /// Per rank: its slot in the tables (`NONE`: an unused rank), whose
    /// bytes the rank's are (the tests read tokens by rank).
    #[cfg_attr(not(test), allow(dead_code))]
    slot: Vec<u32>,
    /// Per rank: the length of its bytes.
    lens: Vec<u8>,
}

/// The ranks, read in place from the compiled-in tables (nothing is built
/// at run time but the 256 single-byte ranks).
struct Vocab {
    t: Tables,
    byte_rank: [u32; 256],
    parts: OnceLock<Result<Parts, String>>,
}

impl Vocab {
    fn new(t: Tables) -> Result<Vocab, String> {
        let mut vocab = Vocab {
            t,
            byte_rank: [NONE; 256],
            parts: OnceLock::new(),
        };
        for b in 0..=255u8 {
            vocab.byte_rank[usize::from(b)] = vocab.rank(&[b]);
        }
        if vocab.byte_rank.contains(&NONE) {
            return Err("the compiled-in rank table lacks a single byte".into());
        }
        Ok(vocab)
    }

    /// A rank's bytes (`None` for an unused or unknown rank).
    #[cfg(test)]
    fn token(&self, rank: usize) -> Option<&'static [u8]> {
        let slot = *self.parts().ok()?.slot.get(rank)?;
        (slot != NONE).then(|| &self.t.tokens[self.t.bytes_range(slot as usize)])
    }

    #[inline]
    fn rank(&self, bytes: &[u8]) -> u32 {
        self.t.rank(bytes)
    }

    /// Tokens in one pre-tokenized piece.
    fn count_piece(&self, piece: &[u8], scratch: &mut Scratch) -> Result<usize, String> {
        if piece.len() <= 1 || self.rank(piece) != NONE {
            return Ok(piece.len().min(1));
        }
        if piece.len() < SMALL_PIECE {
            Ok(self.merge_small(piece, &mut scratch.parts))
        } else if piece.len() <= WINDOW + MARGIN {
            self.merge_large(piece, &mut scratch.ends)
        } else {
            self.count_long(piece, scratch)
        }
    }

    /// The length of a used rank's bytes (long pieces only: it reads [`Parts`]).
    #[inline]
    fn len(&self, rank: u32) -> usize {
        self.parts()
            .map_or(0, |p| usize::from(p.lens[rank as usize]))
    }

    /// The prefixes and bytes of every rank and the short tables, made on
    /// first use.
    fn parts(&self) -> Result<&Parts, String> {
        self.parts
            .get_or_init(|| {
                let t = self.t;
                let mut slot = vec![NONE; t.ranks];
                let mut lens = vec![0u8; t.ranks];
                for s in 0..t.slots() {
                    let r = t.rank_at(s) as usize;
                    if r < t.ranks {
                        slot[r] = s as u32;
                        lens[r] = u8::try_from(t.bytes_range(s).len())
                            .map_err(|_| "the compiled-in rank table is broken (a long token)")?;
                    }
                }
                let token = |r: usize| match slot[r] {
                    NONE => &[][..],
                    s => &t.tokens[t.bytes_range(s as usize)],
                };
                let prefix = packed::derive_prefixes(t.ranks, token, |b| t.rank(b));
                let (longest, pairs) = packed::short_tables((0..t.ranks).map(token));
                Ok(Parts {
                    split: (0..t.ranks).map(|_| AtomicU64::new(UNKNOWN)).collect(),
                    prefix,
                    longest,
                    pairs,
                    slot,
                    lens,
                })
            })
            .as_ref()
            .map_err(String::clone)
    }

    /// The two ranks a used rank was merged from, `None` for a single byte
    /// (or tables that [`Self::parts`] found broken; `count_long` reports them).
    #[inline]
    fn split(&self, rank: u32) -> Option<(u32, u32)> {
        let parts = self.parts().ok()?;
        let cell = &parts.split[rank as usize];
        let mut both = cell.load(Ordering::Relaxed);
        if both == UNKNOWN {
            let slot = parts.slot[rank as usize];
            let (left, right) = match slot {
                NONE => (NONE, NONE),
                s => {
                    let t = &self.t.tokens[self.t.bytes_range(s as usize)];
                    match t.len() {
                        1 => (BASE, BASE),
                        // `build.rs` checked that every token's own bytes merge into it.
                        _ => packed::last_merge(t, |b| self.rank(b)).unwrap_or((NONE, NONE)),
                    }
                }
            };
            both = u64::from(left) << 32 | u64::from(right);
            cell.store(both, Ordering::Relaxed);
        }
        let (left, right) = ((both >> 32) as u32, both as u32);
        (left != BASE && left != NONE).then_some((left, right))
    }

    /// An upper bound on the length of a token that starts with `b0 b1 b2`
    /// (long pieces only: it reads [`Parts`]).
    #[inline]
    fn longest_with_head(&self, b0: u8, b1: u8, b2: u8) -> usize {
        self.parts()
            .map_or(0, |p| usize::from(p.longest[index::head_slot(b0, b1, b2)]))
    }

    /// Whether `b0 b1` is a token (long pieces only: it reads [`Parts`]).
    #[inline]
    fn is_pair_token(&self, b0: u8, b1: u8) -> bool {
        let pair = usize::from(b0) << 8 | usize::from(b1);
        self.parts()
            .is_ok_and(|p| p.pairs[pair / 8] >> (pair % 8) & 1 == 1)
    }

    /// `rank`, skipping the hash probe when the small tables already rule
    /// `bytes` out (most joins tried by `is_valid_pair` are no token).
    #[inline]
    fn rank_filtered(&self, bytes: &[u8]) -> u32 {
        let possible = match *bytes {
            [b0, b1] => self.is_pair_token(b0, b1),
            [b0, b1, b2, ..] => bytes.len() <= self.longest_with_head(b0, b1, b2),
            _ => true,
        };
        if possible {
            self.rank(bytes)
        } else {
            NONE
        }
    }

    /// The longest token `text` (not empty) starts with.
    #[inline]
    fn longest_prefix(&self, text: &[u8]) -> u32 {
        if let [b0, b1, b2, ..] = *text {
            let max = self.longest_with_head(b0, b1, b2).min(text.len());
            for n in (3..=max).rev() {
                let rank = self.rank(&text[..n]);
                if rank != NONE {
                    return rank;
                }
            }
        }
        if let [b0, b1, ..] = *text {
            if self.is_pair_token(b0, b1) {
                return self.rank(&text[..2]);
            }
        }
        self.byte_rank[usize::from(text[0])]
    }

    /// Whether merging `left ++ right` (`left` ends at `at` in `text`, `right`
    /// starts there) gives exactly these two tokens, i.e. no merge across `at`
    /// happens first. Walks both tokens' merges back in time, the later
    /// (higher-ranked) first: while `a` and `b` are the parts touching `at`,
    /// their join would merge if it is a token ranked below the merge that
    /// ends that moment (`limit`; ties go to the leftmost pair).
    fn is_valid_pair(&self, text: &[u8], at: usize, left: u32, right: u32) -> bool {
        let (mut a, mut b) = (left, right);
        let mut limit = NONE;
        loop {
            let join = self.rank_filtered(&text[at - self.len(a)..at + self.len(b)]);
            if join < limit {
                return false;
            }
            // Undo the later (higher-ranked) of the two merges that made `a`
            // and `b`, or the other if that one is a single byte.
            let left_first = a > b;
            let mut undo = |left: bool| {
                if left {
                    limit = a;
                    self.split(a).map(|(_, r)| a = r).is_some()
                } else {
                    // `b` merging with its right neighbour ties with the
                    // join only when the join is leftmost: the join wins.
                    limit = b + 1;
                    self.split(b).map(|(l, _)| b = l).is_some()
                }
            };
            let undone = undo(left_first) || undo(!left_first);
            if !undone {
                return true;
            }
        }
    }

    /// Tokens in a long piece, in time linear in its length: by
    /// [`Self::count_backtracking`] while its guesses are mostly right, else
    /// by [`Self::count_windowed`] with [`WINDOW`] and [`MARGIN`].
    fn count_long(&self, piece: &[u8], scratch: &mut Scratch) -> Result<usize, String> {
        self.parts()?;
        match self.count_backtracking(piece, scratch, true)? {
            Some(count) => Ok(count),
            None => self.count_windowed(piece, scratch, WINDOW, MARGIN),
        }
    }

    /// Tokens in a piece longer than `window + margin`, merged a window at a
    /// time so that each merge stays small (tiktoken's heap merge over a
    /// whole run-on piece is O(n log n), and bound by cache misses).
    ///
    /// BPE's encoding of a text is the one sequence of tokens whose every
    /// neighbouring pair, merged on its own, gives exactly that pair
    /// ([`Self::is_valid_pair`]). Each window's tokens come from a real
    /// merge, so their pairs are right; only the pair across each junction
    /// needs checking. The tokens that end in a window's last `margin`
    /// bytes are merged again with the next window, so the junction falls
    /// where the merge has seen enough on both sides. If a junction check
    /// fails, the piece is counted by [`Self::count_backtracking`], which
    /// is linear too, and exact by the same argument.
    fn count_windowed(
        &self,
        piece: &[u8],
        scratch: &mut Scratch,
        window: usize,
        margin: usize,
    ) -> Result<usize, String> {
        let n = piece.len();
        let mut ends = std::mem::take(&mut scratch.ends);
        let mut start = 0;
        let mut total = 0;
        // The last token counted; it ends at `start`.
        let mut last: Option<u32> = None;
        while start < n {
            let (end, keep_within) = if n - start <= window + margin {
                (n, usize::MAX)
            } else {
                (start + window, window - margin)
            };
            self.merge_large(&piece[start..end], &mut ends)?;
            let first = self.rank(&piece[start..start + ends[0] as usize]);
            if let Some(last) = last {
                if !scratch.is_valid_pair(self, piece, start, last, first) {
                    scratch.ends = ends;
                    #[cfg(test)]
                    {
                        scratch.fallbacks += 1;
                    }
                    return self
                        .count_backtracking(piece, scratch, false)?
                        .ok_or_else(|| "the backtracking count gave up".into());
                }
            }
            let keep = ends
                .iter()
                .take_while(|&&e| e as usize <= keep_within)
                .count()
                .max(1);
            let from = if keep >= 2 {
                ends[keep - 2] as usize
            } else {
                0
            };
            last = Some(self.rank(&piece[start + from..start + ends[keep - 1] as usize]));
            total += keep;
            start += ends[keep - 1] as usize;
        }
        scratch.ends = ends;
        Ok(total)
    }

    /// Tokens in a piece, in time linear in its length whatever the text:
    /// this searches for the sequence of valid pairs (see
    /// [`Self::count_windowed`]) depth first, longest token first, and
    /// never retries a position from which no encoding continues, so each
    /// position is entered and left at most once. The idea and the pair
    /// test are those of GitHub's `bpe` crate (rust-gems, MIT); the tables
    /// they need come from `build.rs`.
    ///
    /// With `give_up`, returns `None` as soon as it tries more than one
    /// candidate token per four bytes (plus a little): the longest-first
    /// guess is then mostly wrong and the windowed merge is faster. Runs of
    /// one letter or of spaces never give up (1 MB of either: ~10 ms here
    /// against ~110 ms windowed).
    fn count_backtracking(
        &self,
        piece: &[u8],
        scratch: &mut Scratch,
        give_up: bool,
    ) -> Result<Option<usize>, String> {
        let n = piece.len();
        if u32::try_from(n).is_err() {
            return Err("a single piece of 4 GiB or more".into());
        }
        let mut chosen = std::mem::take(&mut scratch.chosen);
        let mut dead = std::mem::take(&mut scratch.dead);
        chosen.clear();
        dead.clear();
        dead.resize(n / 64 + 1, 0);
        let is_dead = |dead: &[u64], at: usize| dead[at / 64] >> (at % 64) & 1 == 1;
        let mut pos = 0;
        let mut token = self.longest_prefix(piece);
        let (mut tries, mut furthest) = (0usize, 0usize);
        while pos < n {
            tries += 1;
            furthest = furthest.max(pos);
            if give_up && tries > furthest / 4 + 64 {
                scratch.chosen = chosen;
                scratch.dead = dead;
                return Ok(None);
            }
            let end = pos + self.len(token);
            if !is_dead(&dead, end)
                && chosen
                    .last()
                    .is_none_or(|&(last, _)| scratch.is_valid_pair(self, piece, pos, last, token))
            {
                chosen.push((token, pos as u32));
                pos = end;
                if pos < n {
                    token = self.longest_prefix(&piece[pos..]);
                }
                continue;
            }
            let shorter = self.parts()?.prefix[token as usize];
            if shorter != NONE {
                token = shorter;
                continue;
            }
            // Nothing fits at `pos`: give up the token before it and try
            // that one's shorter prefixes (its end is now dead).
            dead[pos / 64] |= 1 << (pos % 64);
            let Some((last, start)) = chosen.pop() else {
                return Err("no encoding found (the rank tables disagree)".into());
            };
            pos = start as usize;
            token = last;
        }
        let count = chosen.len();
        scratch.chosen = chosen;
        scratch.dead = dead;
        Ok(Some(count))
    }

    /// tiktoken's `_byte_pair_merge`: `parts` holds (start, rank of the pair
    /// starting there); the lowest rank (leftmost on ties) merges first.
    fn merge_small(&self, piece: &[u8], parts: &mut Vec<(usize, u32)>) -> usize {
        parts.clear();
        let mut min = (NONE, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]);
            if rank < min.0 {
                min = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, NONE));
        parts.push((piece.len(), NONE));
        let rank_at = |parts: &[(usize, u32)], i: usize| {
            if i + 3 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0])
            } else {
                NONE
            }
        };
        while min.0 != NONE {
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = rank_at(parts, i - 1);
            }
            parts[i].1 = rank_at(parts, i);
            parts.remove(i + 1);
            min = (NONE, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, i);
                }
            }
        }
        parts.len() - 1
    }

    /// tiktoken's `_byte_pair_merge_large`: the same merges in
    /// O(n log n) with a heap and a linked list of parts. Positions are
    /// `u32` and heap entries one `u64` (rank, then start): half the memory
    /// of the original, which is what long run-on pieces are bound by.
    ///
    /// `ends` gets where each token ends (its parts' list is walked once).
    fn merge_large(&self, piece: &[u8], ends: &mut Vec<u32>) -> Result<usize, String> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        struct Part {
            prev: u32,
            end: u32,
            next_end: u32,
            next_rank: u32,
        }
        let n = u32::try_from(piece.len())
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or("a single piece of 4 GiB or more")?;
        let key = |rank: u32, start: u32| Reverse((u64::from(rank) << 32) | u64::from(start));
        let mut parts: Vec<Part> = Vec::with_capacity(n as usize);
        let mut initial = Vec::with_capacity(n as usize);
        parts.push(Part {
            prev: u32::MAX,
            end: 1,
            next_end: 2,
            next_rank: NONE,
        });
        for i in 0..n - 1 {
            let rank = self.rank(&piece[i as usize..i as usize + 2]);
            if rank != NONE {
                initial.push(key(rank, i));
                parts[i as usize].next_rank = rank;
            }
            parts.push(Part {
                prev: i,
                end: i + 2,
                next_end: i + 3,
                next_rank: NONE,
            });
        }
        // Heapify in O(n) rather than n pushes.
        let mut heap = BinaryHeap::from(initial);
        let potential_merge = |parts: &mut Vec<Part>,
                               heap: &mut BinaryHeap<Reverse<u64>>,
                               start: u32,
                               next_end: u32| {
            let p = &mut parts[start as usize];
            p.next_end = next_end;
            p.next_rank = NONE;
            if next_end <= n {
                let rank = self.rank(&piece[start as usize..next_end as usize]);
                if rank != NONE {
                    heap.push(key(rank, start));
                    p.next_rank = rank;
                }
            }
        };
        let mut count = n as usize;
        while let Some(Reverse(k)) = heap.pop() {
            let (rank, left_start) = ((k >> 32) as u32, k as u32);
            if rank != parts[left_start as usize].next_rank {
                continue; // invalidated by an earlier merge
            }
            let right_start = parts[left_start as usize].end;
            let right_end = parts[left_start as usize].next_end;
            let right_next_end = parts[right_start as usize].next_end;
            parts[left_start as usize].end = right_end;
            count -= 1;
            potential_merge(&mut parts, &mut heap, left_start, right_next_end);
            if (right_end as usize) < parts.len() {
                parts[right_end as usize].prev = left_start;
            }
            if left_start > 0 {
                let prev_start = parts[left_start as usize].prev;
                potential_merge(&mut parts, &mut heap, prev_start, right_end);
            }
            parts[right_start as usize].next_rank = NONE;
        }
        ends.clear();
        let mut at = 0;
        while at < n {
            at = parts[at as usize].end;
            ends.push(at);
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{tokenizer, Encoding};
    use proptest::prelude::*;

    fn vocab(enc: Encoding) -> &'static Vocab {
        &tokenizer(enc).unwrap().vocab
    }

    /// Both linear counts against tiktoken's own heap merge, on one piece;
    /// the windowed one with tiny windows so that it has many junctions.
    /// Returns whether the windowed count fell back, and whether the
    /// backtracking one gave up when allowed to.
    fn assert_same(enc: Encoding, piece: &[u8], window: usize) -> (bool, bool) {
        let v = vocab(enc);
        let heap = v.merge_large(piece, &mut Vec::new()).unwrap();
        let text = String::from_utf8_lossy(piece);
        let mut scratch = Scratch::default();
        let backtracking = v.count_backtracking(piece, &mut scratch, false).unwrap();
        assert_eq!(backtracking, Some(heap), "backtracking, {enc} on {text:?}");
        let budgeted = v.count_backtracking(piece, &mut scratch, true).unwrap();
        if let Some(budgeted) = budgeted {
            assert_eq!(budgeted, heap, "budgeted backtracking, {enc} on {text:?}");
        }
        let windowed = v
            .count_windowed(piece, &mut scratch, window, window / 4)
            .unwrap();
        assert_eq!(windowed, heap, "window {window}, {enc} on {text:?}");
        (scratch.fallbacks > 0, budgeted.is_none())
    }

    fn encoding() -> impl Strategy<Value = Encoding> {
        prop::sample::select(Encoding::built().collect::<Vec<_>>())
    }

    /// Pieces where merges across token boundaries are likeliest: runs of
    /// whole tokens, of a few letters, of one token repeated.
    fn piece(enc: Encoding) -> impl Strategy<Value = Vec<u8>> {
        let ranks = vocab(enc).t.ranks as u32;
        // Unused ranks have no bytes; a piece is never empty.
        let token = move |r: u32| match vocab(enc).token(r as usize) {
            Some(t) if !t.is_empty() => t.to_vec(),
            _ => b"?".to_vec(),
        };
        prop_oneof![
            prop::collection::vec(0..ranks, 1..40)
                .prop_map(move |rs| rs.into_iter().flat_map(token).collect()),
            (
                prop::collection::vec(any::<u8>(), 1..4),
                prop::collection::vec(any::<prop::sample::Index>(), 1..300)
            )
                .prop_map(|(alphabet, picks)| picks
                    .into_iter()
                    .map(|i| *i.get(&alphabet))
                    .collect()),
            (0..ranks, 1..60usize).prop_map(move |(r, k)| token(r).repeat(k)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn linear_counts_equal_heap_merge(
            (enc, piece) in encoding().prop_flat_map(|e| (Just(e), piece(e))),
            window in 16..64usize,
        ) {
            assert_same(enc, &piece, window);
        }
    }

    #[cfg(feature = "legacy-encodings")]
    #[test]
    fn the_compiled_in_pretokenizers_pass_every_check() {
        for (name, bytes) in [
            (
                "p50k_base",
                include_bytes!(concat!(env!("OUT_DIR"), "/p50k_base.dfa")) as &[u8],
            ),
            (
                "r50k_base",
                include_bytes!(concat!(env!("OUT_DIR"), "/r50k_base.dfa")),
            ),
        ] {
            if let Err(e) = sparse::DFA::from_bytes(bytes) {
                panic!("{name}: {e}");
            }
        }
    }

    /// Every piece's end as the tokenizer splits `text` (by hand or by the
    /// compiled-in DFA) and as the lazy DFA of the same pattern does.
    fn piece_ends(enc: Encoding, text: &str) -> (Vec<usize>, Vec<usize>) {
        let tok = tokenizer(enc).unwrap();
        let ends = |end_of: &mut dyn FnMut(usize) -> usize| {
            let mut ends = Vec::new();
            let mut pos = 0;
            while pos < text.len() {
                pos = end_of(pos);
                ends.push(pos);
            }
            ends
        };
        let lazy = tok.lazy().unwrap();
        let mut cache = lazy.create_cache();
        let by_lazy = ends(&mut |pos| {
            piece_end(pos, lazy.try_search_fwd(&mut cache, &anchored(text, pos))).unwrap()
        });
        let used = match (tok.by_hand, &tok.compiled) {
            (Some(by_hand), _) => ends(&mut |pos| by_hand(text.as_bytes(), pos)),
            (None, Some(compiled)) => ends(&mut |pos| {
                piece_end(pos, compiled.try_search_fwd(&anchored(text, pos))).unwrap()
            }),
            (None, None) => unreachable!("{enc} has no pre-tokenizer"),
        };
        (used, by_lazy)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// The pre-tokenizer that counts (o200k's and cl100k's by hand, the
        /// others' DFA built at compile time) ends every piece where the
        /// pattern's DFA does, on the adversarial texts and on any text.
        #[test]
        fn every_pretokenizer_splits_as_its_pattern(
            adversarial in crate::texts::text_strategy(),
            any_text in any::<String>(),
        ) {
            for enc in Encoding::built() {
                for text in [&adversarial, &any_text] {
                    let (used, lazy) = piece_ends(enc, text);
                    prop_assert_eq!(used, lazy, "{} on {:?}", enc, text);
                }
            }
        }
    }

    /// Every char, alone and in the places where the hand-written
    /// pre-tokenizers treat chars apart (a prefix, a letter run, a
    /// contraction, punctuation, whitespace), splits as the pattern does.
    #[test]
    fn the_hand_written_pretokenizers_know_every_char() {
        let mut texts = String::new();
        let flush = |texts: &mut String| {
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let (used, lazy) = piece_ends(enc, texts);
                assert_eq!(used, lazy, "{enc} on {texts:?}");
            }
            texts.clear();
        };
        for c in (0..=0x10_ffffu32).filter_map(char::from_u32) {
            for t in ["a{c}b", "A{c}'S", "'{c}e", "'l{c}", " {c}x", "-{c}/\n"] {
                texts.push_str(&t.replace("{c}", c.encode_utf8(&mut [0; 4])));
                texts.push('\u{1}');
            }
            if texts.len() > 1 << 16 {
                flush(&mut texts);
            }
        }
        flush(&mut texts);
    }

    #[test]
    fn every_token_pair_in_a_window_of_ranks() {
        // Neighbouring ranks were merged at neighbouring times, where a
        // wrong pair test would show first.
        for enc in Encoding::built() {
            let v = vocab(enc);
            let ranks = v.t.ranks;
            for r in (0..ranks - 1).step_by(97) {
                let (Some(a), Some(b)) = (v.token(r), v.token(r + 1)) else {
                    continue;
                };
                assert_same(enc, &[a, b].concat(), 16);
                assert_same(enc, &[b, a, b].concat(), 16);
            }
        }
    }

    #[test]
    fn every_path_is_taken_and_exact() {
        // Long run-on pieces, windowed small: most junctions hold, and a
        // window too small to see a token's context makes some fail (the
        // fallback must then still give tiktoken's count). The budgeted
        // search finishes runs of one letter and gives up on others.
        let (mut fell_back, mut held, mut gave_up, mut finished) = (0, 0, 0, 0);
        for enc in Encoding::built() {
            for unit in ["a", "-", "=", " ", "ab", "的一是", "x_y", "aaab"] {
                for window in [8, 40, 300] {
                    let piece = unit.repeat(3000 / unit.len());
                    let (fell, gave) = assert_same(enc, piece.as_bytes(), window);
                    *(if fell { &mut fell_back } else { &mut held }) += 1;
                    *(if gave { &mut gave_up } else { &mut finished }) += 1;
                }
            }
        }
        assert!(
            fell_back > 0 && held > 0,
            "{fell_back} fell back, {held} held"
        );
        assert!(
            gave_up > 0 && finished > 0,
            "{gave_up} gave up, {finished} finished"
        );
    }
}
