//! The decide stage: pure functions from a session's state and what the read stage found to
//! the session's next state and the effects (what to say to the model, whether a checkpoint is
//! due, the lines to log). Nothing here opens a file or reads the clock: the time is handed
//! in, so every decision can be tested in-process (each file's tests feed events to its
//! decisions; `test_support` holds what they share).
//!
//! One file per concern: the [`stages`], a reading's [`window`] and limit, [`compaction`]s,
//! session [`start`]s, what is given back after a compaction ([`give_back`]),
//! the look before a [`destructive`] command, [`checkpoint_requests`] and [`loops`].

mod checkpoint_requests;
mod compact;
mod compaction;
mod destructive;
mod end;
mod give_back;
mod loops;
mod reading;
mod stages;
mod start;
mod track;
mod window;

pub use checkpoint_requests::{checkpoint_request, Request};
pub use compact::{post_compact, pre_compact, CompactDecided, PreCompactFacts};
pub use compaction::{
    compaction_by_drop, compaction_ended, compaction_judged, compacts_nothing, compressed,
    note_drop, DropNoted, Judged,
};
pub use destructive::{look, Look};
pub use end::{end, EndDecided, EndFacts};
pub use give_back::{audited_now, give_back, still_true, Back, GiveBackDecided, GiveBackOffer};
pub use loops::{event_loops, loops, CallsRead, LoopsDecided};
pub use reading::{
    measure, usage, LimitAsk, LimitFound, Measured, Reading, TranscriptInfo, UsageDecided,
    UsageFacts, UsageRead,
};
pub use stages::{settle_stages, stage_checkpoint, stage_logs, stage_step, Settled};
pub use start::{
    gives_waiting_start, session_started, start, start_gift, start_offered, start_waits,
    GiftSettings, Offer, StartDecided, StartFacts,
};
pub use track::{by_hand, track, ByHandDecided, TrackDecided, TrackFacts};
pub use window::{reading_limit, reading_window, WindowFacts};

#[cfg(test)]
#[allow(unused_imports)]
pub(crate) mod test_support {
    //! What the decisions' tests share: a session and its stages fed readings as the hooks
    //! would (the harness stands in for the read stage, setting the token count a transcript would
    //! give, and for the apply stage: a checkpoint a stage asks for gets the next id), and sample
    //! records.

    pub(crate) use super::*;
    pub(crate) use crate::agents::payload::Payload;
    pub(crate) use crate::agents::policy::Policy;
    pub(crate) use crate::agents::Agent;
    pub(crate) use crate::context::compaction::{Limit, StagesAgainst};
    pub(crate) use crate::context::stages::{FiredStage, Stage, StageAction, Step};
    pub(crate) use crate::domain::requests::Settings;
    pub(crate) use crate::domain::session::{Phase, Session};
    pub(crate) use crate::pipeline::effects::{LearnPoint, LogLine, Reach, StageCheckpoint};
    pub(crate) use crate::pipeline::requests::{self, Why};
    pub(crate) use crate::transcripts::activity::loops::{
        Action as Call, Outcome, Step as CallStep,
    };
    pub(crate) use crate::transcripts::activity::{LoopHit, LoopLimits};
    pub(crate) use crate::transcripts::usage::Usage;
    pub(crate) use serde_json::json;

    pub(crate) const NOW: &str = "2026-02-11T21:00:00Z";
    pub(crate) const WINDOW: u64 = 200_000;

    /// What a usage decision is given with a reading, as the read stage builds it: no window
    /// the agent stated, a session already recorded, no environment.
    pub(crate) fn usage_facts<'a>(
        reading: &'a Reading,
        config: &'a crate::domain::config::Config,
        reach: Reach,
    ) -> UsageFacts<'a> {
        UsageFacts {
            reading,
            given_window: None,
            messages: None,
            reach,
            config,
            front_window: None,
            had_record: true,
            env: &|_| None,
            now: NOW,
        }
    }

    /// A compaction limit found in the front matter.
    pub(crate) fn found(tokens: u64) -> LimitFound {
        LimitFound {
            limit: Limit::new(tokens, "front-matter"),
            seen: None,
        }
    }

    /// One session and its stages, fed readings as the hooks would.
    pub(crate) struct Harness {
        pub(crate) s: Session,
        pub(crate) stages: Vec<Stage>,
        pub(crate) against: StagesAgainst,
        /// Checkpoints the stages asked for.
        pub(crate) written: Vec<String>,
    }

    impl Harness {
        /// The default stages (80 warn, 90 and 95 checkpoint, 98 handoff), against a limit.
        pub(crate) fn new(limit: u64) -> Harness {
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
        pub(crate) fn read(
            &mut self,
            tokens: Option<u64>,
            compacted: bool,
            reach: Reach,
        ) -> Decided {
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
        pub(crate) fn at(&mut self, percent: u64) -> Decided {
            let limit = self.s.limit();
            self.read(Some(limit * percent / 100), false, Reach::Now)
        }

        /// A `Stop` at `percent`: its reply reaches no model.
        pub(crate) fn stop_at(&mut self, percent: u64) -> Decided {
            let limit = self.s.limit();
            self.read(Some(limit * percent / 100), false, Reach::Later)
        }
    }

    /// What one reading decided.
    pub(crate) struct Decided {
        pub(crate) settled: Settled,
        pub(crate) checkpoint: Option<String>,
        pub(crate) logs: Vec<LogLine>,
    }

    impl Decided {
        pub(crate) fn said(&self) -> Vec<&str> {
            self.settled
                .to_say
                .iter()
                .map(|f| f.name.as_str())
                .collect()
        }
        pub(crate) fn fired(&self) -> Vec<&str> {
            self.settled.fired.iter().map(|f| f.name.as_str()).collect()
        }
    }

    pub(crate) fn at_tokens(tokens: u64, limit: u64) -> Session {
        let mut s = Session::new("s1", WINDOW);
        s.limit_found(Limit::new(limit, "default"), None);
        s.usage_read(Some(tokens), WINDOW, "claude-code", None, None);
        s
    }

    /// An audit of checkpoint `id` that found nothing missing.
    pub(crate) fn audit_note(id: &str) -> crate::transcripts::compaction_summary::AuditNote {
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

    pub(crate) fn traits(agent: Agent) -> Policy {
        *agent.policy()
    }

    pub(crate) fn boundary(trigger: &str, pre: u64) -> Usage {
        let mut u = Usage::empty("claude-code");
        u.compacted = true;
        u.compaction_trigger = Some(trigger.into());
        u.pre_tokens = Some(pre);
        u.model = Some("claude-opus-4-6".into());
        u
    }
}
