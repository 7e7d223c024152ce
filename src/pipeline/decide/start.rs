//! Session starts as decisions: `SessionStart` by its source (`start`), what a start gives
//! (`start_gift`: the prompt on a new link of the session chain, the prompt again on this
//! session's link, a note of what changed, what a compaction's summary left out), whether a
//! start's prompt waits for the first real prompt, which event gives it, and what a start does
//! to the session.

use crate::agents::policy::Policy;
use crate::agents::Agent;
use crate::domain::checkpoint::Checkpoint;
use crate::domain::session::Session;
use crate::handoff::chain::Chain;
use crate::pipeline::effects::{AfterRestore, Effect, Gift, GiftKind, Reach, StartGiven};
use crate::transcripts::usage::Usage;

use super::UsageRead;

/// What a start can give, as the read stage found it: this session's own checkpoint (else the
/// project's newest) and the session chain.
#[derive(Clone, Copy)]
pub struct Offer<'a> {
    pub checkpoint: &'a Checkpoint,
    pub chain: &'a Chain,
}

/// The project's settings a start's gift follows.
#[derive(Clone, Copy)]
pub struct GiftSettings<'a> {
    /// `give_back: false`: after a compaction the summary alone carries the work.
    pub give_back: bool,
    /// A resumed conversation is told what changed since it last ran.
    pub reminders: bool,
    /// When a compaction not noted may have begun, at the latest (now, less the slack a
    /// summarizer takes): handed in, as the clock is.
    pub since: &'a str,
}

/// What a `SessionStart` read, for its decision.
pub struct StartFacts<'a> {
    pub source: &'a str,
    pub agent: Agent,
    /// The state file has a checkpoint.
    pub has_checkpoint: bool,
    /// A start after a compaction that an earlier event already gave back (having noticed it
    /// in the transcript): late, and nothing is given again.
    pub late: bool,
    /// The compaction the transcript ends with (a `compact` start).
    pub boundary: Option<&'a Usage>,
    /// The restored conversation's size the agent states (Claude Code), as a usage reading
    /// (recorded only) with the limit found for it.
    pub stated: Option<UsageRead<'a>>,
    /// What could be given (None before the first checkpoint, and when nothing is given now:
    /// late or deferred, which the read stage asks [`start_offered`]).
    pub offer: Option<Offer<'a>>,
    pub settings: GiftSettings<'a>,
    /// The transcript the payload names.
    pub transcript: Option<String>,
    pub now: &'a str,
}

/// A session start decided.
pub struct StartDecided {
    pub session: Session,
    pub effects: Vec<Effect>,
}

/// Whether the read stage needs to read what a start could give: not for a late start, nor for
/// one that waits for the first real prompt (that prompt's event reads it).
pub fn start_offered(agent: Agent, has_checkpoint: bool, late: bool) -> bool {
    !late && !start_waits(agent.policy(), has_checkpoint)
}

/// `SessionStart` (pure), by its source: the stated size recorded (no stage fires), then, unless
/// the start is late or waits for the first real prompt (Gemini CLI puts a start's context in
/// front of the user's prompt, where a headless slash command would turn into text), what it
/// gives ([`start_gift`]); the session marked started (a clear or a compaction re-arms every
/// stage); the agent's stale records swept at a new or resumed session.
pub fn start(mut s: Session, f: StartFacts<'_>) -> StartDecided {
    let mut effects = Vec::new();
    let stated_tokens = f.stated.as_ref().and_then(|read| match read.facts.reading {
        super::Reading::Stated { tokens, .. } => *tokens,
        _ => None,
    });
    if let Some(read) = f.stated {
        let decided = read.decide(s);
        s = decided.session;
        effects.extend(decided.effects);
    }
    let deferred = start_waits(f.agent.policy(), f.has_checkpoint);
    let gift = if f.late {
        None
    } else if deferred {
        s.start_deferred(f.source);
        None
    } else {
        let policy = f.agent.policy();
        start_gift(&mut s, f.source, f.offer, &f.settings, policy)
    };
    session_started(
        &mut s,
        f.source,
        f.boundary,
        stated_tokens,
        f.agent.as_str(),
        f.transcript,
        f.now,
    );
    effects.push(Effect::GiveStart(StartGiven {
        source: f.source.to_string(),
        gift,
        deferred,
        mark: f.late.then_some("late"),
    }));
    if matches!(f.source, "startup" | "resume") && f.agent.spec().records_dir.is_some() {
        effects.push(Effect::SweepRecords);
    }
    StartDecided {
        session: s,
        effects,
    }
}

/// What a start gives (pure), by its source, from `offer` (None: nothing, before the first
/// checkpoint):
/// - `compact`, `clear`: the context was emptied; the prompt is given again on this agent
///   session's link of the chain (no handoff; a new link when it has none); after a compaction,
///   what its audited summary left out instead, or a note while the summary comes later;
/// - `resume` (and `fork`): the agent restored the whole conversation; only a note, and only
///   when the checkpoint changed since this agent session last saw it;
/// - `startup` (and any other): a new session; the prompt, when no link of the chain was
///   opened on this checkpoint yet.
///
/// A restore takes what the session held of its compaction (a waiting one keeps it until the
/// nonce is known: the apply stage moves it).
pub fn start_gift(
    s: &mut Session,
    source: &str,
    offer: Option<Offer<'_>>,
    settings: &GiftSettings<'_>,
    policy: &Policy,
) -> Option<Gift> {
    let offer = offer?;
    let c = offer.checkpoint;
    let kind = match source {
        "compact" if !settings.give_back => return None,
        "compact" | "clear" => match offer.chain.link_of(s.id()) {
            Some(link) => GiftKind::Restore {
                link: Box::new(link.clone()),
                after: after_restore(s, source, c, settings, policy),
            },
            None => GiftKind::Open { handoff: false },
        },
        "resume" | "fork" => {
            if !settings.reminders || s.seen_checkpoint() == Some(c.id.as_str()) {
                return None;
            }
            GiftKind::Note {
                seen: s.seen_checkpoint().map(str::to_string),
            }
        }
        _ => {
            if offer
                .chain
                .sessions
                .iter()
                .any(|l| l.record.checkpoint == c.id)
            {
                return None;
            }
            GiftKind::Open { handoff: true }
        }
    };
    Some(Gift {
        checkpoint: Box::new(c.clone()),
        kind,
    })
}

/// What a restore gives in place of the whole prompt: after a compaction, what the audited
/// summary left out of `c`; where the summary comes only after the start (Claude Code), a
/// note with the nonce until it does. The compaction is done with, unless it waits.
fn after_restore(
    s: &mut Session,
    source: &str,
    c: &Checkpoint,
    settings: &GiftSettings<'_>,
    policy: &Policy,
) -> AfterRestore {
    let a = s.after_compaction();
    let missing = a
        .filter(|a| a.checkpoint.as_deref() == Some(c.id.as_str()))
        .and_then(|a| a.missing.as_ref());
    let audited = a.is_some_and(|a| a.audited);
    if source == "compact" && missing.is_none() && !audited && policy.summary_follows_start() {
        return AfterRestore::Waiting {
            since: settings.since.to_string(),
        };
    }
    let a = s.compaction_done();
    if source != "compact" {
        return AfterRestore::Prompt;
    }
    match a
        .filter(|a| a.checkpoint.as_deref() == Some(c.id.as_str()))
        .and_then(|a| a.missing)
    {
        Some(missing) => AfterRestore::Missing(missing),
        None => AfterRestore::Prompt,
    }
}

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
    use crate::pipeline::effects::{AfterRestore, Effect, GiftKind, StartGiven};

    mod starts {
        //! `decide::start` and `decide::start_gift` fed constructed readings: a checkpoint, the
        //! session chain as read, the session's record; no file, no clock.

        use super::*;
        use crate::domain::checkpoint::Checkpoint;
        use crate::handoff::chain::{Chain, Link, SessionRecord};
        use crate::transcripts::compaction_summary::facts::Kind;
        use crate::transcripts::compaction_summary::Fact;

        const SINCE: &str = "2026-02-11T20:50:00Z";

        fn checkpoint(id: &str) -> Checkpoint {
            Checkpoint {
                id: id.into(),
                next_action: "write the parser".into(),
                ..Checkpoint::default()
            }
        }

        /// A chain with one link, opened on `checkpoint` by agent session `session`.
        fn chain(checkpoint: &Checkpoint, session: Option<&str>) -> Chain {
            let mut record = SessionRecord::placeholder(checkpoint);
            record.agent_session = session.map(str::to_string);
            let mut chain = Chain::default();
            chain.sessions.push(Link { record, ack: None });
            chain
        }

        fn settings() -> GiftSettings<'static> {
            GiftSettings {
                give_back: true,
                reminders: true,
                since: SINCE,
            }
        }

        fn facts<'a>(agent: Agent, source: &'a str, offer: Option<Offer<'a>>) -> StartFacts<'a> {
            StartFacts {
                source,
                agent,
                has_checkpoint: true,
                late: false,
                boundary: None,
                stated: None,
                offer,
                settings: settings(),
                transcript: Some("/t/s1.jsonl".into()),
                now: NOW,
            }
        }

        /// The start's `GiveStart` effect.
        fn given(d: &StartDecided) -> &StartGiven {
            d.effects
                .iter()
                .find_map(|e| match e {
                    Effect::GiveStart(g) => Some(g),
                    _ => None,
                })
                .expect("every start gives (or logs) once")
        }

        fn kind(d: &StartDecided) -> Option<&GiftKind> {
            given(d).gift.as_ref().map(|g| &g.kind)
        }

        #[test]
        fn a_new_session_opens_a_link_on_a_checkpoint_no_session_was_given() {
            let c = checkpoint("ck-1");
            let empty = Chain::default();
            let offer = Offer {
                checkpoint: &c,
                chain: &empty,
            };
            let d = start(
                Session::new("s1", WINDOW),
                facts(Agent::ClaudeCode, "startup", Some(offer)),
            );
            assert_eq!(kind(&d), Some(&GiftKind::Open { handoff: true }));
            assert_eq!(given(&d).gift.as_ref().unwrap().checkpoint.id, "ck-1");
            assert_eq!(d.session.agent(), Some("claude-code"));
            assert_eq!(d.session.transcript(), Some("/t/s1.jsonl"));
            assert_eq!(d.session.started_at(), Some(NOW));
            // Another session on the same checkpoint: it was given already, the start is logged.
            let given_to_s1 = chain(&c, Some("s1"));
            let offer = Offer {
                checkpoint: &c,
                chain: &given_to_s1,
            };
            let d = start(
                Session::new("s2", WINDOW),
                facts(Agent::ClaudeCode, "startup", Some(offer)),
            );
            assert_eq!(kind(&d), None);
            assert_eq!(given(&d).source, "startup");
        }

        #[test]
        fn before_the_first_checkpoint_a_start_gives_nothing_and_is_still_logged() {
            let mut f = facts(Agent::ClaudeCode, "startup", None);
            f.has_checkpoint = false;
            let d = start(Session::new("s1", WINDOW), f);
            let g = given(&d);
            assert_eq!((g.gift.is_none(), g.deferred, g.mark), (true, false, None));
        }

        #[test]
        fn a_resume_is_told_what_changed_only_when_the_checkpoint_is_new_to_it() {
            let c = checkpoint("ck-2");
            let ch = chain(&c, Some("s1"));
            let offer = Offer {
                checkpoint: &c,
                chain: &ch,
            };
            let mut s = Session::new("s1", WINDOW);
            s.checkpoint_seen("ck-1");
            let d = start(s.clone(), facts(Agent::ClaudeCode, "resume", Some(offer)));
            assert_eq!(
                kind(&d),
                Some(&GiftKind::Note {
                    seen: Some("ck-1".into())
                })
            );
            s.checkpoint_seen("ck-2");
            let d = start(s.clone(), facts(Agent::ClaudeCode, "resume", Some(offer)));
            assert_eq!(kind(&d), None, "nothing new");
            s.checkpoint_seen("ck-1");
            let mut f = facts(Agent::ClaudeCode, "fork", Some(offer));
            f.settings.reminders = false;
            assert_eq!(kind(&start(s, f)), None, "reminders off");
        }

        #[test]
        fn a_clear_restores_the_prompt_on_the_sessions_link_or_opens_one_without_a_handoff() {
            let c = checkpoint("ck-1");
            let linked = chain(&c, Some("s1"));
            let mut s = Harness::new(160_000);
            s.at(96);
            let offer = Offer {
                checkpoint: &c,
                chain: &linked,
            };
            let d = start(s.s.clone(), facts(Agent::ClaudeCode, "clear", Some(offer)));
            let Some(GiftKind::Restore { link, after }) = kind(&d) else {
                panic!("{:?}", d.effects);
            };
            assert_eq!(link.record.agent_session.as_deref(), Some("s1"));
            assert_eq!(after, &AfterRestore::Prompt);
            assert!(d.session.fired().is_empty(), "every stage re-armed");
            let unlinked = chain(&c, Some("another"));
            let offer = Offer {
                checkpoint: &c,
                chain: &unlinked,
            };
            let d = start(s.s, facts(Agent::ClaudeCode, "clear", Some(offer)));
            assert_eq!(kind(&d), Some(&GiftKind::Open { handoff: false }));
        }

        /// A session whose compaction of `checkpoint` was audited: `missing` left out.
        fn audited(checkpoint: &str, missing: Option<Vec<String>>) -> Session {
            let mut s = at_tokens(150_000, 160_000);
            s.compaction_began(NOW, Some("auto".into()), checkpoint);
            let mut note = audit_note(checkpoint);
            note.missing = missing.clone().unwrap_or_default();
            let facts = missing.map(|m| {
                m.into_iter()
                    .map(|text| Fact {
                        kind: Kind::NextAction,
                        text,
                        detail: None,
                        at: None,
                    })
                    .collect()
            });
            s.summary_audited(checkpoint, facts, None, note);
            s
        }

        #[test]
        fn after_a_compaction_what_the_summary_left_out_is_given_in_place_of_the_prompt() {
            let c = checkpoint("ck-1");
            let ch = chain(&c, Some("s1"));
            let offer = Offer {
                checkpoint: &c,
                chain: &ch,
            };
            let s = audited("ck-1", Some(vec!["write the parser".into()]));
            let d = start(s, facts(Agent::Codex, "compact", Some(offer)));
            let Some(GiftKind::Restore {
                after: AfterRestore::Missing(missing),
                ..
            }) = kind(&d)
            else {
                panic!("{:?}", d.effects);
            };
            assert_eq!(missing[0].text, "write the parser");
            assert!(d.session.after_compaction().is_none(), "done with");
            // The summary kept everything: the prompt, not a list of nothing.
            let s = audited("ck-1", None);
            let d = start(s, facts(Agent::Codex, "compact", Some(offer)));
            assert!(matches!(
                kind(&d),
                Some(GiftKind::Restore {
                    after: AfterRestore::Prompt,
                    ..
                })
            ));
        }

        #[test]
        fn where_the_summary_comes_after_the_start_a_note_waits_with_the_compaction_kept() {
            let c = checkpoint("ck-1");
            let ch = chain(&c, Some("s1"));
            let offer = Offer {
                checkpoint: &c,
                chain: &ch,
            };
            let mut s = at_tokens(150_000, 160_000);
            s.compaction_began(NOW, Some("auto".into()), "ck-1");
            let d = start(s, facts(Agent::ClaudeCode, "compact", Some(offer)));
            let Some(GiftKind::Restore { after, .. }) = kind(&d) else {
                panic!("{:?}", d.effects);
            };
            assert_eq!(
                after,
                &AfterRestore::Waiting {
                    since: SINCE.into()
                }
            );
            // Kept for the apply stage, which moves it once the restore's nonce is known.
            assert_eq!(
                d.session
                    .after_compaction()
                    .and_then(|a| a.trigger.as_deref()),
                Some("auto")
            );
            // `give_back: false`: the summary alone carries the work.
            let mut f = facts(Agent::ClaudeCode, "compact", Some(offer));
            f.settings.give_back = false;
            assert_eq!(kind(&start(at_tokens(1, 160_000), f)), None);
        }

        #[test]
        fn a_start_the_agent_would_garble_waits_for_the_first_prompt_and_a_late_one_gives_nothing()
        {
            let c = checkpoint("ck-1");
            let empty = Chain::default();
            let offer = Offer {
                checkpoint: &c,
                chain: &empty,
            };
            assert!(!start_offered(Agent::Gemini, true, false));
            let d = start(
                Session::new("s1", WINDOW),
                facts(Agent::Gemini, "startup", None),
            );
            let g = given(&d);
            assert!(g.deferred && g.gift.is_none());
            let mut s = d.session;
            assert_eq!(s.waiting_start_given().as_deref(), Some("startup"));
            // What it gives then, at that prompt.
            let policy = traits(Agent::Gemini);
            let gift = start_gift(&mut s, "startup", Some(offer), &settings(), &policy);
            assert_eq!(gift.map(|g| g.kind), Some(GiftKind::Open { handoff: true }));
            assert!(!start_offered(Agent::ClaudeCode, true, true));
            let mut f = facts(Agent::ClaudeCode, "compact", None);
            f.late = true;
            let d = start(Session::new("s1", WINDOW), f);
            assert_eq!(
                (given(&d).mark, given(&d).gift.is_none()),
                (Some("late"), true)
            );
        }

        #[test]
        fn a_stated_size_is_recorded_without_firing_a_stage_and_kept_as_the_restored_size() {
            let config = crate::domain::config::Config::from_front(&Default::default());
            let reading = Reading::Stated {
                agent: Agent::ClaudeCode,
                tokens: Some(150_000),
                model: None,
                window: None,
            };
            let mut f = facts(Agent::ClaudeCode, "compact", None);
            f.stated = Some(UsageRead::new(
                usage_facts(&reading, &config, Reach::RecordOnly),
                found(160_000),
            ));
            let d = start(at_tokens(10_000, 160_000), f);
            assert_eq!(d.session.tokens(), Some(150_000));
            assert_eq!(d.session.restored_at(), Some(NOW));
            assert!(d.session.fired().is_empty(), "recorded only");
            assert!(!d
                .effects
                .iter()
                .any(|e| matches!(e, Effect::StageCheckpoint(_))));
        }

        #[test]
        fn the_agents_stale_records_are_swept_at_a_new_or_resumed_session_only() {
            let sweeps = |agent, source| {
                start(Session::new("s1", WINDOW), facts(agent, source, None))
                    .effects
                    .contains(&Effect::SweepRecords)
            };
            assert!(sweeps(Agent::OpenCode, "startup"));
            assert!(sweeps(Agent::OpenCode, "resume"));
            assert!(!sweeps(Agent::OpenCode, "compact"));
            assert!(
                !sweeps(Agent::ClaudeCode, "startup"),
                "keeps no records of its own"
            );
        }
    }

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
