//! `ctxkeep hook AGENT`: the command an agent's hooks run. Reads the event's
//! JSON, then tracks usage, writes a checkpoint or injects the resume prompt.
//! It fails open: an internal error never breaks the agent (exit 0, one line
//! on stderr, an `error` event) unless `--strict` asks for exit 2.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::track::{self, Options, Reading};
use super::Ctx;
use crate::checkpoint::{Checkpoint, Fields};
use crate::cli::HookArgs;
use crate::config::Config;
use crate::error::Error;
use crate::hook_payload::{self, Action, Payload, MAX_PAYLOAD_BYTES};
use crate::output::Output;
use crate::session::{self, Session};
use crate::state::StateFile;
use crate::usage::Agent;
use crate::workspace::Workspace;

/// Warnings from the shared code go nowhere: on exit 0 the agent only logs
/// stderr, and a line there would read as a failure.
const SILENT: Output = Output {
    json: false,
    quiet: true,
};

/// Claude Code's limit on injected text (longer text is replaced by a preview).
pub const MAX_CONTEXT_CHARS: usize = 10_000;
/// The exit code that blocks the agent's action (only with `--strict`).
const BLOCK: u8 = 2;
/// How long the error path waits for the lock to log an `error` event: the
/// error may be a lock timeout already.
const ERROR_LOG_LOCK_WAIT: Duration = Duration::from_millis(500);

pub fn run(args: HookArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let agent = Agent::from(args.agent);
    let mut payload = None;
    match handle(&args, agent, ctx, &mut payload) {
        Ok(reply) => {
            let text = match (reply, &payload) {
                (Some(context), Some(p)) => Some(reply_json(&p.event, context)),
                // Gemini parses stdout as JSON and wants it even when empty.
                _ if agent == Agent::Gemini => Some("{}".to_string()),
                _ => None,
            };
            if let Some(text) = text {
                let mut out = std::io::stdout().lock();
                // A closed pipe is the agent's business, not an error of ours.
                let _ = writeln!(out, "{text}").and_then(|_| out.flush());
            }
            Ok(0)
        }
        Err(err) => {
            fail_open(&err, agent, payload.as_ref(), ctx);
            Ok(if args.strict { BLOCK } else { 0 })
        }
    }
}

/// The reply that adds `context` to the model's context.
fn reply_json(event: &str, context: String) -> String {
    // Everything ctxkeep prints for an agent is redacted (the prompt is
    // already; stage text quotes the user's config).
    let mut context = crate::redact::redact(&context).into_owned();
    crate::output::cut_to_chars(&mut context, MAX_CONTEXT_CHARS);
    json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": context } })
        .to_string()
}

/// Everything one event needs, resolved once.
struct Hook {
    ws: Workspace,
    sf: StateFile,
    config: Config,
    session: String,
    agent: Agent,
    payload: Payload,
    /// Warnings from the shared code go nowhere: on exit 0 the agent only
    /// logs stderr, and a line there would read as a failure.
    out: Output,
}

/// Acts on the event; returns the text to inject, if any.
fn handle(
    args: &HookArgs,
    agent: Agent,
    ctx: &Ctx,
    seen: &mut Option<Payload>,
) -> anyhow::Result<Option<String>> {
    let payload = match &args.payload {
        Some(text) if text.len() as u64 > MAX_PAYLOAD_BYTES => {
            return Err(Error::data(
                "<argument>",
                format!("hook input is over {} KiB", MAX_PAYLOAD_BYTES / 1024),
            )
            .into())
        }
        Some(text) => hook_payload::parse(agent, text)?,
        None => hook_payload::read(agent, std::io::stdin().lock())?,
    };
    *seen = Some(payload.clone());
    if payload.action == Action::Ignore {
        return Ok(None);
    }
    let ws = workspace(ctx, Some(&payload))?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);
    let session = payload
        .session
        .as_deref()
        .ok_or_else(|| Error::data("<stdin>", "hook input has no session_id"))?;
    let session = session::validate_id(session)?;
    let hook = Hook {
        ws,
        sf,
        config,
        session,
        agent,
        payload,
        out: SILENT,
    };
    match hook.payload.action.clone() {
        Action::Track { reply } => hook.track(reply),
        Action::PreCompact { trigger } => hook.pre_compact(trigger).map(|_| None),
        Action::SessionStart { source } => hook.session_start(&source),
        Action::SessionEnd { reason } => hook.session_end(reason).map(|_| None),
        Action::Ignore => Ok(None),
    }
}

impl Hook {
    /// The transcript to read, when there is one yet (a session's first
    /// prompt comes before its transcript exists).
    fn transcript(&self) -> Option<PathBuf> {
        let path = match &self.payload.transcript {
            Some(p) => p.clone(),
            None if self.agent == Agent::Codex => {
                crate::usage::codex::find_rollout(&codex_home()?, &self.session)?
            }
            None => return None,
        };
        std::fs::metadata(&path).is_ok().then_some(path)
    }

    /// Updates the session from the transcript; None when there is none yet.
    fn update(&self, record_only: bool) -> anyhow::Result<Option<track::Applied>> {
        let Some(path) = self.transcript() else {
            return Ok(None);
        };
        let usage = crate::usage::read_transcript(&path, Some(self.agent))?;
        let applied = track::apply(
            &self.ws,
            &self.sf,
            &self.config,
            &self.session,
            Reading::Transcript(Box::new(usage), path.display().to_string()),
            Options {
                record_only,
                ..Options::default()
            },
            &self.out,
        )?;
        Ok(Some(applied))
    }

    /// UserPromptSubmit, PostToolUse (and their Codex/Gemini peers): the
    /// stages crossed fire, and their instructions go to the model.
    fn track(&self, reply: bool) -> anyhow::Result<Option<String>> {
        let Some(applied) = self.update(false)? else {
            return Ok(None);
        };
        self.ack_from_transcript();
        if !reply {
            return Ok(None);
        }
        let texts = track::instructions(&self.ws, &self.config, &applied)?;
        Ok((!texts.is_empty()).then(|| texts.join("\n")))
    }

    /// The agent may confirm a restore by echoing the nonce instead of
    /// running `ctxkeep ack`. Looked for only while the latest session is
    /// unacknowledged, so the usual hook reads one small file's tail more.
    fn ack_from_transcript(&self) {
        if !crate::chain::latest_is_pending(&self.ws) {
            return;
        }
        let Some(path) = self.transcript() else {
            return;
        };
        if let Ok(lock) = self.ws.lock() {
            let _ = crate::chain::ack_from_transcript(&self.ws, &lock, &path);
        }
    }

    /// PreCompact: a checkpoint with the budget just before compaction. The
    /// figure is recorded without firing stages: their instructions could
    /// not reach the model now, and one checkpoint is enough.
    fn pre_compact(&self, trigger: Option<String>) -> anyhow::Result<()> {
        let budget = match self.update(true)? {
            Some(applied) => applied.session.budget(),
            None => session::load(&self.ws, &self.session)?.and_then(|s| s.budget()),
        };
        let lock = self.ws.lock()?;
        super::checkpoint::write_noting(
            &self.ws,
            &lock,
            Fields::default(),
            "pre-compact",
            budget,
            &self.out,
            json!({ "session": self.session, "agent": self.agent, "compaction": trigger }),
        )?;
        Ok(())
    }

    /// SessionStart: records the start; after a compaction, a resume or a
    /// clear (and at startup when a checkpoint was written since the last
    /// session started) the resume prompt is injected.
    fn session_start(&self, source: &str) -> anyhow::Result<Option<String>> {
        let inject = match (&self.sf.fm.checkpoint, source) {
            (None, _) => false,
            (Some(c), "startup") => newer_than_last_session(&self.ws, c),
            _ => true,
        };
        let lock = self.ws.lock()?;
        // An injected prompt opens a session in the chain (number, nonce,
        // stuck count), as `ctxkeep resume` does.
        let prompt = match (&self.sf.fm.checkpoint, inject) {
            (Some(c), true) => {
                let record = crate::chain::plan_session(
                    &self.ws,
                    &lock,
                    c,
                    None,
                    &format!("{}:{source}", self.agent),
                    &self.config,
                )?;
                let prompt = crate::commands::resume::prompt_for_hook(
                    &self.ws,
                    &self.sf,
                    MAX_CONTEXT_CHARS,
                    Some(&record),
                )?;
                crate::chain::record_session(&self.ws, &lock, &record, &self.config)?;
                prompt
            }
            _ => None,
        };
        let mut s = session::load(&self.ws, &self.session)?
            .unwrap_or_else(|| Session::new(&self.session, self.config.window));
        if source == "compact" {
            // The old figure is gone with the context; every stage re-arms.
            s.set_tokens(None, s.window);
            s.fired.clear();
            s.handoff_due = false;
        }
        let now = crate::clock::now_rfc3339();
        s.started_at = Some(now.clone());
        s.updated_at = now;
        s.agent = Some(self.agent.to_string());
        if let Some(t) = &self.payload.transcript {
            s.transcript = Some(t.display().to_string());
        }
        session::save(&self.ws, &lock, &s)?;
        let resumed_from = prompt.as_ref().map(|p| p.checkpoint.clone());
        if let Err(e) = crate::events::append(
            &self.ws,
            &lock,
            "session_start",
            json!({
                "session": self.session, "agent": self.agent, "source": source,
                "resumed_from": resumed_from,
                "omitted": prompt.as_ref().map(|p| &p.omitted),
                "cut": prompt.as_ref().map(|p| p.cut),
            }),
        ) {
            self.out
                .warn(&format!("the event log could not be updated: {e}"));
        }
        Ok(prompt.map(|p| p.prompt))
    }

    /// SessionEnd: a checkpoint carrying the last one's fields, with the
    /// session's budget as last recorded (no transcript read: the agent
    /// gives this hook little time). Nothing before the first checkpoint.
    fn session_end(&self, reason: Option<String>) -> anyhow::Result<()> {
        if self.sf.fm.checkpoint.is_none() {
            return Ok(());
        }
        let lock = self.ws.lock()?;
        let budget = session::load(&self.ws, &self.session)?.and_then(|s| s.budget());
        super::checkpoint::write_noting(
            &self.ws,
            &lock,
            Fields::default(),
            "session-end",
            budget,
            &self.out,
            json!({ "session": self.session, "agent": self.agent, "reason": reason }),
        )?;
        Ok(())
    }
}

/// True when `c` was written after the latest session start any hook
/// recorded (or none was): a new session should continue from it.
fn newer_than_last_session(ws: &Workspace, c: &Checkpoint) -> bool {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let Some(written) = parse(&c.created_at) else {
        return true;
    };
    session::all(ws)
        .iter()
        .filter_map(|s| s.started_at.as_deref().and_then(parse))
        .max()
        .is_none_or(|last| written > last)
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
            .and_then(crate::workspace::find_upward);
    }
    Workspace::resolve(&locate, false)
}

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")),
    }
}

/// One line on stderr and an `error` event, so a failing hook is seen
/// without ever blocking the agent.
fn fail_open(err: &anyhow::Error, agent: Agent, payload: Option<&Payload>, ctx: &Ctx) {
    let msg = crate::redact::redact(&format!("{err:#}")).replace('\n', " ");
    eprintln!("ctxkeep: hook error: {msg}");
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
    let _ = crate::events::append(
        &ws,
        &lock,
        "error",
        json!({
            "command": "hook", "agent": agent,
            "hook_event": payload.map(|p| p.event.clone()),
            "session": payload.and_then(|p| p.session.clone()),
            "code": crate::error::code_name_of(err),
            "message": msg,
        }),
    );
}
