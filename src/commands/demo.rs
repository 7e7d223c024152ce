//! `ctxkeep demo`: the whole loop in a throwaway project, each command
//! printed with its output. Never touches the current directory.

use std::path::PathBuf;

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::cli::DemoArgs;
use crate::install::demo::{self, Step};
use crate::system::error::Error;
use crate::system::output::{paint_stdout, Style};

#[derive(Debug, Serialize)]
struct DemoReport {
    /// Where the demo ran.
    dir: PathBuf,
    /// Whether that folder is still there.
    kept: bool,
    steps: Vec<Step>,
}

pub fn run(args: DemoArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let (dir, temp) = match args.keep {
        Some(dir) => (prepare_kept(dir)?, None),
        None => {
            let temp = tempfile::Builder::new()
                .prefix("ctxkeep-demo-")
                .tempdir()
                .map_err(|e| {
                    Error::io(std::env::temp_dir(), "cannot create a temporary folder", e)
                })?;
            (temp.path().to_path_buf(), Some(temp))
        }
    };
    ctx.out.info(&format!(
        "A throwaway project in {}: a git repository with src/parse.rs, and an agent's transcript beside it.\n",
        dir.display()
    ));
    let mut show = |step: &Step| {
        let text = format!(
            "{}\n$ {}\n{}",
            paint_stdout(Style::Dim, &format!("# {}", step.why)),
            step.command,
            step.output
        );
        let _ = ctx.out.data(&text);
    };
    let result = demo::run(&dir, &mut show);
    // A failed demo keeps its folder, for a look at what went wrong.
    let kept = temp.is_none() || result.is_err();
    if let (Some(temp), true) = (temp, kept) {
        let _ = temp.keep();
    }
    let steps = result?;
    let end = if kept {
        format!("The project is kept in {}/project.", dir.display())
    } else {
        format!(
            "Removed {} (`ctxkeep demo --keep DIR` keeps it). In your own repository: `ctxkeep init`, then `ctxkeep hooks install claude-code` (or codex, gemini).",
            dir.display()
        )
    };
    ctx.out.info(&end);
    ctx.out.json(&DemoReport { dir, kept, steps })?;
    Ok(Outcome::Ok)
}

/// `--keep DIR`: a new or empty folder, so nothing of the user's is mixed in.
fn prepare_kept(dir: PathBuf) -> anyhow::Result<PathBuf> {
    if let Ok(mut entries) = std::fs::read_dir(&dir) {
        if entries.next().is_some() {
            return Err(Error::Usage(format!(
                "--keep {}: the folder is not empty; name a new or empty one",
                dir.display()
            ))
            .into());
        }
    } else if dir.exists() {
        return Err(Error::Usage(format!("--keep {}: not a folder", dir.display())).into());
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "cannot create the folder", e))?;
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}
