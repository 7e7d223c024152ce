//! ctxkeep: keep an LLM coding agent's working state in `project-state.md`,
//! so that a fresh session can continue cold.

pub mod agents;
pub mod cli;
pub mod commands;
pub mod context;
pub mod domain;
pub mod handoff;
pub mod install;
pub mod mcp;
pub mod pipeline;
pub mod system;
pub mod transcripts;
pub mod verify;

use cli::Cli;
use commands::Ctx;
use system::output::{self, Output};

/// Runs the parsed command line; the one place errors are printed and exit
/// codes chosen.
pub fn run(cli: Cli) -> u8 {
    output::set_ascii(cli.global.ascii || output::locale_is_ascii());
    let out = Output {
        json: cli.global.json,
        quiet: cli.global.quiet,
    };
    let ctx = Ctx {
        global: cli.global,
        out,
    };
    match commands::dispatch(cli.command, &ctx) {
        Ok(outcome) => outcome.exit_code(),
        Err(err) if system::error::is_broken_pipe(&err) => 0,
        Err(err) => {
            let code = system::error::exit_code_of(&err);
            // One line: the context chain joined, secrets redacted.
            let (msg, doc) = system::error::report(&err);
            if out.json {
                let _ = out.json(&doc);
            }
            output::stderr_line(&output::paint_stderr(
                output::Style::Error,
                &output::for_terminal(&format!("ctxkeep: error: {msg}")),
            ));
            code
        }
    }
}

/// Prints a command-line parse error (or `--help`/`--version`) the way clap
/// would, but redacted: clap quotes the offending argument, which may be a
/// key pasted into the wrong place. With `--json` among the arguments, the
/// error is also the one JSON document on stdout, as every other error is.
/// Returns clap's exit code (2, or 0).
pub fn usage_error(err: &clap::Error) -> u8 {
    use std::io::{IsTerminal, Write};
    let rendered = err.render();
    let code = err.exit_code().clamp(0, 255) as u8;
    if !err.use_stderr() {
        // Help and version: our own text, printed as clap prints it.
        let _ = err.print();
        return code;
    }
    if json_asked(std::env::args_os().skip(1)) {
        let (_, mut doc) = system::error::report(
            &system::error::Error::Usage(usage_line(&rendered.to_string())).into(),
        );
        doc["error"]["exit_code"] = code.into();
        let out = Output {
            json: true,
            quiet: false,
        };
        let _ = out.json(&doc);
    }
    let text = if output::color_enabled(std::io::stderr().is_terminal()) {
        rendered.ansi().to_string()
    } else {
        rendered.to_string()
    };
    let text = system::redact::redact(&text);
    let _ = std::io::stderr()
        .write_all(system::recorded::escape_controls_keep_colours(&text).as_bytes());
    code
}

/// Whether `--json` is among the arguments (before a `--`): the parse that
/// would say so failed.
fn json_asked(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    args.take_while(|a| a != "--").any(|a| a == "--json")
}

/// Clap's rendered error as one line: its message and tips, without the
/// usage and help pointers.
fn usage_line(rendered: &str) -> String {
    rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .fold(String::new(), |mut line, part| {
            if !line.is_empty() {
                line.push_str(if line.ends_with(':') { " " } else { "; " });
            }
            line.push_str(part);
            line
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clap_error_becomes_one_line() {
        let text = "error: unexpected argument '--nxt' found\n\n  tip: a similar argument exists: '--next'\n\nUsage: ctxkeep checkpoint --next <TEXT>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            usage_line(text),
            "unexpected argument '--nxt' found; tip: a similar argument exists: '--next'"
        );
        assert_eq!(
            usage_line("error: the following required arguments were not provided:\n  <FILE|->...\n\nUsage: x\n"),
            "the following required arguments were not provided: <FILE|->..."
        );
        let args = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(json_asked(
            args(&["checkpoint", "--json", "--nxt"]).into_iter()
        ));
        assert!(!json_asked(
            args(&["relay", "--agent-cmd", "x", "--", "--json"]).into_iter()
        ));
        assert!(!json_asked(args(&["count", "--jsonx"]).into_iter()));
    }
}
