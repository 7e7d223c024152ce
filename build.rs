//! Writes each encoding's rank table, taken from tiktoken-rs, as three flat
//! files in OUT_DIR that `src/tokens.rs` includes: `<name>.tokens` (every
//! ordinary token's bytes, in rank order), `<name>.ends` (little-endian u32
//! end offset of each rank's bytes; an empty range is an unused rank) and
//! `<name>.index` (little-endian u32 slots of the hash index from bytes to
//! rank, see src/bpe/index.rs). The binary then neither decodes base64 nor
//! builds a hash map at run time, which is what made a small count cost
//! ~150 ms with tiktoken-rs.

use std::collections::HashSet;
use std::path::Path;

use tiktoken_rs::CoreBPE;

#[path = "src/bpe/index.rs"]
mod index;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    let tables = [
        ("o200k_base", tiktoken_rs::o200k_base()),
        ("cl100k_base", tiktoken_rs::cl100k_base()),
        ("p50k_base", tiktoken_rs::p50k_base()),
        ("r50k_base", tiktoken_rs::r50k_base()),
    ];
    for (name, bpe) in tables {
        let bpe = bpe.unwrap_or_else(|e| panic!("tiktoken-rs cannot build {name}: {e}"));
        let (tokens, ends) = flatten(&bpe);
        let token = |r: usize| {
            let start = if r == 0 { 0 } else { ends[r - 1] as usize };
            &tokens[start..ends[r] as usize]
        };
        let index = index::build(ends.len(), token);
        let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        std::fs::write(out.join(format!("{name}.index")), le(&index)).expect("write index");
        std::fs::write(out.join(format!("{name}.ends")), le(&ends)).expect("write ends");
        std::fs::write(out.join(format!("{name}.tokens")), tokens).expect("write tokens");
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
