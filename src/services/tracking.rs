//! Applying a usage reading to a session: the stages it crossed fire (once
//! each, with one checkpoint for a jump), those left behind re-arm, and the
//! instructions for the agent are rendered. Shared by `track`, the status
//! line and the agent hooks.

use serde::Serialize;
use serde_json::json;

use crate::checkpoint::{Checkpoint, Fields};
use crate::config::Config;
use crate::output::Output;
use crate::session::{self, CountState, Session, Source};
use crate::stages::{FiredStage, Stage, StageAction};
use crate::state::StateFile;
use crate::templates::Templates;
use crate::tokens::Encoding;
use crate::usage::{Agent, Usage};
use crate::workspace::Workspace;

/// What `track --json` prints (and `status --json` builds on).
#[derive(Debug, Serialize)]
pub struct Report {
    pub session: String,
    pub tokens: Option<u64>,
    pub window: u64,
    pub percent: Option<f64>,
    pub source: Option<Source>,
    /// The highest stage reached, by name.
    pub stage: Option<String>,
    pub fired: Vec<Fired>,
    pub handoff_due: bool,
    pub messages: Option<u64>,
}

/// A stage in the JSON output.
#[derive(Debug, Clone, Serialize)]
pub struct Fired {
    #[serde(serialize_with = "crate::stages::whole_as_integer")]
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
    pub fn of(session: &Session, stages: &[Stage], fired: Vec<Fired>) -> Report {
        Report {
            session: session.id.clone(),
            tokens: session.tokens,
            window: session.window,
            percent: session.percent,
            source: Some(session.source),
            stage: crate::stages::reached(stages, session.percent).map(Stage::name),
            fired,
            handoff_due: session.handoff_due,
            messages: session.messages,
        }
    }
}

/// What a transcript reading says besides the figure (`track --json`).
#[derive(Debug, Serialize)]
pub struct TranscriptInfo {
    pub path: String,
    pub agent: Agent,
    pub model: Option<String>,
    pub compacted: bool,
    pub malformed_lines: u64,
}

/// The new figure, read before taking the lock (reading can be slow).
pub enum Reading {
    Absolute {
        tokens: u64,
        source: Source,
        count: Option<CountState>,
    },
    Relative(i64),
    Transcript(Box<Usage>, String),
    /// Claude Code's status line: its exact window is remembered for the
    /// session's later hooks.
    StatusLine {
        tokens: Option<u64>,
        window: Option<u64>,
        model: Option<String>,
        transcript: Option<String>,
    },
    /// Only `--messages`: the figure stays.
    Unchanged,
}

/// What a caller of [`apply`] may set besides the reading.
#[derive(Debug, Default, Clone, Copy)]
pub struct Options {
    /// An explicit window (`--window`), ahead of every other source.
    pub window: Option<u64>,
    /// The session's message count now (`--messages`).
    pub messages: Option<u64>,
    /// Record the figure only: no stage fires or re-arms (the status line,
    /// whose output never reaches the agent; the next hook fires instead).
    pub record_only: bool,
}

/// The outcome of [`apply`]: the session as saved and what happened on the way.
pub struct Applied {
    pub session: Session,
    /// The checkpoint that stands after the update (a stage may have
    /// written one): what the stage instructions show as recorded.
    pub recorded: Option<Checkpoint>,
    /// Stages fired by this update, lowest first.
    pub fired: Vec<FiredStage>,
    pub rearmed: Vec<String>,
    pub truncated: bool,
    pub previous_messages: Option<u64>,
    pub transcript: Option<TranscriptInfo>,
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
    opts: Options,
    out: &Output,
) -> anyhow::Result<Applied> {
    let lock = ws.lock()?;
    let prev = session::load(ws, id)?;
    let mut s = prev
        .clone()
        .unwrap_or_else(|| Session::new(id, config.window));
    let mut compacted = false;
    let mut info = None;
    let (transcript_path, agent) = match &reading {
        Reading::Transcript(usage, path) => (Some(path.clone()), Some(usage.agent)),
        _ => (None, None),
    };
    match reading {
        Reading::Absolute {
            tokens,
            source,
            count,
        } => {
            s.set_tokens(Some(tokens), opts.window.unwrap_or(config.window));
            s.source = source;
            if count.is_some() {
                s.count = count;
            }
        }
        Reading::Relative(delta) => {
            let base = s.tokens.unwrap_or(0);
            let tokens = base.saturating_add_signed(delta);
            let window = opts
                .window
                .or(prev.as_ref().map(|p| p.window))
                .unwrap_or(config.window);
            s.set_tokens(Some(tokens), window);
            s.source = Source::Manual;
        }
        Reading::Transcript(usage, path) => {
            let window =
                reading_window(&opts, &s, usage.window, usage.model.as_deref(), sf, config);
            compacted = usage.compacted;
            // No figure (a new transcript, or compacted without `postTokens`)
            // is recorded as unknown rather than guessed.
            s.set_tokens(usage.tokens, window);
            s.source = Source::Usage;
            s.agent = Some(usage.agent.to_string());
            s.transcript = Some(path.clone());
            s.model = usage.model.clone().or(s.model.take());
            info = Some(TranscriptInfo {
                path,
                agent: usage.agent,
                model: usage.model.clone(),
                compacted: usage.compacted,
                malformed_lines: usage.malformed_lines,
            });
        }
        Reading::StatusLine {
            tokens,
            window,
            model,
            transcript,
        } => {
            if window.is_some() {
                s.statusline_window = window;
            }
            let window = reading_window(&opts, &s, None, model.as_deref(), sf, config);
            s.set_tokens(tokens, window);
            s.source = Source::Usage;
            s.agent = Some(Agent::ClaudeCode.to_string());
            s.transcript = transcript.or(s.transcript.take());
            s.model = model.or(s.model.take());
        }
        Reading::Unchanged => {
            if let Some(w) = opts.window {
                s.set_tokens(s.tokens, w);
            }
        }
    }
    // Truncation: the message count can only grow within a session.
    let previous_messages = s.messages;
    let truncated =
        matches!((previous_messages, opts.messages), (Some(before), Some(now)) if now < before);
    if opts.messages.is_some() {
        s.messages = opts.messages;
    }

    let step = if opts.record_only {
        crate::stages::Step {
            fire: Vec::new(),
            rearmed: Vec::new(),
            kept: s.fired.clone(),
        }
    } else {
        crate::stages::step(&config.stages, &s.fired, s.percent, compacted)
    };
    let mut recorded = sf.fm.checkpoint.clone();
    let checkpoint_id = match step.checkpoint_stage() {
        Some(stage) => {
            // Read only when a stage asks for a checkpoint (rare): what the
            // session did, from the transcript the reading came from.
            let observed = transcript_path.as_deref().and_then(|p| {
                super::record::observe_transcript(ws, std::path::Path::new(p), agent).ok()
            });
            let written = super::record::write_new(
                ws,
                &lock,
                super::record::New {
                    fields: Fields::default(),
                    trigger: &stage.name(),
                    budget: s.budget(),
                    observed,
                    extra: json!({ "session": s.id }),
                    automatic: true,
                },
                out,
            )?;
            s.seen_checkpoint = Some(written.checkpoint().id.clone());
            // A skipped one (nothing new) is named nowhere as written.
            let id = match &written {
                super::record::Written::New(c) => Some(c.id.clone()),
                super::record::Written::Skipped { .. } => None,
            };
            recorded = Some(written.checkpoint().clone());
            id
        }
        None => None,
    };
    let mut fired_now = Vec::new();
    for stage in &step.fire {
        fired_now.push(FiredStage {
            at: stage.at,
            name: stage.name(),
            action: stage.action,
            checkpoint: (stage.action != StageAction::Warn)
                .then(|| checkpoint_id.clone())
                .flatten(),
        });
    }
    s.fired = step.kept.clone();
    s.fired.extend(fired_now.iter().cloned());
    if fired_now.iter().any(|f| f.action == StageAction::Handoff) {
        s.handoff_due = true;
    } else if !s.fired.iter().any(|f| f.action == StageAction::Handoff) {
        // Every handoff stage re-armed (usage fell, e.g. after compaction).
        s.handoff_due = false;
    }
    s.updated_at = crate::clock::now_rfc3339();
    session::save(ws, &lock, &s)?;

    let log = |event: &str, fields: serde_json::Value| {
        if let Err(e) = crate::events::append(ws, &lock, event, fields) {
            out.warn(&format!("the event log could not be updated: {e}"));
        }
    };
    for f in &fired_now {
        log(
            "stage",
            json!({
                "session": s.id, "stage": f.name, "at": f.at, "action": f.action,
                "tokens": s.tokens, "window": s.window, "percent": s.percent,
                "checkpoint": f.checkpoint,
            }),
        );
    }
    if truncated {
        log(
            "truncation_suspected",
            json!({ "session": s.id, "previous": previous_messages, "messages": s.messages }),
        );
    }
    drop(lock);
    Ok(Applied {
        session: s,
        recorded,
        fired: fired_now,
        rearmed: step.rearmed,
        truncated,
        previous_messages,
        transcript: info,
    })
}

/// The window for a reading from an agent: `--window`, else the status
/// line's (exact: it tells a 1M session from a 200k one, the transcript
/// does not), else the reading's own, else the config's, else the model
/// table's for the reading's model, else the configured default.
fn reading_window(
    opts: &Options,
    s: &Session,
    stated: Option<u64>,
    model: Option<&str>,
    sf: &StateFile,
    config: &Config,
) -> u64 {
    opts.window
        .or(s.statusline_window)
        .or(stated)
        .or(sf.fm.window)
        .or(model.and_then(|m| config.model_info(m)).map(|m| m.window))
        .unwrap_or(config.window)
}

/// What each stage fired by `applied` tells the agent (templates/stage.md).
/// The templates are loaded only when a stage fired: hooks call this on
/// every turn.
pub fn instructions(
    ws: &Workspace,
    config: &Config,
    applied: &Applied,
) -> anyhow::Result<Vec<String>> {
    if applied.fired.is_empty() {
        return Ok(Vec::new());
    }
    let s = &applied.session;
    let in_progress = applied
        .recorded
        .as_ref()
        .and_then(|c| c.observed.as_ref())
        .and_then(|o| {
            o.plan
                .iter()
                .find(|p| p.status == crate::observe::PlanStatus::InProgress)
        })
        .map(|p| p.text.clone());
    let templates = Templates::load(&ws.root, config.templates.as_deref())?;
    let texts = applied
        .fired
        .iter()
        .map(|f| {
            templates.render(
                "stage.md",
                json!({
                    "percent": s.percent, "tokens": s.tokens, "window": s.window,
                    "stage": { "name": f.name, "action": f.action, "at": f.at },
                    "checkpoint": f.checkpoint,
                    "recorded": applied.recorded,
                    "in_progress": in_progress,
                }),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(texts)
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
            crate::tokens::count_reader(std::io::stdin().lock(), "-", enc)?,
            None,
        ));
    }
    let path = std::path::Path::new(src);
    crate::tokens::countable_len(path)?;
    // Kept in the session record, so redacted; a redacted path that matches
    // another file's is harmless, the cursor's prefix hash is checked anyway.
    let abs = crate::fsutil::resolve_target(path).display().to_string();
    let abs = crate::redact::redact(&abs).into_owned();
    let cursor = prev.filter(|p| p.path == abs).map(|p| &p.cursor);
    let (tokens, cursor) = crate::tokens::count_file_incremental(path, enc, cursor)?;
    Ok((tokens, Some(CountState { path: abs, cursor })))
}
