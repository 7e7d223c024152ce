//! Writing a file whole: atomic replacement (durable for the state file, cheap for a cache),
//! creating a file only where none is, and the folders they go in.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use crate::system::error::Error;

use super::confinement::resolve_target;

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
pub(super) const NEW_FILE_TEMP_PREFIX: &str = ".ctxkeep-new.";

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

pub(super) fn write_error(path: &Path, e: io::Error) -> Error {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};
    use std::io::Read;

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
}
