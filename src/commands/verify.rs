//! `ctxkeep verify`: the CI gate. Exit 0 when the checkpoint can be read
//! cold, 1 with the findings otherwise. Reads only the repository: works in
//! a fresh clone and never creates `.ctxkeep/`.

use super::{Ctx, Outcome};
use crate::cli::VerifyArgs;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::verify::report::{self, human, Options};

pub fn run(args: VerifyArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    // Every check reads the repository from one reading.
    let _reads = crate::system::git::share_reads();
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let text = if args.staged {
        staged_text(&ws)?
    } else {
        StateFile::read_text(&ws.state_path)?
    };
    let sf = match StateFile::from_text(&ws.state_path, text.clone()) {
        Ok(sf) => sf,
        Err(Error::Conflicted { .. }) => return conflicted(&ws, &text, ctx),
        Err(e) => return Err(e.into()),
    };
    let opts = Options {
        strict: args.strict,
        max_tokens: args.max_tokens,
        probe: args
            .probe
            .as_ref()
            .map(|cmd| crate::verify::probe::Options {
                command: cmd.clone(),
                timeout: std::time::Duration::from_secs_f64(args.probe_timeout),
                strict: args.strict,
            }),
        staged: args.staged,
        errors_only: false,
    };
    let report = report::verify(&ws, &sf, &opts)?;
    ctx.out.json(&report)?;
    if !ctx.out.quiet || !report.ok {
        ctx.out.data(&human(&report, &ws.display_state()))?;
    }
    Ok(if report.ok {
        Outcome::Ok
    } else if report::no_checkpoint_yet(&report) {
        Outcome::NoInput
    } else {
        Outcome::No
    })
}

/// The state file as git's index holds it: what the next commit records.
fn staged_text(ws: &Workspace) -> anyhow::Result<String> {
    let shown = ws.display_state();
    let top = crate::system::git::toplevel(&ws.root).map_err(|why| {
        Error::Usage(format!(
            "--staged reads git's index, but {shown} is not in a usable git repository ({why})"
        ))
    })?;
    let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let state = real(&crate::system::fsutil::resolve_target(&ws.state_path));
    let rel = state
        .strip_prefix(real(&top))
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .map_err(|_| Error::Usage(format!("--staged: {shown} is outside the git repository")))?;
    let blob = crate::system::git::staged_blob(&top, &rel)
        .map_err(|why| Error::data(&ws.state_path, format!("cannot read it from git's index: {why}")))?
        .ok_or_else(|| {
            Error::no_input(
                &ws.state_path,
                "is not in git's index (nothing staged to check); `git add` it, or run `ctxkeep verify` without --staged",
            )
        })?;
    if blob.len() as u64 > crate::domain::state::MAX_FILE_BYTES {
        return Err(Error::data(
            &ws.state_path,
            "the staged version is too large to be a state file",
        )
        .into());
    }
    String::from_utf8(blob)
        .map_err(|_| Error::data(&ws.state_path, "the staged version is not UTF-8 text").into())
}

/// A merge left half done: the regions as CK123 findings, nothing else
/// (the file cannot be read until it is resolved); exit 65.
fn conflicted(ws: &Workspace, text: &str, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let report = report::conflicted(ws, text);
    ctx.out.json(&report)?;
    ctx.out.data(&human(&report, &ws.display_state()))?;
    Ok(Outcome::BadData)
}
