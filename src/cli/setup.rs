//! The commands that set a project or a machine up: `init`, `hooks`, `mcp`, `merge-file`,
//! `resolve`, `completions`, `man`, `demo`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::agents::Agent;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}
