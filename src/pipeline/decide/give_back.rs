//! What is given back after a compaction at the first prompt or tool event once a start gave
//! only a note (`Effect::GiveBack`), decided from what was read before: the checkpoint the
//! compaction began with, the summary read now when it was not audited yet, what the session
//! did since (to drop what newer evidence replaced) and the session chain. Also the audit
//! itself, which the post-compaction event decides the same way.

use serde_json::json;

use crate::agents::Agent;
use crate::domain::checkpoint::Checkpoint;
use crate::domain::session::Session;
use crate::handoff::chain::{Chain, SessionRecord};
use crate::pipeline::effects::LogLine;
use crate::transcripts::activity::Observed;
use crate::transcripts::compaction_summary::{self, AuditNote, Fact, Found};

/// What the give-back's read stage found, under the event's lock.
pub struct GiveBackOffer<'a> {
    /// The checkpoint the compaction began with (this session's, even when another session
    /// wrote a newer one), else this session's own; None before the first checkpoint.
    pub own: Option<&'a Checkpoint>,
    /// The summary, read (before the lock) only while the compaction was not audited.
    pub found: Option<&'a Found>,
    /// What the session did, as the transcript shows it now; None when it cannot be read.
    pub observed: Option<&'a Observed>,
    /// The session chain, whose link for this session a whole prompt is rendered on; read
    /// only when the prompt is what may be given (no facts audited, none audited now).
    pub chain: Option<&'a Chain>,
    pub agent: Agent,
    pub now: &'a str,
}

/// What is given back.
#[derive(Debug, Clone, PartialEq)]
pub enum Back {
    /// What the summary left out of checkpoint `checkpoint` and is still true.
    Missing {
        checkpoint: String,
        facts: Vec<Fact>,
    },
    /// The whole resume prompt of `checkpoint` (the summary could not be read), on this
    /// session's link of the chain when it has one.
    Prompt {
        checkpoint: Box<Checkpoint>,
        link: Option<Box<SessionRecord>>,
    },
}

/// The give-back decided: the session then done with the compaction once `back` is given.
#[derive(Debug, Default, PartialEq)]
pub struct GiveBackDecided {
    /// None: nothing waited, the summary kept everything, or there is no checkpoint.
    pub back: Option<Back>,
    /// The `compaction_audit` line, when the compaction was audited now.
    pub audit: Option<LogLine>,
    /// The summary audited now, whose remains go into the session's index.
    pub summary: Option<String>,
}

/// Decides the give-back on `s` (the compaction's record waiting for it): the audit when it
/// was not done yet, what is still true of what the summary left out, else the whole prompt.
/// The session stays waiting until the apply stage gave it (`Session::compaction_done`).
pub fn give_back(s: &mut Session, offer: &GiveBackOffer<'_>) -> GiveBackDecided {
    let mut d = GiveBackDecided::default();
    let Some(audited) = s
        .after_compaction()
        .filter(|a| a.waiting.is_some())
        .map(|a| a.audited)
    else {
        return d;
    };
    if let (Some(found), false, Some(c)) = (offer.found, audited, offer.own) {
        d.audit = Some(audited_now(s, c, found, offer.agent, offer.now));
        if let Found::Text(text) = found {
            d.summary = Some(text.clone());
        }
    }
    let a = s.after_compaction().cloned().unwrap_or_default();
    let id = a
        .checkpoint
        .clone()
        .or_else(|| offer.own.map(|c| c.id.clone()))
        .unwrap_or_default();
    d.back = match a.missing {
        Some(missing) => {
            let facts = still_true(s, &missing, offer.observed);
            (!facts.is_empty()).then_some(Back::Missing {
                checkpoint: id,
                facts,
            })
        }
        None => offer.own.map(|c| Back::Prompt {
            checkpoint: Box::new(c.clone()),
            link: offer
                .chain
                .and_then(|chain| chain.link_of(s.id()))
                .map(|l| Box::new(l.record.clone())),
        }),
    };
    d
}

/// The summary `found` compared with checkpoint `c`: what it left out kept on the session and
/// its `compaction_audit` line.
pub fn audited_now(
    s: &mut Session,
    c: &Checkpoint,
    found: &Found,
    agent: Agent,
    now: &str,
) -> LogLine {
    let audit = match found {
        Found::Text(text) => Some(compaction_summary::audit(&c.id, &c.facts(), text)),
        _ => None,
    };
    let names = |facts: &[Fact]| -> Vec<String> { facts.iter().map(|f| f.text.clone()).collect() };
    let (kept, missing) = audit
        .as_ref()
        .map(|a| (names(&a.kept), names(&a.missing)))
        .unwrap_or_default();
    let trigger = s.after_compaction().and_then(|a| a.trigger.clone());
    let unreadable = found.unreadable().map(str::to_string);
    let line = LogLine::new(
        "compaction_audit",
        json!({
            "session": s.id(), "agent": agent, "trigger": trigger,
            "checkpoint": c.id, "kept": kept, "missing": missing,
            "summary_chars": audit.as_ref().map(|x| x.summary_chars),
            "unreadable": unreadable,
        }),
    );
    let note = AuditNote {
        at: now.to_string(),
        agent: Some(agent.to_string()),
        trigger,
        checkpoint: c.id.clone(),
        kept: kept.len(),
        missing,
        summary_chars: audit.as_ref().map(|x| x.summary_chars),
        unreadable: unreadable.clone(),
        replaced: Vec::new(),
    };
    s.summary_audited(&c.id, audit.map(|x| x.missing), unreadable, note);
    line
}

/// What the summary left out that is still true `now`: newer evidence (a passing run, a
/// completed item, a newer next step) replaced the rest, which the audit `status` shows counts
/// as replaced. All of it when what the session did cannot be read.
pub fn still_true(s: &mut Session, missing: &[Fact], now: Option<&Observed>) -> Vec<Fact> {
    let Some(now) = now else {
        return missing.to_vec();
    };
    let true_now = compaction_summary::facts::still_true(missing, now);
    let replaced: Vec<String> = missing
        .iter()
        .filter(|f| !true_now.contains(f))
        .map(|f| f.text.clone())
        .collect();
    s.facts_replaced(&replaced);
    true_now
}

#[cfg(test)]
mod tests {
    //! `decide::give_back` fed constructed readings: the compaction's record on the session,
    //! the checkpoint, a summary, what the session did, the chain; no file, no clock.

    use super::*;
    use crate::handoff::chain::Link;
    use crate::pipeline::decide::test_support::{Session, NOW};
    use crate::transcripts::compaction_summary::Kind;

    fn checkpoint() -> Checkpoint {
        Checkpoint {
            id: "ck-7".into(),
            next_action: "write the parser".into(),
            ..Checkpoint::default()
        }
    }

    fn next_step(text: &str) -> Fact {
        Fact {
            kind: Kind::NextStep,
            text: text.into(),
            detail: None,
            at: None,
        }
    }

    /// A session whose start after a compaction of `ck-7` gave only a note with nonce `n1`.
    fn waiting() -> Session {
        let mut s = Session::new("s1", 200_000);
        s.restore_waits(None, "ck-7", "n1", || NOW.into());
        s
    }

    /// The same, the summary audited already: it left out `missing`.
    fn audited(missing: Vec<Fact>) -> Session {
        let mut s = waiting();
        let mut note = crate::pipeline::decide::test_support::audit_note("ck-7");
        note.missing = missing.iter().map(|f| f.text.clone()).collect();
        s.summary_audited("ck-7", Some(missing), None, note);
        s
    }

    fn chain(c: &Checkpoint) -> Chain {
        let mut record = SessionRecord::placeholder(c);
        record.agent_session = Some("s1".into());
        let mut chain = Chain::default();
        chain.sessions.push(Link { record, ack: None });
        chain
    }

    fn offer<'a>(
        own: Option<&'a Checkpoint>,
        found: Option<&'a Found>,
        observed: Option<&'a Observed>,
        chain: Option<&'a Chain>,
    ) -> GiveBackOffer<'a> {
        GiveBackOffer {
            own,
            found,
            observed,
            chain,
            agent: Agent::ClaudeCode,
            now: NOW,
        }
    }

    #[test]
    fn an_audited_summary_gives_back_what_it_left_out_and_audits_nothing_again() {
        let c = checkpoint();
        let mut s = audited(vec![next_step("write the parser")]);
        let d = give_back(&mut s, &offer(Some(&c), None, None, None));
        assert_eq!(
            d.back,
            Some(Back::Missing {
                checkpoint: "ck-7".into(),
                facts: vec![next_step("write the parser")],
            })
        );
        assert_eq!((d.audit, d.summary), (None, None));
        // Done with only once the apply stage gave it.
        assert!(s.after_compaction().is_some_and(|a| a.waiting.is_some()));
    }

    #[test]
    fn a_summary_read_now_is_audited_once_and_what_it_left_out_given_back() {
        let c = checkpoint();
        let found = Found::Text("We renamed the module; tests pass.".into());
        let mut s = waiting();
        let d = give_back(&mut s, &offer(Some(&c), Some(&found), None, None));
        let line = d.audit.expect("audited now");
        assert_eq!(line.event, "compaction_audit");
        assert_eq!(line.fields["checkpoint"], "ck-7");
        assert_eq!(line.fields["agent"], "claude-code");
        assert_eq!(line.fields["missing"][0], "write the parser");
        assert_eq!(
            d.summary.as_deref(),
            Some("We renamed the module; tests pass.")
        );
        let Some(Back::Missing { checkpoint, facts }) = d.back else {
            panic!("facts given back: {:?}", d.back);
        };
        assert_eq!(checkpoint, "ck-7");
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].text, "write the parser");
        let a = s.after_compaction().expect("still waiting");
        assert!(a.audited);
        assert_eq!(s.last_audit().map(|n| n.at.as_str()), Some(NOW));
    }

    #[test]
    fn a_summary_that_kept_everything_gives_nothing_back() {
        let c = checkpoint();
        let found = Found::Text("Next: write the parser.".into());
        let mut s = waiting();
        let d = give_back(&mut s, &offer(Some(&c), Some(&found), None, None));
        assert!(d.audit.is_some());
        assert_eq!(d.back, None);
    }

    #[test]
    fn what_newer_evidence_replaced_is_not_given_back_and_counts_as_replaced() {
        let c = checkpoint();
        let mut s = audited(vec![next_step("write the parser")]);
        let now = Observed {
            next_step: Some("run the release".into()),
            ..Observed::default()
        };
        let d = give_back(&mut s, &offer(Some(&c), None, Some(&now), None));
        assert_eq!(d.back, None);
        let note = s.last_audit().expect("audit note");
        assert_eq!(note.replaced, vec!["write the parser".to_string()]);
        assert!(note.missing.is_empty());
    }

    #[test]
    fn an_unreadable_summary_gives_the_whole_prompt_on_the_sessions_link() {
        let c = checkpoint();
        let chain = chain(&c);
        let mut s = waiting();
        let d = give_back(
            &mut s,
            &offer(Some(&c), Some(&Found::None), None, Some(&chain)),
        );
        let line = d.audit.expect("audited now");
        assert_eq!(line.fields["unreadable"], "not found");
        assert_eq!(d.summary, None);
        let Some(Back::Prompt { checkpoint, link }) = d.back else {
            panic!("the prompt: {:?}", d.back);
        };
        assert_eq!(checkpoint.id, "ck-7");
        assert_eq!(
            link.and_then(|l| l.agent_session.clone()).as_deref(),
            Some("s1")
        );
    }

    #[test]
    fn nothing_waiting_or_no_checkpoint_gives_nothing() {
        let c = checkpoint();
        let found = Found::Text("anything".into());
        let mut idle = Session::new("s1", 200_000);
        let d = give_back(&mut idle, &offer(Some(&c), Some(&found), None, None));
        assert_eq!(d, GiveBackDecided::default());
        let mut s = waiting();
        let d = give_back(&mut s, &offer(None, Some(&Found::None), None, None));
        assert_eq!(d, GiveBackDecided::default());
    }
}
