//! The reverse line reader under every transcript reader.
//!
//! Input: one byte choosing the chunk size (1..=64), one byte the line cap (0..=255), then the
//! file. Invariants: no panic; the lines read backwards are a plain forward split reversed,
//! without the torn final line, with lines over the cap reported (not loaded) as too long.
#![no_main]

use std::io::Cursor;

use ctxkeep::transcripts::usage::tail::{TailLine, TailReader};
use libfuzzer_sys::fuzz_target;

fn backwards(data: &[u8], chunk: usize, cap: usize) -> Vec<TailLine> {
    let mut r = TailReader::with_limits(Cursor::new(data), data.len() as u64, chunk, cap)
        .expect("in-memory reads do not fail");
    let mut out = Vec::new();
    while let Some(line) = r.next_line().expect("in-memory reads do not fail") {
        out.push(line);
    }
    assert!(r.bytes_read() <= data.len() as u64, "a byte was read twice");
    out
}

fn forwards(data: &[u8], cap: usize) -> Vec<TailLine> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    // Only newline-terminated lines count; the rest is a torn final line.
    let complete = data.iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
    for line in data[..complete].split_inclusive(|&b| b == b'\n') {
        let bytes = &line[..line.len() - 1];
        out.push(if bytes.len() > cap {
            TailLine::TooLong {
                offset,
                len: bytes.len() as u64,
            }
        } else {
            TailLine::Line {
                offset,
                bytes: bytes.to_vec(),
            }
        });
        offset += line.len() as u64;
    }
    out.reverse();
    out
}

fuzz_target!(|data: &[u8]| {
    let [c, m, file @ ..] = data else {
        return;
    };
    let chunk = usize::from(*c % 64) + 1;
    let cap = usize::from(*m);
    assert_eq!(backwards(file, chunk, cap), forwards(file, cap));
    // The production sizes too (one chunk for inputs this small).
    let mut r = TailReader::new(Cursor::new(file), file.len() as u64).unwrap();
    let mut n = 0;
    while r.next_line().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, forwards(file, usize::MAX).len());
});
