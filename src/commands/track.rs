//! `ctxkeep track`: set a session's context size from one source, fire the
//! stages it crossed (once each), and say to the agent what to do.

use std::path::Path;

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::cli::{AgentArg, TrackArgs};
use crate::domain::config::Config;
use crate::domain::session::{self, Source};
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::pipeline::tracking::{self, Fired, Options, Reading, Report, TranscriptInfo};
use crate::system::error::Error;
use crate::system::output::{fmt_num, gauge, thousands};
use crate::system::redact::redact;

#[derive(Debug, Serialize)]
struct TrackOutput {
    #[serde(flatten)]
    report: Report,
    /// Stages armed again because usage dropped below them.
    rearmed: Vec<String>,
    /// The message count dropped since the last `--messages`.
    truncation_suspected: bool,
    /// Transcript details, with `--transcript`.
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript: Option<TranscriptInfo>,
    /// What each fired stage says to the agent (rendered from templates/stage.md).
    instructions: Vec<String>,
    /// Loops found now in the transcript (`--transcript`), each
    /// reported once per session.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    gutter: Vec<crate::transcripts::activity::LoopHit>,
}

pub fn run(args: TrackArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let id = session::validate_id(&args.session)?;
    check_args(&args)?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);

    // The transcript, opened once for the reading, loop detection and a stage's checkpoint.
    let view = args.transcript.as_ref().map(|path| {
        crate::pipeline::read::TranscriptView::of(
            Some(path.clone()),
            args.agent.and_then(AgentArg::agent),
        )
    });
    let reading = read_source(&args, &ws, &id, &config, view.as_ref())?;
    // One pass of the hook pipeline: one lock, one write of the session.
    let tracked = crate::pipeline::track::by_hand(
        &ws,
        &sf,
        &config,
        &id,
        reading,
        Options {
            window: args.window,
            messages: args.messages,
            record_only: false,
            deferred: false,
            view: view.as_ref(),
        },
        args.agent.and_then(AgentArg::agent),
        &ctx.out,
    )?;
    let (applied, gutter, instructions) = (tracked.applied, tracked.loops, tracked.instructions);
    let s = &applied.session;

    let output = TrackOutput {
        report: Report::of(s, &config, applied.fired.iter().map(Fired::from).collect()),
        rearmed: applied.rearmed.clone(),
        truncation_suspected: applied.truncated,
        transcript: applied.transcript,
        instructions,
        gutter,
    };
    ctx.out.json(&output)?;
    print_human(&output, ctx, applied.previous_messages);
    for text in &output.instructions {
        ctx.out.data(text)?;
    }

    match args.fail_at {
        Some(limit) if s.percent().is_some_and(|p| p >= limit) => {
            ctx.out.info(&format!(
                "ctxkeep: {} % is at or above --fail-at {}",
                fmt_num(s.percent().unwrap_or(0.0)),
                fmt_num(limit)
            ));
            Ok(Outcome::No)
        }
        _ => Ok(Outcome::Ok),
    }
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
    view: Option<&crate::pipeline::read::TranscriptView>,
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
        let prev = session::load(ws, id)?.and_then(|s| s.count().cloned());
        let (tokens, count) = tracking::count_source(src, encoding, prev.as_ref())?;
        return Ok(Reading::Absolute {
            tokens: tokens as u64,
            source: Source::Estimate,
            count,
        });
    }
    if let (Some(path), Some(view)) = (&args.transcript, view) {
        let Some(usage) = view.usage() else {
            return Ok(Reading::Unchanged);
        };
        let mut usage = usage?;
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
    if let (Some(p), true) = (r.limit_percent, r.limit != r.window) {
        line.push_str(&format!(
            " · {} % of the {} limit",
            fmt_num(p),
            thousands(r.limit)
        ));
    }
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
