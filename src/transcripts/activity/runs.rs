//! What a command's runs say: whether a run failed (an exit code that does not speak for the
//! command gives no verdict), the key that knows a command across runs, and the outcomes the
//! hooks' payloads give runs the transcript does not show yet. Loop detection (`loops`)
//! and what the session left open (`left_open`) both judge runs by these.

use super::failure;
use serde::{Deserialize, Serialize};

use super::{collapse_repeats, CommandRun, Observed, MAX_COMMANDS};

/// A command's outcome as a checkpoint records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentRun {
    /// Redacted and cut as `observed.commands` has it.
    pub command: String,
    pub ok: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Whether the check passed, by what its output says where the exit code is a filter's
    /// (a pipe into `grep`): what ends a failure (None when nothing tells).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

/// What the hooks' payloads told beyond the transcript, put into an observation: the commands'
/// outcomes ([`fill_outcomes`]), and a failure left open that a later run of the same check
/// passed (the run that fired the hook is in its payload before the transcript has it).
pub fn with_payload_outcomes(observed: &mut Observed, recent: &[RecentRun]) {
    fill_outcomes(&mut observed.commands, recent);
    if let Some(open) = observed.left_open.as_mut() {
        let runs: Vec<(&str, Option<bool>)> = recent
            .iter()
            .map(|r| (r.command.as_str(), r.passed))
            .collect();
        open.close_passed(&runs);
        if open.is_empty() {
            observed.left_open = None;
        }
    }
}

/// Gives the commands a transcript shows without an outcome (the agent writes it after the
/// hook) the outcome the hooks' payloads gave: the latest run of the same command each. The
/// last command a hook reported, when the transcript does not show it yet at all (Gemini writes
/// a call only once it is finished), is added at the end.
pub fn fill_outcomes(commands: &mut Vec<CommandRun>, recent: &[RecentRun]) {
    if let Some(last) = recent.last() {
        if commands.last().map(|c| &c.command) != Some(&last.command) {
            commands.push(CommandRun {
                command: last.command.clone(),
                ok: last.ok,
                exit_code: last.exit_code,
                times: 1,
                at: None,
            });
            if commands.len() > MAX_COMMANDS {
                commands.remove(0);
            }
        }
    }
    let mut used = vec![false; recent.len()];
    for c in commands.iter_mut().rev().filter(|c| c.ok.is_none()) {
        let found = recent
            .iter()
            .enumerate()
            .rev()
            .find(|(i, r)| !used[*i] && r.ok.is_some() && r.command == c.command);
        if let Some((i, r)) = found {
            used[i] = true;
            c.ok = r.ok;
            c.exit_code = r.exit_code;
        }
    }
    // A filled run may now repeat the one before it.
    *commands = collapse_repeats(std::mem::take(commands));
}

/// Programs that exit 1 to say "no" or "different", not that they failed.
const ONE_MEANS_NO: [&str; 9] = [
    "grep", "egrep", "fgrep", "rg", "ag", "test", "[", "diff", "cmp",
];
/// Programs a command's output is piped into to shorten or filter it: the pipeline's exit code
/// is theirs, not the command's.
const FILTERS: [&str; 14] = [
    "tail", "head", "grep", "rg", "less", "more", "cat", "tee", "wc", "sort", "uniq", "cut", "sed",
    "awk",
];

/// Whether the run failed: what the agent said, else its exit code, unless that code does not
/// speak for the command (a pipe into a filter: the test summary in the output decides; a
/// `grep` finding nothing: no verdict).
pub(crate) fn verdict(
    cmd: &str,
    ok: Option<bool>,
    exit_code: Option<i64>,
    output: &str,
) -> Option<bool> {
    let stages: Vec<&str> = cmd.split('|').map(str::trim).collect();
    if stages.len() > 1 && stages.last().is_some_and(|s| FILTERS.contains(&program(s))) {
        if cmd.contains("pipefail") {
            return ok.or(exit_code.map(|c| c == 0));
        }
        return failure::verdict_from_output(output);
    }
    if exit_code == Some(1) && ONE_MEANS_NO.contains(&program(stages[0])) {
        return None;
    }
    if exit_code == Some(1)
        && ["git diff", "git grep"]
            .iter()
            .any(|p| stages[0].trim_start().starts_with(p))
    {
        return None;
    }
    ok.or(exit_code.map(|c| c == 0))
}

/// The program a pipeline stage runs (after `cd … &&`, environment assignments, `sudo`).
fn program(stage: &str) -> &str {
    let last = stage.rsplit("&&").next().unwrap_or(stage);
    last.split_whitespace()
        .find(|w| !w.contains('=') && *w != "sudo" && *w != "env" && *w != "time")
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .unwrap_or("")
}

/// What identifies a command across runs: whitespace collapsed, without a leading `cd DIR &&`,
/// a trailing `2>&1` or a last pipe into `tail`/`head` (agents vary how much output they keep).
pub fn command_key(cmd: &str) -> String {
    let mut c = cmd.split_whitespace().collect::<Vec<_>>().join(" ");
    while let Some(rest) = c.strip_prefix("cd ").and_then(|r| r.split_once(" && ")) {
        c = rest.1.to_string();
    }
    if let Some((head, last)) = c.rsplit_once(" | ") {
        if matches!(program(last), "tail" | "head") {
            c = head.to_string();
        }
    }
    c.trim_end_matches(" 2>&1").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_gets_the_outcome_the_transcript_does_not_have_yet() {
        let run = |c: &str, ok: Option<bool>, code: Option<i64>| CommandRun {
            command: c.into(),
            ok,
            exit_code: code,
            times: 1,
            at: None,
        };
        let recent = vec![
            RecentRun {
                command: "make".into(),
                ok: Some(true),
                exit_code: Some(0),
                passed: Some(true),
            },
            RecentRun {
                command: "make check".into(),
                ok: Some(false),
                exit_code: Some(3),
                passed: Some(false),
            },
        ];
        // The call is in the transcript, its result not yet (a compaction mid-turn).
        let mut seen = vec![
            run("make", Some(true), Some(0)),
            run("make check", None, None),
        ];
        fill_outcomes(&mut seen, &recent);
        assert_eq!(seen[1], run("make check", Some(false), Some(3)));
        // Not in the transcript at all yet.
        let mut seen = vec![run("make", Some(true), Some(0))];
        fill_outcomes(&mut seen, &recent);
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1], run("make check", Some(false), Some(3)));
        // Nothing is changed that the transcript says.
        let mut seen = vec![run("make check", Some(true), Some(0))];
        fill_outcomes(&mut seen, &recent);
        assert_eq!(seen, vec![run("make check", Some(true), Some(0))]);
        // A filled run that repeats the one before is counted with it.
        let mut seen = vec![
            run("make check", Some(false), Some(3)),
            run("make check", None, None),
        ];
        fill_outcomes(&mut seen, &recent);
        assert_eq!(
            seen,
            vec![CommandRun {
                times: 2,
                ..run("make check", Some(false), Some(3))
            }]
        );
    }
}
