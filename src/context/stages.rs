//! Which stages fire as usage moves: each fires once per fill, as usage
//! climbs past it, and re-arms only after a compaction (or a `/clear`) or
//! when usage drops well below it, by [`REARM_MARGIN`] points: a dip of a
//! few thousand tokens (a cleared tool output) and the climb back fire
//! nothing again. Pure logic; `track` does the writing.

use serde::{Deserialize, Serialize};

use crate::system::error::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageAction {
    Warn,
    Checkpoint,
    Handoff,
}

impl std::fmt::Display for StageAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StageAction::Warn => "warn",
            StageAction::Checkpoint => "checkpoint",
            StageAction::Handoff => "handoff",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Stage {
    /// Percent of the window at which the stage fires.
    #[serde(serialize_with = "whole_as_integer")]
    pub at: f64,
    pub action: StageAction,
    /// Name used as the checkpoint trigger; default `stage-<at>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Writes 80.0 as `80`, so the config reads as the user wrote it.
pub(crate) fn whole_as_integer<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        s.serialize_i64(*x as i64)
    } else {
        s.serialize_f64(*x)
    }
}

impl Stage {
    pub fn name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("stage-{}", crate::system::output::fmt_num(self.at)))
    }
}

pub const DEFAULT_STAGES: &str = "80:warn,90:checkpoint,95:checkpoint,98:handoff";

/// Parses `PCT[:ACTION],...` (ACTION defaults to warn), sorted by percent.
pub fn parse_stages(spec: &str) -> Result<Vec<Stage>, Error> {
    let mut stages = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (pct, action) = item.split_once(':').unwrap_or((item, "warn"));
        let at: f64 = pct
            .trim()
            .trim_end_matches('%')
            .parse()
            .ok()
            .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "--stages: '{item}': the percent must be a number in (0, 100]"
                ))
            })?;
        let action = match action.trim() {
            "warn" => StageAction::Warn,
            "checkpoint" => StageAction::Checkpoint,
            "handoff" => StageAction::Handoff,
            other => {
                return Err(Error::Usage(format!(
                    "--stages: '{item}': unknown action '{other}' (use warn, checkpoint or handoff)"
                )))
            }
        };
        if stages.iter().any(|s: &Stage| s.at == at) {
            return Err(Error::Usage(format!("--stages: {pct}% is given twice")));
        }
        stages.push(Stage {
            at,
            action,
            name: None,
        });
    }
    if stages.is_empty() {
        return Err(Error::Usage(
            "--stages: give at least one PCT[:ACTION]".into(),
        ));
    }
    crate::system::sorting::sort_by(&mut stages, |a, b| a.at.total_cmp(&b.at));
    Ok(stages)
}

/// A stage that has fired and stays fired until usage drops below it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FiredStage {
    pub at: f64,
    pub name: String,
    pub action: StageAction,
    /// The checkpoint written for it, if any.
    pub checkpoint: Option<String>,
    /// The token count it fired at: what a stage given later says when the
    /// session knows no token count then (a resumed conversation's first hook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

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

/// How far below a fired stage usage must drop, in points of the percent
/// stages are measured with (10 % of the limit by default), before the stage
/// can fire again without a compaction.
pub const REARM_MARGIN: f64 = 10.0;

/// Moves from the `fired` set to `percent`. `None` (a token count unknown since a
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
    // A compaction empties the context: every stage is armed again.
    let (fired, rearmed_now): (&[FiredStage], Vec<String>) = if compacted {
        (&[], fired.iter().map(|f| f.name.clone()).collect())
    } else {
        (fired, Vec::new())
    };
    let mut sorted: Vec<&Stage> = stages.iter().collect();
    crate::system::sorting::sort_by(&mut sorted, |a, b| a.at.total_cmp(&b.at));
    let was_fired = |s: &Stage| fired.iter().any(|f| f.name == s.name());
    let fire = sorted
        .iter()
        .filter(|s| s.at <= p && !was_fired(s))
        .map(|s| (*s).clone())
        .collect();
    // A fired stage stays fired until usage drops the margin below it; one no
    // longer configured is dropped with the rest.
    let (kept, gone): (Vec<FiredStage>, Vec<FiredStage>) = fired
        .iter()
        .cloned()
        .partition(|f| f.at - REARM_MARGIN <= p && stages.iter().any(|s| s.name() == f.name));
    let mut rearmed = rearmed_now;
    rearmed.extend(gone.into_iter().map(|f| f.name));
    Step {
        fire,
        rearmed,
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

    #[test]
    fn stages_parse_and_sort() {
        let st = parse_stages("95:checkpoint, 80 ,98:handoff").unwrap();
        assert_eq!(
            st.iter().map(|s| s.at).collect::<Vec<_>>(),
            vec![80.0, 95.0, 98.0]
        );
        assert_eq!(st[0].action, StageAction::Warn);
        assert_eq!(st[0].name(), "stage-80");
        assert!(parse_stages("120").is_err());
        assert!(parse_stages("80:explode").is_err());
        assert!(parse_stages("80,80").is_err());
    }

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
                tokens: None,
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
        assert!(fired.is_empty(), "dropping below re-arms both");
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
    fn partial_drop_rearms_only_the_stages_above() {
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
    fn a_dip_and_climb_fires_nothing_again_a_drop_past_the_margin_does() {
        let stages = parse_stages("80:warn,90:checkpoint,95:checkpoint,98:handoff").unwrap();
        let mut fired = Vec::new();
        assert_eq!(
            walk(&stages, &mut fired, 95.5),
            ["stage-80", "stage-90", "stage-95"]
        );
        // A cleared tool output: a few thousand tokens down, then back up.
        for p in [94.0, 96.0, 93.8, 95.2, 88.0, 97.0] {
            assert!(walk(&stages, &mut fired, p).is_empty(), "{p}");
        }
        // Well below (more than 10 points under stage-95, not under stage-90):
        // stage-95 re-arms, the others stay fired.
        assert!(walk(&stages, &mut fired, 84.0).is_empty());
        assert_eq!(
            fired.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["stage-80", "stage-90"]
        );
        assert_eq!(walk(&stages, &mut fired, 95.0), ["stage-95"]);
    }

    #[test]
    fn a_compaction_rearms_every_stage_whatever_the_usage() {
        let stages = parse_stages("80,90").unwrap();
        let mut fired = Vec::new();
        walk(&stages, &mut fired, 91.0);
        let s = step(&stages, &fired, Some(85.0), true);
        assert_eq!(s.rearmed, ["stage-80", "stage-90"]);
        assert_eq!(
            s.fire.iter().map(Stage::name).collect::<Vec<_>>(),
            ["stage-80"]
        );
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
            tokens: None,
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
