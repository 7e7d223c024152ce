//! Every clap type, with the help text users read. No I/O here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::agents::Agent;

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

/// `ctxkeep hook AGENT [JSON]` alone, with the global options: what every agent hook runs on
/// each prompt and tool call, parsed without building the whole command line (that was a
/// third of a hook's work). The same argument definitions as [`Cli`]'s; whatever this does not
/// accept is handed to [`Cli`], which says what is wrong.
#[derive(Debug, Parser)]
#[command(
    name = "ctxkeep hook",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct HookCli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(flatten)]
    pub hook: HookArgs,
}

impl HookCli {
    /// The command line as [`Cli`] would have parsed it, when it is `ctxkeep hook …` with
    /// nothing this parser cannot read.
    pub fn parse_fast(args: &[std::ffi::OsString]) -> Option<Cli> {
        if args.get(1).is_none_or(|a| a != "hook") {
            return None;
        }
        if let Some(cli) = HookCli::parse_plain(&args[2..]) {
            return Some(cli);
        }
        let rest = args[..1].iter().chain(&args[2..]);
        let h = HookCli::try_parse_from(rest).ok()?;
        Some(Cli {
            global: h.global,
            command: Command::Hook(h.hook),
        })
    }

    /// The command line agents' hooks write, read by hand (clap's parser costs a tenth of a
    /// hook's work): an agent's id or alias, the payload, `--strict` and `--plugin`, with no
    /// global option on it and none in the environment but the state file's path. Whatever
    /// else it holds goes to clap.
    fn parse_plain(rest: &[std::ffi::OsString]) -> Option<Cli> {
        if std::env::var_os("CTXKEEP_ASCII").is_some()
            || std::env::var_os("CTXKEEP_LOCK_TIMEOUT").is_some()
        {
            return None;
        }
        let state = match std::env::var_os("CTXKEEP_STATE") {
            Some(v) if v.is_empty() => return None,
            v => v.map(PathBuf::from),
        };
        let (mut agent, mut payload, mut strict, mut plugin) = (None, None, false, false);
        for arg in rest {
            let arg = arg.to_str()?;
            match arg {
                "--strict" if !strict => strict = true,
                "--plugin" if !plugin => plugin = true,
                _ if arg.starts_with('-') => return None,
                _ if agent.is_none() => {
                    let named = |a: &Agent| a.spec().id == arg || a.spec().aliases.contains(&arg);
                    agent = Some(Agent::ALL.into_iter().find(named)?);
                }
                _ if payload.is_none() => payload = Some(arg.to_string()),
                _ => return None,
            }
        }
        Some(Cli {
            global: GlobalArgs {
                json: false,
                quiet: false,
                state,
                ascii: false,
                lock_timeout: LOCK_TIMEOUT_SECS,
            },
            command: Command::Hook(HookArgs {
                agent: agent?,
                payload,
                strict,
                plugin,
            }),
        })
    }
}

/// `--lock-timeout`'s default.
const LOCK_TIMEOUT_SECS: f64 = 10.0;

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

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Run in DIR (a new or empty folder) and keep it afterwards.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print [default: the top-level page].
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Vec<String>,

    /// Write every page into DIR (created if missing) instead of printing one.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent whose hook runs this command.
    #[arg(value_enum)]
    pub agent: Agent,

    /// The event's JSON as an argument instead of stdin (Codex's `notify` passes it this way).
    #[arg(value_name = "JSON")]
    pub payload: Option<String>,

    /// On an internal error exit 2, which blocks the agent's action (e.g. a compaction
    /// without its checkpoint), instead of failing open with exit 0.
    #[arg(long)]
    pub strict: bool,

    /// Run from ctxkeep's plugin for the agent (Claude Code's): do nothing, silently, in a
    /// folder without project-state.md, or when the project's settings carry ctxkeep's own
    /// hooks for the agent (those run instead, so no event is handled twice).
    #[arg(long)]
    pub plugin: bool,
}

/// Every agent of the registry as a command-line value: its name, and its
/// aliases (`claude`, `codex-cli`, `gemini-cli`, …) accepted too.
impl ValueEnum for Agent {
    fn value_variants<'a>() -> &'a [Self] {
        &Agent::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let spec = self.spec();
        Some(clap::builder::PossibleValue::new(spec.id).aliases(spec.aliases.iter().copied()))
    }
}

#[derive(Debug, Args)]
pub struct StatuslineArgs {
    /// Your own status-line command: run with the same input (through `sh -c`), its output
    /// printed first and ctxkeep's gauge after it on the same line.
    #[arg(long, value_name = "COMMAND")]
    pub with: Option<String>,
}

#[derive(Debug, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub command: HooksCommand,
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Add ctxkeep's hooks to the agent's project settings (Claude Code: .claude/settings.json,
    /// with the status line; Codex: .codex/hooks.json; Gemini: .gemini/settings.json; Qwen Code:
    /// .qwen/settings.json; Copilot CLI: .github/hooks/ctxkeep.json; OpenCode, which takes code:
    /// ctxkeep's plugin .opencode/plugins/ctxkeep.js, written whole), keeping every other byte
    /// of the file; running it again changes nothing. Every file is checked
    /// before any is written. Says which trust step the agent needs before it runs them.
    Install(HooksInstallArgs),
    /// Remove ctxkeep's hooks (and Claude Code's status line), and nothing else: the files
    /// get back the bytes they had before `install` (one left empty is removed).
    Uninstall(HooksUninstallArgs),
    /// Check that the hooks are installed and that each command runs (exit 1 if not).
    Doctor(HooksDoctorArgs),
}

/// The settings file `hooks install` and `hooks uninstall` edit.
#[derive(Debug, Args)]
pub struct SettingsEdit {
    /// The agent whose settings to edit.
    #[arg(value_enum)]
    pub agent: Agent,

    /// Print the change and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// The settings file [default: beside project-state.md, .claude/settings.json,
    /// .codex/hooks.json, .gemini/settings.json, .qwen/settings.json, .github/hooks/ctxkeep.json
    /// or (OpenCode's plugin) .opencode/plugins/ctxkeep.js].
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,

    /// Your personal settings file rather than the one the team shares through git (Claude
    /// Code: .claude/settings.local.json, which git ignores). With install, the MCP server is
    /// not registered: its file is shared.
    #[arg(long, conflicts_with = "settings")]
    pub personal: bool,
}

#[derive(Debug, Args)]
pub struct HooksInstallArgs {
    #[command(flatten)]
    pub edit: SettingsEdit,

    /// Replace a status line you already have (Claude Code; without it, yours is kept).
    #[arg(long)]
    pub force: bool,

    /// Leave out `ctxkeep mcp`'s registration (the default now; kept for scripts).
    #[arg(long, conflicts_with = "team")]
    pub no_mcp: bool,

    /// Also register `ctxkeep mcp` in the agent's project MCP configuration (.mcp.json,
    /// .codex/config.toml, .gemini/settings.json, .qwen/settings.json, opencode.json or
    /// .github/mcp.json), which the team shares once committed: every teammate's agent then
    /// starts it (Claude Code asks each to approve it), and it fails where ctxkeep is missing.
    /// Without it the MCP server is not registered: register it for yourself with the
    /// agent's own command (`hooks install` prints it).
    #[arg(long, conflicts_with = "personal")]
    pub team: bool,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The session the tools' checkpoints record the budget and transcript of, unless a
    /// call names another.
    #[arg(long, env = "CTXKEEP_SESSION", value_name = "ID")]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct HooksUninstallArgs {
    #[command(flatten)]
    pub edit: SettingsEdit,
}

#[derive(Debug, Args)]
pub struct HooksDoctorArgs {
    /// The agent whose hooks to check.
    #[arg(value_enum, default_value = "claude-code")]
    pub agent: Agent,

    /// The settings file [default: beside project-state.md, .claude/settings.json,
    /// .codex/hooks.json, .gemini/settings.json, .qwen/settings.json, .github/hooks/ctxkeep.json
    /// or (OpenCode's plugin) .opencode/plugins/ctxkeep.js].
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,

    /// How long each command may run, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
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
    /// [default: 80:warn,90:checkpoint,95:checkpoint,98:handoff]. Each fires once per fill and
    /// re-arms after a compaction, a /clear, or a drop of more than 10 points below it.
    #[arg(long, value_name = "LIST")]
    pub stages: Option<String>,

    /// BPE encoding used to count tokens (o200k_base, cl100k_base, ...).
    #[arg(long, value_name = "NAME", value_parser = crate::context::tokens::EncodingParser)]
    pub encoding: Option<crate::context::tokens::Encoding>,

    /// Write the default templates into the project's template folder for editing,
    /// and name that folder in the config.
    #[arg(long)]
    pub eject_templates: bool,

    /// Do not set up git's merge driver for project-state.md (.gitattributes and
    /// the repository's local git config).
    #[arg(long)]
    pub no_merge_driver: bool,
}

#[derive(Debug, Args)]
pub struct MergeFileArgs {
    /// The merge base's version (git's %O).
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// Our version (git's %A); the result is written here.
    #[arg(value_name = "OURS")]
    pub ours: PathBuf,
    /// Their version (git's %B).
    #[arg(value_name = "THEIRS")]
    pub theirs: PathBuf,
    /// The file's path in the repository (git's %P), for messages and templates.
    #[arg(value_name = "PATH")]
    pub path: Option<String>,
}

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// Print the merged file instead of writing it.
    #[arg(long)]
    pub dry_run: bool,
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

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The session to show [default: the one most recently tracked in this project, with a
    /// line for each other live session; `default` when none was]
    #[arg(long, value_name = "ID", env = "CTXKEEP_SESSION")]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// Keep the prompt within N tokens (configured encoding); lower-priority sections go first.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,

    /// Print the prompt even when the checkpoint is damaged or was edited by hand.
    #[arg(long)]
    pub force: bool,

    /// The agent taking over (recorded as a handoff when another agent controlled the work)
    /// [default: the checkpoint's controlling agent].
    #[arg(long, value_name = "NAME", conflicts_with = "peek")]
    pub agent: Option<String>,

    /// Only print the prompt: open no session, issue no nonce, log nothing.
    #[arg(long)]
    pub peek: bool,

    /// Resume this agent session's line of work: its newest checkpoint, not another
    /// session's newer one [default: the newest line, the project's last checkpoint].
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct AckArgs {
    /// The nonce the resume prompt printed.
    #[arg(value_name = "NONCE", required_unless_present = "transcript")]
    pub nonce: Option<String>,

    /// Instead of a nonce, look for the agent echoing the latest one in the end of this
    /// transcript (for hooks; exits 0 whether found or not).
    #[arg(long, value_name = "PATH", conflicts_with = "nonce")]
    pub transcript: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The checkpoint whose snapshot to restore (default: the latest that has one).
    #[arg(value_name = "CKPT")]
    pub checkpoint: Option<String>,

    /// Overwrite files that have local changes of their own.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct GcArgs {
    /// Say what would be removed or rotated, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct RelayArgs {
    /// An agent to run headless (`claude -p`, `codex exec`, `gemini -p`) with its own
    /// permissions; repeat for a rotation, taken in turn on each handoff or failure.
    #[arg(long, value_enum, value_name = "AGENT")]
    pub agent: Vec<Agent>,

    /// Any other command, run with `sh -c` and the prompt on stdin; repeatable, after the
    /// --agent ones in the rotation (docs/commands.md says what it is given).
    #[arg(long, value_name = "CMD")]
    pub agent_cmd: Vec<String>,

    /// Extra arguments for the agents' own CLIs, split on spaces; `AGENT=ARGS` for one agent
    /// only (e.g. `claude-code=--model opus`). Repeatable.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub agent_args: Vec<String>,

    /// Stop with success once a shell command passes (run with `sh -c` after each session).
    #[arg(long, value_name = "CMD")]
    pub until: Option<String>,

    /// How long the --until command may run before its process group is stopped and it
    /// counts as not passed (e.g. 90s, 30m, 2h) [default: 30m].
    #[arg(long, value_name = "DURATION", requires = "until")]
    pub until_timeout: Option<String>,

    /// Stop with success once the checkpoint's phase is this (case-insensitive), e.g. done.
    #[arg(long, value_name = "PHASE")]
    pub until_phase: Option<String>,

    /// Run at most N sessions.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: u32,

    /// Stop after this long, the running session included (e.g. 90s, 30m, 2h).
    #[arg(long, value_name = "DURATION")]
    pub max_time: Option<String>,

    /// Print the commands relay would run, and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// What the first session is asked to do (after the resume prompt when there is a
    /// checkpoint; required when there is none).
    #[arg(last = true, value_name = "PROMPT")]
    pub prompt: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Show at most N entries (the newest).
    #[arg(long, short = 'n', value_name = "N")]
    pub limit: Option<usize>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Treat warnings that matter (undescribed changes, the probe's findings) as errors, and
    /// name unknown top-level keys. A hand-edited checkpoint is an error either way (resume
    /// refuses it).
    #[arg(long)]
    pub strict: bool,

    /// The resume prompt must fit N tokens (configured encoding) [default: resume_max_tokens, 2000].
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,

    /// Check the version of the state file in git's index, and the repository as the
    /// next commit will hold it (for pre-commit hooks); findings that only this clone
    /// has (the session chain, uncommitted changes) are left out.
    #[arg(long)]
    pub staged: bool,

    /// Also ask a fresh reader: run CMD through `sh -c` with the resume prompt on stdin
    /// and check its JSON answer (e.g. "claude -p").
    #[arg(long, value_name = "CMD")]
    pub probe: Option<String>,

    /// Stop the probe command after SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = crate::verify::probe::DEFAULT_TIMEOUT_SECS, value_parser = positive_secs)]
    pub probe_timeout: f64,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && v <= 86_400.0 => Ok(v),
        _ => Err("expected a number of seconds above 0 (at most 86400)".into()),
    }
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

    fn hook_line(rest: &[&str]) -> Vec<std::ffi::OsString> {
        ["ctxkeep", "hook"]
            .iter()
            .chain(rest)
            .map(std::ffi::OsString::from)
            .collect()
    }

    #[test]
    fn the_hook_line_read_by_hand_is_what_clap_reads() {
        let plain_env = std::env::var_os("CTXKEEP_ASCII").is_none()
            && std::env::var_os("CTXKEEP_LOCK_TIMEOUT").is_none()
            && std::env::var_os("CTXKEEP_STATE").is_none_or(|v| !v.is_empty());
        let mut names: Vec<&str> = Vec::new();
        for a in Agent::ALL {
            names.push(a.spec().id);
            names.extend(a.spec().aliases.iter().copied());
        }
        for name in names {
            let payload = r#"{"session_id":"s","hook_event_name":"Stop"}"#;
            let lines: [&[&str]; 6] = [
                &[name],
                &[name, payload],
                &[name, payload, "--strict"],
                &["--plugin", name, payload],
                &["--strict", "--plugin", name, ""],
                &[name, "--plugin", payload],
            ];
            for rest in lines {
                let args = hook_line(rest);
                let by_hand = HookCli::parse_plain(&args[2..]);
                assert_eq!(by_hand.is_some(), plain_env, "{rest:?}");
                let by_clap = Cli::try_parse_from(&args).unwrap();
                if let Some(h) = by_hand {
                    assert_eq!(format!("{h:?}"), format!("{by_clap:?}"), "{rest:?}");
                }
            }
        }
        // Anything else is clap's: global options, unknown agents, a second payload.
        let id = Agent::ALL[0].spec().id;
        let upper = id.to_uppercase();
        let others: [&[&str]; 8] = [
            &[id, "--json"],
            &["-q", id],
            &[id, "--state", "x.md"],
            &["--strict", "--strict", id],
            &[id, "{}", "{}"],
            &["nobody", "{}"],
            &[&upper, "{}"],
            &["--", id],
        ];
        for rest in others {
            assert!(
                HookCli::parse_plain(&hook_line(rest)[2..]).is_none(),
                "{rest:?}"
            );
        }
    }
}
