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

use super::{CallsRead, UsageRead};

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
    /// The usage reading, as the read stage measured it and found its limit (None: no
    /// transcript yet).
    pub usage: Option<UsageRead<'a>>,
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
    if let Some(mut read) = f.usage {
        // A session that loop detection just gave a record has one before this reading.
        read.facts.had_record |= touched;
        let decided = read.decide(s);
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
                summary: None,
            });
        }
    }
    let now = f.reach == Reach::Now;
    if now && f.has_checkpoint && f.compaction_unannounced {
        effects.push(Effect::GiveUnannouncedCompaction);
    }
    // A line the pre-tool hook could not give (what a snapshot left out), once.
    if now && f.payload.after_tool() {
        let notes = s.waiting_notes_given();
        if !notes.is_empty() {
            touched = true;
            effects.push(Effect::GiveNotes(notes));
        }
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
    read: UsageRead<'_>,
) -> ByHandDecided {
    let mut effects = Vec::new();
    let mut said = Vec::new();
    if let Some((calls, limits)) = calls {
        let decided = super::event_loops(&mut s, calls, &limits, Reach::Now, read.facts.now);
        effects = decided.effects;
        said = decided.said;
    }
    let mut usage = read.decide(s);
    effects.append(&mut usage.effects);
    usage.effects = effects;
    ByHandDecided { usage, loops: said }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::compaction::Limit;
    use crate::domain::config::Config;
    use crate::domain::state::FrontMatter;
    use crate::pipeline::decide::test_support::{found, usage_facts, NOW, WINDOW};
    use crate::pipeline::decide::Reading;
    use crate::transcripts::activity::loops::{Action, Outcome, Step};
    use crate::transcripts::usage::Usage;

    fn payload(agent: Agent, event: &str, extra: serde_json::Value) -> Payload {
        let mut fields = serde_json::json!({ "hook_event_name": event, "session_id": "s1" });
        fields
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        crate::agents::parse_payload(agent, &fields.to_string()).unwrap()
    }

    fn tool_call(agent: Agent) -> Payload {
        payload(
            agent,
            "PostToolUse",
            serde_json::json!({
                "tool_name": "Bash", "tool_use_id": "tu_1",
                "tool_input": { "command": "cargo test" },
                "tool_response": { "stdout": "ok" },
            }),
        )
    }

    fn reading(agent: &'static str, tokens: u64) -> Reading {
        let mut u = Usage::empty(agent);
        u.tokens = Some(tokens);
        Reading::Transcript(Box::new(u), "/t.jsonl".into())
    }

    fn tracked(tokens: u64, limit: u64) -> Session {
        let mut s = Session::new("s1", WINDOW);
        s.usage_read(Some(tokens), WINDOW, "claude-code", None, None);
        s.limit_found(Limit::new(limit, "front-matter"), None);
        s
    }

    fn facts<'a>(
        agent: Agent,
        payload: &'a Payload,
        reach: Reach,
        usage: Option<(
            crate::pipeline::decide::UsageFacts<'a>,
            crate::pipeline::decide::LimitFound,
        )>,
    ) -> TrackFacts<'a> {
        TrackFacts {
            reach,
            agent,
            policy: agent.policy(),
            payload,
            has_checkpoint: true,
            compaction_unannounced: false,
            calls: None,
            usage: usage.map(|(facts, found)| UsageRead::new(facts, found)),
            requests: true,
            now: NOW,
        }
    }

    /// Each effect by its kind, in order.
    fn kinds(effects: &[Effect]) -> Vec<String> {
        effects
            .iter()
            .map(|e| match e {
                Effect::Log(l) => format!("log {}", l.event),
                Effect::AuditSummary { trigger, .. } => format!("audit {trigger:?}"),
                other => format!("{other:?}")
                    .split(['(', ' '])
                    .next()
                    .unwrap()
                    .to_string(),
            })
            .collect()
    }

    #[test]
    fn a_tool_call_past_a_checkpoint_stage_writes_it_settles_then_counts_a_request() {
        let config = Config::from_front(&FrontMatter::default());
        let agent = Agent::ClaudeCode;
        let p = tool_call(agent);
        let r = reading("claude-code", 150_000);
        let usage = Some((usage_facts(&r, &config, Reach::Now), found(160_000)));
        let d = track(
            tracked(100_000, 160_000),
            facts(agent, &p, Reach::Now, usage),
        );
        assert_eq!(
            kinds(&d.effects),
            [
                "StageCheckpoint",
                "Settle",
                "Acknowledge",
                "CheckpointRequest"
            ]
        );
        assert_eq!(d.session.tokens(), Some(150_000));
        assert!(d.touched);
        assert!(d.loops.is_empty());
    }

    #[test]
    fn the_end_of_a_turn_settles_its_stages_for_later_and_asks_nothing() {
        let config = Config::from_front(&FrontMatter::default());
        let agent = Agent::ClaudeCode;
        let p = payload(agent, "Stop", serde_json::json!({}));
        let r = reading("claude-code", 140_000);
        let usage = Some((usage_facts(&r, &config, Reach::Later), found(160_000)));
        let d = track(
            tracked(100_000, 160_000),
            facts(agent, &p, Reach::Later, usage),
        );
        assert_eq!(kinds(&d.effects), ["Settle", "Acknowledge"]);
        let Some(Effect::Settle(settle)) = d.effects.first() else {
            panic!()
        };
        assert_eq!(settle.reach, Reach::Later);
        assert_eq!(
            settle.step.fire.len(),
            1,
            "stage-80 fires, to be given later"
        );
    }

    #[test]
    fn a_drop_where_the_agent_fires_no_compaction_event_is_noted_and_its_summary_audited() {
        let config = Config::from_front(&FrontMatter::default());
        let agent = *Agent::ALL
            .iter()
            .find(|a| a.policy().compaction_detected(true, false))
            .expect("an agent seen compacting only by the drop");
        let p = payload(
            agent,
            "BeforeAgent",
            serde_json::json!({ "prompt": "go on" }),
        );
        let r = reading(agent.as_str(), 30_000);
        let usage = Some((usage_facts(&r, &config, Reach::Now), found(160_000)));
        let d = track(
            tracked(150_000, 160_000),
            facts(agent, &p, Reach::Now, usage),
        );
        // The point learned from the last count before the drop, the drop logged, the summary
        // audited on its own lock, then the start the drop left waiting given with this prompt.
        assert_eq!(
            kinds(&d.effects),
            [
                "Settle",
                "Acknowledge",
                "Learn",
                "log compaction",
                "audit Some(\"detected\")",
                "GiveWaitingStart"
            ]
        );
        assert_eq!(d.session.drop_noted_from(), Some(150_000));
    }

    #[test]
    fn a_compaction_no_start_announced_is_given_back_only_where_the_reply_reaches_the_model() {
        let agent = Agent::ClaudeCode;
        let p = tool_call(agent);
        let mut f = facts(agent, &p, Reach::Now, None);
        f.compaction_unannounced = true;
        f.requests = false;
        let d = track(tracked(30_000, 160_000), f);
        assert_eq!(
            kinds(&d.effects),
            ["Acknowledge", "GiveUnannouncedCompaction"]
        );
        let stop = payload(agent, "Stop", serde_json::json!({}));
        let mut f = facts(agent, &stop, Reach::Later, None);
        f.compaction_unannounced = true;
        let d = track(tracked(30_000, 160_000), f);
        assert_eq!(kinds(&d.effects), ["Acknowledge"]);
    }

    #[test]
    fn a_line_a_pre_tool_hook_could_not_give_waits_for_the_next_tool_result_and_is_given_once() {
        let agent = Agent::Gemini;
        let mut s = tracked(30_000, 160_000);
        s.note_waits("The snapshot left out: sub (a submodule).");
        // The end of a turn reaches no model: the line keeps waiting.
        let stop = payload(agent, "AfterAgent", serde_json::json!({}));
        let d = track(s, facts(agent, &stop, Reach::Later, None));
        assert!(!d.effects.iter().any(|e| matches!(e, Effect::GiveNotes(_))));
        // The next tool result gives it, and the session no longer holds it.
        let p = payload(
            agent,
            "AfterTool",
            serde_json::json!({ "tool_name": "run_shell_command", "tool_input": { "command": "ls" } }),
        );
        let mut f = facts(agent, &p, Reach::Now, None);
        f.requests = false;
        let d = track(d.session, f);
        let given: Vec<_> = d
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::GiveNotes(lines) => Some(lines.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            given,
            [vec!["The snapshot left out: sub (a submodule).".to_string()]]
        );
        assert!(d.touched);
        let mut f = facts(agent, &p, Reach::Now, None);
        f.requests = false;
        let again = track(d.session, f);
        assert!(!again
            .effects
            .iter()
            .any(|e| matches!(e, Effect::GiveNotes(_))));
    }

    #[test]
    fn the_same_failure_a_third_time_is_logged_and_said_last() {
        let agent = Agent::ClaudeCode;
        let p = tool_call(agent);
        let s = tracked(30_000, 160_000);
        let steps = (1..=3)
            .map(|n| Step {
                id: Some(format!("tu_{n}")),
                action: Action::Command("cargo test".into()),
                outcome: Outcome::done(Some(false), Some(101), "error[E0308]: mismatched types"),
            })
            .collect();
        let calls = CallsRead {
            steps,
            payload: None,
            before: std::borrow::Cow::Owned(s.loops().clone()),
            told_before: 0,
        };
        let mut f = facts(agent, &p, Reach::Now, None);
        f.calls = Some((calls, LoopLimits::default()));
        f.requests = false;
        let d = track(s, f);
        assert_eq!(kinds(&d.effects), ["log gutter", "Acknowledge"]);
        assert_eq!(d.loops.len(), 1);
        assert!(d.loops[0].1.contains("`cargo test`"), "{}", d.loops[0].1);
        assert!(d.touched);
    }
}
