//! Running one agent session: the command line of each agent's headless
//! mode, the child in a process group of its own (`crate::system::process`: Ctrl-C
//! reaches relay, which stops the agent on purpose, and whatever the agent
//! leaves running in its group is stopped when it ends), its output to a
//! log file; and the `--until` check, run the same way with a timeout.

use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::agents::{Agent, Headless};
use crate::system::error::Error;
use crate::system::process;

pub use crate::system::process::{catch_signals, interrupted, Stopped};

/// How long a stopped agent gets between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(10);

/// [`GRACE`], or (tests only) `CTXKEEP_TEST_RELAY_GRACE_SECS`: a grace longer than any test
/// lets a test tell a kill at the second Ctrl-C from one at the grace's end without a clock.
fn grace() -> Duration {
    std::env::var("CTXKEEP_TEST_RELAY_GRACE_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(GRACE, Duration::from_secs)
}

/// An agent of the registry with a headless mode relay can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    agent: Agent,
    headless: Headless,
}

impl Builtin {
    /// None when the agent has no headless mode.
    pub fn new(agent: Agent) -> Option<Builtin> {
        let headless = agent.spec().headless?;
        Some(Builtin { agent, headless })
    }

    /// The name in the chain and in `AGENT=ARGS`.
    pub fn name(self) -> &'static str {
        self.agent.as_str()
    }

    /// The executable looked up on PATH.
    pub fn program(self) -> &'static str {
        self.headless.program
    }

    /// Whose transcript format its sessions write.
    pub fn transcript_format(self) -> Agent {
        self.agent
    }
}

/// What runs a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    Builtin(Builtin),
    /// `sh -c CMD`, the prompt on stdin.
    Shell(String),
}

/// One agent of the rotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSpec {
    /// The name recorded in the chain.
    pub name: String,
    pub program: Program,
    /// Passed through to a built-in agent's CLI, before the prompt.
    pub args: Vec<String>,
}

impl AgentSpec {
    pub fn builtin(agent: Builtin, args: Vec<String>) -> AgentSpec {
        AgentSpec {
            name: agent.name().to_string(),
            program: Program::Builtin(agent),
            args,
        }
    }

    /// A command of the user's own, named after its program's file name.
    pub fn shell(cmd: &str) -> AgentSpec {
        let first = cmd.split_whitespace().next().unwrap_or("agent");
        let name = Path::new(first)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "agent".into());
        AgentSpec {
            name,
            program: Program::Shell(cmd.to_string()),
            args: Vec::new(),
        }
    }

    /// The command line, the prompt included where the agent takes it.
    pub fn argv(&self, prompt: &str) -> Vec<String> {
        match &self.program {
            Program::Shell(cmd) => vec!["sh".into(), "-c".into(), cmd.clone()],
            Program::Builtin(b) => b.headless.argv(&self.args, prompt),
        }
    }

    /// Whether the prompt goes to stdin rather than the command line.
    pub fn prompt_on_stdin(&self) -> bool {
        matches!(self.program, Program::Shell(_))
    }

    /// The transcript format, when the agent is one ctxkeep knows.
    pub fn transcript_format(&self) -> Option<Agent> {
        match self.program {
            Program::Builtin(b) => Some(b.transcript_format()),
            Program::Shell(_) => None,
        }
    }
}

/// A built-in agent whose program is not on PATH is refused before any
/// session starts.
pub fn check_programs(rotation: &[AgentSpec]) -> Result<(), Error> {
    for spec in rotation {
        if let Program::Builtin(b) = spec.program {
            if find_on_path(b.program()).is_none() {
                return Err(Error::no_input(
                    b.program(),
                    format!(
                        "`{}` is not on PATH; install {} or give relay another --agent",
                        b.program(),
                        b.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What [`check_programs`] would refuse, every one (for `--dry-run`).
pub fn missing_programs(rotation: &[AgentSpec]) -> Vec<String> {
    rotation
        .iter()
        .filter_map(|spec| match spec.program {
            Program::Builtin(b) if find_on_path(b.program()).is_none() => Some(format!(
                "`{}` is not on PATH; install {} or give relay another --agent",
                b.program(),
                b.name()
            )),
            _ => None,
        })
        .collect()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && sys::executable(&m)))
}

/// How a session's process came out.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stopped: Option<Stopped>,
}

impl Finished {
    /// The exit code, or 128 + the signal that ended the process.
    pub fn code(&self) -> i32 {
        process::code_of(&self.status)
    }
}

/// One session to run.
pub struct Launch<'a> {
    pub spec: &'a AgentSpec,
    pub prompt: &'a str,
    pub dir: &'a Path,
    pub env: &'a [(&'a str, String)],
    /// Where the agent's stdout and stderr go.
    pub log: &'a Path,
    pub deadline: Option<Instant>,
}

/// Runs the session to its end, or stops it on SIGINT/SIGTERM or at the
/// deadline: SIGTERM to its process group, SIGKILL after [`GRACE`]. When it
/// ends on its own, what it left running in its group is stopped the same way.
pub fn run(launch: &Launch) -> anyhow::Result<Finished> {
    let argv = launch.spec.argv(launch.prompt);
    let log = File::create(launch.log).map_err(|e| Error::io(launch.log, "cannot create", e))?;
    let err_log = log
        .try_clone()
        .map_err(|e| Error::io(launch.log, "cannot open", e))?;
    let stdin = if launch.spec.prompt_on_stdin() {
        // A file, not a pipe: an agent that never reads its stdin cannot block relay.
        let mut f =
            tempfile::tempfile().map_err(|e| Error::io("<tempfile>", "cannot create", e))?;
        f.write_all(launch.prompt.as_bytes())
            .and_then(|_| f.rewind())
            .map_err(|e| Error::io("<tempfile>", "cannot write", e))?;
        Stdio::from(f)
    } else {
        Stdio::null()
    };
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(launch.dir)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(log)
        .stderr(err_log);
    // A relay killed outright takes its session with it.
    let mut session =
        process::spawn_guarded(&mut cmd).map_err(|e| Error::io(&argv[0], "cannot run", e))?;
    // Test-only: holds relay with the agent running, for a kill at this instant.
    crate::system::fsutil::test_pause("CTXKEEP_TEST_PAUSE_AFTER_SPAWN");
    let waited = session.wait(launch.deadline, true, grace())?;
    Ok(Finished {
        status: waited.status,
        stopped: waited.stopped,
    })
}

/// How the `--until` check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Passed,
    /// It exited non-zero (or could not be run).
    Failed,
    /// Still running at its timeout (or the relay's deadline); stopped.
    TimedOut,
    /// SIGINT or SIGTERM arrived while it ran; stopped.
    Interrupted,
}

/// Runs `sh -c CMD` in `dir` in a guarded process group of its own, its output
/// appended to `log`, until it exits, `deadline` passes or a signal arrives
/// (then its group is stopped, as an agent's is).
pub fn check(cmd: &str, dir: &Path, log: &Path, deadline: Instant) -> Check {
    let out = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log);
    let (stdout, stderr) = match out.and_then(|f| Ok((f.try_clone()?, f))) {
        Ok((a, b)) => (Stdio::from(a), Stdio::from(b)),
        Err(_) => (Stdio::null(), Stdio::null()),
    };
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    // A relay killed outright takes its check with it, as it does a session.
    let Ok(mut check) = process::spawn_guarded(&mut command) else {
        return Check::Failed;
    };
    match check.wait(Some(deadline), true, grace()) {
        Ok(w) => match w.stopped {
            Some(Stopped::Interrupt) => Check::Interrupted,
            Some(Stopped::Deadline) => Check::TimedOut,
            None if w.status.success() => Check::Passed,
            None => Check::Failed,
        },
        Err(_) => Check::Failed,
    }
}

#[cfg(unix)]
mod sys {
    pub fn executable(meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
}

#[cfg(not(unix))]
mod sys {
    pub fn executable(_: &std::fs::Metadata) -> bool {
        true
    }
}
