//! `hooks doctor`: every hook of an agent installed, and each installed command run against a
//! sandbox copy of the project with a payload in the agent's shape.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use super::files::read;
use super::paths::mcp_path;
use super::plugin::enabled_in;
use super::present::{installed_at, settings_with_hooks};
use super::sandbox::Sandbox;
use crate::agents::Agent;
use crate::domain::workspace::Workspace;
use crate::install::agent_settings::StatusLine;

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
            .and_then(|c| c.strip_prefix(crate::install::agent_settings::MISSING_GUARD))
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
            .strip_prefix(crate::install::agent_settings::MISSING_GUARD)
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
