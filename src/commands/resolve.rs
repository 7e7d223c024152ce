//! `ctxkeep resolve [--dry-run]`: finish a merge that left conflict markers
//! in project-state.md.

use super::{Ctx, Outcome};
use crate::cli::ResolveArgs;
use crate::domain::merge::driver;
use crate::domain::workspace::Workspace;

pub fn run(args: ResolveArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let report = driver::resolve(&ws, args.dry_run, &ctx.out)?;
    ctx.out.json(&report)?;
    let out = &ctx.out;
    if args.dry_run && !out.json {
        out.data(&report.text)?;
    }
    if let Some(why) = &report.fallback {
        out.warn(&format!("{}: merged as plain text ({why})", report.path));
    }
    for c in &report.conflicts {
        out.warn(&format!(
            "{}: conflict left in the {c}: both sides changed it differently; keep one version between the markers, then `git add` the file",
            report.path
        ));
    }
    if report.written {
        let mut msg = format!("{}: merge finished", report.path);
        if let Some(id) = &report.merged_checkpoint {
            msg.push_str(&format!("; both lines of work kept in checkpoint {id}"));
        }
        if report.conflicts.is_empty() {
            msg.push_str(&format!("; `git add {}` to mark it resolved", report.path));
        }
        out.info(&msg);
    } else if !args.dry_run && report.conflicts.is_empty() {
        out.info(&format!(
            "{}: no merge conflict; nothing to resolve",
            report.path
        ));
    }
    Ok(if report.conflicts.is_empty() {
        Outcome::Ok
    } else {
        Outcome::No
    })
}
