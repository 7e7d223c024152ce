use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = ctxkeep::cli::Cli::parse();
    ExitCode::from(ctxkeep::run(cli))
}
