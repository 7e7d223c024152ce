//! The engine and the safe cuts against tiktoken-rs. p50k_base and r50k_base
//! are checked when built in (`cargo test --features legacy-encodings`).

use proptest::prelude::*;

use crate::texts::{reference, text_strategy};
use crate::*;

fn all_safe_cuts_sum(text: &str, enc: Encoding) -> usize {
    let mut cuts: Vec<usize> = (1..text.len())
        .filter(|&i| is_safe_cut(text, i, enc))
        .collect();
    cuts.push(text.len());
    let mut start = 0;
    let mut sum = 0;
    for c in cuts {
        sum += count(&text[start..c], enc).unwrap();
        start = c;
    }
    sum
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The whole text and every safe cut at once agree with tiktoken.
    #[test]
    fn split_counts_equal_tiktoken(text in text_strategy()) {
        for enc in Encoding::built() {
            let want = reference(&text, enc);
            prop_assert_eq!(count(&text, enc).unwrap(), want, "whole {}", enc);
            prop_assert_eq!(all_safe_cuts_sum(&text, enc), want, "cuts {}", enc);
        }
    }

    /// Arbitrary Unicode (controls, marks, every script) through every
    /// regex class.
    #[test]
    fn arbitrary_text_equals_tiktoken(text in any::<String>()) {
        for enc in Encoding::built() {
            prop_assert_eq!(count(&text, enc).unwrap(), reference(&text, enc), "{}", enc);
        }
    }

    /// `next_safe_cut` and `last_safe_cut` find exactly the cuts
    /// `is_safe_cut` allows, and the counts on both sides add up.
    #[test]
    fn next_and_last_cut_are_safe_cuts(text in text_strategy(), from in 0..2000usize) {
        for enc in Encoding::built() {
            let first = (from.max(1)..text.len()).find(|&i| is_safe_cut(&text, i, enc));
            prop_assert_eq!(next_safe_cut(&text, from, enc), first, "next {}", enc);
            if let Some(at) = first {
                prop_assert_eq!(
                    count(&text[..at], enc).unwrap() + count(&text[at..], enc).unwrap(),
                    reference(&text, enc),
                    "{} at {}", enc, at
                );
            }
            let last = last_safe_cut(&text, enc);
            if last > 0 {
                prop_assert!(is_safe_cut(&text, last, enc));
                prop_assert!((last + 1..text.len()).all(|i| !is_safe_cut(&text, i, enc)));
            }
        }
    }
}

#[test]
fn cut_rule_examples() {
    let e = Encoding::O200kBase;
    assert!(is_safe_cut("a\nb", 2, e));
    assert!(!is_safe_cut("a\n b", 2, e));
    assert!(!is_safe_cut("a.\n/b", 3, e));
    assert!(is_safe_cut("a \nb", 3, e));
    assert!(!is_safe_cut("a \nb", 3, Encoding::P50kBase));
    assert!(is_safe_cut("a\nb", 2, Encoding::R50kBase));
    assert!(!is_safe_cut("ab", 1, e));
    // Why not every newline: "x\n  \n y" has the piece "\n  \n", which a
    // cut after the first newline breaks in two.
    let t = "x\n  \n y";
    assert!(!is_safe_cut(t, 2, e));
    assert_ne!(
        reference(&t[..2], e) + reference(&t[2..], e),
        reference(t, e)
    );
}

#[test]
fn long_runs_match_tiktoken() {
    // Sizes tiktoken itself survives (whitespace runs of a million
    // chars overflow its regex engine's backtracking stack).
    for n in [1_000, 50_000, 100_000] {
        for enc in Encoding::built() {
            for (pre, unit, post) in [
                ("x", " ", "y"),
                ("x.", " ", ""),
                ("x", "\t", "\n z"),
                ("a\n", " ", "."),
                ("a.\n\n", "\u{3000}", "/b"),
                ("", " \n", "  q"),
                ("", "a", ""),
                ("b", "ab", "."),
                ("", "!", "?"),
                ("", "12", ""),
                // Run-on pieces over 17 KiB take the linear count.
                ("", "=", ""),
                ("", "的一", "。"),
                ("", "xyzzy", ""),
            ] {
                let text = format!("{pre}{}{post}", unit.repeat(n));
                let want = reference(&text, enc);
                assert_eq!(
                    count(&text, enc).unwrap(),
                    want,
                    "{enc} {n} {pre:?}{unit:?}{post:?}"
                );
            }
        }
    }
}

#[test]
fn names_parse_and_print() {
    for e in Encoding::ALL {
        assert_eq!(e.to_string().parse::<Encoding>().unwrap(), e);
    }
    assert_eq!(
        " O200K_BASE ".parse::<Encoding>().unwrap(),
        Encoding::O200kBase
    );
    let err = "gpt2".parse::<Encoding>().unwrap_err().to_string();
    assert!(err.contains("gpt2") && err.contains("cl100k_base"), "{err}");
    assert_eq!(Encoding::default(), Encoding::O200kBase);
}

#[test]
fn legacy_encodings_follow_the_feature() {
    let built: Vec<Encoding> = Encoding::built().collect();
    assert!(built.contains(&Encoding::O200kBase) && built.contains(&Encoding::Cl100kBase));
    for enc in [Encoding::P50kBase, Encoding::R50kBase] {
        let got = count("hello world", enc);
        if cfg!(feature = "legacy-encodings") {
            assert_eq!(got, Ok(reference("hello world", enc)));
        } else {
            assert_eq!(got, Err(Error::NotBuilt(enc)));
            let msg = got.unwrap_err().to_string();
            assert!(
                msg.contains(enc.name()) && msg.contains("legacy-encodings"),
                "{msg}"
            );
        }
        assert_eq!(enc.is_built(), cfg!(feature = "legacy-encodings"));
    }
}

/// The fuzz target `bpe_count`'s property (fuzz/fuzz_targets/bpe_count.rs) on its seeds, as a
/// test: the count equals tiktoken's, and the first safe cut past the middle splits it exactly.
/// Skipped where the seeds are not (the published crate).
#[test]
fn fuzz_seeds_count_as_tiktoken() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/bpe_count");
    let Ok(seeds) = std::fs::read_dir(&dir) else {
        return;
    };
    for seed in seeds {
        let data = std::fs::read(seed.unwrap().path()).unwrap();
        let text = String::from_utf8_lossy(&data);
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let ours = count(&text, enc).unwrap();
            assert_eq!(ours, reference(&text, enc), "{enc} on {text:?}");
            if let Some(at) = next_safe_cut(&text, text.len() / 2, enc) {
                let parts = count(&text[..at], enc).unwrap() + count(&text[at..], enc).unwrap();
                assert_eq!(parts, ours, "{enc} cut at {at} of {text:?}");
            }
        }
    }
}
