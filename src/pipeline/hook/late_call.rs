//! Waiting for the reply that made a tool call to reach the transcript.
//!
//! Claude Code appends a reply to its transcript on its own schedule: with both cores busy its
//! `PostToolUse` hook has run before the reply holding the call was there, and the token count read
//! then was the one before that reply, so a stage crossed by it came a turn late. The call's
//! `tool_use_id` is in that reply, so the hook waits until the id shows, for a short while.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::Hook;
use crate::domain::session;
use crate::pipeline::apply::Batch;

/// How far back from the end the id is looked for first: the reply is the last line or near
/// it (the call's result comes only after the hook), so this is nearly always enough.
const NEAR: u64 = 64 * 1024;
/// How far back, when it is not that near: a call whose own input is large (a whole file
/// written) puts its id further back.
const FAR: u64 = 4 * 1024 * 1024;
/// How long a hook waits at most: what was seen late came within 0.3 s, with both cores busy;
/// a main-session call that never comes is not expected at all, so the margin is wide. Past
/// this the hook goes on with what the transcript holds.
const PATIENCE: Duration = Duration::from_millis(1_500);
const STEP: Duration = Duration::from_millis(10);

/// Returns true once `id` is in the transcript's tail, false after [`PATIENCE`] without it;
/// never fails (an unreadable transcript is the caller's to report).
#[cfg(test)]
pub fn await_call(path: &Path, id: &str) -> bool {
    find_until(path, id, Instant::now() + PATIENCE)
}

/// As [`await_call`], for an agent that creates the file with its first batch of writes: the
/// file may be missing at first. One [`PATIENCE`] covers both waits.
pub fn await_file_then(path: &Path, mark: &str) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while !path.is_file() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(STEP);
    }
    find_until(path, mark, deadline)
}

/// As [`await_call`], in a transcript the event has already opened.
pub fn await_call_in(file: &File, id: &str) -> bool {
    find_in(file, id, Instant::now() + PATIENCE)
}

fn find_until(path: &Path, id: &str, deadline: Instant) -> bool {
    // The one way to open input: a FIFO at the path would block a plain open forever.
    let Ok((file, _)) = crate::system::fsutil::open_input(path) else {
        return false;
    };
    find_in(&file, id, deadline)
}

fn find_in(mut file: &File, id: &str, deadline: Instant) -> bool {
    let needle = id.as_bytes();
    let Some(len) = file_len(file) else {
        return false;
    };
    let mut from = len.saturating_sub(NEAR);
    let mut looked_far = false;
    loop {
        match scan_from(&mut file, from, needle) {
            Scan::Found => return true,
            Scan::Unreadable => return false,
            // Only what is appended from now on is read again, with an overlap of the id's
            // length so an id split across two reads is still found.
            Scan::NotYet(end) => {
                if !looked_far && from > 0 {
                    looked_far = true;
                    if let Scan::Found =
                        scan_range(&mut file, len.saturating_sub(FAR), from, needle)
                    {
                        return true;
                    }
                }
                from = end.saturating_sub(needle.len() as u64);
            }
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(STEP);
    }
}

enum Scan {
    Found,
    /// Not there; the length read up to.
    NotYet(u64),
    Unreadable,
}

fn file_len(file: &File) -> Option<u64> {
    file.metadata().ok().map(|m| m.len())
}

fn scan_from(file: &mut &File, from: u64, needle: &[u8]) -> Scan {
    match file_len(file) {
        Some(len) => scan_range(file, from, len, needle),
        None => Scan::Unreadable,
    }
}

/// Looks for `needle` in bytes `from..to` (reading a needle's length past `to`, so one that
/// straddles `to` is found).
fn scan_range(file: &mut &File, from: u64, to: u64, needle: &[u8]) -> Scan {
    if from >= to {
        return Scan::NotYet(to.max(from));
    }
    let want = to - from + needle.len() as u64;
    let mut bytes = Vec::with_capacity(want as usize);
    if file.seek(SeekFrom::Start(from)).is_err() || file.take(want).read_to_end(&mut bytes).is_err()
    {
        return Scan::Unreadable;
    }
    if contains(&bytes, needle) {
        Scan::Found
    } else {
        Scan::NotYet(from + bytes.len() as u64)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

impl Hook {
    /// Waits for the reply that made this event's tool call to reach the transcript
    /// (this module); a call that never shows is logged, and the hook goes on without it.
    pub(super) fn await_call(&self) {
        let Some(id) = &self.reading.payload.tool_use_id else {
            return;
        };
        if self.await_new_transcript(id) {
            return;
        }
        let Ok(Some(read)) = self.reading.read() else {
            return;
        };
        let found = await_call_in(read.file(), id);
        read.refresh();
        if !found {
            self.log_call_missing(id);
        }
    }

    pub(super) fn log_call_missing(&self, id: &str) {
        if let Ok(lock) = self.ws.lock() {
            self.log(
                &lock,
                "call_not_in_transcript",
                json!({ "session": self.reading.session, "agent": self.reading.agent, "tool_use_id": id }),
            );
        }
    }

    /// A new session's transcript may not exist yet when its first tool hook runs (Claude Code
    /// creates it just after that hook starts): the hook then waits for the file and the call
    /// in it, as for an agent that always writes late ([`await_file_then`]). Only a
    /// session with no token count yet waits, and only once: one whose file never comes is marked,
    /// so its later hooks do not wait again. False when no wait was due (the ordinary hook,
    /// whose file is there: that one look is the one `transcript` would make, so it costs
    /// nothing new); true when the wait is over and what it missed is logged.
    pub(super) fn await_new_transcript(&self, id: &str) -> bool {
        let Some(path) = self.reading.transcript_named() else {
            return false;
        };
        if std::fs::metadata(&path).is_ok() {
            self.reading.found_transcript(path);
            return false;
        }
        let new = match session::load(&self.ws, &self.reading.session) {
            Ok(s) => s.is_none_or(|s| s.tokens().is_none() && !s.transcript_awaited()),
            Err(_) => false,
        };
        if !new {
            return false;
        }
        let found = await_file_then(&path, id);
        if std::fs::metadata(&path).is_ok() {
            self.reading.found_transcript(path);
            if !found {
                self.log_call_missing(id);
            }
            return true;
        }
        let event = json!({ "session": self.reading.session, "agent": self.reading.agent, "transcript": path.display().to_string() });
        match Batch::open(&self.ws, &self.reading.session, self.reading.config.window) {
            Ok(mut batch) => {
                batch.session_mut().transcript_never_came();
                batch.touch();
                self.log(batch.lock(), "transcript_not_created", event);
                let _ = batch.finish();
            }
            // A record that cannot be read is left as it is; the wait is still logged.
            Err(_) => {
                if let Ok(lock) = self.ws.lock() {
                    self.log(&lock, "transcript_not_created", event);
                }
            }
        }
        true
    }

    /// Waits for the agent to write the transcript up to this event (this module, the
    /// event's mark instead of a call's id); a mark that never shows is logged, and the hook
    /// goes on with what the transcript holds.
    pub(super) fn await_written(&self, mark: &str) {
        let Some(path) = self.reading.transcript_named() else {
            return;
        };
        // A transcript already there is waited on through the event's one open of it.
        let open = match std::fs::metadata(&path).is_ok() {
            true => self.reading.read().ok().flatten(),
            false => None,
        };
        let found = match open {
            Some(read) => {
                let found = await_call_in(read.file(), mark);
                read.refresh();
                found
            }
            None => await_file_then(&path, mark),
        };
        if found {
            return;
        }
        if let Ok(lock) = self.ws.lock() {
            self.log(
                &lock,
                "event_not_in_transcript",
                json!({ "session": self.reading.session, "agent": self.reading.agent, "hook_event": self.reading.payload.event }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn finds_a_call_already_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "{\"id\":\"toolu_1\"}\n").unwrap();
        assert!(await_call(&path, "toolu_1"));
    }

    #[test]
    fn waits_for_a_call_appended_after_the_hook_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "{\"id\":\"toolu_0\"}\n").unwrap();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(40));
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap();
                // The id split across two writes is still found.
                f.write_all(b"{\"id\":\"tool").unwrap();
                f.flush().unwrap();
                std::thread::sleep(Duration::from_millis(40));
                f.write_all(b"u_2\"}\n").unwrap();
            })
        };
        assert!(await_call(&path, "toolu_2"));
        writer.join().unwrap();
    }

    #[test]
    fn finds_a_call_whose_input_is_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let big = "x".repeat(NEAR as usize * 3);
        std::fs::write(
            &path,
            format!("{{\"id\":\"toolu_4\",\"input\":\"{big}\"}}\n"),
        )
        .unwrap();
        assert!(await_call(&path, "toolu_4"));
    }

    #[test]
    fn gives_up_on_a_call_that_never_comes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "{\"id\":\"toolu_0\"}\n").unwrap();
        assert!(!await_call(&path, "toolu_3"));
        assert!(!await_call(&dir.path().join("missing.jsonl"), "toolu_3"));
    }

    #[test]
    fn finds_a_needle_anywhere() {
        assert!(contains(b"abc toolu_9 def", b"toolu_9"));
        assert!(!contains(b"abc toolu_ def", b"toolu_9"));
        assert!(contains(b"toolu_9", b"toolu_9"));
        assert!(!contains(b"", b"x"));
        assert!(contains(b"", b""));
    }
}
