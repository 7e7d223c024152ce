//! What an agent's hook event does: track usage and fire stages, write a
//! checkpoint before compaction or at the end, inject the resume prompt at
//! a session's start. The `hook` command reads the payload and replies.

use std::path::PathBuf;

use serde_json::json;

use crate::checkpoint::{Checkpoint, Fields};
use crate::config::Config;
use crate::error::Error;
use crate::hook_payload::{Action, Payload};
use crate::output::Output;
use crate::services::record;
use crate::services::tracking::{self, Options, Reading};
use crate::session::{self, Session};
use crate::state::StateFile;
use crate::usage::Agent;
use crate::workspace::Workspace;

/// Claude Code's limit on injected text (longer text is replaced by a preview).
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// Everything one event needs, resolved once.
pub struct Hook {
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

impl Hook {
    /// Resolves what the event needs: the project's state, its settings and
    /// the agent's session id.
    pub fn new(ws: Workspace, agent: Agent, payload: Payload, out: Output) -> anyhow::Result<Hook> {
        let sf = StateFile::load(&ws.state_path)?;
        sf.require_initialized()?;
        let config = Config::from_front(&sf.fm);
        let session = payload
            .session
            .as_deref()
            .ok_or_else(|| Error::data("<stdin>", "hook input has no session_id"))?;
        let session = session::validate_id(session)?;
        Ok(Hook {
            ws,
            sf,
            config,
            session,
            agent,
            payload,
            out,
        })
    }

    /// Acts on the event; returns the text to inject, if any.
    pub fn handle(&self) -> anyhow::Result<Option<String>> {
        match self.payload.action.clone() {
            Action::Track { reply } => self.track(reply),
            Action::PreCompact { trigger } => self.pre_compact(trigger).map(|_| None),
            Action::SessionStart { source } => self.session_start(&source),
            Action::SessionEnd { reason } => self.session_end(reason).map(|_| None),
            Action::Ignore => Ok(None),
        }
    }
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
    fn update(&self, record_only: bool) -> anyhow::Result<Option<tracking::Applied>> {
        let Some(path) = self.transcript() else {
            return Ok(None);
        };
        let usage = crate::usage::read_transcript(&path, Some(self.agent))?;
        let applied = tracking::apply(
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
        let texts = tracking::instructions(&self.ws, &self.config, &applied)?;
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
        record::write_noting(
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
                let prompt = crate::prompt::prompt_for_hook(
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
        record::write_noting(
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

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")),
    }
}
