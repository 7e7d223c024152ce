//! `ctxkeep completions SHELL` and `ctxkeep man`: generated from the clap
//! definitions, so they never drift from `--help`.

use super::Outcome;
use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell as Target;

use crate::cli::{Cli, CompletionsArgs, Shell};

pub fn run(args: CompletionsArgs) -> anyhow::Result<Outcome> {
    let target = match args.shell {
        Shell::Bash => Target::Bash,
        Shell::Zsh => Target::Zsh,
        Shell::Fish => Target::Fish,
        Shell::Powershell => Target::PowerShell,
        Shell::Elvish => Target::Elvish,
    };
    let mut buf = Vec::new();
    clap_complete::generate(target, &mut Cli::command(), "ctxkeep", &mut buf);
    let mut out = std::io::stdout().lock();
    out.write_all(&buf)?;
    out.flush()?;
    Ok(Outcome::Ok)
}

pub fn man() -> anyhow::Result<Outcome> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&buf)?;
    out.flush()?;
    Ok(Outcome::Ok)
}
