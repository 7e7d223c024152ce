//! Packs each encoding's rank table, taken from tiktoken-rs, into OUT_DIR as
//! `<name>.packed`: the compact form of src/bpe/packed.rs (token bytes and,
//! per rank, byte lengths from which the hash index, the merge parts and the
//! prefixes are rebuilt), deflated. `src/lib.rs` includes it and unpacks it
//! on the encoding's first use, so a binary that never counts never pays.
//! Nothing is decoded from base64 or rebuilt by merging at run time, which
//! is what made a small count cost ~150 ms with tiktoken-rs.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use tiktoken_rs::CoreBPE;

#[path = "src/bpe/index.rs"]
mod index;
#[path = "src/bpe/packed.rs"]
mod packed;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    let mut tables = vec![
        ("o200k_base", tiktoken_rs::o200k_base()),
        ("cl100k_base", tiktoken_rs::cl100k_base()),
    ];
    // Only with the `legacy-encodings` feature: the binary carries no table
    // it cannot use.
    if std::env::var_os("CARGO_FEATURE_LEGACY_ENCODINGS").is_some() {
        tables.push(("p50k_base", tiktoken_rs::p50k_base()));
        tables.push(("r50k_base", tiktoken_rs::r50k_base()));
    }
    for (name, bpe) in tables {
        let bpe = bpe.unwrap_or_else(|e| panic!("tiktoken-rs cannot build {name}: {e}"));
        let (tokens, ends) = flatten(&bpe);
        let token = |r: usize| {
            let start = if r == 0 { 0 } else { ends[r - 1] as usize };
            &tokens[start..ends[r] as usize]
        };
        let shapes = Shapes::derive(ends.len(), token);
        let packed = packed::pack(
            &tokens,
            &ends,
            &shapes.split,
            &shapes.next_prefix,
            &shapes.longest,
            &shapes.pairs,
        );
        // The packing must give back exactly what the engine was built on.
        let back = packed::unpack(&packed).unwrap_or_else(|e| panic!("{name}: {e}"));
        let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let index = index::build(ends.len(), token);
        let (split, prefix) =
            packed::derive_parts(&back.prefix_lens, &back.left_lens, token, |b| {
                packed::rank_in(&index, token, b)
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let want_split: Vec<u32> = shapes.split.iter().flat_map(|&(l, r)| [l, r]).collect();
        assert!(
            back.tokens == tokens
                && back.ends == le(&ends)
                && back.index == le(&index)
                && split == want_split
                && prefix == shapes.next_prefix
                && back.longest == shapes.longest
                && back.pairs == shapes.pairs,
            "{name}: the packed tables do not unpack to the same tables"
        );
        let deflated = miniz_oxide::deflate::compress_to_vec(&packed, 10);
        std::fs::write(out.join(format!("{name}.packed")), deflated).expect("write packed");
    }
}

fn flatten(bpe: &CoreBPE) -> (Vec<u8>, Vec<u32>) {
    let special_ranks: HashSet<u32> = bpe
        .special_tokens()
        .into_iter()
        .flat_map(|s| bpe.encode_with_special_tokens(s))
        .collect();
    let mut ranks = Vec::new();
    // Every vocabulary has fewer than 210,000 ranks; missing ones fail to decode.
    for rank in 0..210_000u32 {
        if special_ranks.contains(&rank) {
            continue;
        }
        if let Ok(bytes) = bpe.decode_bytes(&[rank]) {
            ranks.push((rank, bytes));
        }
    }
    let top = ranks.last().map_or(0, |(r, _)| *r) as usize;
    let mut tokens = Vec::new();
    let mut ends = Vec::with_capacity(top + 1);
    let mut next = ranks.into_iter().peekable();
    for rank in 0..=top as u32 {
        if let Some((_, bytes)) = next.next_if(|(r, _)| *r == rank) {
            tokens.extend_from_slice(&bytes);
        }
        ends.push(tokens.len() as u32);
    }
    (tokens, ends)
}

use packed::{BASE, NONE};

/// What the linear-time counter (`bpe::Vocab::count_long`) reads, derived
/// by running tiktoken's merge on every token's own bytes.
struct Shapes {
    /// Per rank: the two ranks whose merge made it (left, right),
    /// `(BASE, BASE)` for a single byte, `(NONE, NONE)` for an unused rank.
    split: Vec<(u32, u32)>,
    /// Per rank: the longest token that is a strict prefix of it, or `NONE`.
    next_prefix: Vec<u32>,
    /// Per slot of the first three bytes (`index::head_slot`): the length
    /// of the longest token starting with them (0: none of three bytes or
    /// more). Slots are shared, so this is an upper bound.
    longest: Vec<u8>,
    /// One bit per two bytes (`b0 << 8 | b1`): whether they are a token.
    pairs: Vec<u8>,
}

impl Shapes {
    /// Panics (failing the build) if the vocabulary breaks what the linear
    /// counter relies on: every byte is a token, every token is what its
    /// own bytes merge into, and both its parts have lower ranks.
    fn derive<'a>(ranks: usize, token: impl Fn(usize) -> &'a [u8]) -> Shapes {
        let by_bytes: HashMap<&[u8], u32> = (0..ranks)
            .filter(|&r| !token(r).is_empty())
            .map(|r| (token(r), r as u32))
            .collect();
        let rank = |b: &[u8]| by_bytes.get(b).copied().unwrap_or(NONE);
        for b in 0..=255u8 {
            assert!(rank(&[b]) != NONE, "byte {b} is not a token");
        }
        let mut split = Vec::with_capacity(ranks);
        let mut next_prefix = Vec::with_capacity(ranks);
        let mut longest = vec![0u8; 1 << index::HEAD_BITS];
        let mut pairs = vec![0u8; 1 << 13];
        for r in 0..ranks {
            let t = token(r);
            split.push(match t.len() {
                0 => (NONE, NONE),
                1 => (BASE, BASE),
                _ => {
                    let parts = last_merge(t, rank).unwrap_or_else(|| {
                        panic!("token {r} ({t:?}) is not what its own bytes merge into")
                    });
                    assert!(
                        (parts.0 as usize) < r && (parts.1 as usize) < r,
                        "token {r} ({t:?}) is made of a later token"
                    );
                    parts
                }
            });
            next_prefix.push(
                (1..t.len())
                    .rev()
                    .map(|n| rank(&t[..n]))
                    .find(|&p| p != NONE)
                    .unwrap_or(NONE),
            );
            if let [b0, b1] = *t {
                let pair = usize::from(b0) << 8 | usize::from(b1);
                pairs[pair / 8] |= 1 << (pair % 8);
            } else if let [b0, b1, b2, ..] = *t {
                let len = u8::try_from(t.len()).expect("a token of more than 255 bytes");
                let slot = &mut longest[index::head_slot(b0, b1, b2)];
                *slot = (*slot).max(len);
            }
        }
        Shapes {
            split,
            next_prefix,
            longest,
            pairs,
        }
    }
}

/// tiktoken's merge (lowest rank first, leftmost on ties) on `t`: the two
/// parts it had just before becoming one, or `None` if it never does.
fn last_merge(t: &[u8], rank: impl Fn(&[u8]) -> u32) -> Option<(u32, u32)> {
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
