//! `ctxkeep restore [CKPT] [--force]`: brings a checkpoint's uncommitted
//! work (its snapshot in git) back into the working tree.

use super::{Ctx, Outcome};
use crate::cli::RestoreArgs;
use crate::domain::workspace::Workspace;
use crate::pipeline::snapshot;

pub fn run(args: RestoreArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let lock = ws.lock()?;
    let restored = snapshot::restore(&ws, &lock, args.checkpoint.as_deref(), args.force)?;
    drop(lock);
    ctx.out.json(&restored)?;
    let mut text = format!(
        "restored {} file(s) from the snapshot of {} ({}):",
        restored.files.len(),
        restored.checkpoint,
        &restored.commit[..restored.commit.len().min(12)]
    );
    for f in &restored.files {
        text.push_str(&format!("\n  {:<8} {}", f.status, f.path));
    }
    ctx.out.data(&text)?;
    Ok(Outcome::Ok)
}
