//! `ctxkeep verify`: the CI gate. Exit 0 when the checkpoint can be read
//! cold, 1 with the findings otherwise. Reads only the repository: works in
//! a fresh clone and never creates `.ctxkeep/`.

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::checkpoint::CheckpointRef;
use crate::checks::{self, Finding, Severity, Subject};
use crate::cli::VerifyArgs;
use crate::error::Error;
use crate::output::{paint_stdout, Style};
use crate::state::StateFile;
use crate::workspace::Workspace;

#[derive(Debug, Serialize)]
pub struct VerifyReport {
    pub ok: bool,
    pub checkpoint: Option<CheckpointRef>,
    pub errors: Vec<Finding>,
    pub warnings: Vec<Finding>,
    /// Checks that could not run, and why (no git, shallow clone).
    pub notes: Vec<String>,
    /// What `--probe` ran and answered (absent without `--probe`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::probe::Report>,
}

pub fn run(args: VerifyArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
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
    let outcome = checks::all(&Subject {
        sf: &sf,
        ws: &ws,
        strict: args.strict,
        max_tokens: args.max_tokens,
        staged: args.staged,
    })?;
    let mut outcome = outcome;
    let probe = match &args.probe {
        Some(cmd) => {
            let opts = crate::probe::Options {
                command: cmd.clone(),
                timeout: std::time::Duration::from_secs_f64(args.probe_timeout),
                strict: args.strict,
            };
            crate::probe::for_verify(&ws, &sf, &opts, args.max_tokens, &mut outcome.findings)?
        }
        None => None,
    };
    if let Some(p) = &probe {
        outcome.notes.push(p.summary());
    }
    let (errors, warnings): (Vec<_>, Vec<_>) = outcome
        .findings
        .into_iter()
        .partition(|f| f.severity == Severity::Error);
    let report = VerifyReport {
        ok: errors.is_empty(),
        checkpoint: sf.fm.checkpoint.as_ref().map(CheckpointRef::of),
        errors,
        warnings,
        notes: outcome.notes,
        probe,
    };
    ctx.out.json(&report)?;
    if !ctx.out.quiet || !report.ok {
        ctx.out.data(&human(&report, &ws.display_state()))?;
    }
    Ok(if report.ok {
        Outcome::Ok
    } else if report.errors.iter().any(|f| f.code == "CK002")
        && !report.errors.iter().any(|f| f.code == "CK001")
    {
        // "No checkpoint yet" means the same exit code for every command.
        Outcome::NoInput
    } else {
        Outcome::No
    })
}

/// The state file as git's index holds it: what the next commit records.
fn staged_text(ws: &Workspace) -> anyhow::Result<String> {
    let shown = ws.display_state();
    let top = crate::git::toplevel(&ws.root).map_err(|why| {
        Error::Usage(format!(
            "--staged reads git's index, but {shown} is not in a usable git repository ({why})"
        ))
    })?;
    let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let state = real(&crate::fsutil::resolve_target(&ws.state_path));
    let rel = state
        .strip_prefix(real(&top))
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .map_err(|_| Error::Usage(format!("--staged: {shown} is outside the git repository")))?;
    let blob = crate::git::staged_blob(&top, &rel)
        .map_err(|why| Error::data(&ws.state_path, format!("cannot read it from git's index: {why}")))?
        .ok_or_else(|| {
            Error::no_input(
                &ws.state_path,
                "is not in git's index (nothing staged to check); `git add` it, or run `ctxkeep verify` without --staged",
            )
        })?;
    if blob.len() as u64 > crate::state::MAX_FILE_BYTES {
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
    let report = VerifyReport {
        ok: false,
        checkpoint: None,
        errors: checks::conflicts(text, &ws.display_state()),
        warnings: Vec::new(),
        notes: Vec::new(),
        probe: None,
    };
    ctx.out.json(&report)?;
    ctx.out.data(&human(&report, &ws.display_state()))?;
    Ok(Outcome::BadData)
}

fn human(r: &VerifyReport, path: &str) -> String {
    let mut s = String::new();
    for (title, list, style) in [
        ("error", &r.errors, Style::Error),
        ("warning", &r.warnings, Style::Warn),
    ] {
        if list.is_empty() {
            continue;
        }
        let plural = if list.len() == 1 { "" } else { "s" };
        s.push_str(&paint_stdout(
            style,
            &format!("{} {title}{plural}:", list.len()),
        ));
        s.push('\n');
        for f in list.iter() {
            let at = f
                .line
                .map(|l| format!("{path}:{l}"))
                .unwrap_or_else(|| path.to_string());
            let field = f
                .field
                .as_deref()
                .map(|x| format!(" [{x}]"))
                .unwrap_or_default();
            s.push_str(&format!(
                "  {} {at}{field}: {}\n",
                paint_stdout(style, f.code),
                f.message
            ));
        }
    }
    for n in &r.notes {
        s.push_str(&paint_stdout(Style::Dim, &format!("note: {n}")));
        s.push('\n');
    }
    let id = r
        .checkpoint
        .as_ref()
        .map(|c| c.id.as_str())
        .unwrap_or("no checkpoint");
    let verdict = if r.ok {
        let extra = match r.warnings.len() {
            0 => String::new(),
            n => format!(" ({n} warning{})", if n == 1 { "" } else { "s" }),
        };
        paint_stdout(Style::Ok, &format!("ok: {id} can be read cold{extra}"))
    } else {
        let text = match &r.checkpoint {
            Some(_) => format!("failed: {id} has {} error(s)", r.errors.len()),
            None => "failed: no checkpoint yet".to_string(),
        };
        paint_stdout(Style::Error, &text)
    };
    s.push_str(&verdict);
    s
}
