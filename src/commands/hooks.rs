//! `ctxkeep hooks install|uninstall|doctor claude-code|codex|gemini`:
//! ctxkeep's entries in the agent's project settings, merged in and taken
//! out without touching anything else, and a check that each installed
//! command runs. The work is `install::hook_setup`'s; this validates the
//! flags and prints.

use std::path::PathBuf;
use std::time::Duration;

use super::{Ctx, Outcome};
use crate::agents::Agent;
use crate::cli::{HooksArgs, HooksCommand, HooksDoctorArgs, HooksInstallArgs, HooksUninstallArgs};
use crate::domain::workspace::Workspace;
use crate::install::hook_setup::{self, Edit};
use crate::system::error::Error;

pub fn run(args: HooksArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    match args.command {
        HooksCommand::Install(a) => install(a, ctx),
        HooksCommand::Uninstall(a) => uninstall(a, ctx),
        HooksCommand::Doctor(a) => doctor(a, ctx),
    }
}

/// `--settings`, else the agent's file beside the state file (its personal
/// one with `--personal`).
fn settings_path(
    agent: Agent,
    given: Option<PathBuf>,
    personal: bool,
    ctx: &Ctx,
) -> anyhow::Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p);
    }
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    if !personal {
        return Ok(hook_setup::default_path(agent, &ws.root));
    }
    let s = agent.settings();
    match s.personal {
        Some(file) => Ok(ws.root.join(s.dir).join(file)),
        None => {
            let with: Vec<&str> = Agent::ALL
                .into_iter()
                .filter(|a| a.settings().personal.is_some())
                .map(Agent::display_name)
                .collect();
            Err(Error::Usage(format!(
                "--personal: {agent} has no personal settings file in the project (only {} has); give --settings PATH",
                with.join(" and ")
            ))
            .into())
        }
    }
}

/// Says which files the install wrote are shared with the team through git
/// and what they do there, and offers the personal file.
fn shared_note(agent: Agent, edit: &Edit, personal: bool, ctx: &Ctx) {
    if edit.dry_run || !(edit.changed || edit.mcp.as_ref().is_some_and(|m| m.changed)) {
        return;
    }
    let mut shared: Vec<&str> = Vec::new();
    if !personal {
        shared.push(&edit.settings);
    }
    if let Some(m) = &edit.mcp {
        if !shared.contains(&m.config.as_str()) {
            shared.push(&m.config);
        }
    }
    if shared.is_empty() {
        return;
    }
    let settings = agent.settings();
    let guarded = settings
        .hook_command
        .starts_with(crate::agents::settings::MISSING_GUARD);
    // What a teammate who has not installed ctxkeep meets, said exactly.
    let teammate = match (guarded, edit.mcp.is_some()) {
        (true, false) => format!(
            "a teammate without ctxkeep sees nothing of it: no prompt, no error, no blank status line (the hooks and ctxkeep's status line exit at once, printing nothing{})",
            if edit.composed_with.is_some() { "; the status line you had runs alone" } else { "" }
        ),
        (true, true) => format!(
            "a teammate without ctxkeep gets no error from the hooks or the status line (they exit at once, printing nothing), but {} asks them to approve the ctxkeep MCP server, which then fails to start",
            settings.display_name
        ),
        (false, _) => format!(
            "a teammate without ctxkeep has each of these hooks fail to start (`ctxkeep: not found`), which {} reports as a failing hook{}",
            settings.display_name,
            if edit.mcp.is_some() { ", and its MCP server fails to start" } else { "" }
        ),
    };
    let mut note = format!(
        "shared with your team once committed: {}; every teammate's {} runs what they hold; {teammate}",
        shared.join(" and "),
        settings.display_name,
    );
    if settings.personal.is_some() && !personal {
        note.push_str(&format!(
            ". For yourself only: `ctxkeep hooks uninstall {agent}`, then `ctxkeep hooks install {agent} --personal`"
        ));
    }
    ctx.out.info(&format!("note: {note}"));
}

/// What became of the user's own status line: composed with ctxkeep's gauge, or left alone
/// with the way to add the gauge; never a silent takeover.
fn status_line_note(agent: Agent, path: &std::path::Path, edit: &Edit, ctx: &Ctx) {
    if let Some(theirs) = &edit.composed_with {
        ctx.out.info(&format!(
            "note: status line: yours ({theirs}) runs as before with ctxkeep's gauge after it; where ctxkeep is not installed yours runs alone. `ctxkeep hooks uninstall {agent}` gives it back as it was"
        ));
        return;
    }
    let Some(theirs) = &edit.kept_status_line else {
        return;
    };
    let compose = crate::agents::settings::composed_status_line(theirs);
    match &edit.kept_in {
        Some(file) => ctx.out.warn(&format!(
            "kept your status line ({theirs}, in {file}) and wrote none into {}, so nobody's is replaced. To see ctxkeep's gauge beside yours: `ctxkeep hooks install {agent} --personal` (composes them in your personal settings), or set that status line's command to: {compose}",
            path.display()
        )),
        None => ctx.out.warn(&format!(
            "{}: kept your statusLine ({theirs}); hooks then take the window from the config or the model table. Replace it with --force",
            path.display()
        )),
    }
}

fn install(args: HooksInstallArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let agent = args.edit.agent;
    if args.force && !agent.settings().status_line {
        let with: Vec<&str> = Agent::ALL
            .into_iter()
            .filter(|a| a.settings().status_line)
            .map(Agent::display_name)
            .collect();
        return Err(Error::Usage(format!(
            "--force replaces {}'s status line; {agent} has none",
            with.join(" or ")
        ))
        .into());
    }
    let personal = args.edit.personal;
    let path = settings_path(agent, args.edit.settings, personal, ctx)?;
    // The MCP configuration is a project file the team shares: registered there only when
    // asked (`--team`), since every teammate's agent would start it, ctxkeep or not.
    let mcp = args.team && !args.no_mcp && !personal;
    let edit = hook_setup::install(agent, &path, args.force, mcp, args.edit.dry_run)?;
    status_line_note(agent, &path, &edit, ctx);
    if let Some(replaced) = edit
        .changes
        .iter()
        .find(|c| args.force && c.op == "removed" && c.key == "statusLine")
    {
        ctx.out.warn(&format!(
            "{}: replaced your statusLine ({}) because of --force; note it down: `ctxkeep hooks uninstall` will not bring it back",
            path.display(),
            replaced.command
        ));
    }
    report(&edit, ctx)?;
    shared_note(agent, &edit, personal, ctx);
    if !mcp && !args.no_mcp && !edit.dry_run {
        ctx.out.info(&match agent.settings().personal_mcp {
            Some(own) => format!(
                "note: the MCP server is not registered (its file would be the team's); for yourself only: `{own}`; for everyone: `ctxkeep hooks install {agent} --team`"
            ),
            None => format!(
                "note: the MCP server is not registered (its file would be the team's); for everyone: `ctxkeep hooks install {agent} --team`"
            ),
        });
    }
    if let Some(note) = &edit.plugin {
        ctx.out.info(&format!("note: {note}"));
    }
    for step in &edit.next_steps {
        ctx.out.info(&format!("next: {step}"));
    }
    Ok(Outcome::Ok)
}

fn uninstall(args: HooksUninstallArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let agent = args.edit.agent;
    let personal = args.edit.personal;
    let path = settings_path(agent, args.edit.settings, personal, ctx)?;
    let edit = hook_setup::uninstall_with(agent, &path, !personal, args.edit.dry_run)?;
    report(&edit, ctx)?;
    Ok(Outcome::Ok)
}

/// `+`/`-` lines on stdout (or the JSON), one line on stderr.
fn report(edit: &Edit, ctx: &Ctx) -> anyhow::Result<()> {
    ctx.out.json(edit)?;
    let mcp = edit.mcp.iter().flat_map(|m| &m.changes);
    let lines: Vec<String> = edit
        .changes
        .iter()
        .chain(mcp)
        .map(ToString::to_string)
        .collect();
    if !lines.is_empty() {
        ctx.out.data(&lines.join("\n"))?;
    }
    let files = std::iter::once((&edit.settings, edit.changed))
        .chain(edit.mcp.iter().map(|m| (&m.config, m.changed)))
        // Gemini's hooks and MCP server share one file: one line for it.
        .fold(Vec::<(&String, bool)>::new(), |mut acc, (f, c)| {
            match acc.iter_mut().find(|(g, _)| *g == f) {
                Some(seen) => seen.1 |= c,
                None => acc.push((f, c)),
            }
            acc
        });
    for (file, changed) in files {
        ctx.out.info(&match (changed, edit.dry_run) {
            (false, _) => format!("{file}: nothing to change"),
            (true, true) => format!("{file}: dry run, nothing written"),
            // An uninstall that took out all a file held deletes the file.
            (true, false) if !std::path::Path::new(file).exists() => format!("{file}: removed"),
            (true, false) => format!("{file}: written"),
        });
    }
    Ok(())
}

fn doctor(args: HooksDoctorArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    if !args.timeout.is_finite() || args.timeout <= 0.0 {
        return Err(Error::Usage("--timeout must be a number of seconds > 0".into()).into());
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let agent = args.agent;
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let path = args
        .settings
        .unwrap_or_else(|| hook_setup::default_path(agent, &ws.root));
    let report = hook_setup::doctor(agent, &ws, &path, timeout)?;
    ctx.out.json(&report)?;
    let text: Vec<String> = report
        .checks
        .iter()
        .map(|c| {
            format!(
                "{:<4}  {}: {}",
                if c.ok { "ok" } else { "FAIL" },
                c.name,
                c.detail
            )
        })
        .collect();
    ctx.out.data(&text.join("\n"))?;
    let failed = report.checks.iter().filter(|c| !c.ok).count();
    ctx.out.info(&if failed == 0 {
        format!(
            "{}: all {} checks passed",
            report.settings,
            report.checks.len()
        )
    } else {
        format!(
            "{}: {failed} of {} checks failed",
            report.settings,
            report.checks.len()
        )
    });
    // The doctor runs the commands itself; the agent still needs its trust.
    for step in hook_setup::trust_steps(agent, &path) {
        ctx.out.info(&format!("also: {step}"));
    }
    Ok(if failed == 0 {
        Outcome::Ok
    } else {
        Outcome::No
    })
}
