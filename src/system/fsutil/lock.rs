//! The project's lock: one exclusive advisory lock per command or hook event, waited for in
//! the kernel with a timeout, naming its holder to a waiter that gives up.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::system::error::Error;
use crate::system::output::Output;

use super::replace::write_error;

/// An exclusive advisory lock on `.ctxkeep/lock`, a file that never moves.
/// The kernel releases it when the holder dies, so a crash never leaves it stuck.
pub struct Lock {
    file: File,
}

impl Lock {
    pub fn acquire(path: &Path, timeout: Duration, out: &Output) -> Result<Lock, Error> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| write_error(path, e))?;
        match file.try_lock() {
            Ok(()) => return Ok(Lock::held(file)),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => return Lock::unsupported_or(path, file, e, out),
        }
        // Contended: wait in the kernel, so the lock passes to a waiter the
        // moment it is freed. (Polling with backoff left it idle between
        // holders and let an unlucky hook starve past the timeout when 64
        // hooks ran at once.) The blocking call runs on a thread, on a second
        // handle of the same open file, so that the wait can time out.
        let waiter = file
            .try_clone()
            .map_err(|e| Error::io(path, "cannot lock", e))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let got = waiter.lock();
            // Nobody waits any more (timed out): let the lock go at once.
            if tx.send(got).is_err() {
                let _ = waiter.unlock();
            }
        });
        let start = Instant::now();
        let mut got = rx.recv_timeout(timeout.min(Duration::from_secs(1)));
        if matches!(got, Err(mpsc::RecvTimeoutError::Timeout)) && start.elapsed() < timeout {
            out.info(&format!("ctxkeep: waiting for lock {}", path.display()));
            got = rx.recv_timeout(timeout.saturating_sub(start.elapsed()));
        }
        match got {
            Ok(Ok(())) => Ok(Lock::held(file)),
            Ok(Err(e)) => Lock::unsupported_or(path, file, e, out),
            Err(_) => {
                let mut holder = String::new();
                let _ = File::open(path).and_then(|mut f| f.read_to_string(&mut holder));
                Err(Error::LockTimeout {
                    path: path.to_path_buf(),
                    holder: describe_holder(holder.trim()),
                    waited_ms: start.elapsed().as_millis() as u64,
                })
            }
        }
    }

    fn held(file: File) -> Lock {
        let mut lock = Lock { file };
        lock.record_holder();
        lock
    }

    /// Locking unsupported (e.g. some network file systems): carry on
    /// unlocked; the atomic write's change check still guards prose.
    fn unsupported_or(path: &Path, file: File, e: io::Error, out: &Output) -> Result<Lock, Error> {
        if matches!(e.kind(), io::ErrorKind::Unsupported) {
            out.warn(&format!(
                "{}: locking unsupported here; continuing without a lock",
                path.display()
            ));
            return Ok(Lock { file });
        }
        Err(Error::io(path, "cannot lock", e))
    }

    /// Writes who holds the lock, so a timed-out waiter can name it.
    fn record_holder(&mut self) {
        // The program's name and the subcommand: enough to recognise it,
        // and no flag values (they may hold secrets). Only subcommand-shaped
        // words (lower-case letters and `-`), which no redaction rule can
        // match: the first bare argument may be a global flag's value.
        let word =
            |a: &String| !a.is_empty() && a.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        let mut args = std::env::args();
        let program = args
            .next()
            .map(|a| {
                Path::new(&a)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or(a)
            })
            .filter(word)
            .unwrap_or_else(|| "ctxkeep".into());
        let sub = args
            .find(|a| !a.starts_with('-'))
            .filter(word)
            .unwrap_or_default();
        let info = format!(
            "pid {} ({} {}) since {}",
            std::process::id(),
            program,
            sub,
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        );
        let _ = self.file.set_len(0);
        let _ = (&self.file).write_all(info.as_bytes());
    }
}

/// "pid 12 (ctxkeep checkpoint) since T" becomes "pid 12 (ctxkeep
/// checkpoint), taken 3.2 s ago": the age tells a stuck holder from a busy one.
fn describe_holder(recorded: &str) -> String {
    if recorded.is_empty() {
        return "another process".into();
    }
    let Some((who, since)) = recorded.rsplit_once(" since ") else {
        return recorded.to_string();
    };
    match chrono::DateTime::parse_from_rfc3339(since) {
        Ok(t) => {
            let age = chrono::Utc::now().signed_duration_since(t);
            let secs = age.num_milliseconds().max(0) as f64 / 1000.0;
            format!("{who}, taken {secs:.1} s ago")
        }
        Err(_) => recorded.to_string(),
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::system::output::Output;

    const QUIET: Output = Output::SILENT;

    #[test]
    fn lock_times_out_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let _held = Lock::acquire(&path, Duration::from_secs(1), &QUIET).unwrap();
        // A second handle in the same process contends like another process would.
        let err = Lock::acquire(&path, Duration::from_millis(30), &QUIET)
            .err()
            .unwrap();
        assert_eq!(err.exit_code(), 75);
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
    }
}
