//! A checkpoint's action items, the seed's checklist: `done` and `remaining`. How a new
//! checkpoint's lists follow from the last one's and from what it is given (by hand, or, for an
//! automatic checkpoint, the agent's plan), and how a merge joins two lines of work's lists.
//! Pure functions: the writer (`pipeline::record`) and the merge driver (`merge::record`) call
//! them.

use crate::domain::checkpoint::Checkpoint;
use crate::domain::state::limits::MAX_LIST_BYTES;
use crate::transcripts::activity::{Observed, PlanStatus};

/// `done` keeps the newest this many items; older ones stay in the archived records.
pub const MAX_DONE: usize = crate::domain::state::limits::MAX_LIST_ITEMS;

/// A checkpoint's two lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actions {
    pub done: Vec<String>,
    pub remaining: Vec<String>,
}

/// What a checkpoint written by hand is given.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given<'a> {
    pub done: &'a [String],
    pub remaining: &'a [String],
    pub clear_remaining: bool,
}

impl Actions {
    pub fn of(c: &Checkpoint) -> Actions {
        Actions {
            done: c.done.clone(),
            remaining: c.remaining.clone(),
        }
    }

    /// What the agent's plan shows: completed items done, the others remaining, in its order.
    pub fn from_plan(o: &Observed) -> Actions {
        // The open items as a reader is shown them: none once the agent has said what remains
        // since the plan last changed.
        let done: Vec<_> = o
            .plan
            .iter()
            .filter(|p| p.status == PlanStatus::Completed)
            .collect();
        let remaining: Vec<_> = o.open_items().collect();
        let text = |v: Vec<&crate::transcripts::activity::PlanItem>| {
            let mut out = Vec::new();
            for p in v {
                add(&mut out, &p.text);
            }
            out
        };
        Actions {
            done: text(done),
            remaining: text(remaining),
        }
    }

    fn is_empty(&self) -> bool {
        self.done.is_empty() && self.remaining.is_empty()
    }

    /// Marks `item` done: added to `done` (once), taken off `remaining`.
    fn finish(&mut self, item: &str) {
        self.remaining.retain(|r| !same_item(r, item));
        add(&mut self.done, item);
    }

    /// `done` within its limits: the oldest items give way.
    fn cap(mut self) -> Actions {
        if self.done.len() > MAX_DONE {
            self.done.drain(..self.done.len() - MAX_DONE);
        }
        while self.done.iter().map(String::len).sum::<usize>() > MAX_LIST_BYTES {
            self.done.remove(0);
        }
        self
    }

    /// `remaining` read from a plan within the limits a writer by hand is held to: the
    /// first items kept.
    fn cap_remaining(mut self) -> Actions {
        self.remaining.truncate(MAX_DONE);
        while self.remaining.iter().map(String::len).sum::<usize>() > MAX_LIST_BYTES {
            self.remaining.pop();
        }
        self.cap()
    }
}

/// Whether two items say the same: case, runs of white space and a closing period aside.
pub fn same_item(a: &str, b: &str) -> bool {
    norm(a) == norm(b)
}

fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches('.')
        .to_lowercase()
}

/// Adds `item` (trimmed) to `list` unless it holds the same already.
fn add(list: &mut Vec<String>, item: &str) {
    let item = item.trim();
    if !item.is_empty() && !list.iter().any(|x| same_item(x, item)) {
        list.push(item.to_string());
    }
}

/// The lists of a checkpoint written by hand: the last checkpoint's, `remaining` emptied first
/// when asked, the remaining items given added (once each, after those kept), and the done
/// items given added to `done` and taken off `remaining`.
pub fn by_hand(prev: &Actions, given: Given) -> Actions {
    let mut next = prev.clone();
    if given.clear_remaining {
        next.remaining.clear();
    }
    for r in given.remaining {
        if !given.done.iter().any(|d| same_item(d, r)) {
            add(&mut next.remaining, r);
        }
    }
    for d in given.done {
        next.finish(d);
    }
    next.cap()
}

/// The lists of an automatic checkpoint, which nobody gives any: read from the agent's plan
/// (`observed`) while the lists are the plan's own, that is, while the last checkpoint's lists
/// are empty or are what its plan gave. Lists the agent wrote itself are kept, and an item of
/// them the plan shows completed moves to `done`. Without a plan, the last lists stand.
pub fn automatic(prev: Option<&Checkpoint>, observed: Option<&Observed>) -> Actions {
    let before = prev.map(Actions::of).unwrap_or_default();
    let Some(o) = observed.filter(|o| !o.plan.is_empty()) else {
        return before;
    };
    let from_plan = Actions::from_plan(o);
    let planned_before = prev
        .and_then(|p| p.observed.as_ref())
        .map(Actions::from_plan)
        .unwrap_or_default();
    if before.is_empty() || before == planned_before {
        return from_plan.cap_remaining();
    }
    let mut next = before;
    let finished: Vec<&String> = next
        .remaining
        .iter()
        .filter(|r| from_plan.done.iter().any(|d| same_item(d, r)))
        .collect();
    for item in finished.into_iter().cloned().collect::<Vec<_>>() {
        next.finish(&item);
    }
    next.cap_remaining()
}

/// Two lines of work's lists after a merge (`newer` is the side whose checkpoint the merge
/// keeps, `base` their common ancestor's): both sides' items once each, the newer side's
/// first; an item either side removed since the base stays removed; an item done on either
/// side is done. The same items whichever side is newer.
pub fn merge(newer: &Actions, older: &Actions, base: &Actions) -> Actions {
    let has = |list: &[String], x: &str| list.iter().any(|y| same_item(x, y));
    let union = |a: &[String], b: &[String], base: &[String]| {
        let mut out = Vec::new();
        for x in a.iter().chain(b) {
            // An item of the base stays only while both sides still hold it.
            if !has(base, x) || (has(a, x) && has(b, x)) {
                add(&mut out, x);
            }
        }
        out
    };
    let done = union(&newer.done, &older.done, &base.done);
    let mut remaining = union(&newer.remaining, &older.remaining, &base.remaining);
    remaining.retain(|r| !done.iter().any(|d| same_item(d, r)));
    Actions { done, remaining }.cap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::activity::PlanItem;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn acts(done: &[&str], remaining: &[&str]) -> Actions {
        Actions {
            done: v(done),
            remaining: v(remaining),
        }
    }

    fn plan(items: &[(&str, PlanStatus)]) -> Observed {
        Observed {
            plan: items
                .iter()
                .map(|(t, s)| PlanItem {
                    text: t.to_string(),
                    status: *s,
                })
                .collect(),
            ..Observed::default()
        }
    }

    #[test]
    fn by_hand_adds_remaining_and_moves_done_items() {
        let prev = acts(
            &["write the lexer"],
            &["add tests for N=0", "run mix credo"],
        );
        let next = by_hand(
            &prev,
            Given {
                done: &v(&["Add tests for  N=0."]),
                remaining: &v(&["commit and push", "run mix credo"]),
                clear_remaining: false,
            },
        );
        assert_eq!(
            next,
            acts(
                &["write the lexer", "Add tests for  N=0."],
                &["run mix credo", "commit and push"]
            )
        );
        let cleared = by_hand(
            &prev,
            Given {
                remaining: &v(&["tag the release"]),
                clear_remaining: true,
                ..Given::default()
            },
        );
        assert_eq!(cleared, acts(&["write the lexer"], &["tag the release"]));
        assert_eq!(
            by_hand(&prev, Given::default()),
            prev,
            "nothing given: kept"
        );
    }

    #[test]
    fn done_keeps_the_newest_items() {
        let prev = Actions {
            done: (0..MAX_DONE).map(|i| format!("step {i}")).collect(),
            remaining: Vec::new(),
        };
        let next = by_hand(
            &prev,
            Given {
                done: &v(&["the last step"]),
                ..Given::default()
            },
        );
        assert_eq!(next.done.len(), MAX_DONE);
        assert_eq!(next.done[0], "step 1");
        assert_eq!(next.done.last().unwrap(), "the last step");
    }

    #[test]
    fn an_automatic_checkpoint_reads_the_plan_unless_the_agent_wrote_the_lists() {
        use PlanStatus::*;
        let o = plan(&[
            ("parse tables", Completed),
            ("recurse into inline tables", InProgress),
            ("document it", Pending),
        ]);
        let first = automatic(None, Some(&o));
        assert_eq!(
            first,
            acts(
                &["parse tables"],
                &["recurse into inline tables", "document it"]
            )
        );
        // The lists came from the plan: a newer plan replaces them.
        let prev = Checkpoint {
            done: first.done.clone(),
            remaining: first.remaining.clone(),
            observed: Some(o.clone()),
            ..Checkpoint::default()
        };
        let later = plan(&[
            ("parse tables", Completed),
            ("recurse into inline tables", Completed),
            ("document it", InProgress),
        ]);
        assert_eq!(
            automatic(Some(&prev), Some(&later)),
            acts(
                &["parse tables", "recurse into inline tables"],
                &["document it"]
            )
        );
        // The agent's own lists stand; an item its plan completed moves to done.
        let own = Checkpoint {
            remaining: v(&["Recurse into inline tables", "release 0.3"]),
            observed: Some(o.clone()),
            ..Checkpoint::default()
        };
        assert_eq!(
            automatic(Some(&own), Some(&later)),
            acts(&["Recurse into inline tables"], &["release 0.3"])
        );
        // No plan: the last lists stand.
        assert_eq!(
            automatic(Some(&own), Some(&Observed::default())),
            Actions::of(&own)
        );
    }

    #[test]
    fn a_merge_keeps_both_sides_items_and_done_wins() {
        let base = acts(&[], &["a", "b", "c"]);
        let ours = acts(&["a"], &["b", "c", "d"]);
        // Theirs finished b and dropped c.
        let theirs = acts(&["B"], &["a", "e"]);
        let m = merge(&ours, &theirs, &base);
        assert_eq!(m, acts(&["a", "B"], &["d", "e"]));
        assert_eq!(merge(&ours, &ours, &base), ours, "the same on both sides");
    }

    proptest::proptest! {
        /// The same items whichever side is newer, done and remaining never share an item, and
        /// an item done on either side is done.
        #[test]
        fn merging_is_symmetric_in_content(
            base in proptest::collection::vec("[a-d]", 0..4),
            a_done in proptest::collection::vec("[a-d]", 0..4),
            a_rem in proptest::collection::vec("[a-d]", 0..4),
            b_done in proptest::collection::vec("[a-d]", 0..4),
            b_rem in proptest::collection::vec("[a-d]", 0..4),
        ) {
            let base = Actions { done: Vec::new(), remaining: base };
            let a = Actions { done: a_done, remaining: a_rem };
            let b = Actions { done: b_done, remaining: b_rem };
            let sorted = |mut v: Vec<String>| { v.sort(); v };
            let ab = merge(&a, &b, &base);
            let ba = merge(&b, &a, &base);
            proptest::prop_assert_eq!(sorted(ab.done.clone()), sorted(ba.done.clone()));
            proptest::prop_assert_eq!(sorted(ab.remaining.clone()), sorted(ba.remaining.clone()));
            for d in a.done.iter().chain(&b.done) {
                proptest::prop_assert!(ab.done.contains(d));
                proptest::prop_assert!(!ab.remaining.contains(d));
            }
        }
    }
}
