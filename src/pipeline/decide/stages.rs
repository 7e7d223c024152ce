//! Which stages move at a reading, the checkpoint they ask for, and how they settle on the
//! session (fired, waiting for an event that reaches the model, said now).

use serde_json::json;

use crate::context::compaction::StagesAgainst;
use crate::context::stages::{FiredStage, Stage, StageAction, Step};
use crate::domain::session::Session;
use crate::pipeline::effects::{LogLine, Reach, StageCheckpoint};

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
            crate::system::sorting::sort_by(&mut all, |a, b| a.at.total_cmp(&b.at));
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

#[cfg(test)]
mod tests {
    use crate::pipeline::decide::test_support::*;

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
}
