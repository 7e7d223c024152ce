//! `ctxkeep track`: set a session's context size from one source, fire the
//! stages it crossed (once each), and tell the agent what to do.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use super::Ctx;
use crate::checkpoint::Fields;
use crate::cli::{AgentArg, TrackArgs};
use crate::config::Config;
use crate::error::Error;
use crate::output::{fmt_num, gauge, thousands, Output};
use crate::redact::redact;
use crate::session::{self, CountState, FiredStage, Session, Source};
use crate::state::{Stage, StageAction, StateFile};
use crate::templates::Templates;
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
    #[serde(serialize_with = "crate::state::whole_as_integer")]
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

#[derive(Debug, Serialize)]
struct TrackOutput {
    #[serde(flatten)]
    report: Report,
    /// Stages armed again because usage fell below them.
    rearmed: Vec<String>,
    /// The message count fell since the last `--messages`.
    truncation_suspected: bool,
    /// Transcript details, with `--transcript`.
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript: Option<TranscriptInfo>,
    /// What each fired stage tells the agent (rendered from templates/stage.md).
    instructions: Vec<String>,
}

#[derive(Debug, Serialize)]
struct TranscriptInfo {
    path: String,
    agent: Agent,
    model: Option<String>,
    compacted: bool,
    malformed_lines: u64,
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

pub fn run(args: TrackArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let ws = Workspace::resolve(&ctx.global, false)?;
    let id = session::validate_id(&args.session)?;
    check_args(&args)?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);

    let reading = read_source(&args, &ws, &id, &config)?;
    let applied = apply(
        &ws,
        &sf,
        &config,
        &id,
        reading,
        Options {
            window: args.window,
            messages: args.messages,
            record_only: false,
        },
        &ctx.out,
    )?;
    let instructions = instructions(&ws, &config, &applied)?;
    let s = &applied.session;

    let output = TrackOutput {
        report: Report::of(
            s,
            &config.stages,
            applied.fired.iter().map(Fired::from).collect(),
        ),
        rearmed: applied.rearmed.clone(),
        truncation_suspected: applied.truncated,
        transcript: applied.transcript,
        instructions,
    };
    ctx.out.json(&output)?;
    print_human(&output, ctx, applied.previous_messages);
    for text in &output.instructions {
        ctx.out.data(text)?;
    }

    match args.fail_at {
        Some(limit) if s.percent.is_some_and(|p| p >= limit) => {
            ctx.out.info(&format!(
                "ctxkeep: {} % is at or above --fail-at {}",
                fmt_num(s.percent.unwrap_or(0.0)),
                fmt_num(limit)
            ));
            Ok(crate::error::exit::CHECK_FAILED)
        }
        _ => Ok(0),
    }
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
    /// Stages fired by this update, lowest first.
    pub fired: Vec<FiredStage>,
    pub rearmed: Vec<String>,
    pub truncated: bool,
    pub previous_messages: Option<u64>,
    transcript: Option<TranscriptInfo>,
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
    let checkpoint_id = match step.checkpoint_stage() {
        Some(stage) => {
            let record = super::checkpoint::write(
                ws,
                &lock,
                Fields::default(),
                &stage.name(),
                s.budget(),
                out,
            )?;
            Some(record.id)
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
                }),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(texts)
}

fn check_args(args: &TrackArgs) -> Result<(), Error> {
    let sources = [
        args.tokens.is_some(),
        args.add.is_some(),
        args.count.is_some(),
        args.transcript.is_some(),
    ];
    if !sources.contains(&true) && args.messages.is_none() {
        return Err(Error::Usage(
            "give one source: --tokens N, --add N, --count FILE or --transcript PATH (or only --messages N)".into(),
        ));
    }
    if args.agent.is_some() && args.transcript.is_none() {
        return Err(Error::Usage("--agent needs --transcript".into()));
    }
    if args.encoding.is_some() && args.count.is_none() {
        return Err(Error::Usage("--encoding needs --count".into()));
    }
    if args.window == Some(0) {
        return Err(Error::Usage(
            "--window must be a positive number of tokens".into(),
        ));
    }
    if args.fail_at.is_some_and(|p| !p.is_finite() || p < 0.0) {
        return Err(Error::Usage("--fail-at takes a percent >= 0".into()));
    }
    Ok(())
}

fn read_source(
    args: &TrackArgs,
    ws: &Workspace,
    id: &str,
    config: &Config,
) -> anyhow::Result<Reading> {
    if let Some(n) = args.tokens {
        return Ok(Reading::Absolute {
            tokens: n,
            source: Source::Manual,
            count: None,
        });
    }
    if let Some(d) = args.add {
        return Ok(Reading::Relative(d));
    }
    if let Some(src) = &args.count {
        let encoding = args.encoding.unwrap_or(config.encoding);
        // The last cursor, read without the lock: a stale one only costs a recount.
        let prev = session::load(ws, id)?.and_then(|s| s.count);
        let (tokens, count) = super::count::count_tracked(src, encoding, prev.as_ref())?;
        return Ok(Reading::Absolute {
            tokens: tokens as u64,
            source: Source::Estimate,
            count,
        });
    }
    if let Some(path) = &args.transcript {
        let agent = match args.agent {
            None | Some(AgentArg::Auto) => None,
            Some(AgentArg::ClaudeCode) => Some(Agent::ClaudeCode),
            Some(AgentArg::Codex) => Some(Agent::Codex),
            Some(AgentArg::Gemini) => Some(Agent::Gemini),
        };
        let mut usage = crate::usage::read_transcript(path, agent)?;
        // Both are kept in the session record: redact them here, before the lock.
        usage.model = usage.model.map(|m| redact(&m).into_owned());
        return Ok(Reading::Transcript(Box::new(usage), display_path(path)));
    }
    Ok(Reading::Unchanged)
}

fn display_path(p: &Path) -> String {
    redact(&p.display().to_string()).into_owned()
}

fn print_human(o: &TrackOutput, ctx: &Ctx, previous_messages: Option<u64>) {
    let out = &ctx.out;
    let r = &o.report;
    if let Some(t) = &o.transcript {
        if t.malformed_lines > 0 {
            out.warn(&format!(
                "{}: skipped {} malformed line{}",
                t.path,
                t.malformed_lines,
                if t.malformed_lines == 1 { "" } else { "s" }
            ));
        }
    }
    if o.truncation_suspected {
        out.warn(&format!(
            "session {}: the message count fell from {} to {}; the context may have been truncated. Run `ctxkeep resume` to reload the checkpoint",
            r.session,
            previous_messages.unwrap_or(0),
            r.messages.unwrap_or(0)
        ));
    }
    let mut line = match (r.tokens, r.percent) {
        (Some(t), Some(p)) => format!(
            "{}: {} {} % ({} / {} tokens, {})",
            r.session,
            gauge(p, 20),
            fmt_num(p),
            thousands(t),
            thousands(r.window),
            r.source.map(|s| s.to_string()).unwrap_or_default()
        ),
        _ if o.transcript.as_ref().is_some_and(|t| t.compacted) => format!(
            "{}: context compacted; size unknown until the next reply (window {})",
            r.session,
            thousands(r.window)
        ),
        _ => match &o.transcript {
            Some(t) => format!(
                "{}: {} has no main-session usage yet (window {})",
                r.session,
                t.path,
                thousands(r.window)
            ),
            None => format!(
                "{}: size not known yet (window {})",
                r.session,
                thousands(r.window)
            ),
        },
    };
    if let Some(stage) = &r.stage {
        line.push_str(&format!(" · {stage}"));
    }
    if !r.fired.is_empty() {
        let names: Vec<&str> = r.fired.iter().map(|f| f.name.as_str()).collect();
        line.push_str(&format!(" · fired {}", names.join(", ")));
        if let Some(id) = r.fired.iter().find_map(|f| f.checkpoint.as_deref()) {
            line.push_str(&format!(" · wrote {id}"));
        }
    }
    if !o.rearmed.is_empty() {
        line.push_str(&format!(" · re-armed {}", o.rearmed.join(", ")));
    }
    if r.handoff_due {
        line.push_str(" · handoff due");
    }
    out.info(&line);
}
