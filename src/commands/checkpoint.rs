//! `ctxkeep checkpoint`: write a new checkpoint. Fields not given carry over;
//! git state is captured; the write is atomic and under the lock.

use super::{Ctx, Outcome};
use crate::cli::CheckpointArgs;
use crate::domain::checkpoint::Fields;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::pipeline::record;

pub fn run(args: CheckpointArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    // The write and the checks on what it wrote read the repository once.
    let _reads = crate::system::git::share_reads();
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
        decisions: list_flag(args.decisions, args.clear_decisions),
        open_questions: list_flag(args.questions, args.clear_questions),
        notes: args.note,
        done: (!args.done.is_empty()).then_some(args.done),
        remaining: (!args.remaining.is_empty()).then_some(args.remaining),
        clear_remaining: args.clear_remaining.then_some(true),
        add_decisions: args.add_decisions,
    };
    let req = record::Request {
        fields: from.merge(flags),
        trigger: &args.trigger,
        session: &args.session,
        transcript: args.transcript.as_deref(),
    };
    // The checks that can reject what it wrote, said now, not at the next `verify` (the MCP
    // tool returns the same findings): run on the text written, beside the write.
    let rejections = |sf: &StateFile| -> Vec<String> {
        crate::verify::report::rejections_in(&ws, sf)
            .into_iter()
            .map(|f| format!("{} {}", f.code, f.message))
            .collect()
    };
    let mut look = record::Look::new(&rejections);
    let record = record::by_hand_looking(&ws, req, &ctx.out, Some(&mut look))?;
    for rejected in look.found() {
        ctx.out.warn(&format!(
            "`ctxkeep verify` rejects {}: {rejected}",
            record.id
        ));
    }

    ctx.out.json(&record)?;
    ctx.out.data(&record.id)?;
    Ok(Outcome::Ok)
}

/// A list given by repeated flags (replacing the list), emptied by its
/// `--clear-…` flag, or `None` to carry the list over.
fn list_flag(items: Vec<String>, clear: bool) -> Option<Vec<String>> {
    (clear || !items.is_empty()).then_some(items)
}
