//! A reading's window (the agent's word first, then proof, then the model table) and the
//! limit it is measured against.

use crate::agents::Agent;
use crate::domain::session::Session;

/// What a reading's window is chosen from besides the session (the window its agent's status
/// line reported, the larger one its usage proved).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowFacts {
    /// `--window`.
    pub given: Option<u64>,
    /// The window the transcript or the payload states.
    pub stated: Option<u64>,
    /// The model table's for the reading's model (with the project's `models:` overrides).
    pub model: Option<u64>,
    /// The front matter's `window`.
    pub configured: Option<u64>,
    /// The project's window when nothing else says.
    pub default: u64,
}

/// The window for a reading from an agent, and where it came from (the session's
/// `window_source`), in this order: `--window`; what the agent reports for the session (its
/// status line's, exact: it tells a 1M session from a 200k one; a window the transcript or
/// payload states); a larger window this session's usage proved; the model table's for the
/// reading's model, held down where the agent's configuration says so
/// (`CLAUDE_CODE_DISABLE_1M_CONTEXT`, read from `env`), unless the front matter configures a
/// larger one; the project's configured window (the front matter's `window`, else the default).
pub fn reading_window(
    s: &Session,
    agent: Option<Agent>,
    facts: &WindowFacts,
    env: &dyn Fn(&str) -> Option<String>,
) -> (u64, String) {
    if let Some(w) = facts.given {
        (w, "option".to_string())
    } else if let Some(w) = s.statusline_window() {
        (w, "status-line".to_string())
    } else if let Some(w) = facts.stated {
        (w, "agent".to_string())
    } else if let Some(w) = s.window_evidence() {
        (w, "evidence".to_string())
    } else if let Some(w) = facts.model {
        match agent.and_then(|a| crate::agents::window_cap_in(a, w, env)) {
            Some((cap, why)) => (cap, why),
            // A configured window above the model's default is the user's word for an
            // extended-context variant the transcript does not name (`[1m]`).
            None => match facts.configured.filter(|&c| c > w) {
                Some(c) => (c, "config".to_string()),
                None => (w, "model".to_string()),
            },
        }
    } else {
        (
            facts.configured.unwrap_or(facts.default),
            "config".to_string(),
        )
    }
}

/// The limit a reading is measured against, from what the read stage's limit lookup found
/// (`found`, and `seen`: the point learned from compactions): that limit, unless the window
/// itself is unknown (then the window, marked `unknown`); and, when it is the learned point,
/// how many compactions taught it.
pub fn reading_limit(
    window_known: bool,
    window: u64,
    found: crate::context::compaction::Limit,
    seen: Option<crate::context::compaction::LearnedPoint>,
) -> (crate::context::compaction::Limit, Option<usize>) {
    let limit = if window_known {
        found
    } else {
        crate::context::compaction::Limit::new(window, "unknown")
    };
    let learned_from = seen.filter(|_| limit.source == "observed").map(|l| l.count);
    (limit, learned_from)
}

#[cfg(test)]
mod tests {
    use crate::pipeline::decide::test_support::*;

    #[test]
    fn a_readings_window_is_the_agents_word_first_then_proof_then_the_model_held_down() {
        let mut s = Session::new("s1", WINDOW);
        let no_env = |_: &str| None;
        let held = |name: &str| (name == "CLAUDE_CODE_DISABLE_1M_CONTEXT").then(|| "1".to_string());
        let facts = WindowFacts {
            model: Some(1_000_000),
            default: WINDOW,
            ..WindowFacts::default()
        };
        let claude = Some(Agent::ClaudeCode);
        assert_eq!(
            reading_window(&s, claude, &facts, &no_env),
            (1_000_000, "model".to_string())
        );
        assert_eq!(
            reading_window(&s, claude, &facts, &held),
            (200_000, "env:CLAUDE_CODE_DISABLE_1M_CONTEXT".to_string())
        );
        let stated = WindowFacts {
            stated: Some(400_000),
            ..facts.clone()
        };
        assert_eq!(
            reading_window(&s, claude, &stated, &held),
            (400_000, "agent".to_string())
        );
        s.statusline_window_seen(300_000);
        assert_eq!(
            reading_window(&s, claude, &stated, &held),
            (300_000, "status-line".to_string())
        );
        let given = WindowFacts {
            given: Some(128_000),
            ..stated
        };
        assert_eq!(
            reading_window(&s, claude, &given, &held),
            (128_000, "option".to_string())
        );
        // No model known: the front matter's window, else the project's.
        let fresh = Session::new("s2", WINDOW);
        let configured = WindowFacts {
            configured: Some(150_000),
            default: WINDOW,
            ..WindowFacts::default()
        };
        assert_eq!(
            reading_window(&fresh, None, &configured, &no_env),
            (150_000, "config".to_string())
        );
    }

    #[test]
    fn a_token_count_given_by_hand_forgets_the_agents_window_word_and_tracks() {
        let mut s = Session::new("s1", WINDOW);
        assert_eq!(s.phase(), Phase::New);
        s.window_from("status-line");
        s.tokens_given(
            50_000,
            100_000,
            crate::domain::session::Source::Manual,
            None,
        );
        assert_eq!(s.phase(), Phase::Tracking);
        assert_eq!(
            (s.tokens(), s.window(), s.percent(), s.window_source()),
            (Some(50_000), 100_000, Some(50.0), None)
        );
        assert_eq!(s.source(), crate::domain::session::Source::Manual);
        // `--window` alone: the same token count against another window.
        s.window_given(200_000);
        assert_eq!((s.tokens(), s.percent()), (Some(50_000), Some(25.0)));
    }

    #[test]
    fn a_reading_keeps_what_it_does_not_name_and_another_model_forgets_its_windows() {
        let mut s = Session::new("s1", WINDOW);
        s.usage_read(
            Some(10_000),
            WINDOW,
            "codex",
            Some("/t/r.jsonl".into()),
            Some("gpt-5".into()),
        );
        s.statusline_window_seen(400_000);
        s.usage_read(Some(12_000), WINDOW, "codex", None, None);
        assert_eq!(
            (s.transcript(), s.model()),
            (Some("/t/r.jsonl"), Some("gpt-5"))
        );
        assert_eq!(s.source(), crate::domain::session::Source::Usage);
        s.model_seen(Some("gpt-5"));
        assert_eq!(s.statusline_window(), Some(400_000), "the same model");
        s.model_seen(Some("claude-opus-4-6"));
        assert_eq!(s.statusline_window(), None, "another model");
    }

    fn lookup(
        tokens: u64,
        source: &str,
        seen: Option<(u64, usize)>,
    ) -> (
        crate::context::compaction::Limit,
        Option<crate::context::compaction::LearnedPoint>,
    ) {
        let seen = seen.map(|(point, count)| crate::context::compaction::LearnedPoint {
            point: Some(point),
            count,
        });
        (crate::context::compaction::Limit::new(tokens, source), seen)
    }

    fn choose(
        known: bool,
        window: u64,
        (found, seen): (
            crate::context::compaction::Limit,
            Option<crate::context::compaction::LearnedPoint>,
        ),
    ) -> (crate::context::compaction::Limit, Option<usize>) {
        reading_limit(known, window, found, seen)
    }

    #[test]
    fn a_limit_learned_from_compactions_says_how_many_taught_it() {
        let (limit, from) = choose(
            true,
            WINDOW,
            lookup(160_000, "observed", Some((160_000, 3))),
        );
        assert_eq!(
            (limit.tokens, limit.source.as_str(), from),
            (160_000, "observed", Some(3))
        );
        // A configured limit beats what was seen; nothing is said to have taught it.
        let (limit, from) = choose(
            true,
            WINDOW,
            lookup(150_000, "front-matter", Some((160_000, 3))),
        );
        assert_eq!(
            (limit.tokens, limit.source.as_str(), from),
            (150_000, "front-matter", None)
        );
    }

    #[test]
    fn an_unknown_window_is_its_own_limit_whatever_the_lookup_found() {
        let (limit, from) = choose(
            false,
            WINDOW,
            lookup(160_000, "observed", Some((160_000, 3))),
        );
        assert_eq!(
            (limit.tokens, limit.source.as_str(), from),
            (WINDOW, "unknown", None)
        );
    }
}
