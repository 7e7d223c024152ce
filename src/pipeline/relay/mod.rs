//! `relay`'s job: headless agent sessions one after another on this
//! project, each started from the resume prompt of the latest checkpoint
//! (a link of the chain, source `relay`), until a stop condition. A session
//! that hands off, fails, is rate-limited or goes round in a loop gives
//! the work to the next agent of the rotation; one that ends without a
//! checkpoint gets one from what it left (its transcript, git).

mod ending;
mod launch;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::json;

pub use ending::{parse_duration, parse_duration_of, Ending};
pub use launch::{AgentSpec, Builtin, Program};

use crate::domain::checkpoint::{Checkpoint, Fields};
use crate::domain::config::Config;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::handoff::resume;
use crate::pipeline::record;
use crate::system::error::Error;
use crate::system::output::Output;

/// `max_handoffs_without_progress` for relay when the front matter sets none.
pub const DEFAULT_MAX_HANDOFFS: u32 = 3;
/// `--until-timeout`'s default: how long the `--until` check may run.
pub const DEFAULT_UNTIL_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Agent logs kept in `.ctxkeep/relay/` (the oldest go first).
const LOGS_KEPT: usize = 60;

/// A validated relay.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Taken in turn; never empty.
    pub rotation: Vec<AgentSpec>,
    /// What the first session is asked to do.
    pub prompt: Option<String>,
    /// A shell command that stops the relay with success once it passes.
    pub until: Option<String>,
    /// How long `until` may run before it is stopped and taken as not passed.
    pub until_timeout: Duration,
    /// A phase that stops the relay with success once the checkpoint has it.
    pub until_phase: Option<String>,
    pub max_sessions: u32,
    pub max_time: Option<Duration>,
}

/// Why the relay stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// `--until` passed.
    Until,
    /// The checkpoint's phase is `--until-phase`.
    UntilPhase,
    /// The chain is stuck: another handoff would pass `max_handoffs_without_progress`.
    Stuck,
    MaxSessions,
    MaxTime,
    Interrupted,
}

impl Stop {
    pub fn exit_code(self) -> u8 {
        use crate::system::codes::exit;
        match self {
            Stop::Until | Stop::UntilPhase => exit::OK,
            Stop::Stuck | Stop::MaxSessions | Stop::MaxTime => exit::CHECK_FAILED,
            Stop::Interrupted => exit::INTERRUPTED,
        }
    }
}

/// What one session did, checked into the counts a person asks first.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Progress {
    /// Commits made during the session.
    pub commits: u64,
    /// Plan items completed, by the checkpoint written after the session.
    pub plan_done: usize,
    /// Files changed, by the same checkpoint.
    pub files: usize,
}

/// One session of the relay.
#[derive(Debug, Clone, Serialize)]
pub struct SessionReport {
    /// 1, 2, ... in this relay.
    pub number: u32,
    pub agent: String,
    /// The agent of the session before, when this one took over from another.
    pub from_agent: Option<String>,
    /// The link of the chain it was opened as (`session-0004`); null when
    /// there was no checkpoint to resume.
    pub link: Option<String>,
    /// The checkpoint it resumed.
    pub resumed: Option<String>,
    /// The live-budget id relay gave it (`CTXKEEP_SESSION`).
    pub session_id: String,
    pub ended: Ending,
    /// A few words on why (the stage, the exit code, the pattern).
    pub detail: Option<String>,
    /// The exit code, or 128 + the signal that ended the agent.
    pub exit_code: i32,
    pub seconds: f64,
    /// Tokens in the context at the end, when a hook or transcript says.
    pub tokens: Option<u64>,
    /// The checkpoint that stands after the session.
    pub checkpoint: Option<String>,
    /// Who wrote a checkpoint during the session: `agent` (the agent or its
    /// hooks; relay may have added one naming the agent), `relay` alone
    /// (from the transcript and git), `none` (nothing new to record).
    pub checkpoint_by: &'static str,
    pub progress: Progress,
    /// The agent's output.
    pub log: String,
}

/// The whole relay, for `--json`.
#[derive(Debug, Serialize)]
pub struct Report {
    pub ok: bool,
    pub stopped: Stop,
    /// Why, in words.
    pub reason: String,
    pub exit_code: u8,
    pub sessions: Vec<SessionReport>,
}

/// What `--dry-run` prints.
#[derive(Debug, Serialize)]
pub struct DryRun {
    /// Each agent's command line, `$PROMPT` for the prompt.
    pub commands: Vec<String>,
    /// Where the first prompt comes from.
    pub first_prompt: String,
    /// What would stop the real run before or at its first session (an
    /// agent's CLI not on PATH, a checkpoint `resume` refuses); empty when
    /// nothing found. A command of `--agent-cmd` is the user's shell line
    /// and is not checked.
    pub problems: Vec<String>,
}

/// The commands relay would run, and nothing run or written.
pub fn dry_run(ws: &Workspace, plan: &Plan) -> anyhow::Result<DryRun> {
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let first_prompt = match (&sf.fm.checkpoint, &plan.prompt) {
        (Some(c), None) => format!("the resume prompt of {}", c.id),
        (Some(c), Some(_)) => format!("the resume prompt of {}, then PROMPT", c.id),
        (None, Some(_)) => "PROMPT".into(),
        (None, None) => return Err(no_prompt(ws).into()),
    };
    let commands = plan
        .rotation
        .iter()
        .map(|spec| {
            let argv = spec.argv("$PROMPT");
            let line = argv
                .iter()
                .map(|a| match a.as_str() {
                    "$PROMPT" => "\"$PROMPT\"".to_string(),
                    _ => shell_quote(a),
                })
                .collect::<Vec<_>>()
                .join(" ");
            match spec.prompt_on_stdin() {
                true => format!("{line} < \"$PROMPT\""),
                false => line,
            }
        })
        .collect();
    let mut problems = launch::missing_programs(&plan.rotation);
    if let Some(c) = &sf.fm.checkpoint {
        match crate::domain::state::seal(&sf) {
            Some(crate::domain::state::Seal::Intact) | None => {}
            Some(_) => problems.push(format!(
                "checkpoint {} was changed by hand since ctxkeep wrote it (or has no digest): the first session's resume would refuse it; re-seal it with `ctxkeep checkpoint`",
                c.id
            )),
        }
    }
    Ok(DryRun {
        commands,
        first_prompt,
        problems,
    })
}

fn no_prompt(ws: &Workspace) -> Error {
    // A file without a checkpoint where one was written: not "yet", but overwritten (an
    // agent writing its own notes there, an editor); saying "yet" would send the user
    // the wrong way.
    let dir = ws.checkpoints_dir();
    if let Some(id) = (crate::domain::checkpoint::Archive { dir: &dir })
        .ids()
        .last()
    {
        return Error::no_input(
            &ws.state_path,
            format!(
                "holds no checkpoint any more, though {id} was written (archived in {}): the file was overwritten, by an agent or by hand; put it back (e.g. `git checkout -- {}`, or `ctxkeep init` and a checkpoint) and run relay again",
                dir.display(),
                ws.display_state()
            ),
        );
    }
    Error::no_input(
        &ws.state_path,
        "no checkpoint yet: give the first session a PROMPT after `--`",
    )
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    match plain {
        true => s.to_string(),
        false => format!("'{}'", s.replace('\'', r"'\''")),
    }
}

/// Runs the relay to a stop condition; `on_session` hears of each session
/// as it ends.
pub fn run(
    ws: &Workspace,
    plan: &Plan,
    out: &Output,
    on_session: &mut dyn FnMut(&SessionReport),
) -> anyhow::Result<Report> {
    launch::check_programs(&plan.rotation)?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    if sf.fm.checkpoint.is_none() && plan.prompt.is_none() {
        return Err(no_prompt(ws).into());
    }
    launch::catch_signals();
    let logs = ws.data_dir.join("relay");
    crate::system::fsutil::ensure_dir(&logs)?;
    prune_logs(&logs);
    let started = Instant::now();
    let deadline = plan.max_time.map(|d| started + d);
    let run_id = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut turn = 0usize;
    let mut sessions: Vec<SessionReport> = Vec::new();
    let (stopped, reason) = loop {
        let number = sessions.len() as u32 + 1;
        if launch::interrupted() {
            break (Stop::Interrupted, "interrupted".to_string());
        }
        if number > plan.max_sessions {
            break (
                Stop::MaxSessions,
                format!("--max-sessions {} reached", plan.max_sessions),
            );
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break (Stop::MaxTime, "--max-time reached".to_string());
        }
        let spec = &plan.rotation[turn % plan.rotation.len()];
        let task = if number == 1 {
            plan.prompt.as_deref()
        } else {
            None
        };
        let opened = match open(ws, spec, task, out) {
            Ok(o) => o,
            Err(e)
                if crate::system::error::exit_code_of(&e)
                    == crate::system::codes::exit::CHECK_FAILED =>
            {
                break (Stop::Stuck, crate::system::error::one_line_message(&e));
            }
            Err(e) => return Err(e),
        };
        let session = Session {
            ws,
            spec,
            number,
            id: format!("relay-{run_id}-{number}"),
            logs: &logs,
            deadline,
        };
        let mut report = session.run(&opened, out)?;
        report.from_agent = sessions
            .last()
            .map(|s| s.agent.clone())
            .filter(|a| *a != report.agent);
        log_event(ws, "relay_session", serde_json::to_value(&report)?, out);
        on_session(&report);
        let ended = report.ended;
        let log = PathBuf::from(&report.log);
        sessions.push(report);
        match ended {
            Ending::Interrupted => break (Stop::Interrupted, "interrupted".to_string()),
            Ending::TimedOut => break (Stop::MaxTime, "--max-time reached".to_string()),
            _ => {}
        }
        if let Some(want) = &plan.until_phase {
            let phase = StateFile::load(&ws.state_path)?
                .fm
                .checkpoint
                .map(|c| c.phase)
                .unwrap_or_default();
            if phase.trim().eq_ignore_ascii_case(want.trim()) {
                break (Stop::UntilPhase, format!("the phase is {:?}", phase.trim()));
            }
        }
        if let Some(cmd) = &plan.until {
            let until = Instant::now() + plan.until_timeout;
            let until = deadline.map_or(until, |d| d.min(until));
            match launch::check(cmd, &ws.root, &ws.root.join(&log), until) {
                launch::Check::Passed => break (Stop::Until, format!("`{cmd}` passed")),
                launch::Check::Interrupted => break (Stop::Interrupted, "interrupted".to_string()),
                launch::Check::TimedOut if deadline.is_none_or(|d| Instant::now() < d) => {
                    out.warn(&format!(
                        "relay: `{cmd}` was still running after {} s and was stopped (--until-timeout); taken as not passed",
                        plan.until_timeout.as_secs()
                    ))
                }
                launch::Check::TimedOut | launch::Check::Failed => {}
            }
            if launch::interrupted() {
                break (Stop::Interrupted, "interrupted".to_string());
            }
        }
        if ended.rotates() {
            turn += 1;
        }
    };
    let exit_code = stopped.exit_code();
    log_event(
        ws,
        "relay_stop",
        json!({ "stopped": stopped, "reason": reason, "sessions": sessions.len() }),
        out,
    );
    Ok(Report {
        ok: exit_code == crate::system::codes::exit::OK,
        stopped,
        reason,
        exit_code,
        sessions,
    })
}

/// What a session starts from.
struct Opened {
    prompt: String,
    link: Option<crate::handoff::chain::SessionRecord>,
}

/// The resume prompt of the latest checkpoint (a link of the chain), with
/// the task after it for the first session; the task alone when there is
/// no checkpoint yet. A stuck chain is refused (exit 1).
fn open(
    ws: &Workspace,
    spec: &AgentSpec,
    task: Option<&str>,
    out: &Output,
) -> anyhow::Result<Opened> {
    let sf = StateFile::load(&ws.state_path)?;
    if sf.fm.checkpoint.is_none() {
        return match task {
            Some(t) => Ok(Opened {
                prompt: t.to_string(),
                link: None,
            }),
            None => Err(no_prompt(ws).into()),
        };
    }
    let opts = resume::Options {
        agent: Some(spec.name.clone()),
        source: Some("relay".into()),
        default_max_handoffs: Some(DEFAULT_MAX_HANDOFFS),
        ..resume::Options::default()
    };
    let report = resume::resume(ws, &opts, out)?;
    let mut prompt = report.prompt;
    if let Some(t) = task {
        prompt = format!("{}\n\n{t}\n", prompt.trim_end());
    }
    Ok(Opened {
        prompt,
        link: report.session,
    })
}

/// One session to run.
struct Session<'a> {
    ws: &'a Workspace,
    spec: &'a AgentSpec,
    number: u32,
    /// Its live-budget id.
    id: String,
    logs: &'a Path,
    deadline: Option<Instant>,
}

impl Session<'_> {
    fn run(&self, opened: &Opened, out: &Output) -> anyhow::Result<SessionReport> {
        let ws = self.ws;
        let before = current_checkpoint(ws)?;
        let head_before = crate::system::git::head(&ws.root).ok().flatten();
        let log = self.logs.join(format!("{}.log", self.id));
        let transcript = self.logs.join(format!("{}.transcript", self.id));
        let env = [
            ("CTXKEEP_SESSION", self.id.clone()),
            ("CTXKEEP_RELAY_SESSION", self.number.to_string()),
            ("CTXKEEP_RELAY_TRANSCRIPT", transcript.display().to_string()),
            ("CTXKEEP_STATE", ws.state_path.display().to_string()),
        ];
        let since = SystemTime::now();
        let t0 = Instant::now();
        let finished = launch::run(&launch::Launch {
            spec: self.spec,
            prompt: &opened.prompt,
            dir: &ws.root,
            env: &env,
            log: &log,
            deadline: self.deadline,
        })?;
        let seconds = t0.elapsed().as_secs_f64();

        let touched = ending::touched_sessions(ws, since);
        // The transcript: the one a home-made agent wrote where relay said,
        // else the one the agent's hooks recorded last.
        let transcript = Some(transcript).filter(|t| t.is_file()).or_else(|| {
            touched
                .iter()
                .rev()
                .filter_map(|s| s.transcript().map(PathBuf::from))
                .find(|t| t.is_file())
        });
        let format = self.spec.transcript_format();
        let observed = transcript
            .as_deref()
            .and_then(|t| record::observe_transcript(ws, t, format).ok());
        let config = Config::from_front(&StateFile::load(&ws.state_path)?.fm);
        let loops = match (&observed, &config.loop_limits) {
            (Some(o), Some(limits)) => crate::transcripts::activity::loops_found(o, limits),
            _ => Vec::new(),
        };
        let output = ending::output_tail(&log);
        let (ended, detail) = ending::classify(&ending::Evidence {
            finished: &finished,
            touched: &touched,
            loops: &loops,
            output: &output,
        });

        let mut after = current_checkpoint(ws)?;
        let mut by = "agent";
        // A session that wrote no checkpoint, or was stopped midway (it may
        // have done more since its own), gets one from what it left; and
        // the checkpoint names the agent that ran, so that the next link of
        // the chain records a handoff from it.
        let stopped = matches!(ended, Ending::Interrupted | Ending::TimedOut);
        let unchanged = after.as_ref().map(|c| &c.id) == before.as_ref().map(|c| &c.id);
        let other_controller = after
            .as_ref()
            .is_some_and(|c| c.controlling_agent.trim() != self.spec.name);
        if stopped || unchanged || other_controller {
            let trigger = match ended {
                Ending::Interrupted => "relay-interrupt",
                _ => "relay",
            };
            let lock = ws.lock()?;
            let written = record::write_new(
                ws,
                &lock,
                record::New {
                    fields: Fields {
                        controlling_agent: Some(self.spec.name.clone()),
                        ..Fields::default()
                    },
                    trigger,
                    budget: None,
                    // What the agent's own checkpoint of this session saw, if relay saw nothing.
                    observed: observed
                        .clone()
                        .or_else(|| after.as_ref().filter(|_| !unchanged)?.observed.clone()),
                    extra: json!({ "session": self.id, "agent": self.spec.name, "ended": ended }),
                    automatic: true,
                    line: None,
                },
                out,
            )?;
            drop(lock);
            let agent_wrote = after.as_ref().map(|c| &c.id) != before.as_ref().map(|c| &c.id);
            by = match written {
                _ if agent_wrote => "agent",
                record::Written::New(_) => "relay",
                record::Written::Skipped { .. } => "none",
            };
            after = Some(written.checkpoint().clone());
        }
        let new = after.as_ref().map(|c| &c.id) != before.as_ref().map(|c| &c.id);
        let done = |c: &Checkpoint| {
            c.observed.as_ref().map_or((0, 0), |o| {
                let plan = o
                    .plan
                    .iter()
                    .filter(|p| p.status == crate::transcripts::activity::PlanStatus::Completed)
                    .count();
                (plan, o.files.len())
            })
        };
        let (plan_done, files) = match (&after, new) {
            (Some(c), true) => done(c),
            _ => (0, 0),
        };
        let commits = head_before
            .as_deref()
            .and_then(|h| crate::system::git::commits_since(&ws.root, h).ok())
            .unwrap_or(0);
        let tokens = touched.iter().rev().find_map(|s| s.tokens()).or_else(|| {
            let t = transcript.as_deref()?;
            crate::agents::read_usage(t, format).ok()?.tokens
        });
        Ok(SessionReport {
            number: self.number,
            agent: self.spec.name.clone(),
            from_agent: None,
            link: opened.link.as_ref().map(|l| l.id()),
            resumed: opened.link.as_ref().map(|l| l.checkpoint.clone()),
            session_id: self.id.clone(),
            ended,
            detail,
            exit_code: finished.code(),
            seconds: (seconds * 10.0).round() / 10.0,
            tokens,
            checkpoint: after.map(|c| c.id),
            checkpoint_by: by,
            progress: Progress {
                commits,
                plan_done,
                files,
            },
            log: log
                .strip_prefix(&ws.root)
                .unwrap_or(&log)
                .display()
                .to_string(),
        })
    }
}

fn current_checkpoint(ws: &Workspace) -> anyhow::Result<Option<Checkpoint>> {
    Ok(StateFile::load(&ws.state_path)?.fm.checkpoint)
}

fn log_event(ws: &Workspace, event: &str, fields: serde_json::Value, out: &Output) {
    let logged = ws
        .lock()
        .and_then(|lock| crate::domain::events::append(ws, &lock, event, fields));
    if let Err(e) = logged {
        out.warn(&format!("the event log could not be updated: {e}"));
    }
}

/// Keeps the newest [`LOGS_KEPT`] files of `.ctxkeep/relay/`.
fn prune_logs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= LOGS_KEPT {
        return;
    }
    crate::system::sorting::sort(&mut files);
    for (_, path) in &files[..files.len() - LOGS_KEPT] {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;
    use crate::handoff::test_project::{fields, initialized};
    use crate::pipeline::harness::checkpoint;

    fn plan(rotation: Vec<AgentSpec>, prompt: Option<&str>) -> Plan {
        Plan {
            rotation,
            prompt: prompt.map(str::to_string),
            until: None,
            until_timeout: DEFAULT_UNTIL_TIMEOUT,
            until_phase: None,
            max_sessions: 3,
            max_time: None,
        }
    }

    #[test]
    fn a_dry_run_shows_each_agents_command_line_quoted() {
        let (_dir, ws) = initialized();
        let qwen = Builtin::new(Agent::QwenCode).expect("Qwen Code runs headless");
        let rotation = vec![
            AgentSpec::builtin(qwen, vec!["--model".into(), "qwen3 coder".into()]),
            AgentSpec::shell("my-agent --fast"),
        ];
        let d = dry_run(&ws, &plan(rotation, Some("fix the parser"))).unwrap();
        assert_eq!(
            d.commands,
            [
                "qwen --model 'qwen3 coder' -p \"$PROMPT\"",
                "sh -c 'my-agent --fast' < \"$PROMPT\"",
            ]
        );
        assert_eq!(d.first_prompt, "PROMPT");
    }

    #[test]
    fn the_first_prompt_is_the_checkpoints_resume_prompt_then_the_users() {
        let (_dir, ws) = initialized();
        let c = checkpoint(&ws, fields("run cargo test parser"));
        let agents = || vec![AgentSpec::shell("my-agent")];
        let d = dry_run(&ws, &plan(agents(), None)).unwrap();
        assert_eq!(d.first_prompt, format!("the resume prompt of {}", c.id));
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        let d = dry_run(&ws, &plan(agents(), Some("and then the docs"))).unwrap();
        assert_eq!(
            d.first_prompt,
            format!("the resume prompt of {}, then PROMPT", c.id)
        );
    }

    #[test]
    fn no_checkpoint_and_no_prompt_is_refused_with_what_to_give() {
        let (_dir, ws) = initialized();
        let err = dry_run(&ws, &plan(vec![AgentSpec::shell("my-agent")], None))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("give the first session a PROMPT after `--`"),
            "{err}"
        );
    }

    #[test]
    fn a_hand_edited_checkpoint_is_a_problem_the_dry_run_names() {
        let (_dir, ws) = initialized();
        let c = checkpoint(&ws, fields("run cargo test parser"));
        let text = std::fs::read_to_string(&ws.state_path).unwrap();
        std::fs::write(
            &ws.state_path,
            text.replacen("run cargo test parser", "run cargo test lexer", 1),
        )
        .unwrap();
        let d = dry_run(&ws, &plan(vec![AgentSpec::shell("my-agent")], None)).unwrap();
        assert_eq!(d.problems.len(), 1, "{:?}", d.problems);
        assert!(
            d.problems[0].starts_with(&format!("checkpoint {} was changed by hand", c.id)),
            "{:?}",
            d.problems
        );
    }

    #[test]
    fn shell_quoting_leaves_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("--model=a.b/c"), "--model=a.b/c");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("two words"), "'two words'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_stop_maps_to_its_exit_code() {
        use crate::system::codes::exit;
        assert_eq!(Stop::Until.exit_code(), exit::OK);
        assert_eq!(Stop::UntilPhase.exit_code(), exit::OK);
        assert_eq!(Stop::Stuck.exit_code(), exit::CHECK_FAILED);
        assert_eq!(Stop::MaxSessions.exit_code(), exit::CHECK_FAILED);
        assert_eq!(Stop::Interrupted.exit_code(), exit::INTERRUPTED);
    }
}
