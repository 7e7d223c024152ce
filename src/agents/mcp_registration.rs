//! Whether an agent's project MCP configuration registers ctxkeep's MCP server: what a
//! stage's instruction and a checkpoint request go by (to name the MCP tool). A reader only,
//! here so the hook pipeline needs nothing of `install`, which edits these files.

use std::path::Path;

use super::Agent;
use crate::agents::settings::json_edit::JsonText;
use crate::agents::settings::mcp::Format;
use crate::system::fsutil;

/// A settings file larger than this is not read.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// Whether the agent's project MCP configuration in `root` registers `ctxkeep mcp` (any
/// agent's when `agent` is None). A file read only when an instruction is given.
pub fn mcp_registered(root: &Path, agent: Option<Agent>) -> bool {
    let agents = match agent {
        Some(a) => vec![a],
        None => Agent::ALL.to_vec(),
    };
    agents
        .into_iter()
        .any(|a| registered_command(a, &root.join(a.settings().mcp.relative_path())).is_some())
}

/// The command line of ctxkeep's entry in the MCP configuration at `path`.
pub fn registered_command(agent: Agent, path: &Path) -> Option<String> {
    let settings = agent.settings();
    let mcp = settings.mcp;
    let text = fsutil::read_text(path, MAX_SETTINGS_BYTES).ok()?;
    match mcp.format {
        Format::Json | Format::JsonLocal => {
            let doc = JsonText::parse(&text, settings.comments_allowed).ok()?;
            mcp.registered_json(doc.value())
        }
        Format::Toml => mcp.registered_toml(&text).ok()?,
    }
}
