//! The continuation prompt: the checkpoint, what changed in the repository
//! since, and the session's nonce, rendered from templates/resume.md within
//! a token budget. Shared by `resume`, the agent hooks and `verify`'s size
//! check, which must count exactly this text.

use serde_json::{json, Value};

use crate::domain::checkpoint::{Checkpoint, DirtyFile};
use crate::domain::config::Config;
use crate::domain::state::{Seal, StateFile};
use crate::domain::templates::Templates;
use crate::domain::workspace::Workspace;
use crate::handoff::chain::SessionRecord;
use crate::system::error::Error;

/// Sections in the order they are dropped to fit the budget; the five
/// recovered fields are never dropped. What remains (the checkpoint's
/// remaining items, the request, the open plan items, the agent's next
/// step) goes last.
pub const DROP_ORDER: [&str; 9] = [
    "history",
    "notes",
    "tree",
    "changes",
    "observed",
    "done",
    "questions",
    "decisions",
    "remaining",
];

/// The resume prompt as `resume` prints it (before redaction), and what it
/// left out to fit.
pub struct Rendered {
    pub prompt: String,
    pub tokens: usize,
    /// Sections dropped to fit, in `DROP_ORDER`.
    pub omitted: Vec<&'static str>,
}

/// Renders the continuation prompt for `checkpoint`, dropping sections in
/// `DROP_ORDER` until it fits `budget` tokens (or nothing more can go).
/// Shared with `verify`, whose size check must count exactly this text.
pub fn render_prompt(
    ws: &Workspace,
    sf: &StateFile,
    checkpoint: &Checkpoint,
    config: &Config,
    budget: usize,
) -> anyhow::Result<Rendered> {
    render_prompt_for(ws, sf, checkpoint, config, budget, None)
}

/// As `render_prompt`, for the session `session` opens: its nonce, the
/// handoff, and the stuck warning at the top.
pub fn render_prompt_for(
    ws: &Workspace,
    sf: &StateFile,
    checkpoint: &Checkpoint,
    config: &Config,
    budget: usize,
    session: Option<&SessionRecord>,
) -> anyhow::Result<Rendered> {
    let changes = changes_since(ws, checkpoint);
    let templates = Templates::load(&ws.root, config.templates.as_deref())?;
    // Said above the template's text, so that a project's own template
    // cannot leave it out.
    let warning = missing_fields_warning(checkpoint);
    let ages = ages_of(checkpoint, sf);
    // The state file's history, as it stood before this checkpoint: another line's newer
    // checkpoint lists this one as earlier.
    let history: Vec<_> = sf
        .fm
        .history
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|h| {
            let n = crate::domain::checkpoint::id_number(&h.id);
            n.is_none() || n < checkpoint.number()
        })
        .collect();
    let render = |omitted: &[&str]| -> Result<String, Error> {
        let include: serde_json::Map<String, Value> = DROP_ORDER
            .iter()
            .map(|s| (s.to_string(), Value::Bool(!omitted.contains(s))))
            .collect();
        templates
            .render(
                "resume.md",
                json!({
                    "checkpoint": checkpoint,
                    "history": history,
                    "changes": changes,
                    "include": include,
                    "stuck": session.and_then(SessionRecord::stuck_message),
                    "ages": ages,
                    "by_session": checkpoint.headline_from_session(),
                    "line_short": checkpoint.line.as_ref().map(|l| l.short()),
                    "nonce": session.map(|s| s.nonce.as_str()),
                    // The confirmation asked for (a marker line in the reply), by the same
                    // words as after a compaction.
                    "ack_request": session.filter(|_| config.acknowledgement).map(|s| {
                        crate::transcripts::compaction_summary::text::ack_request(&checkpoint.id, &s.nonce)
                    }),
                    "session": session,
                }),
            )
            .map(|text| match &warning {
                Some(w) => format!("{w}\n\n{text}"),
                None => text,
            })
    };
    let mut omitted: Vec<&'static str> = Vec::new();
    let mut prompt = render(&omitted)?;
    let mut tokens = crate::context::tokens::count(&prompt, config.encoding)?;
    for section in DROP_ORDER {
        if tokens <= budget {
            break;
        }
        omitted.push(section);
        prompt = render(&omitted)?;
        tokens = crate::context::tokens::count(&prompt, config.encoding)?;
    }
    Ok(Rendered {
        prompt,
        tokens,
        omitted,
    })
}

/// How long ago the checkpoint, its hand-set headline and an earlier hand-set headline were
/// written (`3 h`), for the prompt to attribute them. A headline carried unchanged through
/// later checkpoints dates from the oldest entry of `history` that still has it.
fn ages_of(c: &Checkpoint, sf: &StateFile) -> Value {
    let age = |t: &str| crate::system::clock::age(t);
    let history = sf.fm.history.clone().unwrap_or_default();
    let headline_at = history
        .iter()
        .take_while(|h| h.phase == c.phase && h.next_action == c.next_action)
        .last()
        .map(|h| h.created_at.as_str())
        .unwrap_or(&c.created_at);
    // A next step or a failing check said half an hour or more before the checkpoint shows
    // its age: the work may have moved on since (`line_time::SHOW_AGE_AFTER_SECS`).
    let old = |at: Option<&String>| {
        at.filter(|at| crate::transcripts::activity::line_time::old_by(at, &c.created_at))
            .and_then(|at| age(at))
    };
    let observed = c.observed.as_ref();
    let failing: Vec<Option<String>> = observed
        .and_then(|o| o.left_open.as_ref())
        .map(|l| l.failing.iter().map(|f| old(f.at.as_ref())).collect())
        .unwrap_or_default();
    json!({
        "checkpoint": age(&c.created_at),
        "headline": age(headline_at),
        "earlier": c.earlier_by_hand.as_ref().and_then(|e| age(&e.created_at)),
        "next_step": observed.and_then(|o| old(o.next_step_at.as_ref())),
        "failing": failing,
    })
}

/// The line that heads a prompt whose checkpoint leaves required fields
/// empty: a reader must not take the gaps for "nothing to do". None when the
/// session's own record says what the work is (its request, or a headline read
/// from it).
pub fn missing_fields_warning(checkpoint: &Checkpoint) -> Option<String> {
    if checkpoint.says_the_work() {
        return None;
    }
    let missing = crate::domain::checkpoint::missing_fields(checkpoint);
    (!missing.is_empty()).then(|| {
        format!(
            "WARNING: checkpoint {} has no {}. Do not guess them: ask the user, or read the repository, before acting.",
            checkpoint.id,
            missing.iter().map(|f| f.key()).collect::<Vec<_>>().join(", ")
        )
    })
}

/// What changed in the repository since the checkpoint was written.
fn changes_since(ws: &Workspace, c: &Checkpoint) -> Value {
    let Some(then) = &c.git else {
        return Value::Null;
    };
    let exclude = [crate::system::fsutil::resolve_target(&ws.state_path)];
    let now = match crate::system::git::state(&ws.root, &exclude) {
        Ok(s) => s,
        Err(why) => return json!({ "note": format!("the repository cannot be read now ({why})") }),
    };
    let mut carried = false;
    let commits_since = match (&then.head, &now.head) {
        (Some(a), Some(b)) if a != b => match crate::system::git::commits_since(&ws.root, a) {
            // The commit that committed the checkpoint cannot be named in it:
            // it is not a move (as `verify`'s CK502 counts).
            Ok(n) if n > 0 && carries_checkpoint(ws, &exclude[0], a) => {
                carried = true;
                Some(n - 1)
            }
            Ok(n) => Some(n),
            Err(_) => {
                return json!({ "note": format!("HEAD {a} of the checkpoint is unknown to this repository; it is now {b}") })
            }
        },
        _ => Some(0),
    };
    let was: std::collections::BTreeSet<&str> =
        then.dirty.iter().map(|d| d.path.as_str()).collect();
    let is: std::collections::BTreeSet<&str> = now.dirty.iter().map(|d| d.path.as_str()).collect();
    // ctxkeep's own changes (its settings entries, its .gitignore line) are not the user's.
    let own = crate::agents::own_files::without_own(&ws.root, &now.dirty);
    let newly_dirty: Vec<&DirtyFile> = own.iter().filter(|d| !then.describes(&d.path)).collect();
    let now_clean: Vec<&str> = was.difference(&is).copied().collect();
    json!({
        "note": Value::Null,
        "commits_since": commits_since,
        "carried": carried,
        "head_now": now.head,
        "newly_dirty": newly_dirty,
        "now_clean": now_clean,
    })
}

/// Whether the newest commit that changed the state file came after `head`
/// (the checkpoint's): the commit that carries the checkpoint.
fn carries_checkpoint(ws: &Workspace, state: &std::path::Path, head: &str) -> bool {
    crate::system::git::last_commit_touching(&ws.root, state)
        .ok()
        .flatten()
        .is_some_and(|c| {
            c != head && crate::system::git::is_ancestor(&ws.root, head, &c).unwrap_or(false)
        })
}

/// The resume prompt an agent's session-start hook injects.
pub struct HookPrompt {
    pub checkpoint: String,
    pub prompt: String,
    /// Sections dropped to fit the configured token budget.
    pub omitted: Vec<&'static str>,
    /// The text was cut at `max_chars` after every section had gone.
    pub cut: bool,
}

/// The resume prompt for a hook, or None before the first checkpoint: the
/// same rendering as `resume` within the configured token budget, redacted,
/// and at most `max_chars` characters (the agent's limit on injected text).
/// A checkpoint edited by hand is still given, with a warning on top: a
/// hook cannot ask for `--force`, and the edited fields are the user's.
pub fn prompt_for_hook(
    ws: &Workspace,
    sf: &StateFile,
    checkpoint: &Checkpoint,
    max_chars: usize,
    session: Option<&SessionRecord>,
) -> anyhow::Result<Option<HookPrompt>> {
    let config = Config::from_front(&sf.fm);
    let rendered = render_prompt_for(
        ws,
        sf,
        checkpoint,
        &config,
        config.resume_max_tokens,
        session,
    )?;
    let prompt = crate::system::redact::redact(&rendered.prompt);
    let mut prompt = crate::system::recorded::escape_controls(&prompt).into_owned();
    let current = sf
        .fm
        .checkpoint
        .as_ref()
        .is_some_and(|c| c.id == checkpoint.id);
    if current && crate::domain::state::seal(sf) != Some(Seal::Intact) {
        prompt = format!(
            "WARNING: checkpoint {} was changed by hand since ctxkeep wrote it (or has no digest); check it with `ctxkeep verify`.\n\n{prompt}",
            checkpoint.id
        );
    }
    let cut = crate::system::output::cut_to_chars(&mut prompt, max_chars);
    Ok(Some(HookPrompt {
        checkpoint: checkpoint.id.clone(),
        prompt,
        omitted: rendered.omitted,
        cut,
    }))
}
