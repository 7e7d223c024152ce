//! Token-counting throughput on generated ~10 MB prose, code and JSONL.
//! `cargo run --release --example count_bench [MB]`. Ratios are against the
//! single-thread tiktoken-rs count measured in the same run.
use std::time::Instant;

use ctxkeep::context::tokens::{count, count_with, Encoding};

#[path = "support/gen.rs"]
mod gen;
use gen::{code, jsonl, prose, Rng};

fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let size = mb << 20;
    let enc = Encoding::O200kBase;
    let t = Instant::now();
    count("x", enc).unwrap();
    println!(
        "o200k tokenizer construction: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let naive = tiktoken_rs::o200k_base().unwrap();
    println!(
        "tiktoken-rs o200k encoder construction: {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Control: how well plain arithmetic scales on this machine right now
    // (other processes may be using the cores).
    let spin = |n: u64| (0..n).fold(0u64, |x, i| x.wrapping_mul(31).wrapping_add(i));
    let t = Instant::now();
    std::hint::black_box(spin(300_000_000));
    let t1 = t.elapsed().as_secs_f64();
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| std::hint::black_box(spin(300_000_000)));
        }
    });
    let tn = t.elapsed().as_secs_f64();
    println!(
        "control: {threads} threads do {:.2}x the work of 1 in the same time",
        threads as f64 * t1 / tn
    );

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (name, text) in [
        ("prose", prose(&mut rng, size)),
        ("code", code(&mut rng, size)),
        ("jsonl", jsonl(&mut rng, size)),
    ] {
        let mb = text.len() as f64 / (1 << 20) as f64;
        let t = Instant::now();
        let single = count_with(&text, enc, 1, usize::MAX).unwrap();
        let t1 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let par = count_with(&text, enc, threads, 256 * 1024).unwrap();
        let tn = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let reference = naive.encode_ordinary(&text).len();
        let tt = t.elapsed().as_secs_f64();
        println!(
            "{name:5} {mb:5.1} MB {single:>9} tokens | tiktoken-rs {:5.2} MB/s | 1 thread {:5.2} MB/s = {:.2}x | {threads} threads {:5.2} MB/s = {:.2}x | counts {}",
            mb / tt,
            mb / t1,
            tt / t1,
            mb / tn,
            tt / tn,
            if single == par && par == reference { "identical".to_string() } else { format!("DIFFER (1 thread {single}, {threads} threads {par}, tiktoken-rs {reference})") }
        );
    }
}
