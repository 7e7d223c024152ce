//! The compact form of an encoding's tables that the binary carries.
//! `build.rs` packs them and `bpe` unpacks them on an encoding's first use;
//! both include this file. Standard library only: the caller compresses.
//!
//! The hash index and the rank pairs are what made the tables big (4 bytes
//! per slot or rank), and both follow from the tokens' bytes: the index is
//! rebuilt, and each rank's merge parts and longest prefix are stored as byte
//! lengths, turned back into ranks through the index. Layout, all per rank
//! in rank order: `ranks` (u32 LE), each token's length (u8, 0: unused
//! rank), its longest strict prefix that is a token (u8, 0: none), the
//! length of the left part of its last merge (u8, 0: a single byte or
//! unused), then the `longest` and `pairs` tables as they are, then every
//! token's bytes.

use super::index;

/// Marks "no rank" in `split` and `prefix`.
pub const NONE: u32 = u32::MAX;
/// In `split`: a single byte, made of nothing.
pub const BASE: u32 = u32::MAX - 1;
/// Bytes of the table of pairs that are tokens (one bit per two bytes).
pub const PAIRS_LEN: usize = 1 << 13;

/// An encoding's tables as the engine reads them (integers are u32 LE),
/// but for the merge parts and prefixes, which [`derive_parts`] makes from
/// `prefix_lens` and `left_lens` when a long piece first needs them.
pub struct Unpacked {
    pub tokens: Vec<u8>,
    pub ends: Vec<u8>,
    pub index: Vec<u8>,
    pub longest: Vec<u8>,
    pub pairs: Vec<u8>,
    pub prefix_lens: Vec<u8>,
    pub left_lens: Vec<u8>,
}

/// The compact form of the tables (see the module docs). `split` holds each
/// rank's (left, right) parts, `prefix` its longest prefix rank.
#[allow(dead_code)] // build.rs only
pub fn pack(
    tokens: &[u8],
    ends: &[u32],
    split: &[(u32, u32)],
    prefix: &[u32],
    longest: &[u8],
    pairs: &[u8],
) -> Vec<u8> {
    let ranks = ends.len();
    let len = |r: u32| -> u8 {
        let r = r as usize;
        let start = if r == 0 { 0 } else { ends[r - 1] };
        u8::try_from(ends[r] - start).expect("a token of more than 255 bytes")
    };
    let mut out = Vec::with_capacity(4 + ranks * 3 + longest.len() + pairs.len() + tokens.len());
    out.extend_from_slice(&(ranks as u32).to_le_bytes());
    out.extend((0..ranks as u32).map(len));
    out.extend(prefix.iter().map(|&p| if p == NONE { 0 } else { len(p) }));
    out.extend(
        split
            .iter()
            .map(|&(l, _)| if l >= BASE { 0 } else { len(l) }),
    );
    out.extend_from_slice(longest);
    out.extend_from_slice(pairs);
    out.extend_from_slice(tokens);
    out
}

/// The tables back from [`pack`]'s bytes; an error names what does not fit.
pub fn unpack(bytes: &[u8]) -> Result<Unpacked, String> {
    let broken = |what: &str| format!("the packed rank table is broken ({what})");
    let ranks = bytes
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| broken("no header"))?;
    let head = 4 + ranks * 3;
    let longest_len = 1usize << index::HEAD_BITS;
    if ranks == 0 || bytes.len() < head + longest_len + PAIRS_LEN {
        return Err(broken("too short"));
    }
    let lens = &bytes[4..4 + ranks];
    let prefix_lens = &bytes[4 + ranks..4 + 2 * ranks];
    let left_lens = &bytes[4 + 2 * ranks..head];
    let longest = &bytes[head..head + longest_len];
    let pairs = &bytes[head + longest_len..head + longest_len + PAIRS_LEN];
    let tokens = &bytes[head + longest_len + PAIRS_LEN..];

    let mut ends = Vec::with_capacity(ranks);
    let mut end = 0u32;
    for &l in lens {
        end += u32::from(l);
        ends.push(end);
    }
    if end as usize != tokens.len() {
        return Err(broken("token lengths"));
    }
    let token = |r: usize| {
        let start = if r == 0 { 0 } else { ends[r - 1] as usize };
        &tokens[start..ends[r] as usize]
    };
    for ((&len, &p), &l) in lens.iter().zip(prefix_lens).zip(left_lens) {
        if p >= len.max(1) || l >= len.max(1) {
            return Err(broken("a part longer than its token"));
        }
        if len > 1 && l == 0 {
            return Err(broken("a merged token without parts"));
        }
    }
    let index = index::build(ranks, token);
    let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    Ok(Unpacked {
        tokens: tokens.to_vec(),
        ends: le(&ends),
        index: le(&index),
        longest: longest.to_vec(),
        pairs: pairs.to_vec(),
        prefix_lens: prefix_lens.to_vec(),
        left_lens: left_lens.to_vec(),
    })
}

/// Each rank's merge parts (left, right; `BASE` twice for a single byte,
/// `NONE` twice for an unused rank) and its longest strict prefix that is a
/// token (`NONE`: none), from the lengths [`unpack`] kept. `token(r)` is
/// rank r's bytes; `rank(bytes)` is the rank of a token's bytes or `NONE`.
/// A rank lookup per part: tens of milliseconds, which only long pieces pay.
pub fn derive_parts<'a>(
    prefix_lens: &[u8],
    left_lens: &[u8],
    token: impl Fn(usize) -> &'a [u8],
    rank: impl Fn(&[u8]) -> u32,
) -> Result<(Vec<u32>, Vec<u32>), String> {
    let ranks = prefix_lens.len();
    let mut split = Vec::with_capacity(ranks * 2);
    let mut prefix = Vec::with_capacity(ranks);
    for (r, (&p, &l)) in prefix_lens.iter().zip(left_lens).enumerate() {
        let t = token(r);
        let (p, l) = (usize::from(p), usize::from(l));
        prefix.push(if p == 0 || p >= t.len() {
            NONE
        } else {
            rank(&t[..p])
        });
        let parts = match t.len() {
            0 => (NONE, NONE),
            1 => (BASE, BASE),
            n if l == 0 || l >= n => (NONE, NONE),
            _ => (rank(&t[..l]), rank(&t[l..])),
        };
        if t.len() > 1 && (parts.0 == NONE || parts.1 == NONE) {
            return Err(format!(
                "the packed rank table is broken (rank {r}'s parts are not tokens)"
            ));
        }
        split.extend([parts.0, parts.1]);
    }
    Ok((split, prefix))
}

/// The rank of `bytes` in an index [`index::build`] made, `NONE` if none.
#[allow(dead_code)] // build.rs only
pub fn rank_in<'a>(index: &[u32], token: impl Fn(usize) -> &'a [u8], bytes: &[u8]) -> u32 {
    let mut i = index::slot(bytes, index.len());
    loop {
        match index[i] {
            0 => return NONE,
            e if token((e - 1) as usize) == bytes => return e - 1,
            _ => i = (i + 1) & (index.len() - 1),
        }
    }
}
