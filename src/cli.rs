//! Every clap type, with the help text users read. No I/O here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "\
Exit codes:
  0   ok (also when stdout is closed early, e.g. `| head`)
  1   a check says no (verify found errors, --fail-at reached, wrong nonce)
  2   usage error
  65  bad data: malformed project-state.md, transcript or input
  66  not initialized, or an input file is missing
  74  I/O error (disk full, read-only filesystem)
  75  lock timeout or concurrent edit: retry
  77  permission denied";

/// Keep an LLM coding agent's working state in project-state.md, so that a
/// fresh session (or a person) can pick the work up cold.
#[derive(Debug, Parser)]
#[command(name = "ctxkeep", version, about, long_about = None, after_long_help = EXIT_CODES)]
#[command(propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone)]
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

    /// How long to wait for another ctxkeep process's lock, in seconds.
    #[arg(
        long,
        global = true,
        env = "CTXKEEP_LOCK_TIMEOUT",
        value_name = "SECS",
        default_value_t = 10.0
    )]
    pub lock_timeout: f64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create project-state.md and .ctxkeep/ (or update the given settings).
    #[command(after_long_help = EXIT_CODES)]
    Init(InitArgs),
    /// Write a new checkpoint: the fields you give, the rest carried over, git state captured.
    #[command(after_long_help = EXIT_CODES)]
    Checkpoint(CheckpointArgs),
    /// Print the continuation prompt a fresh session starts from.
    #[command(after_long_help = EXIT_CODES)]
    Resume(ResumeArgs),
    /// Check that the checkpoint is intact and can be read cold (the CI gate).
    #[command(after_long_help = EXIT_CODES)]
    Verify(VerifyArgs),
    /// Print a shell completion script (generated from these definitions).
    Completions(CompletionsArgs),
    /// Print the man page in roff (generated from these definitions).
    Man,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Model name; picks the window and encoding from the model table.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// Context window in tokens [default: the model's, else 200000].
    #[arg(long, value_name = "TOKENS")]
    pub window: Option<u64>,

    /// Threshold stages as PCT[:ACTION] items, ACTION one of warn, checkpoint, handoff
    /// [default: 80:warn,90:checkpoint,95:checkpoint,98:handoff].
    #[arg(long, value_name = "LIST")]
    pub stages: Option<String>,

    /// BPE encoding used to count tokens (o200k_base, cl100k_base, ...).
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,

    /// Write the default templates into the project's template folder for editing,
    /// and name that folder in the config.
    #[arg(long)]
    pub eject_templates: bool,
}

#[derive(Debug, Args, Default)]
pub struct CheckpointArgs {
    /// The phase of the work (e.g. "implementing the parser").
    #[arg(long, value_name = "TEXT")]
    pub phase: Option<String>,

    /// The task being worked on now.
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,

    /// Who controls the work (e.g. "claude-code", "alice").
    #[arg(long, value_name = "TEXT")]
    pub agent: Option<String>,

    /// The very next concrete action, readable cold.
    #[arg(long, value_name = "TEXT")]
    pub next: Option<String>,

    /// A decision made since the last commit (repeatable; replaces the list).
    #[arg(long = "decision", value_name = "TEXT")]
    pub decisions: Vec<String>,

    /// An open question (repeatable; replaces the list).
    #[arg(long = "question", value_name = "TEXT")]
    pub questions: Vec<String>,

    /// Free notes.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,

    /// Read fields from a YAML or JSON file (or - for stdin) with the record's field names.
    #[arg(long, value_name = "FILE|-")]
    pub from: Option<String>,

    /// Why this checkpoint is written: manual, a stage name, pre-compact, session-end.
    #[arg(long, value_name = "NAME", default_value = "manual")]
    pub trigger: String,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// Keep the prompt within N tokens (configured encoding); lower-priority sections go first.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,

    /// Print the prompt even when the checkpoint is damaged or was edited by hand.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Treat warnings that matter (hand edits, undescribed changes) as errors.
    #[arg(long)]
    pub strict: bool,

    /// The resume prompt must fit N tokens (configured encoding) [default: resume_max_tokens, 2000].
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
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
