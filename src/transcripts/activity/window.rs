//! Reading the end of a transcript: the windowed read [`observe`] runs a [`Reader`] over, and
//! the lines of that window.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use chrono::{DateTime, Utc};

use crate::system::error::Error;
use crate::transcripts::usage::open_transcript;
use crate::transcripts::usage::tail::{TailLine, TailReader};

use super::{Observed, Recorder, Root};

/// How much of the transcript's end is read.
pub const TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// One agent's transcript reader: what it finds goes into the [`Recorder`].
pub struct Reader<'a> {
    /// The agent's id, recorded as [`Observed::agent`].
    pub agent: &'a str,
    #[allow(clippy::type_complexity)]
    pub read: Box<dyn Fn(&Path, File, u64, &mut Recorder) -> anyhow::Result<()> + 'a>,
}

/// Reads what the session did from the transcript at `path` with `reader`: its last
/// [`TAIL_BYTES`] only. `repo_root` makes paths inside it relative; `now` is recorded as
/// `read_at`. A missing file or non-file is a `NoInput` error (naming the file); a transcript
/// with nothing to observe gives an empty observation.
pub fn observe(
    path: &Path,
    reader: &Reader,
    repo_root: Option<&Path>,
    now: DateTime<Utc>,
) -> anyhow::Result<Observed> {
    // Most sessions show their last request near the end: start small and
    // look further back (up to TAIL_BYTES) only while it is not found, so
    // the usual cost does not grow with the window.
    let mut window = FIRST_WINDOW;
    loop {
        let seen = observe_within(path, reader, repo_root, now, window)?;
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if seen.task_found || window >= TAIL_BYTES || window >= len {
            return Ok(seen);
        }
        window = (window * 4).min(TAIL_BYTES);
    }
}

/// The first window [`observe`] reads.
pub const FIRST_WINDOW: u64 = 1024 * 1024;

/// [`observe`] over only the last `window` bytes: cheaper on every turn
/// (loop detection), at the price of not seeing what came before.
pub fn observe_within(
    path: &Path,
    reader: &Reader,
    repo_root: Option<&Path>,
    now: DateTime<Utc>,
    window: u64,
) -> anyhow::Result<Observed> {
    let (file, len) = open_transcript(path)?;
    let root = Root::new(repo_root);
    let mut rec = Recorder::new(root);
    rec.window = window.min(TAIL_BYTES);
    (reader.read)(path, file, len, &mut rec)?;
    Ok(rec.finish(reader.agent, now))
}

/// Where the last complete line in `from..len` ends (`from` when there is none).
pub(super) fn last_line_end<R: Read + Seek>(
    path: &Path,
    file: &mut R,
    from: u64,
    len: u64,
) -> anyhow::Result<u64> {
    let io_err = |e| Error::io(path, "cannot read transcript", e);
    let mut end = len;
    // Transcripts end with a newline but while a line is written: a small read first.
    let mut buf = vec![0u8; 4 * 1024];
    while end > from {
        let start = end.saturating_sub(buf.len() as u64).max(from);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start)).map_err(io_err)?;
        file.read_exact(&mut buf[..n]).map_err(io_err)?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
        if buf.len() < 256 * 1024 {
            buf.resize(buf.len() * 4, 0);
        }
    }
    Ok(from)
}

/// `inner` seen from `base` on: offset 0 here is `base` there, so a [`TailReader`] over it never
/// reads before `base`.
struct Window<R> {
    inner: R,
    base: u64,
}

impl<R: Read> Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<R: Seek> Seek for Window<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let SeekFrom::Start(n) = pos else {
            return Err(std::io::Error::other("only absolute seeks in a window"));
        };
        Ok(self.inner.seek(SeekFrom::Start(self.base + n))? - self.base)
    }
}

/// The complete lines of the last [`TAIL_BYTES`] of `src` (first `len` bytes), in file order.
/// A line cut by the window's start and a torn last line are left out.
pub(crate) fn window_lines<R: Read + Seek>(
    path: &Path,
    mut src: R,
    len: u64,
    window: u64,
) -> anyhow::Result<Vec<Vec<u8>>> {
    let io_err = |e| Error::io(path, "cannot read transcript", e);
    let base = len.saturating_sub(window);
    // The window's first line is whole only when the byte before it ends a line.
    let first_whole = if base == 0 {
        true
    } else {
        let mut b = [0u8; 1];
        src.seek(SeekFrom::Start(base - 1)).map_err(io_err)?;
        src.read_exact(&mut b).map_err(io_err)?;
        b[0] == b'\n'
    };
    let mut reader = TailReader::new(Window { inner: src, base }, len - base).map_err(io_err)?;
    let mut lines = Vec::new();
    while let Some(line) = reader.next_line().map_err(io_err)? {
        if let TailLine::Line { offset, bytes } = line {
            if offset == 0 && !first_whole {
                break;
            }
            lines.push(bytes);
        }
    }
    lines.reverse();
    Ok(lines)
}

/// The first line of the file as a JSON object, when it is complete within 64 KiB (where
/// Codex and Gemini keep their session's metadata).
pub(crate) fn first_line_object(
    src: &mut File,
    len: u64,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let mut head = Vec::new();
    src.seek(SeekFrom::Start(0)).ok()?;
    src.take(len.min(64 * 1024)).read_to_end(&mut head).ok()?;
    let end = head.iter().position(|&b| b == b'\n')?;
    match serde_json::from_slice(&head[..end]) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        _ => None,
    }
}
