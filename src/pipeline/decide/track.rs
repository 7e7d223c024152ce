//! The track family as one decision: a prompt or a tool call (`UserPromptSubmit`,
//! `PostToolUse` and their peers) or the end of a turn (`Stop`). From the session and what the
//! event read (the payload, the usage, loop detection's new calls, what the index's catch-up
//! found, the limit), the session's next state and the effects in the order the apply stage
//! runs them; what the reply says is rendered from the loops said here and what the effects
//! gave.

use crate::agents::payload::Payload;
use crate::agents::policy::Policy;
use crate::agents::Agent;
use crate::domain::session::Session;
use crate::pipeline::effects::{Effect, LearnPoint, Reach};
use crate::transcripts::activity::LoopLimits;

use super::{CallsRead, LimitFound, UsageFacts};

/// What a track event read, for its decision.
pub struct TrackFacts<'a> {
    /// Whether the reply reaches the model now (a prompt, a tool call) or later (`Stop`).
    pub reach: Reach,
    pub agent: Agent,
    pub policy: &'a Policy,
    pub payload: &'a Payload,
    /// The project has a checkpoint.
    pub has_checkpoint: bool,
    /// The session index's catch-up found a compaction in the transcript that no start
    /// announced.
    pub compaction_unannounced: bool,
    /// Loop detection's new calls and its limits (None: loop detection is off).
    pub calls: Option<(CallsRead<'a>, LoopLimits)>,
    /// The usage reading and the limit the read stage found for it (None: no transcript yet).
    pub usage: Option<(UsageFacts<'a>, LimitFound)>,
    /// Checkpoint requests are on.
    pub requests: bool,
    pub now: &'a str,
}

/// A track event decided.
pub struct TrackDecided {
    pub session: Session,
    pub effects: Vec<Effect>,
    /// The loops given now, in the reply after everything else.
    pub loops: Vec<(crate::transcripts::activity::LoopHit, String)>,
    /// The session is to be written even if it has no record yet.
    pub touched: bool,
}

/// A track event (pure): loops first (a stage's checkpoint then has this call's outcome), the
/// usage reading, the restore's echo looked for, a compaction seen as the figure's drop, what
/// waited for this event (a compaction no start announced, a deferred start, what a summary
/// left out) and, after a tool call, a checkpoint request.
pub fn track(mut s: Session, f: TrackFacts<'_>) -> TrackDecided {
    let mut effects = Vec::new();
    let mut touched = false;
    let mut said_loops = Vec::new();
    if let Some((calls, limits)) = f.calls {
        let decided = super::event_loops(&mut s, calls, &limits, f.reach, f.now);
        effects.extend(decided.effects);
        touched |= decided.changed;
        said_loops = decided.said;
    }
    let mut drop = None;
    let mut waits_back = false;
    if let Some((mut facts, found)) = f.usage {
        // A session that loop detection just gave a record has one before this reading.
        facts.had_record |= touched;
        let decided = super::usage(s, &facts, found);
        s = decided.session;
        effects.extend(decided.effects);
        touched = true;
        // The drop is measured from the token count this reading replaced.
        if let Some(before) = &decided.previous {
            let recorded = decided.transcript.as_ref().is_some_and(|t| t.compacted);
            if super::compaction_by_drop(f.policy, before, &s, recorded) {
                drop = Some(before.clone());
            }
        }
        // What a compaction's summary left out, once it can be read (the session record is
        // already loaded: nothing is read when none waits).
        waits_back = s.after_compaction().is_some_and(|a| a.waiting.is_some());
    }
    effects.push(Effect::Acknowledge);
    if let Some(before) = drop {
        let after = s.clone_without_loops();
        if let Some(noted) = super::note_drop(&mut s, &before, &after, f.policy, f.agent) {
            touched = true;
            if let Some(tokens) = noted.learn_at {
                effects.push(Effect::Learn(LearnPoint {
                    agent: f.agent.as_str(),
                    model: before.model().map(str::to_string),
                    tokens,
                    log: crate::pipeline::effects::LogLine::new(
                        "compaction_learned",
                        serde_json::json!({
                            "session": s.id(), "agent": f.agent, "model": before.model(),
                            "tokens": tokens,
                        }),
                    ),
                }));
            }
            effects.push(Effect::Log(noted.log));
            effects.push(Effect::AuditSummary {
                trigger: Some("detected".into()),
            });
        }
    }
    let now = f.reach == Reach::Now;
    if now && f.has_checkpoint && f.compaction_unannounced {
        effects.push(Effect::GiveUnannouncedCompaction);
    }
    if super::gives_waiting_start(f.policy, f.reach, f.payload.prompt.as_deref()) {
        effects.push(Effect::GiveWaitingStart);
    }
    if now && waits_back {
        effects.push(Effect::GiveBack);
    }
    if now && f.payload.after_tool() && !f.payload.in_subagent && f.requests {
        effects.push(Effect::CheckpointRequest);
    }
    TrackDecided {
        session: s,
        effects,
        loops: said_loops,
        touched,
    }
}

/// `ctxkeep track` decided: loop detection on the calls the transcript gained, then the
/// usage reading.
pub struct ByHandDecided {
    /// The reading decided, loop detection's `gutter` lines first among its effects.
    pub usage: super::UsageDecided,
    /// The loops given now, each with its instruction.
    pub loops: Vec<(crate::transcripts::activity::LoopHit, String)>,
}

/// `ctxkeep track` (pure): its reply reaches whoever runs it, so loops are given now.
pub fn by_hand(
    mut s: Session,
    calls: Option<(CallsRead<'_>, LoopLimits)>,
    facts: &UsageFacts<'_>,
    found: LimitFound,
) -> ByHandDecided {
    let mut effects = Vec::new();
    let mut said = Vec::new();
    if let Some((calls, limits)) = calls {
        let decided = super::event_loops(&mut s, calls, &limits, Reach::Now, facts.now);
        effects = decided.effects;
        said = decided.said;
    }
    let mut usage = super::usage(s, facts, found);
    effects.append(&mut usage.effects);
    usage.effects = effects;
    ByHandDecided { usage, loops: said }
}
