//! The commands that read the record back or run sessions on it: `status`, `resume`, `ack`,
//! `restore`, `gc`, `relay`, `log`, `verify`.

use std::path::PathBuf;

use clap::Args;

use crate::agents::Agent;

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The session to show [default: the one most recently tracked in this project, with a
    /// line for each other live session; `default` when none was]
    #[arg(long, value_name = "ID", env = "CTXKEEP_SESSION")]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// Keep the prompt within N tokens (configured encoding); lower-priority sections go first.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,

    /// Print the prompt even when the checkpoint is damaged or was edited by hand.
    #[arg(long)]
    pub force: bool,

    /// The agent taking over (recorded as a handoff when another agent controlled the work)
    /// [default: the checkpoint's controlling agent].
    #[arg(long, value_name = "NAME", conflicts_with = "peek")]
    pub agent: Option<String>,

    /// Only print the prompt: open no session, issue no nonce, log nothing.
    #[arg(long)]
    pub peek: bool,

    /// Resume this agent session's line of work: its newest checkpoint, not another
    /// session's newer one [default: the newest line, the project's last checkpoint].
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct AckArgs {
    /// The nonce the resume prompt printed.
    #[arg(value_name = "NONCE", required_unless_present = "transcript")]
    pub nonce: Option<String>,

    /// Instead of a nonce, look for the agent echoing the latest one in the end of this
    /// transcript (for hooks; exits 0 whether found or not).
    #[arg(long, value_name = "PATH", conflicts_with = "nonce")]
    pub transcript: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The checkpoint whose snapshot to restore (default: the latest that has one).
    #[arg(value_name = "CKPT")]
    pub checkpoint: Option<String>,

    /// Overwrite files that have local changes of their own.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct GcArgs {
    /// Say what would be removed or rotated, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct RelayArgs {
    /// An agent to run headless (`claude -p`, `codex exec`, `gemini -p`) with its own
    /// permissions; repeat for a rotation, taken in turn on each handoff or failure.
    #[arg(long, value_enum, value_name = "AGENT")]
    pub agent: Vec<Agent>,

    /// Any other command, run with `sh -c` and the prompt on stdin; repeatable, after the
    /// --agent ones in the rotation (docs/commands.md says what it is given).
    #[arg(long, value_name = "CMD")]
    pub agent_cmd: Vec<String>,

    /// Extra arguments for the agents' own CLIs, split on spaces; `AGENT=ARGS` for one agent
    /// only (e.g. `claude-code=--model opus`). Repeatable.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub agent_args: Vec<String>,

    /// Stop with success once a shell command passes (run with `sh -c` after each session).
    #[arg(long, value_name = "CMD")]
    pub until: Option<String>,

    /// How long the --until command may run before its process group is stopped and it
    /// counts as not passed (e.g. 90s, 30m, 2h) [default: 30m].
    #[arg(long, value_name = "DURATION", requires = "until")]
    pub until_timeout: Option<String>,

    /// Stop with success once the checkpoint's phase is this (case-insensitive), e.g. done.
    #[arg(long, value_name = "PHASE")]
    pub until_phase: Option<String>,

    /// Run at most N sessions.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: u32,

    /// Stop after this long, the running session included (e.g. 90s, 30m, 2h).
    #[arg(long, value_name = "DURATION")]
    pub max_time: Option<String>,

    /// Print the commands relay would run, and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// What the first session is asked to do (after the resume prompt when there is a
    /// checkpoint; required when there is none).
    #[arg(last = true, value_name = "PROMPT")]
    pub prompt: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Show at most N entries (the newest).
    #[arg(long, short = 'n', value_name = "N")]
    pub limit: Option<usize>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Treat warnings that matter (undescribed changes, the probe's findings) as errors, and
    /// name unknown top-level keys. A hand-edited checkpoint is an error either way (resume
    /// refuses it).
    #[arg(long)]
    pub strict: bool,

    /// The resume prompt must fit N tokens (configured encoding) [default: resume_max_tokens, 2000].
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,

    /// Check the version of the state file in git's index, and the repository as the
    /// next commit will hold it (for pre-commit hooks); findings that only this clone
    /// has (the session chain, uncommitted changes) are left out.
    #[arg(long)]
    pub staged: bool,

    /// Also ask a fresh reader: run CMD through `sh -c` with the resume prompt on stdin
    /// and check its JSON answer (e.g. "claude -p").
    #[arg(long, value_name = "CMD")]
    pub probe: Option<String>,

    /// Stop the probe command after SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = crate::verify::probe::DEFAULT_TIMEOUT_SECS, value_parser = positive_secs)]
    pub probe_timeout: f64,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && v <= 86_400.0 => Ok(v),
        _ => Err("expected a number of seconds above 0 (at most 86400)".into()),
    }
}
