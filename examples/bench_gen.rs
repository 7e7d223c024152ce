//! Writes a generated input for `bench/run`:
//! `bench_gen KIND BYTES OUT` with KIND one of prose, code, jsonl,
//! transcript (a Claude Code transcript ending at 50,000 tokens of context,
//! below every default stage), autonomous (the same, but its one user prompt is
//! its first line, then only tool calls: a long run with its last prompt far
//! back), word or cjk (run-on text: one piece of random letters or Han
//! characters). The same arguments give the same bytes.
#[path = "support/gen.rs"]
mod gen;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(kind), Some(size), Some(out)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
        args.get(2),
    ) else {
        eprintln!("usage: bench_gen prose|code|jsonl|transcript|autonomous|word|cjk BYTES OUT");
        std::process::exit(2);
    };
    let mut rng = gen::Rng(0x9E37_79B9_7F4A_7C15 ^ size as u64);
    // Large inputs repeat a 10 MB block: generation stays fast, and every
    // reader under test sees the same kind of text throughout.
    let block = size.min(10 << 20);
    let mut text = match kind.as_str() {
        "prose" => gen::prose(&mut rng, block),
        "code" => gen::code(&mut rng, block),
        "jsonl" => gen::jsonl(&mut rng, block),
        "transcript" => gen::transcript(&mut rng, block, 50_000),
        "autonomous" => gen::autonomous(&mut rng, block, 50_000),
        "word" => gen::word(&mut rng, block),
        "cjk" => gen::cjk(&mut rng, block),
        _ => {
            eprintln!("unknown kind {kind}");
            std::process::exit(2);
        }
    };
    if kind != "transcript" && kind != "autonomous" {
        // Small inputs are cut to the size asked (at a char boundary).
        let mut cut = size.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    let mut out_file = std::io::BufWriter::new(std::fs::File::create(out).expect("create output"));
    use std::io::Write;
    let mut written = 0;
    if kind == "autonomous" {
        let prompt = gen::autonomous_prompt();
        out_file.write_all(prompt.as_bytes()).expect("write output");
        written += prompt.len();
    }
    // A text cut at a char boundary may be a few bytes short: one copy.
    let size = if size - size.min(text.len()) < 4 {
        text.len()
    } else {
        size
    };
    while written < size {
        out_file.write_all(text.as_bytes()).expect("write output");
        written += text.len();
    }
    out_file.flush().expect("write output");
}
