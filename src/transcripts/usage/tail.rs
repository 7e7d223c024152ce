//! A reverse line reader: yields a file's complete lines from the end backwards, reading it in
//! fixed-size chunks, so that finding the last record of a transcript costs about the same for a
//! 1 GB file as for a 1 MB one when that record sits near the end.
//!
//! Rules (docs/agents.md, "Reading a transcript"):
//! * The file's length is fixed when the reader is created; bytes the agent appends afterwards are
//!   not seen, so a growing transcript gives a consistent snapshot.
//! * A final line without a trailing `\n` is still being written by the agent: it is skipped
//!   silently (not yielded, not malformed).
//! * A line longer than the cap is never held in memory: it is reported as [`TailLine::TooLong`]
//!   (callers count it as malformed) and skipped.
//! * Lines are bytes; UTF-8 is the caller's business (invalid UTF-8 is a malformed line there).

use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read per step backwards.
pub const CHUNK_SIZE: usize = 64 * 1024;
/// Lines longer than this are skipped (and counted as malformed by the callers).
pub const MAX_LINE_LEN: usize = 16 * 1024 * 1024;

/// One item yielded by [`TailReader`], last line first.
#[derive(Debug, PartialEq, Eq)]
pub enum TailLine {
    /// A complete line without its `\n` (a trailing `\r` is kept; JSON treats it as blank space).
    Line { offset: u64, bytes: Vec<u8> },
    /// A line over the length cap, skipped without being loaded.
    TooLong { offset: u64, len: u64 },
}

impl TailLine {
    /// Byte offset of the line's first byte in the file.
    pub fn offset(&self) -> u64 {
        match self {
            TailLine::Line { offset, .. } | TailLine::TooLong { offset, .. } => *offset,
        }
    }
}

pub struct TailReader<R> {
    src: R,
    chunk_size: usize,
    max_line: usize,
    /// File offset of `chunk[0]`; everything before it is unread.
    pos: u64,
    chunk: Vec<u8>,
    /// `chunk[..cursor]` is not yet consumed.
    cursor: usize,
    /// Pieces of the line being assembled that lie after `chunk` in the file, last piece first.
    pending: Vec<Vec<u8>>,
    pending_len: u64,
    /// The line being assembled went over the cap; its bytes are being dropped.
    overlong: bool,
    /// True once the first line of the file has been yielded.
    done: bool,
    bytes_read: u64,
    len: u64,
}

impl<R: Read + Seek> TailReader<R> {
    /// A reader over the first `len` bytes of `src` (pass the file's current length).
    pub fn new(src: R, len: u64) -> io::Result<Self> {
        Self::with_limits(src, len, CHUNK_SIZE, MAX_LINE_LEN)
    }

    /// As [`TailReader::new`] with explicit chunk size and line cap (tests use small ones).
    pub fn with_limits(src: R, len: u64, chunk_size: usize, max_line: usize) -> io::Result<Self> {
        assert!(chunk_size > 0, "chunk size must be positive");
        let mut reader = TailReader {
            src,
            chunk_size,
            max_line,
            pos: len,
            chunk: Vec::new(),
            cursor: 0,
            pending: Vec::new(),
            pending_len: 0,
            overlong: false,
            done: len == 0,
            bytes_read: 0,
            len,
        };
        if len == 0 {
            return Ok(reader);
        }
        reader.read_previous_chunk()?;
        // The last byte decides whether the final line is complete.
        if reader.chunk[reader.cursor - 1] == b'\n' {
            reader.cursor -= 1;
        } else {
            // Torn final line: drop everything after the last newline, however long it is.
            reader.skip_torn_line()?;
        }
        Ok(reader)
    }

    /// Total bytes read from the source so far (the cost of the scan).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The length the reader was created with.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The next line backwards, or `None` once the first line of the file has been yielded.
    pub fn next_line(&mut self) -> io::Result<Option<TailLine>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let head = &self.chunk[..self.cursor];
            if let Some(nl) = head.iter().rposition(|&b| b == b'\n') {
                let start = nl + 1;
                let offset = self.pos + start as u64;
                let item = self.take_line(start, offset);
                self.cursor = nl;
                return Ok(Some(item));
            }
            if self.pos == 0 {
                // The first line of the file.
                self.done = true;
                let item = self.take_line(0, 0);
                self.cursor = 0;
                return Ok(Some(item));
            }
            self.stash_head();
            self.read_previous_chunk()?;
        }
    }

    /// Builds the line `chunk[start..cursor]` + pending pieces, and resets the assembly state.
    fn take_line(&mut self, start: usize, offset: u64) -> TailLine {
        let piece_len = (self.cursor - start) as u64;
        let total = piece_len + self.pending_len;
        let item = if self.overlong || total > self.max_line as u64 {
            TailLine::TooLong { offset, len: total }
        } else {
            let mut bytes = Vec::with_capacity(total as usize);
            bytes.extend_from_slice(&self.chunk[start..self.cursor]);
            for piece in self.pending.iter().rev() {
                bytes.extend_from_slice(piece);
            }
            TailLine::Line { offset, bytes }
        };
        self.pending.clear();
        self.pending_len = 0;
        self.overlong = false;
        item
    }

    /// Moves the unconsumed head of the chunk (the end of a line that starts earlier) aside.
    fn stash_head(&mut self) {
        let piece_len = self.cursor as u64;
        if !self.overlong && self.pending_len + piece_len <= self.max_line as u64 {
            self.pending.push(self.chunk[..self.cursor].to_vec());
        } else if !self.overlong {
            self.overlong = true;
            self.pending.clear();
        }
        self.pending_len += piece_len;
        self.cursor = 0;
    }

    fn read_previous_chunk(&mut self) -> io::Result<()> {
        let n = (self.chunk_size as u64).min(self.pos) as usize;
        self.pos -= n as u64;
        self.src.seek(SeekFrom::Start(self.pos))?;
        // Read into the buffer's spare capacity: zeroing 64 KiB first was 3 % of a hook event's
        // instructions (two readers per event).
        self.chunk.clear();
        self.chunk.reserve(n);
        let got = (&mut self.src)
            .take(n as u64)
            .read_to_end(&mut self.chunk)?;
        if got < n {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "failed to fill whole buffer",
            ));
        }
        self.bytes_read += n as u64;
        self.cursor = n;
        Ok(())
    }

    /// Consumes the bytes after the last `\n` without keeping them.
    fn skip_torn_line(&mut self) -> io::Result<()> {
        loop {
            if let Some(nl) = self.chunk[..self.cursor].iter().rposition(|&b| b == b'\n') {
                self.cursor = nl;
                return Ok(());
            }
            if self.pos == 0 {
                // The whole file is one unterminated line.
                self.cursor = 0;
                self.done = true;
                return Ok(());
            }
            self.cursor = 0;
            self.read_previous_chunk()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn lines(data: &[u8], chunk: usize, cap: usize) -> Vec<TailLine> {
        let mut r =
            TailReader::with_limits(Cursor::new(data), data.len() as u64, chunk, cap).unwrap();
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    fn line(offset: u64, s: &str) -> TailLine {
        TailLine::Line {
            offset,
            bytes: s.as_bytes().to_vec(),
        }
    }

    #[test]
    fn yields_lines_last_first_for_every_chunk_size() {
        let data = b"alpha\nbeta\n\ngamma-long-line\n";
        for chunk in 1..=data.len() + 3 {
            assert_eq!(
                lines(data, chunk, 1024),
                vec![
                    line(12, "gamma-long-line"),
                    line(11, ""),
                    line(6, "beta"),
                    line(0, "alpha"),
                ],
                "chunk size {chunk}"
            );
        }
    }

    #[test]
    fn torn_last_line_is_skipped_even_when_it_spans_chunks() {
        let data = b"one\ntwo\nthree-is-still-being-wri";
        for chunk in 1..=data.len() {
            assert_eq!(
                lines(data, chunk, 1024),
                vec![line(4, "two"), line(0, "one")],
                "chunk size {chunk}"
            );
        }
        assert_eq!(lines(b"no newline at all", 4, 1024), vec![]);
        assert_eq!(lines(b"", 4, 1024), vec![]);
        assert_eq!(lines(b"\n", 4, 1024), vec![line(0, "")]);
    }

    #[test]
    fn overlong_lines_are_reported_not_loaded() {
        let long = "x".repeat(50);
        let data = format!("short\n{long}\nend\n");
        for chunk in 1..=data.len() {
            assert_eq!(
                lines(data.as_bytes(), chunk, 10),
                vec![
                    line(57, "end"),
                    TailLine::TooLong { offset: 6, len: 50 },
                    line(0, "short"),
                ],
                "chunk size {chunk}"
            );
        }
        // Exactly at the cap is still a line.
        assert_eq!(lines(b"0123456789\n", 3, 10), vec![line(0, "0123456789")]);
        // An overlong first line of the file.
        assert_eq!(
            lines(b"0123456789AB\nok\n", 3, 10),
            vec![line(13, "ok"), TailLine::TooLong { offset: 0, len: 12 }]
        );
    }

    #[test]
    fn invalid_utf8_is_passed_through_as_bytes() {
        let data = b"ok\n\xff\xfe{\n";
        assert_eq!(
            lines(data, 2, 100),
            vec![
                TailLine::Line {
                    offset: 3,
                    bytes: vec![0xff, 0xfe, b'{']
                },
                line(0, "ok"),
            ]
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// A line's bytes: anything but a newline.
        fn line_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
            proptest::collection::vec(
                any::<u8>().prop_map(|b| if b == b'\n' { b'x' } else { b }),
                0..max,
            )
        }

        proptest! {
            /// Backwards reading agrees with a plain forward split, whatever the chunk size,
            /// line cap, content and torn tail.
            #[test]
            fn agrees_with_a_forward_split(
                content in proptest::collection::vec(line_bytes(40), 0..12),
                torn in line_bytes(30),
                chunk in 1usize..50,
                cap in 0usize..45,
            ) {
                let mut data = Vec::new();
                let mut expected = Vec::new();
                for l in &content {
                    let offset = data.len() as u64;
                    data.extend_from_slice(l);
                    data.push(b'\n');
                    expected.push(if l.len() > cap {
                        TailLine::TooLong { offset, len: l.len() as u64 }
                    } else {
                        TailLine::Line { offset, bytes: l.to_vec() }
                    });
                }
                data.extend_from_slice(&torn);
                expected.reverse();
                prop_assert_eq!(lines(&data, chunk, cap), expected);
            }
        }
    }

    #[test]
    fn reads_only_the_tail_of_a_large_file() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let filler = format!("{{\"type\":\"filler\",\"pad\":\"{}\"}}\n", "p".repeat(1000));
        let mut written = 0u64;
        while written < 8 * 1024 * 1024 {
            f.write_all(filler.as_bytes()).unwrap();
            written += filler.len() as u64;
        }
        f.write_all(b"{\"type\":\"last\"}\n").unwrap();
        f.write_all(b"{\"type\":\"torn\"").unwrap();
        f.flush().unwrap();
        drop(f);

        let file = std::fs::File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        assert!(len > 8 * 1024 * 1024);
        let mut r = TailReader::new(file, len).unwrap();
        let first = r.next_line().unwrap().unwrap();
        assert_eq!(
            first,
            TailLine::Line {
                offset: written,
                bytes: b"{\"type\":\"last\"}".to_vec()
            }
        );
        assert_eq!(r.bytes_read(), CHUNK_SIZE as u64);
        // A few more lines still come from the same chunk.
        for _ in 0..10 {
            assert!(matches!(
                r.next_line().unwrap(),
                Some(TailLine::Line { .. })
            ));
        }
        assert!(
            r.bytes_read() <= 2 * CHUNK_SIZE as u64,
            "read {}",
            r.bytes_read()
        );
    }
}
