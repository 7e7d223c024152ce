use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(cli) = ctxkeep::cli::HookCli::parse_fast(&args) {
        return ExitCode::from(ctxkeep::run(cli));
    }
    match ctxkeep::cli::Cli::try_parse_from(&args) {
        Ok(cli) => ExitCode::from(ctxkeep::run(cli)),
        Err(err) => ExitCode::from(ctxkeep::usage_error(&err)),
    }
}
