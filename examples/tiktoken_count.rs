//! The naive baseline for `bench/run`: counts a file's o200k tokens with
//! tiktoken-rs directly (build the encoder, `encode_ordinary`, one thread),
//! and prints the count. `cargo run --release --example tiktoken_count FILE`
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: tiktoken_count FILE");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(66);
    });
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
    println!("{}", bpe.encode_ordinary(&text).len());
}
