//! The checkpoint and `history` of a three-way merge, as pure functions of
//! the three sides: the same result whichever side is "ours".

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::domain::actions::Actions;
use crate::domain::checkpoint::{digest_of, format_id, id_number, Field, HistoryEntry, MergedLine};

/// `history` keeps at least this many entries (as a checkpoint does), and
/// after a merge every entry either side added since the base.
pub const HISTORY_KEEP: usize = 3;

/// One side's checkpoint (the record as written, unknown keys included)
/// and history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Side {
    pub checkpoint: Option<Value>,
    pub history: Vec<HistoryEntry>,
}

/// What the merge settles for the checkpoint and history.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Keep ours as it is (theirs changed nothing, or the same).
    Ours,
    /// Take theirs as it is (ours changed nothing since the base).
    Theirs,
    /// Both changed: a new merged checkpoint, and the merged history.
    Merged {
        checkpoint: Value,
        history: Vec<HistoryEntry>,
    },
}

/// Merges the checkpoint and history. `now` is the merged checkpoint's
/// `created_at`; its number is above every id of both sides and at least
/// `min_number` (the local archive's next).
pub fn merge(base: &Side, ours: &Side, theirs: &Side, now: &str, min_number: u64) -> Outcome {
    if ours == theirs || theirs == base {
        return Outcome::Ours;
    }
    if ours == base {
        return Outcome::Theirs;
    }
    // Both changed. A side that dropped its checkpoint yields to the other.
    let (o, t) = match (&ours.checkpoint, &theirs.checkpoint) {
        (Some(o), Some(t)) => (o, t),
        (None, Some(_)) => return Outcome::Theirs,
        (Some(_), None) | (None, None) => return Outcome::Ours,
    };

    let ours_first = newer_first(ours, theirs);
    let (newer, older, newer_side) = if ours_first {
        (o, t, ours)
    } else {
        (t, o, theirs)
    };
    // The older checkpoint is in the newer side's past: one line of work.
    let newer_keys: Vec<Key> = entries(newer_side).iter().map(key_of).collect();
    if o != t && brief(older).is_some_and(|b| newer_keys.contains(&key_of(&b))) {
        return if ours_first {
            Outcome::Ours
        } else {
            Outcome::Theirs
        };
    }

    let (mut history, renames, last) = merged_history(base, ours, theirs);
    let rename = |e: &HistoryEntry| renames.get(&key_of(e)).cloned().unwrap_or(e.id.clone());

    if o == t {
        // The same checkpoint on both sides (a cherry-pick); only the
        // history differs.
        let mut c = o.clone();
        if let Some(b) = brief(o) {
            history.retain(|h| key_of(h) != key_of(&b));
            c["id"] = json!(rename(&b));
            reseal(&mut c);
        }
        return Outcome::Merged {
            checkpoint: c,
            history,
        };
    }

    let base_cp = base.checkpoint.as_ref();
    let mut c = newer.clone();
    let obj = c.as_object_mut().expect("a checkpoint record is a mapping");
    obj.remove("digest");
    obj.insert(
        "id".into(),
        json!(format_id(last.max(min_number.saturating_sub(1)) + 1)),
    );
    obj.insert("created_at".into(), json!(now));
    obj.insert("trigger".into(), json!("merge"));
    for list in [Field::Decisions.key(), Field::OpenQuestions.key()] {
        obj.insert(list.into(), json!(union_since(list, newer, older, base_cp)));
    }
    let actions = |c: Option<&Value>| Actions {
        done: strings(c, Field::Done.key()),
        remaining: strings(c, Field::Remaining.key()),
    };
    let items = crate::domain::actions::merge(
        &actions(Some(newer)),
        &actions(Some(older)),
        &actions(base_cp),
    );
    for (field, list) in [
        (Field::Done, items.done),
        (Field::Remaining, items.remaining),
    ] {
        let key = field.key();
        match list.is_empty() {
            true => obj.remove(key),
            false => obj.insert(key.into(), json!(list)),
        };
    }
    // The other line of work, and every line either side had merged in
    // since the base; once each, oldest first.
    let mut lines: Vec<MergedLine> = Vec::new();
    let base_lines = merged_lines(base_cp);
    let mut push = |mut l: MergedLine| {
        let k = (l.created_at.clone(), l.phase.clone(), l.next_action.clone());
        if let Some(id) = renames.get(&k) {
            l.id = id.clone();
        }
        let seen =
            |x: &MergedLine| (x.created_at.clone(), x.phase.clone(), x.next_action.clone()) == k;
        if !lines.iter().any(seen) && !base_lines.iter().any(seen) {
            lines.push(l);
        }
    };
    // A merged checkpoint stands for its lines: when its own fields are
    // already in the newer side's past, only the lines it merged count.
    let older_line = line_of(older);
    let represented = !merged_lines(Some(older)).is_empty()
        && newer_keys
            .iter()
            .any(|(_, phase, next)| *phase == older_line.phase && *next == older_line.next_action);
    if !represented {
        push(older_line);
    }
    for l in merged_lines(Some(newer))
        .into_iter()
        .chain(merged_lines(Some(older)))
    {
        push(l);
    }
    crate::system::sorting::sort_by(&mut lines, |a, b| {
        (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id))
    });
    obj.insert(
        "merged".into(),
        serde_json::to_value(&lines).unwrap_or(json!([])),
    );
    reseal(&mut c);
    Outcome::Merged {
        checkpoint: c,
        history,
    }
}

pub(crate) fn reseal(c: &mut Value) {
    if let Some(obj) = c.as_object_mut() {
        obj.remove("digest");
    }
    let d = digest_of(c);
    if let Some(obj) = c.as_object_mut() {
        obj.insert("digest".into(), json!(d));
    }
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn strings(v: Option<&Value>, key: &str) -> Vec<String> {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The newer side's items, then the older side's added since the base.
fn union_since(key: &str, newer: &Value, older: &Value, base: Option<&Value>) -> Vec<String> {
    let base = strings(base, key);
    let mut out = strings(Some(newer), key);
    for x in strings(Some(older), key) {
        if !out.contains(&x) && !base.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn merged_lines(c: Option<&Value>) -> Vec<MergedLine> {
    c.and_then(|c| c.get("merged"))
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .unwrap_or_default()
}

fn line_of(c: &Value) -> MergedLine {
    MergedLine {
        id: text(c, "id"),
        created_at: text(c, "created_at"),
        branch: c
            .get("git")
            .and_then(|g| g.get("branch"))
            .and_then(Value::as_str)
            .map(str::to_string),
        phase: text(c, Field::Phase.key()),
        active_task: text(c, Field::ActiveTask.key()),
        controlling_agent: text(c, Field::ControllingAgent.key()),
        next_action: text(c, Field::NextAction.key()),
    }
}

fn brief(c: &Value) -> Option<HistoryEntry> {
    c.is_object().then(|| HistoryEntry {
        id: text(c, "id"),
        created_at: text(c, "created_at"),
        phase: text(c, Field::Phase.key()),
        next_action: text(c, Field::NextAction.key()),
    })
}

type Key = (String, String, String);

/// Two entries are the same checkpoint when they were written at the same
/// time with the same phase and next action, whatever id they carry.
fn key_of(e: &HistoryEntry) -> Key {
    (e.created_at.clone(), e.phase.clone(), e.next_action.clone())
}

fn entries(s: &Side) -> Vec<HistoryEntry> {
    s.checkpoint
        .as_ref()
        .and_then(brief)
        .into_iter()
        .chain(s.history.iter().cloned())
        .collect()
}

/// When a side's work was last done: its checkpoint's time, or for a
/// merged checkpoint the newest of the lines it merged.
fn work_time(s: &Side) -> String {
    let Some(c) = &s.checkpoint else {
        return String::new();
    };
    let lines = merged_lines(Some(c));
    if lines.is_empty() {
        return text(c, "created_at");
    }
    s.history
        .iter()
        .map(|h| h.created_at.clone())
        .chain(lines.into_iter().map(|l| l.created_at))
        .max()
        .unwrap_or_default()
}

/// Whether `a`'s checkpoint is the newer: by when its work was done, then
/// its own time, then its id and content, so that the choice is the same
/// whichever side is ours.
fn newer_first(a: &Side, b: &Side) -> bool {
    let rank = |s: &Side| {
        let c = s.checkpoint.clone().unwrap_or(Value::Null);
        (
            work_time(s),
            text(&c, "created_at"),
            id_number(&text(&c, "id")).unwrap_or(0),
            c.to_string(),
        )
    };
    rank(a) >= rank(b)
}

/// Every checkpoint either side knows (their checkpoints and histories),
/// once each, newest first, with ids made unique: in time order, an entry
/// keeps its number when it is above every earlier one, and otherwise is
/// renumbered to the next free number. Returns the history to keep, the
/// new ids by entry, and the highest number used.
fn merged_history(
    base: &Side,
    ours: &Side,
    theirs: &Side,
) -> (Vec<HistoryEntry>, BTreeMap<Key, String>, u64) {
    let base_keys: Vec<Key> = entries(base).iter().map(key_of).collect();
    let mut all: BTreeMap<Key, HistoryEntry> = BTreeMap::new();
    for e in entries(base)
        .into_iter()
        .chain(entries(ours))
        .chain(entries(theirs))
    {
        let k = key_of(&e);
        match all.get(&k) {
            // Of two ids for one checkpoint, the lower (the order is the
            // same whichever side comes first).
            Some(have) if id_order(&have.id) <= id_order(&e.id) => {}
            _ => {
                all.insert(k, e);
            }
        }
    }
    let mut list: Vec<HistoryEntry> = all.into_values().collect();
    crate::system::sorting::sort_by(&mut list, |a, b| {
        (&a.created_at, id_order(&a.id), &a.phase, &a.next_action).cmp(&(
            &b.created_at,
            id_order(&b.id),
            &b.phase,
            &b.next_action,
        ))
    });
    let mut renames = BTreeMap::new();
    let mut last = 0u64;
    for e in &mut list {
        match id_number(&e.id) {
            Some(n) if n > last => last = n,
            _ => {
                last += 1;
                e.id = format_id(last);
            }
        }
        renames.insert(key_of(e), e.id.clone());
    }
    list.reverse();
    let new = list
        .iter()
        .filter(|e| !base_keys.contains(&key_of(e)))
        .count();
    list.truncate(new.max(HISTORY_KEEP));
    (list, renames, last)
}

fn id_order(id: &str) -> (u64, String) {
    (id_number(id).unwrap_or(u64::MAX), id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cp(id: u64, at: &str, next: &str) -> Value {
        let mut c = json!({
            "id": format_id(id), "created_at": at, "trigger": "manual",
            "phase": format!("phase {next}"), "active_task": "t", "controlling_agent": "a",
            "next_action": next, "decisions": [format!("d {next}")], "open_questions": [],
            "remaining": [format!("r {next}"), "the shared step"],
            "done": [format!("r {}", next.chars().rev().collect::<String>())],
        });
        reseal(&mut c);
        c
    }

    /// A line of checkpoints after `start`, one a minute from `minute`.
    fn line(start: &Side, from: u64, minute: u32, steps: &[&str]) -> Side {
        let mut s = start.clone();
        let mut n = from;
        for (i, next) in steps.iter().enumerate() {
            if let Some(b) = s.checkpoint.as_ref().and_then(brief) {
                s.history.insert(0, b);
                s.history.truncate(HISTORY_KEEP);
            }
            n += 1;
            let at = format!("2026-01-15T10:{:02}:{:02}Z", minute, i);
            s.checkpoint = Some(cp(n, &at, next));
        }
        s
    }

    fn ids(c: &Value, h: &[HistoryEntry]) -> Vec<String> {
        std::iter::once(text(c, "id"))
            .chain(h.iter().map(|e| e.id.clone()))
            .collect()
    }

    #[test]
    fn both_lines_are_kept_and_ids_stay_unique() {
        let base = line(&Side::default(), 0, 0, &["start"]);
        let a = line(&base, 1, 10, &["a one"]);
        let mut b = line(&base, 1, 20, &["b one", "b two"]);
        // A key this version does not know comes from the newer side as is.
        let c = b.checkpoint.as_mut().unwrap();
        c["observed"] = json!({"files": ["src/x.rs"]});
        reseal(c);
        let Outcome::Merged {
            checkpoint,
            history,
        } = merge(&base, &a, &b, "2026-01-15T11:00:00Z", 0)
        else {
            panic!("not merged")
        };
        assert_eq!(text(&checkpoint, "next_action"), "b two");
        assert_eq!(text(&checkpoint, "trigger"), "merge");
        assert_eq!(checkpoint["observed"], json!({"files": ["src/x.rs"]}));
        assert_eq!(checkpoint["merged"][0]["next_action"], "a one");
        assert_eq!(
            strings(Some(&checkpoint), "decisions"),
            ["d b two", "d a one"]
        );
        let all = ids(&checkpoint, &history);
        // Everything since the base; the base itself only up to HISTORY_KEEP.
        assert_eq!(all, ["ckpt-0005", "ckpt-0004", "ckpt-0003", "ckpt-0002"]);
        assert_eq!(digest_of(&checkpoint), text(&checkpoint, "digest"));
        // One side unchanged: the other is taken as it is.
        assert_eq!(merge(&base, &base, &b, "x", 0), Outcome::Theirs);
        assert_eq!(merge(&base, &a, &base, "x", 0), Outcome::Ours);
    }

    #[test]
    fn action_items_of_both_lines_are_kept_and_an_item_done_on_one_is_done() {
        let base = line(&Side::default(), 0, 0, &["start"]);
        let a = line(&base, 1, 10, &["a one"]);
        let mut b = line(&base, 1, 20, &["b one"]);
        let c = b.checkpoint.as_mut().unwrap();
        c["done"] = json!(["The shared step."]);
        reseal(c);
        let Outcome::Merged { checkpoint, .. } = merge(&base, &a, &b, "2026-01-15T11:00:00Z", 0)
        else {
            panic!("not merged")
        };
        assert_eq!(
            strings(Some(&checkpoint), "remaining"),
            ["r b one", "r a one"]
        );
        assert_eq!(
            strings(Some(&checkpoint), "done"),
            ["The shared step.", "r eno a"]
        );
        assert_eq!(digest_of(&checkpoint), text(&checkpoint, "digest"));
    }

    /// The checkpoint (without its digest) and history a merge leaves.
    fn fields(o: &Outcome, ours: &Side, theirs: &Side) -> Value {
        let (c, h) = match o {
            Outcome::Merged {
                checkpoint,
                history,
            } => (Some(checkpoint.clone()), history.clone()),
            Outcome::Ours => (ours.checkpoint.clone(), ours.history.clone()),
            Outcome::Theirs => (theirs.checkpoint.clone(), theirs.history.clone()),
        };
        let mut c = c.unwrap_or(Value::Null);
        if let Some(m) = c.as_object_mut() {
            m.remove("digest");
        }
        json!({ "checkpoint": c, "history": h })
    }

    proptest! {
        /// Merging ours into theirs and theirs into ours gives the same
        /// checkpoint fields and history.
        #[test]
        fn merging_is_symmetric(
            base_steps in proptest::collection::vec("[a-c]{1,3}", 0..3),
            a_steps in proptest::collection::vec("[a-c]{1,3}", 1..5),
            b_steps in proptest::collection::vec("[a-c]{1,3}", 1..5),
            a_minute in 10u32..30,
            b_minute in 10u32..30,
        ) {
            let base_refs: Vec<&str> = base_steps.iter().map(String::as_str).collect();
            let base = line(&Side::default(), 0, 0, &base_refs);
            let n = base_steps.len() as u64;
            let a_refs: Vec<&str> = a_steps.iter().map(String::as_str).collect();
            let b_refs: Vec<&str> = b_steps.iter().map(String::as_str).collect();
            let a = line(&base, n, a_minute, &a_refs);
            let b = line(&base, n, b_minute, &b_refs);
            let now = "2026-01-15T12:00:00Z";
            let ab = merge(&base, &a, &b, now, 0);
            let ba = merge(&base, &b, &a, now, 0);
            prop_assert_eq!(fields(&ab, &a, &b), fields(&ba, &b, &a));
            if let Outcome::Merged { checkpoint, history } = &ab {
                let all = ids(checkpoint, history);
                let mut dedup = all.clone();
                dedup.sort();
                dedup.dedup();
                prop_assert_eq!(all.len(), dedup.len(), "{:?}", all);
            }
        }
    }
}
