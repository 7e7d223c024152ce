//! The headline of an automatic checkpoint (its task and next action), from the session's own
//! record rather than carried over from whatever checkpoint came before.
//!
//! A checkpoint ctxkeep writes on its own belongs to the session that wrote it (its line of
//! work). When that session's record says what the work is (its request, its stated next step,
//! its plan, its summary after a compaction), the task and next action are read from there
//! (`headline_from: session`). A headline set by hand stands only on its author's line: one set
//! on another line (or before this session began, by no session) is about other work, and is
//! kept as `earlier_by_hand`, shown as such and never as the work to do. A session that did no
//! work of its own (its record is carried from an earlier one) keeps the headline as it was.

use crate::domain::checkpoint::{Checkpoint, HandHeadline, Line, HEADLINE_FROM_SESSION};
use crate::transcripts::activity::{Observed, PlanStatus};

/// How much of the request becomes the task, in characters (the request itself stays whole
/// in `observed`).
const TASK_CHARS: usize = 300;

/// The task and next action the session's own record gives.
#[derive(Debug, Default, PartialEq)]
pub struct Evidence {
    pub task: Option<String>,
    pub next: Option<String>,
}

impl Evidence {
    /// Read from what the session's transcript shows: the request; the agent's newest stated
    /// next step (`observed.next_step`, chosen by the transcript's readers), else the plan's
    /// item in progress, else its first pending one, else what the agent's summary said comes
    /// next. None when the record is another session's, carried over.
    pub fn of(o: &Observed) -> Evidence {
        if o.carried_from.is_some() {
            return Evidence::default();
        }
        let text = |s: &str| Some(s.trim()).filter(|s| !s.is_empty()).map(str::to_string);
        let open = |status: PlanStatus| o.open_items().find(|p| p.status == status);
        let summary = o.from_summary.as_ref();
        let task = o
            .request
            .as_deref()
            .and_then(text)
            .map(|r| crate::system::recorded::one_line(&r, TASK_CHARS))
            .or_else(|| {
                summary
                    .and_then(|s| s.current_work.as_deref())
                    .and_then(text)
            });
        let next = o
            .next_step
            .as_deref()
            .and_then(text)
            .or_else(|| open(PlanStatus::InProgress).and_then(|p| text(&p.text)))
            .or_else(|| open(PlanStatus::Pending).and_then(|p| text(&p.text)))
            .or_else(|| summary.and_then(|s| s.next_step.as_deref()).and_then(text));
        Evidence { task, next }
    }

    fn says_the_work(&self) -> bool {
        self.task.is_some() || self.next.is_some()
    }
}

/// Settles `record`'s headline (an automatic checkpoint of `line`, its fields carried from
/// `prev`): see the module. `line_began` is when the session began, as its record says: a
/// hand checkpoint that names no session and was written since is taken as this session's.
pub fn settle(
    record: &mut Checkpoint,
    prev: Option<&Checkpoint>,
    line: &Line,
    line_began: Option<&str>,
) {
    let evidence = record
        .observed
        .as_ref()
        .map(Evidence::of)
        .unwrap_or_default();
    if let Some(p) = prev {
        record.headline_from = p.headline_from.clone();
        record.earlier_by_hand = p.earlier_by_hand.clone();
    }
    if !evidence.says_the_work() {
        return;
    }
    let by_hand = prev.filter(|p| !p.headline_from_session() && has_headline(p));
    if let Some(p) = by_hand {
        if is_own(p, line, line_began) || about_the_same_work(p, record.observed.as_ref()) {
            // The line's own hand-set headline stands, and so does one about this work.
            record.headline_from = None;
            return;
        }
        record.earlier_by_hand = Some(HandHeadline::of(p));
    }
    let own_before = prev.filter(|p| p.session() == Some(line.session.as_str()));
    record.headline_from = Some(HEADLINE_FROM_SESSION.to_string());
    record.phase = own_before
        .filter(|p| p.headline_from_session())
        .map(|p| p.phase.clone())
        .unwrap_or_default();
    record.active_task = evidence.task.unwrap_or_default();
    record.next_action = evidence.next.unwrap_or_default();
    if !line.agent.is_empty() {
        record.controlling_agent = line.agent.clone();
    }
}

/// Whether the hand-set headline of `p` is about the work the session's record shows: it
/// shares an identifier (a path, an id) or two words with the request, the stated next step,
/// the plan, the files changed or the commands run, by the words rule the compaction audit
/// uses (`compaction_summary::facts`).
fn about_the_same_work(p: &Checkpoint, o: Option<&Observed>) -> bool {
    use crate::transcripts::compaction_summary::facts::{Fact, Kind, Summary};
    let Some(o) = o else { return false };
    let mut evidence: Vec<&str> = Vec::new();
    evidence.extend(o.request.as_deref());
    evidence.extend(o.follow_ups.iter().map(String::as_str));
    evidence.extend(o.next_step.as_deref());
    evidence.extend(o.plan.iter().map(|i| i.text.as_str()));
    evidence.extend(o.files.iter().map(String::as_str));
    evidence.extend(o.commands.iter().map(|c| c.command.as_str()));
    let summary = Summary::new(&evidence.join("\n"));
    // A common word ("with", "that") is kept by any text, even none: it tells nothing.
    let nothing = Summary::new("");
    let headline = format!("{} {} {}", p.phase, p.active_task, p.next_action);
    let mut shared = 0;
    for word in headline.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != '_');
        if word.chars().count() < 4 {
            continue;
        }
        let fact = Fact {
            kind: Kind::Task,
            text: word.to_string(),
            detail: None,
            at: None,
        };
        if summary.keeps(&fact, &[]) && !nothing.keeps(&fact, &[]) {
            let identifier = word.contains(['/', '.', '_']) || word.contains(char::is_numeric);
            shared += if identifier { 2 } else { 1 };
        }
    }
    shared >= 2
}

/// Whether `c` sets any of the headline's texts.
fn has_headline(c: &Checkpoint) -> bool {
    [&c.phase, &c.active_task, &c.next_action]
        .iter()
        .any(|t| !t.trim().is_empty())
}

/// Whether the hand checkpoint `p` is `line`'s: it names that session, or names none and
/// was written since the session began.
fn is_own(p: &Checkpoint, line: &Line, line_began: Option<&str>) -> bool {
    match p.session() {
        Some(s) => s == line.session,
        None => line_began.is_some_and(|began| {
            let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
            matches!((at(&p.created_at), at(began)), (Some(w), Some(b)) if w >= b)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand(session: Option<&str>, at: &str) -> Checkpoint {
        Checkpoint {
            id: "ckpt-0001".into(),
            created_at: at.into(),
            trigger: "manual".into(),
            phase: "retry".into(),
            active_task: "T-3 retry loop".into(),
            controlling_agent: "claude-code".into(),
            next_action: "Add the retry loop to src/app.rs".into(),
            line: session.map(|s| Line {
                session: s.into(),
                agent: "claude-code".into(),
            }),
            ..Checkpoint::default()
        }
    }

    fn auto(prev: &Checkpoint, request: &str, next: Option<&str>) -> Checkpoint {
        Checkpoint {
            id: "ckpt-0002".into(),
            created_at: "2026-11-28T12:00:00Z".into(),
            trigger: "pre-compact".into(),
            phase: prev.phase.clone(),
            active_task: prev.active_task.clone(),
            controlling_agent: prev.controlling_agent.clone(),
            next_action: prev.next_action.clone(),
            observed: Some(Observed {
                request: Some(request.into()),
                next_step: next.map(str::to_string),
                agent: "claude-code".into(),
                session: Some("b".into()),
                ..Observed::default()
            }),
            ..Checkpoint::default()
        }
    }

    fn line() -> Line {
        Line {
            session: "b".into(),
            agent: "claude-code".into(),
        }
    }

    #[test]
    fn a_hand_headline_of_other_work_becomes_earlier_and_the_session_says_the_work() {
        let prev = hand(None, "2026-11-28T08:00:00Z");
        let mut c = auto(
            &prev,
            "Port the parser to nom",
            Some("Next: run cargo test parser"),
        );
        settle(&mut c, Some(&prev), &line(), Some("2026-11-28T11:00:00Z"));
        assert!(c.headline_from_session());
        assert_eq!(c.active_task, "Port the parser to nom");
        assert_eq!(c.next_action, "Next: run cargo test parser");
        assert_eq!(c.phase, "");
        let earlier = c.earlier_by_hand.expect("kept as earlier");
        assert_eq!(earlier.next_action, "Add the retry loop to src/app.rs");
        assert_eq!(earlier.id, "ckpt-0001");
    }

    #[test]
    fn the_lines_own_hand_headline_stands() {
        for prev in [
            hand(Some("b"), "2026-11-28T08:00:00Z"),
            hand(None, "2026-11-28T11:30:00Z"),
        ] {
            let mut c = auto(&prev, "Port the parser to nom", None);
            settle(&mut c, Some(&prev), &line(), Some("2026-11-28T11:00:00Z"));
            assert!(!c.headline_from_session());
            assert_eq!(c.active_task, "T-3 retry loop");
            assert!(c.earlier_by_hand.is_none());
        }
    }

    #[test]
    fn another_lines_hand_headline_is_earlier_even_when_newer() {
        let prev = hand(Some("a"), "2026-11-28T11:30:00Z");
        let mut c = auto(&prev, "Port the parser to nom", None);
        settle(&mut c, Some(&prev), &line(), Some("2026-11-28T11:00:00Z"));
        assert!(c.headline_from_session());
        assert_eq!(c.next_action, "");
        assert!(c.earlier_by_hand.is_some());
    }

    #[test]
    fn a_hand_headline_about_the_same_work_stands() {
        let mut prev = hand(None, "2026-11-28T08:00:00Z");
        prev.next_action = "run cargo test and fix the failing split test".into();
        let mut c = auto(
            &prev,
            "make the split test pass on CRLF input",
            Some("I'll fix it"),
        );
        settle(&mut c, Some(&prev), &line(), Some("2026-11-28T11:00:00Z"));
        assert!(!c.headline_from_session());
        assert_eq!(
            c.next_action,
            "run cargo test and fix the failing split test"
        );
    }

    #[test]
    fn an_idle_session_keeps_the_headline() {
        let prev = hand(None, "2026-11-28T08:00:00Z");
        let mut c = auto(&prev, "x", None);
        c.observed.as_mut().unwrap().carried_from = Some("ckpt-0001".into());
        settle(&mut c, Some(&prev), &line(), None);
        assert!(!c.headline_from_session());
        assert_eq!(c.next_action, "Add the retry loop to src/app.rs");
    }
}
