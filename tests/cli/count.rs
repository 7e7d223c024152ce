//! `ctxkeep count`: tokens per file and in total, like wc.

use serde::Deserialize;

use ctxkeep::tokens::{count, Encoding};

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
        .ctxkeep(&["count"])
        .write_stdin("hello world")
        .assert()
        .success();
    assert_eq!(
        String::from_utf8(out.get_output().stdout.clone()).unwrap(),
        "      2 -\n"
    );
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
