//! Exact counts of whole texts, on several threads for large ones: the text
//! is cut at safe cuts and the parts are counted side by side.

use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{anyhow, Result};
use ctxkeep_bpe::{next_safe_cut, Counter};

use super::encoding::{engine_error, tokenizer};
use super::Encoding;

/// Texts larger than this are counted on several threads.
pub const PARALLEL_MIN: usize = 256 * 1024;

fn count_segment(counter: &mut Counter<'static>, text: &str) -> Result<usize> {
    counter.count(text).map_err(engine_error)
}

/// The exact number of tokens `encode_ordinary` gives (special tokens count
/// as ordinary text). Large texts are counted on several threads: one per
/// core, or `CTXKEEP_THREADS` (the benchmark uses it to measure the speedup).
pub fn count(text: &str, enc: Encoding) -> Result<usize> {
    count_with(text, enc, threads(), PARALLEL_MIN)
}

fn threads() -> usize {
    std::env::var("CTXKEEP_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `count` with the knobs exposed (tests use tiny values to exercise every
/// path; benchmarks pick the thread count).
pub fn count_with(text: &str, enc: Encoding, threads: usize, parallel_min: usize) -> Result<usize> {
    Counters::new(enc).count_with(text, threads, parallel_min)
}

/// Counters kept from one count to the next, one per thread: a stream
/// counted a block at a time reuses their warmed-up regex caches instead
/// of building them again for every block.
pub struct Counters {
    enc: Encoding,
    counters: Vec<OwnLine>,
}

/// A counter on cache lines of its own: two threads writing to counters
/// side by side in one `Vec` would otherwise share a line (measured: 10 %
/// more CPU on two threads).
#[repr(align(128))]
struct OwnLine(Counter<'static>);

impl Counters {
    pub fn new(enc: Encoding) -> Counters {
        Counters {
            enc,
            counters: Vec::new(),
        }
    }

    /// [`count`] of `text`, with these counters.
    pub fn count(&mut self, text: &str) -> Result<usize> {
        self.count_with(text, threads(), PARALLEL_MIN)
    }

    fn count_with(&mut self, text: &str, threads: usize, parallel_min: usize) -> Result<usize> {
        if text.is_empty() {
            return Ok(0);
        }
        let enc = self.enc;
        let tok = tokenizer(enc)?;
        let chunks = if threads <= 1 || text.len() < parallel_min.max(1) {
            vec![text]
        } else {
            // More chunks than threads so an uneven chunk does not leave a core idle.
            let target = (text.len() / (threads * 4))
                .max(parallel_min.max(1) / 4)
                .max(1);
            split_at_safe_cuts(text, enc, target)
        };
        let workers = threads.min(chunks.len()).max(1);
        while self.counters.len() < workers {
            // One counter per thread: the regex scratch space is not shared.
            self.counters.push(OwnLine(tok.counter()));
        }
        if workers == 1 {
            return count_segment(&mut self.counters[0].0, text);
        }
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let handles: Vec<_> = self.counters[..workers]
                .iter_mut()
                .map(|counter| {
                    let (chunks, next) = (&chunks, &next);
                    scope.spawn(move || -> Result<usize> {
                        let mut sum = 0;
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(chunk) = chunks.get(i) else {
                                return Ok(sum);
                            };
                            sum += count_segment(&mut counter.0, chunk)?;
                        }
                    })
                })
                .collect();
            let mut total = 0;
            for h in handles {
                total += h
                    .join()
                    .map_err(|_| anyhow!("a token-counting thread panicked"))??;
            }
            Ok(total)
        })
    }
}

/// `text` in parts of about `target` bytes, cut at safe cuts.
fn split_at_safe_cuts(text: &str, enc: Encoding, target: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while text.len() - start > target {
        match next_safe_cut(text, start + target, enc) {
            Some(at) => {
                out.push(&text[start..at]);
                start = at;
            }
            None => break,
        }
    }
    out.push(&text[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::super::estimate;
    use super::super::texts::{reference, text_strategy};
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The whole text and the threaded splitter agree with tiktoken
        /// (every safe cut at once: `ctxkeep-bpe`'s tests).
        #[test]
        fn split_counts_equal_tiktoken(text in text_strategy()) {
            for enc in Encoding::built() {
                let want = reference(&text, enc);
                prop_assert_eq!(count_with(&text, enc, 1, usize::MAX).unwrap(), want, "whole {}", enc);
                prop_assert_eq!(count_with(&text, enc, 3, 1).unwrap(), want, "threads {}", enc);
            }
        }
    }

    /// Run with `cargo test --release -- --ignored`: multi-megabyte runs.
    #[test]
    #[ignore]
    fn huge_whitespace_runs_do_not_fail() {
        for enc in Encoding::built() {
            for text in [
                format!("x{}y", " ".repeat(2_000_000)),
                format!("x{}", "\t".repeat(2_000_000)),
                format!("x.\n{}\n{}", "\n".repeat(1_500_000), " ".repeat(1_500_000)),
                format!("{}z", "\u{3000}".repeat(1_100_000)),
            ] {
                let n = count(&text, enc).unwrap();
                assert!(n > 0);
            }
            // Below tiktoken's limit, the default thresholds agree with it.
            let text = format!("a{}b", " ".repeat(600_000));
            assert_eq!(count(&text, enc).unwrap(), reference(&text, enc));
        }
    }

    #[test]
    fn small_counts_and_estimate() {
        assert_eq!(count("", Encoding::O200kBase).unwrap(), 0);
        assert_eq!(count("hello world", Encoding::O200kBase).unwrap(), 2);
        // Special tokens are ordinary text.
        let t = "a <|endoftext|> b";
        assert_eq!(
            count(t, Encoding::Cl100kBase).unwrap(),
            reference(t, Encoding::Cl100kBase)
        );
        assert!(count(t, Encoding::Cl100kBase).unwrap() > 3);
        assert_eq!(estimate(4000), 1000);
    }
}
