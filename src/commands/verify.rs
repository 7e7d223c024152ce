//! `ctxkeep verify`: the CI gate. Exit 0 when the checkpoint can be read
//! cold, 1 with the findings otherwise. Reads only the repository: works in
//! a fresh clone and never creates `.ctxkeep/`.

use super::{Ctx, Outcome};
use crate::cli::VerifyArgs;
use crate::error::Error;
use crate::services::verify::{self, human, Options};
use crate::state::StateFile;
use crate::workspace::Workspace;

pub fn run(args: VerifyArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let sf = match StateFile::load(&ws.state_path) {
        Ok(sf) => sf,
        Err(Error::Conflicted { .. }) => return conflicted(&ws, ctx),
        Err(e) => return Err(e.into()),
    };
    let opts = Options {
        strict: args.strict,
        max_tokens: args.max_tokens,
        probe: args.probe.as_ref().map(|cmd| crate::probe::Options {
            command: cmd.clone(),
            timeout: std::time::Duration::from_secs_f64(args.probe_timeout),
            strict: args.strict,
        }),
    };
    let report = verify::verify(&ws, &sf, &opts)?;
    ctx.out.json(&report)?;
    if !ctx.out.quiet || !report.ok {
        ctx.out.data(&human(&report, &ws.display_state()))?;
    }
    Ok(if report.ok { Outcome::Ok } else { Outcome::No })
}

/// A merge left half done: the regions as CK123 findings, nothing else
/// (the file cannot be read until it is resolved); exit 65.
fn conflicted(ws: &Workspace, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let report = verify::conflicted(ws)?;
    ctx.out.json(&report)?;
    ctx.out.data(&human(&report, &ws.display_state()))?;
    Ok(Outcome::BadData)
}
