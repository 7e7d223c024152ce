//! One file per subcommand behind one dispatch.

pub mod ack;
pub mod checkpoint;
pub mod completions;
pub mod count;
pub mod demo;
pub mod gc;
pub mod hook;
pub mod hooks;
pub mod init;
pub mod log;
pub mod mcp;
pub mod merge_file;
pub mod relay;
pub mod resolve;
pub mod restore;
pub mod resume;
pub mod status;
pub mod statusline;
pub mod track;
pub mod verify;

use crate::cli::{Command, GlobalArgs};
use crate::domain::workspace::Locate;
use crate::system::output::Output;

/// What every command gets: the global flags and where to print.
pub struct Ctx {
    pub global: GlobalArgs,
    pub out: Output,
}

impl Ctx {
    /// The global flags that find the project, as the workspace takes them.
    pub fn locate(&self) -> Locate {
        Locate {
            state: self.global.state.clone(),
            lock_timeout: self.global.lock_timeout,
            out: self.out,
        }
    }
}

/// How a command that ran to its end came out. A "no" still prints its
/// report (`--json` included); a refusal to act is an error instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The check said no: `verify` found errors, `--fail-at` was reached,
    /// `hooks doctor` found a problem. Exit 1.
    No,
    /// The input cannot be read as it is (a merge left half done), though
    /// the command has a report to print. Exit 65.
    BadData,
    /// Nothing to act on yet (no checkpoint), though the command has a
    /// report to print. Exit 66, as for every command.
    NoInput,
    /// An agent hook with `--strict` blocks the agent's action. Exit 2, the
    /// agents' own code for it.
    Block,
    /// `relay` stopped by Ctrl-C or SIGTERM. Exit 130.
    Interrupted,
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Ok => crate::system::codes::exit::OK,
            Outcome::No => crate::system::codes::exit::CHECK_FAILED,
            Outcome::Block => crate::system::codes::exit::USAGE,
            Outcome::BadData => crate::system::codes::exit::DATA,
            Outcome::NoInput => crate::system::codes::exit::NO_INPUT,
            Outcome::Interrupted => crate::system::codes::exit::INTERRUPTED,
        }
    }
}

/// Runs a command to its outcome, or to the error that stopped it.
pub fn dispatch(command: Command, ctx: &Ctx) -> anyhow::Result<Outcome> {
    match command {
        Command::Demo(args) => demo::run(args, ctx),
        Command::Init(args) => init::run(args, ctx),
        Command::Checkpoint(args) => checkpoint::run(args, ctx),
        Command::Resume(args) => resume::run(args, ctx),
        Command::Verify(args) => verify::run(args, ctx),
        Command::Track(args) => track::run(args, ctx),
        Command::Count(args) => count::run(args, ctx),
        Command::Status(args) => status::run(args, ctx),
        Command::Ack(args) => ack::run(args, ctx),
        Command::Gc(args) => gc::run(args, ctx),
        Command::Log(args) => log::run(args, ctx),
        Command::Restore(args) => restore::run(args, ctx),
        Command::MergeFile(args) => merge_file::run(args, ctx),
        Command::Resolve(args) => resolve::run(args, ctx),
        Command::Hook(args) => hook::run(args, ctx),
        Command::Statusline(args) => statusline::run(args, ctx),
        Command::Hooks(args) => hooks::run(args, ctx),
        Command::Mcp(args) => mcp::run(args, ctx),
        Command::Completions(args) => completions::run(args, ctx),
        Command::Man(args) => completions::man(args, ctx),
        Command::ExitCodes => {
            ctx.out.data(crate::system::codes::exit_help())?;
            Ok(Outcome::Ok)
        }
        Command::Relay(args) => relay::run(args, ctx),
    }
}
