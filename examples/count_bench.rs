//! Token-counting throughput on generated ~10 MB prose, code and JSONL.
//! `cargo run --release --example count_bench [MB]`. Ratios are against the
//! single-thread count measured in the same run.
use std::time::Instant;

use ctxkeep::tokens::{count, count_with, Encoding, LONG_RUN};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.next() % xs.len()]
    }
}

const WORDS: &[&str] = &[
    "the",
    "context",
    "window",
    "agent",
    "keeps",
    "state",
    "of",
    "a",
    "project",
    "and",
    "resumes",
    "work",
    "after",
    "compaction",
    "tokens",
    "count",
    "model",
    "file",
    "session",
    "because",
    "we",
    "never",
    "lose",
    "decisions",
    "tests",
    "passed",
    "Rust",
    "café",
    "naïve",
    "über",
    "2025",
];
const IDENTS: &[&str] = &[
    "state", "count", "tokens", "path", "cursor", "enc", "buf", "len", "i",
];

fn prose(rng: &mut Rng, size: usize) -> String {
    let mut s = String::with_capacity(size + 1024);
    while s.len() < size {
        // Paragraphs are single long lines separated by blank lines.
        for _ in 0..(3 + rng.next() % 6) {
            let n = 6 + rng.next() % 18;
            for i in 0..n {
                let w = rng.pick(WORDS);
                if i == 0 {
                    let mut c = w.chars();
                    s.extend(c.next().map(|f| f.to_ascii_uppercase()));
                    s.push_str(c.as_str());
                } else {
                    s.push(' ');
                    s.push_str(w);
                }
            }
            s.push_str(rng.pick(&[". ", ", then ", "; ", "! "]));
        }
        s.push_str("\n\n");
    }
    s
}

fn code(rng: &mut Rng, size: usize) -> String {
    let mut s = String::with_capacity(size + 1024);
    while s.len() < size {
        let f = rng.pick(IDENTS);
        s.push_str(&format!(
            "/// Returns the {f}.\npub fn get_{f}_{}(x: &str) -> Result<usize> {{\n",
            rng.next() % 1000
        ));
        for _ in 0..(2 + rng.next() % 8) {
            let (a, b) = (rng.pick(IDENTS), rng.pick(IDENTS));
            s.push_str(&format!(
                "    let {a} = {b}.len() + {};\n",
                rng.next() % 100
            ));
            if rng.next().is_multiple_of(3) {
                s.push_str(&format!(
                    "    if {a} > 0 {{\n        return Ok({a} * 2);\n    }}\n"
                ));
            }
        }
        s.push_str("    Ok(0)\n}\n\n");
    }
    s
}

fn jsonl(rng: &mut Rng, size: usize) -> String {
    let mut s = String::with_capacity(size + 1024);
    while s.len() < size {
        s.push_str(&format!(
            "{{\"type\":\"{}\",\"ts\":\"2025-11-0{}T12:{:02}:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"{} {} {}\",\"usage\":{{\"input_tokens\":{}}}}}}}\n",
            rng.pick(&["user", "assistant", "tool_result"]),
            1 + rng.next() % 9,
            rng.next() % 60,
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.next() % 100_000
        ));
    }
    s
}

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
        "o200k encoder construction: {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    count_with(&format!("a{}b", " ".repeat(64)), enc, 1, usize::MAX, 8).unwrap();
    println!(
        "rank-table copy for long whitespace runs: {:.0} ms (only on such input)",
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
        let single = count_with(&text, enc, 1, usize::MAX, LONG_RUN).unwrap();
        let t1 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let par = count_with(&text, enc, threads, 256 * 1024, LONG_RUN).unwrap();
        let tn = t.elapsed().as_secs_f64();
        println!(
            "{name:5} {mb:5.1} MB {single:>9} tokens | 1 thread {:5.2} MB/s | {threads} threads {:5.2} MB/s = {:.2}x | counts {}",
            mb / t1,
            mb / tn,
            t1 / tn,
            if single == par { "identical".to_string() } else { format!("DIFFER ({par})") }
        );
    }
}
