//! Single-core counting throughput on a file, for each built encoding:
//! `cargo run --release -p ctxkeep-bpe --example throughput FILE [RUNS] [--tiktoken]`.
//! Prints the best of RUNS (default 5) counts on one thread, in MB/s, and
//! with `--tiktoken` tiktoken-rs's `encode_ordinary` on the same text (and
//! checks that the counts agree). docs/performance.md has the figures.
use std::time::Instant;

use ctxkeep_bpe::{count, tokenizer, Encoding};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: throughput FILE [RUNS] [--tiktoken]");
        std::process::exit(2);
    };
    let runs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5).max(1);
    let with_tiktoken = args.iter().any(|a| a == "--tiktoken");
    let text = std::fs::read_to_string(path).expect("a UTF-8 file");
    let mb = text.len() as f64 / 1e6;
    for enc in Encoding::built() {
        let t = Instant::now();
        tokenizer(enc).expect("built");
        let start = t.elapsed().as_secs_f64() * 1e3;
        let (mut best, mut n) = (f64::MAX, 0);
        for _ in 0..runs {
            let t = Instant::now();
            n = count(&text, enc).expect("counted");
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{enc}: {n} tokens in {mb:.1} MB, best of {runs}: {:.1} ms, {:.1} MB/s (tokenizer ready in {start:.2} ms)",
            best * 1e3,
            mb / best
        );
        if with_tiktoken {
            let bpe = match enc {
                Encoding::O200kBase => tiktoken_rs::o200k_base(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
                Encoding::P50kBase => tiktoken_rs::p50k_base(),
                Encoding::R50kBase => tiktoken_rs::r50k_base(),
            }
            .expect("tiktoken-rs builds");
            let (mut best, mut theirs) = (f64::MAX, 0);
            for _ in 0..runs {
                let t = Instant::now();
                theirs = bpe.encode_ordinary(&text).len();
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!(
                "{enc}: tiktoken-rs {theirs} tokens, best of {runs}: {:.1} ms, {:.1} MB/s{}",
                best * 1e3,
                mb / best,
                if theirs == n { "" } else { " (COUNTS DIFFER)" }
            );
        }
    }
}
