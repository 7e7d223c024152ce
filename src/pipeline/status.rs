//! `status`'s report: a session's gauge and stage, the last checkpoint, the
//! last resume and whether the chain is stuck. Reads only; takes no lock.
//! Shared by `status` and the MCP server's `status` tool.

use serde::Serialize;

use crate::domain::checkpoint::{CheckpointRef, MergedLine};
use crate::domain::config::Config;
use crate::domain::session;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::pipeline::tracking::{Fired, Report};
use crate::system::output::{fmt_num, gauge, thousands, Output};

#[derive(Debug, Serialize)]
pub struct StatusReport {
    #[serde(flatten)]
    pub report: Report,
    /// False when the session was never tracked.
    pub tracked: bool,
    pub updated_at: Option<String>,
    pub last_checkpoint: Option<CheckpointRef>,
    /// Loops this session was shown (see `track`, hooks); `gutter` in the JSON, for scripts.
    pub gutter: Vec<crate::transcripts::activity::LoopHit>,
    /// Of them, those still going on: a later passing run of the check ended the others.
    pub gutter_open: Vec<crate::transcripts::activity::LoopHit>,
    /// Times the hooks asked this session's model for a checkpoint between stages.
    pub checkpoint_requests: u32,
    /// The other lines of work the last checkpoint merged in (parallel
    /// agents on other branches or worktrees); empty unless it is a merge.
    pub merged: Vec<MergedLine>,
    /// The last resume's restore was acknowledged (false when there was none).
    pub acknowledged: bool,
    /// The last session opened from a checkpoint (null before the first resume).
    pub last_session: Option<SessionRef>,
    /// Set while the chain is stuck: the last handoffs resumed the same next
    /// action with no new commit, and neither has changed since.
    pub stuck: Option<Stuck>,
    /// When no session was named: the other sessions tracked in this project
    /// within the last [`LIVE_WITHIN_SECS`], newest first.
    pub others: Vec<LiveSession>,
    /// The session's last compaction: what its summary kept of the
    /// checkpoint (null before the first one a hook saw).
    pub last_audit: Option<crate::transcripts::compaction_summary::AuditNote>,
}

/// Another session hooks are tracking now.
#[derive(Debug, Serialize)]
pub struct LiveSession {
    pub session: String,
    pub agent: Option<String>,
    pub tokens: Option<u64>,
    /// The share the stages go by (of the limit, unless `stages: window`).
    pub stage_percent: Option<f64>,
    pub stage: Option<String>,
    pub handoff_due: bool,
    pub updated_at: String,
    /// What its line of work is on: the task of its newest checkpoint, on one short line
    /// (null when it wrote none).
    pub task: Option<String>,
    /// That checkpoint.
    pub checkpoint: Option<String>,
}

/// A session updated this recently is live.
pub const LIVE_WITHIN_SECS: i64 = crate::domain::lines::LIVE_WITHIN_SECS;

#[derive(Debug, Serialize)]
pub struct SessionRef {
    pub number: u64,
    pub started_at: String,
    pub checkpoint: String,
    pub agent: Option<String>,
    pub from_agent: Option<String>,
    pub acknowledged: bool,
}

#[derive(Debug, Serialize)]
pub struct Stuck {
    pub session: u64,
    pub handoffs_without_progress: u32,
    pub next_action: String,
}

/// The report for session `session` (validated here); None: the session
/// most recently tracked in this project (`default` when none was), with the
/// other live ones beside it.
pub fn status(ws: &Workspace, session: Option<&str>, out: &Output) -> anyhow::Result<StatusReport> {
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);
    let (id, others) = match session {
        Some(named) => (session::validate_id(named)?, Vec::new()),
        None => latest_and_live(ws, &config),
    };
    let others = with_tasks(ws, sf.fm.checkpoint.as_ref(), others);
    let s = session::load(ws, &id)?;
    let last_checkpoint = sf.fm.checkpoint.as_ref().map(CheckpointRef::of);
    // The gauge as the pipeline would decide it now (read → decide, applied to nothing): the
    // transcript may have grown since the last hook.
    let now = s
        .as_ref()
        .and_then(|s| crate::pipeline::tracking::decided_now(ws, &sf, &config, s));
    let report = match now.as_ref().or(s.as_ref()) {
        Some(s) => Report::of(s, &config, s.fired().iter().map(Fired::from).collect()),
        None => Report::untracked(&id, &config),
    };
    let chain = crate::handoff::chain::read(ws).unwrap_or_else(|e| {
        out.warn(&format!("the session chain cannot be read: {e}"));
        Default::default()
    });
    let last = chain.last();
    let stuck = last.filter(|l| still_stuck(ws, &sf, l)).map(|l| Stuck {
        session: l.record.number,
        handoffs_without_progress: l.record.handoffs_without_progress,
        next_action: l.record.next_action.clone(),
    });
    let status = StatusReport {
        report,
        tracked: s.is_some(),
        updated_at: s.as_ref().map(|s| s.updated_at().to_string()),
        last_checkpoint,
        gutter: s
            .as_ref()
            .map(|s| s.loops_told().to_vec())
            .unwrap_or_default(),
        gutter_open: s
            .as_ref()
            .map(|s| {
                s.loops_told()
                    .iter()
                    .filter(|h| !s.loops().ended(h))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        checkpoint_requests: s.as_ref().map(|s| s.requests().asked).unwrap_or(0),
        merged: sf
            .fm
            .checkpoint
            .as_ref()
            .map(|c| c.merged.clone())
            .unwrap_or_default(),
        acknowledged: last.is_some_and(|l| l.ack.is_some()),
        last_session: last.map(|l| SessionRef {
            number: l.record.number,
            started_at: l.record.started_at.clone(),
            checkpoint: l.record.checkpoint.clone(),
            agent: l.record.agent.clone(),
            from_agent: l.record.from_agent.clone(),
            acknowledged: l.ack.is_some(),
        }),
        stuck,
        others,
        last_audit: s.as_ref().and_then(|s| s.last_audit().cloned()),
    };
    Ok(status)
}

/// The session most recently updated (else `default`), and the others
/// updated within [`LIVE_WITHIN_SECS`], newest first.
fn latest_and_live(ws: &Workspace, config: &Config) -> (String, Vec<LiveSession>) {
    let mut all = session::all(ws);
    let when = |s: &session::Session| chrono::DateTime::parse_from_rfc3339(s.updated_at()).ok();
    // `updated_at` counts whole seconds: sessions tracked in the same second are told apart
    // by when their records were written, which the file system keeps finer.
    let written = |s: &session::Session| {
        std::fs::metadata(session::path(ws, s.id()))
            .and_then(|m| m.modified())
            .ok()
    };
    crate::system::sorting::sort_by_cached_key(&mut all, |s| {
        std::cmp::Reverse((when(s), written(s)))
    });
    let Some(latest) = all.first() else {
        return (session::DEFAULT_SESSION.to_string(), Vec::new());
    };
    let now = crate::system::clock::now();
    let others = all[1..]
        .iter()
        .filter(|s| {
            when(s).is_some_and(|t| {
                (now - t.with_timezone(&chrono::Utc)).num_seconds() <= LIVE_WITHIN_SECS
            })
        })
        .map(|s| LiveSession {
            session: s.id().to_string(),
            agent: s.agent().map(str::to_string),
            tokens: s.tokens(),
            stage_percent: s.stage_percent(config.stages_against),
            stage: crate::context::stages::reached(
                &config.stages,
                s.stage_percent(config.stages_against),
            )
            .map(crate::context::stages::Stage::name),
            handoff_due: s.handoff_due(),
            updated_at: s.updated_at().to_string(),
            task: None,
            checkpoint: None,
        })
        .collect();
    (latest.id().to_string(), others)
}

/// Each live session's line of work: the task of its newest checkpoint.
fn with_tasks(
    ws: &Workspace,
    current: Option<&crate::domain::checkpoint::Checkpoint>,
    mut others: Vec<LiveSession>,
) -> Vec<LiveSession> {
    for o in &mut others {
        if let Some(c) = crate::domain::lines::own(ws, current, &o.session) {
            o.task = Some(crate::domain::lines::brief_task(&c));
            o.checkpoint = Some(c.id);
        }
    }
    others
}

/// The last session was stuck and nothing has moved since: the checkpoint
/// still names the same next action and HEAD is where it was.
fn still_stuck(ws: &Workspace, sf: &StateFile, last: &crate::handoff::chain::Link) -> bool {
    last.record.stuck
        && sf
            .fm
            .checkpoint
            .as_ref()
            .is_some_and(|c| c.next_action.trim() == last.record.next_action)
        && crate::system::git::head(&ws.root).ok().flatten() == last.record.head
}

/// Where the agent compacts and how full that is; stages are measured
/// against it unless the front matter says `stages: window`.
fn limit_line(r: &Report) -> String {
    let of = match r.limit_percent {
        Some(p) if r.limit != r.window => format!("{} % of ", fmt_num(p)),
        _ => String::new(),
    };
    let what = match r.limit_source.as_str() {
        "window" => "the window".to_string(),
        "front-matter" => "set in the front matter".to_string(),
        "default" => "the agent's default".to_string(),
        "observed" => match r.limit_learned_from {
            Some(n) => format!(
                "where the agent compacted on its own before, the median of {n} compaction{}",
                if n == 1 { "" } else { "s" }
            ),
            None => "where the agent compacted on its own before".to_string(),
        },
        other => other.to_string(),
    };
    let mut line = match r.limit_source.as_str() {
        "unknown" => format!(
            "limit: unknown, as the window is; stages measured against the {}\n",
            r.stages_against
        ),
        _ => format!(
            "limit: {of}{} tokens ({what}); stages measured against the {}\n",
            thousands(r.limit),
            r.stages_against
        ),
    };
    if let Some(note) = &r.limit_note {
        line.push_str(&format!("limit note: {note}\n"));
    }
    if let Some(f) = &r.forecast {
        line.push_str(&format!(
            "forecast: about {} tokens a turn, some {} turns left before the limit\n",
            thousands(f.tokens_per_turn),
            f.turns_left
        ));
    }
    line
}

/// The report for people: the gauge, the stage, the last checkpoint and resume.
pub fn human(st: &StatusReport) -> String {
    let r = &st.report;
    let mut text = String::new();
    let gauge_line = match (r.tokens, r.percent) {
        _ if !st.tracked => format!(
            "session {}: nothing tracked yet (window {} tokens); run `ctxkeep track --transcript PATH` or `ctxkeep track --tokens N`",
            shown_id(&r.session),
            thousands(r.window)
        ),
        (Some(t), Some(p)) => format!(
            "session {}: {} {} %  {} / {} tokens ({})",
            shown_id(&r.session),
            gauge(p, 30),
            fmt_num(p),
            thousands(t),
            thousands(r.window),
            r.source.map(|s| s.to_string()).unwrap_or_default()
        ),
        (Some(t), None) if r.window_source == "unknown" => format!(
            "session {}: {} tokens, window unknown (usage passed the {} tokens assumed, without a compaction)",
            r.session,
            thousands(t),
            thousands(r.window),
        ),
        _ => format!(
            "session {}: size unknown since the last compaction (window {} tokens)",
            shown_id(&r.session),
            thousands(r.window)
        ),
    };
    text.push_str(&gauge_line);
    text.push('\n');
    // The window is the limit of a session no agent wrote: nothing to add.
    if st.tracked && (r.limit_source != "window" || r.limit_note.is_some()) {
        text.push_str(&limit_line(r));
    }
    if st.tracked {
        let stage = match &r.stage {
            Some(name) => {
                let action = r
                    .fired
                    .iter()
                    .find(|f| &f.name == name)
                    .map(|f| format!(" ({})", f.action))
                    .unwrap_or_default();
                format!("{name}{action}")
            }
            None => "below every stage".into(),
        };
        text.push_str(&format!("stage: {stage}\n"));
        for hit in &st.gutter_open {
            text.push_str(&match hit {
                crate::transcripts::activity::LoopHit::SameFailure { command, count, .. } => {
                    format!("loop: `{command}` failed {count} times in a row\n")
                }
                crate::transcripts::activity::LoopHit::SameFile { path, count, .. } => {
                    format!("loop: {path} changed {count} times, the checks failing the same way\n")
                }
                crate::transcripts::activity::LoopHit::Oscillation { path, count } => {
                    format!("loop: {path} went back and forth ({count} times the same change)\n")
                }
                crate::transcripts::activity::LoopHit::Blocked {
                    command,
                    count,
                    path,
                    ..
                } => format!(
                    "loop: `{command}` failed {count} times while {path} was changed before each\n"
                ),
            });
        }
        if st.checkpoint_requests > 0 {
            text.push_str(&format!(
                "checkpoint requests: {} (at commits, plan items, long stretches)\n",
                st.checkpoint_requests
            ));
        }
        if let Some(updated) = &st.updated_at {
            let age = crate::system::clock::age(updated).unwrap_or_else(|| updated.clone());
            text.push_str(&format!("updated: {age} ago\n"));
        }
    }
    match &st.last_checkpoint {
        Some(c) => {
            let age = crate::system::clock::age(&c.created_at)
                .map(|a| format!("{a} ago"))
                .unwrap_or_else(|| c.created_at.clone());
            text.push_str(&format!("last checkpoint: {} ({age})\n", c.id));
        }
        None => text.push_str("last checkpoint: none yet (`ctxkeep checkpoint`)\n"),
    }
    for m in &st.merged {
        let branch = m
            .branch
            .as_deref()
            .map(|b| format!(" on branch {b}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "merged from another line of work: {}{branch} ({}), next: {}\n",
            m.id, m.controlling_agent, m.next_action
        ));
    }
    if let Some(l) = &st.last_session {
        let age = crate::system::clock::age(&l.started_at)
            .map(|a| format!("{a} ago"))
            .unwrap_or_else(|| l.started_at.clone());
        let ack = if l.acknowledged {
            "acknowledged".to_string()
        } else {
            "not confirmed yet (no reply of the agent has carried the line its prompt asked for)"
                .to_string()
        };
        text.push_str(&format!(
            "last resume: session {} from {} ({age}), {ack}\n",
            l.number, l.checkpoint
        ));
    }
    if let Some(a) = &st.last_audit {
        text.push_str(&a.line(&a.when()));
        text.push('\n');
    }
    if let Some(s) = &st.stuck {
        text.push_str(&format!(
            "stuck: {} handoffs in a row resumed the same next action with no new commit; a new commit or a new next action clears this\n",
            s.handoffs_without_progress
        ));
    }
    if r.handoff_due {
        text.push_str("handoff due: update the checkpoint with the exact next action, then stop; a fresh session starts from `ctxkeep resume`\n");
    }
    for o in &st.others {
        let share = o
            .stage_percent
            .map(|p| format!("{} %", fmt_num(p)))
            .unwrap_or_else(|| "size unknown".into());
        let mut what = vec![share];
        what.extend(o.stage.clone());
        if o.handoff_due {
            what.push("handoff due".into());
        }
        let age = crate::system::clock::age(&o.updated_at).unwrap_or_else(|| o.updated_at.clone());
        let agent = o
            .agent
            .as_deref()
            .map(|a| format!(" ({a})"))
            .unwrap_or_default();
        let task = match (&o.task, &o.checkpoint) {
            (Some(task), Some(id)) => format!("; its line ({id}): {task}"),
            _ => String::new(),
        };
        text.push_str(&format!(
            "also live: session {}{agent}: {}, updated {age} ago{task}\n",
            shown_id(&o.session),
            what.join(", ")
        ));
    }
    text
}

/// A session id as the terminal shows it: the agent chose it, so a control or
/// direction-changing character in it (a right-to-left override would reorder
/// the rest of the line) is written as its `\u{...}` escape, never sent raw.
fn shown_id(id: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
    };
    if !id.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(id);
    }
    std::borrow::Cow::Owned(
        id.chars()
            .map(|c| match hidden(c) {
                true => c.escape_unicode().to_string(),
                false => c.to_string(),
            })
            .collect(),
    )
}
