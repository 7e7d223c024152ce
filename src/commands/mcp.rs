//! `ctxkeep mcp`: the MCP server over stdio, until the client closes it.
//! The protocol glue is `crate::mcp`'s; the tools call the services.

use super::{Ctx, Outcome};
use crate::cli::McpArgs;

pub fn run(args: McpArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let session = args
        .session
        .as_deref()
        .map(crate::domain::session::validate_id)
        .transpose()?;
    crate::mcp::serve(crate::mcp::Options {
        locate: ctx.locate(),
        session,
    })?;
    Ok(Outcome::Ok)
}
