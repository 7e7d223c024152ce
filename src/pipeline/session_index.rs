//! The session's index ([`crate::transcripts::activity::index`]) on disk: `.ctxkeep/sessions/<id>.index`,
//! beside the session's record. Every hook event with a transcript catches it up with what the
//! transcript gained since the last one; an automatic checkpoint completes its reading of the
//! transcript's tail from it; after a compaction, what remains by the agent's summary is added.
//! A damaged or unreadable index is started afresh: it is a cache of the transcript.

use std::path::{Path, PathBuf};

use crate::agents::Agent;
use crate::domain::workspace::Workspace;
use crate::system::fsutil::{self, Lock};
use crate::transcripts::activity::event_read::{EventRead, LoopsAsk, NewCalls};
use crate::transcripts::activity::index::SessionIndex;
use crate::transcripts::activity::Observed;

/// An index larger than this is not read (it is bounded far below).
const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;

/// Where the index of session `id` is kept.
pub fn path(ws: &Workspace, id: &str) -> PathBuf {
    let name = crate::domain::session::file_name(id);
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    ws.sessions_dir().join(format!("{stem}.index"))
}

thread_local! {
    /// The index this process last read or wrote, with its exact text: an event reads its
    /// index more than once (the catch-up, then the look for a restore's nonce), and parsing
    /// it again cost more than that look's search. Reused only while the file holds the same
    /// bytes, so another process's write is never missed.
    static LAST: std::cell::RefCell<Option<(PathBuf, String, SessionIndex)>> =
        const { std::cell::RefCell::new(None) };
}

/// The transcript's path as the index keeps it (as the session's record does): redacted.
/// Remembered for the last path: an event compares it twice (the catch-up, the look for a
/// restore's nonce), and the secret rules' scan cost more than that look's search.
fn shown(transcript: &Path) -> String {
    thread_local! {
        static SHOWN: std::cell::RefCell<Option<(PathBuf, String)>> =
            const { std::cell::RefCell::new(None) };
    }
    let kept = SHOWN.with_borrow(|last| match last {
        Some((p, shown)) if p == transcript => Some(shown.clone()),
        _ => None,
    });
    kept.unwrap_or_else(|| {
        let shown = crate::system::redact::redact(&transcript.display().to_string()).into_owned();
        SHOWN.set(Some((transcript.to_path_buf(), shown.clone())));
        shown
    })
}

/// The stored index of session `id`; None when there is none or it cannot be read.
pub fn load(ws: &Workspace, id: &str) -> Option<SessionIndex> {
    let (path, text, index, kept) = load_text(ws, id)?;
    if !kept {
        LAST.set(Some((path, text, index.clone())));
    }
    Some(index)
}

/// The stored index of session `id` with the file's path and text, and whether it came from
/// [`LAST`]; one parsed now is not kept there (the catch-up keeps what it ends with, once).
fn load_text(ws: &Workspace, id: &str) -> Option<(PathBuf, String, SessionIndex, bool)> {
    let path = path(ws, id);
    let text = fsutil::read_text(&path, MAX_INDEX_BYTES).ok()?;
    let kept = LAST.with_borrow(|last| match last {
        Some((p, t, index)) if *p == path && *t == text => Some(index.clone()),
        _ => None,
    });
    match kept {
        Some(index) => Some((path, text, index, true)),
        None => {
            let index = serde_json::from_str(&text).ok()?;
            Some((path, text, index, false))
        }
    }
}

fn save(ws: &Workspace, lock: &Lock, id: &str, index: &SessionIndex) -> anyhow::Result<()> {
    let json = serde_json::to_string(index)?;
    let file = path(ws, id);
    write(ws, lock, &file, &json)?;
    LAST.set(Some((file, json, index.clone())));
    Ok(())
}

/// Writes an index's `json` at `path` (under the held lock).
fn write(ws: &Workspace, _held: &Lock, path: &Path, json: &str) -> anyhow::Result<()> {
    fsutil::ensure_dir(&ws.sessions_dir())?;
    // A cache the transcript rebuilds: no fsync on the path every event takes.
    fsutil::replace_cache(path, json.as_bytes())?;
    Ok(())
}

/// Catches the index of session `id` up with the transcript at `transcript` and returns it;
/// None when the transcript cannot be read (the caller reads it the old way).
pub fn catch_up(ws: &Workspace, id: &str, transcript: &Path, agent: Agent) -> Option<SessionIndex> {
    let read = crate::agents::event_read(transcript, Some(agent)).ok()?;
    catch_up_with(ws, id, &read)
}

/// [`catch_up`] from an event's reading of the transcript (the file it already opened).
pub fn catch_up_with(ws: &Workspace, id: &str, read: &EventRead) -> Option<SessionIndex> {
    let lock = ws.lock_only().ok()?;
    catch_up_read(ws, &lock, id, read)
}

fn catch_up_locked(
    ws: &Workspace,
    lock: &Lock,
    id: &str,
    transcript: &Path,
    agent: Agent,
) -> Option<SessionIndex> {
    let read = crate::agents::event_read(transcript, Some(agent)).ok()?;
    catch_up_read(ws, lock, id, &read)
}

/// What the session did, for a checkpoint written under `lock`: the index caught up with the
/// transcript at `transcript`, completing a read of its last [`crate::transcripts::activity::FIRST_WINDOW`]
/// (the recent commands and plan); without a request in the index, the transcript read the
/// old way, back as far as its request (up to [`crate::transcripts::activity::TAIL_BYTES`]). None when the
/// transcript cannot be read.
pub fn observed_locked(
    ws: &Workspace,
    lock: &Lock,
    id: &str,
    transcript: &Path,
    agent: Option<Agent>,
) -> Option<Observed> {
    let read = crate::agents::event_read(transcript, agent).ok()?;
    observed_with(ws, lock, id, &read)
}

/// [`observed_locked`] from an event's reading of the transcript.
pub fn observed_with(ws: &Workspace, lock: &Lock, id: &str, read: &EventRead) -> Option<Observed> {
    let index = catch_up_read(ws, lock, id, read);
    let root = index
        .as_ref()
        .and_then(|i| i.root.clone())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            crate::system::git::toplevel(&ws.root).unwrap_or_else(|_| ws.root.clone())
        });
    let now = crate::system::clock::now();
    let mut observed = match &index {
        // The index holds the request: the tail read need not look further back for it.
        Some(index) if index.request.is_some() => read
            .tail(Some(&root), now, crate::transcripts::activity::FIRST_WINDOW)
            .ok()?,
        _ => read.observe(Some(&root), now).ok()?,
    };
    observed.tracker = crate::transcripts::activity::beads::issues(&root);
    if let Some(index) = &index {
        index.complete(&mut observed);
    }
    Some(observed)
}

pub fn catch_up_read(
    ws: &Workspace,
    lock: &Lock,
    id: &str,
    read: &EventRead,
) -> Option<SessionIndex> {
    catch_up_read_with(ws, lock, id, read, None).map(|(index, _)| index)
}

/// [`catch_up_read`], reading in the same pass the tool calls loop detection asks for, when
/// it can ([`EventRead::gained_with_steps`]): returns them with where its next read starts.
pub fn catch_up_read_with(
    ws: &Workspace,
    lock: &Lock,
    id: &str,
    read: &EventRead,
    loops: Option<LoopsAsk<'_>>,
) -> Option<(SessionIndex, Option<NewCalls>)> {
    let transcript = read.path();
    // Kept as the session's record keeps the transcript's path: redacted.
    let shown = shown(transcript);
    let (file, stored, mut index) = match load_text(ws, id) {
        Some((file, text, index, _)) => (file, Some(text), index),
        None => (path(ws, id), None, SessionIndex::default()),
    };
    if index.transcript != shown {
        // Another transcript for the session (or the first): read it from its start.
        index.transcript = shown;
        index.offset = 0;
    } else if index.offset > 0 && read.mark_at(index.offset) != index.mark {
        // Rewritten rather than appended to: what was read of it no longer holds.
        index = SessionIndex {
            transcript: index.transcript,
            root: index.root,
            from_summary: index.from_summary,
            compactions: index.compactions,
            restored: index.restored,
            noticed: index.noticed,
            ..SessionIndex::default()
        };
    }
    if index.root.is_none() {
        // Paths are shown relative to the repository around the project, as a checkpoint
        // written from the transcript shows them; found once, not on every event.
        let root = crate::system::git::toplevel(&ws.root).unwrap_or_else(|_| ws.root.clone());
        index.root = Some(root.display().to_string());
    }
    let root = index.root.clone().map(PathBuf::from);
    // A first read takes the transcript's past: a compaction there came before ctxkeep
    // followed the session, and no restore owes it anything.
    let first_read = index.offset == 0;
    let compactions_before = first_read.then_some(index.compactions);
    let gained = read
        .gained_with_steps(
            root.as_deref(),
            index.offset,
            crate::system::clock::now(),
            index.agent_asked,
            loops,
        )
        .ok()?;
    let end = gained.end;
    index.add(&gained.observed, &gained.reads);
    if let Some(compactions) = compactions_before {
        index.compactions = compactions;
    }
    if end != index.offset {
        index.offset = end;
        index.mark = read.mark_at(end);
    }
    // Written when its text changed: the comparison the write needs anyway, where keeping a
    // copy of the index as loaded to compare with cost more than the rest of the check.
    let json = serde_json::to_string(&index).ok()?;
    if stored.as_deref() != Some(json.as_str()) {
        write(ws, lock, &file, &json).ok()?;
    }
    LAST.set(Some((file, json, index.clone())));
    Some((index, gained.steps))
}

/// A compaction the transcript showed and no session start answered is given back now
/// ([`SessionIndex::compaction_noticed`]), under the project's `lock`.
pub fn compaction_noticed(ws: &Workspace, lock: &Lock, id: &str) -> anyhow::Result<()> {
    let mut index = load(ws, id).unwrap_or_default();
    index.compaction_noticed();
    save(ws, lock, id, &index)
}

/// A session start after a compaction ([`SessionIndex::restore_started`]): false when it is
/// late for a compaction already given back. Under the project's `lock`; an index that cannot
/// be written leaves the start as it was (not late).
pub fn restore_started(ws: &Workspace, lock: &Lock, id: &str) -> bool {
    let mut index = load(ws, id).unwrap_or_default();
    let on_time = index.restore_started();
    let _ = save(ws, lock, id, &index);
    on_time
}

/// How far past the stored cursor the look for a nonce goes before the cursor is moved.
const ECHO_STEP: u64 = 64 * 1024;

/// Whether the agent echoed `nonce` (the latest restore's) in the transcript, looking only at
/// what it gained since the last look for the same nonce (the cursor is kept in the index;
/// the first look reads the last `scan_bytes`). Under the project's `lock`.
pub fn echoed(
    ws: &Workspace,
    lock: &Lock,
    id: &str,
    read: &EventRead,
    nonce: &str,
    scan_bytes: u64,
) -> Result<bool, crate::system::error::Error> {
    let mut index = load(ws, id).unwrap_or_default();
    let shown = shown(read.path());
    let from = match &index.echo {
        Some(c)
            if index.transcript == shown
                && c.nonce == nonce
                && read.mark_at(c.offset) == c.mark =>
        {
            c.offset
        }
        _ => 0,
    };
    let (found, end) = read.echoes_since(nonce, from, scan_bytes)?;
    // The cursor is written again only once the look has gone this far past it: the events
    // in between read a little more rather than write the index once more each.
    if !found && index.transcript == shown && (from == 0 || end >= from + ECHO_STEP) {
        index.echo = Some(crate::transcripts::activity::index::EchoCursor {
            nonce: nonce.to_string(),
            offset: end,
            mark: read.mark_at(end),
        });
        // A cache: a look that cannot be kept is made again from further back next time.
        let _ = save(ws, lock, id, &index);
    }
    Ok(found)
}

/// After a compaction: what remains by the agent's summary (`summary`'s pending tasks,
/// current work and next step), added once the index has read everything before it, so no
/// older statement replaces the summary's next step.
pub fn note_summary(
    ws: &Workspace,
    id: &str,
    transcript: Option<&Path>,
    agent: Agent,
    summary: &str,
) -> anyhow::Result<()> {
    let Some(remains) = crate::transcripts::compaction_summary::remains::of(
        summary,
        &crate::system::clock::now_rfc3339(),
    ) else {
        return Ok(());
    };
    let lock = ws.lock_only()?;
    let mut index = transcript
        .and_then(|t| catch_up_locked(ws, &lock, id, t, agent))
        .or_else(|| load(ws, id))
        .unwrap_or_default();
    // A step the agent stated after the compaction is newer than what its summary says
    // remains (read late: a compaction no hook announced, a host's late hook).
    let read = index.summary_noted();
    let compacted_at = index.compacted_at.clone().filter(|_| read);
    let stated_since = crate::transcripts::activity::line_time::later(
        index.next_step_at.as_deref(),
        compacted_at.as_deref(),
    ) && !index.next_step_from_plan;
    let summary_next = remains.next_step.as_deref().or(remains.pending.as_deref());
    if let Some(next) = summary_next.filter(|_| !stated_since) {
        index.next_step = Some(crate::transcripts::activity::text::cut(
            next,
            crate::transcripts::activity::text::MAX_NEXT_STEP_CHARS,
        ));
        // Said at the compaction: its line's time when read, else when the summary came.
        index.next_step_at = compacted_at.or_else(|| Some(remains.at.clone()));
        index.next_step_from_plan = false;
        // The summary says what remains after the plan last changed: it is the newer word.
        index.next_step_newer_than_plan = !index.plan.is_empty();
    }
    index.from_summary = Some(remains);
    save(ws, &lock, id, &index)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;

    fn line(root: &Path, ty: &str, message: serde_json::Value) -> String {
        json!({"parentUuid": "p", "isSidechain": false, "cwd": root, "sessionId": "s-1",
               "type": ty, "message": message, "uuid": "u",
               "timestamp": "2026-11-27T19:00:00.000Z"})
        .to_string()
            + "\n"
    }

    fn prompt(root: &Path, text: &str) -> String {
        line(root, "user", json!({"role": "user", "content": text}))
    }

    /// A tool call and its result; `output` bytes of result.
    fn call(root: &Path, id: &str, tool: &str, input: serde_json::Value, output: usize) -> String {
        line(
            root,
            "assistant",
            json!({"model": "claude-opus-4-6", "id": format!("msg_{id}"), "role": "assistant",
                   "content": [{"type": "tool_use", "id": id, "name": tool, "input": input}],
                   "usage": {"input_tokens": 1000, "output_tokens": 5}}),
        ) + &line(
            root,
            "user",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                   "content": "x".repeat(output), "is_error": false}]}),
        )
    }

    fn edit(root: &Path, id: &str, file: &str) -> String {
        call(root, id, "Edit", json!({"file_path": root.join(file)}), 10)
    }

    fn append(path: &Path, text: &str) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    fn catch_up(ws: &Workspace, path: &Path) -> SessionIndex {
        let read = crate::agents::event_read(path, Some(Agent::ClaudeCode)).unwrap();
        catch_up_with(ws, "s-1", &read).expect("caught up")
    }

    /// `text` at `hh_mm` (the test's other lines are at 19:00).
    fn timed(text: String, hh_mm: &str) -> String {
        text.replace(
            "2026-11-27T19:00:00.000Z",
            &format!("2026-11-27T{hh_mm}:00.000Z"),
        )
    }

    const REMAINS: &str = "Summary:\n1. Primary Request and Intent:\n   Port the reader.\n\n7. Pending Tasks:\n   - Run the reader tests\n\n8. Optional Next Step:\n   Run the reader tests.";

    #[test]
    fn a_step_stated_after_the_compaction_read_beats_its_summarys_remains() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let root = dir.path();
        let t = dir.path().join("t.jsonl");
        let mut summary: serde_json::Value = serde_json::from_str(&prompt(root, REMAINS)).unwrap();
        summary["isCompactSummary"] = json!(true);
        let said = |text: &str| {
            line(
                root,
                "assistant",
                json!({"model": "claude-opus-4-6", "id": "m", "role": "assistant",
                       "content": [{"type": "text", "text": text}]}),
            )
        };
        // The index follows the session from its start; the compaction comes later.
        std::fs::write(&t, prompt(root, "Port the reader")).unwrap();
        catch_up(&ws, &t);
        append(
            &t,
            &(timed(summary.to_string() + "\n", "19:05")
                + &timed(said("The tests pass. Next: commit the port."), "19:10")),
        );
        // The compaction came to be noted late (no hook announced it): the newer step holds.
        note_summary(&ws, "s-1", Some(&t), Agent::ClaudeCode, REMAINS).unwrap();
        let index = load(&ws, "s-1").unwrap();
        assert_eq!(index.next_step.as_deref(), Some("commit the port."));
        assert_eq!(index.next_step_at.as_deref(), Some("2026-11-27T19:10:00Z"));
        assert!(index.from_summary.is_some());

        // Noted at the compaction, before its lines are written: the summary's step wins.
        let t2 = dir.path().join("t2.jsonl");
        std::fs::write(
            &t2,
            prompt(root, "Port the reader") + &said("Next: read the old reader."),
        )
        .unwrap();
        note_summary(&ws, "s-2", Some(&t2), Agent::ClaudeCode, REMAINS).unwrap();
        let index = load(&ws, "s-2").unwrap();
        assert_eq!(index.next_step.as_deref(), Some("Run the reader tests."));
        assert!(index.next_step_at.is_some());
    }

    #[test]
    fn the_index_is_kept_across_events_and_each_reads_from_the_stored_offset() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let root = dir.path();
        let t = dir.path().join("t.jsonl");
        std::fs::write(
            &t,
            prompt(root, "Port the reader") + &edit(root, "e1", "src/a.rs"),
        )
        .unwrap();
        let first = catch_up(&ws, &t);
        assert_eq!(first.offset, std::fs::metadata(&t).unwrap().len());
        assert_eq!(load(&ws, "s-1").as_ref(), Some(&first), "stored on disk");
        append(&t, &edit(root, "e2", "src/b.rs"));
        let second = catch_up(&ws, &t);
        assert_eq!(second.request.as_deref(), Some("Port the reader"));
        assert_eq!(second.changed, ["src/a.rs", "src/b.rs"]);
        assert_eq!(second.offset, std::fs::metadata(&t).unwrap().len());
        // An event that finds nothing new leaves the stored index as it was, not even
        // written again (a write replaces the file: another inode).
        #[cfg(unix)]
        let inode =
            || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path(&ws, "s-1")).unwrap());
        #[cfg(unix)]
        let before = inode();
        assert_eq!(catch_up(&ws, &t), second);
        assert_eq!(load(&ws, "s-1"), Some(second));
        #[cfg(unix)]
        assert_eq!(inode(), before, "the unchanged index was written again");
    }

    #[test]
    fn an_index_another_process_rewrote_is_read_anew_not_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let root = dir.path();
        let t = dir.path().join("t.jsonl");
        std::fs::write(&t, prompt(root, "Port the reader")).unwrap();
        let first = catch_up(&ws, &t);
        assert_eq!(load(&ws, "s-1").as_ref(), Some(&first));
        // Another process's write (same length, other bytes): what this one kept is stale.
        let mut other = first.clone();
        other.request = Some("Port the writer".into());
        let json = serde_json::to_string(&other).unwrap();
        std::fs::write(path(&ws, "s-1"), json).unwrap();
        assert_eq!(load(&ws, "s-1"), Some(other));
        // A damaged index is none, whatever was read before.
        std::fs::write(path(&ws, "s-1"), "{").unwrap();
        assert_eq!(load(&ws, "s-1"), None);
    }

    #[test]
    fn a_rewritten_or_truncated_transcript_is_read_again_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let root = dir.path();
        let t = dir.path().join("t.jsonl");
        std::fs::write(
            &t,
            prompt(root, "Port the reader") + &edit(root, "e1", "src/a.rs"),
        )
        .unwrap();
        catch_up(&ws, &t);
        // Rewritten with other content, longer than the stored offset.
        std::fs::write(
            &t,
            prompt(root, "Write the changelog")
                + &edit(root, "x1", "CHANGELOG.md")
                + &edit(root, "x2", "docs/notes.md"),
        )
        .unwrap();
        let index = catch_up(&ws, &t);
        assert_eq!(index.request.as_deref(), Some("Write the changelog"));
        assert_eq!(index.changed, ["CHANGELOG.md", "docs/notes.md"]);
        // Truncated below the offset.
        std::fs::write(&t, edit(root, "y1", "src/c.rs")).unwrap();
        let index = catch_up(&ws, &t);
        assert_eq!(index.changed, ["src/c.rs"]);
        assert_eq!(index.offset, std::fs::metadata(&t).unwrap().len());
    }

    #[test]
    fn the_nonce_is_looked_for_only_in_what_the_transcript_gained() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let root = dir.path();
        let t = dir.path().join("t.jsonl");
        std::fs::write(&t, prompt(root, "run `ctxkeep ack 48213907` to confirm")).unwrap();
        catch_up(&ws, &t);
        let look = |ws: &Workspace| {
            let read = crate::agents::event_read(&t, Some(Agent::ClaudeCode)).unwrap();
            let lock = ws.lock_only().unwrap();
            echoed(ws, &lock, "s-1", &read, "48213907", 1 << 20).unwrap()
        };
        assert!(!look(&ws), "the injected prompt is not an echo");
        let len = std::fs::metadata(&t).unwrap().len();
        let cursor = load(&ws, "s-1").unwrap().echo.expect("the look's cursor");
        assert_eq!((cursor.nonce.as_str(), cursor.offset), ("48213907", len));
        // A little more: read from the cursor, which stays; far more: the cursor moves on.
        append(&t, &edit(root, "e1", "src/a.rs"));
        assert!(!look(&ws));
        assert_eq!(load(&ws, "s-1").unwrap().echo.unwrap().offset, len);
        append(
            &t,
            &call(root, "r1", "Read", json!({"file_path": "x"}), 80 * 1024),
        );
        assert!(!look(&ws));
        let len = std::fs::metadata(&t).unwrap().len();
        assert_eq!(load(&ws, "s-1").unwrap().echo.unwrap().offset, len);
        // A reply being written: looked at again once whole.
        let reply = line(
            root,
            "assistant",
            json!({"model": "claude-opus-4-6", "id": "m", "role": "assistant",
                   "content": [{"type": "text", "text": "Restored; acknowledging 48213907."}],
                   "usage": {"input_tokens": 7, "output_tokens": 5}}),
        );
        let (head, rest) = reply.split_at(reply.len() - 10);
        append(&t, head);
        assert!(!look(&ws));
        assert_eq!(load(&ws, "s-1").unwrap().echo.unwrap().offset, len);
        append(&t, rest);
        assert!(look(&ws));
    }

    #[test]
    fn a_file_edited_far_back_and_the_far_prompt_are_in_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let root = dir.path();
        let t = dir.path().join("t.jsonl");
        std::fs::write(
            &t,
            prompt(root, "Port every module to the new reader") + &edit(root, "e0", "src/early.rs"),
        )
        .unwrap();
        append(
            &t,
            &call(
                root,
                "b0",
                "Bash",
                json!({"command": "cargo test --lib"}),
                10,
            ),
        );
        // The session's hooks see it grow: 3 MiB of reads after the early edit.
        catch_up(&ws, &t);
        for i in 0..12 {
            let reads: String = (0..16)
                .map(|j| {
                    call(
                        root,
                        &format!("r{i}_{j}"),
                        "Read",
                        json!({"file_path": root.join(format!("src/m{j}.rs"))}),
                        16 * 1024,
                    )
                })
                .collect();
            append(&t, &reads);
            catch_up(&ws, &t);
        }
        append(&t, &edit(root, "e9", "src/late.rs"));
        assert!(
            std::fs::metadata(&t).unwrap().len() > 3 * crate::transcripts::activity::FIRST_WINDOW
        );
        let lock = ws.lock_only().unwrap();
        let read = crate::agents::event_read(&t, Some(Agent::ClaudeCode)).unwrap();
        let observed = observed_with(&ws, &lock, "s-1", &read).expect("observed");
        assert_eq!(
            observed.request.as_deref(),
            Some("Port every module to the new reader")
        );
        assert_eq!(observed.files, ["src/late.rs", "src/early.rs"]);
        // Read again and again without a change: worked from.
        assert!(observed.worked_from.contains(&"src/m0.rs".to_string()));
        // No command in the tail: the last ones the index saw.
        assert_eq!(observed.commands.len(), 1);
        assert_eq!(observed.commands[0].command, "cargo test --lib");
    }
}
