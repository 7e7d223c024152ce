//! `verify`'s job on a loaded state file: every check, the probe when one
//! is asked for, and the findings split into errors and warnings. Shared
//! by `verify` and the MCP server's `verify` and `checkpoint` tools.

use serde::Serialize;

use crate::domain::checkpoint::CheckpointRef;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::system::output::{paint_stdout, Style};
use crate::verify::checks::{self, Finding, Severity, Subject};

/// What the caller asks of [`verify`].
#[derive(Debug, Default)]
pub struct Options {
    /// Warnings that matter for a cold read are errors.
    pub strict: bool,
    /// The size check's token budget; `None` means the config's.
    pub max_tokens: Option<usize>,
    /// `--probe`: a fresh reader's restatement, compared field by field.
    pub probe: Option<crate::verify::probe::Options>,
    /// `sf` is the version in git's index: judge the repository as the
    /// next commit holds it.
    pub staged: bool,
    /// Only the errors are wanted (a checkpoint's look at what it wrote): the checks and
    /// parts of checks that can only warn are not run, and nothing they would read is read.
    pub errors_only: bool,
}

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
    pub probe: Option<crate::verify::probe::Report>,
}

/// Runs every check (and the probe) on `sf`.
pub fn verify(ws: &Workspace, sf: &StateFile, opts: &Options) -> anyhow::Result<VerifyReport> {
    let mut outcome = checks::all(&Subject {
        sf,
        ws,
        strict: opts.strict,
        max_tokens: opts.max_tokens,
        staged: opts.staged,
        errors_only: opts.errors_only,
    })?;
    let probe = match &opts.probe {
        Some(p) => {
            crate::verify::probe::for_verify(ws, sf, p, opts.max_tokens, &mut outcome.findings)?
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
    Ok(VerifyReport {
        ok: errors.is_empty(),
        checkpoint: sf.fm.checkpoint.as_ref().map(CheckpointRef::of),
        errors,
        warnings,
        notes: outcome.notes,
        probe,
    })
}

/// The errors `verify` would report on the state file as it is now (none
/// when it cannot be read): what `checkpoint` warns of as soon as it writes.
pub fn rejections(ws: &Workspace) -> Vec<Finding> {
    let Ok(sf) = StateFile::load(&ws.state_path) else {
        return Vec::new();
    };
    rejections_in(ws, &sf)
}

/// The errors `verify` would report on `sf` (a state file's text as read or as written).
pub fn rejections_in(ws: &Workspace, sf: &StateFile) -> Vec<Finding> {
    let opts = Options {
        errors_only: true,
        ..Options::default()
    };
    verify(ws, sf, &opts).map(|r| r.errors).unwrap_or_default()
}

/// A merge left half done in `text` (the file, or its staged version): the
/// regions as CK123 findings, nothing else (it cannot be read until it is
/// resolved).
pub fn conflicted(ws: &Workspace, text: &str) -> VerifyReport {
    VerifyReport {
        ok: false,
        checkpoint: None,
        errors: checks::conflicts(text, &ws.display_state()),
        warnings: Vec::new(),
        notes: Vec::new(),
        probe: None,
    }
}

/// Whether the report only says there is no checkpoint yet: "nothing to
/// check" has the same exit code (66) in every command.
pub fn no_checkpoint_yet(r: &VerifyReport) -> bool {
    r.errors.iter().any(|f| f.code == "CK002") && !r.errors.iter().any(|f| f.code == "CK001")
}

/// The findings for people, one a line, then the verdict.
pub fn human(r: &VerifyReport, path: &str) -> String {
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
