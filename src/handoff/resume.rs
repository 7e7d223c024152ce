//! `resume`'s job: check the checkpoint's seal, open a session in the chain
//! (its number and restore nonce), render the prompt within the budget,
//! and log it. A peek does only the rendering.

use serde::Serialize;
use serde_json::json;

use crate::domain::checkpoint::Checkpoint;
use crate::domain::config::Config;
use crate::domain::state::{Seal, StateFile};
use crate::domain::workspace::Workspace;
use crate::handoff::chain::SessionRecord;
use crate::system::error::Error;
use crate::system::output::Output;

/// What the caller asks of [`resume`].
#[derive(Debug, Default)]
pub struct Options {
    /// Print a checkpoint that is not intact (edited by hand, no digest).
    pub force: bool,
    /// The token budget; an explicit one is a limit the recovered fields must fit.
    pub max_tokens: Option<usize>,
    /// The agent that will read the prompt, recorded in the chain.
    pub agent: Option<String>,
    /// Only look: no session opened, no nonce, nothing logged.
    pub peek: bool,
    /// Who opens the session, recorded in the chain [default: `resume`].
    pub source: Option<String>,
    /// `max_handoffs_without_progress` when the front matter sets none.
    pub default_max_handoffs: Option<u32>,
    /// Resume this agent session's line of work (its newest checkpoint) rather than the
    /// project's newest checkpoint.
    pub session: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ResumeReport {
    pub checkpoint: Checkpoint,
    pub prompt: String,
    pub tokens: usize,
    /// Sections left out to fit the budget.
    pub omitted: Vec<String>,
    /// What the agent gives `ctxkeep ack` to confirm the restore (null when
    /// no session could be recorded).
    pub nonce: Option<String>,
    /// The session this resume opened in the chain.
    pub session: Option<SessionRecord>,
}

pub fn resume(ws: &Workspace, opts: &Options, out: &Output) -> anyhow::Result<ResumeReport> {
    let ws = ws.clone();
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let mut config = Config::from_front(&sf.fm);
    config.max_handoffs_without_progress = config
        .max_handoffs_without_progress
        .or(opts.default_max_handoffs);
    let current = sf.fm.checkpoint.clone().ok_or_else(|| {
        Error::no_input(
            &ws.state_path,
            "no checkpoint yet; write one with `ctxkeep checkpoint --phase TEXT --task TEXT --agent NAME --next TEXT`",
        )
    })?;
    let checkpoint = match &opts.session {
        None => current,
        Some(session) => line_of(&ws, &current, session)?,
    };
    let seal = match sf
        .fm
        .checkpoint
        .as_ref()
        .is_some_and(|c| c.id == checkpoint.id)
    {
        true => crate::domain::state::seal(&sf),
        // An archived record is checked against its own digest.
        false => Some(
            match crate::domain::checkpoint::digest_of(&checkpoint.to_json()) == checkpoint.digest {
                true => Seal::Intact,
                false => Seal::Altered,
            },
        ),
    };
    match seal {
        Some(Seal::Intact) => {}
        Some(state) if !opts.force => {
            let what = if state == Seal::Missing {
                "has no digest"
            } else {
                "was changed by hand since ctxkeep wrote it (digest mismatch)"
            };
            return Err(Error::data(
                &ws.state_path,
                format!("checkpoint {} {what}; re-seal it with `ctxkeep checkpoint`, or print it anyway with `ctxkeep resume --force`", checkpoint.id),
            )
            .into());
        }
        _ => out.warn(&format!(
            "{} is not intact; printing it because of --force",
            checkpoint.id
        )),
    }

    if let Some(warning) = crate::handoff::prompt::missing_fields_warning(&checkpoint) {
        out.warn(&warning);
    }
    if let Some(warning) = edited_block_warning(&sf, &checkpoint, &ws.display_state()) {
        out.warn(&warning);
    }
    let budget = opts.max_tokens.unwrap_or(config.resume_max_tokens);
    let agent = opts
        .agent
        .as_deref()
        .map(crate::handoff::chain::validate_agent)
        .transpose()?;
    // The session is planned, the prompt rendered with its nonce, and the
    // session recorded only once the prompt is known to be printed.
    let lock = if opts.peek {
        None
    } else {
        match ws.lock() {
            Ok(lock) => Some(lock),
            Err(e) => {
                out.warn(&format!(
                    "no session recorded and no restore nonce in the prompt: {e}"
                ));
                None
            }
        }
    };
    let session = match &lock {
        Some(lock) => {
            let source = opts.source.as_deref().unwrap_or("resume");
            let opening = crate::handoff::chain::Opening::handoff(agent.as_deref(), source);
            plan_session(&ws, lock, &checkpoint, &opening, &config, out)?
        }
        None => None,
    };
    let crate::handoff::prompt::Rendered {
        prompt,
        tokens,
        omitted,
    } = crate::handoff::prompt::render_prompt_for(
        &ws,
        &sf,
        &checkpoint,
        &config,
        budget,
        session.as_ref(),
    )?;
    if tokens > budget {
        let msg = format!(
            "the recovered fields of {} alone take {tokens} tokens, more than the budget of {budget}; shorten them with `ctxkeep checkpoint`",
            checkpoint.id
        );
        if opts.max_tokens.is_some() {
            return Err(Error::Refused(msg).into());
        }
        out.warn(&msg);
    }
    if !omitted.is_empty() {
        out.info(&format!(
            "left out to fit {budget} tokens: {}",
            omitted.join(", ")
        ));
    }
    let prompt = crate::system::redact::redact(&prompt);
    let prompt = crate::system::recorded::escape_controls(&prompt).into_owned();

    if let (Some(lock), Some(record)) = (&lock, &session) {
        if let Err(e) = crate::handoff::chain::record_session(&ws, lock, record, &config) {
            out.warn(&format!("could not record the session: {e}"));
        }
        if let Some(stuck) = record.stuck_message() {
            out.warn(&stuck);
        }
    }
    if let Some(lock) = &lock {
        if let Err(e) = crate::domain::events::append(
            &ws,
            lock,
            "resume",
            json!({
                "checkpoint": checkpoint.id,
                "tokens": tokens,
                "session": session.as_ref().map(|s| s.number),
            }),
        ) {
            out.warn(&format!("could not log the resume event: {e}"));
        }
    }
    drop(lock);

    let report = ResumeReport {
        checkpoint,
        prompt,
        tokens,
        omitted: omitted.iter().map(|s| s.to_string()).collect(),
        nonce: session.as_ref().map(|s| s.nonce.clone()),
        session,
    };
    Ok(report)
}

/// The newest checkpoint of `session`'s line of work; an error naming the session when it
/// has none (exit 66).
fn line_of(ws: &Workspace, current: &Checkpoint, session: &str) -> anyhow::Result<Checkpoint> {
    let session = crate::domain::session::validate_id(session)?;
    crate::domain::lines::own(ws, Some(current), &session).ok_or_else(|| {
        Error::no_input(
            &ws.state_path,
            format!(
                "no checkpoint of session {session:?}: no line of work has it; `ctxkeep log` lists the checkpoints, `ctxkeep status` the live lines"
            ),
        )
        .into()
    })
}

/// The marked block shows the checkpoint; it is not read back. An edit of it
/// (a new "Next action" typed there) changes nothing `resume` prints: say
/// so, naming the next action the edit would have changed.
fn edited_block_warning(sf: &StateFile, checkpoint: &Checkpoint, shown: &str) -> Option<String> {
    let block = crate::domain::state::edited_block(sf)?;
    let typed = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("- **Next action:**"))
        .map(str::trim)
        .filter(|t| *t != checkpoint.next_action.trim());
    let what = match typed {
        Some(t) => format!(
            "its next action reads \"{}\", but checkpoint {} (which this prompt gives) says \"{}\"",
            crate::system::recorded::one_line(t, 120),
            checkpoint.id,
            crate::system::recorded::one_line(&checkpoint.next_action, 120)
        ),
        None => format!(
            "this prompt gives checkpoint {} as ctxkeep wrote it",
            checkpoint.id
        ),
    };
    Some(format!(
        "the marked block in {shown} was edited by hand, and an edit there changes nothing: {what}. \
         Record a change with `ctxkeep checkpoint --next \"...\"` (the next checkpoint rewrites the block)"
    ))
}

/// Plans the session this resume opens (see `chain::plan_session`). A
/// refusal (`max_handoffs_without_progress`) is an error; a chain that
/// cannot be read only costs the nonce, with a warning.
fn plan_session(
    ws: &Workspace,
    lock: &crate::system::fsutil::Lock,
    checkpoint: &Checkpoint,
    opening: &crate::handoff::chain::Opening,
    config: &Config,
    out: &Output,
) -> anyhow::Result<Option<SessionRecord>> {
    match crate::handoff::chain::plan_link(ws, lock, checkpoint, opening, config) {
        Ok(record) => Ok(Some(record)),
        Err(e)
            if crate::system::error::exit_code_of(&e)
                == crate::system::error::exit::CHECK_FAILED =>
        {
            Err(e)
        }
        Err(e) => {
            out.warn(&format!(
                "no session recorded and no restore nonce in the prompt: {e:#}"
            ));
            Ok(None)
        }
    }
}
