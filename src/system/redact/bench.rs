use super::*;
use std::time::Instant;

/// Bytes per input; `REDACT_BENCH_BYTES` overrides the 6 MiB default.
fn size() -> usize {
    std::env::var("REDACT_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6 << 20)
}

fn fill(unit: &str) -> String {
    let size = size();
    let mut s = unit.repeat(size / unit.len() + 1);
    s.truncate(s.floor_char_boundary(size));
    s
}

fn time(name: &str, text: &str) -> f64 {
    let t = Instant::now();
    let mut n = 0;
    for _ in 0..3 {
        n = find(text).len();
    }
    let ms = t.elapsed().as_secs_f64() * 1000.0 / 3.0;
    println!(
        "{name:<28} {:>5} KiB  {ms:>8.1} ms  findings={n}",
        text.len() >> 10
    );
    ms
}

#[test]
#[ignore]
fn measure() {
    let prose = fill(
        "The agent rotated the API key and checked that the password field is validated. \
         Next it reviewed src/redact.rs at commit 3f786850e387550fdab836ed7e6dc881de23001b; \
         access to the token store needs auth, see https://example.com/docs.\n",
    );
    let base = time("plain prose", &prose);
    let hostile = [
        "key=",
        "key=aZ3",
        "api_key: Zq8Xv3Lm9Tr2Wp5K ",
        "a://a:",
        "-----BEGIN PRIVATE KEY-----",
        "eyJ",
        "AKIA",
        "sk-",
        "token: \"",
        "ghp_",
        "Bearer ",
        "Bearer aZ3xK9",
        "-u a:",
        "-u a:bcd ",
        "Authorization: Basic ",
        "x",
        "é",
    ];
    let mut worst = 0.0f64;
    for unit in hostile {
        worst = worst.max(time(&format!("{unit:?}"), &fill(unit)));
    }
    println!("worst/prose ratio: {:.1}", worst / base);
}
