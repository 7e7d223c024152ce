//! Comparing a new checkpoint with the ones before it: whether it records anything new, and
//! whether an older one belongs in the history.

use crate::domain::checkpoint::Checkpoint;

/// The tree of the uncommitted work a checkpoint kept: the same paths with
/// other contents are new work.
fn snapshot_tree(c: &Checkpoint) -> Option<&str> {
    c.git.as_ref()?.snapshot.as_ref().map(|s| s.tree.as_str())
}

/// Whether `new` would record nothing `prev` does not: the same fields the
/// agent writes, the same HEAD and uncommitted paths (and their contents, by
/// the snapshot's tree), and the same observation in everything it records
/// (request, follow-ups, plan, next step, files, commands and their outcomes,
/// what was left open, the agent's summary, the tracker), when it was read aside.
pub(super) fn records_nothing_new(prev: &Checkpoint, new: &Checkpoint) -> bool {
    let dirty = |c: &Checkpoint| -> (Vec<String>, u64) {
        let mut paths: Vec<String> = c
            .git
            .iter()
            .flat_map(|g| g.dirty.iter().map(|d| d.path.clone()))
            .collect();
        crate::system::sorting::sort(&mut paths);
        let omitted = c.git.as_ref().map(|g| g.dirty_omitted).unwrap_or(0);
        (paths, omitted)
    };
    // Everything the observation records but when it was read: a command that passed since,
    // a failure closed, a file worked from or a tracker issue moved is something new.
    let seen = |c: &Checkpoint| {
        c.observed.as_ref().map(|o| {
            let mut v = serde_json::to_value(o).unwrap_or_default();
            if let Some(m) = v.as_object_mut() {
                m.remove("read_at");
                m.remove("carried_from");
                if let Some(r) = m.get_mut("from_summary").and_then(|r| r.as_object_mut()) {
                    r.remove("at");
                }
            }
            v
        })
    };
    prev.phase == new.phase
        && prev.active_task == new.active_task
        && prev.controlling_agent == new.controlling_agent
        && prev.next_action == new.next_action
        && prev.decisions == new.decisions
        && prev.open_questions == new.open_questions
        && prev.notes == new.notes
        && prev.done == new.done
        && prev.remaining == new.remaining
        && head_of(prev) == head_of(new)
        && dirty(prev) == dirty(new)
        && snapshot_tree(prev) == snapshot_tree(new)
        && seen(prev) == seen(new)
}

/// Whether `older` belongs in the history before `newer`: it differs in
/// phase, task, agent, next action or HEAD.
pub(super) fn differs_for_history(older: &Checkpoint, newer: &Checkpoint) -> bool {
    older.phase != newer.phase
        || older.active_task != newer.active_task
        || older.controlling_agent != newer.controlling_agent
        || older.next_action != newer.next_action
        || head_of(older) != head_of(newer)
}

fn head_of(c: &Checkpoint) -> Option<&str> {
    c.git.as_ref().and_then(|g| g.head.as_deref())
}
