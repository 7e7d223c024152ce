//! One rule for every writer of `project-state.md`: what is accepted can be
//! read back. The checkpoint by flags, `--from`, the MCP tool, the hooks'
//! automatic checkpoints, relay, `init` and the merge driver all pass what
//! they are about to write through here, so a field, a list or a whole file
//! that a later reader would refuse is refused (or escaped) before anything
//! is written. See docs/reliability.md, "What is accepted can be read back".

use std::path::Path;

use super::{conflicts, front_matter, BEGIN_MARKER, END_MARKER};
use super::{MAX_FILE_BYTES, MAX_FRONT_MATTER_BYTES};
use crate::domain::checkpoint::{Field, Fields};
use crate::system::error::Error;

/// phase, active_task, controlling_agent, next_action and notes, each, in
/// bytes. Several fields at their limit do not fit the front matter
/// together: the record as a whole is checked too (see `record::place`).
pub const MAX_FIELD_BYTES: usize = 16 * 1024;
/// Items in decisions, and in open_questions.
pub const MAX_LIST_ITEMS: usize = 100;
/// All items of one list together, in bytes.
pub const MAX_LIST_BYTES: usize = 16 * 1024;
/// A trigger is one word.
pub const MAX_TRIGGER_BYTES: usize = 64;
/// Uncommitted paths a checkpoint lists; the rest are counted.
pub const MAX_DIRTY_LISTED: usize = 100;

/// The record's text fields, by name.
fn text_fields(f: &Fields) -> [(Field, Option<&String>); 5] {
    [
        (Field::Phase, f.phase.as_ref()),
        (Field::ActiveTask, f.active_task.as_ref()),
        (Field::ControllingAgent, f.controlling_agent.as_ref()),
        (Field::NextAction, f.next_action.as_ref()),
        (Field::Notes, f.notes.as_ref()),
    ]
}

/// Refuses fields given for a checkpoint (by flags, `--from`, the MCP tool,
/// relay) that a reader could not take back, or that would crowd the front
/// matter: a text over its limit, a list too long, an empty list item.
/// `path` is the state file, which stays as it was.
pub fn check_fields(path: &Path, fields: &Fields) -> Result<(), Error> {
    let refuse = |msg: String| Err(Error::data(path, format!("{msg}; nothing was written")));
    for (field, value) in text_fields(fields) {
        if let Some(v) = value.filter(|v| v.len() > MAX_FIELD_BYTES) {
            return refuse(format!(
                "{} is {} bytes, over the {MAX_FIELD_BYTES} a checkpoint field keeps; shorten it (a long text belongs in a file the note names)",
                field.named(),
                v.len()
            ));
        }
    }
    for (field, list) in [
        (Field::Decisions, &fields.decisions),
        (Field::OpenQuestions, &fields.open_questions),
        (Field::Done, &fields.done),
        (Field::Remaining, &fields.remaining),
    ] {
        let Some(list) = list else { continue };
        if list.len() > MAX_LIST_ITEMS {
            return refuse(format!(
                "{} has {} items, over the {MAX_LIST_ITEMS} a checkpoint keeps; keep those the next reader needs",
                field.named(),
                list.len()
            ));
        }
        if let Some(i) = list.iter().position(|item| item.trim().is_empty()) {
            let clear = match field {
                Field::Done => String::new(),
                _ => format!(", or clear the list with {}", clear_flag(field)),
            };
            return refuse(format!(
                "{} item {} is empty; give each item some text{clear}",
                field.named(),
                i + 1,
            ));
        }
        check_list_bytes(field, list).or_else(refuse)?;
    }
    Ok(())
}

fn check_list_bytes(field: Field, list: &[String]) -> Result<(), String> {
    let total: usize = list.iter().map(String::len).sum();
    if total > MAX_LIST_BYTES {
        return Err(format!(
            "{} holds {total} bytes in all, over the {MAX_LIST_BYTES} a checkpoint keeps; shorten or drop items",
            field.named()
        ));
    }
    Ok(())
}

/// Refuses the remaining items a checkpoint by hand would hold once the
/// given ones are added to those carried over: past [`MAX_LIST_ITEMS`]
/// items or [`MAX_LIST_BYTES`]. (`done` keeps its newest items within the
/// same limits: see the `actions` module.)
pub fn check_remaining(path: &Path, remaining: &[String]) -> Result<(), Error> {
    let refuse = |msg: String| Error::data(path, format!("{msg}; nothing was written"));
    if remaining.len() > MAX_LIST_ITEMS {
        return Err(refuse(format!(
            "{} would have {} items, over the {MAX_LIST_ITEMS} a checkpoint keeps; mark items done with --done, or start the list again with --clear-remaining",
            Field::Remaining.named(),
            remaining.len()
        )));
    }
    check_list_bytes(Field::Remaining, remaining).map_err(refuse)
}

/// The flag that empties a list.
pub fn clear_flag(field: Field) -> &'static str {
    match field {
        Field::Decisions => "--clear-decisions",
        Field::Remaining => "--clear-remaining",
        _ => "--clear-questions",
    }
}

/// Refuses a trigger a reader would stumble on (it is one word).
pub fn check_trigger(trigger: &str) -> Result<(), Error> {
    if trigger.is_empty()
        || trigger.contains(char::is_whitespace)
        || trigger.len() > MAX_TRIGGER_BYTES
    {
        return Err(Error::Usage(format!(
            "--trigger takes one word of at most {MAX_TRIGGER_BYTES} bytes, e.g. manual or pre-compact"
        )));
    }
    Ok(())
}

/// Checks the whole text a writer is about to put at `path` with the
/// reader's own limits: the file's size, no NUL byte, no line that reads as
/// a git conflict marker (unless `conflicts_allowed`: the merge driver
/// leaves markers on purpose when it cannot settle), the front matter's size.
pub fn check_text(path: &Path, text: &str, conflicts_allowed: bool) -> Result<(), Error> {
    let refuse = |msg: String| Err(Error::data(path, format!("{msg}; nothing was written")));
    if text.len() as u64 > MAX_FILE_BYTES {
        return refuse(format!(
            "the file would be {} bytes, over the {MAX_FILE_BYTES} ctxkeep reads back; shorten your prose or the checkpoint",
            text.len()
        ));
    }
    if let Some(at) = text.find('\0') {
        return refuse(format!("the file would hold a NUL byte (at offset {at})"));
    }
    if !conflicts_allowed {
        let regions = conflicts::regions(text);
        if !regions.is_empty() {
            return refuse(format!(
                "the file would hold lines that read as git conflict markers ({})",
                conflicts::describe(&regions)
            ));
        }
    }
    let rest = text.strip_prefix('\u{feff}').unwrap_or(text);
    match front_matter::split(path, rest) {
        Err(Error::TooLarge { size, .. }) => refuse(format!(
            "the front matter would be {} bytes, over the {MAX_FRONT_MATTER_BYTES} ctxkeep reads back",
            size.unwrap_or_default()
        )),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
    }
}

/// The marked block's content made safe to write: no line a reader takes
/// for one of ctxkeep's markers or git's conflict markers, and no control
/// character written raw. Text is kept visible: a marker line's `<!--`
/// becomes `&lt;!--` (rendered the same), a conflict-marker line gets a
/// leading `\` (Markdown shows it as the plain characters), and a control
/// character (other than tab and newline) is written `\u001B`, as in the
/// front matter.
pub fn escape_block(content: &str) -> String {
    let lf = content.replace("\r\n", "\n");
    let mut out = String::with_capacity(lf.len());
    for line in lf.split_inclusive('\n') {
        let bare = line.trim();
        if bare == BEGIN_MARKER || bare == END_MARKER {
            out.push_str(&line.replacen("<!--", "&lt;!--", 1));
            continue;
        }
        if looks_like_conflict_marker(line) {
            out.push('\\');
        }
        for c in line.chars() {
            if is_escaped_control(c) {
                out.push_str(&format!("\\u{:04X}", c as u32));
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// C0 controls other than tab and newline, DEL and C1: never written raw.
pub fn is_escaped_control(c: char) -> bool {
    let n = c as u32;
    (n < 0x20 && c != '\t' && c != '\n') || (0x7f..=0x9f).contains(&n)
}

/// A line that starts as git's conflict markers do (`<<<<<<<`, `|||||||`,
/// `=======`, `>>>>>>>`, at the start of the line), whatever follows.
pub fn looks_like_conflict_marker(line: &str) -> bool {
    ['<', '|', '=', '>']
        .iter()
        .any(|&m| line.chars().take(7).filter(|&c| c == m).count() == 7)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Fields {
        Fields {
            phase: Some("p".into()),
            ..Fields::default()
        }
    }

    fn refusal(f: Fields) -> String {
        let e = check_fields(Path::new("project-state.md"), &f).unwrap_err();
        assert_eq!(e.exit_code(), 65);
        e.to_string()
    }

    #[test]
    fn fields_over_their_limits_are_refused_by_name() {
        assert!(check_fields(Path::new("s"), &fields()).is_ok());
        let e = refusal(Fields {
            notes: Some("x ".repeat(35_000)),
            ..fields()
        });
        assert!(
            e.contains("notes (--note) is 70000 bytes, over the 16384"),
            "{e}"
        );
        assert!(e.ends_with("nothing was written"), "{e}");
        let e = refusal(Fields {
            phase: Some("p".repeat(MAX_FIELD_BYTES + 1)),
            ..fields()
        });
        assert!(e.contains("phase (--phase) is 16385 bytes"), "{e}");
        let e = refusal(Fields {
            decisions: Some(vec!["d".into(); 20_000]),
            ..fields()
        });
        assert!(e.contains("decisions (--decision) has 20000 items"), "{e}");
        let e = refusal(Fields {
            open_questions: Some(vec!["why?".into(), " ".into()]),
            ..fields()
        });
        assert!(
            e.contains("item 2 is empty") && e.contains("--clear-questions"),
            "{e}"
        );
        let e = refusal(Fields {
            decisions: Some(vec!["d".repeat(MAX_LIST_BYTES / 4); 5]),
            ..fields()
        });
        assert!(e.contains("holds 20480 bytes in all"), "{e}");
        // Exactly at the limits is fine.
        let at = Fields {
            notes: Some("n".repeat(MAX_FIELD_BYTES)),
            decisions: Some(vec!["d".repeat(MAX_LIST_BYTES / 4); 4]),
            ..fields()
        };
        assert!(check_fields(Path::new("s"), &at).is_ok());
    }

    #[test]
    fn the_block_never_holds_markers_or_raw_controls() {
        let note = "a\n<<<<<<< HEAD\nx\n=======\ny\n|||||||\n>>>>>>> b\n<!-- ctxkeep:end -->\nesc\x1b[31m bel\x07 cr\r nul\0 del\x7f\u{85}\ttab\r\n";
        let out = escape_block(note);
        assert_eq!(
            out,
            "a\n\\<<<<<<< HEAD\nx\n\\=======\ny\n\\|||||||\n\\>>>>>>> b\n&lt;!-- ctxkeep:end -->\nesc\\u001B[31m bel\\u0007 cr\\u000D nul\\u0000 del\\u007F\\u0085\ttab\n"
        );
        assert!(conflicts::regions(&out).is_empty());
        assert!(!out.chars().any(is_escaped_control));
        // Marker-like text inside a line, or indented, is left alone.
        assert_eq!(escape_block("see <<<<<<< here\n"), "see <<<<<<< here\n");
        assert_eq!(escape_block(" =======\n"), " =======\n");
    }

    #[test]
    fn a_text_the_reader_would_refuse_is_refused() {
        let p = Path::new("project-state.md");
        assert!(check_text(p, "---\nctxkeep: 1\n---\nbody\n", false).is_ok());
        let big = format!("---\nnotes: {}\n---\n", "x".repeat(MAX_FRONT_MATTER_BYTES));
        let e = check_text(p, &big, false).unwrap_err().to_string();
        assert!(
            e.contains("front matter would be") && e.contains("65536"),
            "{e}"
        );
        let conflicted = "---\nctxkeep: 1\n---\n<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n";
        let e = check_text(p, conflicted, false).unwrap_err().to_string();
        assert!(e.contains("conflict markers (lines 4–8)"), "{e}");
        assert!(check_text(p, conflicted, true).is_ok());
        let e = check_text(p, "---\n---\na\0b", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("NUL"), "{e}");
    }
}
