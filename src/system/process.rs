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

/// Keeps `child`'s whole group from outliving this process (Linux): a small shell joins the
/// group, and the kernel signals it when ctxkeep dies, even of SIGKILL, which leaves ctxkeep
/// no chance to stop the group itself; the shell then kills its group. The child itself
/// dies with ctxkeep anyway ([`own_group`]); this reaches what it started (an agent run
/// through `sh -c`, its tools). The shell ends with the group when ctxkeep stops it.
/// Best effort: without `sh`, or elsewhere than Linux, nothing is added.
pub fn guard_group(child: &Child) {
    sys::guard_group(child.id());
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
    loop {
        if let Some(status) = child.try_wait()? {
            // The child is gone; what it started in its group is not.
            stop_leftovers(child.id(), grace);
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
            let status = terminate(child, grace)?;
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
    let signals = SIGNALS.load(Ordering::SeqCst);
    let group = child.id();
    sys::stop_child(child, false);
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
        sys::stop_child(child, true);
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
        // SAFETY: the handler only stores to atomics, which is async-signal-safe.
        unsafe {
            Previous([
                libc::signal(libc::SIGINT, handler),
                libc::signal(libc::SIGTERM, handler),
            ])
        }
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
        adopt_orphans();
        cmd.process_group(0);
        die_with_parent(cmd);
    }

    pub fn guard_group(group: u32) {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            // SIGUSR1 when ctxkeep dies: then kill the group, itself included. SIGTERM (how
            // ctxkeep stops a group) ends it as any other member, without the trap.
            let script = "trap 'kill -KILL 0' USR1; while :; do sleep 3600 & wait $!; done";
            let mut cmd = std::process::Command::new("sh");
            cmd.args(["-c", script])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .process_group(group as i32);
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: between fork and exec the closure calls only prctl(2) and
            // getppid(2), which are async-signal-safe, on its copy of `parent`.
            unsafe {
                cmd.pre_exec(move || {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR1, 0, 0, 0);
                    if libc::getppid() != parent {
                        return Err(std::io::Error::other("ctxkeep is gone"));
                    }
                    Ok(())
                });
            }
            // Reaped with the rest of the group once ctxkeep stops it ([`group_alive`]).
            let _ = cmd.spawn();
        }
        #[cfg(not(target_os = "linux"))]
        let _ = group;
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
    pub fn stop_child(child: &mut std::process::Child, kill: bool) {
        signal_group(child.id(), kill);
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

    pub fn guard_group(_: u32) {}

    pub fn signal_group(_: u32, _kill: bool) -> bool {
        false
    }

    pub fn group_alive(_: u32) -> bool {
        false
    }

    pub fn stop_child(child: &mut std::process::Child, _kill: bool) {
        let _ = child.kill();
    }

    pub fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
        None
    }
}
