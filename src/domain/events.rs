//! `.ctxkeep/events.jsonl`: one JSON object per line, appended under the lock.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Value};

use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::{self, Lock};

/// Appends `{ts, event, ...fields}`; secrets in any string are redacted.
pub fn append(ws: &Workspace, _held: &Lock, event: &str, fields: Value) -> Result<(), Error> {
    let mut record = json!({ "ts": crate::system::clock::now_rfc3339(), "event": event });
    if let (Value::Object(r), Value::Object(f)) = (&mut record, fields) {
        r.extend(f);
    }
    crate::system::redact::redact_json(&mut record);
    if !usable(ws) {
        return Ok(());
    }
    fsutil::append_line(&ws.events_path(), &record.to_string())
}

/// Said once per process: the log is something other than a file.
static WARNED: AtomicBool = AtomicBool::new(false);

/// Whether the log can be opened to append: a FIFO, socket or device in its
/// place is never opened (a FIFO would block, or swallow the events); that
/// is said once, naming it. A directory is left to the append, which fails
/// with an I/O error the caller reports (a checkpoint's exit 74).
fn usable(ws: &Workspace) -> bool {
    let path = ws.events_path();
    let special = std::fs::metadata(&path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if special && !WARNED.swap(true, Ordering::SeqCst) {
        ws.out.warn(&format!(
            "{}: not a regular file (a FIFO, socket or device); events are not logged until it is removed",
            path.display()
        ));
    }
    !special
}

/// Moves the log to `events.jsonl.1` (replacing an older one) once it has
/// reached `max_bytes`, so it never grows without bound. Returns the size
/// rotated away, if it was. Call under the lock.
pub fn rotate_if_over(ws: &Workspace, _held: &Lock, max_bytes: u64) -> Result<Option<u64>, Error> {
    let Some(size) = over_limit(ws, max_bytes) else {
        return Ok(None);
    };
    let from = ws.events_path();
    let to = rotated_path(ws);
    std::fs::rename(&from, &to).map_err(|e| Error::io(&from, "cannot rotate", e))?;
    Ok(Some(size))
}

/// The log's size when it has reached `max_bytes` (what `rotate_if_over`
/// would rotate).
pub fn over_limit(ws: &Workspace, max_bytes: u64) -> Option<u64> {
    let size = std::fs::metadata(ws.events_path()).ok()?.len();
    (size > 0 && size >= max_bytes).then_some(size)
}

/// Where the previous log goes when it is rotated.
pub fn rotated_path(ws: &Workspace) -> std::path::PathBuf {
    ws.data_dir.join("events.jsonl.1")
}

/// Reads the log, skipping torn or garbage lines; returns the records and
/// how many lines were skipped.
pub fn read_all(ws: &Workspace) -> (Vec<Value>, usize) {
    if !usable(ws) {
        return (Vec::new(), 0);
    }
    let Ok(text) = std::fs::read(ws.events_path()) else {
        return (Vec::new(), 0);
    };
    let mut records = Vec::new();
    let mut skipped = 0;
    for line in fsutil::complete_lines(&text) {
        match serde_json::from_slice::<Value>(line) {
            Ok(v) if v.is_object() => records.push(v),
            _ => skipped += 1,
        }
    }
    (records, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_and_garbage_lines_are_skipped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace {
            state_path: dir.path().join("project-state.md"),
            root: dir.path().to_path_buf(),
            data_dir: dir.path().to_path_buf(),
            lock_timeout: std::time::Duration::from_secs(1),
            out: crate::system::output::Output::SILENT,
        };
        std::fs::write(
            ws.events_path(),
            "{\"event\":\"a\"}\n{\"torn\nnot json\n[1]\n{\"event\":\"b\"}\n{\"event\":\"half",
        )
        .unwrap();
        let (records, skipped) = read_all(&ws);
        assert_eq!(records.len(), 2);
        assert_eq!(records[1]["event"], "b");
        assert_eq!(
            skipped, 3,
            "torn, garbage and non-object lines; the unfinished tail is not counted"
        );
    }
}
