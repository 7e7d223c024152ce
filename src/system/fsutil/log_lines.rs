//! Logs of JSON lines: a record appended in one write, a torn line sealed first; only complete
//! lines read back.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::Path;

use crate::system::error::Error;

use super::input::is_symlink_loop;
use super::replace::write_error;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
}
