//! `ctxkeep merge-file BASE OURS THEIRS [PATH]`: git's merge driver.

use super::{Ctx, Outcome};
use crate::cli::MergeFileArgs;
use crate::domain::merge::driver;

pub fn run(args: MergeFileArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let report = driver::merge_file(
        &args.base,
        &args.ours,
        &args.theirs,
        args.path.as_deref(),
        std::time::Duration::try_from_secs_f64(ctx.locate().lock_timeout).map_err(|_| {
            crate::system::error::Error::Usage(
                "--lock-timeout must be a number of seconds >= 0".into(),
            )
        })?,
        &ctx.out,
    )?;
    ctx.out.json(&report)?;
    if let Some(why) = &report.fallback {
        ctx.out
            .warn(&format!("{}: merged as plain text ({why})", report.path));
    }
    for c in &report.conflicts {
        ctx.out.warn(&format!(
            "{}: conflict left in the {c}: both sides changed it; edit the marked lines, then `git add {}`",
            report.path, report.path
        ));
    }
    if let Some(id) = &report.merged_checkpoint {
        ctx.out.info(&format!(
            "{}: both lines of work kept in merged checkpoint {id}",
            report.path
        ));
    }
    Ok(if report.conflicts.is_empty() {
        Outcome::Ok
    } else {
        Outcome::No
    })
}
