//! The open-addressing index from token bytes to rank. `build.rs` builds it
//! at compile time and `bpe` probes it at run time; both include this file,
//! so they hash alike. Standard library only (build scripts share it).

/// A multiplicative hash over 8-byte words (FxHash's constant); slots take
/// its high bits.
#[inline]
pub fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        h = (h.rotate_left(26) ^ w).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(26) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    h
}

/// The first slot to probe for `bytes` in an index of `len` slots (a power of two).
#[inline]
pub fn slot(bytes: &[u8], len: usize) -> usize {
    (hash(bytes) >> (64 - len.trailing_zeros())) as usize
}

/// Bits of the table of longest token lengths by a token's first three bytes.
pub const HEAD_BITS: u32 = 16;

/// The slot of the first three bytes of a token in the table of longest
/// token lengths (several heads share a slot: it holds their maximum).
#[inline]
pub fn head_slot(b0: u8, b1: u8, b2: u8) -> usize {
    let word = u64::from(b0) | u64::from(b1) << 8 | u64::from(b2) << 16;
    (word.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - HEAD_BITS)) as usize
}

/// The index for `ranks` tokens (`token(r)` is rank r's bytes, empty for an
/// unused rank): `rank + 1` per slot, 0 for an empty one, linear probing,
/// load factor under 1/2.
#[allow(dead_code)] // build.rs only
pub fn build<'a>(ranks: usize, token: impl Fn(usize) -> &'a [u8]) -> Vec<u32> {
    let len = (ranks * 2).next_power_of_two().max(16);
    let mut index = vec![0u32; len];
    for rank in 0..ranks {
        let t = token(rank);
        if t.is_empty() {
            continue;
        }
        let mut i = slot(t, len);
        while index[i] != 0 {
            i = (i + 1) & (len - 1);
        }
        index[i] = rank as u32 + 1;
    }
    index
}
