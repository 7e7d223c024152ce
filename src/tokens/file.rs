//! Reading a file or a stream and counting it.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};

use super::{count, Encoding};
use crate::error::Error;
use crate::fsutil::text_from_bytes;

pub(super) fn open_file(path: &Path) -> Result<File> {
    if path.is_dir() {
        return Err(Error::no_input(path, "is a directory, not a file").into());
    }
    File::open(path).map_err(|e| {
        match e.kind() {
            std::io::ErrorKind::NotFound => Error::no_input(path, "no such file"),
            _ => Error::io(path, "cannot read", e),
        }
        .into()
    })
}

fn read_file(path: &Path) -> Result<String> {
    let mut bytes = Vec::new();
    open_file(path)?
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    Ok(text_from_bytes(bytes, path, 0)?)
}

/// Counts a UTF-8 file. A missing path or a directory is `Error::NoInput`;
/// non-UTF-8 content is `Error::Data` naming the first bad byte's offset.
pub fn count_file(path: &Path, enc: Encoding) -> Result<usize> {
    let text = read_file(path)?;
    count(&text, enc).with_context(|| format!("{}: counting tokens", path.display()))
}

/// Counts everything a reader yields (stdin); `name` labels errors (`-`).
pub fn count_reader(mut reader: impl Read, name: &str, enc: Encoding) -> Result<usize> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(name, "cannot read", e))?;
    let text = text_from_bytes(bytes, Path::new(name), 0)?;
    count(&text, enc)
}

/// The size of a file to count, after checking it can be counted: a missing
/// file or a directory is `NoInput`; pipes (`<(cmd)`) have no size and count
/// without progress (0).
pub fn countable_len(path: &Path) -> Result<u64, Error> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::no_input(path, "no such file"),
        _ => Error::io(path, "cannot read", e),
    })?;
    if meta.is_dir() {
        return Err(Error::no_input(path, "is a directory"));
    }
    Ok(if meta.is_file() { meta.len() } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_errors_map_to_exit_codes() {
        use crate::error::{exit, exit_code_of};
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.txt");
        let e = count_file(&missing, Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::NO_INPUT);
        let e = count_file(dir.path(), Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::NO_INPUT);
        let bad = dir.path().join("bad.txt");
        std::fs::write(&bad, b"abc\xffdef").unwrap();
        let e = count_file(&bad, Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::DATA);
        assert!(e.to_string().contains("offset 3"), "{e}");
        let good = dir.path().join("good.txt");
        std::fs::write(&good, "hello world").unwrap();
        assert_eq!(count_file(&good, Encoding::O200kBase).unwrap(), 2);
        assert_eq!(
            count_reader(&b"hello world"[..], "-", Encoding::O200kBase).unwrap(),
            2
        );
        let e = count_reader(&b"\xc3"[..], "-", Encoding::O200kBase).unwrap_err();
        assert_eq!(exit_code_of(&e), exit::DATA);
    }
}
