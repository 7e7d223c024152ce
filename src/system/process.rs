//! Children that must leave nothing behind: each runs in a process group of
//! its own (so a terminal's Ctrl-C reaches ctxkeep, which stops the child on
//! purpose), is waited for with a deadline while SIGINT/SIGTERM are watched,
//! and when it ends, however it ends, its whole group is stopped: SIGTERM,
//! then SIGKILL to what is left after a grace period (or at the next
//! signal). What a child moves out of its group (`setsid`) is beyond reach.
//! The only `unsafe` of the crate is here: `signal`, `kill`, `raise`,
//! `waitpid`, `prctl`, `getppid` (and `pre_exec`, which runs the last two in
//! the child).

use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often a wait looks at the child, the signals and the clock.
const POLL: Duration = Duration::from_millis(20);

/// SIGINT and SIGTERM received since [`catch_signals`].
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
/// The last of them, to re-raise ([`die_of_signal`]).
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Catches SIGINT and SIGTERM from now on: they count in a flag the waits
/// look at, instead of ending the process at once.
pub fn catch_signals() {
    let _ = sys::catch_signals();
}

/// Runs `f` with SIGINT and SIGTERM caught as [`catch_signals`] does (so a
/// [`wait`] inside stops its child's group first), then puts back what was
/// there before and, if one arrived, raises it again: the process then
/// ends as it would have without `f`.
pub fn with_signals_caught<T>(f: impl FnOnce() -> T) -> T {
    let before = SIGNALS.load(Ordering::SeqCst);
    let previous = sys::catch_signals();
    let result = f();
    sys::restore(previous);
    if SIGNALS.load(Ordering::SeqCst) > before {
        sys::raise(LAST_SIGNAL.load(Ordering::SeqCst));
    }
    result
}

/// Whether SIGINT or SIGTERM arrived since [`catch_signals`].
pub fn interrupted() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// Makes `cmd`'s child lead a process group of its own.
pub fn own_group(cmd: &mut Command) -> &mut Command {
    sys::own_group(cmd);
    cmd
}

/// A child whose process group cannot outlive this process ([`spawn_guarded`]).
pub struct Guarded {
    pub child: Child,
    /// The group's id: the guard's pid, or the child's own without a guard.
    group: u32,
    /// Holds the write end of the pipe the guard reads; it closes when this
    /// process dies, however it dies.
    _guard: Option<Child>,
}

/// Starts `cmd` in a process group that dies with this process, even of
/// SIGKILL, which leaves ctxkeep no chance to stop it (Unix). A small `sh`
/// starts first and leads a new group, reading a pipe that only ctxkeep
/// holds open; when the kernel closes the pipe at ctxkeep's death the shell
/// kills its group. The child joins that group only once the guard exists,
/// so no instant exists at which ctxkeep can die and leave the child, or
/// what it starts (an agent run through `sh -c`, its tools), running. The
/// shell ends with the group when ctxkeep stops it. Without `sh` the child
/// leads a group of its own ([`own_group`]) and only it dies with ctxkeep.
pub fn spawn_guarded(cmd: &mut Command) -> std::io::Result<Guarded> {
    let Some(mut guard) = sys::start_guard() else {
        let child = own_group(cmd).spawn()?;
        let group = child.id();
        return Ok(Guarded {
            child,
            group,
            _guard: None,
        });
    };
    let group = guard.id();
    sys::join_group(cmd, group);
    match cmd.spawn() {
        Ok(child) => Ok(Guarded {
            child,
            group,
            _guard: Some(guard),
        }),
        Err(e) => {
            let _ = guard.kill();
            let _ = guard.wait();
            Err(e)
        }
    }
}

impl Guarded {
    /// [`wait`], for the child's group.
    pub fn wait(
        &mut self,
        deadline: Option<Instant>,
        watch_signals: bool,
        grace: Duration,
    ) -> std::io::Result<Waited> {
        wait_in(&mut self.child, self.group, deadline, watch_signals, grace)
    }
}

/// Why a wait stopped the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// SIGINT or SIGTERM arrived.
    Interrupt,
    /// The deadline passed.
    Deadline,
}

/// How a child came out of [`wait`].
#[derive(Debug)]
pub struct Waited {
    pub status: ExitStatus,
    pub stopped: Option<Stopped>,
}

/// Waits for `child` (started with [`own_group`]) to exit; stops its group
/// when a signal arrives (if `watch_signals`) or at `deadline`. Whatever
/// ends it, the rest of its group is stopped too, `grace` after SIGTERM.
pub fn wait(
    child: &mut Child,
    deadline: Option<Instant>,
    watch_signals: bool,
    grace: Duration,
) -> std::io::Result<Waited> {
    let group = child.id();
    wait_in(child, group, deadline, watch_signals, grace)
}

/// [`wait`] for a child of the group `group`.
fn wait_in(
    child: &mut Child,
    group: u32,
    deadline: Option<Instant>,
    watch_signals: bool,
    grace: Duration,
) -> std::io::Result<Waited> {
    loop {
        if let Some(status) = child.try_wait()? {
            // The child is gone; what it started in its group is not.
            stop_leftovers(group, grace);
            return Ok(Waited {
                status,
                stopped: None,
            });
        }
        let stop = if watch_signals && interrupted() {
            Some(Stopped::Interrupt)
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stopped::Deadline)
        } else {
            None
        };
        if let Some(stopped) = stop {
            // The first signal asks for the stop; any other, even one that came with it before
            // this poll looked (a quick double Ctrl-C), is the next signal that cuts the grace.
            let asked = match stopped {
                Stopped::Interrupt => 1,
                Stopped::Deadline => SIGNALS.load(Ordering::SeqCst),
            };
            let status = terminate_in(child, group, grace, asked)?;
            return Ok(Waited {
                status,
                stopped: Some(stopped),
            });
        }
        std::thread::sleep(POLL);
    }
}

/// SIGTERM to the child's process group, then waits for the child and the
/// rest of its group (a shell's children outlive it) and sends SIGKILL
/// after `grace` or at the next signal. Returns the child's own status.
pub fn terminate(child: &mut Child, grace: Duration) -> std::io::Result<ExitStatus> {
    let group = child.id();
    terminate_in(child, group, grace, SIGNALS.load(Ordering::SeqCst))
}

/// [`terminate`] for a child of the group `group`; a signal past the first `signals` is the next.
fn terminate_in(
    child: &mut Child,
    group: u32,
    grace: Duration,
    signals: usize,
) -> std::io::Result<ExitStatus> {
    sys::stop_child(child, group, false);
    let until = Instant::now() + grace;
    let mut status = None;
    while Instant::now() < until && SIGNALS.load(Ordering::SeqCst) <= signals {
        if status.is_none() {
            status = child.try_wait()?;
        }
        if status.is_some() && !sys::group_alive(group) {
            break;
        }
        std::thread::sleep(POLL);
    }
    if status.is_none() || sys::group_alive(group) {
        sys::stop_child(child, group, true);
    }
    match status {
        Some(s) => Ok(s),
        None => child.wait(),
    }
}

/// Stops what is left of the group `group` after its leader exited (and
/// was reaped): SIGTERM, SIGKILL after `grace` or at the next signal. The
/// group's id cannot be taken by a new process while any member lives.
pub fn stop_leftovers(group: u32, grace: Duration) {
    if !sys::signal_group(group, false) {
        return;
    }
    let signals = SIGNALS.load(Ordering::SeqCst);
    let until = Instant::now() + grace;
    while sys::group_alive(group) {
        if Instant::now() >= until || SIGNALS.load(Ordering::SeqCst) > signals {
            sys::signal_group(group, true);
            return;
        }
        std::thread::sleep(POLL);
    }
}

/// The exit code, or 128 + the signal that ended the process.
pub fn code_of(status: &ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| sys::signal_of(status).map(|s| 128 + s))
        .unwrap_or(-1)
}

#[cfg(unix)]
mod sys {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::sync::atomic::Ordering;

    extern "C" fn on_signal(signal: libc::c_int) {
        super::LAST_SIGNAL.store(signal, Ordering::SeqCst);
        super::SIGNALS.fetch_add(1, Ordering::SeqCst);
    }

    /// The handlers SIGINT and SIGTERM had.
    pub struct Previous([libc::sighandler_t; 2]);

    pub fn catch_signals() -> Previous {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // A signal ignored on entry stays ignored (a job started in the background by a
        // non-interactive shell, `nohup`): catching it would turn a Ctrl-C meant for the
        // foreground into a stop of this process's work, and re-raising it later would do
        // nothing, so the process would end as if all went well.
        let catch = |signal: libc::c_int| {
            // SAFETY: the handler only stores to atomics, which is async-signal-safe; an
            // ignored signal gets its SIG_IGN back at once.
            unsafe {
                let before = libc::signal(signal, handler);
                if before == libc::SIG_IGN {
                    libc::signal(signal, libc::SIG_IGN);
                }
                before
            }
        };
        Previous([catch(libc::SIGINT), catch(libc::SIGTERM)])
    }

    pub fn restore(previous: Previous) {
        // SAFETY: puts back handlers `signal` returned.
        unsafe {
            libc::signal(libc::SIGINT, previous.0[0]);
            libc::signal(libc::SIGTERM, previous.0[1]);
        }
    }

    pub fn raise(signal: libc::c_int) {
        if signal != 0 {
            // SAFETY: raise(3) sends the signal to this thread; no memory is shared.
            unsafe { libc::raise(signal) };
        }
    }

    pub fn own_group(cmd: &mut std::process::Command) {
        join_group(cmd, 0);
    }

    /// Into the group `group` (0: a new one it leads).
    pub fn join_group(cmd: &mut std::process::Command, group: u32) {
        adopt_orphans();
        cmd.process_group(group as i32);
        die_with_parent(cmd);
    }

    /// The guard of [`super::spawn_guarded`], leading a new group, its stdin a
    /// pipe whose write end only ctxkeep holds (the standard library opens it
    /// close-on-exec, so no other child inherits it). At the end of the pipe,
    /// ctxkeep's death, it kills its group, itself included; a guard that
    /// starts after ctxkeep died finds the end at once. SIGTERM (how ctxkeep
    /// stops a group) ends it as any other member. None without `sh`.
    pub fn start_guard() -> Option<std::process::Child> {
        let script = "while read -r _; do :; done; kill -KILL 0";
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        // Reaped with the rest of the group once ctxkeep stops it ([`group_alive`]).
        cmd.spawn().ok()
    }

    /// The child is killed when ctxkeep dies, even of SIGKILL, which leaves no
    /// chance to stop it (Linux). The kernel sends it when the thread that
    /// spawned the child ends: every spawn here waits for its child on that
    /// thread.
    fn die_with_parent(cmd: &mut std::process::Command) {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            // The child's parent: this process.
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: between fork and exec the closure calls only prctl(2),
            // getppid(2) and raise(3), which are async-signal-safe, and
            // touches no memory but its copy of `parent`.
            unsafe {
                cmd.pre_exec(move || {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                    // ctxkeep died before the flag was set: no signal will come.
                    if libc::getppid() != parent {
                        libc::raise(libc::SIGKILL);
                    }
                    Ok(())
                });
            }
        }
    }

    /// What the child's group leaves behind when its leader exits is
    /// re-parented to this process rather than to init (Linux), so that
    /// [`group_alive`] can reap it: where init reaps nothing (a container),
    /// a dead member would otherwise count as alive until the grace ends.
    fn adopt_orphans() {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) sets a flag of this process; no memory is shared.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    }

    /// SIGTERM (or SIGKILL) to the process group; false when it has no
    /// process left.
    pub fn signal_group(group: u32, kill: bool) -> bool {
        let signal = if kill { libc::SIGKILL } else { libc::SIGTERM };
        // SAFETY: kill(2) on a process group; no memory is shared.
        unsafe { libc::kill(-(group as libc::pid_t), signal) == 0 }
    }

    /// Whether a process of the group is still running, once the dead
    /// ones this process adopted are reaped. Call only after the leader
    /// was reaped (its `Child` would lose its status otherwise).
    pub fn group_alive(group: u32) -> bool {
        let group = group as libc::pid_t;
        // SAFETY: waitpid(2) on members of the group with WNOHANG, without
        // a status buffer; kill(2) with signal 0 only checks the group exists.
        unsafe {
            while libc::waitpid(-group, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
            libc::kill(-group, 0) == 0
        }
    }

    /// Stops the child with its whole group.
    pub fn stop_child(_: &mut std::process::Child, group: u32, kill: bool) {
        signal_group(group, kill);
    }

    pub fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
        status.signal()
    }
}

/// Elsewhere there are no process groups to stop: the child itself is
/// killed, and Ctrl-C ends ctxkeep with it.
#[cfg(not(unix))]
mod sys {
    pub struct Previous;

    pub fn catch_signals() -> Previous {
        Previous
    }

    pub fn restore(_: Previous) {}

    pub fn raise(_: i32) {}

    pub fn own_group(_: &mut std::process::Command) {}

    pub fn join_group(_: &mut std::process::Command, _: u32) {}

    pub fn start_guard() -> Option<std::process::Child> {
        None
    }

    pub fn signal_group(_: u32, _kill: bool) -> bool {
        false
    }

    pub fn group_alive(_: u32) -> bool {
        false
    }

    pub fn stop_child(child: &mut std::process::Child, _: u32, _kill: bool) {
        let _ = child.kill();
    }

    pub fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// The end of the guard's pipe is what ctxkeep's death looks like to it.
    #[test]
    fn a_guarded_child_starts_in_its_guards_group_and_the_group_dies_with_the_pipe() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 600 & wait"]);
        let mut guarded = spawn_guarded(&mut cmd).unwrap();
        let guard = guarded._guard.as_mut().expect("sh is there to guard");
        // SAFETY: getpgid(2) reads a process's group id; no memory is shared.
        let child_group = unsafe { libc::getpgid(guarded.child.id() as libc::pid_t) };
        // Started into the guard's group: the guard was there first.
        assert_eq!(child_group as u32, guard.id());
        assert_eq!(guarded.group, guard.id());
        drop(guard.stdin.take());
        let t0 = Instant::now();
        let status = loop {
            if let Some(status) = guarded.child.try_wait().unwrap() {
                break status;
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "the child lives on");
            std::thread::sleep(POLL);
        };
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // The child's `sleep` and the guard go too.
        while sys::group_alive(guarded.group) {
            assert!(t0.elapsed() < Duration::from_secs(60), "the group lives on");
            std::thread::sleep(POLL);
        }
    }
}
