use super::*;

fn run(cmd: &str, code: i64, output: &str) -> Step {
    Step {
        id: None,
        action: Action::Command(cmd.into()),
        outcome: Outcome::done(None, Some(code), output),
    }
}

fn edit(path: &str, content: Option<&str>) -> Step {
    Step {
        id: None,
        action: Action::Files(vec![FileChange {
            path: path.into(),
            content: content.map(str::to_string),
            before: None,
        }]),
        outcome: Outcome::done(Some(true), None, ""),
    }
}

fn feed_all(steps: &[Step]) -> Vec<(usize, LoopHit)> {
    let mut s = LoopState::default();
    let limits = LoopLimits::default();
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        for h in s.feed(step, &limits) {
            out.push((i, h));
        }
    }
    out
}

fn pytest(failed: &[&str]) -> String {
    let mut out = String::from("============ test session starts ============\n");
    for t in failed {
        out.push_str(&format!(
            "FAILED tests/test_table.py::{t} - AssertionError\n"
        ));
    }
    out.push_str(&format!(
        "======= {} failed, {} passed in 1.2{}s =======\n",
        failed.len(),
        40 - failed.len(),
        failed.len()
    ));
    out
}

#[test]
fn a_converging_test_fix_loop_never_warns() {
    // 12 → 11 → 2 → 1 → 0 failures, an edit before each run.
    let names: Vec<String> = (0..12).map(|i| format!("test_case_{i}")).collect();
    let mut steps = Vec::new();
    for n in [12usize, 11, 2, 1] {
        let failing: Vec<&str> = names[..n].iter().map(String::as_str).collect();
        steps.push(run("pytest -q tests", 1, &pytest(&failing)));
        steps.push(edit("src/table.py", None));
    }
    steps.push(run("pytest -q tests", 0, "40 passed in 1.1s"));
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn fewer_failures_with_the_same_lines_is_progress() {
    let steps: Vec<Step> = [5, 4, 3, 2]
        .iter()
        .map(|n| run("npm test", 1, &format!("Tests: {n} failed, 10 total")))
        .collect();
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn a_run_whose_output_was_lost_neither_resets_nor_replaces_the_failure() {
    let out = "widget check failed: 2 widgets unparsed";
    let steps = [
        run("make check", 3, out),
        run("make check", 3, ""),
        run("make check", 3, out),
    ];
    let hits = feed_all(&steps);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let LoopHit::SameFailure { count, error, .. } = &hits[0].1 else {
        panic!("{hits:?}");
    };
    assert_eq!((hits[0].0, *count), (2, 3));
    let error = error.as_deref().unwrap_or_default();
    assert!(error.contains("2 widgets unparsed"), "{error}");
    // Another exit code is still another failure.
    let steps = [
        run("make check", 3, out),
        run("make check", 2, ""),
        run("make check", 3, out),
    ];
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn the_same_failure_three_times_warns_once() {
    let out = "error[E0308]: mismatched types\n --> src/lib.rs:10:5\nerror: could not compile `demo` (lib) due to 1 previous error";
    let mut steps = Vec::new();
    for _ in 0..5 {
        steps.push(edit("src/lib.rs", None));
        steps.push(run("cargo build", 101, out));
    }
    let hits = feed_all(&steps);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let (at, hit) = &hits[0];
    assert_eq!(*at, 5, "the third failing run");
    let LoopHit::SameFailure {
        command,
        count,
        error,
    } = hit
    else {
        panic!("{hit:?}")
    };
    assert_eq!((command.as_str(), *count), ("cargo build", 3));
    assert_eq!(
        error.as_deref(),
        Some("exit 101: error[E0308]: mismatched types")
    );
}

/// A commit the project's pre-commit hook blocks: now the linter (on a new line each
/// time), now the type checker (the same error each time).
fn blocked_commit(i: usize) -> Step {
    let out = if i.is_multiple_of(2) {
        format!(
            "ruff.....Failed\n- hook id: ruff\n- exit code: 1\n\nsrc/billing.py:{}:5: F841 Local variable `tmp{i}` is assigned to but never used\nFound 1 error.\nmypy.....Passed",
            10 + i
        )
    } else {
        "ruff.....Passed\nmypy.....Failed\n- hook id: mypy\n- exit code: 1\n\nsrc/billing.py:20: error: Incompatible return value type (got \"float\", expected \"Decimal\")  [return-value]\nFound 1 error in 1 file (checked 3 source files)".to_string()
    };
    run(
        &format!("git add src/billing.py && git commit -m \"Fix rounding, take {i}\""),
        1,
        &out,
    )
}

#[test]
fn a_commit_blocked_again_and_again_while_one_file_is_edited_warns_once() {
    let mut steps = vec![edit("src/billing.py", None)];
    for i in 0..6 {
        steps.push(blocked_commit(i));
        steps.push(edit("src/billing.py", None));
        steps.push(run("git status --short", 0, " M src/billing.py"));
    }
    steps.push(run("git commit --no-verify -m x", 0, "[main 1a2b3c] x"));
    let hits = feed_all(&steps);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let (
        at,
        LoopHit::Blocked {
            command,
            count,
            path,
            error,
        },
    ) = &hits[0]
    else {
        panic!("{hits:?}");
    };
    // At the fifth blocked commit, before the sixth and the skipped checks.
    assert_eq!((*at, *count, path.as_str()), (13, 5, "src/billing.py"));
    assert!(command.contains("git commit"), "{command}");
    assert!(
        error.as_deref().unwrap_or_default().contains("exit 1"),
        "{error:?}"
    );
    // A pass in between starts the count again; so does another file.
    let mut steps = Vec::new();
    for i in 0..8 {
        steps.push(edit(
            if i == 4 {
                "src/other.py"
            } else {
                "src/billing.py"
            },
            None,
        ));
        steps.push(blocked_commit(i));
        if i == 2 {
            steps.push(run("git commit -m ok", 0, "[main 1] ok"));
        }
    }
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn a_test_run_failing_less_each_time_is_not_blocked() {
    let mut steps = Vec::new();
    for n in (1..=7).rev() {
        steps.push(edit("src/table.py", None));
        steps.push(run(
            "pytest -q",
            1,
            &format!("FAILED tests/t.py::test_{n}\n{n} failed, 3 passed in 0.2s"),
        ));
    }
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn a_loop_ends_when_a_later_run_of_its_check_passes() {
    let mut s = LoopState::default();
    let limits = LoopLimits::default();
    let out = "error[E0308]: mismatched types";
    let mut hits = Vec::new();
    for _ in 0..3 {
        hits.extend(s.feed(&run("cargo build", 101, out), &limits));
    }
    assert_eq!(hits.len(), 1);
    assert!(!s.ended(&hits[0]));
    s.feed(&run("cargo build", 0, "Finished"), &limits);
    assert!(s.ended(&hits[0]));
}

#[test]
fn three_runs_failing_for_different_reasons_never_warn() {
    let steps =
        vec![
        run("git commit -m x", 1, "[DIALYZER]\nlib/a.ex:57:13:pattern_match"),
        edit("lib/a.ex", None),
        run(
            "git commit -m x",
            1,
            "[CREDO]\n[R] Prefer using an implicit `try`\n[DIALYZER]\nlib/a.ex:57:13:pattern_match",
        ),
        edit("lib/a.ex", None),
        run("git commit -m x", 1, "[DIALYZER]\nlib/a.ex:58:13:no_return"),
    ];
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn ten_green_edits_of_one_file_never_warn() {
    let mut steps = Vec::new();
    for i in 0..10 {
        steps.push(edit("src/parser.rs", Some(&format!("v{i}"))));
        steps.push(run("cargo test", 0, "test result: ok. 12 passed"));
    }
    for i in 10..20 {
        steps.push(edit("src/parser.rs", Some(&format!("v{i}"))));
    }
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn a_new_file_refined_by_lint_driven_edits_never_warns() {
    // Each lint run fails on something new; the tests stay green.
    let lints = [
        "unused variable: `row`",
        "this `if` has identical blocks",
        "redundant clone",
        "needless borrow",
        "you seem to be trying to use `match` for destructuring a single pattern",
        "length comparison to zero",
        "manual implementation of `Option::map`",
    ];
    let mut steps = vec![edit("src/new.rs", Some("v0"))];
    for (i, lint) in lints.iter().enumerate() {
        steps.push(run(
            "cargo clippy -- -D warnings",
            101,
            &format!("error: {lint}\n --> src/new.rs:{i}:1"),
        ));
        steps.push(edit("src/new.rs", Some(&format!("v{i}"))));
        steps.push(run("cargo test", 0, "test result: ok. 3 passed"));
    }
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn edits_followed_by_the_same_failure_of_varying_checks_warn() {
    let out = "FAILED tests/test_a.py::test_blank - assert 3 == 4\n1 failed, 9 passed";
    let steps = vec![
        run("pytest tests/test_a.py", 1, out),
        edit("src/a.py", None),
        run("pytest tests/test_a.py -k blank", 1, out),
        edit("src/a.py", None),
        run("pytest -x tests/test_a.py", 1, out),
        edit("src/a.py", None),
        run("python -m pytest tests/test_a.py", 1, out),
    ];
    let hits = feed_all(&steps);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(
        matches!(&hits[0], (6, LoopHit::SameFile { path, count: 3, .. }) if path == "src/a.py"),
        "{hits:?}"
    );
}

#[test]
fn one_loop_seen_by_both_rules_is_given_once() {
    let out = "panicked at src/lib.rs:3:5";
    let mut steps = vec![run("cargo test", 101, out)];
    for _ in 0..6 {
        steps.push(edit("src/lib.rs", None));
        steps.push(run("cargo test", 101, out));
    }
    assert_eq!(feed_all(&steps).len(), 1);
}

#[test]
fn a_file_flip_flopping_between_two_versions_warns() {
    let steps: Vec<Step> = ["a", "b", "a", "b", "a", "b", "a"]
        .iter()
        .map(|c| edit("src/fmt.rs", Some(c)))
        .collect();
    let hits = feed_all(&steps);
    assert_eq!(
        hits,
        vec![(
            5,
            LoopHit::Oscillation {
                path: "src/fmt.rs".into(),
                count: 3
            }
        )]
    );
}

#[test]
fn a_revert_or_a_re_applied_fix_is_not_oscillation() {
    // Tried b, reverted; tried c, reverted; then the fix re-applied once to check the test.
    let steps: Vec<Step> = ["a", "b", "a", "c", "a", "d", "a", "d"]
        .iter()
        .map(|c| edit("src/x.rs", Some(c)))
        .collect();
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn unknown_contents_never_look_alike() {
    let steps: Vec<Step> = (0..10).map(|_| edit("src/x.rs", None)).collect();
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn a_grep_finding_nothing_is_not_a_failure() {
    let steps: Vec<Step> = (0..4).map(|_| run("grep -rn TODO src", 1, "")).collect();
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn a_pipe_into_tail_is_judged_by_the_summary() {
    let out = "test parse::blank ... FAILED\ntest result: FAILED. 3 passed; 1 failed";
    let steps: Vec<Step> = (0..3)
        .map(|_| run("cargo test 2>&1 | tail -20", 0, out))
        .collect();
    assert_eq!(feed_all(&steps).len(), 1);
    let green: Vec<Step> = (0..3)
        .map(|_| run("cargo test 2>&1 | tail -20", 0, "test result: ok. 4 passed"))
        .collect();
    assert_eq!(feed_all(&green), vec![]);
}

#[test]
fn a_pass_in_between_starts_the_count_again() {
    let out = "exit status 2: boom";
    let steps = vec![
        run("make check", 2, out),
        run("make check", 2, out),
        run("make check", 0, "all good"),
        run("make check", 2, out),
        run("make check", 2, out),
    ];
    assert_eq!(feed_all(&steps), vec![]);
}

#[test]
fn silent_failures_of_two_commands_are_two_loops() {
    let mut steps: Vec<Step> = (0..3).map(|_| run("make lint", 2, "")).collect();
    steps.extend((0..3).map(|_| run("make docs", 2, "")));
    assert_eq!(feed_all(&steps).len(), 2);
}

#[test]
fn a_limit_of_zero_turns_a_rule_off() {
    let mut s = LoopState::default();
    let off = LoopLimits {
        same_failure: 0,
        ..LoopLimits::default()
    };
    for _ in 0..5 {
        assert!(s.feed(&run("make", 2, "boom"), &off).is_empty());
    }
}

#[test]
fn commands_are_known_by_what_they_run() {
    assert_eq!(
        command_key("cd /repo &&  cargo test 2>&1 | tail -20"),
        "cargo test"
    );
    assert_eq!(command_key("cargo test 2>&1"), "cargo test");
    // A reworded commit message, other files staged: the same check.
    assert_eq!(
        check_key("git add src/a.py && git commit -m \"Add the parser\""),
        check_key("git add src/a.py src/b.py && git commit -m \"Fix lint in the \\\"parser\\\"\""),
    );
    assert_eq!(
        check_key("git commit -m \"$(cat <<'EOF'\nAdd it\nEOF\n)\""),
        check_key("git commit -m 'other words'"),
    );
    assert_eq!(
        without_quoted("git commit -F - <<'EOF'\nmsg\nEOF"),
        "git commit -F - "
    );
    assert_ne!(
        check_key("pytest tests/a.py"),
        check_key("pytest tests/b.py")
    );
    assert_ne!(check_key("git commit -am x"), check_key("git push"));
    assert_eq!(
        command_key("cargo test | grep FAIL"),
        "cargo test | grep FAIL"
    );
}

#[test]
fn the_state_round_trips_and_stays_small() {
    let mut s = LoopState::default();
    let limits = LoopLimits::default();
    for i in 0..200 {
        s.feed(
            &Step {
                id: Some(format!("call-{i}")),
                action: Action::Command(format!("cmd {i}")),
                outcome: Outcome::done(None, Some(1), &"x".repeat(100_000)),
            },
            &limits,
        );
        s.feed(&edit(&format!("f{i}.rs"), Some("h")), &limits);
    }
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.len() < 24_000, "{} bytes", json.len());
    assert_eq!(serde_json::from_str::<LoopState>(&json).unwrap(), s);
    assert!(serde_json::to_string(&LoopState::default()).unwrap() == "{}");
}
