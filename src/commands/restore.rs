//! `ctxkeep restore [CKPT] [--force]`: brings a checkpoint's uncommitted
//! work (its snapshot in git) back into the working tree.

use super::{Ctx, Outcome};
use crate::cli::RestoreArgs;
use crate::domain::workspace::Workspace;
use crate::pipeline::snapshot;

pub fn run(args: RestoreArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = match Workspace::resolve(&ctx.locate(), false) {
        Ok(ws) => ws,
        // The state file went with the work (`git clean -fd` before its first commit): the
        // snapshot refs at the repository's top level still hold both.
        Err(e @ crate::system::error::Error::NotInitialized { .. }) => {
            kept_without_state(ctx).ok_or(e)?
        }
        Err(e) => return Err(e.into()),
    };
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
    if let Some(m) = &restored.head_moved {
        text.push_str(&format!(
            "\nHEAD moved since the snapshot ({} -> {}): the files are as they were then, uncommitted on today's HEAD",
            &m.from[..m.from.len().min(12)],
            &m.to[..m.to.len().min(12)]
        ));
    }
    ctx.out.data(&text)?;
    Ok(Outcome::Ok)
}

/// The workspace at the repository's top level, when no state file is
/// found but snapshot refs are kept there.
fn kept_without_state(ctx: &Ctx) -> Option<Workspace> {
    let cwd = std::env::current_dir().ok()?;
    let top = crate::system::git::toplevel(&cwd).ok()?;
    if crate::system::git::snapshot::list(&top).ok()?.is_empty() {
        return None;
    }
    let mut locate = ctx.locate();
    locate.state = Some(top);
    Workspace::resolve(&locate, false).ok()
}
