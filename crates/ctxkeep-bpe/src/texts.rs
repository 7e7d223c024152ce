//! Test inputs and tiktoken-rs's own counts, shared by this crate's tests
//! and ctxkeep's (which include this file by path). The includer provides
//! `Encoding` in the parent module.

use std::sync::OnceLock;

use proptest::prelude::*;

use super::Encoding;

/// tiktoken's own answer (only for inputs where it does not panic).
pub fn reference(text: &str, enc: Encoding) -> usize {
    static SLOTS: [OnceLock<tiktoken_rs::CoreBPE>; 4] = [const { OnceLock::new() }; 4];
    let bpe = SLOTS[enc as usize].get_or_init(|| {
        match enc {
            Encoding::O200kBase => tiktoken_rs::o200k_base(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
            Encoding::P50kBase => tiktoken_rs::p50k_base(),
            Encoding::R50kBase => tiktoken_rs::r50k_base(),
        }
        .unwrap()
    });
    bpe.encode_ordinary(text).len()
}

const FRAGMENTS: &[&str] = &[
    "hello",
    "The",
    " world",
    "fn main() {",
    "    let x = 1;",
    "}",
    "\n",
    "\n\n",
    "\r\n",
    " ",
    "  ",
    "   ",
    "\t",
    "\t\t",
    "/",
    "//",
    "./",
    ".\n/",
    "'s",
    "'LL",
    "123456",
    "3.14",
    "漢字",
    "é",
    "e\u{301}",
    "\u{301}",
    "\u{3000}",
    "\u{a0}",
    "\u{2028}",
    "\u{0b}",
    "\u{0c}",
    "\u{85}",
    "<|endoftext|>",
    ".",
    "!?",
    "  \n",
    " \n ",
    "\n  ",
    "# Title",
    "- item",
    "{\"k\": [1, 2]}",
    "ÀB",
    "ǅ",
    "😀",
    "\n/",
    "*/",
    "/*",
    ":\n\n",
    "'ſ",
    "'\u{212a}",
    "DON'T",
    "\r",
    "\u{2029}",
    "\u{1680}",
    "ǅungla",
    "x\u{0300}\u{0301}",
    "١٢٣٤",
    "Ⅻ",
    "🙂🙂",
    "€100",
    "    \n\n    ",
];

/// Texts made of fragments that exercise every pre-tokenizer alternative,
/// arbitrary chars, and runs of whitespace.
pub fn text_strategy() -> impl Strategy<Value = String> {
    let frag = prop_oneof![
        4 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        1 => any::<char>().prop_map(|c| c.to_string()),
        1 => (proptest::sample::select(&[" ", "\n", "\t", " \n", "\u{3000}"][..]), 1usize..40)
            .prop_map(|(s, n)| s.repeat(n)),
    ];
    proptest::collection::vec(frag, 0..80).prop_map(|v| v.concat())
}
