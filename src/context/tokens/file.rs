//! Counting a file or a stream as it is read (`stream.rs`), in bounded
//! memory.

use std::io::Read;
use std::path::Path;

use anyhow::Result;

use super::stream::{count_stream, Limits, Start};
use super::Encoding;
use crate::system::error::Error;

/// Counts a UTF-8 file. A missing path, a directory, a FIFO or a device is
/// `Error::NoInput` (never waited on); non-UTF-8 content is `Error::Data`
/// naming the first bad byte's offset; so is a stretch of more than
/// [`super::MAX_RUN`] bytes where the count cannot be split.
pub fn count_file(path: &Path, enc: Encoding) -> Result<usize> {
    count_file_with_progress(path, enc, &mut |_| {})
}

/// [`count_file`], telling `progress` of the bytes counted as it goes.
pub fn count_file_with_progress(
    path: &Path,
    enc: Encoding,
    progress: &mut dyn FnMut(u64),
) -> Result<usize> {
    let (mut file, _) = crate::system::fsutil::open_input(path)?;
    let counted = count_stream(
        &mut file,
        path,
        enc,
        Start::default(),
        Limits::default(),
        progress,
    )?;
    Ok(counted.tokens)
}

/// Counts everything a reader yields (stdin); `name` labels errors (`-`).
pub fn count_reader(mut reader: impl Read, name: &str, enc: Encoding) -> Result<usize> {
    let counted = count_stream(
        &mut reader,
        Path::new(name),
        enc,
        Start::default(),
        Limits::default(),
        &mut |_| {},
    )?;
    Ok(counted.tokens)
}

/// The size of a file to count, after checking it can be counted: a missing
/// file, a directory, a FIFO or a device is `NoInput` (stdin is `-`).
pub fn countable_len(path: &Path) -> Result<u64, Error> {
    Ok(crate::system::fsutil::check_input(path)?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_errors_map_to_exit_codes() {
        use crate::system::error::{exit, exit_code_of};
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

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_without_reading() {
        use crate::system::error::{exit, exit_code_of};
        for dev in ["/dev/zero", "/dev/null"] {
            let e = count_file(Path::new(dev), Encoding::O200kBase).unwrap_err();
            assert_eq!(exit_code_of(&e), exit::NO_INPUT, "{e}");
            assert!(e.to_string().contains("not a regular file"), "{e}");
            assert!(countable_len(Path::new(dev)).is_err());
        }
    }
}
