//! Checks a tool reports in a message it injects into the conversation (a CI monitor's
//! `<ci-monitor-event>`, a background monitor's `<task-notification>` with its `<event>`), not
//! a run the session made: "CI checks \"nix-test\", \"nix-flake\" failed on … PR #2351",
//! "nix-flake: fail". A reported failure is left open until a later report of the same check
//! passes, or a new task starts (see [`super::left_open`]).

/// One check's verdict as a message reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The check's name as the report gives it (`nix-flake`, `e2e-run (Ubuntu, ubuntu-latest)`).
    pub check: String,
    pub passed: bool,
    /// The report's own line saying so (cut).
    pub line: String,
}

/// A check's name is at most this long.
const MAX_NAME_CHARS: usize = 80;
/// A report's line is cut to this many characters.
const MAX_LINE_CHARS: usize = 200;

/// The verdicts an injected message reports, in its order; none for any other text.
pub fn verdicts(text: &str) -> Vec<Verdict> {
    let mut out = Vec::new();
    if let Some(body) = element(text, "ci-monitor-event") {
        out.extend(ci_event(body));
    }
    if let Some(note) = element(text, "task-notification") {
        if let Some(event) = element(note, "event") {
            out.extend(event.lines().filter_map(event_line));
        }
    }
    out
}

/// The text inside `<tag>…</tag>` (to the text's end when it is not closed).
fn element<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let rest = &text[start..];
    let end = rest.find(&format!("</{tag}>")).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// "CI check(s) \"a\", \"b\" failed|passed …": each quoted name with the verdict.
fn ci_event(body: &str) -> Vec<Verdict> {
    let first = body
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let lower = first.to_ascii_lowercase();
    let Some(after) = lower
        .strip_prefix("ci checks ")
        .or_else(|| lower.strip_prefix("ci check "))
    else {
        return Vec::new();
    };
    // The verdict follows the list of quoted names.
    let list_end = after.rfind('"').map_or(0, |i| i + 1);
    let verdict = after[list_end..].trim_start();
    let passed = if verdict.starts_with("failed") || verdict.starts_with("are failing") {
        false
    } else if verdict.starts_with("passed") || verdict.starts_with("succeeded") {
        true
    } else {
        return Vec::new();
    };
    let offset = first.len() - after.len();
    let names = &first[offset..offset + list_end];
    names
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|n| !n.trim().is_empty() && n.chars().count() <= MAX_NAME_CHARS)
        .map(|n| Verdict {
            check: n.trim().to_string(),
            passed,
            line: super::text::cut(first, MAX_LINE_CHARS),
        })
        .collect()
}

/// "name: pass" / "name: fail" (and their other spellings).
fn event_line(line: &str) -> Option<Verdict> {
    let (name, verdict) = line.trim().rsplit_once(": ")?;
    let passed = match verdict.trim().to_ascii_lowercase().as_str() {
        "pass" | "passed" | "success" | "succeeded" => true,
        "fail" | "failed" | "failure" | "error" => false,
        _ => return None,
    };
    let name = name.trim();
    (!name.is_empty() && name.chars().count() <= MAX_NAME_CHARS).then(|| Verdict {
        check: name.to_string(),
        passed,
        line: super::text::cut(line.trim(), MAX_LINE_CHARS),
    })
}

/// The checks whose latest reported verdict among `reports` (oldest first) is a failure:
/// each once, oldest first by its latest report.
pub fn still_failing(reports: &[Verdict]) -> Vec<&Verdict> {
    let mut latest: Vec<&Verdict> = Vec::new();
    for v in reports {
        latest.retain(|l| l.check != v.check);
        latest.push(v);
    }
    latest.retain(|v| !v.passed);
    latest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(vs: &[Verdict]) -> Vec<(&str, bool)> {
        vs.iter().map(|v| (v.check.as_str(), v.passed)).collect()
    }

    #[test]
    fn a_ci_monitors_event_names_the_checks_that_failed() {
        let text = "<ci-monitor-event>CI checks \"nix-test\", \"e2e-run (Ubuntu, ubuntu-latest)\" failed on acme/dotfiles PR #2351. Run `gh pr checks 2351 --repo acme/dotfiles` to see details, then fix the failing checks.</ci-monitor-event>";
        let v = verdicts(text);
        assert_eq!(
            names(&v),
            [
                ("nix-test", false),
                ("e2e-run (Ubuntu, ubuntu-latest)", false)
            ]
        );
        assert!(v[0].line.starts_with("CI checks \"nix-test\""));
        assert_eq!(
            names(&verdicts(
                "<ci-monitor-event>CI check \"nix-format\" failed on acme/dotfiles PR #2351.\n\nacme/dotfiles PR #2351 has 1 new review comment:\n- bot: fix: pass</ci-monitor-event>"
            )),
            [("nix-format", false)]
        );
    }

    #[test]
    fn a_monitors_task_notification_gives_each_checks_verdict() {
        let text = "<task-notification>\n<task-id>blpetgm4m</task-id>\n<summary>Monitor event: \"PR 2351 CI checks reaching terminal state\"</summary>\n<event>shell-lint: pass\nnix-flake: fail\nnix-test: fail</event>\nIf this event is something the user would act on now, send a PushNotification.\n</task-notification>";
        assert_eq!(
            names(&verdicts(text)),
            [
                ("shell-lint", true),
                ("nix-flake", false),
                ("nix-test", false)
            ]
        );
    }

    #[test]
    fn the_users_words_and_other_notifications_report_no_verdict() {
        for text in [
            "CI checks \"nix-test\" failed, can you look?",
            "the test: fail here is expected",
            "<task-notification>\n<task-id>b41</task-id>\n<status>completed</status>\n<summary>Background command \"nix eval .#x\" completed (exit code 0)</summary>\n</task-notification>",
            "<task-notification><event>[Monitor timed out — re-arm if needed.]</event></task-notification>",
        ] {
            assert!(verdicts(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_later_pass_ends_a_reported_failure() {
        let v = |check: &str, passed: bool| Verdict {
            check: check.into(),
            passed,
            line: String::new(),
        };
        let reports = [
            v("nix-format", false),
            v("nix-flake", false),
            v("nix-format", true),
            v("nix-test", false),
        ];
        let open: Vec<&str> = still_failing(&reports)
            .iter()
            .map(|v| v.check.as_str())
            .collect();
        assert_eq!(open, ["nix-flake", "nix-test"]);
    }
}
