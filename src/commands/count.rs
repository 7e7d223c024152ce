//! `ctxkeep count`: BPE tokens per file and in total, like `wc`; each file
//! (or stdin, as `-`) is counted as it is read, in bounded memory.

use std::io;
use std::path::Path;

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::cli::CountArgs;
use crate::context::tokens::Encoding;
use crate::domain::config::Config;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::progress::Progress;

#[derive(Debug, Serialize)]
struct Report {
    encoding: String,
    files: Vec<FileCount>,
    total: u64,
}

#[derive(Debug, Serialize)]
struct FileCount {
    path: String,
    tokens: u64,
}

pub fn run(args: CountArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    if args.list_models {
        return list_models(ctx);
    }
    let encoding = pick_encoding(&args, ctx)?;
    let files = args.files.clone();
    if files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(Error::Usage("stdin (-) can be counted only once".into()).into());
    }
    // Check every file before the slow part, so a typo (or a FIFO, which
    // would block) fails at once.
    let mut total_bytes = 0u64;
    for f in files.iter().filter(|f| *f != "-") {
        total_bytes += crate::context::tokens::countable_len(Path::new(f))?;
    }
    let mut progress = Progress::new(total_bytes, &ctx.out);
    let mut counts = Vec::with_capacity(files.len());
    for f in &files {
        progress.set_label(f);
        let tokens = if f == "-" {
            crate::context::tokens::count_reader(io::stdin().lock(), "-", encoding)?
        } else {
            crate::context::tokens::count_file_with_progress(Path::new(f), encoding, &mut |n| {
                progress.advance(n)
            })?
        };
        counts.push(FileCount {
            path: f.clone(),
            tokens: tokens as u64,
        });
    }
    progress.finish();
    let report = Report {
        encoding: encoding.to_string(),
        total: counts.iter().map(|c| c.tokens).sum(),
        files: counts,
    };
    ctx.out.json(&report)?;
    let width = report.total.to_string().len().max(7);
    let mut text = String::new();
    for c in &report.files {
        text.push_str(&format!("{:>width$} {}\n", c.tokens, c.path));
    }
    if report.files.len() > 1 {
        text.push_str(&format!("{:>width$} total\n", report.total));
    }
    ctx.out.data(&text)?;
    Ok(Outcome::Ok)
}

/// `--encoding`, else `--model`'s from the model table, else the project's
/// configured encoding when there is a project, else o200k_base.
#[derive(Debug, Serialize)]
struct KnownModel {
    name: String,
    encoding: Option<&'static str>,
    window: Option<u64>,
    /// `table` (built in) or `project` (the front matter's `models:`).
    source: &'static str,
}

/// `count --list-models`: the model table, then the project's own entries.
fn list_models(ctx: &Ctx) -> anyhow::Result<Outcome> {
    let mut models: Vec<KnownModel> = crate::context::models::table()
        .map(|(name, encoding, window)| KnownModel {
            name: name.to_string(),
            encoding: Some(encoding.name()),
            window: Some(window),
            source: "table",
        })
        .collect();
    let project = Workspace::resolve(&ctx.locate(), false)
        .ok()
        .and_then(|ws| StateFile::load(&ws.state_path).ok())
        .filter(StateFile::is_initialized)
        .map(|sf| Config::from_front(&sf.fm));
    if let Some(c) = project {
        models.extend(c.model_overrides.iter().map(|(name, o)| KnownModel {
            name: name.clone(),
            encoding: o.encoding.map(|e| e.name()),
            window: o.window,
            source: "project",
        }));
    }
    ctx.out.json(&serde_json::json!({ "models": models }))?;
    let width = models.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for m in &models {
        let window = m
            .window
            .map(crate::system::output::thousands)
            .unwrap_or_else(|| "(table's)".into());
        text.push_str(&format!(
            "{:<width$}  {:<11}  {:>9}{}\n",
            m.name,
            m.encoding.unwrap_or("(table's)"),
            window,
            if m.source == "project" {
                "  (project)"
            } else {
                ""
            },
        ));
    }
    ctx.out.data(&text)?;
    Ok(Outcome::Ok)
}

fn pick_encoding(args: &CountArgs, ctx: &Ctx) -> anyhow::Result<Encoding> {
    if let Some(e) = args.encoding {
        return Ok(e);
    }
    let project = Workspace::resolve(&ctx.locate(), false)
        .ok()
        .and_then(|ws| StateFile::load(&ws.state_path).ok())
        .filter(StateFile::is_initialized)
        .map(|sf| Config::from_front(&sf.fm));
    if let Some(m) = &args.model {
        let info = match &project {
            Some(c) => c.model_info(m),
            None => crate::context::models::lookup(m),
        };
        return match info {
            Some(i) => Ok(i.encoding),
            None => Err(crate::context::models::not_in_table(m, "give --encoding instead").into()),
        };
    }
    Ok(project.map(|c| c.encoding).unwrap_or(Encoding::O200kBase))
}
