use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ignore_file_size_signal();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(cli) = ctxkeep::cli::HookCli::parse_fast(&args) {
        return ExitCode::from(ctxkeep::run(cli));
    }
    match ctxkeep::cli::Cli::try_parse_from(&args) {
        Ok(cli) => ExitCode::from(ctxkeep::run(cli)),
        Err(err) => ExitCode::from(ctxkeep::usage_error(&err)),
    }
}

/// A write past the file-size limit (`ulimit -f`) raises SIGXFSZ, whose
/// default kills the process mid-write, silently, leaving its temp file.
/// Ignored, the write fails with EFBIG instead: an I/O error (exit 74) that
/// removes the temp file and leaves the original as it was.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread starts; setting
    // a signal's disposition to SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
