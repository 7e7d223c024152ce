//! `hooks install|uninstall`: ctxkeep's entries put into an agent's settings (and `ctxkeep mcp`
//! into its MCP configuration) or taken out, as text, every other byte kept.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::files::{load, Pending};
use super::paths::{mcp_path, project_dir};
use super::plugin::install_note;
use crate::agents::Agent;
use crate::install::agent_settings::kept;
use crate::install::agent_settings::mcp::Format;
use crate::install::agent_settings::{AgentSettings, Change, OtherStatusLine, Plan, StatusLine};
use crate::system::error::Error;

/// What `install` and `uninstall` did (or, with `dry_run`, would do); also
/// what `--json` prints.
#[derive(Debug, Serialize)]
pub struct Edit {
    pub settings: String,
    pub dry_run: bool,
    /// The file was (or, with --dry-run, would be) rewritten.
    pub changed: bool,
    pub changes: Vec<Change>,
    /// The user's own status line, left in place (not composed with ctxkeep's).
    pub kept_status_line: Option<String>,
    /// The file that holds it, when it is not `settings`.
    pub kept_in: Option<String>,
    /// The user's own status line that ctxkeep's now runs and shows beside its gauge.
    pub composed_with: Option<String>,
    /// What the user must do before the agent runs these hooks (trust).
    pub next_steps: Vec<String>,
    /// The MCP server's registration (null with `--no-mcp`).
    pub mcp: Option<McpEdit>,
    /// ctxkeep's plugin for the agent is enabled as well: whose hooks run.
    pub plugin: Option<String>,
}

/// What registering (or unregistering) `ctxkeep mcp` did, or would do.
#[derive(Debug, Serialize)]
pub struct McpEdit {
    /// The agent's project MCP configuration.
    pub config: String,
    pub changed: bool,
    pub changes: Vec<Change>,
}

/// Merges ctxkeep's entries for `agent` into the file at `path` (created if
/// missing). `force` replaces a status line of the user's (Claude Code).
/// With `mcp`, `ctxkeep mcp` is registered too, in the agent's project MCP
/// configuration beside the settings (see [`mcp_path`]). Every file is read
/// and checked before the first is written.
pub fn install(
    agent: Agent,
    path: &Path,
    force: bool,
    mcp: bool,
    dry_run: bool,
) -> anyhow::Result<Edit> {
    let settings = agent.settings();
    // Held from the first read to the last write (see [`kept::lock`]).
    let _lock = (!dry_run).then(kept::lock).transpose()?;
    let mut files = Pending::default();
    let plan = match settings.code {
        Some(_) => Plan {
            changes: install_code(settings, files.code(path)?)
                .map_err(|why| Error::data(path, refused(why)))?,
            kept_status_line: None,
            kept_in: None,
            composed_with: None,
        },
        None => {
            let other = other_status_line(settings, path);
            let personal = settings
                .personal
                .is_some_and(|f| path.file_name().is_some_and(|n| n == f));
            let doc = files.json(settings, path)?;
            settings
                .install_with(doc, force, other.as_ref(), personal)
                .map_err(|why| Error::data(path, refused(why)))?
        }
    };
    let mut edit = Edit::of(path, dry_run, plan.changes);
    edit.kept_status_line = plan.kept_status_line;
    edit.kept_in = plan.kept_in;
    edit.composed_with = plan.composed_with;
    edit.next_steps = trust_steps(agent, path);
    edit.plugin = install_note(agent, &project_dir(settings, path));
    if mcp {
        edit.mcp = Some(edit_mcp(agent, &mcp_path(agent, path), true, &mut files)?);
        if let Some(step) = settings.mcp_approval {
            edit.next_steps.push(step.to_string());
        }
    }
    if !dry_run {
        files.write(false)?;
    }
    Ok(edit)
}

/// Takes ctxkeep's entries for `agent` out of the file at `path`, and
/// nothing else; `ctxkeep mcp`'s registration goes too. A file left holding
/// nothing (as `install` made it where there was none) is removed.
pub fn uninstall(agent: Agent, path: &Path, dry_run: bool) -> anyhow::Result<Edit> {
    uninstall_with(agent, path, true, dry_run)
}

/// [`uninstall`], leaving the MCP registration alone unless `mcp` (a
/// personal settings file's uninstall: the MCP configuration is the team's).
pub fn uninstall_with(agent: Agent, path: &Path, mcp: bool, dry_run: bool) -> anyhow::Result<Edit> {
    let settings = agent.settings();
    let _lock = (!dry_run).then(kept::lock).transpose()?;
    let mut files = Pending::default();
    let changes = match settings.code {
        Some(_) => uninstall_code(settings, files.code(path)?),
        None => {
            let other = other_status_line(settings, path);
            let doc = files.json(settings, path)?;
            settings
                .uninstall_with(doc, other.as_ref())
                .map_err(|why| Error::data(path, refused(why)))?
        }
    };
    let mut edit = Edit::of(path, dry_run, changes);
    if mcp {
        edit.mcp = Some(edit_mcp(agent, &mcp_path(agent, path), false, &mut files)?);
    }
    if !dry_run {
        files.write(true)?;
    }
    Ok(edit)
}

/// Writes ctxkeep's code file (`text`: what is there, None: nothing), or
/// this version of it over an older one; a file of the user's at that path
/// is refused.
fn install_code(
    settings: &AgentSettings,
    text: &mut Option<String>,
) -> Result<Vec<Change>, String> {
    let Some(code) = settings.code else {
        return Ok(Vec::new());
    };
    let change = |op| code_change(settings, op);
    let changes = match text.as_deref() {
        Some(t) if t == code.text => return Ok(Vec::new()),
        Some(t) if !code.is_ours(t) => {
            return Err(format!(
                "the file is not ctxkeep's (it lacks `{}`); move it away and run this again",
                code.marker
            ))
        }
        // Another version of ctxkeep's: replaced by this one.
        Some(_) => vec![change("removed"), change("added")],
        None => vec![change("added")],
    };
    *text = Some(code.text.to_string());
    Ok(changes)
}

/// Removes ctxkeep's code file; a file of the user's at that path stays.
fn uninstall_code(settings: &AgentSettings, text: &mut Option<String>) -> Vec<Change> {
    match (settings.code, text.as_deref()) {
        (Some(code), Some(t)) if code.is_ours(t) => {
            *text = None;
            vec![code_change(settings, "removed")]
        }
        _ => Vec::new(),
    }
}

/// The report's line for the code file (`+ plugin: ctxkeep hook …`).
fn code_change(settings: &AgentSettings, op: &'static str) -> Change {
    Change {
        op,
        key: "plugin".into(),
        command: settings.hook_command.into(),
    }
}

impl Edit {
    fn of(path: &Path, dry_run: bool, changes: Vec<Change>) -> Edit {
        Edit {
            settings: path.display().to_string(),
            dry_run,
            changed: !changes.is_empty(),
            changes,
            kept_status_line: None,
            kept_in: None,
            composed_with: None,
            next_steps: Vec::new(),
            mcp: None,
            plugin: None,
        }
    }
}

/// A refusal's reason, saying that no file was touched.
fn refused(why: String) -> String {
    if why.contains("nothing was changed") {
        why
    } else {
        format!("{why}; nothing was changed")
    }
}

/// Registers (or unregisters) `ctxkeep mcp` in the file at `path`, in
/// memory: `files` writes it with the rest.
fn edit_mcp(
    agent: Agent,
    path: &Path,
    register: bool,
    files: &mut Pending,
) -> anyhow::Result<McpEdit> {
    let settings = agent.settings();
    let mcp = settings.mcp;
    let changes = match mcp.format {
        Format::Json | Format::JsonLocal => {
            let doc = files.json(settings, path)?;
            if register {
                mcp.register_json(doc)
            } else {
                mcp.unregister_json(doc)
            }
        }
        Format::Toml => {
            let text = files.toml(path)?;
            let result = if register {
                mcp.register_toml(text)
            } else {
                mcp.unregister_toml(text)
            };
            result.map(|(new, changes)| {
                *text = new;
                changes
            })
        }
    }
    .map_err(|why| Error::data(path, refused(why)))?;
    Ok(McpEdit {
        config: path.display().to_string(),
        changed: !changes.is_empty(),
        changes,
    })
}

/// The trust steps the agent needs before it runs the hooks in the file at
/// `path` (none for Claude Code).
pub fn trust_steps(agent: Agent, path: &Path) -> Vec<String> {
    let settings = agent.settings();
    if settings.trust.is_empty() {
        return Vec::new();
    }
    let project = project_dir(settings, path);
    settings.trust.iter().map(|step| step(&project)).collect()
}

/// A status line of the user's at another of the agent's settings levels than `path`: the
/// personal file, the shared one, the user's own (Claude Code reads them in that order, the
/// first that sets one wins). A plugin that sets a status line writes it into one of these.
fn other_status_line(settings: &AgentSettings, path: &Path) -> Option<OtherStatusLine> {
    if !settings.status_line {
        return None;
    }
    let project = project_dir(settings, path).join(settings.dir);
    let user = settings
        .user_settings
        .and_then(|f| f(&|name| std::env::var(name).ok()));
    let same = |a: &Path, b: &Path| {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        a == b || canon(a) == canon(b)
    };
    // Most particular first.
    let levels: Vec<PathBuf> = settings
        .personal
        .map(|f| project.join(f))
        .into_iter()
        .chain(std::iter::once(project.join(settings.file)))
        .chain(user)
        .collect();
    let own = levels.iter().position(|l| same(l, path));
    levels
        .iter()
        .enumerate()
        .filter(|(i, l)| Some(*i) != own && l.is_file())
        .find_map(|(i, l)| {
            let doc = load(settings, l).ok()?;
            match settings.installed(&doc).status_line {
                StatusLine::Theirs(cmd) if !cmd.trim().is_empty() => Some(OtherStatusLine {
                    command: cmd,
                    file: l.display().to_string(),
                    overrides: own.is_some_and(|o| i < o),
                }),
                _ => None,
            }
        })
}
