//! `ctxkeep count`: BPE tokens per file and in total, like `wc`.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use anyhow::Context;

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::cli::CountArgs;
use crate::config::Config;
use crate::error::Error;
use crate::progress::Progress;
use crate::state::StateFile;
use crate::tokens::Encoding;
use crate::workspace::Workspace;

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
    let encoding = pick_encoding(&args, ctx)?;
    let mut files = args.files.clone();
    if files.is_empty() {
        files.push("-".into());
    }
    if files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(Error::Usage("stdin (-) can be counted only once".into()).into());
    }
    // Check every file before the slow part, so a typo fails at once.
    let mut total_bytes = 0u64;
    for f in files.iter().filter(|f| *f != "-") {
        total_bytes += crate::tokens::countable_len(Path::new(f))?;
    }
    let mut progress = Progress::new(total_bytes, &ctx.out);
    let mut counts = Vec::with_capacity(files.len());
    for f in &files {
        progress.set_label(f);
        let tokens = if f == "-" {
            count_stdin(encoding)?
        } else {
            count_file_with(Path::new(f), encoding, &mut progress)?
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
            None => crate::models::lookup(m),
        };
        return match info {
            Some(i) => Ok(i.encoding),
            None => Err(crate::models::not_in_table(m, "give --encoding instead").into()),
        };
    }
    Ok(project.map(|c| c.encoding).unwrap_or(Encoding::O200kBase))
}

fn count_file_with(path: &Path, enc: Encoding, progress: &mut Progress) -> anyhow::Result<usize> {
    let mut file = File::open(path).map_err(|e| Error::io(path, "cannot read", e))?;
    let text = read_utf8(&mut file, path)?;
    count_with_progress(&text, enc, progress)
        .with_context(|| format!("{}: counting tokens", path.display()))
}

fn count_stdin(enc: Encoding) -> anyhow::Result<usize> {
    crate::tokens::count_reader(io::stdin().lock(), "-", enc)
}

fn read_utf8(reader: &mut dyn Read, path: &Path) -> Result<String, Error> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    crate::fsutil::text_from_bytes(bytes, path, 0)
}

/// Bytes counted between two redraws of the bar. Each piece is still
/// counted on every core by `tokens::count`.
const PROGRESS_CHUNK: usize = 4 * 1024 * 1024;

/// `tokens::count`, in pieces cut where the counts add up exactly
/// (`tokens::is_safe_cut`), so the bar can move. With no bar: one piece.
fn count_with_progress(
    text: &str,
    enc: Encoding,
    progress: &mut Progress,
) -> anyhow::Result<usize> {
    if !progress.enabled() || text.len() <= PROGRESS_CHUNK {
        let n = crate::tokens::count(text, enc)?;
        progress.advance(text.len() as u64);
        return Ok(n);
    }
    let mut total = 0;
    let mut start = 0;
    while start < text.len() {
        let end =
            crate::tokens::next_safe_cut(text, start + PROGRESS_CHUNK, enc).unwrap_or(text.len());
        total += crate::tokens::count(&text[start..end], enc)?;
        progress.advance((end - start) as u64);
        start = end;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_in_pieces_gives_the_whole_count() {
        let text = "fn main() {\n    let x = 1;\n}\n\n  indented\n/path\nword\n".repeat(200);
        for at in [0, 1, 17, 500, 3000, text.len()] {
            let cut =
                crate::tokens::next_safe_cut(&text, at, Encoding::O200kBase).unwrap_or(text.len());
            assert!(cut >= at.min(text.len()));
            let sum = crate::tokens::count(&text[..cut], Encoding::O200kBase).unwrap()
                + crate::tokens::count(&text[cut..], Encoding::O200kBase).unwrap();
            assert_eq!(
                sum,
                crate::tokens::count(&text, Encoding::O200kBase).unwrap(),
                "cut at {cut}"
            );
        }
    }
}
