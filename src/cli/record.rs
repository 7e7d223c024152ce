//! The commands that write the record: `checkpoint`, `track`, `count`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::agents::Agent;

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

    /// A decision made since the last commit (repeatable; replaces the list: the checkpoint
    /// records these decisions and no others; see --add-decision).
    #[arg(long = "decision", value_name = "TEXT", value_parser = decision_item)]
    pub decisions: Vec<String>,

    /// A decision added to those the checkpoint carries over (repeatable). Decisions belong to
    /// the commit they were made for: after HEAD moves none are carried, and the earlier
    /// ones stay in their checkpoint (`ctxkeep log`, .ctxkeep/checkpoints/).
    #[arg(long = "add-decision", value_name = "TEXT", value_parser = decision_item, conflicts_with = "clear_decisions")]
    pub add_decisions: Vec<String>,

    /// Empty the list of decisions (the next checkpoint records none).
    #[arg(long, conflicts_with = "decisions")]
    pub clear_decisions: bool,

    /// An open question (repeatable; replaces the list).
    #[arg(long = "question", value_name = "TEXT", value_parser = question_item)]
    pub questions: Vec<String>,

    /// Empty the list of open questions.
    #[arg(long, conflicts_with = "questions")]
    pub clear_questions: bool,

    /// Free notes (--note '' clears them).
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,

    /// An action item finished (repeatable): added to the done list and
    /// taken off the remaining list (matched ignoring case and spacing).
    #[arg(long = "done", value_name = "TEXT", value_parser = done_item)]
    pub done: Vec<String>,

    /// An action item still to do (repeatable): added to the remaining list
    /// carried over from the last checkpoint.
    #[arg(long = "remaining", value_name = "TEXT", value_parser = remaining_item)]
    pub remaining: Vec<String>,

    /// Empty the remaining list first (with --remaining: replace it).
    #[arg(long)]
    pub clear_remaining: bool,

    /// Read fields from a YAML or JSON file (or - for stdin): phase, active_task,
    /// controlling_agent, next_action (text), decisions, open_questions (lists of text),
    /// notes (text), done, remaining (lists of text, added as --done and --remaining
    /// add), clear_remaining (true or false). Flags given as well win over the file.
    #[arg(long, value_name = "FILE|-")]
    pub from: Option<String>,

    /// Why this checkpoint is written: manual, a stage name, pre-compact, session-end.
    #[arg(long, value_name = "NAME", default_value = "manual")]
    pub trigger: String,

    /// The session whose tracked budget is recorded in the checkpoint.
    #[arg(
        long,
        value_name = "ID",
        env = "CTXKEEP_SESSION",
        default_value = "default"
    )]
    pub session: String,

    /// Record what the agent's session did (its last request, plan, changed
    /// files and commands) from its transcript, under `observed`.
    #[arg(long, value_name = "PATH")]
    pub transcript: Option<PathBuf>,
}

/// An item of `--decision`: text, never empty (an empty item is no
/// decision; `--clear-decisions` empties the list).
fn decision_item(s: &str) -> Result<String, String> {
    list_item(s, "--clear-decisions")
}

/// An item of `--question`, as [`decision_item`].
fn question_item(s: &str) -> Result<String, String> {
    list_item(s, "--clear-questions")
}

/// An item of `--done`: text, never empty.
fn done_item(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("an item needs text".into());
    }
    Ok(s.to_string())
}

/// An item of `--remaining`, as [`decision_item`].
fn remaining_item(s: &str) -> Result<String, String> {
    list_item(s, "--clear-remaining")
}

fn list_item(s: &str, clear: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err(format!(
            "an item needs text (to empty the list, use {clear})"
        ));
    }
    Ok(s.to_string())
}

#[derive(Debug, Args)]
pub struct TrackArgs {
    /// The context size now, in tokens (manual).
    #[arg(long, value_name = "N", group = "source")]
    pub tokens: Option<u64>,

    /// Add N tokens to the session's last known size (negative to subtract; manual).
    #[arg(
        long,
        value_name = "N",
        group = "source",
        allow_negative_numbers = true
    )]
    pub add: Option<i64>,

    /// Count the BPE tokens of FILE, or - for stdin (estimate). Counting the same
    /// file again after it grew tokenizes only what was appended.
    #[arg(long, value_name = "FILE|-", group = "source")]
    pub count: Option<String>,

    /// Read the provider's exact usage from the agent's transcript (usage).
    #[arg(long, value_name = "PATH", group = "source")]
    pub transcript: Option<PathBuf>,

    /// Which agent wrote the transcript [default: auto, from its content].
    #[arg(long, value_enum, value_name = "AGENT")]
    pub agent: Option<AgentArg>,

    /// BPE encoding for --count [default: the config's, else the model's, else o200k_base].
    #[arg(long, value_name = "NAME", value_parser = crate::context::tokens::EncodingParser)]
    pub encoding: Option<crate::context::tokens::Encoding>,

    /// Context window in tokens [default: the transcript's, else the config's, else the model table's].
    #[arg(long, value_name = "TOKENS")]
    pub window: Option<u64>,

    /// The session to update.
    #[arg(
        long,
        value_name = "ID",
        env = "CTXKEEP_SESSION",
        default_value = "default"
    )]
    pub session: String,

    /// The session's message count now; a count lower than the last one suggests truncation.
    #[arg(long, value_name = "N")]
    pub messages: Option<u64>,

    /// Exit 1 when the context is at or above PCT percent of the window.
    #[arg(long, value_name = "PCT")]
    pub fail_at: Option<f64>,
}

/// `--agent` values: `auto`, or an agent of the registry (aliases as the
/// transcript readers accept them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentArg {
    Auto,
    Named(Agent),
}

impl AgentArg {
    /// The agent named, None for `auto`.
    pub fn agent(self) -> Option<Agent> {
        match self {
            AgentArg::Auto => None,
            AgentArg::Named(a) => Some(a),
        }
    }
}

impl ValueEnum for AgentArg {
    fn value_variants<'a>() -> &'a [Self] {
        static VARIANTS: std::sync::LazyLock<Vec<AgentArg>> = std::sync::LazyLock::new(|| {
            std::iter::once(AgentArg::Auto)
                .chain(Agent::ALL.into_iter().map(AgentArg::Named))
                .collect()
        });
        &VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        match self {
            AgentArg::Auto => Some(clap::builder::PossibleValue::new("auto")),
            AgentArg::Named(a) => a.to_possible_value(),
        }
    }
}

#[derive(Debug, Args)]
pub struct CountArgs {
    /// Regular files to count; - reads stdin (once). FIFOs and devices are refused.
    #[arg(value_name = "FILE|-", required_unless_present = "list_models")]
    pub files: Vec<String>,

    /// List the models ctxkeep knows (`--model`, `init --model`, a transcript's model): each
    /// name with its encoding and window, then the project's own `models:` entries. A name
    /// also covers its longer versions (`gpt-5` covers `gpt-5-mini`); `[1m]` after a name
    /// means a 1,000,000-token window.
    #[arg(long, conflicts_with_all = ["files", "encoding", "model"])]
    pub list_models: bool,

    /// BPE encoding [default: the config's when in a project, else o200k_base].
    #[arg(long, value_name = "NAME", value_parser = crate::context::tokens::EncodingParser, conflicts_with = "model")]
    pub encoding: Option<crate::context::tokens::Encoding>,

    /// Use the encoding of this model from the model table.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
}
