//! Times `observe::observe` on generated Claude Code transcripts of growing size, to check that
//! the cost stays flat (issue 12: 100 MB at most 1.5× the 1 MB figure), or prints the
//! observation of one transcript.
//!
//! cargo run --release --example observe_bench                # 1, 10, 100 MB
//! cargo run --release --example observe_bench -- 1 100 1000  # sizes in MB
//! cargo run --release --example observe_bench -- --show PATH

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use ctxkeep::agents::observe;
use ctxkeep::transcripts::activity::{loops_found, LoopLimits};
use serde_json::json;

/// One turn of a busy session: a prompt, reads with large results, an edit, a test run that
/// fails, progress lines and an injected reminder, roughly in the proportions of real files.
fn turn(n: usize) -> Vec<String> {
    let root = "/home/dev/proj";
    let env = |ty: &str, message: serde_json::Value| {
        json!({"parentUuid": "p", "isSidechain": false, "userType": "external", "cwd": root,
               "sessionId": "bench", "version": "2.1.328", "type": ty, "message": message,
               "uuid": format!("u{n}"), "timestamp": "2026-11-23T19:00:00.000Z"})
        .to_string()
    };
    let tool = |id: &str, name: &str, input: serde_json::Value| {
        env(
            "assistant",
            json!({"model": "claude-opus-5-5", "id": format!("m{n}{id}"), "role": "assistant",
                   "content": [{"type": "tool_use", "id": format!("{id}{n}"), "name": name, "input": input}],
                   "usage": {"input_tokens": 3, "cache_read_input_tokens": 90000, "output_tokens": 50}}),
        )
    };
    let result = |id: &str, text: String, err: bool| {
        env(
            "user",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("{id}{n}"),
                   "content": text, "is_error": err}]}),
        )
    };
    let file_body = "fn main() { println!(\"hello\"); }\n".repeat(300);
    vec![
        env("user", json!({"role": "user", "content": format!("step {n}: make the parser handle CRLF")})),
        env("assistant", json!({"model": "claude-opus-5-5", "id": format!("t{n}"), "role": "assistant",
            "content": [{"type": "text", "text": "Let me look at the parser first. ".repeat(20)}]})),
        tool("r", "Read", json!({"file_path": format!("{root}/src/parser.rs")})),
        result("r", file_body.clone(), false),
        tool("g", "Grep", json!({"pattern": "split"})),
        result("g", "src/parser.rs:12: split\n".repeat(200), false),
        tool("e", "Edit", json!({"file_path": format!("{root}/src/parser{}.rs", n % 7), "old_string": "a", "new_string": "b"})),
        result("e", "The file has been updated.".into(), false),
        json!({"type": "progress", "isSidechain": false, "data": {"type": "bash_progress", "output": "x".repeat(500)}}).to_string(),
        tool("b", "Bash", json!({"command": "cargo test", "description": "run tests"})),
        result("b", format!("Exit code 101\n{}", "test parser ... FAILED\n".repeat(100)), true),
        json!({"type": "api-request-blob", "role": "user", "content": [{"type": "text", "text": "<system-reminder>".to_string() + &"r".repeat(3000)}]}).to_string(),
    ]
}

fn generate(path: &Path, bytes: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = 0u64;
    let mut n = 0;
    while written < bytes {
        for l in turn(n) {
            writeln!(f, "{l}").unwrap();
            written += l.len() as u64 + 1;
        }
        n += 1;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--show") {
        let path = Path::new(args.get(1).expect("--show PATH"));
        let obs = observe(path, None, None, chrono::Utc::now()).unwrap_or_else(|e| {
            eprintln!("observe_bench: {e}");
            std::process::exit(1)
        });
        println!("{}", serde_json::to_string_pretty(&obs).unwrap());
        println!("loops: {:?}", loops_found(&obs, &LoopLimits::default()));
        return;
    }
    let sizes: Vec<u64> = if args.is_empty() {
        vec![1, 10, 100]
    } else {
        args.iter()
            .map(|a| a.parse().expect("size in MB"))
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    for mb in sizes {
        let path = dir.path().join(format!("bench-{mb}.jsonl"));
        generate(&path, mb * 1024 * 1024);
        let runs = 20;
        let mut times = Vec::new();
        let mut obs = None;
        for _ in 0..runs {
            let t = Instant::now();
            obs = Some(
                observe(
                    &path,
                    None,
                    Some(Path::new("/home/dev/proj")),
                    chrono::Utc::now(),
                )
                .unwrap(),
            );
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let obs = obs.unwrap();
        println!(
            "{mb:>5} MB: median {:.2} ms, min {:.2} ms ({} files, {} commands, loops {})",
            times[runs / 2],
            times[0],
            obs.files.len(),
            obs.commands.len(),
            loops_found(&obs, &LoopLimits::default()).len()
        );
    }
}
