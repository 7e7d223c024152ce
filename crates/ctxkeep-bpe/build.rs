//! Lays out each encoding's rank table, taken from tiktoken-rs, into OUT_DIR
//! as `<name>.tables`: the form of src/bpe/packed.rs, which the binary reads
//! in place (a perfect hash from token bytes to rank, and the token bytes,
//! from which the merge parts and prefixes that long pieces need are
//! derived at run time). Nothing is decoded, inflated, hashed or
//! rebuilt at run time, which is what made a small count cost ~150 ms with
//! tiktoken-rs and ~20 ms with the deflated tables this replaced.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use tiktoken_rs::CoreBPE;

#[path = "src/bpe/index.rs"]
#[allow(dead_code)] // the run-time half is the engine's
mod index;
#[path = "src/bpe/packed.rs"]
#[allow(dead_code)]
mod packed;
#[path = "src/patterns.rs"]
mod patterns;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    println!("cargo:rerun-if-changed=src/patterns.rs");
    println!("cargo:rerun-if-changed=src/bpe/index.rs");
    println!("cargo:rerun-if-changed=src/bpe/packed.rs");
    let mut tables = vec![
        (
            "o200k_base",
            tiktoken_rs::o200k_base(),
            patterns::O200K_PATTERN,
        ),
        (
            "cl100k_base",
            tiktoken_rs::cl100k_base(),
            patterns::CL100K_PATTERN,
        ),
    ];
    // Only with the `legacy-encodings` feature: the binary carries no table
    // it cannot use.
    if std::env::var_os("CARGO_FEATURE_LEGACY_ENCODINGS").is_some() {
        tables.push((
            "p50k_base",
            tiktoken_rs::p50k_base(),
            patterns::P50K_PATTERN,
        ));
        tables.push((
            "r50k_base",
            tiktoken_rs::r50k_base(),
            patterns::P50K_PATTERN,
        ));
    }
    std::fs::write(out.join("classes.rs"), char_classes()).expect("write classes.rs");
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").is_ok_and(|e| e == "big");
    for (name, bpe, pattern) in tables {
        // o200k and cl100k are split by hand (src/bpe/split.rs); the others by their DFA.
        if pattern == patterns::P50K_PATTERN {
            std::fs::write(
                out.join(format!("{name}.dfa")),
                pretokenizer(pattern, big_endian),
            )
            .expect("write dfa");
        }
        let bpe = bpe.unwrap_or_else(|e| panic!("tiktoken-rs cannot build {name}: {e}"));
        let (tokens, ends) = flatten(&bpe);
        let token = |r: usize| {
            let start = if r == 0 { 0 } else { ends[r - 1] as usize };
            &tokens[start..ends[r] as usize]
        };
        let shapes = Shapes::derive(ends.len(), token);
        let packed = packed::pack(&tokens, &ends);
        // The layout must give back exactly what the engine was built on:
        // every token's rank through the perfect hash, no rank for bytes
        // that are no token, and the same merge parts, prefixes and short
        // tables as the run time derives from it.
        let back = packed::Layout::parse(&packed).unwrap_or_else(|e| panic!("{name}: {e}"));
        for r in 0..ends.len() {
            let t = token(r);
            if !t.is_empty() {
                assert_eq!(back.rank(t), r as u32, "{name}: rank {r} through the hash");
                let mut longer = t.to_vec();
                longer.push(0xff);
                let want = shapes
                    .by_bytes
                    .get(&longer)
                    .copied()
                    .unwrap_or(packed::NONE);
                assert_eq!(back.rank(&longer), want, "{name}: {longer:?}");
            }
        }
        let prefix = packed::derive_prefixes(ends.len(), token, |b| back.rank(b));
        let (longest, pairs) = packed::short_tables((0..ends.len()).map(token));
        let split_back = (0..ends.len()).all(|r| {
            let t = token(r);
            t.len() < 2 || packed::last_merge(t, |b| back.rank(b)) == Some(shapes.split[r])
        });
        assert!(
            split_back
                && prefix == shapes.next_prefix
                && longest == shapes.longest
                && pairs == shapes.pairs,
            "{name}: the laid-out tables do not give back the same tables"
        );
        std::fs::write(out.join(format!("{name}.tables")), packed).expect("write tables");
    }
}

/// The pre-tokenizer's pattern as a sparse DFA (anchored searches, no
/// captures: what `bpe` runs), serialized for the target: a small text is
/// split with it as it lies in the binary, with nothing built at start.
fn pretokenizer(pattern: &str, big_endian: bool) -> Vec<u8> {
    use regex_automata::dfa::{dense, StartKind};
    use regex_automata::nfa::thompson;
    let dense = dense::Builder::new()
        .configure(dense::Config::new().start_kind(StartKind::Anchored))
        .thompson(thompson::Config::new().which_captures(thompson::WhichCaptures::None))
        .build(pattern)
        .unwrap_or_else(|e| panic!("the pre-tokenizer pattern does not compile: {e}"));
    let sparse = dense
        .to_sparse()
        .unwrap_or_else(|e| panic!("the pre-tokenizer's DFA: {e}"));
    match big_endian {
        true => sparse.to_bytes_big_endian(),
        false => sparse.to_bytes_little_endian(),
    }
}

/// The char classes of src/bpe/split.rs (its `class` module, in the same
/// order), as regex-syntax reads the patterns' `\s` and `\p{..}`: the class
/// of each ASCII char, then the ranges of chars of one class, as Rust source.
fn char_classes() -> String {
    use regex_syntax::hir::{Class, HirKind};
    // Later classes win; no char is in two of these.
    let classes = [
        r"\s",
        r"\p{N}",
        r"\p{Ll}",
        r"[\p{Lu}\p{Lt}]",
        r"[\p{Lm}\p{Lo}]",
        r"\p{M}",
    ];
    let mut of = vec![0u8; 0x11_0000];
    for (k, class) in classes.iter().enumerate() {
        let hir = regex_syntax::parse(class).unwrap_or_else(|e| panic!("{class}: {e}"));
        let HirKind::Class(Class::Unicode(set)) = hir.kind() else {
            panic!("{class} is not a Unicode class");
        };
        for r in set.ranges() {
            for cp in u32::from(r.start())..=u32::from(r.end()) {
                assert_eq!(of[cp as usize], 0, "U+{cp:04X} is in two classes");
                of[cp as usize] = k as u8 + 1;
            }
        }
    }
    let mut starts = vec![0u32];
    let mut kinds = vec![of[0]];
    for cp in 1..of.len() {
        if cp < 128 || of[cp] != of[cp - 1] {
            starts.push(cp as u32);
            kinds.push(of[cp]);
        }
    }
    format!(
        "static ASCII_CLASS: [u8; 128] = {:?};\nstatic STARTS: [u32; {}] = {:?};\nstatic CLASSES: [u8; {}] = {:?};\n",
        &of[..128],
        starts.len(),
        starts,
        kinds.len(),
        kinds
    )
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
    /// Every token's rank by its bytes.
    by_bytes: HashMap<Vec<u8>, u32>,
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
        let by_bytes = by_bytes.into_iter().map(|(b, r)| (b.to_vec(), r)).collect();
        Shapes {
            split,
            next_prefix,
            longest,
            pairs,
            by_bytes,
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
