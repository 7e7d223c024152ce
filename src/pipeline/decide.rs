//! The decide stage: pure functions from a session's state and what the read stage found to
//! the session's next state and the effects (what to tell the model, whether a checkpoint is
//! due, the lines to log). Nothing here opens a file or reads the clock: the time is handed
//! in, so every decision can be tested in-process (see the tests below).

use serde_json::json;

use crate::agents::{Agent, HookTraits};
use crate::compaction::StagesAgainst;
use crate::hook_payload::Payload;
use crate::requests::{self, Settings, Why};
use crate::session::Session;
use crate::stages::{FiredStage, Stage, StageAction, Step};
use crate::usage::Usage;

use super::effects::{LogLine, Reach};

/// Which stages move at this reading: those crossed fire, those left behind (or all, at a
/// compaction) re-arm. A reading that only records moves none.
pub fn stage_step(
    s: &Session,
    stages: &[Stage],
    against: StagesAgainst,
    compacted: bool,
    reach: Reach,
) -> Step {
    match reach {
        Reach::RecordOnly => Step {
            fire: Vec::new(),
            rearmed: Vec::new(),
            kept: s.fired.clone(),
        },
        _ => crate::stages::step(stages, &s.fired, s.stage_percent(against), compacted),
    }
}

/// The stages settled on the session.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// Stages fired by this reading, lowest first.
    pub fired: Vec<FiredStage>,
    /// What to tell the model now: the stages fired now and those that waited for an event
    /// that can reach it, lowest first, each once (empty unless the reply reaches it now).
    pub to_tell: Vec<FiredStage>,
}

/// Records `step` on the session: the stages fired now (those that ask for one name
/// `checkpoint`, the checkpoint written for the jump), what waits for an event that can
/// reach the model, whether a handoff is due; at the end of a turn, its figure for the
/// forecast.
pub fn settle_stages(
    s: &mut Session,
    step: &Step,
    checkpoint: Option<&str>,
    reach: Reach,
    now: &str,
) -> Settled {
    let fired: Vec<FiredStage> = step
        .fire
        .iter()
        .map(|stage| FiredStage {
            at: stage.at,
            name: stage.name(),
            action: stage.action,
            checkpoint: (stage.action != StageAction::Warn)
                .then(|| checkpoint.map(str::to_string))
                .flatten(),
            tokens: s.tokens,
        })
        .collect();
    s.fired = step.kept.clone();
    s.fired.extend(fired.iter().cloned());
    if reach == Reach::Later {
        // The end of a turn (its output reaches no model): the forecast's figures.
        s.note_turn_end();
    }
    // A stage left behind (usage fell, the context was compacted) has nothing left to say.
    let fired_names: Vec<String> = s.fired.iter().map(|f| f.name.clone()).collect();
    s.pending_stages.retain(|p| fired_names.contains(&p.name));
    let to_tell = match reach {
        Reach::Later => {
            s.pending_stages.extend(fired.iter().cloned());
            Vec::new()
        }
        // What waits keeps waiting.
        Reach::RecordOnly => Vec::new(),
        Reach::Now => {
            let mut all = std::mem::take(&mut s.pending_stages);
            all.extend(fired.iter().cloned());
            all.sort_by(|a, b| a.at.total_cmp(&b.at));
            all.dedup_by(|a, b| a.name == b.name);
            all
        }
    };
    if fired.iter().any(|f| f.action == StageAction::Handoff) {
        s.handoff_due = true;
    } else if !s.fired.iter().any(|f| f.action == StageAction::Handoff) {
        // Every handoff stage re-armed (usage fell, e.g. after compaction).
        s.handoff_due = false;
    }
    s.updated_at = now.to_string();
    Settled { fired, to_tell }
}

/// One `stage` line per stage fired.
pub fn stage_logs(s: &Session, fired: &[FiredStage]) -> Vec<LogLine> {
    fired
        .iter()
        .map(|f| {
            LogLine::new(
                "stage",
                json!({
                    "session": s.id, "stage": f.name, "at": f.at, "action": f.action,
                    "tokens": s.tokens, "window": s.window, "percent": s.percent,
                    "limit": s.limit(), "limit_percent": s.limit_percent,
                    "checkpoint": f.checkpoint,
                }),
            )
        })
        .collect()
}

/// The figure fell from at least 80 % of the compaction point to less than half of what it
/// was: the conversation was compressed.
pub fn compressed(before: &Session, after: &Session) -> bool {
    match (before.tokens, after.tokens) {
        (Some(b), Some(a)) => b.saturating_mul(5) >= before.limit().saturating_mul(4) && a * 2 < b,
        _ => false,
    }
}

/// Whether this reading shows a compaction the agent fires no event for: its figure dropped
/// (and, where the agent records compactions in its transcript, the reading says one was).
pub fn compaction_by_drop(
    traits: &HookTraits,
    before: &Session,
    after: &Session,
    recorded_in_transcript: bool,
) -> bool {
    traits.compaction_seen_as_drop
        && (!traits.compaction_in_transcript || recorded_in_transcript)
        && compressed(before, after)
}

/// A compaction seen as the figure's drop, noted on the session.
#[derive(Debug, Clone, PartialEq)]
pub struct DropNoted {
    /// Where the agent compacted on its own, to learn: its last figure before the drop, when
    /// that was past the point it compacts at (from below it, the user asked) and its
    /// transcript states no figure of its own.
    pub learn_at: Option<u64>,
    pub log: LogLine,
}

/// Notes the drop from `before` to `after`: the prompt is given again with the next prompt
/// or tool event. None when this very drop was noted already (a reading from before it,
/// applied late).
pub fn note_drop(
    s: &mut Session,
    before: &Session,
    after: &Session,
    traits: &HookTraits,
    agent: Agent,
) -> Option<DropNoted> {
    if before.tokens.is_some() && s.fall_noted_from == before.tokens {
        return None;
    }
    s.fall_noted_from = before.tokens;
    s.pending_start = Some("compact".into());
    s.pre_compact_at = None;
    let past_point = before
        .tokens
        .is_some_and(|t| t.saturating_mul(10) >= before.limit().saturating_mul(9));
    let learn_at = (!traits.compaction_in_transcript && past_point)
        .then_some(before.tokens)
        .flatten();
    let log = LogLine::new(
        "compaction",
        json!({
            "session": s.id, "agent": agent, "trigger": "detected",
            "before": before.tokens, "after": after.tokens,
        }),
    );
    Some(DropNoted { learn_at, log })
}

/// For an agent whose pre-compaction event fires before every model call: why this one will
/// compact nothing, if it will not (`name`: the agent's display name). It compacts only past
/// its limit, measured by the last model call's figure (`tokens`), so not before a session's
/// first call nor below the limit; and once it let one pass the limit without compacting,
/// it compacts nothing at the next either.
pub fn compacts_nothing(s: &mut Session, tokens: Option<u64>, name: &str) -> Option<String> {
    let Some(tokens) = tokens else {
        return Some(format!(
            "before {name}'s first model call: no figure yet, nothing to compress"
        ));
    };
    let limit = s.limit();
    if tokens < limit {
        s.pre_compact_at = None;
        Some(format!(
            "below {name}'s compression point ({tokens} of {limit} tokens)"
        ))
    } else if let Some(at) = s.pre_compact_at {
        Some(format!(
            "{name} compressed nothing after the pre-compact checkpoint at {at} tokens (now {tokens} of {limit})"
        ))
    } else {
        s.pre_compact_at = Some(tokens);
        None
    }
}

/// A checkpoint request to make now: why, and the count it is made at (the state before the
/// request restarted it), which its text names.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub why: Why,
    pub state: requests::State,
}

impl Request {
    pub fn log(&self, session: &str, agent: Agent, chars: usize) -> LogLine {
        LogLine::new(
            "checkpoint_request",
            json!({
                "session": session, "agent": agent, "why": self.why.name(),
                "calls": self.state.calls, "chars": chars,
            }),
        )
    }
}

/// Counts the tool call toward a checkpoint request and says whether to make one now.
/// `stage_told`: a stage's instruction goes out with this event and asks for the same, so
/// none is made and the count starts again.
pub fn checkpoint_request(
    state: &mut requests::State,
    settings: &Settings,
    payload: &Payload,
    current: Option<&str>,
    own: Option<&str>,
    stage_told: bool,
) -> Option<Request> {
    let why = requests::step(state, settings, payload, current, own);
    match (stage_told, why) {
        (true, _) => {
            requests::stage_told(state);
            None
        }
        (false, Some(why)) => {
            let at = state.clone();
            requests::asked(state);
            Some(Request { why, state: at })
        }
        (false, None) => None,
    }
}

/// A session start, by its source: `clear` empties the context (every stage re-arms, the
/// next reading sets the size); `compact` too, noting the compaction the transcript ends with
/// and keeping the restored size the agent states; every start is a new process of the agent.
pub fn session_started(
    s: &mut Session,
    source: &str,
    boundary: Option<&Usage>,
    stated: Option<u64>,
    agent: &str,
    transcript: Option<String>,
    now: &str,
) {
    if source == "clear" {
        s.context_emptied(now);
        s.compacted_at = None;
    }
    if source == "compact" {
        if let Some(usage) = boundary {
            crate::services::learning::note_compaction(s, usage, None);
        }
        s.context_emptied(now);
        if let Some(t) = stated {
            s.restored(t, now);
        }
    }
    s.started(now, agent, transcript);
}

/// A compaction's end (the agent's post-compaction event): the compaction the transcript ends
/// with is noted; the old figure is gone with the context, unless the restored session's start
/// already stated the new one.
pub fn compaction_ended(
    s: &mut Session,
    boundary: Option<&Usage>,
    trigger: Option<&str>,
    now: &str,
) {
    if let Some(usage) = boundary {
        crate::services::learning::note_compaction(s, usage, trigger);
    }
    if s.restored_at.take().is_none() {
        s.context_emptied(now);
    }
    s.updated_at = now.to_string();
}
