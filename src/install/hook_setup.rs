//! `hooks install|uninstall|doctor`'s work: read an agent's settings file
//! and its MCP configuration, insert ctxkeep's entries or take them out as
//! text (`agents::settings`; every other byte stays), write every file changed
//! all or nothing (`file_batch`), and check that each installed command runs
//! against a sandbox copy of the project with a payload in that agent's
//! shape.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use crate::agents::settings::json_edit::JsonText;
use crate::agents::settings::mcp::Format;
use crate::agents::settings::{AgentSettings, Change, OtherStatusLine, Plan, StatusLine};
use crate::agents::Agent;
use crate::domain::workspace::{Workspace, STATE_FILE};
use crate::install::kept::{self, Kept};
use crate::system::error::Error;
use crate::system::file_batch::{self, FileChange};
use crate::system::fsutil;

/// A settings file is small; anything bigger is not one.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// The agent's settings file beside the state file in `root`
/// (`.claude/settings.json`, `.codex/hooks.json`, `.gemini/settings.json`).
pub fn default_path(agent: Agent, root: &Path) -> PathBuf {
    let s = agent.settings();
    root.join(s.dir).join(s.file)
}

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

/// The agent's project MCP configuration for the settings file at
/// `settings_path`: `.mcp.json`, `.codex/config.toml` or
/// `.gemini/settings.json` in the project that file belongs to.
pub fn mcp_path(agent: Agent, settings_path: &Path) -> PathBuf {
    let settings = agent.settings();
    if settings.mcp.dir == Some(settings.dir) && settings.mcp.file == settings.file {
        // Gemini CLI's: the settings file itself.
        return settings_path.to_path_buf();
    }
    project_dir(settings, settings_path).join(settings.mcp.relative_path())
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

/// The files an install or uninstall reads, each once (Gemini CLI's hooks
/// and MCP server share one), with their new text.
#[derive(Default)]
struct Pending {
    files: Vec<PendingFile>,
}

struct PendingFile {
    path: PathBuf,
    /// The text read (None: no file).
    before: Option<String>,
    doc: Doc,
    /// JSON settings: what this read found that an uninstall could not tell from ctxkeep's own
    /// (empty containers, a file holding nothing), for an install to note.
    found: Option<Kept>,
    /// JSON settings: what an earlier install noted about this file.
    noted: Option<Kept>,
}

enum Doc {
    Json(JsonText),
    Toml(String),
    /// A code file of ctxkeep's, whole (None: no file).
    Code(Option<String>),
}

impl Doc {
    /// The text to write; None: the file is to be removed (with
    /// `remove_empty`, a settings file left holding nothing is too).
    fn after(&self, remove_empty: bool) -> Option<&str> {
        match self {
            Doc::Code(text) => text.as_deref(),
            _ if remove_empty && self.holds_nothing() => None,
            Doc::Json(doc) => Some(doc.text()),
            Doc::Toml(text) => Some(text),
        }
    }

    /// What is left when nothing of the user's is: what `install` starts
    /// from where there is no file.
    fn holds_nothing(&self) -> bool {
        match self {
            Doc::Json(doc) => matches!(doc.text(), "{}\n" | "{}\r\n"),
            Doc::Toml(text) => text.is_empty(),
            Doc::Code(text) => text.is_none(),
        }
    }
}

impl Pending {
    /// The JSON settings at `path`, read on first use.
    fn json(&mut self, settings: &AgentSettings, path: &Path) -> anyhow::Result<&mut JsonText> {
        let at = match self.files.iter().position(|f| f.path == path) {
            Some(at) => at,
            None => {
                let before = read(path)?;
                let comments = settings.comments_allowed;
                let mut doc =
                    JsonText::parse(before.as_deref().unwrap_or(""), comments).map_err(|why| {
                        Error::data(path, format!("{why}; fix it by hand, nothing was changed"))
                    })?;
                let found = before.as_ref().and_then(|_| Kept::of(&doc));
                let noted = kept::load(path);
                if let Some(n) = &noted {
                    doc.keep_empty(n.empty.clone());
                }
                let at = self.push(path, before, Doc::Json(doc));
                self.files[at].found = found;
                self.files[at].noted = noted;
                at
            }
        };
        match &mut self.files[at].doc {
            Doc::Json(doc) => Ok(doc),
            _ => Err(Error::data(path, "read as JSON and as something else").into()),
        }
    }

    /// The TOML text at `path`, read on first use ("" when missing).
    fn toml(&mut self, path: &Path) -> anyhow::Result<&mut String> {
        let at = match self.files.iter().position(|f| f.path == path) {
            Some(at) => at,
            None => {
                let before = read(path)?;
                let text = before.clone().unwrap_or_default();
                self.push(path, before, Doc::Toml(text))
            }
        };
        match &mut self.files[at].doc {
            Doc::Toml(text) => Ok(text),
            _ => Err(Error::data(path, "read as TOML and as something else").into()),
        }
    }

    /// The code file at `path`, read on first use (None when missing).
    fn code(&mut self, path: &Path) -> anyhow::Result<&mut Option<String>> {
        let at = match self.files.iter().position(|f| f.path == path) {
            Some(at) => at,
            None => {
                let before = read(path)?;
                self.push(path, before.clone(), Doc::Code(before))
            }
        };
        match &mut self.files[at].doc {
            Doc::Code(text) => Ok(text),
            _ => Err(Error::data(path, "read as code and as settings").into()),
        }
    }

    fn push(&mut self, path: &Path, before: Option<String>, doc: Doc) -> usize {
        self.files.push(PendingFile {
            path: path.to_path_buf(),
            before,
            doc,
            found: None,
            noted: None,
        });
        self.files.len() - 1
    }

    /// Writes every file whose text changed, all or nothing. With
    /// `remove_empty`, a file left holding nothing is removed, and the
    /// agent's folder with it when that leaves the folder empty.
    /// A file an install noted as there before it (see [`kept`]) is never removed, and the notes
    /// follow: an install notes what it found, an uninstall forgets the note.
    fn write(self, remove_empty: bool) -> anyhow::Result<()> {
        let mut changes = Vec::new();
        let mut notes = Vec::new();
        for f in &self.files {
            let was_there = f.noted.as_ref().is_some_and(|n| n.file);
            let after = f.doc.after(remove_empty && !was_there);
            if f.before.as_deref() == after
                || (f.before.is_none() && after.is_none_or(str::is_empty))
            {
                continue;
            }
            if remove_empty && f.noted.is_some() {
                notes.push((f.path.clone(), None));
            } else if !remove_empty && f.noted.is_none() && f.found.is_some() {
                notes.push((f.path.clone(), f.found.clone()));
            }
            changes.push(FileChange {
                path: f.path.clone(),
                before: f.before.clone().map(String::into_bytes),
                after: after.map(|a| a.as_bytes().to_vec()),
            });
        }
        // An install's notes first: one that cannot be written stops the install before it
        // writes anything. An uninstall forgets its notes once its files are written.
        let (noting, forgetting): (Vec<_>, Vec<_>) =
            notes.into_iter().partition(|(_, n)| n.is_some());
        for (path, note) in &noting {
            kept::save(path, note.clone())?;
        }
        if let Err(e) = file_batch::apply(&changes) {
            for (path, _) in &noting {
                let _ = kept::save(path, None);
            }
            return Err(e);
        }
        for (path, _) in forgetting {
            let _ = kept::save(&path, None);
        }
        for c in changes.iter().filter(|c| c.after.is_none()) {
            for d in agent_dirs(&c.path) {
                // Only when empty: anything else in it stays.
                if std::fs::remove_dir(&d).is_err() {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// The folders `install` may have made for the file at `path`, innermost first: the agent's own
/// (`.claude`, `.codex`, …), a nested one's and its parents (`.github/hooks`, then `.github`), the
/// folder of an agent's code file and its parents (`.opencode/plugins`, then `.opencode`).
fn agent_dirs(path: &Path) -> Vec<PathBuf> {
    let Some(parent) = path.parent() else {
        return Vec::new();
    };
    let made = Agent::ALL.iter().flat_map(|a| {
        let s = a.settings();
        let code = s
            .code
            .is_some()
            .then(|| Path::new(s.dir).join(s.file))
            .and_then(|p| p.parent().map(Path::to_path_buf));
        [
            Some(PathBuf::from(s.dir)),
            s.mcp.dir.map(PathBuf::from),
            code,
        ]
    });
    let depth = made
        .flatten()
        .filter(|d| parent.ends_with(d))
        .map(|d| d.components().count())
        .max()
        .unwrap_or(0);
    parent
        .ancestors()
        .take(depth)
        .map(Path::to_path_buf)
        .collect()
}

/// The file's text, None when there is no file.
fn read(path: &Path) -> anyhow::Result<Option<String>> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    Ok(Some(fsutil::read_text(path, MAX_SETTINGS_BYTES)?))
}

// --- ctxkeep's agent plugins --------------------------------------------------------------
//
// When the agent's plugin is enabled and the project's settings carry
// ctxkeep's hooks too, the agent would run both for every event. The
// plugin's give way: the settings are the project's (often committed, so
// teammates without the plugin rely on them) and say exactly which events
// run, while the plugin is one user's choice for every project.
/// The settings file that enables `agent`'s plugin for the project at
/// `root`, if one does (reads the process's environment for the user's
/// settings folder).
pub fn enabled_in(agent: Agent, root: &Path) -> Option<PathBuf> {
    let plugin = agent.spec().plugin?;
    (plugin.enabled_in)(root, &|name| std::env::var(name).ok())
}

/// The project's settings file that carries ctxkeep's hooks for `agent`,
/// if one does: then the plugin's hooks step aside.
pub fn settings_with_hooks(agent: Agent, root: &Path) -> Option<PathBuf> {
    let others = agent
        .spec()
        .plugin
        .map(|p| p.other_settings)
        .unwrap_or_default();
    std::iter::once(default_path(agent, root))
        .chain(others.iter().map(|f| root.join(f)))
        .find(|path| has_hooks(agent, path))
}

/// Whether the enabled plugin is the same version as this ctxkeep: a plugin
/// of another version may wire events or flags this binary does not know.
fn plugin_version_check(agent: Agent) -> Option<Check> {
    let plugin = agent.spec().plugin?;
    let installed = (plugin.installed_version)(&|name| std::env::var(name).ok())?;
    let ours = env!("CARGO_PKG_VERSION");
    let same = installed == ours;
    Some(Check {
        name: "plugin version".into(),
        ok: same,
        detail: if same {
            format!("{installed}, the same as this ctxkeep")
        } else {
            format!(
                "the plugin is {installed} and this ctxkeep is {ours}; update the older one (the plugin from its marketplace, the command with `npm install -g ctxkeep@latest`)"
            )
        },
    })
}

/// What `hooks install` says when the plugin is enabled as well.
pub fn install_note(agent: Agent, root: &Path) -> Option<String> {
    let enabled = enabled_in(agent, root)?;
    Some(format!(
        "ctxkeep's {} plugin is enabled too ({}); its hooks step aside in this project while these settings carry ctxkeep's, so no event runs twice",
        agent.display_name(),
        enabled.display()
    ))
}

/// Whether the settings file at `path` carries any of ctxkeep's hooks for
/// `agent` (a file that is missing or unreadable carries none).
pub fn has_hooks(agent: Agent, path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let settings = agent.settings();
    installed_at(settings, path)
        .is_ok_and(|found| found.hooks.iter().any(|(_, command)| command.is_some()))
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

/// The folder the agent treats as the project: the one holding `.codex/`, `.gemini/`,
/// `.github/hooks/` or a plugins folder such as `.opencode/plugins/`, as an absolute path (trust
/// is keyed by it).
fn project_dir(settings: &AgentSettings, path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    // The folders between the project and the file (`.claude`, `.github/hooks`, or a plugins
    // folder in one).
    let between = Path::new(settings.dir).join(settings.file);
    let between = between.parent().unwrap_or(Path::new(""));
    let depth = between.components().count();
    match dir.file_name() {
        Some(_) if depth > 0 && dir.ends_with(between) => dir
            .ancestors()
            .nth(depth)
            .map(Path::to_path_buf)
            .unwrap_or(dir),
        _ => dir,
    }
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

/// What the settings file holds (an empty object when there is none).
fn load(settings: &AgentSettings, path: &Path) -> anyhow::Result<Value> {
    let mut files = Pending::default();
    Ok(files.json(settings, path)?.value().clone())
}

/// What of ctxkeep's the file at `path` installs: its hook entries, or,
/// for an agent that takes code, every event when the file is ctxkeep's.
fn installed_at(
    settings: &AgentSettings,
    path: &Path,
) -> anyhow::Result<crate::agents::settings::Installed> {
    match settings.code {
        Some(_) => Ok(settings.installed_code(read(path)?.as_deref())),
        None => Ok(settings.installed(&load(settings, path)?)),
    }
}

/// One line of `hooks doctor`.
#[derive(Debug, Serialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// What `hooks doctor` found; also what `--json` prints.
#[derive(Debug, Serialize)]
pub struct DoctorReport {
    pub settings: String,
    pub ok: bool,
    pub checks: Vec<Check>,
}

/// Checks that every hook of `agent` is installed in the file at `path` and
/// that each installed command runs, with a payload of its event in the
/// agent's shape, against a copy of the project (nothing in it changes).
/// Gemini's hooks must also print one JSON object every time.
pub fn doctor(
    agent: Agent,
    ws: &Workspace,
    path: &Path,
    timeout: Duration,
) -> anyhow::Result<DoctorReport> {
    let settings = agent.settings();
    let install_hint = format!("run `ctxkeep hooks install {}`", settings.name());
    let mut checks = Vec::new();
    let plugin = enabled_in(agent, &ws.root);
    let mut found = if path.is_file() {
        installed_at(settings, path)?
    } else {
        if plugin.is_none() {
            checks.push(Check {
                name: "settings".into(),
                ok: false,
                detail: format!("{} does not exist; {install_hint}", path.display()),
            });
        }
        settings.installed(&json!({}))
    };
    // The guard only keeps a teammate without ctxkeep quiet; the doctor runs
    // what it guards, so a ctxkeep missing here still shows as not found.
    for (_, hook) in found.hooks.iter_mut() {
        if let Some(rest) = hook
            .as_deref()
            .and_then(|c| c.strip_prefix(crate::agents::settings::MISSING_GUARD))
        {
            *hook = Some(rest.to_string());
        }
    }
    // A code file of ctxkeep's from another version runs that version's hooks.
    if let (Some(code), Some(text)) = (settings.code, read(path)?) {
        checks.push(Check {
            name: "plugin".into(),
            ok: text == code.text,
            detail: if text == code.text {
                format!("{}: this version of ctxkeep's", path.display())
            } else if code.is_ours(&text) {
                format!(
                    "{}: another version of ctxkeep's; {install_hint} to bring it up to date",
                    path.display()
                )
            } else {
                format!(
                    "{}: not ctxkeep's (it lacks `{}`)",
                    path.display(),
                    code.marker
                )
            },
        });
    }
    // The plugin's hooks run where the settings carry none of ctxkeep's.
    let plugin_runs = match &plugin {
        Some(enabled) => {
            let beside = settings_with_hooks(agent, &ws.root);
            checks.push(Check {
                name: "plugin".into(),
                ok: true,
                detail: match &beside {
                    Some(file) => format!(
                        "enabled ({}); its hooks step aside here: the ones in {} run",
                        enabled.display(),
                        file.display()
                    ),
                    None => format!("enabled ({}); its hooks run", enabled.display()),
                },
            });
            if let Some(check) = plugin_version_check(agent) {
                checks.push(check);
            }
            beside.is_none()
        }
        None => false,
    };
    if plugin_runs {
        // The plugin's own script guards against a missing ctxkeep; it runs the plain command.
        let plain = settings
            .hook_command
            .strip_prefix(crate::agents::settings::MISSING_GUARD)
            .unwrap_or(settings.hook_command);
        let command = format!("{plain} --plugin");
        for (_, hook) in found.hooks.iter_mut() {
            hook.get_or_insert_with(|| command.clone());
        }
    }

    // The commands run against a copy of the project, so checking writes
    // no checkpoint, session or event into the real one.
    let sandbox = Sandbox::new(ws, agent)?;
    // The status line first: a hook run below may write a checkpoint into
    // the copy, and the line would then name one the project does not have.
    let status_line_check = settings.status_line.then(|| match &found.status_line {
        StatusLine::Ours(command) => {
            let run = sandbox.run_status_line(command, timeout);
            Check {
                name: "statusLine".into(),
                ok: run.is_ok(),
                detail: match run {
                    Ok(line) => format!("{command}: {line}"),
                    Err(why) => format!("{command}: {why}"),
                },
            }
        }
        StatusLine::Theirs(command) => Check {
            name: "statusLine".into(),
            ok: true,
            detail: format!(
                "yours ({command}); hooks take the window from the config or the model table"
            ),
        },
        StatusLine::None if plugin_runs => Check {
            name: "statusLine".into(),
            ok: true,
            detail: "not installed (a plugin cannot carry one); hooks take the window from the config or the model table".into(),
        },
        StatusLine::None => Check {
            name: "statusLine".into(),
            ok: false,
            detail: format!("not installed; {install_hint}"),
        },
    });
    for (event, command) in &found.hooks {
        let name = format!("hooks.{event}");
        let Some(command) = command else {
            checks.push(Check {
                name,
                ok: false,
                detail: format!("not installed; {install_hint}"),
            });
            continue;
        };
        let payload = sandbox.hook_payload(event);
        // Plain text is the answer where it goes to the agent's summarizer.
        let plain = agent.policy().briefs_summarizer()
            && crate::agents::parse_payload(agent, &payload).is_ok_and(|p| {
                matches!(p.action, crate::agents::payload::Action::PreCompact { .. })
            });
        let run = sandbox.run(command, &payload, settings.json_always, plain, timeout);
        checks.push(Check {
            name,
            ok: run.is_ok(),
            detail: match run {
                Ok(()) if settings.json_always => format!("{command}: runs, prints JSON"),
                Ok(()) if plain => format!("{command}: runs, briefs the summarizer"),
                Ok(()) => format!("{command}: runs"),
                Err(why) => format!("{command}: {why}"),
            },
        });
    }
    checks.extend(status_line_check);
    checks.push(mcp_check(agent, path, &sandbox, timeout, plugin_runs));
    checks.extend(mirror_check(ws));
    Ok(DoctorReport {
        settings: path.display().to_string(),
        ok: checks.iter().all(|c| c.ok),
        checks,
    })
}

/// A warning (not a failure: the hooks work) when a remote mirrors: a plain
/// `git push` then sends `refs/ctxkeep/`, and with them the untracked files
/// the snapshots hold (an `.env.local`).
fn mirror_check(ws: &Workspace) -> Option<Check> {
    let remotes = crate::system::git::snapshot::mirroring_remotes(&ws.root);
    (!remotes.is_empty()).then(|| Check {
        name: "snapshots".into(),
        ok: true,
        detail: format!(
            "warning: `git push` to {} sends ctxkeep's snapshot refs (refs/ctxkeep/), with the uncommitted and untracked files they hold; unset the mirror, or set `snapshots: false`",
            remotes.join(", ")
        ),
    })
}

/// `ctxkeep mcp` where the agent reads it: started against the sandbox, its
/// tools listed. Not registered is no failure (`--no-mcp` leaves it out).
fn mcp_check(
    agent: Agent,
    settings_path: &Path,
    sandbox: &Sandbox,
    timeout: Duration,
    plugin_runs: bool,
) -> Check {
    let config = mcp_path(agent, settings_path);
    // The plugin registers the same server itself.
    let registered = crate::agents::mcp_registration::registered_command(agent, &config)
        .or_else(|| plugin_runs.then(|| "ctxkeep mcp".to_string()));
    let Some(command) = registered else {
        return Check {
            name: "mcp".into(),
            ok: true,
            detail: format!(
                "not registered in {} (`ctxkeep hooks install {}` registers it, unless --no-mcp)",
                config.display(),
                agent.settings().name()
            ),
        };
    };
    let run = sandbox.run_mcp(&command, timeout);
    Check {
        name: "mcp".into(),
        ok: run.is_ok(),
        detail: match run {
            Ok(tools) => format!("{command}: serves {}", tools.join(", ")),
            Err(why) => format!("{command}: {why}"),
        },
    }
}

/// A copy of the project's state file and a small transcript of the
/// agent's in a temp dir.
struct Sandbox {
    /// Removed when the checks end.
    _dir: tempfile::TempDir,
    agent: Agent,
    state: PathBuf,
    transcript: PathBuf,
    cwd: PathBuf,
}

/// What `hooks doctor` sends with `event`, unless the agent says otherwise.
fn event_fields(event: &str) -> Value {
    match event {
        // `compact` renders the resume prompt when there is a checkpoint.
        "SessionStart" => json!({ "source": "compact" }),
        "UserPromptSubmit" | "BeforeAgent" => json!({ "prompt": "hello" }),
        "PostToolUse" => {
            json!({ "tool_name": "Bash", "tool_input": { "command": "true" }, "tool_response": {} })
        }
        "AfterTool" => json!({
            "tool_name": "run_shell_command", "tool_input": { "command": "true" },
            "tool_response": { "llmContent": "", "returnDisplay": "" },
        }),
        "AfterAgent" => {
            json!({ "prompt": "hello", "prompt_response": "ok", "stop_hook_active": false })
        }
        "PreCompact" => json!({ "trigger": "manual", "custom_instructions": "" }),
        "PostCompact" => json!({ "trigger": "manual", "compact_summary": "" }),
        "PreCompress" => json!({ "trigger": "manual" }),
        "Stop" => json!({ "stop_hook_active": false, "last_assistant_message": "ok" }),
        "SessionEnd" => json!({ "reason": "other" }),
        _ => json!({}),
    }
}

impl Sandbox {
    fn new(ws: &Workspace, agent: Agent) -> anyhow::Result<Sandbox> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", "cannot create", e))?;
        let state = dir.path().join(STATE_FILE);
        std::fs::copy(&ws.state_path, &state)
            .map_err(|e| Error::io(&ws.state_path, "cannot copy for the check", e))?;
        let sample = &agent.spec().doctor;
        let transcript = dir.path().join(sample.transcript_name);
        std::fs::write(&transcript, sample.transcript)
            .map_err(|e| Error::io(&transcript, "cannot write", e))?;
        Ok(Sandbox {
            _dir: dir,
            agent,
            state,
            transcript,
            cwd: ws.root.clone(),
        })
    }

    /// A payload in the agent's shape for `event`.
    fn hook_payload(&self, event: &str) -> String {
        let mut p = json!({
            "session_id": "ctxkeep-doctor",
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "hook_event_name": event,
        });
        let sample = &self.agent.spec().doctor;
        let common = (sample.common_fields)();
        let extra = (sample.event_fields)(event).unwrap_or_else(|| event_fields(event));
        if let Some(p) = p.as_object_mut() {
            for extra in [common, extra] {
                if let Value::Object(extra) = extra {
                    p.extend(extra);
                }
            }
        }
        p.to_string()
    }

    /// Runs a hook command: it must exit 0, say nothing on stderr (a hook
    /// that failed open does), and print nothing or one JSON object (with
    /// `json_always`, exactly one JSON object; with `plain`, any text).
    fn run(
        &self,
        command: &str,
        payload: &str,
        json_always: bool,
        plain: bool,
        timeout: Duration,
    ) -> Result<(), String> {
        let out = self.spawn(command, payload, timeout)?;
        let stdout = out.stdout.trim();
        if plain {
            return Ok(());
        }
        if stdout.is_empty() {
            if json_always {
                return Err("printed nothing on stdout; the agent wants a JSON object".into());
            }
            return Ok(());
        }
        if !serde_json::from_str::<Value>(stdout).is_ok_and(|v| v.is_object()) {
            return Err(format!(
                "printed something that is not a JSON object: {}",
                first_line(stdout)
            ));
        }
        Ok(())
    }

    /// Runs the status-line command; returns the line it printed.
    fn run_status_line(&self, command: &str, timeout: Duration) -> Result<String, String> {
        let payload = json!({
            "session_id": "ctxkeep-doctor",
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "model": { "id": "claude-sonnet-4-5", "display_name": "Sonnet" },
            "version": "2.1.140",
            "context_window": {
                "context_window_size": 200000,
                "current_usage": { "input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 990, "cache_read_input_tokens": 19000 },
            },
        });
        let out = self.spawn(command, &payload.to_string(), timeout)?;
        let line = first_line(&out.stdout).to_string();
        if line.is_empty() || line.starts_with("ctxkeep: ") {
            return Err(format!("printed no gauge: {line:?}"));
        }
        Ok(line)
    }

    /// Starts the MCP server as a client would, and lists its tools: the
    /// names, once it answered `tools/list`.
    fn run_mcp(&self, command: &str, timeout: Duration) -> Result<Vec<String>, String> {
        use std::io::BufRead;
        let mut child = self.command(command, Stdio::null())?;
        let requests = [
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "ctxkeep-doctor", "version": env!("CARGO_PKG_VERSION") } } }),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        ];
        let mut stdin = child.stdin.take();
        if let Some(input) = stdin.as_mut() {
            for r in &requests {
                let _ = writeln!(input, "{r}");
            }
            let _ = input.flush();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let deadline = Instant::now() + timeout;
        let answer = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                        break Err(format!(
                            "printed something that is not JSON-RPC: {}",
                            first_line(&line)
                        ));
                    };
                    if msg["id"] == 2 {
                        break Ok(msg);
                    }
                    if msg.get("error").is_some() {
                        break Err(format!("answered with an error: {}", msg["error"]));
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    break Err(format!("no tool list after {} s", timeout.as_secs_f64()))
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    break Err("exited before listing its tools".into())
                }
            }
        };
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
        let answer = answer?;
        let tools: Vec<String> = answer["result"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect();
        if !tools.iter().any(|t| t == "checkpoint") {
            return Err(format!("lists no checkpoint tool: {answer}"));
        }
        Ok(tools)
    }

    /// Starts `command` through `sh` in the project, against the sandbox's
    /// state file, with stdin and stdout piped.
    fn command(&self, command: &str, stderr: Stdio) -> Result<std::process::Child, String> {
        Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&self.cwd)
            .env("CTXKEEP_STATE", &self.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start sh: {e}"))
    }

    fn spawn(&self, command: &str, stdin: &str, timeout: Duration) -> Result<Finished, String> {
        let mut child = self.command(command, Stdio::piped())?;
        let started = Instant::now();
        if let Some(mut input) = child.stdin.take() {
            // A command that exits without reading its input is not an error here.
            let _ = input.write_all(stdin.as_bytes());
        }
        let read = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_string(&mut text);
                }
                text
            })
        };
        let stdout = read(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = read(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "still running after {} s; killed",
                        timeout.as_secs_f64()
                    ));
                }
                Err(e) => return Err(format!("cannot wait for it: {e}")),
            }
        };
        let elapsed = started.elapsed();
        let out = Finished {
            stdout: stdout.join().unwrap_or_default(),
        };
        let stderr = stderr.join().unwrap_or_default();
        match status.code() {
            Some(0) if stderr.trim().is_empty() => Ok(out),
            Some(0) => Err(format!(
                "exit 0 but it reported: {}",
                first_line(stderr.trim())
            )),
            Some(127) => Err("command not found (is ctxkeep on the PATH the agent uses?)".into()),
            Some(code) => Err(format!("exit {code}: {}", first_line(stderr.trim()))),
            None => Err(format!(
                "killed by a signal after {} ms",
                elapsed.as_millis()
            )),
        }
    }
}

struct Finished {
    stdout: String,
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
