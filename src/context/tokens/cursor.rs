//! Incremental counts of a growing text or file: a cursor at a safe cut
//! remembers the tokens before it, so the next count covers only what
//! follows.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::stream::{count_stream, Limits, Start};
use super::{count, is_safe_cut, Encoding};
use crate::system::error::Error;
use ctxkeep_bpe::last_safe_cut;

/// How many bytes before a cursor's boundary are checked for change
/// (see [`count_file_incremental`]).
pub const CHECK_WINDOW: u64 = 64 * 1024;

/// Where the previous incremental count stopped. `boundary` is a safe cut of
/// the text counted then; the tokens before it are taken as still valid when
/// the bytes `[check_from, prefix_len)` (the last [`CHECK_WINDOW`] bytes
/// before the boundary, the boundary's `\n` and the char after it, on which
/// the cut's safety depends) are unchanged, which `check_sha256` checks, and
/// for a file, when it is still the same file (`file_id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountCursor {
    pub encoding: Encoding,
    /// Byte length of the text last counted.
    pub len: u64,
    /// Total tokens of the text last counted.
    pub tokens: u64,
    /// A safe cut (byte offset) in that text.
    pub boundary: u64,
    pub tokens_before_boundary: u64,
    /// `boundary` plus the length of the char after it.
    pub prefix_len: u64,
    /// Where the checked bytes start: `boundary - CHECK_WINDOW`, or 0.
    #[serde(default)]
    pub check_from: u64,
    /// Lower-case hex SHA-256 of the bytes `[check_from, prefix_len)`. A
    /// cursor without it (written by an older version) is not reused.
    #[serde(default)]
    pub check_sha256: String,
    /// The file's (device, inode) when it was counted from a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<(u64, u64)>,
}

fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    let mut s = String::with_capacity(64);
    for byte in h.finalize() {
        use std::fmt::Write;
        let _ = write!(s, "{byte:02x}");
    }
    s
}

/// Counts `tail`, the text from byte `from` (a safe cut before which there
/// are `base` tokens), and builds the cursor for the next call. `before`
/// holds the bytes `[before_from, from)`, for the new cursor's check.
fn count_tail(
    before: &[u8],
    before_from: u64,
    tail: &str,
    from: u64,
    base: usize,
    enc: Encoding,
    file_id: Option<(u64, u64)>,
) -> Result<(usize, CountCursor)> {
    // Re-anchor at the last safe cut of the new text so the next call
    // recounts as little as possible.
    let cut_in_tail = last_safe_cut(tail, enc);
    let before_cut = base + count(&tail[..cut_in_tail], enc)?;
    let total = before_cut + count(&tail[cut_in_tail..], enc)?;
    let next_char = tail[cut_in_tail..].chars().next().map_or(0, char::len_utf8);
    let cut = from + cut_in_tail as u64;
    let prefix_len = cut + next_char as u64;
    let check_from = cut.saturating_sub(CHECK_WINDOW).max(before_from);
    let from_before = &before[(check_from.min(from) - before_from) as usize..];
    let from_tail =
        &tail.as_bytes()[(check_from.max(from) - from) as usize..(prefix_len - from) as usize];
    let cursor = CountCursor {
        encoding: enc,
        len: from + tail.len() as u64,
        tokens: total as u64,
        boundary: cut,
        tokens_before_boundary: before_cut as u64,
        prefix_len,
        check_from,
        check_sha256: sha256_hex(&[from_before, from_tail]),
        file_id,
    };
    Ok((total, cursor))
}

/// Whether `prev` is internally consistent for `enc` and a text of `len` bytes.
fn plausible(p: &CountCursor, enc: Encoding, len: u64) -> bool {
    p.encoding == enc
        && !p.check_sha256.is_empty()
        && p.check_from <= p.boundary
        && p.boundary <= p.prefix_len
        && p.prefix_len <= len
        && p.boundary - p.check_from <= CHECK_WINDOW
        && p.tokens_before_boundary <= p.tokens
}

/// Counts `text`, reusing `prev` when `text` still has the bytes `prev`
/// checks (typically: the text grew by appending). Only the text from
/// `prev.boundary` on is counted then.
pub fn count_incremental(
    text: &str,
    enc: Encoding,
    prev: Option<&CountCursor>,
) -> Result<(usize, CountCursor)> {
    let b = text.as_bytes();
    if let Some(p) = prev.filter(|p| plausible(p, enc, text.len() as u64)) {
        let (from, check, end) = (
            p.boundary as usize,
            p.check_from as usize,
            p.prefix_len as usize,
        );
        if text.is_char_boundary(from)
            && is_safe_cut(text, from, enc)
            && sha256_hex(&[&b[check..end]]) == p.check_sha256
        {
            let base = p.tokens_before_boundary as usize;
            return count_tail(
                &b[check..from],
                p.check_from,
                &text[from..],
                p.boundary,
                base,
                enc,
                None,
            );
        }
    }
    count_tail(&[], 0, text, 0, 0, enc, None)
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// [`count_incremental`] on a file (errors as in [`super::count_file`]), reading
/// only what it needs: when `prev` still applies, the file is read from
/// `prev.check_from`, so the cost follows what was appended, not the file's
/// size. The file is counted as it is read (`stream.rs`), in bounded memory.
///
/// Soundness trade-off: the bytes before `check_from` are not read again.
/// We trust them when the file is the same file (device and inode), is at
/// least as long as the text counted then, and the last 64 KiB before the
/// cut (plus the cut's own bytes) are unchanged. An append-only file
/// (logs, transcripts, what `track --count` is for) always passes, and
/// anything that replaces the file (editors saving via a new file, `mv`,
/// rotation) or rewrites it near its end fails and is counted afresh. What
/// is missed is an in-place rewrite that changes only bytes more than 64 KiB
/// before the last safe cut and leaves the rest byte-identical; we accept
/// that for a budget estimate rather than re-hash the whole file each time.
pub fn count_file_incremental(
    path: &Path,
    enc: Encoding,
    prev: Option<&CountCursor>,
) -> Result<(usize, CountCursor)> {
    let (mut file, len) = crate::system::fsutil::open_input(path)?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let id = file_id(&meta);
    let mut start = Start::default();
    if let Some(p) = prev.filter(|p| plausible(p, enc, len) && p.file_id == id) {
        let mut checked = vec![0u8; (p.prefix_len - p.check_from) as usize];
        let same = file
            .seek(SeekFrom::Start(p.check_from))
            .and_then(|_| file.read_exact(&mut checked))
            .is_ok()
            && sha256_hex(&[&checked]) == p.check_sha256;
        if same {
            checked.truncate((p.boundary - p.check_from) as usize);
            start = Start {
                offset: p.boundary,
                tokens: p.tokens_before_boundary as usize,
                before: checked,
            };
        }
    }
    file.seek(SeekFrom::Start(start.offset))
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let s = count_stream(&mut file, path, enc, start, Limits::default(), &mut |_| {})?;
    let check_from = s.boundary - s.before.len() as u64;
    let cursor = CountCursor {
        encoding: enc,
        len: s.len,
        tokens: s.tokens as u64,
        boundary: s.boundary,
        tokens_before_boundary: s.tokens_before_boundary as u64,
        prefix_len: s.boundary + s.next_char.len() as u64,
        check_from,
        check_sha256: sha256_hex(&[&s.before, &s.next_char]),
        file_id: id,
    };
    Ok((s.tokens, cursor))
}

#[cfg(test)]
mod tests {
    use super::super::texts::{reference, text_strategy};
    use super::*;
    use crate::context::tokens::count_file;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn incremental_equals_full_recount(pieces in proptest::collection::vec(text_strategy(), 1..8)) {
            // p50k_base when built in (`--features legacy-encodings`).
            for enc in [Encoding::O200kBase, Encoding::P50kBase].into_iter().filter(|e| e.is_built()) {
                let mut text = String::new();
                let mut cursor: Option<CountCursor> = None;
                for p in &pieces {
                    text.push_str(p);
                    let (n, c) = count_incremental(&text, enc, cursor.as_ref()).unwrap();
                    prop_assert_eq!(n, reference(&text, enc));
                    prop_assert_eq!(c.tokens as usize, n);
                    cursor = Some(c);
                }
            }
        }
    }

    #[test]
    fn incremental_file_reuses_and_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("log.txt");
        let enc = Encoding::O200kBase;
        std::fs::write(&f, "line one\nline two\nthree").unwrap();
        let (n1, c1) = count_file_incremental(&f, enc, None).unwrap();
        assert_eq!(n1, count_file(&f, enc).unwrap());
        assert_eq!(c1.boundary, "line one\nline two\n".len() as u64);
        std::fs::write(&f, "line one\nline two\nthree and more\nfour").unwrap();
        let (n2, c2) = count_file_incremental(&f, enc, Some(&c1)).unwrap();
        assert_eq!(n2, count_file(&f, enc).unwrap());
        assert!(c2.boundary > c1.boundary);
        // Rewritten (not appended): falls back to a full count.
        std::fs::write(&f, "LINE ONE\nline two\nthree and more\nfour").unwrap();
        let (n3, _) = count_file_incremental(&f, enc, Some(&c2)).unwrap();
        assert_eq!(n3, count_file(&f, enc).unwrap());
        // Truncated, or another encoding: full count too.
        std::fs::write(&f, "li").unwrap();
        assert_eq!(count_file_incremental(&f, enc, Some(&c2)).unwrap().0, 1);
        let (n5, _) = count_file_incremental(&f, Encoding::Cl100kBase, Some(&c2)).unwrap();
        assert_eq!(n5, count_file(&f, Encoding::Cl100kBase).unwrap());
        let json = serde_json::to_string(&c2).unwrap();
        assert_eq!(serde_json::from_str::<CountCursor>(&json).unwrap(), c2);
    }

    /// The documented trade-off: an appended file is read from the check
    /// window on (bytes before it are trusted), while a change inside the
    /// window, or a new file at the path, is counted afresh.
    #[test]
    fn incremental_file_trusts_only_the_unchanged_window() {
        use std::io::{Seek, SeekFrom, Write};
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("log.txt");
        let enc = Encoding::O200kBase;
        let line = "the agent keeps the state of the project\n";
        let body = line.repeat((3 * CHECK_WINDOW as usize) / line.len());
        std::fs::write(&f, &body).unwrap();
        let (_, c1) = count_file_incremental(&f, enc, None).unwrap();
        assert!(c1.boundary > CHECK_WINDOW && c1.check_from == c1.boundary - CHECK_WINDOW);

        // In place, same inode: the first line changes (before the window)
        // and a line is appended. The old prefix count is reused.
        let mut file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        file.write_all(b"XQZJ XQZJ XQZJ XQZJ XQZJ XQZJ XQZJ XQZJ XQ\n")
            .unwrap();
        file.seek(SeekFrom::End(0)).unwrap();
        file.write_all(b"appended words\n").unwrap();
        drop(file);
        let (n2, c2) = count_file_incremental(&f, enc, Some(&c1)).unwrap();
        let as_counted = format!("{body}appended words\n");
        assert_eq!(n2, count(&as_counted, enc).unwrap());
        assert_ne!(n2, count_file(&f, enc).unwrap());

        // A change inside the window is seen: exact count of the file.
        let mut file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        file.seek(SeekFrom::Start(c2.boundary - 10)).unwrap();
        file.write_all(b"Z").unwrap();
        drop(file);
        let (n3, c3) = count_file_incremental(&f, enc, Some(&c2)).unwrap();
        assert_eq!(n3, count_file(&f, enc).unwrap());

        // The same bytes in a new file (new inode) are counted afresh.
        let g = dir.path().join("new.txt");
        std::fs::write(
            &g,
            format!("{}more\n", std::fs::read_to_string(&f).unwrap()),
        )
        .unwrap();
        std::fs::rename(&g, &f).unwrap();
        let (n4, c4) = count_file_incremental(&f, enc, Some(&c3)).unwrap();
        assert_eq!(n4, count_file(&f, enc).unwrap());
        assert_ne!(c4.file_id, c3.file_id);

        // A cursor written before the check fields existed is not reused.
        let mut old = serde_json::to_value(&c4).unwrap();
        let obj = old.as_object_mut().unwrap();
        obj.remove("check_from");
        obj.remove("check_sha256");
        obj.insert("prefix_sha256".into(), "00".into());
        let old: CountCursor = serde_json::from_value(old).unwrap();
        std::fs::write(&f, "a\nb\n").unwrap();
        assert_eq!(
            count_file_incremental(&f, enc, Some(&old)).unwrap().0,
            count_file(&f, enc).unwrap()
        );
    }
}
