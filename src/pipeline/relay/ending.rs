//! Why a relay session ended, from what it left behind: the agent's exit
//! status and the end of its output, the live budgets its hooks updated
//! (a handoff stage fired, loops), and its transcript.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::domain::session::Session;
use crate::domain::workspace::Workspace;
use crate::pipeline::relay::launch::{Finished, Stopped};
use crate::system::error::Error;
use crate::transcripts::activity::LoopHit;

/// How much of the end of an agent's output is searched for a rate limit.
const OUTPUT_TAIL: u64 = 8 * 1024;

/// What an agent prints when its provider turns it away for a while.
static RATE_LIMIT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)\b(rate[ _-]?limit(?:ed)?|too many requests|429|529|overloaded(?:_error)?|quota|resource[ _]exhausted|usage limit)\b",
    )
    .expect("valid regex")
});

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// A handoff stage fired: the context is nearly full.
    Handoff,
    /// Exited non-zero.
    Failed,
    /// Said it was rate-limited, overloaded or out of quota.
    RateLimited,
    /// Went round in a loop (the same failure or file again and again); `gutter` in the
    /// JSON report and the log, the name scripts read.
    #[serde(rename = "gutter")]
    Looping,
    /// Exited 0 with none of the above.
    Exited,
    /// Stopped by relay on Ctrl-C or SIGTERM.
    Interrupted,
    /// Stopped by relay at `--max-time`.
    TimedOut,
}

impl Ending {
    /// Whether the next session goes to the next agent of the rotation.
    pub fn rotates(self) -> bool {
        matches!(
            self,
            Ending::Handoff | Ending::Failed | Ending::RateLimited | Ending::Looping
        )
    }

    pub fn label(self) -> &'static str {
        match self {
            Ending::Handoff => "handoff",
            Ending::Failed => "failed",
            Ending::RateLimited => "rate-limited",
            Ending::Looping => "gutter",
            Ending::Exited => "exited",
            Ending::Interrupted => "interrupted",
            Ending::TimedOut => "timed-out",
        }
    }
}

/// What a session left behind, gathered once it ended.
pub struct Evidence<'a> {
    pub finished: &'a Finished,
    /// The live budgets the session's hooks wrote (or `track` calls made).
    pub touched: &'a [Session],
    /// Loops in its transcript.
    pub loops: &'a [LoopHit],
    /// The end of its output.
    pub output: &'a str,
}

/// Why the session ended, and a few words on it.
pub fn classify(e: &Evidence) -> (Ending, Option<String>) {
    match e.finished.stopped {
        Some(Stopped::Interrupt) => return (Ending::Interrupted, None),
        Some(Stopped::Deadline) => return (Ending::TimedOut, None),
        None => {}
    }
    if let Some(s) = e.touched.iter().find(|s| s.handoff_due()) {
        let stage = s
            .fired()
            .iter()
            .rfind(|f| f.action == crate::context::stages::StageAction::Handoff)
            .map(|f| f.name.clone());
        return (Ending::Handoff, stage);
    }
    let code = e.finished.code();
    // A clean exit counts as rate-limited only when its last line says so:
    // an agent may well mention a 429 in its work.
    let said = match code {
        0 => e
            .output
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| RATE_LIMIT.find(l)),
        _ => RATE_LIMIT.find_iter(e.output).last(),
    };
    if let Some(m) = said {
        return (
            Ending::RateLimited,
            Some(format!("{:?}, exit {code}", m.as_str())),
        );
    }
    if code != 0 {
        return (Ending::Failed, Some(format!("exit {code}")));
    }
    let hooks_saw = e.touched.iter().flat_map(|s| s.loops_told().iter());
    if let Some(hit) = e.loops.iter().chain(hooks_saw).next() {
        let what = match hit {
            LoopHit::SameFailure { command, count, .. } => {
                format!(
                    "`{}` failed {count} times in a row",
                    crate::system::output::clip(command, 60)
                )
            }
            LoopHit::SameFile { path, count, .. } => {
                format!("{path} changed {count} times, the checks failing the same way")
            }
            LoopHit::Oscillation { path, count } => {
                format!("{path} changed back and forth ({count} times the same change)")
            }
            LoopHit::Blocked {
                command,
                count,
                path,
                ..
            } => format!(
                "`{}` failed {count} times while {path} was changed before each",
                crate::system::output::clip(command, 60)
            ),
        };
        return (Ending::Looping, Some(what));
    }
    (Ending::Exited, None)
}

/// The live budgets written since `since` (by file time: the records'
/// own times follow `CTXKEEP_NOW`), oldest first.
pub fn touched_sessions(ws: &Workspace, since: SystemTime) -> Vec<Session> {
    let mut touched: Vec<(SystemTime, Session)> = crate::domain::session::all(ws)
        .into_iter()
        .filter_map(|s| {
            let t = std::fs::metadata(crate::domain::session::path(ws, s.id()))
                .and_then(|m| m.modified())
                .ok()?;
            (t >= since).then_some((t, s))
        })
        .collect();
    crate::system::sorting::sort_by_key(&mut touched, |(t, _)| *t);
    touched.into_iter().map(|(_, s)| s).collect()
}

/// The last few KiB of the agent's output (lossy UTF-8).
pub fn output_tail(log: &Path) -> String {
    let Ok((mut f, _)) = crate::system::fsutil::open_input(log) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(len.saturating_sub(OUTPUT_TAIL)))
        .and_then(|_| f.read_to_end(&mut buf))
        .is_err()
    {
        return String::new();
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Parses `90s`, `30m`, `2h`, `1h30m` or `1d` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, Error> {
    parse_duration_of("--max-time", text)
}

/// [`parse_duration`] of the value of `flag`, which its error names.
pub fn parse_duration_of(flag: &str, text: &str) -> Result<Duration, Error> {
    let bad = || {
        Error::Usage(format!(
            "{flag}: {text:?} is not a duration; write e.g. 90s, 30m, 2h or 1h30m"
        ))
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = number.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or_else(bad)?;
        number.clear();
    }
    if !number.is_empty() || total == 0 {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        for bad in ["", "h", "10x", "5m3", "0s", "-1s", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn rate_limits_are_recognised_and_a_clean_exit_needs_its_last_line() {
        use std::os::unix::process::ExitStatusExt;
        let run = |code: i32, output: &str| {
            let finished = Finished {
                status: std::process::ExitStatus::from_raw(code << 8),
                stopped: None,
            };
            classify(&Evidence {
                finished: &finished,
                touched: &[],
                loops: &[],
                output,
            })
            .0
        };
        assert_eq!(
            run(1, "API Error: 429 Too Many Requests\nbye\n"),
            Ending::RateLimited
        );
        assert_eq!(run(1, "overloaded_error\n"), Ending::RateLimited);
        assert_eq!(run(1, "segfault\n"), Ending::Failed);
        assert_eq!(run(0, "fixed the 429 handler\nall done\n"), Ending::Exited);
        assert_eq!(
            run(0, "done\nQuota exceeded for today\n"),
            Ending::RateLimited
        );
    }
}
