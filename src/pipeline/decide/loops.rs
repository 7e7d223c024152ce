//! Loop detection's verdict on the calls an event brought.

use crate::domain::session::Session;
use crate::pipeline::effects::Reach;

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
