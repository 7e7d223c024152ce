//! Running one agent session: the command line of each agent's headless
//! mode, the child in a process group of its own (so that Ctrl-C reaches
//! relay, which stops the agent on purpose), its output to a log file, and
//! SIGINT/SIGTERM caught as a flag the wait loop looks at.

use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::agents::{Agent, Headless};
use crate::error::Error;

/// How long a stopped agent gets between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(10);
/// How often the wait loop looks at the child, the flag and the clock.
const POLL: Duration = Duration::from_millis(50);

/// An agent of the registry with a headless mode relay can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    agent: Agent,
    headless: Headless,
}

impl Builtin {
    /// None when the agent has no headless mode.
    pub fn new(agent: Agent) -> Option<Builtin> {
        let headless = agent.integration().headless()?;
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

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && sys::executable(&m)))
}

/// Why relay stopped a running agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    Interrupt,
    Deadline,
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
        self.status
            .code()
            .or_else(|| sys::signal_of(&self.status).map(|s| 128 + s))
            .unwrap_or(-1)
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
/// deadline: SIGTERM to its process group, SIGKILL after [`GRACE`].
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
    sys::own_group(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::io(&argv[0], "cannot run", e))?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Finished {
                status,
                stopped: None,
            });
        }
        let stop = if interrupted() {
            Some(Stopped::Interrupt)
        } else if launch.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stopped::Deadline)
        } else {
            None
        };
        if let Some(stopped) = stop {
            let status = terminate(&mut child)?;
            return Ok(Finished {
                status,
                stopped: Some(stopped),
            });
        }
        std::thread::sleep(POLL);
    }
}

/// SIGTERM to the child's process group, then waits for the whole group
/// (a shell's children outlive it) and sends SIGKILL after the grace period
/// or at the next Ctrl-C. Returns the child's own status.
fn terminate(child: &mut std::process::Child) -> std::io::Result<ExitStatus> {
    let signals = SIGNALS.load(Ordering::SeqCst);
    sys::stop_group(child, false);
    let until = Instant::now() + GRACE;
    let mut status = None;
    while Instant::now() < until && SIGNALS.load(Ordering::SeqCst) <= signals {
        if status.is_none() {
            status = child.try_wait()?;
        }
        if status.is_some() && !sys::group_alive(child) {
            break;
        }
        std::thread::sleep(POLL);
    }
    if sys::group_alive(child) || status.is_none() {
        sys::stop_group(child, true);
    }
    match status {
        Some(s) => Ok(s),
        None => child.wait(),
    }
}

/// Runs `sh -c CMD` in `dir`, its output appended to `log`; whether it passed.
pub fn check_passes(cmd: &str, dir: &Path, log: &Path) -> bool {
    let out = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log);
    let (stdout, stderr) = match out.and_then(|f| Ok((f.try_clone()?, f))) {
        Ok((a, b)) => (Stdio::from(a), Stdio::from(b)),
        Err(_) => (Stdio::null(), Stdio::null()),
    };
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .status()
        .is_ok_and(|s| s.success())
}

/// SIGINT and SIGTERM received since [`catch_signals`].
static SIGNALS: AtomicUsize = AtomicUsize::new(0);

/// Catches SIGINT and SIGTERM from now on: they count in a flag that the
/// wait loop and the relay loop look at, instead of ending relay at once.
pub fn catch_signals() {
    sys::catch_signals();
}

/// Whether SIGINT or SIGTERM arrived since [`catch_signals`].
pub fn interrupted() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

#[cfg(unix)]
mod sys {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::sync::atomic::Ordering;

    extern "C" fn on_signal(_: libc::c_int) {
        super::SIGNALS.fetch_add(1, Ordering::SeqCst);
    }

    pub fn catch_signals() {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only adds to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, handler);
            libc::signal(libc::SIGTERM, handler);
        }
    }

    /// The child leads a process group of its own: Ctrl-C in the terminal
    /// reaches relay only, and relay stops the agent with all its children.
    pub fn own_group(cmd: &mut std::process::Command) {
        cmd.process_group(0);
    }

    pub fn stop_group(child: &mut std::process::Child, kill: bool) {
        let signal = if kill { libc::SIGKILL } else { libc::SIGTERM };
        // SAFETY: kill(2) on the child's process group; no memory is shared.
        unsafe { libc::kill(-(child.id() as libc::pid_t), signal) };
    }

    pub fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
        status.signal()
    }

    /// Whether a process of the child's group is still running.
    pub fn group_alive(child: &std::process::Child) -> bool {
        // SAFETY: signal 0 only checks that the group exists.
        unsafe { libc::kill(-(child.id() as libc::pid_t), 0) == 0 }
    }

    pub fn executable(meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
}

/// Elsewhere relay runs, but Ctrl-C ends it with the agent, and an agent
/// stopped at `--max-time` is killed at once.
#[cfg(not(unix))]
mod sys {
    pub fn catch_signals() {}

    pub fn own_group(_: &mut std::process::Command) {}

    pub fn stop_group(child: &mut std::process::Child, _kill: bool) {
        let _ = child.kill();
    }

    pub fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
        None
    }

    pub fn group_alive(_: &std::process::Child) -> bool {
        false
    }

    pub fn executable(_: &std::fs::Metadata) -> bool {
        true
    }
}
