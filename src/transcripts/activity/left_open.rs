//! What the session left open without saying so: the work a careful reader of the transcript
//! would still see pending though the agent never listed it.
//!
//! - **A check whose last run failed** (a build, a test run, a linter, a type check), until a
//!   later run of the same check passes: its command, the files its errors name and its first
//!   error. A compiler's diagnostics (`file:line:col: error: …`) or a build tool's verdict
//!   ("** TEST FAILED **", "Testing failed:") mark a run as failed when its exit code does not
//!   speak for it (the output piped into `grep` or `tail`).
//! - **Commands the agent gave the user to run** in the reply that ended its turn (a fenced
//!   `bash`/`sh`/`shell`/`console` block: a deploy, a secret to set), while the next turn is
//!   under way and until the session runs them itself.
//!
//! Read from the same window as the last commands (the transcript's last 1 MiB at an automatic
//! checkpoint): recorded text, redacted and bounded.

use serde::{Deserialize, Serialize};

use super::{runs, text};

/// At most this many failing checks are kept (the newest).
pub const MAX_FAILING: usize = 3;
/// At most this many files are named per failing check.
pub const MAX_ERROR_FILES: usize = 5;
/// At most this many commands handed to the user are kept (the first).
pub const MAX_FOR_THE_USER: usize = 4;
/// A command (or an error line) is cut to this many characters.
pub const MAX_CHARS: usize = 200;
/// A reply hands commands over when at most this much text follows its last shell block.
pub const MAX_CLOSING_CHARS: usize = 600;

/// What the session left open (see the module's documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOpen {
    /// Checks whose last run failed with no passing run since, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<FailingCheck>,
    /// Commands the agent's reply that ended its turn gave the user to run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub for_the_user: Vec<String>,
    /// When the reply that handed them over was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_the_user_at: Option<String>,
}

impl LeftOpen {
    pub fn is_empty(&self) -> bool {
        self.failing.is_empty() && self.for_the_user.is_empty()
    }

    /// Ends the failures a later run passed: `runs` are runs known beyond the transcript read
    /// (a hook's payload has the outcome before the transcript does), oldest first, each with
    /// its outcome; a failing check whose latest run among them passed is failing no more.
    pub fn close_passed(&mut self, runs: &[(&str, Option<bool>)]) {
        self.failing.retain(|f| {
            let latest = runs
                .iter()
                .rev()
                .find(|(c, ok)| ok.is_some() && same_check(&f.command, c));
            !matches!(latest, Some((_, Some(true))))
        });
    }
}

/// Whether two commands run the same check: one both run (`cargo test` and `cargo test
/// parser`), or the same command however its output is cut.
pub fn same_check(a: &str, b: &str) -> bool {
    let (ka, kb) = (runs::command_key(a), runs::command_key(b));
    if ka == kb {
        return true;
    }
    let theirs = checks_in(b);
    checks_in(a).iter().any(|c| theirs.contains(c))
}

/// The failed runs among `commands` (oldest first) that no later run of the same check
/// passed: what is still failing. A later run whose outcome is unknown changes nothing.
pub fn still_failing(commands: &[super::CommandRun]) -> Vec<&super::CommandRun> {
    commands
        .iter()
        .enumerate()
        .filter(|(i, run)| {
            run.ok == Some(false)
                && !commands[i + 1..]
                    .iter()
                    .any(|later| later.ok == Some(true) && same_check(&run.command, &later.command))
        })
        .map(|(_, run)| run)
        .collect()
}

/// A check whose last run failed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailingCheck {
    /// The command as run (redacted, cut).
    pub command: String,
    /// The files its errors name (`path:line…`), by their path as written, at most
    /// [`MAX_ERROR_FILES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Its first error line (redacted, cut).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// When its last failing run came (that call's transcript line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// Words that make a command a check: it builds, tests, lints or type-checks the project.
const CHECK_WORDS: [&str; 21] = [
    "test",
    "tests",
    "build",
    "lint",
    "check",
    "clippy",
    "typecheck",
    "tsc",
    "pytest",
    "jest",
    "vitest",
    "mypy",
    "ruff",
    "eslint",
    "compile",
    "vet",
    "rspec",
    "ci",
    "xcodebuild",
    "credo",
    "dialyzer",
];

/// The checks a command runs, one per `&&`/`;` part: each part's program and the words that
/// name what it runs, up to its last check word (before any flag or path):
/// `cd app && npm run test:ci | tail` gives `npm run test:ci`; `git commit` gives none.
pub fn checks_in(command: &str) -> Vec<String> {
    let key = runs::command_key(command);
    let first_stage = key.split(" | ").next().unwrap_or("");
    let mut out = Vec::new();
    for part in first_stage.split("&&").flat_map(|p| p.split(';')) {
        let mut words = part
            .split_whitespace()
            .skip_while(|w| w.contains('=') || matches!(*w, "sudo" | "env" | "time"));
        // The program by its name: `./node_modules/.bin/tsc` runs `tsc`.
        let program = words.next().map(|p| p.rsplit('/').next().unwrap_or(p));
        // `python3 -m pytest`: the module it runs names the check.
        let mut words = words.peekable();
        let module: Vec<&str> = match words.peek() {
            Some(&"-m") => words.by_ref().take(2).collect(),
            _ => Vec::new(),
        };
        let named = 3 + module.len();
        let words: Vec<&str> = program
            .into_iter()
            .chain(module)
            .chain(words.take_while(|w| {
                !w.starts_with('-') && !w.contains(['/', '=', '\'', '"', '>', '<'])
            }))
            .take(named)
            .collect();
        let Some(first) = words.first() else { continue };
        if matches!(*first, "cd" | "echo" | "git" | "cat" | "grep" | "rg" | "ls") {
            continue;
        }
        let is_check_word = |w: &&str| {
            w.split([':', '-', '_'])
                .any(|piece| CHECK_WORDS.contains(&piece.to_ascii_lowercase().as_str()))
        };
        // Named up to its check word: `cargo test parser` is a run of `cargo test`.
        if let Some(i) = words.iter().rposition(is_check_word) {
            let name = words[..=i].join(" ");
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// Whether a run failed by what its output says when its exit code does not speak for it: a
/// compiler's diagnostic (`file:12:5: error: …`, `file(12,5): error TS…`, `error[E0308]`) or a
/// build tool's verdict line. Some(true) for a verdict of success, None when it says neither.
pub fn verdict_in_output(output: &str) -> Option<bool> {
    let mut failed = false;
    let mut passed = false;
    for line in output.lines() {
        let l = line.trim();
        let upper = l.to_ascii_uppercase();
        if upper.starts_with("** BUILD FAILED")
            || upper.starts_with("** TEST FAILED")
            || upper.starts_with("TESTING FAILED")
            || upper.starts_with("BUILD FAILED")
            || l.starts_with("error[E")
            || diagnostic_file(l).is_some()
        {
            failed = true;
        }
        if upper.starts_with("** BUILD SUCCEEDED") || upper.starts_with("** TEST SUCCEEDED") {
            passed = true;
        }
    }
    if failed {
        Some(false)
    } else {
        passed.then_some(true)
    }
}

/// The file a compiler's error line names: `path:12:5: error: …`, `path:12: error: …` or
/// `path(12,5): error …`.
fn diagnostic_file(line: &str) -> Option<&str> {
    let (head, _) = line.split_once(": error")?;
    let path = match head.split_once('(') {
        Some((p, pos)) if pos.ends_with(')') => p,
        _ => {
            let mut p = head;
            while let Some((before, n)) = p.rsplit_once(':') {
                if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
                    break;
                }
                p = before;
            }
            if p == head {
                return None;
            }
            p
        }
    };
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    (name.contains('.') && !path.contains(char::is_whitespace)).then_some(path)
}

/// A failed run of a check, as recorded: its command, the files its errors name, its first
/// error line.
pub fn failing_check(command: &str, output: &str) -> FailingCheck {
    let mut files: Vec<String> = Vec::new();
    let mut error = String::new();
    for line in output.lines().map(str::trim) {
        if let Some(f) = diagnostic_file(line) {
            if error.is_empty() {
                error = line.to_string();
            }
            if files.len() < MAX_ERROR_FILES && !files.iter().any(|x| x == f) {
                files.push(f.to_string());
            }
        }
    }
    if error.is_empty() {
        error = super::failure::Failure::of(None, output).first_error;
    }
    let redacted = |s: &str| text::cut(crate::system::redact::redact(s).as_ref(), MAX_CHARS);
    FailingCheck {
        command: redacted(command.trim()),
        files: files.iter().map(|f| redacted(f)).collect(),
        error: redacted(&error),
        at: None,
    }
}

/// One run of a command, as [`open_checks`] reads it.
pub struct Run<'a> {
    pub command: &'a str,
    /// The verdict of its exit code (None when it does not speak for the command).
    pub ok: Option<bool>,
    pub exit_code: Option<i64>,
    pub output: &'a str,
    /// Its transcript line's time as the agent wrote it.
    pub at: Option<&'a str>,
}

/// The shell's codes for a program it could not find or start: the check never ran.
const NOT_RUN: [i64; 2] = [126, 127];

/// The checks whose last run failed, with no later passing run of the same check, oldest
/// first (at most [`MAX_FAILING`], the newest). A run whose outcome nothing tells, or whose
/// program could not be found (exit 127), changes nothing.
pub fn open_checks<'a>(runs: impl IntoIterator<Item = Run<'a>>) -> Vec<FailingCheck> {
    let mut open: Vec<(Vec<String>, FailingCheck)> = Vec::new();
    for run in runs {
        let checks = checks_in(run.command);
        if checks.is_empty() || run.exit_code.is_some_and(|c| NOT_RUN.contains(&c)) {
            continue;
        }
        let verdict = match (run.ok, verdict_in_output(run.output)) {
            (_, Some(false)) => Some(false),
            (Some(ok), _) => Some(ok),
            (None, said) => said,
        };
        let Some(ok) = verdict else { continue };
        // A run of a check answers for the earlier runs of any check it repeats.
        open.retain(|(c, _)| !c.iter().any(|x| checks.contains(x)));
        if !ok {
            let mut check = failing_check(run.command, run.output);
            check.at = run.at.and_then(super::line_time::stored);
            open.push((checks, check));
        }
    }
    let skip = open.len().saturating_sub(MAX_FAILING);
    open.into_iter().skip(skip).map(|(_, f)| f).collect()
}

/// The commands a reply closes with: those of its fenced shell blocks (`bash`, `sh`, `shell`,
/// `zsh`, `console`) that come after its last block of anything else, when at most
/// [`MAX_CLOSING_CHARS`] of text follow the last of them (a reply that ends by handing over,
/// not one that explains how something is called). One per line: comments, blank lines and a
/// bare `cd` left out, a `$ ` prompt taken off, a line ending in `\` joined with the next.
pub fn shell_commands(reply: &str) -> Vec<String> {
    let mut out = Vec::new();
    // The text after the last shell block's closing fence.
    let mut after_last = 0usize;
    let mut in_block = false;
    let mut shell = false;
    let mut pending = String::new();
    for line in reply.lines() {
        let t = line.trim();
        if let Some(lang) = t.strip_prefix("```") {
            if in_block {
                in_block = false;
                shell = false;
            } else {
                in_block = true;
                let lang = lang.trim().to_ascii_lowercase();
                shell = matches!(lang.as_str(), "bash" | "sh" | "shell" | "zsh" | "console");
                if !shell {
                    // Another block after them: the shell blocks before it were not the close.
                    out.clear();
                }
            }
            after_last = 0;
            pending.clear();
            continue;
        }
        if !in_block {
            after_last += t.chars().count();
        }
        if !shell || t.is_empty() || t.starts_with('#') {
            continue;
        }
        let t = t.strip_prefix("$ ").unwrap_or(t);
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
            continue;
        }
        pending.push_str(t);
        let command = std::mem::take(&mut pending);
        let bare_cd = command.starts_with("cd ") && !command.contains("&&");
        if !bare_cd && !out.contains(&command) {
            out.push(command);
        }
    }
    if after_last > MAX_CLOSING_CHARS {
        out.clear();
    }
    out
}

/// Follows the agent's replies and the user's prompts for the commands the reply that ended
/// a turn gave the user to run.
#[derive(Debug, Default)]
pub(crate) struct Handover {
    /// The latest reply's commands and how many calls had been made before it.
    latest: Vec<String>,
    latest_at: usize,
    /// The agent has replied since the user's last prompt.
    replied: bool,
    /// The commands of the reply that ended the last turn, and the calls made before it.
    ended_turn: Vec<String>,
    ended_at: usize,
    /// When the latest reply and the one that ended the last turn were written (as the agent
    /// wrote the time), kept only when they hand commands over.
    latest_time: Option<String>,
    ended_time: Option<String>,
}

impl Handover {
    /// A reply of the agent, after `calls` calls, written at `at`.
    pub(crate) fn reply(&mut self, text: &str, calls: usize, at: Option<&str>) {
        self.latest = shell_commands(text);
        self.latest_at = calls;
        self.latest_time = at.filter(|_| !self.latest.is_empty()).map(str::to_string);
        self.replied = true;
    }

    /// A prompt of the user, after `calls` calls: the turn before it ended with the agent's
    /// latest reply when no call came after that reply.
    pub(crate) fn prompt(&mut self, calls: usize) {
        if !self.replied {
            return; // prompts in a row (an interface command, then the task)
        }
        self.replied = false;
        if calls == self.latest_at {
            self.ended_turn = std::mem::take(&mut self.latest);
            self.ended_at = self.latest_at;
            self.ended_time = self.latest_time.take();
        } else {
            self.ended_turn.clear();
            self.ended_time = None;
        }
    }

    /// The commands handed to the user, with the calls made before they were: the latest
    /// reply's when no call came after it (the turn ends with it), else those of the reply
    /// that ended the last turn; and when that reply was written.
    pub(crate) fn handed(&self, calls: usize) -> (&[String], usize, Option<&str>) {
        if self.replied && calls == self.latest_at && !self.latest.is_empty() {
            (&self.latest, self.latest_at, self.latest_time.as_deref())
        } else {
            (&self.ended_turn, self.ended_at, self.ended_time.as_deref())
        }
    }
}

/// The commands handed to the user that the session has not run itself since (`ran`: the
/// commands run after the hand-over), redacted and cut, at most [`MAX_FOR_THE_USER`].
pub fn not_run_since<'a>(
    handed: &[String],
    ran: impl IntoIterator<Item = &'a str> + Clone,
) -> Vec<String> {
    handed
        .iter()
        .filter(|h| {
            let key = runs::command_key(h);
            !ran.clone()
                .into_iter()
                .any(|r| runs::command_key(r).contains(&key))
        })
        .take(MAX_FOR_THE_USER)
        .map(|h| text::cut(crate::system::redact::redact(h).as_ref(), MAX_CHARS))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_is_a_build_test_lint_or_type_check_command() {
        assert_eq!(
            checks_in("cd app && npm run test:ci 2>&1 | tail -20"),
            ["npm run test:ci"]
        );
        assert_eq!(
            checks_in("xcodebuild test -project App.xcodeproj -scheme App | grep -E \"error\""),
            ["xcodebuild test"]
        );
        assert_eq!(
            checks_in("mise run fmt && mise run lint && mise run test"),
            ["mise run lint", "mise run test"]
        );
        assert_eq!(checks_in("cargo clippy --all-targets"), ["cargo clippy"]);
        assert_eq!(checks_in("./node_modules/.bin/tsc 2>&1"), ["tsc"]);
        assert_eq!(
            checks_in("python3 -m pytest -q tests/test_billing.py"),
            ["python3 -m pytest"]
        );
        assert!(checks_in("git commit -m 'build: fix'").is_empty());
        assert!(checks_in("grep -rn test src/").is_empty());
        assert!(checks_in("ls tests/").is_empty());
    }

    #[test]
    fn compiler_diagnostics_fail_a_run_whose_exit_code_is_a_filters() {
        let out = "/Users/a/App/AppTests/ParserTests.swift:182:24: error: cannot convert value\n\
                   /Users/a/App/AppTests/FlowTests.swift:21:32: error: cannot find type 'X'\n\
                   Testing failed:\n";
        assert_eq!(verdict_in_output(out), Some(false));
        assert_eq!(verdict_in_output("** BUILD SUCCEEDED **"), Some(true));
        assert_eq!(
            verdict_in_output("src/a.ts(3,7): error TS2322: Type"),
            Some(false)
        );
        assert_eq!(
            verdict_in_output("warning: unused variable\nCompiling x"),
            None
        );
        // A sentence that mentions an error is not a diagnostic.
        assert_eq!(verdict_in_output("Note: error handling is fine"), None);
        let f = failing_check("xcodebuild test -scheme App | tail", out);
        assert_eq!(
            f.files,
            [
                "/Users/a/App/AppTests/ParserTests.swift",
                "/Users/a/App/AppTests/FlowTests.swift"
            ]
        );
        assert!(f.error.contains("cannot convert value"));
    }

    fn run<'a>(command: &'a str, ok: Option<bool>, output: &'a str) -> Run<'a> {
        Run {
            command,
            ok,
            exit_code: ok.map(|ok| if ok { 0 } else { 1 }),
            output,
            at: None,
        }
    }

    #[test]
    fn a_failed_check_stays_open_until_a_later_run_of_it_passes() {
        let errors = "T/WorkoutTests.swift:12:3: error: cannot find 'X' in scope\nTesting failed:";
        // The test run failed (its output says so through a pipe), then the app's build passed:
        // the tests are still open.
        let open = open_checks([
            run(
                "xcodebuild build -scheme App | tail -3",
                Some(true),
                "** BUILD FAILED **",
            ),
            run(
                "xcodebuild build -scheme App | tail -3",
                Some(true),
                "** BUILD SUCCEEDED **",
            ),
            run(
                "xcodebuild test -scheme App | grep error",
                Some(true),
                errors,
            ),
            run(
                "xcodebuild build -scheme App | tail -3",
                Some(true),
                "** BUILD SUCCEEDED **",
            ),
            run("git status --short", Some(true), " M a.swift"),
        ]);
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].files, ["T/WorkoutTests.swift"]);
        // A later passing run of it closes it; one whose outcome nothing tells does not.
        let closed = open_checks([
            run(
                "cargo test",
                Some(false),
                "test result: FAILED. 1 passed; 1 failed",
            ),
            run("cargo test 2>&1 | tail -3", None, "running"),
        ]);
        assert_eq!(closed.len(), 1);
        let closed = open_checks([
            run(
                "cargo test",
                Some(false),
                "test result: FAILED. 1 passed; 1 failed",
            ),
            run("cargo test parser", Some(true), "test result: ok. 3 passed"),
            run("cargo build", Some(true), ""),
        ]);
        assert!(closed.is_empty());
        // A check whose program the shell could not find never ran.
        let not_found = Run {
            command: "npm run build",
            ok: Some(false),
            exit_code: Some(127),
            output: "sh: tsc: command not found",
            at: None,
        };
        assert!(open_checks([not_found]).is_empty());
    }

    #[test]
    fn a_later_passing_run_of_the_same_check_ends_a_failure() {
        let run = |command: &str, ok: Option<bool>| super::super::CommandRun {
            command: command.into(),
            ok,
            exit_code: ok.map(|ok| if ok { 0 } else { 1 }),
            times: 1,
            at: None,
        };
        let commands = [
            run("python3 -m pytest -q", Some(false)),
            run("ls nothing-here", Some(false)),
            run("python3 -m pytest -q tests/test_billing.py", Some(true)),
            run("cargo build", Some(false)),
            run("cargo build 2>&1 | tail -5", None),
        ];
        let failing: Vec<&str> = still_failing(&commands)
            .iter()
            .map(|r| r.command.as_str())
            .collect();
        assert_eq!(failing, ["ls nothing-here", "cargo build"]);

        let mut open = LeftOpen {
            failing: vec![
                failing_check("python3 -m pytest -q", "1 failed"),
                failing_check("cargo clippy", "error: unused"),
            ],
            for_the_user: Vec::new(),
            for_the_user_at: None,
        };
        // The payloads' runs: pytest failed, then passed; clippy passed, then failed again.
        open.close_passed(&[
            ("python3 -m pytest -q", Some(false)),
            ("cargo clippy --all-targets", Some(true)),
            ("python3 -m pytest -q", Some(true)),
            ("cargo clippy", Some(false)),
            ("python3 -m pytest -q", None),
        ]);
        let left: Vec<&str> = open.failing.iter().map(|f| f.command.as_str()).collect();
        assert_eq!(left, ["cargo clippy"]);
    }

    #[test]
    fn the_commands_of_a_replys_shell_block_are_read_one_a_line() {
        let reply = "Fixed the rule:\n```swift\nlet x = 1\n```\n\n### Next step\n\nYou need to deploy the rules:\n```bash\n# deploy\nfirebase deploy --only storage\n$ npm run \\\n  release\n```\nThen reload.\n";
        assert_eq!(
            shell_commands(reply),
            ["firebase deploy --only storage", "npm run release"]
        );
        assert!(shell_commands("```\nplain output\n```").is_empty());
        // A bare `cd` is where to run them, not a command; a block of another language after
        // them, or a long text, says the reply explains rather than hands over.
        assert_eq!(
            shell_commands("Set the key:\n```bash\ncd /home/dev/app\nfirebase functions:secrets:set KEY\n```\nPaste it when asked."),
            ["firebase functions:secrets:set KEY"]
        );
        assert!(shell_commands("Agents call:\n```bash\necho '{}' | tool checkpoint\n```\nwith settings:\n```json\n{}\n```").is_empty());
        let explained = format!(
            "Called as:\n```sh\ntool run\n```\n{}",
            "It then reads the file. ".repeat(30)
        );
        assert!(shell_commands(&explained).is_empty());
    }

    #[test]
    fn commands_handed_over_are_those_of_the_reply_that_ended_the_turn() {
        let mut h = Handover::default();
        // A reply with a block followed by a call: not the turn's end.
        h.reply("Run:\n```sh\nmake demo\n```", 0, None);
        // The turn's last reply, then the user's prompts (an interface command, the task).
        h.reply(
            "Done.\n```bash\nfirebase deploy --only storage\n```",
            1,
            None,
        );
        h.prompt(1);
        h.prompt(1);
        assert_eq!(h.handed(1).0, ["firebase deploy --only storage"]);
        // The next turn under way keeps it; a turn ended with a reply handing nothing drops it.
        h.reply("Committing now.", 1, None);
        assert_eq!(h.handed(2).0, ["firebase deploy --only storage"]);
        h.reply("Committed.", 2, None);
        h.prompt(2);
        assert!(h.handed(2).0.is_empty());
        // A turn that ended with a call after the reply handed nothing.
        h.reply("```bash\nnpm publish\n```", 2, None);
        h.prompt(3);
        assert!(h.handed(3).0.is_empty());
    }

    #[test]
    fn a_command_the_session_ran_itself_is_no_longer_the_users() {
        let handed = vec![
            "firebase deploy --only functions".to_string(),
            "gh pr create --fill".to_string(),
        ];
        assert_eq!(
            not_run_since(&handed, ["cd fn && firebase deploy --only functions 2>&1"]),
            ["gh pr create --fill"]
        );
    }
}
