//! The perfect hash from token bytes to their slot. `build.rs` builds it at
//! compile time (choosing each bucket's pilot) and `bpe` looks tokens up with
//! it in place; both include this file, so they hash alike. Standard library
//! only (build scripts share it).

/// A multiplicative hash over 8-byte words (FxHash's constant); buckets take
/// its high bits. Short inputs are read with two overlapping loads instead of
/// a copy into a padded word (most lookups are of 2 to 8 bytes): for a given
/// length, the words read still determine every byte.
#[inline]
pub fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let n = bytes.len();
    let h = (n as u64).wrapping_mul(K);
    let mix = |h: u64, w: u64| (h.rotate_left(26) ^ w).wrapping_mul(K);
    if n >= 8 {
        let word = |i: usize| {
            let w: [u8; 8] = bytes[i..i + 8].try_into().expect("8 bytes");
            u64::from_le_bytes(w)
        };
        let mut h = h;
        let mut i = 0;
        while i + 8 < n {
            h = mix(h, word(i));
            i += 8;
        }
        // The last 8 bytes, overlapping the word before when n is no multiple of 8.
        mix(h, word(n - 8))
    } else if n >= 4 {
        let half = |i: usize| {
            let w: [u8; 4] = bytes[i..i + 4].try_into().expect("4 bytes");
            u64::from(u32::from_le_bytes(w))
        };
        mix(h, half(0) | half(n - 4) << 32)
    } else if n > 0 {
        let b = |i: usize| u64::from(bytes[i]);
        mix(h, b(0) | b(n / 2) << 8 | b(n - 1) << 16)
    } else {
        h
    }
}

/// Whether `a` and `b` (of one length, at most 128 bytes) are equal: the
/// same overlapping loads as [`hash`], no call to `memcmp` for a few bytes.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        let word = |s: &[u8], i: usize| {
            let w: [u8; 8] = s[i..i + 8].try_into().expect("8 bytes");
            u64::from_le_bytes(w)
        };
        if n <= 16 {
            return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
        }
        return a == b;
    }
    if n >= 4 {
        let half = |s: &[u8], i: usize| {
            let w: [u8; 4] = s[i..i + 4].try_into().expect("4 bytes");
            u32::from_le_bytes(w)
        };
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    a == b
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

/// Tokens per bucket of the perfect hash, on average: each bucket stores one
/// `u16` pilot; four keep the pilots small and the search at build time short.
pub const BUCKET_KEYS: usize = 4;
/// Slots that share one offset into the token bytes (their entries hold where
/// each token ends within the block).
pub const BLOCK: usize = 16;
/// Bits of a slot's entry for where its token ends within its block (16
/// tokens of at most 128 bytes: up to 2048); the rank takes the bits above.
pub const END_BITS: u32 = 12;

/// The bucket of a token whose [`hash`] is `h`, among `buckets`.
#[inline]
pub fn bucket(h: u64, buckets: usize) -> usize {
    ((u128::from(h) * buckets as u128) >> 64) as usize
}

/// The slot, among `slots`, of a token whose [`hash`] is `h` and whose bucket
/// has `pilot`: the pilot is chosen at build time so that every token of the
/// bucket lands in a slot of its own (a perfect hash: one probe, hit or miss).
#[inline]
pub fn slot_of(h: u64, pilot: u16, slots: usize) -> usize {
    // murmur3's finalizer over the hash and the pilot's multiple.
    let mut x = h ^ u64::from(pilot).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    ((u128::from(x) * slots as u128) >> 64) as usize
}
