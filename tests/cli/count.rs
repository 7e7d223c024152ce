//! `ctxkeep count`: tokens per file and in total, like wc.

use serde::Deserialize;

use ctxkeep::context::tokens::{count, Encoding};

use crate::support::Project;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Count {
    encoding: String,
    files: Vec<FileCount>,
    total: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCount {
    path: String,
    tokens: u64,
}

const A: &str = "The quick brown fox jumps over the lazy dog.\n";
const B: &str = "fn main() {\n    println!(\"héllo, wörld\");\n}\n";

fn stdout(p: &Project, args: &[&str]) -> String {
    let out = p.ctxkeep(args).assert().success().get_output().clone();
    assert!(out.stderr.is_empty(), "no progress bar off a terminal");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn counts_each_file_and_the_total_like_wc() {
    let p = Project::bare();
    p.write("a.txt", A);
    p.write("b.rs", B);
    let (a, b) = (
        count(A, Encoding::O200kBase).unwrap(),
        count(B, Encoding::O200kBase).unwrap(),
    );
    let text = stdout(&p, &["count", "a.txt", "b.rs"]);
    assert_eq!(
        text,
        format!("{a:>7} a.txt\n{b:>7} b.rs\n{:>7} total\n", a + b)
    );
    let (v, code) = p.json(&["count", "a.txt", "b.rs"]);
    assert_eq!(code, 0);
    let c: Count = serde_json::from_value(v).unwrap();
    assert_eq!(c.encoding, "o200k_base");
    assert_eq!(c.total, (a + b) as u64);
    assert_eq!(
        (c.files[1].path.as_str(), c.files[1].tokens),
        ("b.rs", b as u64)
    );
    // One file: no total line.
    assert_eq!(stdout(&p, &["count", "a.txt"]), format!("{a:>7} a.txt\n"));
}

#[test]
fn hello_world_is_two_tokens_from_stdin() {
    let p = Project::bare();
    let out = p
        .ctxkeep(&["count", "-"])
        .write_stdin("hello world")
        .assert()
        .success();
    assert_eq!(
        String::from_utf8(out.get_output().stdout.clone()).unwrap(),
        "      2 -\n"
    );
}

/// stdin is read only when asked for (`-`): with no file, nothing is read
/// (a hook or a script that forgot the file does not hang on a terminal).
#[test]
fn stdin_is_read_only_when_asked() {
    let p = Project::bare();
    let out = p
        .ctxkeep(&["count"])
        .write_stdin("hello world")
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("<FILE|->"), "{err}");
    p.write("a.txt", A);
    let (v, code) = {
        let out = p
            .ctxkeep(&["--json", "count", "a.txt", "-"])
            .write_stdin("hello world")
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, out.status.code())
    };
    assert_eq!(code, Some(0));
    assert_eq!(v["files"][1]["path"], "-");
    assert_eq!(v["files"][1]["tokens"], 2);
}

/// Devices and FIFOs are refused as every other input path is: at once,
/// without reading (`/dev/zero` grew to gigabytes) or waiting for a
/// writer (a FIFO with none blocked forever).
#[test]
fn devices_and_fifos_are_refused_without_blocking() {
    let p = Project::bare();
    p.write("a.txt", A);
    let fifo = p.path("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for target in ["/dev/zero", "/dev/null", fifo.to_str().unwrap()] {
        let out = p
            .ctxkeep(&["count", "a.txt", target])
            // A guard against hanging, not a measure: the refusal is immediate.
            .timeout(std::time::Duration::from_secs(120))
            .assert()
            .code(66)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(target), "{err}");
        assert!(err.contains("not a regular file"), "{err}");
        assert!(out.stdout.is_empty(), "no partial counts");
    }
}

/// A stream is counted as it is read: 192 MiB through a pipe, and the
/// process never holds more than a few blocks of it (before: all of it,
/// 2.5 GB for `yes` in 5 s). The peak is read from /proc while the count
/// waits for the end of its input, after everything else was consumed.
#[cfg(target_os = "linux")]
#[test]
fn a_big_stream_is_counted_exactly_in_bounded_memory() {
    use std::io::Write;
    let p = Project::bare();
    let line = "The quick brown fox jumps over the lazy dog.\n";
    let block = line.repeat(1 << 14);
    let blocks = (192 << 20) / block.len();
    let mut child = p
        .ctxkeep_std(&["count", "--encoding", "o200k_base", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for _ in 0..blocks {
        stdin.write_all(block.as_bytes()).unwrap();
    }
    stdin.flush().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    // Lines cut after their newline add up: the whole is n times one line.
    let want = count(line, Encoding::O200kBase).unwrap() * blocks * (1 << 14);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{want:>7} -\n")
    );
    let streamed_mib = (blocks * block.len()) >> 20;
    assert!(
        peak_kb < 96 * 1024,
        "peak {peak_kb} KiB after {streamed_mib} MiB streamed"
    );
}

/// Input with nowhere to cut the count (no line break followed by text)
/// is held whole up to 64 MiB and counted; past that it is refused with
/// one line, instead of growing memory without bound.
#[test]
fn a_run_with_no_place_to_cut_is_refused_past_64_mib() {
    let p = Project::bare();
    let zeros = vec![0u8; (64 << 20) + 1];
    let out = p
        .ctxkeep(&["count", "-"])
        .write_stdin(zeros)
        .assert()
        .code(65)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("-: over 64 MiB from byte offset 0"), "{err}");
    assert!(out.stdout.is_empty());
    // A long line over more than one read block, after some short ones:
    // counted exactly.
    let text = format!("one line\nanother\n{}", "word ".repeat(1 << 20));
    p.write("runon.txt", &text);
    let (v, code) = p.json(&["count", "runon.txt"]);
    assert_eq!(code, 0);
    assert_eq!(v["total"], count(&text, Encoding::O200kBase).unwrap());
}

#[test]
fn encoding_comes_from_the_flag_or_the_project() {
    let p = Project::new();
    p.write("a.txt", B);
    p.ctxkeep(&["init", "--encoding", "cl100k_base"])
        .assert()
        .success();
    let (v, _) = p.json(&["count", "a.txt"]);
    assert_eq!(v["encoding"], "cl100k_base");
    assert_eq!(v["total"], count(B, Encoding::Cl100kBase).unwrap());
    let (v, _) = p.json(&["count", "--encoding", "o200k_base", "a.txt"]);
    assert_eq!(v["encoding"], "o200k_base");
    assert_eq!(v["total"], count(B, Encoding::O200kBase).unwrap());
}

#[test]
fn bad_input_is_one_line_naming_the_file() {
    let p = Project::bare();
    p.write("ok.txt", A);
    p.write("bad.bin", b"ok\xff\xfe");
    std::fs::create_dir(p.path("dir")).unwrap();
    for (args, code, name) in [
        (vec!["count", "ok.txt", "missing.txt"], 66, "missing.txt"),
        (vec!["count", "dir"], 66, "dir"),
        (vec!["count", "bad.bin"], 65, "bad.bin"),
    ] {
        let out = p.ctxkeep(&args).assert().code(code).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(name), "{err}");
        assert!(out.stdout.is_empty(), "no partial counts");
    }
    p.ctxkeep(&["count", "--encoding", "nope", "ok.txt"])
        .assert()
        .code(2);
    p.ctxkeep(&["count", "--model", "no-such-model", "ok.txt"])
        .assert()
        .code(2);
    p.ctxkeep(&["count", "-", "-"]).assert().code(2);
}

/// tiktoken-rs 0.12 panics (a regex backtracking limit, unwrapped) on about a
/// million spaces followed by text; ctxkeep must count it, and exactly.
#[test]
fn a_million_spaces_then_text_counts_like_tiktoken_and_never_panics() {
    let p = Project::bare();
    // Just under tiktoken's limit, so tiktoken-rs itself gives the reference.
    let near = format!("x{}hello world\n", " ".repeat(999_000));
    let want = tiktoken_rs::o200k_base()
        .unwrap()
        .encode_ordinary(&near)
        .len();
    p.write("near.txt", &near);
    let (v, code) = p.json(&["count", "--encoding", "o200k_base", "near.txt"]);
    assert_eq!((code, v["total"].as_u64()), (0, Some(want as u64)));
    // Past it: a clean exact count, no panic. Spaces merge into long tokens,
    // so one more space never costs more than one more token.
    let past = format!("x{}hello world\n", " ".repeat(1_200_000));
    p.write("past.txt", &past);
    let out = p
        .ctxkeep(&["--json", "count", "past.txt"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = v["total"].as_u64().unwrap();
    assert!(
        got > want as u64 && got <= want as u64 + 201_000,
        "{got} vs {want}"
    );
}

/// p50k_base and r50k_base are built in only with `--features
/// legacy-encodings`: without it, naming them (a flag or the project's
/// config) is one line saying so, exit 2, and no file is written.
#[test]
fn legacy_encodings_need_their_feature() {
    let p = Project::new();
    p.write("a.txt", A);
    for enc in ["p50k_base", "r50k_base"] {
        let counted = p
            .ctxkeep(&["count", "--encoding", enc, "a.txt"])
            .output()
            .unwrap();
        if cfg!(feature = "legacy-encodings") {
            assert!(counted.status.success());
            let want = enc
                .parse::<Encoding>()
                .map(|e| count(A, e).unwrap())
                .unwrap();
            assert!(String::from_utf8_lossy(&counted.stdout).starts_with(&format!("{want:>7} ")));
            continue;
        }
        for args in [
            vec!["count", "--encoding", enc, "a.txt"],
            vec!["init", "--encoding", enc],
        ] {
            let out = p.ctxkeep(&args).assert().code(2).get_output().clone();
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(err.contains("built without") && err.contains(enc), "{err}");
            assert!(err.contains("legacy-encodings"), "{err}");
            assert!(out.stdout.is_empty());
        }
        assert!(!p.path("project-state.md").exists());
        let help = p
            .ctxkeep(&["count", "--help"])
            .assert()
            .success()
            .get_output()
            .clone();
        let help = String::from_utf8(help.stdout).unwrap();
        assert!(
            help.contains(&format!("{enc}:   not in this build")),
            "{help}"
        );
    }
    if cfg!(feature = "legacy-encodings") {
        return;
    }
    // A config naming one: counting with it is a usage error too.
    p.ctxkeep(&["init"]).assert().success();
    let state = std::fs::read_to_string(p.path("project-state.md")).unwrap();
    let edited = state.replace("encoding: o200k_base", "encoding: p50k_base");
    assert_ne!(edited, state);
    p.write("project-state.md", &edited);
    let out = p
        .ctxkeep(&["count", "a.txt"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("built without the p50k_base tables"), "{err}");
    assert_eq!(
        std::fs::read_to_string(p.path("project-state.md")).unwrap(),
        edited
    );
}
