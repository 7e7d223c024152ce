//! `ctxkeep statusline`: Claude Code's status line. Reads its JSON on stdin,
//! records the session's token count and its exact window (later hooks use it),
//! and prints one line. It records only: stages fire from the next hook,
//! whose output reaches the model (the status line's reaches only people).

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::context::compaction::StagesAgainst;
use crate::context::stages::Stage;
use crate::domain::checkpoint::CheckpointRef;
use crate::domain::config::Config;
use crate::domain::session::{self, DEFAULT_SESSION};
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::pipeline::tracking::{self, Options, Reading};
use crate::system::output::{fmt_num, gauge, Output};

/// What `statusline --json` prints.
#[derive(Debug, Serialize)]
struct View {
    session: String,
    tokens: Option<u64>,
    window: u64,
    percent: Option<f64>,
    /// Tokens at which the agent compacts on its own (src/compaction.rs).
    limit: u64,
    limit_percent: Option<f64>,
    limit_source: String,
    /// The highest stage reached, by name.
    stage: Option<String>,
    handoff_due: bool,
    last_checkpoint: Option<CheckpointRef>,
    /// The line printed without `--json`.
    line: String,
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Outcome> {
    match view(ctx) {
        Ok(v) => {
            ctx.out.json(&v)?;
            ctx.out.data(&v.line)?;
            Ok(Outcome::Ok)
        }
        Err(err) if ctx.out.json => Err(err),
        Err(err) => {
            // A status line is read by people: show the problem there
            // rather than an empty bar or a failed command.
            let msg = crate::system::redact::redact(&format!("{err:#}")).replace('\n', " ");
            ctx.out.data(&format!("ctxkeep: {msg}"))?;
            Ok(Outcome::Ok)
        }
    }
}

fn view(ctx: &Ctx) -> anyhow::Result<View> {
    let (agent, sl) = crate::agents::read_status_line(&mut std::io::stdin().lock())?;
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);
    let id = session::validate_id(sl.session_id.as_deref().unwrap_or(DEFAULT_SESSION))?;

    // Old payloads (no `current_usage`) and the moments it is null: the
    // transcript says what it can. A transcript that cannot be read leaves
    // the token count unknown; the bar must still be drawn.
    let tokens = sl.tokens.or_else(|| {
        let path = sl.transcript_path.clone().filter(|p| p.is_file())?;
        let view = crate::pipeline::read::TranscriptView::new(Some(path), agent);
        view.usage()?.ok()?.tokens
    });
    let applied = tracking::apply(
        &ws,
        &sf,
        &config,
        &id,
        Reading::StatusLine {
            agent,
            tokens,
            window: sl.window,
            model: sl.model.clone(),
            transcript: sl.transcript_path.map(|p| p.display().to_string()),
        },
        Options {
            record_only: true,
            ..Options::default()
        },
        &Output {
            json: false,
            quiet: true,
        },
    )?;
    let s = applied.session;
    let stage =
        crate::context::stages::reached(&config.stages, s.stage_percent(config.stages_against))
            .map(Stage::name);
    let last_checkpoint = sf.fm.checkpoint.as_ref().map(CheckpointRef::of);

    let checkpoint = match &last_checkpoint {
        Some(c) => match crate::system::clock::age(&c.created_at) {
            Some(age) => format!("{} {age} ago", c.id),
            None => c.id.clone(),
        },
        None => "no checkpoint".into(),
    };
    let line = line(
        &s,
        config.stages_against,
        stage.as_deref(),
        &checkpoint,
        width(),
    );
    Ok(View {
        session: s.id().to_string(),
        tokens: s.tokens(),
        window: s.window(),
        percent: s.percent(),
        limit: s.limit(),
        limit_percent: s.stage_percent(crate::context::compaction::StagesAgainst::Limit),
        limit_source: s.limit_source().to_string(),
        stage,
        handoff_due: s.handoff_due(),
        last_checkpoint,
        line,
    })
}

/// The terminal's width (`COLUMNS`), else 80.
fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c >= 20)
        .unwrap_or(80)
}

/// The line: what matters first, detail only where `width` allows. It leads
/// with the share the stages use (of the compaction limit by default), then
/// the stage reached or "handoff due", then the checkpoint's age; then, when
/// there is room, the token count behind the share and a gauge of that same share.
/// Right after a compaction, with no token count yet, it says "compacted".
fn line(
    s: &session::Session,
    against: StagesAgainst,
    stage: Option<&str>,
    checkpoint: &str,
    width: usize,
) -> String {
    let share = s.stage_percent(against);
    let of = match against {
        StagesAgainst::Limit => s.limit(),
        StagesAgainst::Window => s.window(),
    };
    let lead = match (s.tokens(), share) {
        (None, _) if s.compacted_at().is_some() => "compacted".to_string(),
        (_, Some(p)) => format!("{} %", fmt_num(p)),
        _ => "? %".to_string(),
    };
    let status = match (s.handoff_due(), stage) {
        (true, _) => Some("handoff due".to_string()),
        (false, Some(name)) => Some(name.to_string()),
        _ => None,
    };
    let count = s.tokens().map(|t| format!("{}/{}", short(t), short(of)));
    let turns = s
        .forecast()
        .map(|f| format!("~{} turns left", f.turns_left));
    let gauge = share.map(|p| gauge(p, 10));
    let build = |gauge: Option<&str>, count: Option<&str>, turns: Option<&str>| {
        let mut parts = vec![match gauge {
            Some(g) => format!("ctxkeep {g} {lead}"),
            None => format!("ctxkeep {lead}"),
        }];
        parts.extend(count.map(str::to_string));
        parts.extend(status.clone());
        parts.extend(turns.map(str::to_string));
        parts.push(checkpoint.to_string());
        parts.join(" · ")
    };
    let (g, f, t) = (gauge.as_deref(), count.as_deref(), turns.as_deref());
    [
        build(g, f, t),
        build(None, f, t),
        build(None, None, t),
        build(None, None, None),
    ]
    .into_iter()
    .find(|l| l.chars().count() <= width)
    .unwrap_or_else(|| build(None, None, None))
}

/// 84500 -> "84.5k", 1000000 -> "1M": a status line is narrow.
fn short(n: u64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{}M", fmt_num(n as f64 / 1_000_000.0)),
        n if n >= 1_000 => format!("{}k", fmt_num(n as f64 / 1_000.0)),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(short(999), "999");
        assert_eq!(short(15_500), "15.5k");
        assert_eq!(short(200_000), "200k");
        assert_eq!(short(1_000_000), "1M");
        assert_eq!(short(1_048_576), "1M");
    }
}
