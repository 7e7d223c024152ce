//! Every clap type, with the help text users read. No I/O here: `mod.rs` holds the command
//! line's top (the global options and the list of commands); each file the arguments of one
//! family of commands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

mod handoff;
mod hook;
mod record;
mod setup;

pub use handoff::{
    AckArgs, GcArgs, LogArgs, RelayArgs, RestoreArgs, ResumeArgs, StatusArgs, VerifyArgs,
};
pub use hook::{HookArgs, HookCli, StatuslineArgs};
pub use record::{AgentArg, CheckpointArgs, CountArgs, TrackArgs};
pub use setup::{
    CompletionsArgs, DemoArgs, HooksArgs, HooksCommand, HooksDoctorArgs, HooksInstallArgs,
    HooksUninstallArgs, InitArgs, ManArgs, McpArgs, MergeFileArgs, ResolveArgs, SettingsEdit,
    Shell,
};

/// Keep an LLM coding agent's working state in project-state.md, so that a
/// fresh session (or a person) can pick the work up cold.
#[derive(Debug, Parser)]
#[command(name = "ctxkeep", version, about, long_about = None, after_long_help = crate::system::codes::exit_help_short())]
#[command(propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// `--lock-timeout`'s default.
pub(crate) const LOCK_TIMEOUT_SECS: f64 = 10.0;

#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Print exactly one JSON document on stdout (errors included); messages go to stderr.
    #[arg(long, global = true)]
    pub json: bool,

    /// Print nothing but errors on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,

    /// The state file [default: the nearest project-state.md from the current directory upward].
    #[arg(long, global = true, env = "CTXKEEP_STATE", value_name = "PATH")]
    pub state: Option<PathBuf>,

    /// Print only ASCII: `|` for `·`, `...` for `…` and so on [default: on when the
    /// locale (LC_ALL, LC_CTYPE, LANG) is not UTF-8].
    #[arg(long, global = true, env = "CTXKEEP_ASCII", value_parser = clap::builder::FalseyValueParser::new())]
    pub ascii: bool,

    /// How long to wait for another ctxkeep process's lock, in seconds.
    #[arg(
        long,
        global = true,
        env = "CTXKEEP_LOCK_TIMEOUT",
        value_name = "SECS",
        default_value_t = LOCK_TIMEOUT_SECS
    )]
    pub lock_timeout: f64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the whole loop in a throwaway project and show each command with its output:
    /// init, checkpoint, track with a stage firing, verify passing and failing, resume.
    ///
    /// Runs in a new temporary folder, removed at the end; never touches the current
    /// directory. `--keep DIR` runs in DIR instead (new or empty) and keeps it.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Demo(DemoArgs),
    /// Create project-state.md and .ctxkeep/ (or update the given settings).
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Init(InitArgs),
    /// Write a new checkpoint: the fields you give, the rest carried over, git state captured
    ///
    /// The first checkpoint needs all four required fields: --phase, --task, --agent and
    /// --next. Later ones carry over every field you do not give. A checkpoint that would
    /// leave a required field empty is refused (exit 1) and nothing is written.
    ///
    /// Example:
    ///   ctxkeep checkpoint --phase "parser" --task "split the front matter" \
    ///       --agent claude-code --next "run cargo test and fix the CRLF case"
    #[command(after_long_help = crate::system::codes::exit_help_short(), verbatim_doc_comment)]
    Checkpoint(CheckpointArgs),
    /// Print the continuation prompt a fresh session starts from.
    ///
    /// A plain `resume` is a restore: it opens a session in the chain
    /// (.ctxkeep/sessions/), asks the reader to confirm by a marker line in its
    /// reply (`Resuming from CKPT (ctxkeep NONCE)`, read by the hooks; a person runs
    /// `ctxkeep ack NONCE`), and logs a `resume` event. Until then `verify` warns
    /// CK801. To only look at the prompt, use `--peek`.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Resume(ResumeArgs),
    /// Check that the checkpoint is intact and can be read cold (the CI gate).
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Verify(VerifyArgs),
    /// Record how full a session's context window is; fire the stages it crossed.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Track(TrackArgs),
    /// Count the BPE tokens of files, like wc.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Count(CountArgs),
    /// Show a session's context gauge, stage and last checkpoint.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Status(StatusArgs),
    /// Confirm that the resume prompt was read, with the nonce it printed.
    #[command(
        after_long_help = crate::system::codes::exit_help_short(),
        override_usage = "ctxkeep ack <NONCE>\n       ctxkeep ack --transcript <PATH>"
    )]
    Ack(AckArgs),
    /// Apply the retention by hand: prune the archive, rotate the event log, sweep stale files.
    ///
    /// Stale files are temp files a killed process left behind, and the session records
    /// OpenCode's plugin keeps outside the project once no session wrote them for 30 days.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Gc(GcArgs),
    /// List checkpoints and sessions, newest first, one line each.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Log(LogArgs),
    /// Bring a checkpoint's uncommitted work back into the working tree.
    ///
    /// The checkpoints ctxkeep writes on its own (before a compaction, at a stage, at the
    /// session's end, before a command such as `git reset --hard`) store the uncommitted work
    /// in git, under refs/ctxkeep/snapshots/<checkpoint>. `restore` writes those files back
    /// (and removes the ones that were deleted then); HEAD, the branch and git's index stay as
    /// they are, and project-state.md is never touched. It refuses (exit 1) when a file it
    /// would write has local changes of its own, unless --force.
    ///
    /// Example:
    ///   ctxkeep restore              # the latest checkpoint with a snapshot
    ///   ctxkeep restore ckpt-0012 --force
    #[command(after_long_help = crate::system::codes::exit_help(), verbatim_doc_comment)]
    Restore(RestoreArgs),
    /// git's merge driver for project-state.md: merge BASE, OURS and THEIRS into OURS
    /// (exit 0 merged, 1 with a conflict left). `init` sets it up.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    MergeFile(MergeFileArgs),
    /// Finish a merge that left conflict markers in project-state.md, by the format's
    /// merge rules (from git's index during a merge, else from the markers).
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Resolve(ResolveArgs),
    /// Run as an agent's hook: read the event's JSON on stdin, then track usage,
    /// checkpoint or inject the resume prompt; around a compaction, brief the
    /// summarizer (Claude Code's PreCompact, plain text), audit its summary and give
    /// back only what it left out. Fails open (exit 0) unless --strict.
    Hook(HookArgs),
    /// Print a one-line context gauge for Claude Code's status line (reads its JSON on stdin).
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Statusline(StatuslineArgs),
    /// Install, remove or check ctxkeep's hooks in an agent's settings.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Hooks(HooksArgs),
    /// Serve the checkpoint as MCP tools over stdio (checkpoint, resume, status, verify,
    /// ack), for any agent that speaks the Model Context Protocol.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Mcp(McpArgs),
    /// Run an agent headless, session after session, each resuming from the latest
    /// checkpoint; hand the work to the next agent when one hands off, fails or is stuck.
    #[command(after_long_help = crate::system::codes::exit_help_short())]
    Relay(RelayArgs),
    /// Print a shell completion script (generated from these definitions).
    Completions(CompletionsArgs),
    /// Print a man page in roff, or write all of them (generated from these definitions).
    ///
    /// `ctxkeep man` prints ctxkeep(1); `ctxkeep man checkpoint` prints ctxkeep-checkpoint(1)
    /// (`ctxkeep man hooks install` for ctxkeep-hooks-install(1)); `ctxkeep man --dir DIR`
    /// writes ctxkeep.1 and one ctxkeep-COMMAND.1 per command into DIR, e.g.
    ///   ctxkeep man --dir ~/.local/share/man/man1
    #[command(verbatim_doc_comment)]
    Man(ManArgs),
    /// Print the exit codes and what each means (also `ctxkeep help exit-codes`).
    #[command(name = "exit-codes", long_about = crate::system::codes::exit_help())]
    ExitCodes,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::command().debug_assert();
    }
}
