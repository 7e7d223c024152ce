//! A usage reading as one decision: the session's next state after a token count (from a
//! transcript, an agent's status line or payload, or `track` by hand) and what it asks of the
//! apply stage: lines to log, a point to remember, a stage's checkpoint and the stages it
//! settles. Every entry that moves a session's token count comes here (`tracking::apply_in`).

use serde::Serialize;
use serde_json::json;

use crate::agents::Agent;
use crate::context::compaction::{LearnedPoint, Limit};
use crate::domain::config::Config;
use crate::domain::session::CountState;
use crate::domain::session::{Session, Source};
use crate::pipeline::effects::{Effect, LearnPoint, LogLine, Reach, Settle};
use crate::transcripts::usage::Usage;

/// What a transcript reading says besides the token count (`track --json`).
#[derive(Debug, Serialize)]
pub struct TranscriptInfo {
    pub path: String,
    /// The id of the agent that wrote it.
    pub agent: &'static str,
    pub model: Option<String>,
    pub compacted: bool,
    pub malformed_lines: u64,
}

/// The new token count, read before taking the lock (reading can be slow).
pub enum Reading {
    Absolute {
        tokens: u64,
        source: Source,
        count: Option<CountState>,
    },
    Relative(i64),
    Transcript(Box<Usage>, String),
    /// An agent's status line (Claude Code's): its exact window is
    /// remembered for the session's later hooks.
    StatusLine {
        agent: Agent,
        tokens: Option<u64>,
        window: Option<u64>,
        model: Option<String>,
        transcript: Option<String>,
    },
    /// A token count an agent states outside its transcript (Claude Code's
    /// `SessionStart` `context_tokens` and `model`, a token count from a Codex
    /// `Stop`): exact, recorded like a transcript's, and measured against
    /// that agent's limit. `tokens: None` keeps the last token count.
    Stated {
        agent: Agent,
        tokens: Option<u64>,
        model: Option<String>,
        /// The window, when the agent states it.
        window: Option<u64>,
    },
    /// Only `--messages`: the token count stays.
    Unchanged,
}

/// What a usage reading is decided from besides the session: the reading, the caller's
/// switches, the project's settings, the environment and the time, handed in.
pub struct UsageFacts<'a> {
    pub reading: &'a Reading,
    /// `--window`.
    pub given_window: Option<u64>,
    /// `--messages`.
    pub messages: Option<u64>,
    pub reach: Reach,
    pub config: &'a Config,
    /// The front matter's own `window` (None: the default).
    pub front_window: Option<u64>,
    /// The session had a record before this reading.
    pub had_record: bool,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub now: &'a str,
}

/// What the limit lookup is asked (`read::compaction_limit_for`): the agent, the window and the
/// model this reading is measured at, and a point this very reading teaches (counted with those
/// learned before, as it will be once remembered).
#[derive(Debug, Clone, PartialEq)]
pub struct LimitAsk {
    pub agent: Option<Agent>,
    pub window: u64,
    pub model: Option<String>,
    pub learns: Option<LearnPoint>,
}

/// What the limit lookup found for a [`LimitAsk`].
#[derive(Debug, Clone, PartialEq)]
pub struct LimitFound {
    pub limit: Limit,
    pub seen: Option<LearnedPoint>,
}

/// A usage reading decided: the session's next state, the effects in the order the apply
/// stage runs them, and what the reading's callers report.
pub struct UsageDecided {
    pub session: Session,
    pub effects: Vec<Effect>,
    pub rearmed: Vec<String>,
    pub truncated: bool,
    pub previous_messages: Option<u64>,
    pub transcript: Option<TranscriptInfo>,
    /// The session as it was before this reading (None: it had no record); loop detection's
    /// state left out.
    pub previous: Option<Session>,
}

/// A usage reading as a decision is handed it: its facts, the limit the read stage found for
/// it and, when the read stage measured it on the session to ask that limit ([`measure`]), the
/// measurement, which is not made again.
pub struct UsageRead<'a> {
    pub facts: UsageFacts<'a>,
    pub measured: Option<Measured>,
    pub found: LimitFound,
}

impl<'a> UsageRead<'a> {
    /// A reading not measured yet: [`usage`] measures it.
    pub fn new(facts: UsageFacts<'a>, found: LimitFound) -> UsageRead<'a> {
        UsageRead {
            facts,
            measured: None,
            found,
        }
    }

    /// The token count `s` had before the reading.
    pub fn tokens_before(&self, s: &Session) -> Option<u64> {
        match &self.measured {
            Some(m) => m.previous.tokens(),
            None => s.tokens(),
        }
    }

    /// The reading decided on `s` (pure).
    pub fn decide(self, s: Session) -> UsageDecided {
        finish(s, &self.facts, self.measured, self.found)
    }
}

/// The first half of a usage reading, made on the session ([`measure`]): what the read stage
/// asks the limit for, and what the decision finishes the reading from.
pub struct Measured {
    ask: LimitAsk,
    compacted: bool,
    transcript: Option<TranscriptInfo>,
    /// Evidence of a window larger than assumed, as if the window had been known before: whether
    /// the session had a record (which loop detection may give it after the measure) decides
    /// the rest when the reading is finished.
    evidence: Option<serde_json::Value>,
    window_known_before: bool,
    judged: Option<crate::pipeline::decide::Judged>,
    /// The session as it was before the reading, loop detection's state left out.
    previous: Session,
}

impl Measured {
    /// What the limit lookup is asked.
    pub fn ask(&self) -> &LimitAsk {
        &self.ask
    }
}

/// Which limit the reading needs, and the reading's first half (pure): the session moved to
/// the reading's token count, window and model, a compaction judged. The read stage looks the
/// limit up for [`Measured::ask`]; the decision then finishes the reading from it, without
/// measuring again ([`UsageRead`]).
pub fn measure(s: &mut Session, facts: &UsageFacts<'_>) -> Measured {
    let window_known_before = s.window_known();
    let previous = s.clone_without_loops();
    let (compacted, transcript, evidence, judged) = measure_in(s, facts);
    let ask = LimitAsk {
        agent: s.agent().and_then(|a| a.parse().ok()),
        window: s.window(),
        model: s.model().map(str::to_string),
        learns: match &judged {
            Some(crate::pipeline::decide::Judged::Learned(point)) => Some(point.clone()),
            _ => None,
        },
    };
    Measured {
        ask,
        compacted,
        transcript,
        evidence,
        window_known_before,
        judged,
        previous,
    }
}

/// What [`measure_in`] found besides the session's new state: a compaction read, the
/// transcript's particulars, the window's evidence, a compaction judged.
type MeasuredIn = (
    bool,
    Option<TranscriptInfo>,
    Option<serde_json::Value>,
    Option<crate::pipeline::decide::Judged>,
);

/// The token count, the window and what it proves (evidence as if the window had been known
/// before), and a compaction judged (pure).
fn measure_in(s: &mut Session, f: &UsageFacts<'_>) -> MeasuredIn {
    // What this reading is measured from: the window the session had.
    let window_before = s.window();
    let mut compacted = false;
    let mut transcript = None;
    // Only an agent's reading says anything about the window.
    let agent_reading = matches!(
        f.reading,
        Reading::Transcript(..) | Reading::StatusLine { .. } | Reading::Stated { .. }
    );
    match f.reading {
        Reading::Absolute {
            tokens,
            source,
            count,
        } => {
            let window = f.given_window.unwrap_or(f.config.window);
            s.tokens_given(*tokens, window, *source, count.clone());
        }
        Reading::Relative(delta) => {
            let base = s.tokens().unwrap_or(0);
            let tokens = base.saturating_add_signed(*delta);
            let window = f
                .given_window
                .or(f.had_record.then_some(window_before))
                .unwrap_or(f.config.window);
            s.tokens_given(tokens, window, Source::Manual, None);
        }
        Reading::Transcript(usage, path) => {
            s.model_seen(usage.model.as_deref());
            let agent = usage.agent.parse().ok();
            let window = window_for(f, s, agent, usage.window, usage.model.as_deref());
            compacted = usage.compacted;
            if compacted {
                crate::pipeline::learning::note_compaction(s, usage, None);
            }
            // No token count (a new transcript, or compacted without `postTokens`) is
            // recorded as unknown rather than guessed.
            s.usage_read(
                usage.tokens,
                window,
                usage.agent,
                Some(path.clone()),
                usage.model.clone(),
            );
            transcript = Some(TranscriptInfo {
                path: path.clone(),
                agent: usage.agent,
                model: usage.model.clone(),
                compacted: usage.compacted,
                malformed_lines: usage.malformed_lines,
            });
        }
        Reading::StatusLine {
            agent,
            tokens,
            window,
            model,
            transcript,
        } => {
            s.model_seen(model.as_deref());
            if let Some(window) = window {
                s.statusline_window_seen(*window);
            }
            let window = window_for(f, s, Some(*agent), None, model.as_deref());
            // A line that knows no token count (before the first call, right after a
            // compaction) keeps the one the hooks recorded, the restored size included.
            let tokens = tokens.or(s.tokens());
            s.usage_read(
                tokens,
                window,
                agent.as_str(),
                transcript.clone(),
                model.clone(),
            );
        }
        Reading::Stated {
            agent,
            tokens,
            model,
            window,
        } => {
            if model.is_some() {
                s.model_seen(model.as_deref());
            }
            let model = model.clone().or(s.model().map(str::to_string));
            let window = window_for(f, s, Some(*agent), *window, model.as_deref());
            s.usage_read(tokens.or(s.tokens()), window, agent.as_str(), None, model);
        }
        Reading::Unchanged => {
            if let Some(w) = f.given_window {
                s.window_given(w);
            }
        }
    }
    // A token count past the window the session assumed, without a compaction: the window is
    // larger than assumed (or unknown).
    let evidence = agent_reading
        .then(|| crate::pipeline::learning::window_evidence(s, false))
        .flatten();
    // A compaction read earlier is judged at the first reading after it.
    let agent = s.agent().and_then(|a| a.parse::<Agent>().ok());
    let judged = agent.and_then(|a| crate::pipeline::decide::compaction_judged(s, a, compacted));
    (compacted, transcript, evidence, judged)
}

/// The window for a reading from an agent ([`super::reading_window`] chooses it), noted on
/// the session with where it came from.
fn window_for(
    f: &UsageFacts<'_>,
    s: &mut Session,
    agent: Option<Agent>,
    stated: Option<u64>,
    model: Option<&str>,
) -> u64 {
    let facts = super::WindowFacts {
        given: f.given_window,
        stated,
        model: model.and_then(|m| f.config.model_info(m)).map(|m| m.window),
        configured: f.front_window,
        default: f.config.window,
    };
    let (window, source) = super::reading_window(s, agent, &facts, f.env);
    s.window_from(&source);
    window
}

/// A usage reading decided (pure): the session moved to the reading, its limit chosen from
/// what the lookup `found` for [`limit_ask`], the stages that move, and the effects: a point
/// to remember, a stage's checkpoint, the stages settled with its outcome (a continuation the
/// apply stage runs once the checkpoint is written: [`super::settle_stages`]), the lines to
/// log.
pub fn usage(s: Session, facts: &UsageFacts<'_>, found: LimitFound) -> UsageDecided {
    finish(s, facts, None, found)
}

/// [`usage`] from the reading's first half when the read stage made it (else made now).
fn finish(
    mut s: Session,
    facts: &UsageFacts<'_>,
    measured: Option<Measured>,
    found: LimitFound,
) -> UsageDecided {
    let m = match measured {
        Some(m) => m,
        None => measure(&mut s, facts),
    };
    // Past a window already unknown, nothing new is said (`learning::window_evidence`).
    let was_unknown = facts.had_record && !m.window_known_before;
    let evidence = m
        .evidence
        .filter(|e| !(was_unknown && e.get("window").is_some_and(|w| w.is_null())));
    let previous = facts.had_record.then_some(m.previous);
    let mut effects = Vec::new();
    let (limit, learned_from) =
        super::reading_limit(s.window_known(), s.window(), found.limit, found.seen);
    s.limit_found(limit, learned_from);
    // Truncation: the message count can only grow within a session.
    let previous_messages = s.messages();
    let truncated =
        matches!((previous_messages, facts.messages), (Some(before), Some(now)) if now < before);
    if let Some(messages) = facts.messages {
        s.messages_counted(messages);
    }
    let step = super::stage_step(
        &s,
        &facts.config.stages,
        facts.config.stages_against,
        m.compacted,
        facts.reach,
    );
    if let Some(checkpoint) = super::stage_checkpoint(&step) {
        effects.push(Effect::StageCheckpoint(checkpoint));
    }
    let rearmed = step.rearmed.clone();
    effects.push(Effect::Settle(Settle {
        step,
        reach: facts.reach,
        now: facts.now.to_string(),
    }));
    if let Some(fields) = evidence {
        effects.push(Effect::Log(LogLine::new("window_evidence", fields)));
    }
    match m.judged {
        Some(super::Judged::NotLearned(line)) => effects.push(Effect::Log(line)),
        Some(super::Judged::Learned(point)) => effects.push(Effect::Learn(point)),
        None => {}
    }
    if truncated {
        effects.push(Effect::Log(LogLine::new(
            "truncation_suspected",
            json!({ "session": s.id(), "previous": previous_messages, "messages": s.messages() }),
        )));
    }
    UsageDecided {
        session: s,
        effects,
        rearmed,
        truncated,
        previous_messages,
        transcript: m.transcript,
        previous,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::state::FrontMatter;
    use crate::pipeline::decide::test_support::{
        boundary, found, usage_facts as facts, NOW, WINDOW,
    };
    use crate::transcripts::usage::Usage;

    fn config() -> Config {
        Config::from_front(&FrontMatter::default())
    }

    fn transcript(tokens: u64) -> Reading {
        let mut u = Usage::empty("claude-code");
        u.tokens = Some(tokens);
        u.model = Some("claude-sonnet-4-5-20250929".into());
        Reading::Transcript(Box::new(u), "/t.jsonl".into())
    }

    fn settled(d: &UsageDecided) -> Vec<&Effect> {
        d.effects
            .iter()
            .filter(|e| matches!(e, Effect::StageCheckpoint(_) | Effect::Settle(_)))
            .collect()
    }

    #[test]
    fn a_reading_past_a_checkpoint_stage_asks_for_one_checkpoint_then_settles_the_stages() {
        let config = config();
        let reading = transcript(150_000);
        let f = facts(&reading, &config, Reach::Now);
        let mut s = Session::new("s1", WINDOW);
        let measured = measure(&mut s, &f);
        let ask = measured.ask();
        assert_eq!(ask.window, 200_000, "the model table's window");
        assert_eq!(ask.agent, Some(Agent::ClaudeCode));
        assert_eq!(ask.learns, None);
        assert_eq!(s.tokens(), Some(150_000), "measured on the session, once");
        let read = UsageRead {
            facts: f,
            measured: Some(measured),
            found: found(160_000),
        };
        assert_eq!(read.tokens_before(&s), None);
        let d = read.decide(s);
        assert_eq!(d.session.tokens(), Some(150_000));
        assert_eq!(d.session.limit(), 160_000);
        // 93.75 % of the limit: stages 80 and 90 fire; 90 asks for the checkpoint, and the
        // stages settle once it is written (the outcome names it).
        let [Effect::StageCheckpoint(c), Effect::Settle(settle)] = settled(&d)[..] else {
            panic!("{:?}", d.effects);
        };
        assert_eq!(c.trigger, "stage-90");
        let names: Vec<String> = settle.step.fire.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["stage-80", "stage-90"]);
        assert_eq!(settle.now, NOW);
        assert!(d.session.fired().is_empty(), "settled by the apply stage");
    }

    #[test]
    fn a_reading_that_only_records_moves_no_stage_and_asks_for_no_checkpoint() {
        let config = config();
        let reading = transcript(150_000);
        let f = facts(&reading, &config, Reach::RecordOnly);
        let d = usage(Session::new("s1", WINDOW), &f, found(160_000));
        assert_eq!(d.session.tokens(), Some(150_000));
        let [Effect::Settle(settle)] = settled(&d)[..] else {
            panic!("{:?}", d.effects);
        };
        assert!(settle.step.fire.is_empty());
    }

    #[test]
    fn fewer_messages_than_before_is_logged_as_a_truncation() {
        let config = config();
        let reading = Reading::Unchanged;
        let mut f = facts(&reading, &config, Reach::Now);
        f.messages = Some(40);
        let d = usage(Session::new("s1", WINDOW), &f, found(160_000));
        f.messages = Some(12);
        let d = usage(d.session, &f, found(160_000));
        assert!(d.truncated);
        let logged: Vec<&str> = d
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Log(l) => Some(l.event),
                _ => None,
            })
            .collect();
        assert_eq!(logged, ["truncation_suspected"]);
    }

    #[test]
    fn a_compaction_judged_at_the_next_reading_asks_for_its_point_to_be_remembered() {
        let config = config();
        let mut at = boundary("auto", 155_000);
        at.tokens = Some(30_000);
        let compacted = Reading::Transcript(Box::new(at), "/t.jsonl".into());
        let f = facts(&compacted, &config, Reach::Now);
        let mut s = Session::new("s1", WINDOW);
        s.usage_read(Some(150_000), WINDOW, "claude-code", None, None);
        let d = usage(s, &f, found(160_000));
        let mut after = Usage::empty("claude-code");
        after.tokens = Some(32_000);
        after.model = Some("claude-opus-4-6".into());
        let next = Reading::Transcript(Box::new(after), "/t.jsonl".into());
        let f = facts(&next, &config, Reach::Now);
        let mut s = d.session;
        let measured = measure(&mut s, &f);
        // Asked with the point this reading teaches, so the lookup counts it already.
        let learns = measured.ask().learns.clone();
        let d = UsageRead {
            facts: f,
            measured: Some(measured),
            found: found(160_000),
        }
        .decide(s);
        let remembered: Vec<&LearnPoint> = d
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Learn(p) => Some(p),
                _ => None,
            })
            .collect();
        let point = learns.expect("an automatic compaction under load teaches its point");
        assert_eq!(remembered, [&point], "{:?}", d.effects);
        assert_eq!(point.tokens, 155_000);
    }

    #[test]
    fn a_reading_measured_for_its_limit_decides_as_one_measured_at_the_decision() {
        let config = config();
        // Past the window assumed, on a model whose window nothing larger is known for; and a
        // session loop detection gives a record between the measure and the decision.
        let mut u = Usage::empty("claude-code");
        u.tokens = Some(260_000);
        u.model = Some("a-model-nobody-knows".into());
        let past = Reading::Transcript(Box::new(u), "/t.jsonl".into());
        for had_record_at_decision in [false, true] {
            let mut f = facts(&past, &config, Reach::Now);
            f.had_record = false;
            let mut s = Session::new("s1", WINDOW);
            let measured = measure(&mut s, &f);
            f.had_record = had_record_at_decision;
            let once = UsageRead {
                facts: f,
                measured: Some(measured),
                found: found(160_000),
            }
            .decide(s);
            let mut f = facts(&past, &config, Reach::Now);
            f.had_record = had_record_at_decision;
            let at_decision = usage(Session::new("s1", WINDOW), &f, found(160_000));
            assert_eq!(once.session, at_decision.session);
            assert_eq!(once.effects, at_decision.effects);
            assert_eq!(once.previous, at_decision.previous);
        }
    }
}
