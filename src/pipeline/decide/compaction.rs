//! Compactions: one seen as the figure's drop, a pre-compaction event that compacts nothing,
//! the end of one, and what a noted one teaches.

use serde_json::json;

use crate::agents::policy::Policy;
use crate::agents::Agent;
use crate::domain::session::Session;
use crate::pipeline::effects::{LearnPoint, LogLine};
use crate::transcripts::usage::Usage;

/// What judging a noted compaction asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Judged {
    /// It teaches nothing: a `compaction_not_learned` line.
    NotLearned(LogLine),
    /// It teaches where the agent compacts: the point to remember.
    Learned(LearnPoint),
}

/// Judges the compaction noted on the session at the first reading after it (`compacted`:
/// this reading is still at it); marks it judged.
pub fn compaction_judged(s: &mut Session, agent: Agent, compacted: bool) -> Option<Judged> {
    use crate::pipeline::learning::Verdict;
    Some(
        match crate::pipeline::learning::judge(s, agent, compacted)? {
            Verdict::NotLearned(fields) => {
                Judged::NotLearned(LogLine::new("compaction_not_learned", fields))
            }
            Verdict::Learned {
                model,
                tokens,
                fields,
            } => Judged::Learned(LearnPoint {
                agent: agent.as_str(),
                model,
                tokens,
                log: LogLine::new("compaction_learned", fields),
            }),
        },
    )
}

/// The token count dropped from at least 80 % of the compaction point to less than half of what it
/// was: the conversation was compressed.
pub fn compressed(before: &Session, after: &Session) -> bool {
    match (before.tokens(), after.tokens()) {
        (Some(b), Some(a)) => b.saturating_mul(5) >= before.limit().saturating_mul(4) && a * 2 < b,
        _ => false,
    }
}

/// Whether this reading shows a compaction the agent fires no event for: its usage dropped
/// (and, where the agent records compactions in its transcript, the reading says one was).
pub fn compaction_by_drop(
    policy: &Policy,
    before: &Session,
    after: &Session,
    recorded_in_transcript: bool,
) -> bool {
    // An agent that fires its pre-compaction event before every model call compresses only
    // there: after one that found the token count below the limit, a drop is no compression.
    if policy.pre_compact_before_every_call() && before.below_point_at().is_some() {
        return false;
    }
    policy.compaction_detected(compressed(before, after), recorded_in_transcript)
}

/// A compaction seen as a drop in usage, noted on the session.
#[derive(Debug, Clone, PartialEq)]
pub struct DropNoted {
    /// Where the agent compacted on its own, to learn: its last token count before the drop, when
    /// that was past the point it compacts at (from below it, the user asked) and its
    /// transcript states no token count of its own.
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
    policy: &Policy,
    agent: Agent,
) -> Option<DropNoted> {
    if before.tokens().is_some() && s.drop_noted_from() == before.tokens() {
        return None;
    }
    s.drop_noted(before.tokens());
    let past_point = before
        .tokens()
        .is_some_and(|t| t.saturating_mul(10) >= before.limit().saturating_mul(9));
    let learn_at = (policy.learns_point_from_last_reading() && past_point)
        .then_some(before.tokens())
        .flatten();
    let log = LogLine::new(
        "compaction",
        json!({
            "session": s.id(), "agent": agent, "trigger": "detected",
            "before": before.tokens(), "after": after.tokens(),
        }),
    );
    Some(DropNoted { learn_at, log })
}

/// For an agent whose pre-compaction event fires before every model call: why this one will
/// compact nothing, if it will not (`name`: the agent's display name). It compacts only past
/// its limit, measured by the last model call's token count (`tokens`), so not before a session's
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
        s.below_compaction_point(tokens);
        Some(format!(
            "below {name}'s compression point ({tokens} of {limit} tokens)"
        ))
    } else if let Some(at) = s.pre_compact_at() {
        Some(format!(
            "{name} compressed nothing after the pre-compact checkpoint at {at} tokens (now {tokens} of {limit})"
        ))
    } else {
        s.pre_compact_checkpoint_at(tokens);
        None
    }
}

/// A compaction's end (the agent's post-compaction event): the compaction the transcript ends
/// with is noted; the old token count is gone with the context, unless the restored session's start
/// already stated the new one.
pub fn compaction_ended(
    s: &mut Session,
    boundary: Option<&Usage>,
    trigger: Option<&str>,
    now: &str,
) {
    if let Some(usage) = boundary {
        crate::pipeline::learning::note_compaction(s, usage, trigger);
    }
    s.compaction_ended(now);
}

#[cfg(test)]
mod tests {
    use crate::pipeline::decide::test_support::*;

    #[test]
    fn a_drop_from_near_the_limit_is_a_compaction_only_where_the_agent_shows_it_so() {
        let before = at_tokens(150_000, 160_000);
        let after = at_tokens(30_000, 160_000);
        assert!(compaction_by_drop(
            &traits(Agent::Gemini),
            &before,
            &after,
            false
        ));
        // Claude Code says so in events of its own: a drop is not read as one.
        assert!(!compaction_by_drop(
            &traits(Agent::ClaudeCode),
            &before,
            &after,
            false
        ));
        // Copilot CLI's drop counts only with the compaction in its transcript.
        assert!(!compaction_by_drop(
            &traits(Agent::Copilot),
            &before,
            &after,
            false
        ));
        assert!(compaction_by_drop(
            &traits(Agent::Copilot),
            &before,
            &after,
            true
        ));
    }

    /// What the end-to-end suite saw as two audits for one compression: a resumed Gemini run
    /// reported a token count far below the conversation's last one. Its pre-compaction event had
    /// found that token count below the limit, so Gemini compressed nothing: the drop is no
    /// compression, and no audit follows.
    #[test]
    fn a_drop_after_a_pre_compaction_event_below_the_limit_is_no_compaction() {
        let gemini = traits(Agent::Gemini);
        let mut before = at_tokens(970_500, 996_147);
        session_started(&mut before, "resume", None, None, "gemini", None, NOW);
        assert!(compacts_nothing(&mut before, Some(970_500), "Gemini CLI").is_some());
        assert_eq!(before.below_point_at(), Some(970_500));
        let after = at_tokens(2_000, 996_147);
        assert!(!compaction_by_drop(&gemini, &before, &after, false));
        // An agent whose pre-compaction event is not before every call: the drop stands.
        assert!(compaction_by_drop(
            &traits(Agent::Copilot),
            &before,
            &after,
            true
        ));
        // Past the limit the event begins a compaction: the drop after it is one.
        assert_eq!(
            compacts_nothing(&mut before, Some(996_200), "Gemini CLI"),
            None
        );
        before.compaction_began(NOW, Some("auto".into()), "ck-1");
        assert_eq!(before.below_point_at(), None);
        assert!(compaction_by_drop(&gemini, &before, &after, false));
    }

    #[test]
    fn a_small_drop_or_one_from_far_below_the_limit_is_not_a_compaction() {
        let gemini = traits(Agent::Gemini);
        let near = at_tokens(150_000, 160_000);
        assert!(!compaction_by_drop(
            &gemini,
            &near,
            &at_tokens(90_000, 160_000),
            false
        ));
        let far = at_tokens(100_000, 160_000);
        assert!(!compaction_by_drop(
            &gemini,
            &far,
            &at_tokens(10_000, 160_000),
            false
        ));
    }

    #[test]
    fn a_noted_drop_gives_the_start_again_and_is_logged_as_detected() {
        let before = at_tokens(150_000, 160_000);
        let after = at_tokens(30_000, 160_000);
        let mut s = after.clone();
        s.pre_compact_checkpoint_at(150_000);
        let noted = note_drop(
            &mut s,
            &before,
            &after,
            &traits(Agent::Gemini),
            Agent::Gemini,
        )
        .unwrap();
        assert_eq!(s.phase(), Phase::StartPending);
        assert_eq!(s.pending_start(), Some("compact"));
        assert_eq!(s.pre_compact_at(), None);
        assert_eq!(noted.log.event, "compaction");
        assert_eq!(noted.log.fields["trigger"], "detected");
        assert_eq!(noted.log.fields["agent"], "gemini");
        assert_eq!(
            (&noted.log.fields["before"], &noted.log.fields["after"]),
            (&serde_json::json!(150_000), &serde_json::json!(30_000))
        );
    }

    #[test]
    fn the_same_drop_applied_late_is_not_a_second_compaction() {
        let before = at_tokens(150_000, 160_000);
        let after = at_tokens(30_000, 160_000);
        let gemini = traits(Agent::Gemini);
        let mut s = after.clone();
        assert!(note_drop(&mut s, &before, &after, &gemini, Agent::Gemini).is_some());
        s.waiting_start_given();
        assert!(note_drop(&mut s, &before, &after, &gemini, Agent::Gemini).is_none());
        assert_eq!(s.pending_start(), None);
    }

    #[test]
    fn where_an_agent_compacts_is_learned_from_its_own_token_count_past_its_point_only() {
        let after = at_tokens(30_000, 160_000);
        let gemini = traits(Agent::Gemini);
        let past = at_tokens(150_000, 160_000);
        let noted = note_drop(&mut after.clone(), &past, &after, &gemini, Agent::Gemini);
        assert_eq!(noted.unwrap().learn_at, Some(150_000));
        // From below its point the user asked (`/compress`): nothing to learn.
        let below = at_tokens(135_000, 160_000);
        let noted = note_drop(&mut after.clone(), &below, &after, &gemini, Agent::Gemini);
        assert_eq!(noted.unwrap().learn_at, None);
        // An agent whose transcript states its own token count is learned from that instead.
        let copilot = traits(Agent::Copilot);
        let noted = note_drop(&mut after.clone(), &past, &after, &copilot, Agent::Copilot);
        assert_eq!(noted.unwrap().learn_at, None);
    }

    #[test]
    fn before_the_first_model_call_a_pre_compaction_compacts_nothing() {
        let mut s = Session::new("s1", WINDOW);
        let why = compacts_nothing(&mut s, None, "Gemini CLI").unwrap();
        assert_eq!(
            why,
            "before Gemini CLI's first model call: no figure yet, nothing to compress"
        );
    }

    #[test]
    fn below_the_limit_a_pre_compaction_compacts_nothing_and_forgets_the_last_one() {
        let mut s = at_tokens(100_000, 160_000);
        s.pre_compact_checkpoint_at(170_000);
        let why = compacts_nothing(&mut s, Some(100_000), "Gemini CLI").unwrap();
        assert_eq!(
            why,
            "below Gemini CLI's compression point (100000 of 160000 tokens)"
        );
        assert_eq!(s.pre_compact_at(), None);
    }

    #[test]
    fn past_the_limit_the_first_pre_compaction_gets_a_checkpoint_and_a_second_does_not() {
        let mut s = at_tokens(165_000, 160_000);
        assert_eq!(compacts_nothing(&mut s, Some(165_000), "Gemini CLI"), None);
        assert_eq!(s.pre_compact_at(), Some(165_000));
        let why = compacts_nothing(&mut s, Some(168_000), "Gemini CLI").unwrap();
        assert!(
            why.starts_with(
                "Gemini CLI compressed nothing after the pre-compact checkpoint at 165000 tokens"
            ),
            "{why}"
        );
    }

    #[test]
    fn a_new_process_of_the_agent_forgets_whether_it_compacted() {
        let mut s = at_tokens(165_000, 160_000);
        s.pre_compact_checkpoint_at(165_000);
        session_started(&mut s, "resume", None, None, "gemini", None, NOW);
        assert_eq!(s.pre_compact_at(), None);
        assert_eq!(compacts_nothing(&mut s, Some(166_000), "Gemini CLI"), None);
    }

    #[test]
    fn a_compactions_end_with_no_restored_size_forgets_the_token_count() {
        let mut h = Harness::new(160_000);
        h.at(92);
        compaction_ended(&mut h.s, None, Some("manual"), NOW);
        assert_eq!(h.s.tokens(), None);
        assert_eq!(h.s.compacted_at(), Some(NOW));
        assert_eq!(h.s.phase(), Phase::Emptied);
        assert!(h.s.fired().is_empty());
    }

    #[test]
    fn a_compaction_is_noted_from_the_agents_own_token_count_not_the_last_reading() {
        let mut h = Harness::new(160_000);
        h.at(90);
        session_started(
            &mut h.s,
            "compact",
            Some(&boundary("auto", 155_321)),
            None,
            "claude-code",
            None,
            NOW,
        );
        let seen = h.s.compaction_seen().cloned().unwrap();
        assert_eq!(seen.pre_tokens, 155_321);
        assert_eq!(seen.trigger.as_deref(), Some("auto"));
        assert!(!seen.judged, "judged at the next reading");
    }

    #[test]
    fn a_compaction_is_noted_once_however_many_events_read_it() {
        let mut s = Session::new("s1", WINDOW);
        compaction_ended(&mut s, Some(&boundary("auto", 150_000)), None, NOW);
        s.compaction_judged();
        compaction_ended(&mut s, Some(&boundary("auto", 150_000)), None, NOW);
        assert!(s.compaction_seen().unwrap().judged, "not noted afresh");
    }

    #[test]
    fn an_idle_or_manual_compaction_keeps_the_trigger_its_event_gave() {
        let mut s = Session::new("s1", WINDOW);
        compaction_ended(&mut s, Some(&boundary("auto", 150_000)), Some("idle"), NOW);
        assert_eq!(
            s.compaction_seen().unwrap().trigger.as_deref(),
            Some("idle"),
            "the agent's plain `auto` gives way to the hook's word"
        );
        let mut s = Session::new("s1", WINDOW);
        compaction_ended(&mut s, Some(&boundary("manual", 90_000)), Some("auto"), NOW);
        assert_eq!(
            s.compaction_seen().unwrap().trigger.as_deref(),
            Some("manual")
        );
    }

    #[test]
    fn a_compaction_judged_at_the_next_reading_asks_to_remember_its_point_once() {
        let mut s = Session::new("s1", WINDOW);
        s.usage_read(
            Some(150_000),
            WINDOW,
            "claude-code",
            None,
            Some("claude-opus-4-6".into()),
        );
        compaction_ended(&mut s, Some(&boundary("auto", 155_321)), None, NOW);
        assert_eq!(
            compaction_judged(&mut s, Agent::ClaudeCode, true),
            None,
            "still at the compaction"
        );
        s.usage_read(Some(30_000), WINDOW, "claude-code", None, None);
        let Some(Judged::Learned(point)) = compaction_judged(&mut s, Agent::ClaudeCode, false)
        else {
            panic!("an automatic compaction on the same model teaches its point");
        };
        assert_eq!(
            (point.agent, point.model.as_deref(), point.tokens),
            ("claude-code", Some("claude-opus-4-6"), 155_321)
        );
        assert_eq!(point.log.event, "compaction_learned");
        assert_eq!(point.log.fields["tokens"], 155_321);
        assert_eq!(
            compaction_judged(&mut s, Agent::ClaudeCode, false),
            None,
            "once"
        );
    }

    #[test]
    fn a_manual_compaction_is_judged_as_teaching_nothing() {
        let mut s = Session::new("s1", WINDOW);
        compaction_ended(&mut s, Some(&boundary("manual", 90_000)), None, NOW);
        s.usage_read(
            Some(20_000),
            WINDOW,
            "claude-code",
            None,
            Some("claude-opus-4-6".into()),
        );
        let Some(Judged::NotLearned(line)) = compaction_judged(&mut s, Agent::ClaudeCode, false)
        else {
            panic!("a manual compaction teaches nothing");
        };
        assert_eq!(line.event, "compaction_not_learned");
        assert_eq!(line.fields["why"], "manual");
    }

    #[test]
    fn a_summary_audited_is_kept_for_status_and_the_compaction_is_no_longer_under_way() {
        let mut s = at_tokens(150_000, 160_000);
        s.compaction_trigger_heard(Some("detected".into()));
        assert_eq!(s.phase(), Phase::Compacting);
        s.summary_audited("ck-2", Some(Vec::new()), None, audit_note("ck-2"));
        let a = s.after_compaction().unwrap();
        assert_eq!(
            (a.trigger.as_deref(), a.checkpoint.as_deref(), a.audited),
            (Some("detected"), Some("ck-2"), true)
        );
        assert_eq!(s.last_audit().unwrap().checkpoint, "ck-2");
        assert_eq!(s.phase(), Phase::Tracking);
        assert!(s.compaction_done().is_some());
        assert_eq!(s.after_compaction(), None);
    }
}
