//! Reads of the repository shared within one command: its layout (top level, git folders,
//! index), the status and the config values it asks for are read from git once and handed to
//! every later caller in the same command. A checkpoint runs verify's checks on what it wrote,
//! a resume renders a prompt that compares the status with the checkpoint's, a hook's automatic
//! checkpoint looks at the status before it writes: each of them asked git again (ten processes
//! for one hand checkpoint).
//!
//! Sharing is opt-in and scoped ([`share_reads`]): a command that changes the repository and reads
//! it again (`relay` runs an agent between two reads, `init` sets the config) must not see a stale
//! answer, and the MCP server, which lives for many calls, opens a scope per call, not one for its
//! life. A scope belongs to its thread; a thread without one reads git every time, as before.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use super::{Asked, GitState, Layout, Unavailable};

/// The status as read: every uncommitted path (nothing excluded yet) and the top level.
#[derive(Debug, Clone)]
pub(super) struct Status {
    pub top: PathBuf,
    pub state: GitState,
}

#[derive(Default)]
struct Reads {
    /// A folder and the layout (top level, git folders, index) git gave for it.
    tops: Vec<(PathBuf, Result<Layout, Unavailable>)>,
    /// Per top level: its status.
    statuses: Vec<(PathBuf, Result<Status, Unavailable>)>,
    /// Per top level and key: a config value.
    config: Vec<(PathBuf, String, Option<String>)>,
    /// Per folder: a status asked ahead of its first reader, not yet answered.
    asked: Vec<(PathBuf, Asked)>,
}

thread_local! {
    /// The open scope's reads, and how many scopes are open (they nest: the inner one shares
    /// the outer's reads and leaves them when it closes).
    static SCOPE: RefCell<(usize, Reads)> = RefCell::new((0, Reads::default()));
}

/// While this lives, the thread's reads of a repository are shared (module docs).
#[must_use = "reads are shared only while the guard lives"]
pub struct SharedReads {
    /// A scope is its thread's: the guard must be dropped there.
    _thread: PhantomData<*const ()>,
}

/// Opens a scope of shared reads until the guard drops.
pub fn share_reads() -> SharedReads {
    SCOPE.with(|s| s.borrow_mut().0 += 1);
    SharedReads {
        _thread: PhantomData,
    }
}

impl Drop for SharedReads {
    fn drop(&mut self) {
        SCOPE.with(|s| {
            let mut s = s.borrow_mut();
            s.0 -= 1;
            if s.0 == 0 {
                s.1 = Reads::default();
            }
        });
    }
}

/// The reads of this thread's scope, answered ones only, for a thread the command starts to
/// share ([`CarriedReads::share`]): a checkpoint's checks run beside its write, on a thread of
/// their own, and must read the repository as the write did, not again.
pub struct CarriedReads(Reads);

/// What this thread's scope has read (`None` without a scope).
pub fn carry_reads() -> Option<CarriedReads> {
    with_reads(|r| {
        CarriedReads(Reads {
            tops: r.tops.clone(),
            statuses: r.statuses.clone(),
            config: r.config.clone(),
            asked: Vec::new(),
        })
    })
}

impl CarriedReads {
    /// Opens a scope on this thread holding the carried reads, until the guard drops.
    pub fn share(self) -> SharedReads {
        let guard = share_reads();
        SCOPE.with(|s| {
            let mut s = s.borrow_mut();
            if s.0 == 1 {
                s.1 = self.0;
            }
        });
        guard
    }
}

/// Forgets what was read (the scope stays open): for a write tried again because another
/// program changed files meanwhile, which may have been git itself.
pub fn forget_reads() {
    SCOPE.with(|s| s.borrow_mut().1 = Reads::default());
}

/// `f` on the scope's reads, or `None` without a scope.
fn with_reads<T>(f: impl FnOnce(&mut Reads) -> T) -> Option<T> {
    SCOPE.with(|s| {
        let mut s = s.borrow_mut();
        (s.0 > 0).then(|| f(&mut s.1))
    })
}

/// Whether a scope is open on this thread.
pub(super) fn in_scope() -> bool {
    SCOPE.with(|s| s.borrow().0 > 0)
}

/// Whether a status of `dir` was asked ahead and not yet answered.
pub(super) fn is_asked(dir: &Path) -> bool {
    with_reads(|r| r.asked.iter().any(|(d, _)| d == dir)).unwrap_or(false)
}

pub(super) fn keep_asked(dir: &Path, asked: Asked) {
    with_reads(|r| r.asked.push((dir.to_path_buf(), asked)));
}

/// The status of `dir` asked ahead, taken to be answered.
pub(super) fn take_asked(dir: &Path) -> Option<Asked> {
    with_reads(|r| {
        let at = r.asked.iter().position(|(d, _)| d == dir)?;
        Some(r.asked.swap_remove(at).1)
    })
    .flatten()
}

/// The layout already read for `dir`, if any.
pub(super) fn known_layout(dir: &Path) -> Option<Result<Layout, Unavailable>> {
    with_reads(|r| {
        r.tops
            .iter()
            .find(|(d, _)| d == dir)
            .map(|(_, t)| t.clone())
    })
    .flatten()
}

/// The top level already read for `dir`, if any.
pub(super) fn known_top(dir: &Path) -> Option<Result<PathBuf, Unavailable>> {
    known_layout(dir).map(|l| l.map(|l| l.top))
}

/// Keeps the layout read for `dir` (and for the top level itself, which callers that got
/// it from an earlier read pass next).
pub(super) fn keep_layout(dir: &Path, layout: &Result<Layout, Unavailable>) {
    with_reads(|r| {
        r.tops.push((dir.to_path_buf(), layout.clone()));
        if let Ok(l) = layout {
            if l.top != dir {
                r.tops.push((l.top.clone(), Ok(l.clone())));
            }
        }
    });
}

/// The status already read for the repository whose top level is `top`.
pub(super) fn known_status(top: &Path) -> Option<Result<Status, Unavailable>> {
    with_reads(|r| {
        r.statuses
            .iter()
            .find(|(t, _)| t == top)
            .map(|(_, s)| s.clone())
    })
    .flatten()
}

pub(super) fn keep_status(top: &Path, status: &Result<Status, Unavailable>) {
    with_reads(|r| r.statuses.push((top.to_path_buf(), status.clone())));
}

/// The HEAD a status read in this scope names for `dir`'s repository: `Some(None)` on an
/// unborn branch, `None` when no status was read.
pub(super) fn known_head(dir: &Path) -> Option<Option<String>> {
    let top = known_top(dir)?.ok()?;
    known_status(&top)?.ok().map(|s| s.state.head)
}

pub(super) fn known_config(top: &Path, key: &str) -> Option<Option<String>> {
    with_reads(|r| {
        r.config
            .iter()
            .find(|(t, k, _)| t == top && k == key)
            .map(|(_, _, v)| v.clone())
    })
    .flatten()
}

pub(super) fn keep_config(top: &Path, key: &str, value: &Option<String>) {
    with_reads(|r| {
        r.config.retain(|(t, k, _)| !(t == top && k == key));
        r.config
            .push((top.to_path_buf(), key.to_string(), value.clone()));
    });
}
