//! A byte-pair-encoding token counter that gives exactly tiktoken's
//! `encode_ordinary(text).len()`, built to start in a few milliseconds.
//!
//! tiktoken-rs builds its encoder from base64 text on every start (~150 ms
//! for o200k: decoding, two 200k-entry hash maps, a sorted copy, 256 regex
//! clones). Here the rank table and its hash index come flat from build
//! time (`build.rs`) and are read in place: a run only compiles one regex.
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
//! Every char starts a match (it is a letter, a number, whitespace or
//! something else, and each has an alternative), so matches are contiguous
//! and each search is anchored where the previous piece ended.
//!
//! # Merging
//!
//! [`Vocab::count_piece`] is tiktoken's `byte_pair_encode` (MIT, OpenAI),
//! ported to count instead of collect: the quadratic scan under 100 bytes,
//! the heap above, the same tie-break (lowest rank, then leftmost).

use std::collections::BinaryHeap;

mod index;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson;
use regex_automata::{Anchored, Input};

/// One encoding: its ranks and its pre-tokenizer.
pub struct Tokenizer {
    vocab: Vocab,
    /// A lazy DFA: no capture groups, no reverse automaton (every search is
    /// anchored), so it compiles in about a millisecond.
    regex: DFA,
    /// The pattern has newline alternatives (o200k, cl100k).
    newline_alts: bool,
}

impl Tokenizer {
    /// `tokens`, `ends` and `index` as `build.rs` writes them; `pattern` is
    /// tiktoken's with `\s+(?!\S)` and the alternative after it replaced by
    /// `\s+` (module docs).
    pub fn new(
        tokens: &'static [u8],
        ends: &'static [u8],
        index: &'static [u8],
        pattern: &str,
        newline_alts: bool,
    ) -> Result<Tokenizer, String> {
        let regex = DFA::builder()
            .thompson(thompson::Config::new().which_captures(thompson::WhichCaptures::None))
            .build(pattern)
            .map_err(|e| format!("bad pre-tokenizer pattern: {e}"))?;
        Ok(Tokenizer {
            vocab: Vocab::new(tokens, ends, index)?,
            regex,
            newline_alts,
        })
    }

    /// A counter for one thread (it owns the regex's scratch space).
    pub fn counter(&self) -> Counter<'_> {
        Counter {
            tok: self,
            cache: self.regex.create_cache(),
            parts: Vec::new(),
        }
    }

    /// Whether `rank` is an ordinary token of this encoding (tests).
    pub fn token_bytes(&self, rank: u32) -> Option<&[u8]> {
        self.vocab.token(rank as usize).filter(|t| !t.is_empty())
    }
}

pub struct Counter<'a> {
    tok: &'a Tokenizer,
    cache: Cache,
    parts: Vec<(usize, u32)>,
}

impl Counter<'_> {
    /// The number of tokens `encode_ordinary(text)` gives.
    pub fn count(&mut self, text: &str) -> Result<usize, String> {
        let len = text.len();
        let mut pos = 0;
        let mut total = 0;
        while pos < len {
            let input = Input::new(text).range(pos..).anchored(Anchored::Yes);
            let end = match self.tok.regex.try_search_fwd(&mut self.cache, &input) {
                Ok(Some(m)) if m.offset() > pos => m.offset(),
                // Unreachable by the argument in the module docs.
                _ => return Err(format!("the pre-tokenizer found no piece at byte {pos}")),
            };
            let end = self.lookahead_end(text, pos, end);
            total += self
                .tok
                .vocab
                .count_piece(&text.as_bytes()[pos..end], &mut self.parts)?;
            pos = end;
        }
        Ok(total)
    }

    /// Where `\s+(?!\S)` would have ended the match `text[start..end]`.
    fn lookahead_end(&self, text: &str, start: usize, end: usize) -> usize {
        if end == text.len() {
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

const NONE: u32 = u32::MAX;

/// The ranks, as compiled in: token bytes in rank order, each rank's end
/// offset, and the hash index from bytes to rank (all read in place, so
/// nothing is built at run time).
struct Vocab {
    tokens: &'static [u8],
    /// Little-endian u32 per rank: where its bytes end in `tokens`.
    ends: &'static [u8],
    /// Little-endian u32 per slot: `rank + 1`, or 0 for an empty slot.
    index: &'static [u8],
}

#[inline]
fn u32_at(table: &[u8], i: usize) -> u32 {
    let b = &table[i * 4..i * 4 + 4];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

impl Vocab {
    fn new(
        tokens: &'static [u8],
        ends: &'static [u8],
        index: &'static [u8],
    ) -> Result<Vocab, String> {
        let slots = index.len() / 4;
        let ranks = ends.len() / 4;
        // Cheap checks that the three tables belong together; probing relies on them.
        let fits = ends.len().is_multiple_of(4)
            && index.len().is_multiple_of(4)
            && slots.is_power_of_two()
            && slots > ranks
            && ranks > 0
            && u32_at(ends, ranks - 1) as usize == tokens.len();
        if !fits {
            return Err("the compiled-in rank table is inconsistent".into());
        }
        Ok(Vocab {
            tokens,
            ends,
            index,
        })
    }

    fn token(&self, rank: usize) -> Option<&'static [u8]> {
        if rank >= self.ends.len() / 4 {
            return None;
        }
        let start = if rank == 0 {
            0
        } else {
            u32_at(self.ends, rank - 1) as usize
        };
        self.tokens.get(start..u32_at(self.ends, rank) as usize)
    }

    #[inline]
    fn rank(&self, bytes: &[u8]) -> u32 {
        let slots = self.index.len() / 4;
        let mut i = index::slot(bytes, slots);
        loop {
            let e = u32_at(self.index, i);
            if e == 0 {
                return NONE;
            }
            if self.token((e - 1) as usize) == Some(bytes) {
                return e - 1;
            }
            i = (i + 1) & (slots - 1);
        }
    }

    /// Tokens in one pre-tokenized piece.
    fn count_piece(&self, piece: &[u8], parts: &mut Vec<(usize, u32)>) -> Result<usize, String> {
        if piece.len() <= 1 || self.rank(piece) != NONE {
            return Ok(piece.len().min(1));
        }
        if piece.len() < 100 {
            Ok(self.merge_small(piece, parts))
        } else {
            self.merge_large(piece)
        }
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
    fn merge_large(&self, piece: &[u8]) -> Result<usize, String> {
        use std::cmp::Reverse;
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
        Ok(count)
    }
}
