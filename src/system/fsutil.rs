//! File-system primitives: bounded reads, atomic replacement, the lock, and
//! appending JSON lines. Every error names the file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::system::error::Error;
use crate::system::output::Output;

/// Opens an input file the one way every reader does: the metadata is
/// checked before the open, so a FIFO never blocks and a directory is named
/// as such; a missing file (or a symlink to one) is `NoInput`, and so is a
/// symlink loop. Returns the file and its length when opened (a writer may
/// be appending).
pub fn open_input(path: &Path) -> Result<(File, u64), Error> {
    check_input(path)?;
    let file = open_no_wait(path).map_err(|e| input_error(path, e))?;
    // Checked again on what was opened: the path may have been replaced by
    // a FIFO or a device between the check and the open.
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot read", e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok((file, meta.len()))
}

/// What `open_input` checks before opening: the path names a regular file
/// (through any symlinks). Returns its metadata.
pub fn check_input(path: &Path) -> Result<fs::Metadata, Error> {
    let meta = fs::metadata(path).map_err(|e| input_error(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok(meta)
}

fn not_regular(path: &Path, meta: &fs::Metadata) -> Error {
    let what = if meta.is_dir() {
        "is a directory, not a regular file"
    } else {
        "not a regular file (a FIFO, socket or device); not read"
    };
    Error::no_input(path, what)
}

/// An error looking up or opening an input, as the user is told it.
pub fn input_error(path: &Path, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_path_buf(),
            dangling_to: fs::read_link(path).ok(),
        },
        io::ErrorKind::PermissionDenied => Error::io(path, "need read access", e),
        _ if is_symlink_loop(&e) => Error::no_input(
            path,
            "a symlink loop (too many levels of symbolic links); it cannot be resolved",
        ),
        _ => Error::io(path, "cannot read", e),
    }
}

#[cfg(unix)]
fn is_symlink_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
fn is_symlink_loop(_: &io::Error) -> bool {
    false
}

/// Opens for reading without ever waiting: a FIFO with no writer would
/// block a plain open. Regular files read as usual.
#[cfg(unix)]
fn open_no_wait(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_wait(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Reads a text file that ctxkeep owns or parses, refusing what it must not
/// touch: non-regular files (without blocking on a FIFO), files over `limit`,
/// binary content and invalid UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<String, Error> {
    let (file, len) = open_input(path)?;
    let meta_len = len;
    if meta_len > limit {
        return Err(too_large(path, Some(meta_len), limit));
    }
    let mut bytes = Vec::with_capacity(meta_len as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| match e.kind() {
            io::ErrorKind::PermissionDenied => Error::io(path, "need read access", e),
            _ => Error::io(path, "cannot read", e),
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, None, limit));
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(Error::data(
            path,
            format!("not a text file (NUL byte at offset {at})"),
        ));
    }
    text_from_bytes(bytes, path, 0)
}

fn too_large(path: &Path, size: Option<u64>, limit: u64) -> Error {
    Error::TooLarge {
        path: path.to_path_buf(),
        what: "",
        size,
        limit,
        hint: "".into(),
    }
}

/// `bytes`, which start at byte `offset` of `path`, as text; the error names
/// the offending byte's offset in the file. Never converted lossily.
pub fn text_from_bytes(bytes: Vec<u8>, path: &Path, offset: u64) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        let at = offset + e.utf8_error().valid_up_to() as u64;
        Error::data(path, format!("not valid UTF-8 (at byte offset {at})"))
    })
}

/// ctxkeep's folder in the user's state directory, for what belongs to this machine rather than
/// to a project: `$XDG_STATE_HOME/ctxkeep` (`~/.local/state/ctxkeep` without it). None without
/// either variable.
pub fn user_state_dir() -> Option<PathBuf> {
    let state = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?)
            .join(".local")
            .join("state"),
    };
    Some(state.join("ctxkeep"))
}

/// Where `path` really is when that is outside `root`: a symlink (at the path or at a folder
/// on the way) or a `..` taking it out of the project. None when it stays inside, or when the
/// root itself cannot be resolved. A path that does not exist yet is judged by where it would
/// be created (a dangling symlink by its target): a cloned repository may hold symlinks made to
/// lead ctxkeep's reads and writes into the user's files (`.ctxkeep/events.jsonl` to
/// `~/.bashrc`, a template to `~/.netrc`), and what ctxkeep reads or writes as its own must
/// never follow them out.
pub fn leads_out(root: &Path, path: &Path) -> Option<PathBuf> {
    let root = fs::canonicalize(root).ok()?;
    let real = real_location(path, 0)?;
    (!real.starts_with(&root)).then_some(real)
}

/// `path` with every symlink and `..` resolved, also where its last parts do not exist yet.
fn real_location(path: &Path, depth: u8) -> Option<PathBuf> {
    if let Ok(real) = fs::canonicalize(path) {
        return Some(real);
    }
    if depth > 40 {
        return None;
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let parent = real_location(parent, depth + 1)?;
    match fs::read_link(path) {
        Ok(to) => real_location(&parent.join(to), depth + 1),
        Err(_) => Some(parent.join(name)),
    }
}

/// Refuses `path` (exit 66, naming it and where it leads) when it leads out of `root`: see
/// [`leads_out`]. Cheap when nothing on the way is a symlink.
pub fn confined(root: &Path, path: &Path) -> Result<(), Error> {
    match leads_out(root, path) {
        Some(to) => Err(Error::no_input(
            path,
            format!(
                "leads out of the project (to {}) through a symlink or `..`; ctxkeep neither reads nor writes its own files there (remove the link)",
                to.display()
            ),
        )),
        None => Ok(()),
    }
}

/// Resolves a symlink so that writes replace its target and keep the link.
pub fn resolve_target(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Replaces `path` atomically: a temp file in the same directory, fsync, rename,
/// fsync the directory. Readers see the old or the new file, never a mix.
/// `expect_unchanged`: the content read at the start; if the file no longer
/// holds it (an editor saved meanwhile), nothing is written (exit 75).
pub fn atomic_write(
    path: &Path,
    content: &[u8],
    expect_unchanged: Option<&[u8]>,
) -> Result<(), Error> {
    replace(path, content, expect_unchanged, true)
}

/// Replaces a cache file that can be rebuilt (a session's live budget):
/// atomic like `atomic_write`, so no reader or crash ever sees half a file,
/// but without the two fsyncs, which cost 10-20 ms on every agent turn on an
/// ordinary disk. After a power cut the file may be the old version or, on
/// some file systems, empty; readers treat an empty cache as absent. On Linux
/// an existing file is swapped with the new one ([`exchange`]), then deleted.
pub fn replace_cache(path: &Path, content: &[u8]) -> Result<(), Error> {
    replace(path, content, None, false)
}

/// Swaps the files at `new` and `old` in one step (`renameat2` with `RENAME_EXCHANGE`): how a
/// cache file is replaced where it exists. A rename over an existing file makes ext4 write
/// the new file's data out first (its `auto_da_alloc`), which took 0.3 to 2 ms per file on a
/// busy disk, on every agent turn; a cache needs no such care (see [`replace_cache`]). False
/// where it cannot be done (no file at `old`, a file system or kernel without it): the caller
/// renames.
#[cfg(target_os = "linux")]
fn exchange(new: &Path, old: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).ok();
    let (Some(new), Some(old)) = (c(new), c(old)) else {
        return false;
    };
    // SAFETY: two NUL-terminated paths that outlive the call, which only reads them.
    let done = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            new.as_ptr(),
            libc::AT_FDCWD,
            old.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    done == 0
}

#[cfg(not(target_os = "linux"))]
fn exchange(_new: &Path, _old: &Path) -> bool {
    false
}

fn replace(
    path: &Path,
    content: &[u8],
    expect_unchanged: Option<&[u8]>,
    durable: bool,
) -> Result<(), Error> {
    // A durable write (the state file) replaces a symlink's target and keeps the link (the
    // project refuses links that lead out of it); a cache is ctxkeep's own and is never written
    // through a link: the rename replaces the link itself.
    let target = if durable {
        resolve_target(path)
    } else {
        path.to_path_buf()
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "state".into());
    let mut tmp = new_temp(&target, dir, &format!(".{file_name}."))?;
    if let Ok(meta) = fs::metadata(&target) {
        // Keep the user's mode exactly (the umask does not apply here).
        let _ = fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.write_all(content)
        .and_then(|_| {
            if durable {
                tmp.as_file().sync_all()
            } else {
                Ok(())
            }
        })
        .map_err(|e| write_error(&target, e))?;
    test_pause("CTXKEEP_TEST_PAUSE_BEFORE_RENAME");
    if let Some(expected) = expect_unchanged {
        let now = fs::read(&target).unwrap_or_default();
        if now != expected {
            return Err(Error::Conflict {
                path: target.clone(),
                msg: "changed by another program during the write; nothing was written, run the command again".into(),
            });
        }
    }
    if !durable {
        let tmp = tmp.into_temp_path();
        if exchange(&tmp, &target) {
            // `tmp` names the old version now: dropping it deletes it.
            return Ok(());
        }
        return tmp
            .persist(&target)
            .map_err(|e| write_error(&target, e.error));
    }
    tmp.persist(&target)
        .map_err(|e| write_error(&target, e.error))?;
    if durable {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Creates `path` with `content` only if it does not exist yet (atomic, no clobber).
/// Returns false when it already existed.
pub fn create_new(path: &Path, content: &[u8]) -> Result<bool, Error> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = new_temp(path, dir, NEW_FILE_TEMP_PREFIX)?;
    tmp.write_all(content)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| write_error(path, e))?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(true)
        }
        Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(write_error(path, e.error)),
    }
}

/// The prefix of the temp files `create_new` makes.
const NEW_FILE_TEMP_PREFIX: &str = ".ctxkeep-new.";

/// A temp file beside `target`, created 0666 minus the umask like any new
/// file (tempfile's default 0600 would surprise a user on a shared checkout).
fn new_temp(target: &Path, dir: &Path, prefix: &str) -> Result<tempfile::NamedTempFile, Error> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir).map_err(|e| match e.kind() {
        io::ErrorKind::PermissionDenied => {
            Error::io(target, format!("need write access to {}", dir.display()), e)
        }
        _ => write_error(target, e),
    })
}

fn write_error(path: &Path, e: io::Error) -> Error {
    let what = match e.kind() {
        io::ErrorKind::PermissionDenied => "need write access",
        io::ErrorKind::StorageFull => "disk full",
        io::ErrorKind::ReadOnlyFilesystem => "read-only file system",
        _ => "cannot write",
    };
    Error::io(path, what, e)
}

/// Creates a directory (and parents), mapping failures to typed errors.
pub fn ensure_dir(dir: &Path) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(|e| match (e.kind(), dir.parent()) {
        (io::ErrorKind::PermissionDenied, Some(parent)) => Error::io(
            dir,
            format!(
                "cannot create it; need write access to {}",
                parent.display()
            ),
            e,
        ),
        _ => write_error(dir, e),
    })
}

/// A test-only pause (milliseconds from an environment variable) that lets the
/// crash tests kill a process mid-write. Unset in normal use.
pub fn test_pause(var: &str) {
    if let Some(ms) = std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

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

/// Appends one line (a JSON record) to a log in one write call. If a torn
/// line was left by a crash or a full disk, it is sealed with a newline first
/// so the new record starts on its own line. Call under the lock.
pub fn append_line(path: &Path, line: &str) -> Result<(), Error> {
    let mut options = OpenOptions::new();
    options.create(true).append(true).read(true);
    // A log is ctxkeep's own: never appended through a symlink (a cloned
    // repository's `.ctxkeep/events.jsonl` may lead to a `.bashrc`).
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = options.open(path).map_err(|e| {
        if is_symlink_loop(&e) {
            Error::no_input(
                path,
                "a symlink; ctxkeep appends to its own logs only, never through a link (remove it)",
            )
        } else {
            write_error(path, e)
        }
    })?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = String::with_capacity(line.len() + 2);
    if len > 0 {
        use std::io::{Seek, SeekFrom};
        let mut last = [0u8; 1];
        if file
            .seek(SeekFrom::Start(len - 1))
            .and_then(|_| file.read_exact(&mut last))
            .is_ok()
            && last[0] != b'\n'
        {
            buf.push('\n');
        }
    }
    buf.push_str(line);
    buf.push('\n');
    file.write_all(buf.as_bytes())
        .map_err(|e| write_error(path, e))
}

/// The complete lines of a log (JSONL), empty ones left out. A last line
/// without its newline is still being written, or was torn: not a record.
pub fn complete_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(i) => &bytes[..=i],
        None => &bytes[..0],
    };
    complete.split(|&b| b == b'\n').filter(|l| !l.is_empty())
}

/// A temp file older than this was left by a killed process: no write takes
/// that long.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// The temp-file prefixes ctxkeep uses beside a file it writes, so a sweep
/// of a user's folder touches only its own leftovers.
pub fn temp_prefixes_for(file: &Path) -> Vec<String> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "state".into());
    vec![format!(".{name}."), NEW_FILE_TEMP_PREFIX.to_string()]
}

/// Temp files in `dir` older than STALE_TEMP_AGE whose names start with one
/// of `prefixes` and end in `.tmp`: what a killed process left behind.
/// Younger ones may belong to a write in progress.
pub fn stale_temp_files(dir: &Path, prefixes: &[String]) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            prefixes.iter().any(|p| name.starts_with(p.as_str()))
                && name.ends_with(".tmp")
                && entry.file_type().is_ok_and(|t| t.is_file())
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_TEMP_AGE)
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUIET: Output = Output::SILENT;

    #[test]
    fn a_cache_is_replaced_whole_with_no_temp_file_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        replace_cache(&path, b"first").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        }
        // Held open, the old version stays whole for its reader.
        let mut reader = File::open(&path).unwrap();
        replace_cache(&path, b"second, longer").unwrap();
        replace_cache(&path, b"third").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"third");
        let mut old = String::new();
        reader.read_to_string(&mut old).unwrap();
        assert_eq!(old, "first");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "the file's mode is kept");
        }
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["s.json"]);
    }

    #[test]
    fn read_text_refuses_binary_and_bad_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        fs::write(&bin, b"abc\0def").unwrap();
        let err = read_text(&bin, 1000).unwrap_err().to_string();
        assert!(err.contains("not a text file"), "{err}");
        let bad = dir.path().join("bad");
        fs::write(&bad, b"ok\xff").unwrap();
        let err = read_text(&bad, 1000).unwrap_err().to_string();
        assert!(err.contains("byte offset 2"), "{err}");
        let big = dir.path().join("big");
        fs::write(&big, vec![b'a'; 20]).unwrap();
        assert_eq!(read_text(&big, 10).unwrap_err().exit_code(), 65);
        assert_eq!(read_text(dir.path(), 10).unwrap_err().exit_code(), 66);
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_mode_and_symlink() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.md");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        atomic_write(&link, b"new", Some(b"old")).unwrap();
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn atomic_write_refuses_when_file_changed_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.md");
        fs::write(&f, "edited by a person").unwrap();
        let err = atomic_write(&f, b"ours", Some(b"what we read")).unwrap_err();
        assert_eq!(err.exit_code(), 75);
        assert_eq!(fs::read_to_string(&f).unwrap(), "edited by a person");
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "temp file left behind");
    }

    #[cfg(unix)]
    #[test]
    fn a_path_leading_out_of_the_root_is_found_through_links_and_dotdot() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("docs")).unwrap();
        symlink(outside.path(), root.join("out")).unwrap();
        symlink(outside.path().join("not-yet"), root.join("dangling")).unwrap();
        symlink("docs", root.join("in")).unwrap();
        for inside in ["docs/a.md", "in/a.md", "new/b.md", "docs/../c.md"] {
            assert_eq!(leads_out(root, &root.join(inside)), None, "{inside}");
        }
        for out in [
            "out",
            "out/events.jsonl",
            "dangling",
            "../x",
            "docs/../../x",
        ] {
            assert!(leads_out(root, &root.join(out)).is_some(), "{out}");
        }
        let err = confined(root, &root.join("out/events.jsonl")).unwrap_err();
        assert_eq!(err.exit_code(), 66);
        // Never through a link: a log linked elsewhere is refused, its target untouched.
        fs::write(outside.path().join("bashrc"), "mine\n").unwrap();
        symlink(outside.path().join("bashrc"), root.join("events.jsonl")).unwrap();
        assert!(append_line(&root.join("events.jsonl"), "{}").is_err());
        assert_eq!(
            fs::read_to_string(outside.path().join("bashrc")).unwrap(),
            "mine\n"
        );
    }

    #[test]
    fn append_line_seals_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("events.jsonl");
        fs::write(&f, "{\"a\":1}\n{\"torn\"").unwrap();
        append_line(&f, "{\"b\":2}").unwrap();
        assert_eq!(
            fs::read_to_string(&f).unwrap(),
            "{\"a\":1}\n{\"torn\"\n{\"b\":2}\n"
        );
    }

    #[test]
    fn sweep_removes_only_old_temp_files_with_our_names() {
        let dir = tempfile::tempdir().unwrap();
        let old_time = std::time::SystemTime::now() - Duration::from_secs(7200);
        let names = [
            ".project-state.md.a1.tmp",
            ".project-state.md.fresh.tmp",
            ".ctxkeep-new.b2.tmp",
            ".users-own.tmp",
        ];
        for n in names {
            fs::write(dir.path().join(n), "x").unwrap();
            if n != ".project-state.md.fresh.tmp" {
                let f = File::options()
                    .write(true)
                    .open(dir.path().join(n))
                    .unwrap();
                f.set_modified(old_time).unwrap();
            }
        }
        for stale in stale_temp_files(
            dir.path(),
            &temp_prefixes_for(Path::new("project-state.md")),
        ) {
            fs::remove_file(stale).unwrap();
        }
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".project-state.md.fresh.tmp", ".users-own.tmp"]);
    }

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
