//! The compaction family as decisions: `PreCompact` (the usage recorded, a checkpoint of what
//! the session did, the compaction begun with it) and `PostCompact` (the compaction's end, its
//! summary audited). One seen only in the transcript or as the figure's drop is the track
//! family's (`track.rs`).

use serde_json::json;

use crate::agents::Agent;
use crate::domain::session::Session;
use crate::pipeline::effects::{AutoCheckpoint, Effect, LogLine};
use crate::transcripts::usage::Usage;

use super::UsageRead;

/// What a pre-compaction event read, for its decision.
pub struct PreCompactFacts<'a> {
    pub agent: Agent,
    /// The compaction's trigger, as the agent says (`auto`, `manual`, `idle`).
    pub trigger: Option<&'a str>,
    /// The user asked for it (`manual`), or nobody is at the keyboard (`idle`): the
    /// checkpoint is written even when nothing is new.
    pub asked: bool,
    /// The agent fires this event before every model call: whether it compacts is doubted.
    pub doubted: bool,
    /// The usage reading (recorded only) and the limit found for it; `Err`: the transcript
    /// could not be read (the message, redacted); None: no transcript.
    pub usage: Option<Result<UsageRead<'a>, String>>,
    pub now: &'a str,
}

/// An event of the compaction family decided.
pub struct CompactDecided {
    pub session: Session,
    pub effects: Vec<Effect>,
    /// The session is to be written even if it has no record yet.
    pub touched: bool,
}

/// `PreCompact` (pure): the token count recorded (no stage fires: nothing said now reaches the
/// model, and one checkpoint is enough), then, unless the agent will compact nothing, a
/// checkpoint with the budget just before the compaction, and the compaction begun with it (a
/// continuation: it names the checkpoint the apply stage wrote).
pub fn pre_compact(mut s: Session, f: PreCompactFacts<'_>) -> CompactDecided {
    let mut effects = Vec::new();
    let mut touched = false;
    // The token count this session had before: a resumed run's first event may name a
    // transcript with no token count in it yet.
    let known = match &f.usage {
        Some(Ok(usage)) => usage.tokens_before(&s),
        _ => s.tokens(),
    }
    .filter(|_| f.doubted);
    let mut read = None;
    match f.usage {
        Some(Ok(usage)) => {
            let decided = usage.decide(s);
            s = decided.session;
            effects.extend(decided.effects);
            touched = true;
            read = Some(s.tokens());
        }
        // The checkpoint is written from the session's last token count, as without a
        // transcript.
        Some(Err(message)) => effects.push(Effect::Log(LogLine::new(
            "transcript_unreadable",
            json!({ "session": s.id(), "agent": f.agent, "message": message }),
        ))),
        None => {}
    }
    if f.doubted {
        // The token count now is ctxkeep's last reading, not where the agent compacts: that is
        // learned from the agent's own once the compaction is in the transcript.
        let now = read.flatten().or(known);
        touched |= now.is_some();
        let name = f.agent.display_name();
        if let Some(why) = super::compacts_nothing(&mut s, now, name) {
            effects.push(Effect::Log(LogLine::new(
                "checkpoint_skipped",
                json!({
                    "trigger": "pre-compact", "session": s.id(), "agent": f.agent, "why": why,
                }),
            )));
            return CompactDecided {
                session: s,
                effects,
                touched,
            };
        }
    }
    effects.push(Effect::Checkpoint(AutoCheckpoint {
        trigger: "pre-compact".into(),
        budget: s.budget(),
        extra: json!({ "session": s.id(), "agent": f.agent, "compaction": f.trigger }),
        asked: f.asked,
        agent: f.agent.to_string(),
    }));
    effects.push(Effect::CompactionBegins {
        trigger: f.trigger.map(str::to_string),
        now: f.now.to_string(),
    });
    CompactDecided {
        session: s,
        effects,
        touched: true,
    }
}

/// `PostCompact` (pure): the compaction the transcript ends with (`boundary`) noted and the old
/// token count gone with the context (unless the restored session's start already stated the
/// new one), logged, then the summary (`summary`, from the event, else the transcript)
/// audited against the checkpoint.
pub fn post_compact(
    mut s: Session,
    agent: Agent,
    boundary: Option<&Usage>,
    trigger: Option<&str>,
    summary: Option<String>,
    now: &str,
) -> CompactDecided {
    super::compaction_ended(&mut s, boundary, trigger, now);
    let effects = vec![
        Effect::Log(LogLine::new(
            "compaction",
            json!({ "session": s.id(), "agent": agent, "trigger": trigger }),
        )),
        Effect::AuditSummary {
            trigger: trigger.map(str::to_string),
            summary,
        },
    ];
    CompactDecided {
        session: s,
        effects,
        touched: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::compaction::Limit;
    use crate::pipeline::decide::test_support::{boundary, NOW, WINDOW};

    fn at(tokens: u64, limit: u64) -> Session {
        let mut s = Session::new("s1", WINDOW);
        s.usage_read(Some(tokens), WINDOW, "claude-code", None, None);
        s.limit_found(Limit::new(limit, "front-matter"), None);
        s
    }

    fn facts(agent: Agent, doubted: bool) -> PreCompactFacts<'static> {
        PreCompactFacts {
            agent,
            trigger: Some("auto"),
            asked: false,
            doubted,
            usage: None,
            now: NOW,
        }
    }

    #[test]
    fn before_a_compaction_a_checkpoint_is_asked_for_then_the_compaction_begins_with_it() {
        let d = pre_compact(at(150_000, 160_000), facts(Agent::ClaudeCode, false));
        let [Effect::Checkpoint(c), Effect::CompactionBegins { trigger, now }] = &d.effects[..]
        else {
            panic!("{:?}", d.effects);
        };
        assert_eq!(c.trigger, "pre-compact");
        assert_eq!(c.budget.as_ref().map(|b| b.tokens), Some(150_000));
        assert_eq!(c.extra["compaction"], "auto");
        assert_eq!((trigger.as_deref(), now.as_str()), (Some("auto"), NOW));
        assert!(d.touched);
    }

    #[test]
    fn a_doubted_pre_compaction_below_the_limit_skips_the_checkpoint_and_says_why() {
        let d = pre_compact(at(90_000, 160_000), facts(Agent::Gemini, true));
        let [Effect::Log(line)] = &d.effects[..] else {
            panic!("{:?}", d.effects);
        };
        assert_eq!(line.event, "checkpoint_skipped");
        assert!(
            line.fields["why"]
                .as_str()
                .unwrap()
                .starts_with("below Gemini CLI's compression point (90000 of 160000"),
            "{}",
            line.fields
        );
        assert_eq!(d.session.below_point_at(), Some(90_000));
    }

    #[test]
    fn an_unreadable_transcript_is_logged_and_the_checkpoint_still_written() {
        let mut f = facts(Agent::ClaudeCode, false);
        f.usage = Some(Err("permission denied".into()));
        let d = pre_compact(at(150_000, 160_000), f);
        let kinds: Vec<_> = d
            .effects
            .iter()
            .map(|e| match e {
                Effect::Log(l) => l.event,
                Effect::Checkpoint(_) => "checkpoint",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["transcript_unreadable", "checkpoint", "other"]);
    }

    #[test]
    fn after_a_compaction_the_count_is_gone_and_the_summary_audited() {
        let b = boundary("auto", 155_000);
        let summary = Some("Summary: a lexer.".to_string());
        let d = post_compact(
            at(150_000, 160_000),
            Agent::ClaudeCode,
            Some(&b),
            Some("auto"),
            summary.clone(),
            NOW,
        );
        assert_eq!(d.session.tokens(), None);
        let [Effect::Log(line), Effect::AuditSummary {
            trigger,
            summary: given,
        }] = &d.effects[..]
        else {
            panic!("{:?}", d.effects);
        };
        assert_eq!(line.event, "compaction");
        assert_eq!(trigger.as_deref(), Some("auto"));
        assert_eq!(given, &summary);
    }
}
