//! `ctxkeep log [--limit N]`: checkpoints and sessions, newest first, one
//! line each, like `git log --oneline`. Reads only; takes no lock.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::cli::LogArgs;
use crate::domain::checkpoint::{id_number, Archive};
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::system::output::{clip, paint_stdout, Style};

/// One line of the log. Every entry has every key (null where it does not
/// apply), so scripts can rely on the shape.
#[derive(Debug, Serialize)]
struct Entry {
    /// `checkpoint` or `session`.
    kind: &'static str,
    /// `ckpt-0003` or `session-0004`.
    id: String,
    /// When the checkpoint was written or the session started.
    at: String,
    /// The checkpoint itself, or the one the session resumed.
    checkpoint: String,
    agent: Option<String>,
    /// Sessions: the agent it took over from.
    from_agent: Option<String>,
    /// Checkpoints: why it was written.
    trigger: Option<String>,
    next_action: String,
    /// Sessions: whether the restore was acknowledged.
    acknowledged: Option<bool>,
    /// Sessions: whether the chain was stuck at that handoff.
    stuck: Option<bool>,
    /// Checkpoints: the commit holding the uncommitted work then (`ctxkeep restore ID`).
    snapshot: Option<String>,
    /// Merged checkpoints: the other lines of work, `ckpt-0002 (feature)`.
    #[serde(skip)]
    merged: Vec<String>,
}

#[derive(Debug, Serialize)]
struct LogReport {
    entries: Vec<Entry>,
    /// Entries before `--limit`.
    total: usize,
    /// The project's last compaction audit (of any session still recorded):
    /// what the agent's summary kept of the checkpoint.
    last_audit: Option<crate::transcripts::compaction_summary::AuditNote>,
}

pub fn run(args: LogArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let mut entries = checkpoints(&ws, &sf);
    let chain = crate::handoff::chain::read(&ws)?;
    entries.extend(chain.sessions.iter().map(|s| Entry {
        kind: "session",
        id: s.record.id(),
        at: s.record.started_at.clone(),
        checkpoint: s.record.checkpoint.clone(),
        agent: s.record.agent.clone(),
        from_agent: s.record.from_agent.clone(),
        trigger: None,
        snapshot: None,
        next_action: s.record.next_action.clone(),
        merged: Vec::new(),
        acknowledged: Some(s.ack.is_some()),
        stuck: Some(s.record.stuck),
    }));
    // Newest first. Within one second a session follows the checkpoint it
    // resumed and precedes the next checkpoint.
    crate::system::sorting::sort_by_key(&mut entries, |e| {
        let time = chrono::DateTime::parse_from_rfc3339(&e.at)
            .map(|t| t.timestamp())
            .unwrap_or(i64::MIN);
        let session =
            e.id.strip_prefix("session-")
                .and_then(|n| n.parse::<u64>().ok());
        std::cmp::Reverse((
            time,
            id_number(&e.checkpoint).unwrap_or(0),
            session.is_some(),
            session.unwrap_or(0),
        ))
    });
    let total = entries.len();
    if let Some(n) = args.limit {
        entries.truncate(n);
    }
    let last_audit = crate::domain::session::all(&ws)
        .into_iter()
        .filter_map(|s| s.last_audit().cloned())
        .max_by(|a, b| a.at.cmp(&b.at));
    let report = LogReport {
        entries,
        total,
        last_audit,
    };
    ctx.out.json(&report)?;
    if report.entries.is_empty() {
        if total > 0 {
            // `-n 0` asked for none of them; there are some.
            let noun = if total == 1 { "entry" } else { "entries" };
            ctx.out
                .info(&format!("{total} {noun}; --limit 0 shows none of them"));
        } else {
            ctx.out
                .info("no checkpoints or sessions yet; write one with `ctxkeep checkpoint`");
        }
        return Ok(Outcome::Ok);
    }
    let mut text = human(&report.entries);
    if let Some(a) = &report.last_audit {
        let when = a.at.get(..16).unwrap_or(&a.at).replace('T', " ");
        text.push_str(&a.line(&when));
        text.push('\n');
    }
    ctx.out.data(&text)?;
    Ok(Outcome::Ok)
}

/// Checkpoints from the archive, the file's current checkpoint and its
/// history (the file alone in a fresh clone), one entry per id.
fn checkpoints(ws: &Workspace, sf: &StateFile) -> Vec<Entry> {
    let mut by_id: BTreeMap<String, Entry> = BTreeMap::new();
    let full = |c: &crate::domain::checkpoint::Checkpoint| Entry {
        kind: "checkpoint",
        id: c.id.clone(),
        at: c.created_at.clone(),
        checkpoint: c.id.clone(),
        agent: Some(c.controlling_agent.clone()).filter(|a| !a.is_empty()),
        from_agent: None,
        trigger: Some(c.trigger.clone()),
        snapshot: c
            .git
            .as_ref()
            .and_then(|g| g.snapshot.as_ref())
            .map(|s| s.commit.clone()),
        next_action: c.next_action.clone(),
        acknowledged: None,
        stuck: None,
        merged: c
            .merged
            .iter()
            .map(|m| match &m.branch {
                Some(b) => format!("{} ({b})", m.id),
                None => m.id.clone(),
            })
            .collect(),
    };
    let dir = ws.checkpoints_dir();
    let archive = Archive { dir: &dir };
    // A merge under way (or aborted) has archived its checkpoint: it is the project's only
    // once the state file holds it, below.
    for c in archive
        .ids()
        .into_iter()
        .filter(|id| !archive.is_merging(id))
        .filter_map(|id| archive.load(&id).ok())
    {
        by_id.insert(c.id.clone(), full(&c));
    }
    // The file wins over this work tree's archive: after a merge, history
    // may give an id of the archive to the other line's checkpoint.
    for h in sf.fm.history.iter().flatten() {
        if by_id.get(&h.id).is_some_and(|e| e.at == h.created_at) {
            continue;
        }
        by_id.insert(
            h.id.clone(),
            Entry {
                kind: "checkpoint",
                id: h.id.clone(),
                at: h.created_at.clone(),
                checkpoint: h.id.clone(),
                agent: None,
                from_agent: None,
                trigger: None,
                snapshot: None,
                next_action: h.next_action.clone(),
                acknowledged: None,
                stuck: None,
                merged: Vec::new(),
            },
        );
    }
    if let Some(c) = &sf.fm.checkpoint {
        by_id.insert(c.id.clone(), full(c));
    }
    by_id.into_values().collect()
}

fn human(entries: &[Entry]) -> String {
    let width = entries.iter().map(|e| e.id.len()).max().unwrap_or(0);
    let mut s = String::new();
    for e in entries {
        let when = e.at.get(..16).unwrap_or(&e.at).replace('T', " ");
        let mut parts: Vec<String> = Vec::new();
        if e.kind == "session" {
            parts.push(format!("resumed {}", e.checkpoint));
            match (&e.agent, &e.from_agent) {
                (Some(a), Some(f)) => parts.push(format!("{a} (handoff from {f})")),
                (Some(a), None) => parts.push(a.clone()),
                _ => {}
            }
            parts.push(
                if e.acknowledged == Some(true) {
                    "acknowledged"
                } else {
                    "not acknowledged"
                }
                .into(),
            );
            if e.stuck == Some(true) {
                parts.push(paint_stdout(Style::Warn, "stuck"));
            }
        } else {
            if let Some(t) = &e.trigger {
                parts.push(t.clone());
            }
            if let Some(a) = &e.agent {
                parts.push(a.clone());
            }
            if !e.merged.is_empty() {
                parts.push(format!("with {}", e.merged.join(", ")));
            }
            if let Some(commit) = &e.snapshot {
                parts.push(format!(
                    "snapshot {}",
                    clip(commit, 12).trim_end_matches('…')
                ));
            }
            parts.push(format!(
                "next: {}",
                clip(&e.next_action.trim().replace(['\n', '\r'], " "), 60)
            ));
        }
        let id = paint_stdout(Style::Warn, &format!("{:width$}", e.id));
        s.push_str(&format!("{id} {when} {}\n", parts.join(" · ")));
    }
    s
}
