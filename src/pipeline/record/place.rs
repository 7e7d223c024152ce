//! Placing a checkpoint in the state file, in memory: the record fitted to the front matter's
//! limit, the marked block rendered from it, the digest recorded and the record sealed.

use serde_json::json;

use crate::domain::checkpoint::{Checkpoint, Field};
use crate::domain::state::StateFile;
use crate::domain::templates::Templates;
use crate::system::error::Error;

/// Puts a new checkpoint into `sf`: `record` (redacted, not sealed yet) and
/// `history` in the front matter, the marked block rendered from them. The
/// record is fitted to the front matter's limit first (see
/// [`fit_front_matter`]), then records the block's digest and is sealed.
/// Touches no file; returns what was left out to fit.
pub fn place(
    sf: &mut StateFile,
    record: &mut Checkpoint,
    history: &mut serde_json::Value,
    templates: &Templates,
    others: &[crate::domain::lines::OtherLine],
) -> Result<Vec<String>, Error> {
    let (left_out, keys) = seal_in_block(sf, record, history, templates, others)?;
    sf.set_keys(&keys)?;
    Ok(left_out)
}

/// The front matter's keys a placed checkpoint sets (`checkpoint` and `history`).
pub type Keys = [(&'static str, Option<serde_json::Value>); 2];

/// [`place`] up to the front matter: the record fitted, the block rendered into `sf`, the
/// record sealed; returns what was left out and the keys to set with [`StateFile::set_keys`]
/// (which reads the front matter back: a writer can store the sealed record meanwhile).
pub fn seal_in_block(
    sf: &mut StateFile,
    record: &mut Checkpoint,
    history: &mut serde_json::Value,
    templates: &Templates,
    others: &[crate::domain::lines::OtherLine],
) -> Result<(Vec<String>, Keys), Error> {
    let left_out = fit_front_matter(sf, record, history)?;
    let block = templates.render(
        "state.md",
        json!({ "checkpoint": record, "history": history, "other_lines": others }),
    )?;
    // A project's own template may add text of its own.
    sf.set_managed_block(&crate::system::redact::redact(&block))?;
    record.block_digest = sf
        .managed_block()
        .map(crate::domain::state::block_digest)
        .unwrap_or_default();
    let sealed = record.sealed_json();
    Ok((
        left_out,
        [
            ("checkpoint", Some(sealed)),
            ("history", Some(history.clone())),
        ],
    ))
}

/// Makes the record fit the front matter a reader takes back. What ctxkeep
/// gathered on its own gives way first, in this order: the oldest history
/// entries, the observed plan, the rest of what the transcript showed, the
/// oldest done items, the uncommitted paths (counted instead of listed). Returns what was left out;
/// when even the fields given do not fit, refuses naming the largest part.
fn fit_front_matter(
    sf: &StateFile,
    record: &mut Checkpoint,
    history: &mut serde_json::Value,
) -> Result<Vec<String>, Error> {
    let limit = crate::domain::state::MAX_FRONT_MATTER_BYTES;
    // The digests are set after the block is rendered; they have this length.
    let digest_sized = format!("sha256:{}", "0".repeat(64));
    let size = |record: &Checkpoint, history: &serde_json::Value| {
        let mut sealed = record.clone();
        sealed.block_digest = digest_sized.clone();
        sealed.digest = digest_sized.clone();
        sf.front_matter_len_with(&[
            ("checkpoint", Some(&sealed.to_json())),
            ("history", Some(history)),
        ])
    };
    let mut left_out = Vec::new();
    if size(record, history) <= limit {
        return Ok(left_out);
    }
    if let Some(entries) = history.as_array_mut() {
        let total = entries.len();
        while !entries.is_empty() && size(record, &json!(entries)) > limit {
            entries.pop();
        }
        if entries.len() < total {
            left_out.push(format!(
                "{} of {total} history entries",
                total - entries.len()
            ));
        }
    }
    let fits = |record: &Checkpoint| size(record, history) <= limit;
    if !fits(record) {
        if let Some(o) = record.observed.as_mut().filter(|o| !o.plan.is_empty()) {
            o.plan.clear();
            left_out.push("the observed plan".into());
        }
    }
    if !fits(record) && record.observed.take().is_some() {
        left_out.push("what the transcript showed (observed)".into());
    }
    // Finished items are history (the archive keeps them): the oldest go next.
    let done = record.done.len();
    while !fits(record) && !record.done.is_empty() {
        record.done.remove(0);
    }
    if record.done.len() < done {
        left_out.push(format!(
            "the oldest {} of {done} done items",
            done - record.done.len()
        ));
    }
    for at_most in [10, 0] {
        if fits(record) {
            break;
        }
        if let Some(g) = record.git.as_mut().filter(|g| g.dirty.len() > at_most) {
            g.cap_dirty(at_most);
            left_out.push(format!(
                "uncommitted paths past the first {at_most} (counted, not listed)"
            ));
        }
    }
    if fits(record) {
        return Ok(left_out);
    }
    let list = |l: &[String]| l.iter().map(String::len).sum::<usize>();
    let own_keys = sf.front_matter_len_with(&[("checkpoint", None), ("history", None)]);
    // The texts, then the lists (of two equal parts, the later is named).
    let texts = Field::ALL.into_iter().filter(|f| !f.is_list());
    let lists = Field::ALL.into_iter().filter(|f| f.is_list());
    let mut parts: Vec<(String, usize)> = texts
        .chain(lists)
        .map(|f| {
            let bytes = f.text(record).map_or(0, String::len);
            (f.named(), bytes + f.items(record).map_or(0, |l| list(l)))
        })
        .collect();
    parts.push(("the front matter's other keys".into(), own_keys));
    let (part, bytes) = parts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .unwrap_or((Field::Notes.named(), 0));
    Err(Error::data(
        &sf.path,
        format!(
            "the checkpoint does not fit: the front matter would be {} bytes, over the {limit} ctxkeep reads back; the largest part is {part} ({bytes} bytes): shorten it; nothing was written",
            size(record, history)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::domain::checkpoint::Fields;
    use crate::domain::state::{limits, BEGIN_MARKER, END_MARKER};
    use proptest::prelude::*;

    /// `place` as `checkpoint` runs it, in memory: what it and the checks
    /// around it accept, the reader reads back exactly (the fuzz target
    /// `checkpoint_write` holds the same; tests/cli/readback.rs runs the
    /// commands).
    fn placed_reads_back(text: &str, fields: Fields) -> Result<(), TestCaseError> {
        let path = Path::new("project-state.md");
        let Ok(mut sf) = StateFile::from_text(path, text.to_string()) else {
            return Ok(());
        };
        if limits::check_fields(path, &fields).is_err() {
            return Ok(());
        }
        let mut record = Checkpoint {
            id: "ckpt-0002".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            trigger: "manual".into(),
            phase: fields.phase.unwrap_or_default(),
            active_task: fields.active_task.unwrap_or_default(),
            next_action: fields.next_action.unwrap_or_default(),
            notes: fields.notes.unwrap_or_default(),
            decisions: fields.decisions.unwrap_or_default(),
            ..Checkpoint::default()
        };
        let mut history = json!([{"id": "ckpt-0001", "created_at": "t", "phase": record.phase, "next_action": "x"}]);
        let templates = Templates::load(Path::new("."), None).unwrap();
        if place(&mut sf, &mut record, &mut history, &templates, &[]).is_err() {
            return Ok(());
        }
        let written = sf.render();
        if limits::check_text(path, &written, false).is_err() {
            return Ok(());
        }
        let again = StateFile::from_text(path, written.clone())
            .map_err(|e| TestCaseError::fail(format!("{e}\n{written}")))?;
        prop_assert_eq!(
            crate::domain::state::seal(&again),
            Some(crate::domain::state::Seal::Intact)
        );
        prop_assert!(crate::domain::state::edited_block(&again).is_none());
        prop_assert_eq!(again.fm.checkpoint.as_ref(), Some(&record));
        let block = again.managed_block().unwrap_or_default();
        prop_assert!(!block.chars().any(limits::is_escaped_control), "{}", block);
        prop_assert!(
            !block.lines().any(limits::looks_like_conflict_marker),
            "{}",
            block
        );
        Ok(())
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z ]{1,8}",
            "\\PC{1,4}",
            prop::sample::select(vec![
                "\0",
                "\x1b",
                "\x07",
                "\r",
                "\r\n",
                "\n",
                "\t",
                "\x7f",
                "\u{85}",
                "\u{2028}",
                "\u{feff}",
                "\n<<<<<<< a\n",
                "\n=======\n",
                "\n>>>>>>> b\n",
                "\n|||||||\n",
                "\n<!-- ctxkeep:end -->\n",
                "\n<!-- ctxkeep:begin -->\n",
                "\n---\n",
                "\n...\n",
                "\"",
                "\\",
                ": ",
                "# ",
                "- ",
                "{{ x }}",
                "{%",
                "&a",
                "*a",
                "no",
            ])
            .prop_map(str::to_string),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => prop::collection::vec(piece(), 0..8).prop_map(|p| p.concat()),
            1 => (piece(), 14_000usize..17_000).prop_map(|(p, n)| p.repeat(n / p.len() + 1)),
        ]
    }

    proptest! {
        #[test]
        fn what_place_accepts_reads_back(
            prose in prop::collection::vec(piece(), 0..6),
            own in prop::option::of("[a-z]{0,8}"),
            phase in prop::option::of(text()),
            task in prop::option::of(text()),
            next in prop::option::of(text()),
            notes in prop::option::of(text()),
            decisions in prop::option::of(prop::collection::vec(text(), 0..4)),
        ) {
            let prose = prose.concat();
            let own = own.map(|v| format!("owner: {v}\n")).unwrap_or_default();
            let text = format!(
                "---\nctxkeep: 1\n{own}---\n{prose}\n{BEGIN_MARKER}\nold\n{END_MARKER}\n"
            );
            let fields = Fields {
                phase, active_task: task, next_action: next, notes, decisions,
                ..Fields::default()
            };
            placed_reads_back(&text, fields)?;
        }
    }
}
