//! The form of an encoding's tables that the binary carries and reads in
//! place: `build.rs` lays them out ([`pack`]) and `bpe` slices them
//! ([`Layout::parse`]) without copying, inflating or hashing anything. Both
//! include this file. Standard library only.
//!
//! Every token lives in one slot of a perfect hash ([`index::slot_of`]):
//! the lookup of a piece's bytes is one hash, one pilot, one entry and one
//! comparison, whether the bytes are a token or not. The token bytes are
//! stored in slot order, so an entry needs only where its bytes end within
//! its block of [`index::BLOCK`] slots; the block's offset is stored once.
//!
//! Layout, integers little-endian: a header of six u32 (`MAGIC`, ranks,
//! buckets, slots, token bytes, 0); the pilots (u16 per bucket, padded to 4
//! bytes); the entries (u32 per slot: `rank << END_BITS | end in block`,
//! `NONE_RANK` for an empty slot); the block offsets (u32 per block, plus one
//! for the end); then the token bytes. What only the linear-time count of
//! long pieces reads is not stored (0.45 MB for both encodings): each rank's
//! longest strict prefix that is a token ([`derive_prefixes`]) and the tables
//! of longest lengths by a token's first three bytes and of two-byte tokens
//! ([`short_tables`]), made on the first long piece, and a rank's merge parts
//! ([`last_merge`]), found when a long piece first asks for them.

use super::index;

/// Marks "no rank" in `split` and `prefix`.
pub const NONE: u32 = u32::MAX;
/// In `build.rs`'s merge parts: a single byte, made of nothing.
#[allow(dead_code)] // build.rs only
pub const BASE: u32 = u32::MAX - 1;
/// Bytes of the table of pairs that are tokens (one bit per two bytes).
pub const PAIRS_LEN: usize = 1 << 13;
/// The first word of the layout (its version: "BPE4").
pub const MAGIC: u32 = u32::from_le_bytes(*b"BPE4");
/// The rank an empty slot's entry holds (no token has it).
pub const NONE_RANK: u32 = u32::MAX >> index::END_BITS;
const HEADER: usize = 6 * 4;

/// An encoding's tables, sliced from the compiled-in bytes.
#[derive(Clone, Copy)]
pub struct Layout<'a> {
    pub ranks: usize,
    pub pilots: &'a [u8],
    pub entries: &'a [u8],
    pub blocks: &'a [u8],
    pub tokens: &'a [u8],
}

#[inline]
fn u32_at(table: &[u8], i: usize) -> u32 {
    let b = &table[i * 4..i * 4 + 4];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

impl<'a> Layout<'a> {
    /// Slices [`pack`]'s bytes; an error names what does not fit.
    pub fn parse(bytes: &'a [u8]) -> Result<Layout<'a>, String> {
        let broken = |what: &str| format!("the compiled-in rank table is broken ({what})");
        if bytes.len() < HEADER || u32_at(bytes, 0) != MAGIC {
            return Err(broken("no header"));
        }
        let field = |i: usize| u32_at(bytes, i) as usize;
        let (ranks, buckets, slots, token_bytes) = (field(1), field(2), field(3), field(4));
        if ranks == 0 || buckets == 0 || slots == 0 || !slots.is_multiple_of(index::BLOCK) {
            return Err(broken("sizes"));
        }
        let lens = [
            (buckets * 2).next_multiple_of(4),
            slots * 4,
            (slots / index::BLOCK + 1) * 4,
            token_bytes,
        ];
        if bytes.len() != HEADER + lens.iter().sum::<usize>() {
            return Err(broken("length"));
        }
        let mut at = HEADER;
        let mut next = |len: usize| {
            let s = &bytes[at..at + len];
            at += len;
            s
        };
        let layout = Layout {
            ranks,
            pilots: &next(lens[0])[..buckets * 2],
            entries: next(lens[1]),
            blocks: next(lens[2]),
            tokens: next(lens[3]),
        };
        if u32_at(layout.blocks, slots / index::BLOCK) as usize != token_bytes {
            return Err(broken("token bytes"));
        }
        Ok(layout)
    }

    pub fn slots(&self) -> usize {
        self.entries.len() / 4
    }

    /// Where slot `s`'s token bytes lie in `tokens` (empty for an empty slot).
    #[inline]
    pub fn bytes_range(&self, s: usize) -> std::ops::Range<usize> {
        let mask = (1 << index::END_BITS) - 1;
        let base = u32_at(self.blocks, s / index::BLOCK) as usize;
        let start = if s.is_multiple_of(index::BLOCK) {
            0
        } else {
            (u32_at(self.entries, s - 1) & mask) as usize
        };
        base + start..base + (u32_at(self.entries, s) & mask) as usize
    }

    /// The rank slot `s` holds, `NONE_RANK` if empty.
    #[inline]
    pub fn rank_at(&self, s: usize) -> u32 {
        u32_at(self.entries, s) >> index::END_BITS
    }

    /// The rank of `bytes`, `NONE` if they are no token: one probe.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> u32 {
        let h = index::hash(bytes);
        let b = index::bucket(h, self.pilots.len() / 2);
        let pilot = u16::from_le_bytes([self.pilots[b * 2], self.pilots[b * 2 + 1]]);
        let s = index::slot_of(h, pilot, self.slots());
        match self.tokens.get(self.bytes_range(s)) {
            Some(t) if !bytes.is_empty() && index::same_bytes(t, bytes) => self.rank_at(s),
            _ => NONE,
        }
    }
}

/// Lays out the tables (see the module docs). `tokens`/`ends` are the token
/// bytes in rank order and where each rank's end (an unused rank is empty).
/// Panics (failing the build) if no pilot places a bucket.
#[allow(dead_code)] // build.rs only
pub fn pack(tokens: &[u8], ends: &[u32]) -> Vec<u8> {
    let ranks = ends.len();
    let range = |r: usize| (if r == 0 { 0 } else { ends[r - 1] as usize })..ends[r] as usize;
    let used: Vec<usize> = (0..ranks).filter(|&r| !range(r).is_empty()).collect();
    assert!(
        ranks < NONE_RANK as usize && used.iter().all(|&r| range(r).len() <= 128),
        "a rank or a token too large for an entry"
    );
    // Slightly more slots than tokens: the last buckets then find free slots quickly.
    let slots = (used.len() * 100 / 97).next_multiple_of(index::BLOCK);
    let buckets = used.len().div_ceil(index::BUCKET_KEYS);
    let hashes: Vec<u64> = used
        .iter()
        .map(|&r| index::hash(&tokens[range(r)]))
        .collect();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); buckets];
    for (i, &h) in hashes.iter().enumerate() {
        members[index::bucket(h, buckets)].push(i);
    }
    let mut order: Vec<usize> = (0..buckets).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(members[b].len()));
    let mut pilots = vec![0u16; buckets];
    let mut slot_rank = vec![NONE_RANK; slots];
    let mut taken = Vec::new();
    for b in order {
        if members[b].is_empty() {
            continue;
        }
        let pilot = (0..=u16::MAX)
            .find(|&p| {
                taken.clear();
                members[b].iter().all(|&i| {
                    let s = index::slot_of(hashes[i], p, slots);
                    let free = slot_rank[s] == NONE_RANK && !taken.contains(&s);
                    taken.push(s);
                    free
                })
            })
            .expect("no pilot places a bucket of the perfect hash");
        pilots[b] = pilot;
        for &i in &members[b] {
            slot_rank[index::slot_of(hashes[i], pilot, slots)] = used[i] as u32;
        }
    }

    let mut out = Vec::new();
    let mut blob = Vec::with_capacity(tokens.len());
    for word in [
        MAGIC,
        ranks as u32,
        buckets as u32,
        slots as u32,
        tokens.len() as u32,
        0,
    ] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for p in &pilots {
        out.extend_from_slice(&p.to_le_bytes());
    }
    out.resize(
        out.len() + (buckets * 2).next_multiple_of(4) - buckets * 2,
        0,
    );
    let mut blocks = Vec::with_capacity(slots / index::BLOCK + 1);
    for (s, &r) in slot_rank.iter().enumerate() {
        if s % index::BLOCK == 0 {
            blocks.push(blob.len() as u32);
        }
        if r != NONE_RANK {
            blob.extend_from_slice(&tokens[range(r as usize)]);
        }
        let end = (blob.len() - *blocks.last().unwrap() as usize) as u32;
        assert!(end < 1 << index::END_BITS, "a block's tokens too long");
        out.extend_from_slice(&(r << index::END_BITS | end).to_le_bytes());
    }
    blocks.push(blob.len() as u32);
    for b in blocks {
        out.extend_from_slice(&b.to_le_bytes());
    }
    out.extend_from_slice(&blob);
    out
}

/// Each rank's longest strict prefix that is a token (`NONE`: none).
/// `token(r)` is rank r's bytes (empty for an unused rank); `rank(bytes)` is
/// the rank of a token's bytes or `NONE`. A rank lookup per prefix: some
/// milliseconds, which only long pieces pay.
pub fn derive_prefixes<'a>(
    ranks: usize,
    token: impl Fn(usize) -> &'a [u8],
    rank: impl Fn(&[u8]) -> u32,
) -> Vec<u32> {
    (0..ranks)
        .map(|r| {
            let t = token(r);
            (1..t.len())
                .rev()
                .map(|n| rank(&t[..n]))
                .find(|&p| p != NONE)
                .unwrap_or(NONE)
        })
        .collect()
}

/// From every token's bytes: per slot of its first three bytes
/// ([`index::head_slot`]) the length of the longest token starting with them
/// (0: no token of three bytes or more; slots are shared, so it is an upper
/// bound), and one bit per two bytes (`b0 << 8 | b1`) that are a token.
pub fn short_tables<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> (Vec<u8>, Vec<u8>) {
    let mut longest = vec![0u8; 1 << index::HEAD_BITS];
    let mut pairs = vec![0u8; PAIRS_LEN];
    for t in tokens {
        if let [b0, b1] = *t {
            let pair = usize::from(b0) << 8 | usize::from(b1);
            pairs[pair / 8] |= 1 << (pair % 8);
        } else if let [b0, b1, b2, ..] = *t {
            // Tokens are at most 128 bytes (`pack` checks it).
            let len = u8::try_from(t.len()).unwrap_or(u8::MAX);
            let slot = &mut longest[index::head_slot(b0, b1, b2)];
            *slot = (*slot).max(len);
        }
    }
    (longest, pairs)
}

/// tiktoken's merge (lowest rank first, leftmost on ties) on a token's bytes
/// `t`: the two parts it had just before becoming one, or `None` if it never
/// does (shorter than two bytes, or bytes that are no token: `build.rs` fails
/// on a vocabulary where a token's own bytes do not merge into it). Quadratic
/// in `t`'s length, at most 128 bytes.
pub fn last_merge(t: &[u8], rank: impl Fn(&[u8]) -> u32) -> Option<(u32, u32)> {
    if t.len() < 2 {
        return None;
    }
    let mut bounds: Vec<usize> = (0..=t.len()).collect();
    while bounds.len() > 3 {
        let (best, i) = (0..bounds.len() - 2)
            .map(|i| (rank(&t[bounds[i]..bounds[i + 2]]), i))
            .min()?;
        if best == NONE {
            return None;
        }
        bounds.remove(i + 1);
    }
    Some((rank(&t[..bounds[1]]), rank(&t[bounds[1]..])))
}
