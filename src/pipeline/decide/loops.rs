//! Loop detection's verdict on the calls an event brought.

use crate::domain::session::Session;
use crate::pipeline::effects::{Effect, LogLine, Reach};

/// Loop detection's verdict on the calls this event brought (the transcript's new ones, then
/// the payload's `unnamed` call when it has no id): the loops found, recorded on the session,
/// and those to give now (with a reply that reaches the model; else they wait).
pub fn loops(
    s: &mut Session,
    steps: &[crate::transcripts::activity::loops::Step],
    unnamed: Option<crate::transcripts::activity::loops::Step>,
    limits: &crate::transcripts::activity::LoopLimits,
    reach: Reach,
) -> (
    Vec<crate::transcripts::activity::LoopHit>,
    Vec<crate::transcripts::activity::LoopHit>,
) {
    crate::pipeline::loop_detection::judge(s, steps, unnamed, limits, reach == Reach::Now)
}

/// What loop detection read at an event, under the lock: the calls the transcript gained since
/// its cursor (which the read moved), the call the payload reports (as a step, its files hashed),
/// and loop detection's state as it was before the event (the record as loaded, unless a step
/// changed it since).
pub struct CallsRead<'a> {
    pub steps: Vec<crate::transcripts::activity::loops::Step>,
    pub payload: Option<crate::transcripts::activity::loops::Step>,
    pub before: std::borrow::Cow<'a, crate::transcripts::activity::loops::LoopState>,
    pub told_before: usize,
}

/// Loop detection's decision at an event.
pub struct LoopsDecided {
    /// The loops given now, each with its instruction.
    pub said: Vec<(crate::transcripts::activity::LoopHit, String)>,
    /// A `gutter` line per loop found.
    pub effects: Vec<Effect>,
    /// Loop detection's state changed: the session is to be written.
    pub changed: bool,
}

/// Loop detection at an event (pure): the calls read fed to the session's state, the payload's
/// merged with the transcript's copy when it has an id (without one, as Gemini's, counted after
/// the transcript's, which are older); the loops found logged, and given now when the event's
/// reply reaches the model (else kept for the next one that can).
pub fn event_loops(
    s: &mut Session,
    calls: CallsRead<'_>,
    limits: &crate::transcripts::activity::LoopLimits,
    reach: Reach,
    now: &str,
) -> LoopsDecided {
    let CallsRead {
        mut steps,
        payload,
        before,
        told_before,
    } = calls;
    let mut unnamed = None;
    if let Some(call) = payload {
        match call.id {
            Some(_) => crate::pipeline::loop_detection::merge_payload(&mut steps, call),
            None => unnamed = Some(call),
        }
    }
    let (found, said) = loops(s, &steps, unnamed, limits, reach);
    let effects = found
        .iter()
        .map(|hit| {
            let mut fields = serde_json::to_value(hit).unwrap_or_default();
            if let Some(e) = fields.as_object_mut() {
                e.insert("session".into(), serde_json::json!(s.id()));
                e.insert("told".into(), serde_json::json!(reach == Reach::Now));
            }
            Effect::Log(LogLine::new("gutter", fields))
        })
        .collect();
    let changed = *before != *s.loops() || s.loops_told().len() != told_before;
    if changed {
        s.touched(now);
    }
    let said = said
        .into_iter()
        .map(|hit| {
            let text = crate::pipeline::loop_detection::instruction(&hit);
            (hit, text)
        })
        .collect();
    LoopsDecided {
        said,
        effects,
        changed,
    }
}

#[cfg(test)]
mod tests {
    use crate::pipeline::decide::test_support::*;

    fn failing(command: &str) -> CallStep {
        CallStep {
            id: None,
            action: Call::Command(command.into()),
            outcome: Outcome::done(
                Some(false),
                Some(101),
                "error[E0308]: mismatched types\n --> src/lib.rs:10:5",
            ),
        }
    }

    #[test]
    fn the_same_failure_three_times_is_given_once() {
        let mut s = Session::new("s1", WINDOW);
        let limits = LoopLimits::default();
        let steps = vec![failing("cargo build"), failing("cargo build")];
        let (found, said) = loops(&mut s, &steps, None, &limits, Reach::Now);
        assert!(found.is_empty() && said.is_empty());
        let (found, said) = loops(
            &mut s,
            &[],
            Some(failing("cargo build")),
            &limits,
            Reach::Now,
        );
        assert_eq!(found.len(), 1);
        assert!(matches!(
            &said[0],
            LoopHit::SameFailure { command, count: 3, .. } if command == "cargo build"
        ));
        let text = crate::pipeline::loop_detection::instruction(&said[0]);
        assert!(text.contains("cargo build"), "{text}");
        assert_eq!(s.loops_told().len(), 1, "recorded on the session");
        let (found, said) = loops(
            &mut s,
            &[],
            Some(failing("cargo build")),
            &limits,
            Reach::Now,
        );
        assert!(found.is_empty() && said.is_empty(), "given once");
    }

    #[test]
    fn a_loop_found_when_nothing_reaches_the_model_waits_for_the_next_event() {
        let mut s = Session::new("s1", WINDOW);
        let limits = LoopLimits::default();
        let steps = vec![failing("make"), failing("make"), failing("make")];
        let (found, said) = loops(&mut s, &steps, None, &limits, Reach::Later);
        assert_eq!((found.len(), said.len()), (1, 0));
        let (found, said) = loops(&mut s, &[], None, &limits, Reach::Now);
        assert!(found.is_empty());
        assert_eq!(
            said.len(),
            1,
            "given with the next event that reaches the model"
        );
        let (_, said) = loops(&mut s, &[], None, &limits, Reach::Now);
        assert!(said.is_empty());
    }
}
