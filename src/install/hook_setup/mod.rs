//! `hooks install|uninstall|doctor`'s work: read an agent's settings file
//! and its MCP configuration, insert ctxkeep's entries or take them out as
//! text (`agent_settings`; every other byte stays), write every file changed
//! all or nothing (`file_batch`), and check that each installed command runs
//! against a sandbox copy of the project with a payload in that agent's
//! shape. Only [`settings_with_hooks`] (in `present`) is on a hook's path.

mod doctor;
mod files;
mod install;
mod paths;
mod plugin;
mod present;
mod sandbox;

pub use doctor::{doctor, Check, DoctorReport};
pub use install::{install, trust_steps, uninstall, uninstall_with, Edit, McpEdit};
pub use paths::{default_path, mcp_path};
pub use plugin::{enabled_in, install_note};
pub use present::{has_hooks, settings_with_hooks};
