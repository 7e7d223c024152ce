//! What a failed command's output says, reduced to what tells one failure from another: a
//! signature (its lines with the numbers, hashes and timings taken out, as a set, so parallel
//! test output in another order is the same failure), the number of failures it reports, the
//! failing tests it names, and its first error line to quote. Also the verdict a test runner's
//! summary gives when the exit code cannot be trusted (a pipe into `tail`).

use std::collections::BTreeSet;

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
            lines.insert(normalise(&without_temp_names(line)));
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
                .map(|l| {
                    super::text::cut(crate::system::redact::redact(&l).as_ref(), MAX_LINE_CHARS)
                })
                .unwrap_or_default(),
            tests: tests
                .into_iter()
                .take(MAX_TESTS)
                .map(|t| crate::system::redact::redact(&t).into_owned())
                .collect(),
        }
    }

    /// Whether `self`, the newer run, is the same failure as `before`: the same exit code and
    /// the same lines, and no fewer failures reported. A run that printed nothing (or whose
    /// output the agent lost: Qwen Code 0.24.4 sometimes records a failing command's stderr as
    /// empty) shows no progress either, so with the same exit code it counts as the same.
    pub fn same_as(&self, before: &Failure) -> bool {
        self.exit_code == before.exit_code
            && (self.says_nothing()
                || before.says_nothing()
                || (self.signature == before.signature
                    && !matches!((self.failures, before.failures), (Some(now), Some(was)) if now < was)))
    }

    /// The run printed nothing to tell it by.
    pub fn says_nothing(&self) -> bool {
        self.first_error.is_empty()
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

/// `line` without its terminal escape sequences (colours, cursor moves, titles).
fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\x1b') {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters, then one letter.
            Some('[') => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC \.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.peek() == Some(&'\\')) {
                        if c == '\x1b' {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A line with what changes from run to run for the same failure taken out: hashes and hex
/// ids, temporary names, every number (times, line numbers, seeds, process ids, counts), runs
/// of blank space.
fn normalise(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let mut blank = false;
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let hex = (word.len() >= 6
            && word.bytes().all(|b| b.is_ascii_hexdigit())
            && word.bytes().any(|b| b.is_ascii_digit()))
            || short_hex_id(word);
        let lower = word.to_ascii_lowercase();
        if hex {
            out.push('#');
        } else if lower.starts_with("tmp") && word.len() >= 7 {
            out.push_str("tmp#");
        } else {
            let mut digits = false;
            for c in word.chars() {
                if c.is_ascii_digit() {
                    if !digits {
                        out.push('#');
                    }
                    digits = true;
                } else {
                    out.push(c);
                    digits = false;
                }
            }
        }
        word.clear();
    };
    for c in line.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            if blank {
                out.push(' ');
                blank = false;
            }
            word.push(c);
        } else if c.is_whitespace() {
            flush(&mut word, &mut out);
            blank = !out.is_empty();
        } else {
            flush(&mut word, &mut out);
            if blank {
                out.push(' ');
                blank = false;
            }
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A hex id too short for the rule above: `0x` and hex digits (an address, a handle), or four
/// or five lowercase hex digits with a digit and a letter among them (a UUID's middle groups,
/// a short hash). Lint codes such as `E501` are upper case, and stay.
fn short_hex_id(word: &str) -> bool {
    if let Some(rest) = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        return !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_hexdigit());
    }
    (4..6).contains(&word.len())
        && word
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// `line` with the names a run makes up in a temporary folder replaced: the component after
/// `/tmp/`, `/var/tmp/`, macOS's `/var/folders/…/T/` or Windows' `\Temp\` (`mktemp`'s
/// `tmp.Xa8bQ2kLmN`, `pytest-of-u`, a test's own folder) becomes `tmp#`.
fn without_temp_names(line: &str) -> std::borrow::Cow<'_, str> {
    static TEMP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)((?:^|[\s'\x22(=:])(?:/private)?(?:/tmp/|/var/tmp/|/var/folders/[^/\s]+/[^/\s]+/T/)|\\temp\\)[^/\\\s:'\x22)]+",
        )
        .expect("temporary path regex")
    });
    if !line.contains("tmp") && !line.contains("/T/") && !line.to_ascii_lowercase().contains("temp")
    {
        return std::borrow::Cow::Borrowed(line);
    }
    TEMP.replace_all(line, "${1}tmp#")
}

/// Words that mark a line as an error in most tools' output.
fn reads_as_error(line: &str) -> bool {
    const WORDS: [&str; 14] = [
        "error",
        "errors",
        "failed",
        "failure",
        "failures",
        "fail",
        "panicked",
        "panic",
        "exception",
        "traceback",
        "fatal",
        "cannot",
        "undefined",
        "denied",
    ];
    let lower = line.to_ascii_lowercase();
    if lower.contains("0 failed") {
        return false;
    }
    lower.contains("could not")
        || lower.contains("not found")
        || lower.contains("refused")
        || lower
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|w| WORDS.contains(&w) || w.starts_with("assert"))
}

/// Every "N word" in `output`'s lines: a number, then the next word (lowercase, its punctuation
/// off); "N previous errors" gives "errors".
fn counted(output: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for line in output.lines() {
        counted_in(line, &mut out);
    }
    out
}

fn counted_in(line: &str, out: &mut Vec<(u32, String)>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let Ok(n) = w.parse::<u32>() else { continue };
        let clean = |w: &str| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_ascii_lowercase()
        };
        let Some(next) = words.get(i + 1).map(|w| clean(w)) else {
            continue;
        };
        let word = match (next.as_str(), words.get(i + 2).map(|w| clean(w))) {
            ("previous", Some(after)) => after,
            _ => next,
        };
        out.push((n, word));
    }
}

const FAILED_WORDS: [&str; 4] = ["failed", "failing", "failure", "failures"];

/// The number of failures a test runner's summary reports: cargo (`test result: FAILED. 3
/// passed; 2 failed`), pytest (`2 failed, 3 passed`), Jest (`Tests: 2 failed`), ExUnit (`5
/// tests, 2 failures`), mocha (`2 failing`), a compiler's `N previous errors` or `Found N
/// errors`. The largest count found: a summary repeated per target adds no failures.
fn failure_count(output: &str) -> Option<u32> {
    counted(output)
        .into_iter()
        .filter(|(_, w)| FAILED_WORDS.contains(&w.as_str()) || w == "error" || w == "errors")
        .map(|(n, _)| n)
        .max()
}

/// The failing tests a runner names: cargo (`test a::b ... FAILED`), pytest (`FAILED
/// path::test`), Go (`--- FAIL: TestX`), Jest (`✕ name`), ExUnit (`1) test name (Module)`).
fn failing_tests(output: &str) -> Vec<String> {
    let first_word = |s: &str| s.split_whitespace().next().map(str::to_string);
    let mut out: Vec<String> = Vec::new();
    for line in output.lines() {
        let l = line.trim();
        let name = if let Some(rest) = l
            .strip_prefix("test ")
            .and_then(|r| r.strip_suffix(" ... FAILED"))
        {
            Some(rest.trim().to_string())
        } else if let Some(rest) = l.strip_prefix("FAILED ") {
            first_word(rest)
        } else if let Some(rest) = l.strip_prefix("--- FAIL: ") {
            first_word(rest)
        } else if let Some(rest) = l.strip_prefix("✕ ").or_else(|| l.strip_prefix("× ")) {
            let rest = match rest.rsplit_once(" (") {
                Some((name, time)) if time.ends_with("ms)") || time.ends_with("s)") => name,
                _ => rest,
            };
            Some(rest.trim().to_string())
        } else {
            // ExUnit: `1) test name (Module)`.
            let digits = l.bytes().take_while(u8::is_ascii_digit).count();
            l[digits..]
                .strip_prefix(") test ")
                .filter(|_| digits > 0 && l.ends_with(')'))
                .and_then(|r| r.rsplit_once(" ("))
                .map(|(name, _)| name.trim().to_string())
        };
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
    let line_starts = |p: &str| {
        output.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with(p)
                && l[p.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
        })
    };
    let counts = counted(output);
    let failed = output.contains("test result: FAILED")
        || output.contains("could not compile")
        || line_starts("FAILED")
        || line_starts("FAIL")
        || line_starts("--- FAIL:")
        || counts
            .iter()
            .any(|(n, w)| *n > 0 && FAILED_WORDS.contains(&w.as_str()));
    if failed {
        return Some(false);
    }
    let passed = output.contains("test result: ok.")
        || counts.iter().any(|(n, w)| {
            w == "passed" || w == "passing" || (*n == 0 && FAILED_WORDS.contains(&w.as_str()))
        })
        || output.lines().any(|l| {
            l.strip_prefix("ok").is_some_and(|r| {
                r.starts_with(char::is_whitespace) && r.trim().contains(char::is_whitespace)
            })
        });
    passed.then_some(true)
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
    fn colours_and_spacing_do_not_make_another_failure() {
        let plain = Failure::of(Some(1), "error: expected `;`  at src/a.rs:3");
        let coloured = Failure::of(
            Some(1),
            "\x1b[1m\x1b[31merror\x1b[0m: expected `;` at src/a.rs:4\x1b]0;title\x07",
        );
        assert_eq!(plain.signature, coloured.signature);
        assert_eq!(normalise("took 12.5ms, id 3fa9c01bd2"), "took #.#ms, id #");
        assert_eq!(normalise("in /tmp/tmpAbC123x/b"), "in /tmp/tmp#/b");
    }

    #[test]
    fn ids_addresses_and_temporary_names_are_not_what_tells_failures_apart() {
        let one = "thread 'main' panicked at 0x7ffd5e8b: id 3f9a1c2b-7d4e-4a1f-9b2c-0a1b2c3d4e5f in /tmp/tmp.Xa8bQ2kLmN/out.txt, see /var/folders/zz/zyxvpxvq6csfxvn_n000/T/pytest-of-u/x and C:\\Users\\u\\AppData\\Local\\Temp\\nbk3ZqW1\\a.log";
        let two = "thread 'main' panicked at 0x55aa01ff: id 0b1c2d3e-9f8a-4b7c-8d6e-5f4a3b2c1d0e in /tmp/tmp.QzPw9rT2aB/out.txt, see /var/folders/zz/zyxvpxvq6csfxvn_n000/T/pytest-of-v/x and C:\\Users\\u\\AppData\\Local\\Temp\\Hq8PzLm2\\a.log";
        assert_eq!(
            Failure::of(Some(1), one).signature,
            Failure::of(Some(1), two).signature
        );
        // Lint codes and file names still tell failures apart.
        let e501 = Failure::of(Some(1), "src/app.py:41:5: E501 line too long");
        let f841 = Failure::of(Some(1), "src/app.py:41:5: F841 unused variable");
        assert_ne!(e501.signature, f841.signature);
        assert_ne!(
            Failure::of(Some(1), "error in src/cafe.rs").signature,
            Failure::of(Some(1), "error in src/face.rs").signature
        );
        assert_eq!(
            without_temp_names("cd /tmp/build-Ab3x/src && make"),
            "cd /tmp/tmp#/src && make"
        );
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
