//! The BPE engine (crates/ctxkeep-bpe) against tiktoken-rs.
//! Invariants: no panic; `count` equals tiktoken-rs's `encode_ordinary(text).len()` for o200k_base
//! and cl100k_base; cutting at `next_safe_cut` and counting both sides gives the same total.
//! Inputs are capped at 64 KiB: tiktoken-rs's own regex fails (panics) on very long whitespace runs.
#![no_main]

use std::sync::OnceLock;

use ctxkeep_bpe::{count, next_safe_cut, Encoding};
use libfuzzer_sys::fuzz_target;

fn reference(enc: Encoding) -> &'static tiktoken_rs::CoreBPE {
    static O200K: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
    static CL100K: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
    match enc {
        Encoding::Cl100kBase => CL100K.get_or_init(|| tiktoken_rs::cl100k_base().unwrap()),
        _ => O200K.get_or_init(|| tiktoken_rs::o200k_base().unwrap()),
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let text = String::from_utf8_lossy(data);
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let ours = count(&text, enc).expect("count never fails on a short text");
        let theirs = reference(enc).encode_ordinary(&text).len();
        assert_eq!(ours, theirs, "{enc} on {text:?}");
        // The first safe cut past the middle splits the count exactly.
        if let Some(at) = next_safe_cut(&text, text.len() / 2, enc) {
            let parts = count(&text[..at], enc).unwrap() + count(&text[at..], enc).unwrap();
            assert_eq!(parts, ours, "{enc} cut at {at} of {text:?}");
        }
    }
});
