//! One hook event's reading of its transcript: [`EventRead`] opens the file once and answers
//! every question the event asks of it from that one open file.
//!
//! - [`EventRead::usage`]: the context usage at the end (the agent's usage reader, read from
//!   the end backwards), read once and kept for the rest of the event;
//! - [`EventRead::compaction`]: the compaction the transcript ends with, with the agent's own
//!   token count before it (the same reading);
//! - [`EventRead::gained`]: what the session did in the bytes the transcript gained since
//!   `from` (the session index's stored offset), up to its last complete line: a partial last
//!   line is left for the next event;
//! - [`EventRead::steps_since`]: the tool calls in those bytes, for loop detection;
//! - [`EventRead::mark_at`]: the fingerprint of the bytes before an offset, which tells a
//!   transcript appended to from one rewritten, truncated or rotated (then read afresh);
//! - [`EventRead::echoes`]: whether the agent itself wrote a word (a restore's nonce) near the
//!   end, for acknowledgements;
//! - [`EventRead::has_call`]: whether a tool call's id has reached the transcript, and
//!   [`EventRead::file`] for a caller that waits for it to;
//! - [`EventRead::tail`]: what the session did in the last bytes (a checkpoint's recent
//!   commands and plan).
//!
//! The agent's readers are handed in ([`Readers`]): this module does not pick an agent.
//! Readers that take a `File` get a duplicate of the one descriptor (no second open); every
//! read seeks to where it starts, so they do not disturb each other.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::index::{ReadFile, FIRST_READ, MARK_BYTES};
use super::{last_line_end, loops, Observed, Reader, Recorder, Root, TAIL_BYTES};
use crate::system::error::Error;
use crate::transcripts::usage::Usage;

/// The agent's usage reader over the open file's first `len` bytes.
pub type UsageReader = Box<dyn Fn(&Path, &File, u64) -> anyhow::Result<Usage>>;

/// The text of a transcript line the agent itself wrote (its replies and tool calls).
pub type Authored = fn(&Map<String, Value>) -> Vec<String>;

/// What an agent hands the reading: its transcript readers.
pub struct Readers {
    pub observe: Reader<'static>,
    pub usage: UsageReader,
    pub authored: Authored,
}

/// What loop detection asks of the bytes the transcript gained ([`EventRead::gained_with_steps`]).
#[derive(Clone, Copy)]
pub struct LoopsAsk<'a> {
    /// The folder its paths are shown from.
    pub root: Option<&'a Path>,
    /// Where its last read stopped.
    pub from: u64,
    /// The calls it saw without their outcome.
    pub pending: &'a [loops::PendingCall],
}

/// What [`EventRead::gained_with_steps`] read: the session index's part, as
/// [`EventRead::gained`] gives it, and loop detection's steps with where its next read starts
/// (None when it must read on its own).
pub struct Gained {
    pub observed: Observed,
    pub reads: Vec<ReadFile>,
    pub end: u64,
    pub steps: Option<NewCalls>,
}

/// Loop detection's new calls, in order, and where its next read starts.
pub type NewCalls = (Vec<loops::Step>, u64);

/// One event's reading of one transcript (see the module's documentation).
pub struct EventRead {
    path: PathBuf,
    file: File,
    /// The length the answers are read up to: the file's length when it was opened, or when
    /// [`EventRead::refresh`] was last called.
    len: Cell<u64>,
    readers: Readers,
    usage: RefCell<Option<Usage>>,
}

impl EventRead {
    /// Opens the transcript at `path` (a missing file or a non-file is a `NoInput` error
    /// naming it).
    pub fn open(path: &Path, readers: Readers) -> anyhow::Result<EventRead> {
        let (file, len) = crate::transcripts::usage::open_transcript(path)?;
        Ok(EventRead::of_open(path, file, len, readers))
    }

    /// The reading of the transcript at `path`, already open as `file` (`len` bytes long).
    pub fn of_open(path: &Path, file: File, len: u64, readers: Readers) -> EventRead {
        EventRead {
            path: path.to_path_buf(),
            file,
            len: Cell::new(len),
            readers,
            usage: RefCell::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The length the answers are read up to.
    pub fn len(&self) -> u64 {
        self.len.get()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The agent's id, as its readers record it.
    pub fn agent(&self) -> &str {
        self.readers.observe.agent
    }

    /// The open file, for a caller that waits for the agent to write (then
    /// [`EventRead::refresh`]).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Takes the file's length again (after waiting for the agent to write); a reading of
    /// usage made before is read again.
    pub fn refresh(&self) {
        if let Ok(meta) = self.file.metadata() {
            if meta.len() != self.len.get() {
                self.len.set(meta.len());
                self.usage.replace(None);
            }
        }
    }

    fn io_err(&self, e: std::io::Error) -> Error {
        Error::io(&self.path, "cannot read transcript", e)
    }

    /// A duplicate of the open descriptor for a reader that takes a `File` (no second open).
    fn dup(&self) -> anyhow::Result<File> {
        Ok(self.file.try_clone().map_err(|e| self.io_err(e))?)
    }

    /// The context usage at the transcript's end, read once per event.
    pub fn usage(&self) -> anyhow::Result<Usage> {
        if let Some(u) = self.usage.borrow().as_ref() {
            return Ok(u.clone());
        }
        let u = (self.readers.usage)(&self.path, &self.file, self.len())?;
        self.usage.replace(Some(u.clone()));
        Ok(u)
    }

    /// The compaction the transcript ends with, as the agent recorded it (its own token count
    /// before it, the trigger, the model); None when it does not end with one or cannot be
    /// read.
    pub fn compaction(&self) -> Option<Usage> {
        self.usage().ok().filter(|u| u.compacted)
    }

    /// The bytes just before `offset` (hex, at most [`MARK_BYTES`]): the session index's
    /// fingerprint of what it has read; empty when they cannot be read.
    pub fn mark_at(&self, offset: u64) -> String {
        if offset > self.len() {
            return String::new();
        }
        let start = offset.saturating_sub(MARK_BYTES);
        let mut buf = vec![0u8; (offset - start) as usize];
        let mut f = &self.file;
        match f
            .seek(SeekFrom::Start(start))
            .and_then(|_| f.read_exact(&mut buf))
        {
            Ok(()) => hex(&buf),
            Err(_) => String::new(),
        }
    }

    /// What the session did in the bytes from `from` (the end of a line) to the last complete
    /// line, with every file read; returns them and where the next read starts. A first read
    /// (`from` far back) takes at most the last [`FIRST_READ`].
    pub fn gained(
        &self,
        repo_root: Option<&Path>,
        from: u64,
        now: DateTime<Utc>,
    ) -> anyhow::Result<(Observed, Vec<ReadFile>, u64)> {
        self.gained_after(repo_root, from, now, false)
    }

    /// [`EventRead::gained`], knowing whether the agent's last words before `from` asked the
    /// user an open question (the index keeps it): a prompt that answers it is a follow-up.
    pub fn gained_after(
        &self,
        repo_root: Option<&Path>,
        from: u64,
        now: DateTime<Utc>,
        agent_asked: bool,
    ) -> anyhow::Result<(Observed, Vec<ReadFile>, u64)> {
        let len = self.len();
        let from = from.max(len.saturating_sub(FIRST_READ)).min(len);
        let end = self.line_end(from)?;
        let mut rec = Recorder::new(Root::new(repo_root));
        rec.agent_asked = agent_asked;
        let agent = self.readers.observe.agent;
        if end <= from {
            let (obs, reads) = rec.finish_with_reads(agent, now);
            return Ok((obs, reads, from));
        }
        rec.window = end - from;
        (self.readers.observe.read)(&self.path, self.dup()?, end, &mut rec)?;
        let (obs, reads) = rec.finish_with_reads(agent, now);
        Ok((obs, reads, end))
    }

    /// [`EventRead::gained`], and in the same pass the tool calls loop detection asks for
    /// (`loops`: from where it stopped, shown from its root), when both reads are one: the same
    /// bytes, the same root and no call carried over from an earlier read (a carried call is
    /// followed for its outcome, which would change what the agent's reader records: loop
    /// detection then reads on its own, [`EventRead::steps_since`]). The steps are None then.
    pub fn gained_with_steps(
        &self,
        repo_root: Option<&Path>,
        from: u64,
        now: DateTime<Utc>,
        agent_asked: bool,
        loops: Option<LoopsAsk<'_>>,
    ) -> anyhow::Result<Gained> {
        let len = self.len();
        let index_from = from.max(len.saturating_sub(FIRST_READ)).min(len);
        let shared = loops.filter(|ask| {
            ask.pending.is_empty()
                && ask.root == repo_root
                && ask.from.max(len.saturating_sub(TAIL_BYTES)).min(len) == index_from
        });
        let (mut observed, reads, end) = self.gained_after(repo_root, from, now, agent_asked)?;
        let steps = shared.map(|_| (std::mem::take(&mut observed.steps), end));
        Ok(Gained {
            observed,
            reads,
            end,
            steps,
        })
    }

    /// The tool calls from byte `from` to the last complete line, in order, with `pending`
    /// (calls an earlier read saw without their outcome) first so their outcomes are matched;
    /// returns them and where the next read starts. Reads at most [`TAIL_BYTES`].
    pub fn steps_since(
        &self,
        repo_root: Option<&Path>,
        from: u64,
        pending: &[loops::PendingCall],
    ) -> anyhow::Result<(Vec<loops::Step>, u64)> {
        let len = self.len();
        let from = from.max(len.saturating_sub(TAIL_BYTES)).min(len);
        let end = self.line_end(from)?;
        if end <= from {
            return Ok((Vec::new(), from));
        }
        let mut rec = Recorder::new(Root::new(repo_root));
        rec.window = end - from;
        rec.waiting(pending);
        (self.readers.observe.read)(&self.path, self.dup()?, end, &mut rec)?;
        if rec.not_main {
            return Ok((Vec::new(), end));
        }
        Ok((rec.into_steps(), end))
    }

    /// What the session did in the transcript's last `window` bytes (at most [`TAIL_BYTES`]).
    pub fn tail(
        &self,
        repo_root: Option<&Path>,
        now: DateTime<Utc>,
        window: u64,
    ) -> anyhow::Result<Observed> {
        let mut rec = Recorder::new(Root::new(repo_root));
        rec.window = window.min(TAIL_BYTES);
        (self.readers.observe.read)(&self.path, self.dup()?, self.len(), &mut rec)?;
        Ok(rec.finish(self.readers.observe.agent, now))
    }

    /// What the session did, read back from the end as far as its last request (see
    /// [`super::observe`]): the last [`super::FIRST_WINDOW`] first, further back only while no
    /// request is found, at most [`TAIL_BYTES`].
    pub fn observe(
        &self,
        repo_root: Option<&Path>,
        now: DateTime<Utc>,
    ) -> anyhow::Result<Observed> {
        let mut window = super::FIRST_WINDOW;
        loop {
            let seen = self.tail(repo_root, now, window)?;
            if seen.task_found || window >= TAIL_BYTES || window >= self.len() {
                return Ok(seen);
            }
            window = (window * 4).min(TAIL_BYTES);
        }
    }

    /// Whether a line the agent itself wrote in the transcript's last `scan_bytes` holds
    /// `word` on its own (a restore's nonce echoed back).
    pub fn echoes(&self, word: &str, scan_bytes: u64) -> Result<bool, Error> {
        crate::transcripts::usage::echo::echoes_in(
            &self.path,
            &self.file,
            0,
            self.len(),
            word,
            scan_bytes,
            &self.readers.authored,
        )
    }

    /// [`EventRead::echoes`] over the complete lines from byte `from` (where an earlier look
    /// stopped; at most `scan_bytes` back): returns the answer and where the next look starts
    /// (after the last complete line: a line being written is looked at again).
    pub fn echoes_since(
        &self,
        word: &str,
        from: u64,
        scan_bytes: u64,
    ) -> Result<(bool, u64), Error> {
        let len = self.len();
        let start = from.max(len.saturating_sub(scan_bytes)).min(len);
        let mut bytes = Vec::with_capacity((len - start) as usize);
        let mut f = &self.file;
        f.seek(SeekFrom::Start(start))
            .and_then(|_| f.take(len - start).read_to_end(&mut bytes))
            .map_err(|e| self.io_err(e))?;
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let found = crate::transcripts::usage::echo::echoed_in(
            &bytes[..whole],
            word,
            &self.readers.authored,
        );
        Ok((found, start + whole as u64))
    }

    /// Whether `id` (a tool call's) is in the transcript's last `within` bytes.
    pub fn has_call(&self, id: &str, within: u64) -> bool {
        let len = self.len();
        let start = len.saturating_sub(within);
        let mut bytes = Vec::with_capacity((len - start) as usize);
        let mut f = &self.file;
        if f.seek(SeekFrom::Start(start))
            .and_then(|_| f.take(len - start).read_to_end(&mut bytes))
            .is_err()
        {
            return false;
        }
        memchr::memmem::find(&bytes, id.as_bytes()).is_some()
    }

    /// Where the last complete line in `from..len` ends (`from` when there is none).
    fn line_end(&self, from: u64) -> anyhow::Result<u64> {
        last_line_end(&self.path, &mut &self.file, from, self.len())
    }
}

/// `bytes` in lower-case hex (a `format!` per byte cost more than the rest of the mark).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lower_case_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0a, 0x7f, 0xff]), "000a7fff");
        assert_eq!(hex(b""), "");
    }
}
