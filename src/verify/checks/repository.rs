//! CK5xx git: the recorded HEAD must exist, should be current, and the
//! working tree should hold no changes the checkpoint does not describe.
//! Without git (not installed, not a repository) these checks are skipped
//! with a note, never failed.

use super::{Finding, Locator, Outcome, Repo, Severity, Subject};
use crate::domain::checkpoint::Checkpoint;
use crate::system::git;

/// `.gitattributes` is committed, the driver's definition is not (git keeps
/// it in each clone's own config): a clone that lacks it merges the file as
/// plain text, conflicts in the front matter included.
fn merge_driver(repo: &Repo) -> Option<Finding> {
    let attributes = std::fs::read_to_string(repo.top.join(".gitattributes")).ok()?;
    if !crate::domain::merge::names_driver(&attributes) {
        return None;
    }
    let key = format!("merge.{}.driver", crate::domain::merge::DRIVER);
    if git::config_get(&repo.top, &key).ok()?.is_some() {
        return None;
    }
    Some(Finding::new(
        "CK510",
        Severity::Warning,
        Some("git"),
        format!("`.gitattributes` names ctxkeep's merge driver, but this clone's git config does not define it (`{key}`), so git merges project-state.md as plain text; run `ctxkeep init` once in this clone"),
    ))
}

/// How many undescribed paths a message lists before "and N more".
const LIST_AT_MOST: usize = 5;

pub fn check(c: &Checkpoint, s: &Subject, repo: &Repo, loc: &Locator, out: &mut Outcome) {
    if let Some(why) = &repo.no_git {
        out.notes
            .push(format!("git checks skipped: {why} (CK501–CK503 not run)"));
        return;
    }
    // The merge driver's definition is this clone's own config (a warning at most: its
    // config is not read when only errors are wanted).
    if let Some(f) = (!s.staged && !s.errors_only)
        .then(|| merge_driver(repo))
        .flatten()
    {
        // A CI checkout never merges: there it is only a note.
        match std::env::var_os("CI").filter(|v| !v.is_empty()) {
            Some(_) => out.notes.push(format!("{} ({})", f.message, f.code)),
            None => out.findings.push(f),
        }
    }
    let Some(then) = &c.git else {
        out.notes.push(format!(
            "git checks skipped: {} records no git state (it was written without git); run `ctxkeep checkpoint` in the repository",
            c.id
        ));
        return;
    };
    let now = match git::state(&repo.top, &[]) {
        Ok(n) => n,
        Err(why) => {
            out.notes.push(format!("git checks skipped: {why}"));
            return;
        }
    };
    let state_rel = repo.state_rel.to_string_lossy().replace('\\', "/");
    let state_dirty = now.dirty.iter().any(|d| d.path == state_rel);
    let head_line = loc.find_in_front("head:").or_else(|| loc.field_line("git"));

    if let Some(head) = &then.head {
        let short: String = head.chars().take(12).collect();
        let is_id = (4..=64).contains(&head.len()) && head.chars().all(|c| c.is_ascii_hexdigit());
        if !is_id || !git::commit_exists(&repo.top, head).unwrap_or(false) {
            if is_id && git::is_shallow(&repo.top).unwrap_or(false) {
                out.notes.push(format!(
                    "recorded HEAD {short} not checked: this is a shallow clone; fetch the history (actions/checkout: `fetch-depth: 0`)"
                ));
            } else {
                out.findings.push(
                    Finding::new(
                        "CK501",
                        Severity::Error,
                        Some("git"),
                        format!(
                            "recorded HEAD {short:?} is unknown to this repository (history rewritten, or written in another clone); run `ctxkeep checkpoint` to record the current state"
                        ),
                    )
                    .at(head_line),
                );
            }
        } else if now.head.as_deref() != Some(head.as_str()) && !s.errors_only {
            stale(c, head, &now.head, repo, state_dirty, head_line, out);
        }
    }

    // A clone of the commit has no uncommitted changes to describe; undescribed ones are
    // an error only under --strict.
    if s.staged || (s.errors_only && !s.strict) {
        return;
    }
    // ctxkeep's own changes are not work a checkpoint should describe.
    let undescribed: Vec<String> = crate::agents::own_files::without_own(&repo.top, &now.dirty)
        .iter()
        .filter(|d| d.path != state_rel && !then.describes(&d.path))
        .map(|d| format!("{} ({})", d.path, d.status))
        .collect();
    if !undescribed.is_empty() {
        let mut list = undescribed[..undescribed.len().min(LIST_AT_MOST)].join(", ");
        if undescribed.len() > LIST_AT_MOST {
            list.push_str(&format!(" and {} more", undescribed.len() - LIST_AT_MOST));
        }
        out.findings.push(
            Finding::new(
                "CK503",
                if s.strict { Severity::Error } else { Severity::Warning },
                Some("git"),
                format!(
                    "{} uncommitted change(s) the checkpoint does not describe: {list}; run `ctxkeep checkpoint` to record them",
                    undescribed.len()
                ),
            )
            .at(loc.field_line("git")),
        );
    }
}

/// CK502: HEAD is not the recorded one. The commit that committed the
/// checkpoint itself does not count: a checkpoint cannot name the commit
/// it is part of, so right after it the record is current, not stale.
fn stale(
    c: &Checkpoint,
    head: &str,
    now: &Option<String>,
    repo: &Repo,
    state_dirty: bool,
    line: Option<usize>,
    out: &mut Outcome,
) {
    let short = |h: &str| h.chars().take(12).collect::<String>();
    let now_short = now
        .as_deref()
        .map(short)
        .unwrap_or_else(|| "nothing".into());
    let mut n = git::commits_since(&repo.top, head).unwrap_or(0);
    if n > 0 && !state_dirty {
        let carrier = git::last_commit_touching(&repo.top, &repo.state_rel)
            .ok()
            .flatten();
        if carrier
            .is_some_and(|cc| cc != head && git::is_ancestor(&repo.top, head, &cc).unwrap_or(false))
        {
            n -= 1;
        }
    }
    let msg = if n > 0 {
        format!(
            "HEAD moved {n} commit(s) since {} was written (recorded {}, now {now_short}): it may be stale; check the next action and run `ctxkeep checkpoint`",
            c.id,
            short(head)
        )
    } else if git::is_ancestor(&repo.top, head, now.as_deref().unwrap_or("HEAD")).unwrap_or(false) {
        return; // only the commit that carries the checkpoint
    } else {
        format!(
            "HEAD is {now_short}, not the recorded {} (reset, or another branch): {} may not match this tree; run `ctxkeep checkpoint`",
            short(head),
            c.id
        )
    };
    out.findings
        .push(Finding::new("CK502", Severity::Warning, Some("git"), msg).at(line));
}
