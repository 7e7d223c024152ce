//! `ctxkeep checkpoint`: write a new checkpoint. Fields not given carry over;
//! git state is captured; the write is atomic and under the lock.

use super::{Ctx, Outcome};
use crate::checkpoint::Fields;
use crate::cli::CheckpointArgs;
use crate::error::Error;
use crate::services::record;
use crate::state::StateFile;
use crate::workspace::Workspace;

pub fn run(args: CheckpointArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let from = match &args.from {
        Some(src) => record::read_fields(src)?,
        None => Fields::default(),
    };
    let flags = Fields {
        phase: args.phase,
        active_task: args.task,
        controlling_agent: args.agent,
        next_action: args.next,
        decisions: (!args.decisions.is_empty()).then_some(args.decisions),
        open_questions: (!args.questions.is_empty()).then_some(args.questions),
        notes: args.note,
    };
    let fields = from.merge(flags);
    let trigger = args.trigger.trim();
    if trigger.is_empty() || trigger.contains(char::is_whitespace) {
        return Err(
            Error::Usage("--trigger takes one word, e.g. manual or pre-compact".into()).into(),
        );
    }
    let session = crate::session::validate_id(&args.session)?;
    // Refuse a bad or missing file before taking the lock, so that bad input
    // creates nothing (not even .ctxkeep/). `write` checks again under the lock.
    StateFile::load(&ws.state_path)?.require_initialized()?;
    // Read before the lock: a transcript can be large.
    let observed = match &args.transcript {
        Some(path) => Some(record::observe_transcript(&ws, path, None)?),
        None => None,
    };
    let lock = ws.lock()?;
    // The current session's live budget, when it is tracked.
    let budget = crate::session::load(&ws, &session)?.and_then(|s| s.budget());
    let new = record::New {
        fields,
        trigger,
        budget,
        observed,
        extra: serde_json::json!({}),
        automatic: false,
    };
    let record = record::write_new(&ws, &lock, new, &ctx.out)?
        .checkpoint()
        .clone();
    drop(lock);

    ctx.out.json(&record)?;
    ctx.out.data(&record.id)?;
    Ok(Outcome::Ok)
}
