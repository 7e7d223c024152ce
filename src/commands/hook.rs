//! `ctxkeep hook AGENT`: the command an agent's hooks run. Reads the event's
//! JSON, then tracks usage, writes a checkpoint or injects the resume prompt.
//! It fails open: an internal error never breaks the agent (exit 0, one line
//! on stderr, an `error` event) unless `--strict` asks for exit 2.

use std::io::Write;
use std::time::Duration;

use serde_json::json;

use super::{Ctx, Outcome};
use crate::agents::payload::{Action, Payload, MAX_PAYLOAD_BYTES};
use crate::agents::Agent;
use crate::cli::HookArgs;
use crate::domain::workspace::Workspace;
use crate::pipeline::hook::{reply, Answer, Hook};
use crate::system::error::Error;
use crate::system::output::Output;

/// Warnings from the shared code go nowhere: on exit 0 the agent only logs
/// stderr, and a line there would read as a failure.
const SILENT: Output = Output::SILENT;

/// How long the error path waits for the lock to log an `error` event: the
/// error may be a lock timeout already.
const ERROR_LOG_LOCK_WAIT: Duration = Duration::from_millis(500);

pub fn run(args: HookArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    // An automatic checkpoint, the look before a destructive command and the checks read the
    // repository once per event.
    let _reads = crate::system::git::share_reads();
    // Nothing a hook prints reports malformed transcript lines: not counted on this path.
    crate::transcripts::usage::skip_malformed_count();
    let agent = args.agent;
    let mut payload = None;
    match handle(&args, agent, ctx, &mut payload) {
        Ok(answer) => {
            let event = payload.as_ref().map(|p| p.event.as_str());
            if let Some(text) = reply::render(answer, event, agent, ctx.out.json) {
                let mut out = std::io::stdout().lock();
                // A closed pipe is the agent's business, not an error of ours.
                let _ = writeln!(out, "{text}").and_then(|_| out.flush());
            }
            Ok(Outcome::Ok)
        }
        Err(err) => {
            fail_open(&err, agent, payload.as_ref(), ctx);
            // With nothing on stdout such an agent shows our stderr to the user.
            if let Some(empty) = reply::empty(agent) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{empty}").and_then(|_| out.flush());
            }
            Ok(if args.strict {
                Outcome::Block
            } else {
                Outcome::Ok
            })
        }
    }
}

/// Reads the event and acts on it; returns what to answer, if anything.
fn handle(
    args: &HookArgs,
    agent: Agent,
    ctx: &Ctx,
    seen: &mut Option<Payload>,
) -> anyhow::Result<Option<Answer>> {
    let payload = match &args.payload {
        Some(text) if text.len() as u64 > MAX_PAYLOAD_BYTES => {
            return Err(Error::data(
                "<argument>",
                format!("hook input is over {} KiB", MAX_PAYLOAD_BYTES / 1024),
            )
            .into())
        }
        Some(text) => crate::agents::parse_payload(agent, text)?,
        None => crate::agents::read_payload(agent, std::io::stdin().lock())?,
    };
    *seen = Some(payload.clone());
    if payload.action == Action::Ignore {
        return Ok(None);
    }
    let ws = match workspace(ctx, Some(&payload)) {
        // A plugin runs in every project its user opens: one without
        // ctxkeep is none of its business.
        Err(_) if args.plugin => return Ok(None),
        ws => ws?,
    };
    if args.plugin && plugin_steps_aside(agent, &ws) {
        return Ok(None);
    }
    Hook::new(ws, agent, payload, SILENT)?.handle()
}

/// Whether a hook run from the agent's plugin leaves the event alone: no
/// state file, or the project's settings run ctxkeep's hooks themselves.
fn plugin_steps_aside(agent: Agent, ws: &Workspace) -> bool {
    !ws.state_path.is_file()
        || crate::install::hook_setup::settings_with_hooks(agent, &ws.root).is_some()
}

/// `--state`/`CTXKEEP_STATE`, else the project around the agent's working
/// directory (Codex may run `notify` from elsewhere), else around ours.
/// Notices of lower layers (a lock wait) stay off the agent's stderr.
fn workspace(ctx: &Ctx, payload: Option<&Payload>) -> Result<Workspace, Error> {
    let mut locate = ctx.locate();
    locate.out = SILENT;
    if locate.state.is_none() {
        locate.state = payload
            .and_then(|p| p.cwd.as_deref())
            .and_then(crate::domain::workspace::find_upward);
    }
    Workspace::resolve(&locate, false)
}

/// One line on stderr and an `error` event, so a failing hook is seen
/// without ever blocking the agent.
fn fail_open(err: &anyhow::Error, agent: Agent, payload: Option<&Payload>, ctx: &Ctx) {
    let msg = crate::system::redact::redact(&format!("{err:#}")).replace('\n', " ");
    crate::system::output::stderr_line(&format!("ctxkeep: hook error: {msg}"));
    let Ok(mut ws) = workspace(ctx, payload) else {
        return;
    };
    // Never create `.ctxkeep/` in a folder that is not a project.
    if !ws.state_path.is_file() {
        return;
    }
    ws.lock_timeout = ws.lock_timeout.min(ERROR_LOG_LOCK_WAIT);
    let Ok(lock) = ws.lock() else {
        return;
    };
    let _ = crate::domain::events::append(
        &ws,
        &lock,
        "error",
        json!({
            "command": "hook", "agent": agent,
            "hook_event": payload.map(|p| p.event.clone()),
            "session": payload.and_then(|p| p.session.clone()),
            "code": crate::system::error::code_name_of(err),
            "message": msg,
        }),
    );
}
