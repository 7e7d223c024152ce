//! Checkpoint requests: counting tool calls toward one and whether to make one now.

use serde_json::json;

use crate::agents::payload::Payload;
use crate::agents::Agent;
use crate::domain::requests::{Settings, State};
use crate::pipeline::effects::LogLine;
use crate::pipeline::requests::{self, Why};

/// A checkpoint request to make now: why, and the count it is made at (the state before the
/// request restarted it), which its text names.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub why: Why,
    pub state: State,
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
/// `stage_given`: a stage's instruction goes out with this event and asks for the same, so
/// none is made and the count starts again.
pub fn checkpoint_request(
    state: &mut State,
    settings: &Settings,
    payload: &Payload,
    current: Option<&str>,
    own: Option<&str>,
    stage_given: bool,
) -> Option<Request> {
    let why = requests::step(state, settings, payload, current, own);
    match (stage_given, why) {
        (true, _) => {
            requests::stage_given(state);
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

#[cfg(test)]
mod tests {
    use crate::domain::requests::State;
    use crate::pipeline::decide::test_support::*;

    fn post_tool_use(command: &str) -> Payload {
        let text = serde_json::json!({
            "hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "Bash",
            "tool_use_id": "toolu_1", "tool_input": { "command": command },
            "tool_response": { "stdout": "", "stderr": "", "interrupted": false },
        })
        .to_string();
        crate::agents::parse_payload(Agent::ClaudeCode, &text).unwrap()
    }

    fn calls(state: &mut State, n: u32, payload: &Payload) -> Vec<Request> {
        let settings = Settings::default();
        (0..n)
            .filter_map(|_| {
                checkpoint_request(state, &settings, payload, Some("c0"), Some("c0"), false)
            })
            .collect()
    }

    #[test]
    fn a_commit_after_ten_calls_asks_for_a_checkpoint_and_says_so_in_the_log() {
        let mut state = State::default();
        assert!(calls(&mut state, 10, &post_tool_use("ls")).is_empty());
        let asked = calls(
            &mut state,
            1,
            &post_tool_use("git commit -m 'Fix the parser'"),
        );
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].why, Why::Commit(Some("Fix the parser".into())));
        let line = asked[0].log("s1", Agent::ClaudeCode, 42);
        assert_eq!(line.fields["why"], "commit");
        assert_eq!(line.fields["calls"], 11);
        let text = requests::text(&asked[0].why, &asked[0].state, false);
        assert!(
            text.starts_with("ctxkeep: you committed \"Fix the parser\""),
            "{text}"
        );
        assert_eq!(state.calls, 0, "the count starts again");
        assert_eq!(state.asked, 1);
    }

    #[test]
    fn a_commit_within_the_spacing_asks_nothing() {
        let mut state = State::default();
        calls(&mut state, 3, &post_tool_use("ls"));
        assert!(calls(&mut state, 1, &post_tool_use("git commit -m x")).is_empty());
    }

    #[test]
    fn a_long_stretch_of_calls_asks_once_at_sixty() {
        let mut state = State::default();
        let asked = calls(&mut state, 70, &post_tool_use("cargo test"));
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].why, Why::LongStretch(60));
    }

    #[test]
    fn a_stage_given_at_the_same_event_asks_instead_and_restarts_the_count() {
        let mut state = State::default();
        calls(&mut state, 20, &post_tool_use("ls"));
        let settings = Settings::default();
        let commit = post_tool_use("git commit -m x");
        let asked =
            checkpoint_request(&mut state, &settings, &commit, Some("c0"), Some("c0"), true);
        assert_eq!(asked, None);
        assert_eq!((state.calls, state.asked), (0, 0));
    }

    #[test]
    fn a_checkpoint_the_model_wrote_restarts_the_count() {
        let mut state = State::default();
        calls(&mut state, 55, &post_tool_use("ls"));
        let settings = Settings::default();
        let ls = post_tool_use("ls");
        // Another checkpoint than the one this session saw: the model wrote it.
        checkpoint_request(&mut state, &settings, &ls, Some("c1"), Some("c0"), false);
        assert_eq!(state.calls, 1);
        assert!(
            calls(&mut state, 10, &ls).is_empty(),
            "no long stretch at 60 calls in all"
        );
    }

    #[test]
    fn checkpoint_requests_can_be_turned_off_per_reason() {
        let mut state = State::default();
        let settings = Settings {
            after_commit: false,
            ..Settings::default()
        };
        for _ in 0..11 {
            let commit = post_tool_use("git commit -m x");
            assert_eq!(
                checkpoint_request(&mut state, &settings, &commit, None, None, false),
                None
            );
        }
    }
}
