//! What a failed command's output says, reduced to what tells one failure from another: a
//! signature (its lines with the numbers, hashes and timings taken out, as a set, so parallel
//! test output in another order is the same failure), the number of failures it reports, the
//! failing tests it names, and its first error line to quote. Also the verdict a test runner's
//! summary gives when the exit code cannot be trusted (a pipe into `tail`).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// At most this much output is looked at: its start and its end, where errors and summaries are.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// The first error line is quoted up to this many characters.
const MAX_LINE_CHARS: usize = 160;
/// At most this many failing tests are kept.
const MAX_TESTS: usize = 5;

/// One failed run, as compared with the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub exit_code: Option<i64>,
    /// Hash of the output's normalised lines, as a set (16 hex digits).
    pub signature: String,
    /// How many failures the output reports (a test summary, or the failing tests named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<u32>,
    /// The first line that reads as an error (else the last line), redacted and cut.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub first_error: String,
    /// Failing tests the output names, at most five.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
}

impl Failure {
    /// Reads a failed run's output.
    pub fn of(exit_code: Option<i64>, output: &str) -> Failure {
        let output = strip_exit_line(output);
        let mut lines: BTreeSet<String> = BTreeSet::new();
        let mut first_error = None;
        let mut last = None;
        for raw in output.lines() {
            let line = strip_ansi(raw);
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if first_error.is_none() && reads_as_error(line) {
                first_error = Some(line.to_string());
            }
            last = Some(line.to_string());
            lines.insert(normalise(line));
        }
        let mut h = Sha256::new();
        for l in &lines {
            h.update(l.as_bytes());
            h.update([0]);
        }
        let digest = h.finalize();
        let tests = failing_tests(output);
        Failure {
            exit_code,
            signature: digest[..8].iter().map(|b| format!("{b:02x}")).collect(),
            failures: failure_count(output).or_else(|| {
                (!tests.is_empty()).then(|| u32::try_from(tests.len()).unwrap_or(u32::MAX))
            }),
            first_error: first_error
                .or(last)
                .map(|l| super::text::cut(crate::redact::redact(&l).as_ref(), MAX_LINE_CHARS))
                .unwrap_or_default(),
            tests: tests
                .into_iter()
                .take(MAX_TESTS)
                .map(|t| crate::redact::redact(&t).into_owned())
                .collect(),
        }
    }

    /// Whether `self`, the newer run, is the same failure as `before`: the same exit code and
    /// the same lines, and no fewer failures reported.
    pub fn same_as(&self, before: &Failure) -> bool {
        self.exit_code == before.exit_code
            && self.signature == before.signature
            && !matches!((self.failures, before.failures), (Some(now), Some(was)) if now < was)
    }
}

/// `output` cut to its first and last [`MAX_OUTPUT_BYTES`]/2, on character boundaries.
pub fn bounded(output: &str) -> String {
    if output.len() <= MAX_OUTPUT_BYTES {
        return output.to_string();
    }
    let half = MAX_OUTPUT_BYTES / 2;
    let mut head = half;
    while !output.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = output.len() - half;
    while !output.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}\n{}", &output[..head], &output[tail..])
}

/// The leading "Exit code N" line (and an "Error: " prefix) the agents put before a failed
/// command's output: the code is compared on its own.
fn strip_exit_line(output: &str) -> &str {
    let t = output.trim_start();
    let t = t.strip_prefix("Error: ").unwrap_or(t);
    match t.split_once('\n') {
        Some((first, rest)) if super::text::exit_code_in(first).is_some() => rest,
        None if super::text::exit_code_in(t).is_some() => "",
        _ => t,
    }
}

fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    static ANSI: OnceLock<Regex> = OnceLock::new();
    let re = ANSI.get_or_init(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07").unwrap());
    re.replace_all(line, "")
}

/// A line with what changes from run to run for the same failure taken out: hashes and hex
/// ids, temporary names, every number (times, line numbers, seeds, process ids, counts).
fn normalise(line: &str) -> String {
    static HEX: OnceLock<Regex> = OnceLock::new();
    static TMP: OnceLock<Regex> = OnceLock::new();
    static NUM: OnceLock<Regex> = OnceLock::new();
    static SPACE: OnceLock<Regex> = OnceLock::new();
    let hex = HEX.get_or_init(|| Regex::new(r"\b[0-9a-fA-F]{6,}\b").unwrap());
    let tmp = TMP.get_or_init(|| Regex::new(r"(?i)\.?tmp[A-Za-z0-9_]{4,}").unwrap());
    let num = NUM.get_or_init(|| Regex::new(r"[0-9]+").unwrap());
    let space = SPACE.get_or_init(|| Regex::new(r"\s+").unwrap());
    let l = tmp.replace_all(line, "tmp#");
    // A long run of hex digits with a digit in it is a hash or an id, not a word.
    let l = hex.replace_all(&l, |c: &regex::Captures| {
        if c[0].bytes().any(|b| b.is_ascii_digit()) {
            "#".to_string()
        } else {
            c[0].to_string()
        }
    });
    let l = num.replace_all(&l, "#");
    space.replace_all(&l, " ").into_owned()
}

/// Words that mark a line as an error in most tools' output.
fn reads_as_error(line: &str) -> bool {
    static ERR: OnceLock<Regex> = OnceLock::new();
    let re = ERR.get_or_init(|| {
        Regex::new(
            r"(?i)\b(error|errors|failed|failure|failures|fail|panicked|panic|exception|traceback|fatal|cannot|could not|not found|undefined|denied|refused|assert\w*)\b",
        )
        .unwrap()
    });
    re.is_match(line) && !line.to_ascii_lowercase().contains("0 failed")
}

/// The number of failures a test runner's summary reports: cargo (`test result: FAILED. 3
/// passed; 2 failed`), pytest (`2 failed, 3 passed`), Jest (`Tests: 2 failed`), ExUnit (`5
/// tests, 2 failures`), mocha (`2 failing`), a compiler's `N previous errors` or `Found N
/// errors`. The largest figure found: a summary repeated per target adds no failures.
fn failure_count(output: &str) -> Option<u32> {
    static COUNT: OnceLock<Regex> = OnceLock::new();
    let re = COUNT.get_or_init(|| {
        Regex::new(r"(?i)\b([0-9]+) (?:failed|failures?|failing|previous errors?|errors?)\b")
            .unwrap()
    });
    re.captures_iter(output)
        .filter_map(|c| c[1].parse::<u32>().ok())
        .max()
}

/// The failing tests a runner names: cargo (`test a::b ... FAILED`), pytest (`FAILED
/// path::test`), Go (`--- FAIL: TestX`), Jest (`✕ name`), ExUnit (`1) test name (Module)`).
fn failing_tests(output: &str) -> Vec<String> {
    static TESTS: OnceLock<Regex> = OnceLock::new();
    let re = TESTS.get_or_init(|| {
        Regex::new(
            r"(?m)^\s*(?:test (\S+) \.\.\. FAILED|FAILED (\S+)|--- FAIL: (\S+)|[✕×] (.+?)(?: \([0-9.]+ ?m?s\))?$|[0-9]+\) test (.+?) \([^)]*\)$)",
        )
        .unwrap()
    });
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(output) {
        let name = (1..=5)
            .find_map(|i| c.get(i))
            .map(|m| m.as_str().trim().to_string());
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// What a test runner's summary says of the run, when it has one: the verdict for a command
/// whose exit code is not its own (`cargo test 2>&1 | tail -20` exits as `tail` does).
pub fn verdict_from_output(output: &str) -> Option<bool> {
    static FAILED: OnceLock<Regex> = OnceLock::new();
    static PASSED: OnceLock<Regex> = OnceLock::new();
    let failed = FAILED.get_or_init(|| {
        Regex::new(
            r"(?im)test result: FAILED|^FAILED\b|^--- FAIL:|^FAIL\b|\b[1-9][0-9]* (?:failed|failing)\b|\b[1-9][0-9]* failures?\b|Tests:\s+[1-9][0-9]* failed|error(?:\[E[0-9]+\])?: could not compile",
        )
        .unwrap()
    });
    let passed = PASSED.get_or_init(|| {
        Regex::new(
            r"(?im)test result: ok\.|\b[0-9]+ passed\b|\b0 failures\b|\b[0-9]+ passing\b|^ok\s+\S+\s",
        )
        .unwrap()
    });
    if failed.is_match(output) {
        Some(false)
    } else if passed.is_match(output) {
        Some(true)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CARGO_TWO: &str = "   Compiling demo v0.1.0 (/tmp/.tmpAb12Cd/demo)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.41s
     Running unittests src/lib.rs (target/debug/deps/demo-3f9a1c2b7d4e5f60)

running 4 tests
test parse::keeps_order ... ok
test parse::blank_lines ... FAILED
test parse::crlf ... FAILED
test parse::empty ... ok

failures:

---- parse::blank_lines stdout ----
thread 'parse::blank_lines' panicked at src/parse.rs:41:9:
assertion `left == right` failed
  left: 3
 right: 4

failures:
    parse::blank_lines
    parse::crlf

test result: FAILED. 2 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    #[test]
    fn the_same_failure_in_another_run_has_the_same_signature() {
        // Another temp dir, build hash, timing, line number and order of the parallel tests.
        let again = CARGO_TWO
            .replace(".tmpAb12Cd", ".tmpZz99Yy")
            .replace("3f9a1c2b7d4e5f60", "0a1b2c3d4e5f6071")
            .replace("0.41s", "0.38s")
            .replace("41:9", "42:9")
            .replace(
                "test parse::keeps_order ... ok\ntest parse::blank_lines ... FAILED",
                "test parse::blank_lines ... FAILED\ntest parse::keeps_order ... ok",
            );
        let a = Failure::of(Some(101), CARGO_TWO);
        let b = Failure::of(Some(101), &again);
        assert!(b.same_as(&a), "{a:?} vs {b:?}");
        assert_eq!(a.failures, Some(2));
        assert_eq!(a.tests, vec!["parse::blank_lines", "parse::crlf"]);
        assert!(a.first_error.contains("FAILED"), "{}", a.first_error);
    }

    #[test]
    fn fewer_failures_or_another_error_is_not_the_same_failure() {
        let a = Failure::of(Some(101), CARGO_TWO);
        let one = CARGO_TWO
            .replace("test parse::crlf ... FAILED", "test parse::crlf ... ok")
            .replace("    parse::crlf\n", "")
            .replace("2 passed; 2 failed", "3 passed; 1 failed");
        let b = Failure::of(Some(101), &one);
        assert!(!b.same_as(&a));
        assert_eq!(b.failures, Some(1));
        let other = CARGO_TWO.replace("left: 3", "left: \"a\"");
        assert!(!Failure::of(Some(101), &other).same_as(&a));
        assert!(
            !Failure::of(Some(1), CARGO_TWO).same_as(&a),
            "another exit code"
        );
    }

    #[test]
    fn counts_alone_tell_progress_when_the_lines_read_the_same() {
        let a = Failure::of(Some(1), "12 failed, 30 passed in 3.1s");
        let b = Failure::of(Some(1), "11 failed, 31 passed in 3.0s");
        assert_eq!(a.signature, b.signature);
        assert!(!b.same_as(&a), "fewer failures is progress");
        assert!(a.same_as(&b), "more failures is not progress");
    }

    #[test]
    fn the_exit_line_an_agent_adds_is_not_part_of_the_output() {
        let a = Failure::of(Some(3), "Exit code 3\nwidget check failed");
        let b = Failure::of(Some(3), "widget check failed\n");
        assert_eq!(a.signature, b.signature);
        assert_eq!(a.first_error, "widget check failed");
    }

    #[test]
    fn runners_name_their_failing_tests() {
        let text = "FAILED tests/test_a.py::test_x - assert 1 == 2\n--- FAIL: TestParse (0.00s)\n  ✕ renders the list (12 ms)\n  1) test blank lines (Demo.ParseTest)\n";
        assert_eq!(
            failing_tests(text),
            vec![
                "tests/test_a.py::test_x",
                "TestParse",
                "renders the list",
                "blank lines"
            ]
        );
    }

    #[test]
    fn a_summary_gives_the_verdict_a_pipe_hides() {
        assert_eq!(verdict_from_output(CARGO_TWO), Some(false));
        assert_eq!(
            verdict_from_output("test result: ok. 4 passed; 0 failed; 0 ignored"),
            Some(true)
        );
        assert_eq!(
            verdict_from_output("==== 3 passed in 0.12s ===="),
            Some(true)
        );
        assert_eq!(verdict_from_output("5 tests, 0 failures"), Some(true));
        assert_eq!(verdict_from_output("5 tests, 2 failures"), Some(false));
        assert_eq!(verdict_from_output("total 12\ndrwxr-xr-x 2 a b"), None);
    }

    #[test]
    fn long_output_keeps_its_ends() {
        let long = format!("start\n{}\nend", "x".repeat(200_000));
        let b = bounded(&long);
        assert!(b.len() <= MAX_OUTPUT_BYTES + 1);
        assert!(b.starts_with("start") && b.ends_with("end"));
    }
}
