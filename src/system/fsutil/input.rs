//! Opening and reading input: the one way to open a file for reading (a FIFO never blocks, a
//! directory is named as such), text read within a limit, and the errors a user is told.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

use crate::system::error::Error;

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
pub(super) fn is_symlink_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
pub(super) fn is_symlink_loop(_: &io::Error) -> bool {
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
    // memchr's vectorized scan: a byte-at-a-time one was 3 % of a hook event (a 10 KB record).
    if let Some(at) = memchr::memchr(0, &bytes) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
}
