//! The end family as one decision: `SessionEnd`. The restore's echo is looked for, loop
//! detection reads the calls the session made last (a loop found now is given if the session
//! goes on: a resume), and a checkpoint of what the session did since the last one is asked
//! for (skipped by the apply stage when nothing is new; none before the project's first).

use serde_json::json;

use crate::agents::Agent;
use crate::domain::session::Session;
use crate::pipeline::effects::{AutoCheckpoint, Effect, Reach};
use crate::transcripts::activity::LoopLimits;

use super::CallsRead;

/// What a session's end read, for its decision.
pub struct EndFacts<'a> {
    pub agent: Agent,
    /// Why the session ended, as the agent says.
    pub reason: Option<&'a str>,
    /// The project has a checkpoint.
    pub has_checkpoint: bool,
    /// Loop detection's new calls and its limits (None: loop detection is off).
    pub calls: Option<(CallsRead<'a>, LoopLimits)>,
    pub now: &'a str,
}

/// A session's end decided.
pub struct EndDecided {
    pub session: Session,
    pub effects: Vec<Effect>,
    /// The session is to be written even if it has no record yet.
    pub touched: bool,
}

/// A session's end (pure).
pub fn end(mut s: Session, f: EndFacts<'_>) -> EndDecided {
    let mut effects = vec![Effect::Acknowledge];
    let mut touched = false;
    if let Some((calls, limits)) = f.calls {
        // Nothing said now reaches a model: a loop found waits for the next event.
        let decided = super::event_loops(&mut s, calls, &limits, Reach::Later, f.now);
        effects.extend(decided.effects);
        touched |= decided.changed;
    }
    if f.has_checkpoint {
        effects.push(Effect::Checkpoint(AutoCheckpoint {
            trigger: "session-end".into(),
            budget: s.budget(),
            extra: json!({ "session": s.id(), "agent": f.agent, "reason": f.reason }),
            asked: false,
            agent: f.agent.to_string(),
        }));
        touched = true;
    }
    EndDecided {
        session: s,
        effects,
        touched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::decide::test_support::{NOW, WINDOW};
    use crate::transcripts::activity::loops::{Action, Outcome, Step};

    fn failing(id: &str) -> Step {
        Step {
            id: Some(id.into()),
            action: Action::Command("cargo test".into()),
            outcome: Outcome::done(Some(false), Some(101), "error[E0308]: mismatched types"),
        }
    }

    fn calls(s: &Session, steps: Vec<Step>) -> CallsRead<'static> {
        CallsRead {
            steps,
            payload: None,
            before: std::borrow::Cow::Owned(s.loops().clone()),
            told_before: s.loops_told().len(),
        }
    }

    #[test]
    fn an_end_asks_for_the_echo_then_a_checkpoint_with_the_sessions_budget() {
        let mut s = Session::new("s1", WINDOW);
        s.usage_read(Some(30_000), WINDOW, "claude-code", None, None);
        let f = EndFacts {
            agent: Agent::ClaudeCode,
            reason: Some("exit"),
            has_checkpoint: true,
            calls: None,
            now: NOW,
        };
        let d = end(s, f);
        let [Effect::Acknowledge, Effect::Checkpoint(c)] = &d.effects[..] else {
            panic!("{:?}", d.effects);
        };
        assert_eq!(c.trigger, "session-end");
        assert_eq!(c.budget.as_ref().map(|b| b.tokens), Some(30_000));
        assert_eq!(c.extra["reason"], "exit");
        assert!(!c.asked, "skipped when nothing is new");
        assert!(d.touched);
    }

    #[test]
    fn before_the_first_checkpoint_an_end_asks_for_none_and_a_loop_it_finds_waits() {
        let s = Session::new("s1", WINDOW);
        let steps = (1..=3).map(|n| failing(&format!("t{n}"))).collect();
        let f = EndFacts {
            agent: Agent::ClaudeCode,
            reason: None,
            has_checkpoint: false,
            calls: Some((calls(&s, steps), LoopLimits::default())),
            now: NOW,
        };
        let d = end(s, f);
        assert!(!d.effects.iter().any(|e| matches!(e, Effect::Checkpoint(_))));
        let gutter: Vec<_> = d
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Log(l) if l.event == "gutter" => Some(l),
                _ => None,
            })
            .collect();
        assert_eq!(gutter.len(), 1, "{:?}", d.effects);
        assert_eq!(gutter[0].fields["told"], false);
        assert!(d.touched, "loop detection's state changed");
        let mut s = d.session;
        assert_eq!(
            s.loops_mut().take_unsaid().len(),
            1,
            "kept for the next event"
        );
    }
}
