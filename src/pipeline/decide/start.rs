//! Session starts: whether a start's prompt waits for the first real prompt, which event
//! gives it, and what a start does to the session.

use crate::agents::policy::Policy;
use crate::domain::session::Session;
use crate::pipeline::effects::Reach;
use crate::transcripts::usage::Usage;

/// Whether a session start's prompt waits for the first real prompt: the agent would put the
/// start's context in front of the user's first prompt (turning a headless slash command into
/// text), and there is a checkpoint to give.
pub fn start_waits(policy: &Policy, has_checkpoint: bool) -> bool {
    policy.defers_start_context() && has_checkpoint
}

/// Whether this event gives a start that waits (one deferred, or left by a compaction seen
/// only as the drop in usage): its reply reaches the model now, and it is not a slash command
/// (`prompt`, when the event is a prompt).
pub fn gives_waiting_start(policy: &Policy, reach: Reach, prompt: Option<&str>) -> bool {
    let slash_command = prompt.is_some_and(|p| p.trim_start().starts_with('/'));
    reach == Reach::Now && policy.start_may_wait_for_prompt() && !slash_command
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
        s.context_cleared(now);
    }
    if source == "compact" {
        if let Some(usage) = boundary {
            crate::pipeline::learning::note_compaction(s, usage, None);
        }
        s.context_emptied(now);
        if let Some(t) = stated {
            s.restored(t, now);
        }
    }
    s.started(now, agent, transcript);
}

#[cfg(test)]
mod tests {
    use crate::pipeline::decide::test_support::*;

    #[test]
    fn a_clear_rearms_every_stage_and_leaves_a_new_session() {
        let mut h = Harness::new(160_000);
        h.at(99);
        session_started(&mut h.s, "clear", None, None, "claude-code", None, NOW);
        assert_eq!(h.s.phase(), Phase::New);
        assert!(h.s.fired().is_empty() && !h.s.handoff_due());
        assert_eq!(h.s.compacted_at(), None, "a clear is not a compaction");
        assert_eq!(h.at(81).said(), ["stage-80"]);
    }

    #[test]
    fn a_start_after_compaction_keeps_the_restored_size_through_the_compactions_end() {
        let mut h = Harness::new(160_000);
        h.at(96);
        session_started(
            &mut h.s,
            "compact",
            None,
            Some(30_000),
            "claude-code",
            None,
            NOW,
        );
        assert_eq!(h.s.tokens(), Some(30_000));
        assert!(h.s.fired().is_empty(), "every stage re-armed");
        compaction_ended(&mut h.s, None, Some("auto"), NOW);
        assert_eq!(h.s.tokens(), Some(30_000), "the restored size stands");
        assert_eq!(h.s.restored_at(), None);
        assert_eq!(h.s.phase(), Phase::Tracking);
    }

    #[test]
    fn a_start_waits_for_the_first_prompt_only_where_the_agent_would_garble_it() {
        assert!(start_waits(&traits(Agent::Gemini), true));
        assert!(
            !start_waits(&traits(Agent::Gemini), false),
            "nothing to give yet"
        );
        assert!(!start_waits(&traits(Agent::ClaudeCode), true));
        assert!(!start_waits(&traits(Agent::Codex), true));
    }

    #[test]
    fn a_waiting_start_is_given_with_a_real_prompt_not_a_slash_command_nor_a_stop() {
        let gemini = traits(Agent::Gemini);
        assert!(gives_waiting_start(
            &gemini,
            Reach::Now,
            Some("fix the parser")
        ));
        assert!(
            gives_waiting_start(&gemini, Reach::Now, None),
            "a tool event"
        );
        assert!(!gives_waiting_start(
            &gemini,
            Reach::Now,
            Some("  /compress")
        ));
        assert!(!gives_waiting_start(&gemini, Reach::Later, None));
        // Copilot CLI shows a compaction only as the drop: its start waits the same way.
        assert!(gives_waiting_start(
            &traits(Agent::Copilot),
            Reach::Now,
            Some("go on")
        ));
        // Claude Code starts again with an event of its own: nothing waits.
        assert!(!gives_waiting_start(
            &traits(Agent::ClaudeCode),
            Reach::Now,
            Some("go on")
        ));
    }

    #[test]
    fn a_start_records_the_agent_and_its_transcript() {
        let mut s = Session::new("s1", WINDOW);
        session_started(
            &mut s,
            "startup",
            None,
            None,
            "codex",
            Some("/t/r.jsonl".into()),
            NOW,
        );
        assert_eq!(s.agent(), Some("codex"));
        assert_eq!(s.transcript(), Some("/t/r.jsonl"));
        assert_eq!(s.started_at(), Some(NOW));
        // A start that names no transcript keeps the one known.
        session_started(&mut s, "resume", None, None, "codex", None, NOW);
        assert_eq!(s.transcript(), Some("/t/r.jsonl"));
    }

    #[test]
    fn the_phases_follow_a_compaction_from_its_start_to_the_give_back() {
        let mut s = at_tokens(150_000, 160_000);
        assert_eq!(s.phase(), Phase::Tracking);
        s.compaction_began(NOW, None, "ck-1");
        assert_eq!(s.phase(), Phase::Compacting);
        let compaction = s.compaction_done();
        s.restore_waits(compaction, "ck-1", "nonce", || NOW.into());
        assert_eq!(s.phase(), Phase::RestoredWaiting);
        s.summary_audited("ck-1", Some(Vec::new()), None, audit_note("ck-1"));
        s.compaction_done();
        assert_eq!(s.phase(), Phase::Tracking);
        assert_eq!(Phase::RestoredWaiting.name(), "restored-waiting");
    }

    #[test]
    fn a_deferred_start_waits_until_it_is_given_once() {
        let mut s = at_tokens(10_000, 160_000);
        s.start_deferred("startup");
        assert_eq!(s.phase(), Phase::StartPending);
        assert_eq!(s.waiting_start_given().as_deref(), Some("startup"));
        assert_eq!(s.waiting_start_given(), None, "once");
        assert_eq!(s.phase(), Phase::Tracking);
    }

    #[test]
    fn what_an_agent_session_saw_is_remembered() {
        let mut s = Session::new("s1", WINDOW);
        s.checkpoint_seen("ck-3");
        s.transcript_never_came();
        s.messages_counted(12);
        s.touched(NOW);
        assert_eq!(
            (
                s.seen_checkpoint(),
                s.transcript_awaited(),
                s.messages(),
                s.updated_at()
            ),
            (Some("ck-3"), true, Some(12), NOW)
        );
    }
}
