//! `ctxkeep ack NONCE`: the agent confirms it read the resume prompt, which
//! printed the nonce. A wrong nonce says no (exit 1).

use super::{Ctx, Outcome};
use crate::cli::AckArgs;
use crate::domain::workspace::Workspace;
use crate::handoff::ack::{self, By};

pub fn run(args: AckArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let by = match (&args.nonce, &args.transcript) {
        (_, Some(path)) => By::Transcript(path),
        (Some(nonce), None) => By::Nonce(nonce),
        (None, None) => {
            return Err(crate::system::error::Error::Usage(
                "give the NONCE the resume prompt printed, or --transcript PATH".into(),
            )
            .into())
        }
    };
    let report = ack::ack(&ws, by, "command")?;
    ctx.out.json(&report)?;
    ctx.out.info(&report.message());
    Ok(Outcome::Ok)
}
