//! `ctxkeep status`: a session's gauge, stage and last checkpoint. Reads
//! only; takes no lock.

use super::{Ctx, Outcome};
use crate::cli::StatusArgs;
use crate::domain::workspace::Workspace;
use crate::pipeline::status;

pub fn run(args: StatusArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let status = status::status(&ws, args.session.as_deref(), &ctx.out)?;
    ctx.out.json(&status)?;
    ctx.out.data(&status::human(&status))?;
    Ok(Outcome::Ok)
}
