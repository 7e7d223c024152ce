//! Applying a usage reading to a session: the stages it crossed fire (once
//! each, with one checkpoint for a jump), those left behind re-arm, and the
//! instructions for the agent are rendered. Shared by `track`, the status
//! line and the agent hooks.

use serde::Serialize;
use serde_json::json;

use crate::context::compaction::StagesAgainst;
use crate::context::stages::{FiredStage, Stage, StageAction};
use crate::context::tokens::Encoding;
use crate::domain::checkpoint::Checkpoint;
use crate::domain::config::Config;
use crate::domain::session::{CountState, Session, Source};
use crate::domain::state::StateFile;
use crate::domain::templates::Templates;
use crate::domain::workspace::Workspace;
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::effects::Reach;
use crate::system::output::Output;

/// What `track --json` prints (and `status --json` builds on).
#[derive(Debug, Serialize)]
pub struct Report {
    pub session: String,
    pub tokens: Option<u64>,
    pub window: u64,
    /// Percent of the window.
    pub percent: Option<f64>,
    /// Tokens at which the agent compacts on its own (the window when no
    /// agent is known); see src/compaction.rs.
    pub limit: u64,
    /// Percent of the limit.
    pub limit_percent: Option<f64>,
    /// Where the limit comes from: `window`, `front-matter`, `default` (the
    /// agent's own), `env:NAME`, `config:PATH`, `observed` (learned from the
    /// agent's own automatic compactions), `unknown`.
    pub limit_source: String,
    /// With `limit_source: observed`: how many compactions the limit was
    /// learned from (their median).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_learned_from: Option<usize>,
    /// Where the window comes from: `option`, `status-line`, `agent`,
    /// `evidence`, `model`, `env:NAME`, `config`, or `unknown` (usage passed
    /// every window known for the model: no percent is given).
    pub window_source: String,
    /// Why a configured limit was not used, when one was not.
    pub limit_note: Option<String>,
    /// What stage percents are of: `limit` or `window`.
    pub stages_against: &'static str,
    pub source: Option<Source>,
    /// The highest stage reached, by name.
    pub stage: Option<String>,
    pub fired: Vec<Fired>,
    pub handoff_due: bool,
    pub messages: Option<u64>,
    /// From the growth of the last turns; absent with too little data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forecast: Option<crate::domain::session::Forecast>,
}

/// A stage in the JSON output.
#[derive(Debug, Clone, Serialize)]
pub struct Fired {
    #[serde(serialize_with = "crate::context::stages::whole_as_integer")]
    pub at: f64,
    pub name: String,
    pub action: StageAction,
    pub checkpoint: Option<String>,
}

impl From<&FiredStage> for Fired {
    fn from(f: &FiredStage) -> Fired {
        Fired {
            at: f.at,
            name: f.name.clone(),
            action: f.action,
            checkpoint: f.checkpoint.clone(),
        }
    }
}

impl Report {
    pub fn of(session: &Session, config: &Config, fired: Vec<Fired>) -> Report {
        Report {
            session: session.id().to_string(),
            tokens: session.tokens(),
            window: session.window(),
            percent: session.percent(),
            limit: session.limit(),
            limit_percent: session.stage_percent(StagesAgainst::Limit),
            limit_source: session.limit_source().to_string(),
            limit_learned_from: session.limit_learned_from(),
            window_source: session.window_source().unwrap_or("config").to_string(),
            limit_note: session.limit_note().map(str::to_string),
            stages_against: stages_against_name(config.stages_against),
            source: Some(session.source()),
            stage: crate::context::stages::reached(
                &config.stages,
                session.stage_percent(config.stages_against),
            )
            .map(Stage::name),
            fired,
            handoff_due: session.handoff_due(),
            messages: session.messages(),
            forecast: session.forecast(),
        }
    }

    /// A session nothing has tracked yet: its window and the limit it would
    /// have without an agent.
    pub fn untracked(id: &str, config: &Config) -> Report {
        let limit = crate::agents::compaction_limit(
            None,
            config.window,
            std::path::Path::new("."),
            Some(&config.compaction),
            None,
        );
        Report {
            session: id.to_string(),
            tokens: None,
            window: config.window,
            percent: None,
            limit: limit.tokens,
            limit_percent: None,
            limit_source: limit.source,
            limit_learned_from: None,
            window_source: "config".to_string(),
            limit_note: limit.note,
            stages_against: stages_against_name(config.stages_against),
            source: None,
            stage: None,
            fired: Vec::new(),
            handoff_due: false,
            messages: None,
            forecast: None,
        }
    }
}

pub fn stages_against_name(a: StagesAgainst) -> &'static str {
    match a {
        StagesAgainst::Limit => "limit",
        StagesAgainst::Window => "window",
    }
}

pub use crate::pipeline::decide::{Reading, TranscriptInfo};

/// What a caller of [`apply`] may set besides the reading.
#[derive(Default, Clone, Copy)]
pub struct Options<'a> {
    /// An explicit window (`--window`), ahead of every other source.
    pub window: Option<u64>,
    /// The session's message count now (`--messages`).
    pub messages: Option<u64>,
    /// Record the token count only: no stage fires or re-arms (the status line,
    /// whose output never reaches the agent; the next hook fires instead).
    pub record_only: bool,
    /// Nothing said now reaches the model (`Stop`, Gemini's `AfterAgent`,
    /// Codex's `notify`): stages fire, but their instruction waits in the
    /// session for the next event that can carry it.
    pub deferred: bool,
    /// The event's open view of the transcript the reading came from: a stage's checkpoint
    /// reads what the session did through it (no second open).
    pub view: Option<&'a crate::pipeline::read::TranscriptView>,
}

/// The outcome of [`apply`]: the session as saved and what happened on the way.
pub struct Applied {
    /// The session as saved, but for loop detection's state (left empty: the batch has it).
    pub session: Session,
    /// The checkpoint that stands after the update (a stage may have
    /// written one): what the stage instructions show as recorded.
    pub recorded: Option<Checkpoint>,
    /// Stages fired by this update, lowest first.
    pub fired: Vec<FiredStage>,
    /// What to say to the model now: the stages fired by this update and
    /// those that waited for an event that can reach it, lowest first
    /// (empty when the update was `deferred`).
    pub to_say: Vec<FiredStage>,
    pub rearmed: Vec<String>,
    pub truncated: bool,
    pub previous_messages: Option<u64>,
    pub transcript: Option<TranscriptInfo>,
    /// The session as it was just before this update, read under the same lock: what a
    /// change (a compaction seen as a drop in usage) is measured from, so two hooks at
    /// once never both see the same change. Its loop detection's state is left out (empty).
    pub previous: Option<Session>,
}

/// Moves session `id` to `reading` under the lock: fires the stages crossed
/// (writing one checkpoint when a stage asks), re-arms those left behind,
/// saves the session and logs the events. Shared by `track` and the agent
/// hooks; never builds a tokenizer unless the reading itself needs one.
pub fn apply(
    ws: &Workspace,
    sf: &StateFile,
    config: &Config,
    id: &str,
    reading: Reading,
    opts: Options<'_>,
    out: &Output,
) -> anyhow::Result<Applied> {
    let mut batch = Batch::open(ws, id, config.window)?;
    let applied = apply_batch(ws, &mut batch, sf, config, reading, opts, out)?;
    batch.finish()?;
    Ok(applied)
}

/// [`apply`] within a batch the caller holds (one lock and one write for its whole event).
pub fn apply_batch(
    ws: &Workspace,
    batch: &mut Batch<'_>,
    sf: &StateFile,
    config: &Config,
    reading: Reading,
    opts: Options<'_>,
    out: &Output,
) -> anyhow::Result<Applied> {
    let had_record = batch.recorded();
    let (lock, s) = batch.parts();
    let applied = apply_in(ws, lock, s, had_record, sf, config, reading, opts, out)?;
    batch.touch();
    Ok(applied)
}

/// [`apply`] on a session the caller loaded under the lock it holds, and writes back once
/// with whatever else its event changed (`crate::pipeline::apply`); `had_record`: the session
/// had a record before this reading. One pass of the pipeline: read (the limit for the window
/// and model the reading is measured at, `read::usage_read`), decide
/// (`decide::UsageRead::decide`, pure), apply (`apply::run`: a point remembered, a stage's checkpoint,
/// the stages settled with its outcome, the lines logged).
#[allow(clippy::too_many_arguments)]
pub fn apply_in(
    ws: &Workspace,
    lock: &crate::system::fsutil::Lock,
    s: &mut Session,
    had_record: bool,
    sf: &StateFile,
    config: &Config,
    reading: Reading,
    opts: Options<'_>,
    out: &Output,
) -> anyhow::Result<Applied> {
    let env = |name: &str| std::env::var(name).ok();
    let now = crate::system::clock::now_rfc3339();
    let facts = usage_facts(&reading, &opts, sf, config, had_record, &env, &now);
    // Read: where the agent compacts, for the window and model the reading is measured at.
    let read = super::read::usage_read(ws, s, facts, config);
    // Decide.
    let id = s.id().to_string();
    let current = std::mem::replace(s, Session::new(&id, s.window()));
    let decided = read.decide(current);
    // Apply.
    applied(ws, lock, s, decided, &reading, sf, opts, out)
}

/// What the pipeline would decide of session `s` now, applied to nothing (`status`, MCP's
/// `status`): the usage of the transcript its record names, as its agent writes it, read; the
/// limit for it read; the reading decided as one that only records (`Reach::RecordOnly`: no
/// stage fires or re-arms, as the status line's). No lock is taken, nothing is written or
/// logged. None when the record names no transcript, when the transcript did not grow since
/// the session's last hook event caught its index up (the record is as new as it, or newer: a
/// model switch, a size the agent stated), or when it cannot be read: the record stands.
pub fn decided_now(
    ws: &Workspace,
    sf: &StateFile,
    config: &Config,
    s: &Session,
) -> Option<Session> {
    let path = s.transcript()?;
    let caught_up = super::session_index::load(ws, s.id())?;
    let len = std::fs::metadata(path).ok()?.len();
    if caught_up.transcript != path || len <= caught_up.offset {
        return None;
    }
    let agent = s.agent().and_then(|a| a.parse().ok());
    let view = super::read::TranscriptView::of(Some(path.into()), agent);
    let usage = view.usage()?.ok()?;
    let reading = Reading::Transcript(Box::new(usage), path.to_string());
    let env = |name: &str| std::env::var(name).ok();
    let now = crate::system::clock::now_rfc3339();
    let options = Options {
        record_only: true,
        ..Options::default()
    };
    let facts = usage_facts(&reading, &options, sf, config, true, &env, &now);
    let mut s = s.clone();
    let read = super::read::usage_read(ws, &mut s, facts, config);
    Some(read.decide(s).session)
}

/// The facts a usage reading is decided from, for `reading` with `opts`.
pub(crate) fn usage_facts<'a>(
    reading: &'a Reading,
    opts: &Options<'_>,
    sf: &StateFile,
    config: &'a Config,
    had_record: bool,
    env: &'a dyn Fn(&str) -> Option<String>,
    now: &'a str,
) -> decide::UsageFacts<'a> {
    decide::UsageFacts {
        reading,
        given_window: opts.window,
        messages: opts.messages,
        reach: Reach::of(opts.record_only, opts.deferred),
        config,
        front_window: sf.fm.window,
        had_record,
        env,
        now,
    }
}

/// The apply stage of a usage reading `decided`: its session put in `s` (the batch's), its
/// effects run (a stage's checkpoint reads what the session did from `reading`'s transcript,
/// through `opts.view`), and what the reading's callers report.
#[allow(clippy::too_many_arguments)]
pub(crate) fn applied(
    ws: &Workspace,
    lock: &crate::system::fsutil::Lock,
    s: &mut Session,
    decided: decide::UsageDecided,
    reading: &Reading,
    sf: &StateFile,
    opts: Options<'_>,
    out: &Output,
) -> anyhow::Result<Applied> {
    *s = decided.session;
    let transcript = match reading {
        Reading::Transcript(usage, path) => Some((path.as_str(), usage.agent.parse().ok())),
        _ => None,
    };
    let ctx = super::apply::Ctx {
        ws,
        lock,
        out,
        transcript,
        view: opts.view,
    };
    let outcomes = super::apply::run(&ctx, s, decided.effects)?;
    let settled = outcomes.settled.unwrap_or(decide::Settled {
        fired: Vec::new(),
        to_say: Vec::new(),
    });
    let recorded = match outcomes.stage_checkpoint {
        Some(written) => Some(written.checkpoint().clone()),
        None => sf.fm.checkpoint.clone(),
    };
    Ok(Applied {
        session: s.clone_without_loops(),
        recorded,
        fired: settled.fired,
        to_say: settled.to_say,
        rearmed: decided.rearmed,
        truncated: decided.truncated,
        previous_messages: decided.previous_messages,
        transcript: decided.transcript,
        previous: decided.previous,
    })
}

/// At most this many characters reach the model for the stages of one event.
pub const MAX_STAGE_CHARS: usize = 1_200;
/// Fields quoted back to the model in a stage instruction are cut to this.
const QUOTED_FIELD_CHARS: usize = 160;

/// What the stages `applied` has to say to the agent (templates/stage.md):
/// one instruction, for the highest of them (crossing several at once, or
/// one that waited, says it once), at most [`MAX_STAGE_CHARS`]. The
/// templates are loaded only when there is something to say: hooks call
/// this on every turn.
pub fn instructions(
    ws: &Workspace,
    config: &Config,
    applied: &Applied,
) -> anyhow::Result<Vec<String>> {
    let said = StagesSaid {
        session: &applied.session,
        recorded: applied.recorded.as_ref(),
        to_say: &applied.to_say,
    };
    stage_instructions(ws, config, &said)
}

/// What the stages of an event say, rendered after the lock: the session as they left it, the
/// checkpoint that stands (a stage may have written it) and the stages to say.
pub struct StagesSaid<'a> {
    pub session: &'a Session,
    pub recorded: Option<&'a Checkpoint>,
    pub to_say: &'a [FiredStage],
}

/// [`instructions`] from its parts.
pub fn stage_instructions(
    ws: &Workspace,
    config: &Config,
    said: &StagesSaid<'_>,
) -> anyhow::Result<Vec<String>> {
    let Some(highest) = said.to_say.iter().max_by(|a, b| a.at.total_cmp(&b.at)) else {
        return Ok(Vec::new());
    };
    // The checkpoint a stage wrote, the highest's first.
    let checkpoint = std::iter::once(highest)
        .chain(said.to_say.iter().rev())
        .find_map(|f| f.checkpoint.clone());
    let s = said.session;
    let in_progress = said
        .recorded
        .and_then(|c| c.observed.as_ref())
        .and_then(|o| {
            o.plan
                .iter()
                .find(|p| p.status == crate::transcripts::activity::PlanStatus::InProgress)
        })
        .map(|p| quoted(&p.text));
    let recorded = said.recorded.map(|c| {
        json!({
            "id": c.id, "phase": quoted(&c.phase), "active_task": quoted(&c.active_task),
            "next_action": quoted(&c.next_action),
            "remaining": c.observed.as_ref().map(remaining),
        })
    });
    // "Recorded now" only when a stage of this event wrote it (not when it
    // was skipped as nothing new, nor for an older one).
    let recorded_now = said
        .recorded
        .is_some_and(|c| checkpoint.as_deref() == Some(c.id.as_str()));
    let templates = Templates::load(&ws.root, config.templates.as_deref())?;
    // The agent is pointed at the MCP tool when its project MCP
    // configuration registers `ctxkeep mcp` (any agent's, when the session
    // does not say which agent it is).
    let agent = s.agent().and_then(|a| a.parse().ok());
    let mcp = crate::agents::mcp_registration::mcp_registered(&ws.root, agent);
    // A stage given later, when no token count is known now, says the one it fired at.
    let measured = match s.tokens() {
        Some(_) => s.clone(),
        None => s.with_tokens(highest.tokens),
    };
    let mut text = templates.render(
        "stage.md",
        json!({
            "percent": measured.percent(), "tokens": measured.tokens(), "window": s.window(),
            "limit": s.limit(), "limit_percent": measured.limit_percent(),
            "limit_source": s.limit_source(),
            "forecast": s.forecast(),
            "stage": { "name": highest.name, "action": highest.action, "at": highest.at },
            "checkpoint": checkpoint,
            "recorded_now": recorded_now,
            "recorded": recorded,
            "in_progress": in_progress,
            "mcp": mcp,
        }),
    )?;
    crate::system::output::cut_to_chars(&mut text, MAX_STAGE_CHARS);
    Ok(vec![text])
}

/// A field quoted back to the model: one line, cut to [`QUOTED_FIELD_CHARS`].
fn quoted(text: &str) -> String {
    cut_line(text, QUOTED_FIELD_CHARS)
}

fn cut_line(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

/// Open plan items a stage instruction names; the rest are counted.
const QUOTED_OPEN_ITEMS: usize = 3;

/// What remains as the checkpoint records it, quoted back so the agent
/// corrects it: the request, the first open plan items, the next step, each
/// cut shorter than the other fields so the whole stays within
/// [`MAX_STAGE_CHARS`].
fn remaining(o: &crate::transcripts::activity::Observed) -> serde_json::Value {
    let open: Vec<_> = o.open_items().collect();
    json!({
        "request": o.request.as_deref().map(|r| cut_line(r, 100)),
        "open": open.iter().take(QUOTED_OPEN_ITEMS)
            .map(|p| format!("[{}] {}", p.status.as_str(), cut_line(&p.text, 60)))
            .collect::<Vec<_>>(),
        "more_open": open.len().saturating_sub(QUOTED_OPEN_ITEMS),
        "next_step": o.next_step.as_deref().map(|n| cut_line(n, 100)),
        "left_open": left_open(o),
    })
}

/// What the session left open without saying so, each item one short line: the checks whose
/// last run failed, the commands the agent gave the user to run.
fn left_open(o: &crate::transcripts::activity::Observed) -> Vec<String> {
    let Some(l) = &o.left_open else {
        return Vec::new();
    };
    let failing = l
        .failing
        .iter()
        .map(|f| format!("the last run of `{}` failed", cut_line(&f.command, 60)));
    let handed = l
        .for_the_user
        .iter()
        .map(|c| format!("the user was given `{}` to run", cut_line(c, 60)));
    failing.chain(handed).take(QUOTED_OPEN_ITEMS).collect()
}

/// `track --count SRC`: the token count, and for a file the cursor that
/// makes the next count of the same (grown) file cost only the new text.
pub fn count_source(
    src: &str,
    enc: Encoding,
    prev: Option<&CountState>,
) -> anyhow::Result<(usize, Option<CountState>)> {
    if src == "-" {
        return Ok((
            crate::context::tokens::count_reader(std::io::stdin().lock(), "-", enc)?,
            None,
        ));
    }
    let path = std::path::Path::new(src);
    crate::context::tokens::countable_len(path)?;
    // Kept in the session record, so redacted; a redacted path that matches
    // another file's is harmless, the cursor's prefix hash is checked anyway.
    let abs = crate::system::fsutil::resolve_target(path)
        .display()
        .to_string();
    let abs = crate::system::redact::redact(&abs).into_owned();
    let cursor = prev.filter(|p| p.path == abs).map(|p| &p.cursor);
    let (tokens, cursor) = crate::context::tokens::count_file_incremental(path, enc, cursor)?;
    Ok((tokens, Some(CountState { path: abs, cursor })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Agent;

    #[test]
    fn what_remains_is_quoted_short_and_counted() {
        use crate::transcripts::activity::{Observed, PlanItem, PlanStatus};
        let item = |n: usize, status| PlanItem {
            text: format!("step {n} {}", "x".repeat(100)),
            status,
        };
        let o = Observed {
            request: Some("r".repeat(300)),
            plan: (0..6)
                .map(|n| {
                    item(
                        n,
                        if n == 0 {
                            PlanStatus::Completed
                        } else {
                            PlanStatus::Pending
                        },
                    )
                })
                .collect(),
            next_step: Some("n".repeat(300)),
            ..Observed::default()
        };
        let r = remaining(&o);
        assert_eq!(r["open"].as_array().unwrap().len(), QUOTED_OPEN_ITEMS);
        assert!(r["open"][0]
            .as_str()
            .unwrap()
            .starts_with("[pending] step 1 "));
        assert_eq!(r["more_open"], 2);
        for key in ["request", "next_step"] {
            assert_eq!(r[key].as_str().unwrap().chars().count(), 101, "{key}");
        }
    }

    #[test]
    fn what_was_left_open_is_quoted_one_short_line_each() {
        use crate::transcripts::activity::left_open::{FailingCheck, LeftOpen};
        use crate::transcripts::activity::Observed;
        let o = Observed {
            left_open: Some(LeftOpen {
                failing: vec![FailingCheck {
                    command: format!("cargo test {}", "x".repeat(100)),
                    ..FailingCheck::default()
                }],
                for_the_user: vec!["firebase deploy --only storage".into()],
                for_the_user_at: None,
            }),
            ..Observed::default()
        };
        let r = remaining(&o);
        let left = r["left_open"].as_array().unwrap();
        assert_eq!(left.len(), 2);
        assert!(left[0]
            .as_str()
            .unwrap()
            .starts_with("the last run of `cargo test x"));
        assert!(left[0].as_str().unwrap().chars().count() < 100);
        assert_eq!(
            left[1],
            "the user was given `firebase deploy --only storage` to run"
        );
        assert_eq!(remaining(&Observed::default())["left_open"], json!([]));
    }

    #[test]
    fn a_stated_token_count_is_measured_against_its_agents_limit() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("project-state.md");
        std::fs::write(
            &state,
            "---\nctxkeep: 1\nwindow: 200000\nstages:\n  - {at: 80, action: warn}\ncompaction:\n  claude-code: 160000\n---\n# x\n",
        )
        .unwrap();
        let out = Output::SILENT;
        let ws = Workspace::in_dir(dir.path());
        let sf = StateFile::load(&state).unwrap();
        let config = Config::from_front(&sf.fm);
        let stated = |tokens| Reading::Stated {
            agent: Agent::ClaudeCode,
            tokens,
            model: Some("claude-opus-4-6".into()),
            window: None,
        };
        let a = apply(
            &ws,
            &sf,
            &config,
            "s1",
            stated(Some(140_000)),
            Options::default(),
            &out,
        )
        .unwrap();
        let s = &a.session;
        assert_eq!(
            (s.percent(), s.limit(), s.limit_percent()),
            (Some(70.0), 160_000, Some(87.5))
        );
        assert_eq!(s.limit_source(), "front-matter");
        assert_eq!(s.agent(), Some("claude-code"));
        let fired: Vec<&str> = a.fired.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            fired,
            ["stage-80"],
            "87.5 % of the limit, 70 % of the window"
        );
        // No token count: the last one stays, and nothing fires twice.
        let a = apply(
            &ws,
            &sf,
            &config,
            "s1",
            stated(None),
            Options::default(),
            &out,
        )
        .unwrap();
        assert_eq!(a.session.tokens(), Some(140_000));
        assert!(a.fired.is_empty());
    }
}
