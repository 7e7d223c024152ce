use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match ctxkeep::cli::Cli::try_parse() {
        Ok(cli) => ExitCode::from(ctxkeep::run(cli)),
        Err(err) => ExitCode::from(ctxkeep::usage_error(&err)),
    }
}
