//! Which stages fire as usage moves: each fires once as usage climbs past
//! it, and re-arms when usage falls back below it (after a compaction).
//! Pure logic; `track` does the writing.

use crate::session::FiredStage;
use crate::state::{Stage, StageAction};

/// The outcome of moving a session to a new percent.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Stages crossed now that had not fired yet, lowest first.
    pub fire: Vec<Stage>,
    /// Names of stages that were fired and are armed again.
    pub rearmed: Vec<String>,
    /// Fired stages that stay fired.
    pub kept: Vec<FiredStage>,
}

impl Step {
    /// The highest newly fired stage that asks for a checkpoint (checkpoint
    /// or handoff): one checkpoint serves a whole jump.
    pub fn checkpoint_stage(&self) -> Option<&Stage> {
        self.fire
            .iter()
            .rev()
            .find(|s| s.action != StageAction::Warn)
    }
}

/// Moves from the `fired` set to `percent`. `None` (a figure unknown since a
/// compaction) re-arms every stage when `compacted`, else changes nothing.
pub fn step(stages: &[Stage], fired: &[FiredStage], percent: Option<f64>, compacted: bool) -> Step {
    let Some(p) = percent else {
        return if compacted {
            Step {
                fire: Vec::new(),
                rearmed: fired.iter().map(|f| f.name.clone()).collect(),
                kept: Vec::new(),
            }
        } else {
            Step {
                fire: Vec::new(),
                rearmed: Vec::new(),
                kept: fired.to_vec(),
            }
        };
    };
    let mut sorted: Vec<&Stage> = stages.iter().collect();
    sorted.sort_by(|a, b| a.at.total_cmp(&b.at));
    let was_fired = |s: &Stage| fired.iter().any(|f| f.name == s.name());
    let fire = sorted
        .iter()
        .filter(|s| s.at <= p && !was_fired(s))
        .map(|s| (*s).clone())
        .collect();
    // A fired stage stays fired while usage is at or above it; one no longer
    // configured is dropped with the rest.
    let (kept, gone): (Vec<FiredStage>, Vec<FiredStage>) = fired
        .iter()
        .cloned()
        .partition(|f| f.at <= p && stages.iter().any(|s| s.name() == f.name));
    Step {
        fire,
        rearmed: gone.into_iter().map(|f| f.name).collect(),
        kept,
    }
}

/// The highest stage at or below `percent`.
pub fn reached(stages: &[Stage], percent: Option<f64>) -> Option<&Stage> {
    let p = percent?;
    stages
        .iter()
        .filter(|s| s.at <= p)
        .max_by(|a, b| a.at.total_cmp(&b.at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::parse_stages;

    /// Applies a step the way `track` does; returns the names fired.
    fn walk(stages: &[Stage], fired: &mut Vec<FiredStage>, p: f64) -> Vec<String> {
        let s = step(stages, fired, Some(p), false);
        *fired = s.kept.clone();
        for st in &s.fire {
            fired.push(FiredStage {
                at: st.at,
                name: st.name(),
                action: st.action,
                checkpoint: None,
            });
        }
        s.fire.iter().map(Stage::name).collect()
    }

    #[test]
    fn the_issue_scenario_fires_once_and_rearms() {
        let stages = parse_stages("50,80:checkpoint").unwrap();
        let mut fired = Vec::new();
        assert!(walk(&stages, &mut fired, 40.0).is_empty());
        assert_eq!(walk(&stages, &mut fired, 85.0), ["stage-50", "stage-80"]);
        assert!(walk(&stages, &mut fired, 90.0).is_empty());
        assert!(walk(&stages, &mut fired, 30.0).is_empty());
        assert!(fired.is_empty(), "falling below re-arms both");
        assert_eq!(walk(&stages, &mut fired, 82.0), ["stage-50", "stage-80"]);
    }

    #[test]
    fn a_jump_fires_every_crossed_stage_and_asks_for_one_checkpoint() {
        let stages = parse_stages("80:warn,90:checkpoint,95:checkpoint,98:handoff").unwrap();
        let s = step(&stages, &[], Some(97.0), false);
        let names: Vec<_> = s.fire.iter().map(Stage::name).collect();
        assert_eq!(names, ["stage-80", "stage-90", "stage-95"]);
        assert_eq!(s.checkpoint_stage().unwrap().name(), "stage-95");
        let warn_only = step(&stages, &[], Some(85.0), false);
        assert!(warn_only.checkpoint_stage().is_none());
    }

    #[test]
    fn partial_fall_rearms_only_the_stages_above() {
        let stages = parse_stages("50,80,90").unwrap();
        let mut fired = Vec::new();
        walk(&stages, &mut fired, 95.0);
        let s = step(&stages, &fired, Some(60.0), false);
        assert_eq!(s.rearmed, ["stage-80", "stage-90"]);
        assert_eq!(s.kept.len(), 1);
        assert_eq!(s.kept[0].name, "stage-50");
        assert!(s.fire.is_empty());
    }

    #[test]
    fn exact_threshold_fires_and_unknown_after_compaction_rearms() {
        let stages = parse_stages("80").unwrap();
        let s = step(&stages, &[], Some(80.0), false);
        assert_eq!(s.fire.len(), 1);
        let fired = vec![FiredStage {
            at: 80.0,
            name: "stage-80".into(),
            action: StageAction::Warn,
            checkpoint: None,
        }];
        assert_eq!(step(&stages, &fired, None, false).kept, fired);
        let s = step(&stages, &fired, None, true);
        assert_eq!(s.rearmed, ["stage-80"]);
        assert!(s.kept.is_empty());
    }

    #[test]
    fn reached_is_the_highest_stage_at_or_below() {
        let stages = parse_stages("50,80").unwrap();
        assert_eq!(reached(&stages, Some(79.9)).unwrap().name(), "stage-50");
        assert_eq!(reached(&stages, Some(99.0)).unwrap().name(), "stage-80");
        assert!(reached(&stages, Some(10.0)).is_none());
        assert!(reached(&stages, None).is_none());
    }
}
