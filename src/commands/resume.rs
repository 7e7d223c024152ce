//! `ctxkeep resume`: check the checkpoint, then print the continuation
//! prompt a fresh session starts from, within a token budget.

use super::{Ctx, Outcome};
use crate::cli::ResumeArgs;
use crate::domain::workspace::Workspace;
use crate::handoff::resume::{self, Options};

pub fn run(args: ResumeArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    // The checks and the prompt read the repository once.
    let _reads = crate::system::git::share_reads();
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let opts = Options {
        force: args.force,
        max_tokens: args.max_tokens,
        agent: args.agent,
        peek: args.peek,
        session: args.session,
        ..Options::default()
    };
    let report = resume::resume(&ws, &opts, &ctx.out)?;
    ctx.out.json(&report)?;
    ctx.out.data(&report.prompt)?;
    Ok(Outcome::Ok)
}
