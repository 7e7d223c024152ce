//! OpenCode: no hook settings but plugins, so `hooks install` writes a
//! plugin of ctxkeep's, `.opencode/plugins/ctxkeep.js`, whole; it runs
//! `ctxkeep hook opencode` for every event below. The MCP server goes under
//! `mcp` in the project's `opencode.json`, as a local server whose command is
//! a list of words (docs/agents.md, "Use with OpenCode").

use std::path::Path;

use crate::agents::settings::mcp::{Format, McpSettings};
use crate::agents::settings::{AgentSettings, CodeFile, Event};

/// What the plugin says it is, near its top; a file at its path without it
/// is the user's.
pub const MARKER: &str = "ctxkeep-opencode-plugin";

pub const SETTINGS: AgentSettings = AgentSettings {
    name: super::ID,
    display_name: super::DISPLAY_NAME,
    dir: ".opencode",
    file: "plugins/ctxkeep.js",
    hook_command: "ctxkeep hook opencode",
    hook_words: &["opencode"],
    // The names the plugin gives ctxkeep (hooks.rs maps them to OpenCode's).
    events: &[
        Event::new("SessionStart"),
        Event::new("UserPromptSubmit"),
        Event::new("PreToolUse"),
        Event::new("PostToolUse"),
        Event::new("PreRequest"),
        Event::new("PreCompact"),
        Event::new("PostCompact"),
        Event::new("Stop"),
        Event::new("SessionEnd"),
    ],
    // OpenCode 1.18 loads a project's plugins without asking, but only when it starts.
    trust: &[restart],
    comments_allowed: true,
    mcp: McpSettings {
        dir: None,
        file: "opencode.json",
        format: Format::JsonLocal,
        key: "mcp",
    },
    code: Some(CodeFile {
        text: include_str!("plugin.js"),
        marker: MARKER,
    }),
    ..AgentSettings::USUAL
};

/// OpenCode reads a project's plugins when it starts.
fn restart(project: &Path) -> String {
    format!(
        "start OpenCode afresh in {} (a running one loads no new plugin); it asks no trust for a project's plugins",
        project.display()
    )
}

#[cfg(test)]
mod tests {
    /// The plugin's text past its first line, and the version that line states, as they were
    /// when the version was last set. A change to the plugin fails this until its version is
    /// bumped (a user's `hooks doctor` and a bug report then say which plugin ran) and both
    /// are written here again.
    const VERSIONED: (&str, u64) = ("ctxkeep-opencode-plugin 3", 3_783_058_385_874_036_677);

    /// FNV-1a: a fixed digest of the text, the same on every build.
    fn digest(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    #[test]
    fn the_plugins_version_is_bumped_when_its_text_changes() {
        let text = super::SETTINGS.code.expect("the plugin").text;
        let (first, rest) = text.split_once('\n').unwrap();
        assert!(first.contains(VERSIONED.0), "{first}");
        assert_eq!(
            digest(rest),
            VERSIONED.1,
            "plugin.js changed since {}: bump its version on its first line and write both here",
            VERSIONED.0
        );
    }
}
