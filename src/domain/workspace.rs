//! Finds the state file and owns every path derived from it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::system::error::Error;
use crate::system::fsutil::{self, Lock};
use crate::system::output::Output;

pub const STATE_FILE: &str = "project-state.md";
pub const DATA_DIR: &str = ".ctxkeep";

/// Where the user pointed ctxkeep (`--state`, `--lock-timeout`), and where
/// notices such as "waiting for lock" go: plain values, so that this module
/// knows nothing of the command line.
#[derive(Debug, Clone)]
pub struct Locate {
    pub state: Option<PathBuf>,
    /// Seconds; must be finite and >= 0.
    pub lock_timeout: f64,
    pub out: Output,
}

#[derive(Debug, Clone)]
pub struct Workspace {
    /// The state file, as named by the user or found.
    pub state_path: PathBuf,
    /// The folder holding the state file (the project root for ctxkeep).
    pub root: PathBuf,
    /// `.ctxkeep/` beside the state file: local, never committed.
    pub data_dir: PathBuf,
    pub lock_timeout: Duration,
    /// Where notices of lower layers go (quiet in hooks and with `--quiet`).
    pub out: Output,
}

impl Workspace {
    /// A project whose state file would be `dir/project-state.md`, quiet, for unit tests.
    #[cfg(test)]
    pub(crate) fn in_dir(dir: &Path) -> Workspace {
        Workspace {
            state_path: dir.join("project-state.md"),
            root: dir.to_path_buf(),
            data_dir: dir.join(".ctxkeep"),
            lock_timeout: Duration::from_secs(5),
            out: Output::SILENT,
        }
    }

    /// The state file from `--state`/`CTXKEEP_STATE`, else the nearest
    /// `project-state.md` from the current directory upward. With `create`,
    /// a missing file resolves to `./project-state.md` (for `init`).
    pub fn resolve(global: &Locate, create: bool) -> Result<Workspace, Error> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::io(".", "cannot read the current directory", e))?;
        let state_path = match &global.state {
            // A folder is the project's, unless it is where the state file
            // should be: that is named as it is, a folder and not a file.
            Some(p) if p.is_dir() && !is_misplaced_state(p) => p.join(STATE_FILE),
            Some(p) => cwd.join(p),
            // Missing while git rewrites the work tree: found once git is done. Waited for
            // only where ctxkeep has run (its local `.ctxkeep/` is there, which no merge
            // touches), so a project without ctxkeep never waits.
            None => match crate::system::git::read_settled(
                &cwd,
                || find_upward(&cwd),
                |found| found.is_some() || !has_data_dir_upward(&cwd),
            ) {
                Some(p) => p,
                None if create => cwd.join(STATE_FILE),
                None => {
                    return Err(Error::NotInitialized {
                        path: cwd.join(STATE_FILE),
                        why: if crate::system::git::snapshot_refs_kept(&cwd) {
                            // `git clean` before the file's first commit: the snapshots hold it.
                            "not initialized (no project-state.md here or above), but ctxkeep's snapshots are kept here: `ctxkeep restore` brings the file back with the work it held"
                        } else {
                            "not initialized (no project-state.md here or above)"
                        },
                    });
                }
            },
        };
        let root = state_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| cwd.clone());
        let timeout = if global.lock_timeout.is_finite() && global.lock_timeout >= 0.0 {
            Duration::from_secs_f64(global.lock_timeout)
        } else {
            return Err(Error::Usage(
                "--lock-timeout must be a number of seconds >= 0".into(),
            ));
        };
        let ws = Workspace {
            data_dir: root.join(DATA_DIR),
            state_path,
            root,
            lock_timeout: timeout,
            out: global.out,
        };
        ws.refuse_links_out()?;
        Ok(ws)
    }

    /// Refuses a project whose own files lead out of it: a cloned repository may commit
    /// `project-state.md`, `.ctxkeep/` or a file in it as a symlink to the user's files
    /// (`~/.profile`, `~/.bashrc`), and every write of ctxkeep's would land there. A symlink
    /// that stays inside the project is followed as before. The state file is judged only when
    /// it leads to a regular file or to nothing (a FIFO or device is refused when it is read).
    /// A few `lstat`s when nothing is a link: cheap enough for every hook.
    fn refuse_links_out(&self) -> Result<(), Error> {
        let is_link =
            |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
        if is_link(&self.state_path)
            && std::fs::metadata(&self.state_path).map_or(true, |m| m.is_file())
        {
            fsutil::confined(&self.root, &self.state_path)?;
        }
        if is_link(&self.data_dir) {
            fsutil::confined(&self.root, &self.data_dir)?;
        }
        let Ok(entries) = std::fs::read_dir(&self.data_dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                fsutil::confined(&self.root, &entry.path())?;
            }
        }
        Ok(())
    }

    /// Takes the project lock, creating `.ctxkeep/` when needed, and removes
    /// the temp files a killed writer left (see `stale_temp_files`).
    pub fn lock(&self) -> Result<Lock, Error> {
        let lock = self.lock_only()?;
        self.sweep();
        Ok(lock)
    }

    /// [`Self::lock`] for a hook event, which runs on every agent turn: the folders are
    /// swept only when the last sweep is [`SWEEP_EVERY`] old.
    pub fn lock_for_event(&self) -> Result<Lock, Error> {
        let lock = self.lock_only()?;
        if self.sweep_due() {
            self.sweep();
        }
        Ok(lock)
    }

    fn sweep(&self) {
        for path in self.stale_temp_files() {
            let _ = std::fs::remove_file(path);
        }
        self.mark_swept();
    }

    /// Whether the folders are to be swept: a temp file is stale only after an hour
    /// (`fsutil::STALE_TEMP_AGE`), so sweeping on every lock (every hook event takes it)
    /// found nothing a sweep every few minutes does not; one `stat` of `.ctxkeep/swept`
    /// instead of listing four folders.
    fn sweep_due(&self) -> bool {
        std::fs::metadata(self.swept_path())
            .and_then(|m| m.modified())
            .map_or(true, |at| {
                at.elapsed().map_or(true, |age| age >= SWEEP_EVERY)
            })
    }

    fn mark_swept(&self) {
        let _ = std::fs::File::create(self.swept_path())
            .and_then(|f| f.set_modified(std::time::SystemTime::now()));
    }

    /// Its time of change is when the folders were last swept of stale temp files.
    fn swept_path(&self) -> PathBuf {
        self.data_dir.join("swept")
    }

    /// Temp files older than an hour where ctxkeep writes: anything in
    /// `.ctxkeep/` and its folders, and beside the state file (the user's
    /// folder) only those named after ctxkeep's own files.
    pub fn stale_temp_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let everything = vec![".".to_string()];
        for dir in [
            self.data_dir.clone(),
            self.checkpoints_dir(),
            self.sessions_dir(),
        ] {
            out.extend(fsutil::stale_temp_files(&dir, &everything));
        }
        let target = fsutil::resolve_target(&self.state_path);
        if let Some(dir) = target.parent() {
            let mut prefixes = fsutil::temp_prefixes_for(&target);
            prefixes.push(".gitignore.".into());
            out.extend(fsutil::stale_temp_files(dir, &prefixes));
        }
        out
    }

    pub fn checkpoints_dir(&self) -> PathBuf {
        self.data_dir.join("checkpoints")
    }

    pub fn events_path(&self) -> PathBuf {
        self.data_dir.join("events.jsonl")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.data_dir.join("sessions")
    }

    /// Where each agent was seen compacting on its own, per model.
    pub fn compactions_path(&self) -> PathBuf {
        self.data_dir.join("compactions.json")
    }

    /// The session chain: one record per session opened from a checkpoint
    /// (not the live budgets in `sessions/`).
    pub fn chain_path(&self) -> PathBuf {
        self.data_dir.join("chain.jsonl")
    }

    /// Takes the project lock without sweeping temp files first, for `gc`,
    /// which sweeps them itself and reports what it removed.
    pub fn lock_only(&self) -> Result<Lock, Error> {
        fsutil::ensure_dir(&self.data_dir)?;
        Lock::acquire(&self.data_dir.join("lock"), self.lock_timeout, &self.out)
    }

    /// The state file's path as messages show it.
    pub fn display_state(&self) -> String {
        self.state_path.display().to_string()
    }
}

/// How often a hook event's lock sweeps stale temp files (see [`Workspace::lock_for_event`]).
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Whether `path` is a folder named `project-state.md` with no state file
/// inside: the state file's own path, taken by a folder.
fn is_misplaced_state(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == STATE_FILE)
        && std::fs::symlink_metadata(path.join(STATE_FILE)).is_err()
}

/// Whether a `.ctxkeep/` folder is in `start` or above it (within the same bounds as
/// [`find_upward`]).
fn has_data_dir_upward(start: &Path) -> bool {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if d.join(DATA_DIR).is_dir() {
            return true;
        }
        if d.join(".git").is_file() {
            return false;
        }
        dir = d.parent();
    }
    false
}

/// The nearest `project-state.md` from `start` upward, not past the top of
/// a linked git worktree or a submodule (a folder whose `.git` is a file):
/// a worktree inside another checkout (as agents make them, e.g. under
/// `.claude/worktrees/`) has its own file on its own branch, and must never
/// write to the outer checkout's.
pub fn find_upward(start: &Path) -> Option<PathBuf> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        let candidate = d.join(STATE_FILE);
        if std::fs::symlink_metadata(&candidate).is_ok() {
            return Some(candidate);
        }
        if d.join(".git").is_file() {
            return None;
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    /// A temp file named as a killed writer leaves it, two hours old.
    fn stale_file(ws: &Workspace, name: &str) -> PathBuf {
        let path = ws.sessions_dir().join(name);
        std::fs::create_dir_all(ws.sessions_dir()).unwrap();
        let f = std::fs::File::create(&path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(7200))
            .unwrap();
        path
    }

    #[test]
    fn a_hook_events_lock_sweeps_only_when_a_sweep_is_due_and_a_hand_lock_always() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let first = stale_file(&ws, ".s1.json.a1.tmp");
        drop(ws.lock_for_event().unwrap());
        assert!(!first.exists(), "no sweep yet: the first event sweeps");

        let second = stale_file(&ws, ".s1.json.b2.tmp");
        drop(ws.lock_for_event().unwrap());
        assert!(second.exists(), "swept a moment ago: not listed again");

        let stamp = std::fs::File::options()
            .write(true)
            .open(ws.swept_path())
            .unwrap();
        stamp
            .set_modified(SystemTime::now() - SWEEP_EVERY - Duration::from_secs(1))
            .unwrap();
        drop(ws.lock_for_event().unwrap());
        assert!(!second.exists(), "the last sweep is old enough: swept");

        let third = stale_file(&ws, ".s1.json.c3.tmp");
        drop(ws.lock().unwrap());
        assert!(!third.exists(), "a command's lock sweeps every time");
    }
}
