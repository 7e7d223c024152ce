//! `ctxkeep completions SHELL` and `ctxkeep man`: generated from the clap
//! definitions, so they never drift from `--help`.

use super::{Ctx, Outcome};
use std::io::Write;
use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::Shell as Target;
use serde::Serialize;

use crate::cli::{Cli, CompletionsArgs, ManArgs, Shell};
use crate::system::error::Error;

pub fn run(args: CompletionsArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    refuse_json(ctx, "completions", "a shell script")?;
    let target = match args.shell {
        Shell::Bash => Target::Bash,
        Shell::Zsh => Target::Zsh,
        Shell::Fish => Target::Fish,
        Shell::Powershell => Target::PowerShell,
        Shell::Elvish => Target::Elvish,
    };
    let mut buf = Vec::new();
    clap_complete::generate(target, &mut Cli::command(), "ctxkeep", &mut buf);
    print_raw(&buf)
}

/// What `man --dir DIR --json` prints.
#[derive(Debug, Serialize)]
struct Written {
    dir: PathBuf,
    pages: Vec<String>,
}

pub fn man(args: ManArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    if let Some(dir) = args.dir {
        let pages = write_pages(&root, &dir)?;
        ctx.out.info(&format!(
            "wrote {} man pages into {} (add it to MANPATH, or use `man -l FILE`)",
            pages.len(),
            dir.display()
        ));
        ctx.out.json(&Written { dir, pages })?;
        return Ok(Outcome::Ok);
    }
    refuse_json(ctx, "man", "roff")?;
    let mut page = root;
    for name in &args.command {
        let found = page
            .get_subcommands()
            .find(|c| c.get_name() == name || c.get_all_aliases().any(|a| a == name))
            .cloned();
        page = found.ok_or_else(|| {
            Error::Usage(format!(
                "no command `{}`; `ctxkeep man --dir DIR` writes every page",
                args.command.join(" ")
            ))
        })?;
    }
    let mut buf = Vec::new();
    clap_mangen::Man::new(page).render(&mut buf)?;
    print_raw(&buf)
}

/// Writes ctxkeep.1 and a page per command (nested ones included, e.g.
/// ctxkeep-hooks-install.1); returns the file names.
fn write_pages(root: &clap::Command, dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create the folder", e))?;
    let mut pages = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(cmd) = stack.pop() {
        stack.extend(cmd.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
        let man = clap_mangen::Man::new(cmd);
        let name = man.get_filename();
        let mut buf = Vec::new();
        man.render(&mut buf)?;
        let path = dir.join(&name);
        crate::system::fsutil::replace_cache(&path, &buf)?;
        pages.push(name);
    }
    crate::system::sorting::sort(&mut pages);
    Ok(pages)
}

/// Commands whose output is not data refuse `--json` rather than ignore it.
fn refuse_json(ctx: &Ctx, command: &str, what: &str) -> Result<(), Error> {
    if ctx.out.json {
        return Err(Error::Usage(format!(
            "`ctxkeep {command}` prints {what}, not data; run it without --json"
        )));
    }
    Ok(())
}

fn print_raw(buf: &[u8]) -> anyhow::Result<Outcome> {
    let mut out = std::io::stdout().lock();
    out.write_all(buf)?;
    out.flush()?;
    Ok(Outcome::Ok)
}
