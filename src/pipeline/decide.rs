//! The decide stage: pure functions from a session's state and what the read stage found to
//! the session's next state and the effects (what to say to the model, whether a checkpoint is
//! due, the lines to log). Nothing here opens a file or reads the clock: the time is handed
//! in, so every decision can be tested in-process (see the tests below).

use serde_json::json;

use crate::agents::payload::Payload;
use crate::agents::policy::Policy;
use crate::agents::Agent;
use crate::context::compaction::StagesAgainst;
use crate::context::stages::{FiredStage, Stage, StageAction, Step};
use crate::domain::requests::{Settings, State};
use crate::domain::session::Session;
use crate::pipeline::requests::{self, Why};
use crate::transcripts::usage::Usage;

use super::effects::{LearnPoint, LogLine, Reach, StageCheckpoint};

/// Which stages move at this reading: those crossed fire, those left behind (or all, at a
/// compaction) re-arm. A reading that only records moves none.
pub fn stage_step(
    s: &Session,
    stages: &[Stage],
    against: StagesAgainst,
    compacted: bool,
    reach: Reach,
) -> Step {
    match reach {
        Reach::RecordOnly => Step {
            fire: Vec::new(),
            rearmed: Vec::new(),
            kept: s.fired().to_vec(),
        },
        _ => crate::context::stages::step(stages, s.fired(), s.stage_percent(against), compacted),
    }
}

/// The checkpoint this step's stages ask for, if one does (the highest of them that is not a
/// warning names it).
pub fn stage_checkpoint(step: &Step) -> Option<StageCheckpoint> {
    step.checkpoint_stage().map(|stage| StageCheckpoint {
        trigger: stage.name(),
    })
}

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

/// The stages settled on the session.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// Stages fired by this reading, lowest first.
    pub fired: Vec<FiredStage>,
    /// What to say to the model now: the stages fired now and those that waited for an event
    /// that can reach it, lowest first, each once (empty unless the reply reaches it now).
    pub to_say: Vec<FiredStage>,
}

/// Records `step` on the session: the stages fired now (those that ask for one name
/// `checkpoint`, the checkpoint written for the jump), what waits for an event that can
/// reach the model, whether a handoff is due; at the end of a turn, its token count for the
/// forecast.
pub fn settle_stages(
    s: &mut Session,
    step: &Step,
    checkpoint: Option<&str>,
    reach: Reach,
    now: &str,
) -> Settled {
    let fired: Vec<FiredStage> = step
        .fire
        .iter()
        .map(|stage| FiredStage {
            at: stage.at,
            name: stage.name(),
            action: stage.action,
            checkpoint: (stage.action != StageAction::Warn)
                .then(|| checkpoint.map(str::to_string))
                .flatten(),
            tokens: s.tokens(),
        })
        .collect();
    s.stages_fired(&step.kept, &fired);
    if reach == Reach::Later {
        // The end of a turn (its output reaches no model): the forecast's token counts.
        s.note_turn_end();
    }
    let to_say = match reach {
        Reach::Later => {
            s.stages_wait(&fired);
            Vec::new()
        }
        // What waits keeps waiting.
        Reach::RecordOnly => Vec::new(),
        Reach::Now => {
            let mut all = s.waiting_stages_given();
            all.extend(fired.iter().cloned());
            all.sort_by(|a, b| a.at.total_cmp(&b.at));
            all.dedup_by(|a, b| a.name == b.name);
            all
        }
    };
    s.touched(now);
    Settled { fired, to_say }
}

/// One `stage` line per stage fired.
pub fn stage_logs(s: &Session, fired: &[FiredStage]) -> Vec<LogLine> {
    fired
        .iter()
        .map(|f| {
            LogLine::new(
                "stage",
                json!({
                    "session": s.id(), "stage": f.name, "at": f.at, "action": f.action,
                    "tokens": s.tokens(), "window": s.window(), "percent": s.percent(),
                    "limit": s.limit(), "limit_percent": s.limit_percent(),
                    "checkpoint": f.checkpoint,
                }),
            )
        })
        .collect()
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

/// Loop detection's verdict on the calls this event brought (the transcript's new ones, then
/// the payload's `unnamed` call when it has no id): the loops found, recorded on the session,
/// and those to give now (with a reply that reaches the model; else they wait).
pub fn loops(
    s: &mut Session,
    steps: &[crate::transcripts::activity::loops::Step],
    unnamed: Option<crate::transcripts::activity::loops::Step>,
    limits: &crate::transcripts::activity::GutterLimits,
    reach: Reach,
) -> (
    Vec<crate::transcripts::activity::GutterHit>,
    Vec<crate::transcripts::activity::GutterHit>,
) {
    crate::pipeline::loop_detection::judge(s, steps, unnamed, limits, reach == Reach::Now)
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
    //! The pipeline's decisions fed event by event, in-process: no binary, no file, no clock.
    //! The harness stands in for the read stage (it sets the token count a transcript would give)
    //! and for the apply stage (a checkpoint a stage asks for gets the next id).

    use super::*;
    use crate::context::compaction::Limit;
    use crate::domain::session::Phase;
    use crate::transcripts::activity::loops::{Action as Call, Outcome, Step as CallStep};
    use crate::transcripts::activity::{GutterHit, GutterLimits};

    const NOW: &str = "2026-02-11T21:00:00Z";
    const WINDOW: u64 = 200_000;

    /// One session and its stages, fed readings as the hooks would.
    struct Harness {
        s: Session,
        stages: Vec<Stage>,
        against: StagesAgainst,
        /// Checkpoints the stages asked for.
        written: Vec<String>,
    }

    /// What one reading decided.
    struct Decided {
        settled: Settled,
        checkpoint: Option<String>,
        logs: Vec<LogLine>,
    }

    impl Decided {
        fn said(&self) -> Vec<&str> {
            self.settled
                .to_say
                .iter()
                .map(|f| f.name.as_str())
                .collect()
        }
        fn fired(&self) -> Vec<&str> {
            self.settled.fired.iter().map(|f| f.name.as_str()).collect()
        }
    }

    impl Harness {
        /// The default stages (80 warn, 90 and 95 checkpoint, 98 handoff), against a limit.
        fn new(limit: u64) -> Harness {
            let mut s = Session::new("s1", WINDOW);
            s.limit_found(Limit::new(limit, "front-matter"), None);
            Harness {
                s,
                stages: crate::context::stages::parse_stages(
                    crate::context::stages::DEFAULT_STAGES,
                )
                .unwrap(),
                against: StagesAgainst::Limit,
                written: Vec::new(),
            }
        }

        /// A reading of `tokens` (None: unknown since a compaction), `compacted`: the
        /// reading is at a compaction.
        fn read(&mut self, tokens: Option<u64>, compacted: bool, reach: Reach) -> Decided {
            self.s.usage_read(tokens, WINDOW, "claude-code", None, None);
            let step = stage_step(&self.s, &self.stages, self.against, compacted, reach);
            let checkpoint = step.checkpoint_stage().map(|_| {
                let id = format!("ck-{}", self.written.len() + 1);
                self.written.push(id.clone());
                id
            });
            let settled = settle_stages(&mut self.s, &step, checkpoint.as_deref(), reach, NOW);
            let logs = stage_logs(&self.s, &settled.fired);
            Decided {
                settled,
                checkpoint,
                logs,
            }
        }

        /// A prompt or tool event at `percent` of the limit.
        fn at(&mut self, percent: u64) -> Decided {
            let limit = self.s.limit();
            self.read(Some(limit * percent / 100), false, Reach::Now)
        }

        /// A `Stop` at `percent`: its reply reaches no model.
        fn stop_at(&mut self, percent: u64) -> Decided {
            let limit = self.s.limit();
            self.read(Some(limit * percent / 100), false, Reach::Later)
        }
    }

    fn at_tokens(tokens: u64, limit: u64) -> Session {
        let mut s = Session::new("s1", WINDOW);
        s.limit_found(Limit::new(limit, "default"), None);
        s.usage_read(Some(tokens), WINDOW, "claude-code", None, None);
        s
    }

    /// An audit of checkpoint `id` that found nothing missing.
    fn audit_note(id: &str) -> crate::transcripts::compaction_summary::AuditNote {
        crate::transcripts::compaction_summary::AuditNote {
            at: NOW.into(),
            agent: None,
            trigger: None,
            checkpoint: id.into(),
            kept: 0,
            missing: Vec::new(),
            summary_chars: Some(0),
            unreadable: None,
            replaced: Vec::new(),
        }
    }

    fn traits(agent: Agent) -> Policy {
        *agent.policy()
    }

    // Stages.

    #[test]
    fn a_stage_fires_once_per_fill() {
        let mut h = Harness::new(160_000);
        assert!(h.at(79).said().is_empty());
        let d = h.at(81);
        assert_eq!(d.said(), ["stage-80"]);
        assert_eq!(d.checkpoint, None, "a warning writes no checkpoint");
        assert!(h.at(85).said().is_empty(), "given once per fill");
        assert_eq!(h.s.phase(), Phase::Tracking);
    }

    #[test]
    fn a_jump_fires_every_stage_it_crosses_with_one_checkpoint() {
        let mut h = Harness::new(160_000);
        let d = h.at(96);
        assert_eq!(d.fired(), ["stage-80", "stage-90", "stage-95"]);
        assert_eq!(d.said(), ["stage-80", "stage-90", "stage-95"]);
        assert_eq!(h.written, ["ck-1"], "one checkpoint for the jump");
        let named: Vec<Option<&str>> = d
            .settled
            .fired
            .iter()
            .map(|f| f.checkpoint.as_deref())
            .collect();
        assert_eq!(named, [None, Some("ck-1"), Some("ck-1")]);
        assert_eq!(d.logs.len(), 3);
        assert!(d.logs.iter().all(|l| l.event == "stage"));
    }

    #[test]
    fn a_dip_within_ten_points_does_not_rearm_a_stage() {
        let mut h = Harness::new(160_000);
        h.at(85);
        assert!(h.at(76).fired().is_empty());
        assert!(
            h.at(85).said().is_empty(),
            "the climb back says nothing again"
        );
        assert_eq!(h.s.fired().len(), 1);
    }

    #[test]
    fn a_drop_of_more_than_ten_points_rearms_a_stage() {
        let mut h = Harness::new(160_000);
        h.at(85);
        assert!(h.at(69).fired().is_empty());
        assert!(h.s.fired().is_empty(), "stage-80 re-armed");
        assert_eq!(h.at(81).said(), ["stage-80"]);
    }

    #[test]
    fn a_compaction_rearms_every_stage() {
        let mut h = Harness::new(160_000);
        h.at(92);
        assert_eq!(h.s.fired().len(), 2);
        let d = h.read(None, true, Reach::Now);
        assert!(d.said().is_empty());
        assert!(h.s.fired().is_empty());
        assert_eq!(
            h.at(82).said(),
            ["stage-80"],
            "fires again after the compaction"
        );
    }

    #[test]
    fn an_unknown_usage_without_a_compaction_changes_nothing() {
        let mut h = Harness::new(160_000);
        h.at(85);
        let d = h.read(None, false, Reach::Now);
        assert!(d.fired().is_empty() && d.said().is_empty());
        assert_eq!(h.s.fired().len(), 1, "stage-80 stays fired");
    }

    #[test]
    fn a_stage_fired_at_stop_is_given_with_the_next_prompt_once() {
        let mut h = Harness::new(160_000);
        let d = h.stop_at(81);
        assert_eq!(d.fired(), ["stage-80"]);
        assert!(d.said().is_empty(), "a Stop's reply reaches no model");
        assert_eq!(h.s.phase(), Phase::StagePending);
        assert_eq!(h.at(82).said(), ["stage-80"]);
        assert_eq!(h.s.phase(), Phase::Tracking);
        assert!(h.at(83).said().is_empty());
    }

    #[test]
    fn a_waiting_stage_left_behind_by_a_compaction_is_never_given() {
        let mut h = Harness::new(160_000);
        h.stop_at(81);
        h.read(None, true, Reach::Later);
        assert!(h.s.pending_stages().is_empty());
        assert!(h.at(30).said().is_empty());
    }

    #[test]
    fn a_reading_that_only_records_fires_nothing_and_keeps_what_waits() {
        let mut h = Harness::new(160_000);
        h.stop_at(81);
        let d = h.read(Some(150_000), false, Reach::RecordOnly);
        assert!(d.fired().is_empty() && d.said().is_empty());
        assert_eq!(h.s.pending_stages().len(), 1);
        // The next prompt gives what waited and fires what the token count crossed.
        assert_eq!(h.at(94).said(), ["stage-80", "stage-90"]);
    }

    #[test]
    fn waiting_and_new_stages_are_given_together_lowest_first_each_once() {
        let mut h = Harness::new(160_000);
        h.stop_at(91);
        let d = h.at(96);
        assert_eq!(d.said(), ["stage-80", "stage-90", "stage-95"]);
    }

    #[test]
    fn a_handoff_stage_makes_a_handoff_due_until_a_compaction_rearms_it() {
        let mut h = Harness::new(160_000);
        h.at(99);
        assert!(h.s.handoff_due());
        h.read(None, true, Reach::Now);
        assert!(!h.s.handoff_due());
    }

    #[test]
    fn a_stage_line_in_the_log_carries_the_tokens_and_its_checkpoint() {
        let mut h = Harness::new(160_000);
        let d = h.at(91);
        let f = &d.logs[1].fields;
        assert_eq!(f["stage"], "stage-90");
        assert_eq!(f["action"], "checkpoint");
        assert_eq!(f["tokens"], 145_600);
        assert_eq!(f["limit"], 160_000);
        assert_eq!(f["limit_percent"], 91.0);
        assert_eq!(f["checkpoint"], "ck-1");
        assert_eq!(d.logs[0].fields["checkpoint"], serde_json::Value::Null);
    }

    #[test]
    fn turn_ends_feed_the_forecast_and_other_events_do_not() {
        let mut h = Harness::new(160_000);
        for p in [10, 20, 30] {
            h.at(p + 5);
            h.stop_at(p);
        }
        assert!(h.s.forecast().is_none(), "two turns of growth are too few");
        h.stop_at(40);
        let f = h.s.forecast().unwrap();
        assert_eq!(f.tokens_per_turn, 16_000);
        assert_eq!(f.turns_left, 6);
    }

    #[test]
    fn stages_measured_against_the_window_fire_later_than_against_the_limit() {
        let mut h = Harness::new(160_000);
        assert_eq!(
            h.read(Some(140_000), false, Reach::Now).said(),
            ["stage-80"]
        );
        let mut w = Harness::new(160_000);
        w.against = StagesAgainst::Window;
        assert!(w.read(Some(140_000), false, Reach::Now).said().is_empty());
        assert_eq!(
            w.read(Some(161_000), false, Reach::Now).said(),
            ["stage-80"]
        );
    }

    // Compactions an agent shows only as a drop in its usage.

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

    // Pre-compaction events that fire before every model call.

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

    // Session starts, compactions and restores.

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
    fn a_compactions_end_with_no_restored_size_forgets_the_token_count() {
        let mut h = Harness::new(160_000);
        h.at(92);
        compaction_ended(&mut h.s, None, Some("manual"), NOW);
        assert_eq!(h.s.tokens(), None);
        assert_eq!(h.s.compacted_at(), Some(NOW));
        assert_eq!(h.s.phase(), Phase::Emptied);
        assert!(h.s.fired().is_empty());
    }

    fn boundary(trigger: &str, pre: u64) -> Usage {
        let mut u = Usage::empty("claude-code");
        u.compacted = true;
        u.compaction_trigger = Some(trigger.into());
        u.pre_tokens = Some(pre);
        u.model = Some("claude-opus-4-6".into());
        u
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

    // Effects the apply stage carries out, and the session's transitions.

    #[test]
    fn a_stage_that_asks_for_a_checkpoint_names_its_write_and_a_warning_asks_none() {
        let mut h = Harness::new(160_000);
        let step = stage_step(
            &{
                let mut s = h.s.clone();
                s.usage_read(Some(152_000), WINDOW, "codex", None, None);
                s
            },
            &h.stages,
            h.against,
            false,
            Reach::Now,
        );
        assert_eq!(
            stage_checkpoint(&step),
            Some(StageCheckpoint {
                trigger: "stage-95".into()
            })
        );
        h.s.usage_read(Some(130_000), WINDOW, "codex", None, None);
        let warn = stage_step(&h.s, &h.stages, h.against, false, Reach::Now);
        assert_eq!(warn.fire.len(), 1, "stage-80 fires");
        assert_eq!(stage_checkpoint(&warn), None);
    }

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

    // Checkpoint requests.

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

    // Loops.

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
        let limits = GutterLimits::default();
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
            GutterHit::SameFailure { command, count: 3, .. } if command == "cargo build"
        ));
        let text = crate::pipeline::loop_detection::instruction(&said[0]);
        assert!(text.contains("cargo build"), "{text}");
        assert_eq!(s.gutter().len(), 1, "recorded on the session");
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
        let limits = GutterLimits::default();
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
