//! The services under the commands: each does one job that several
//! commands (and the agent hooks) share. A command parses its arguments,
//! calls one service and prints; services never print data or parse flags.

pub mod ack;
pub mod agent_hook;
pub mod demo;
pub mod gutter;
pub mod hook_setup;
pub mod init;
pub mod learning;
pub mod merge;
pub mod record;
pub mod relay;
pub mod resume;
pub mod session_index;
pub mod snapshot;
pub mod status;
pub mod tracking;
pub mod verify;
