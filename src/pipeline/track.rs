//! `ctxkeep track`'s pass of the pipeline, and the loop step it shares with a hook's track
//! event: one batch (the lock taken once, the session written once), loop detection first (a
//! stage's checkpoint then has the calls' outcomes), then the reading; the stages'
//! instruction is rendered after the lock, as a hook's reply is.

use crate::agents::Agent;
use crate::domain::config::Config;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::pipeline::apply::Batch;
use crate::pipeline::loop_detection::{self, Feed};
use crate::pipeline::read::TranscriptView;
use crate::pipeline::tracking::{self, Applied, Options, Reading};
use crate::system::output::Output;
use crate::transcripts::activity::{LoopHit, LoopLimits};

/// What `track` did: the reading applied, the loops found in the transcript and what is said
/// to the agent (the stages' instruction, then the loops').
pub struct Tracked {
    pub applied: Applied,
    pub loops: Vec<LoopHit>,
    pub instructions: Vec<String>,
}

/// Applies `reading` to session `id` as `ctxkeep track` does; with a transcript (`view`, from
/// `agent` when it is known), loop detection reads what it gained since the session's last
/// reading.
#[allow(clippy::too_many_arguments)]
pub fn by_hand(
    ws: &Workspace,
    sf: &StateFile,
    config: &Config,
    id: &str,
    reading: Reading,
    options: Options<'_>,
    agent: Option<Agent>,
    out: &Output,
) -> anyhow::Result<Tracked> {
    let mut batch = Batch::open(ws, id, config.window)?;
    let mut loops = Vec::new();
    let mut loop_texts = Vec::new();
    if let (Some(view), Some(limits)) = (options.view, config.loop_limits) {
        let feed = Feed {
            session: id,
            window: config.window,
            transcript: view.path().map(|p| (p, agent)),
            tool: None,
            cwd: None,
            reaches_model: true,
        };
        for (hit, text) in loops_in(ws, &mut batch, view, &feed, &limits)? {
            loops.push(hit);
            loop_texts.push(text);
        }
    }
    let applied = tracking::apply_batch(ws, &mut batch, sf, config, reading, options, out)?;
    batch.finish()?;
    let mut instructions = tracking::instructions(ws, config, &applied)?;
    instructions.extend(loop_texts);
    Ok(Tracked {
        applied,
        loops,
        instructions,
    })
}

/// Loop detection's step on an event's batch: feeds it the calls the transcript gained since
/// the last event (through the event's `view`) and the call `feed` reports; returns the loops
/// to give now with their instruction. The session is marked changed when loop detection's
/// state changed.
pub fn loops_in(
    ws: &Workspace,
    batch: &mut Batch<'_>,
    view: &TranscriptView,
    feed: &Feed<'_>,
    limits: &LoopLimits,
) -> anyhow::Result<Vec<(LoopHit, String)>> {
    // What loop detection kept before this event: the record as loaded, unless a step
    // changed it since (then a copy; copying it costs more than the rest of the check).
    let copy = match batch.on_disk() {
        Some(disk) if disk.loops() == batch.session().loops() => None,
        _ => Some(batch.session().loops().clone()),
    };
    let (lock, s) = batch.parts();
    let told_before = s.loops_told().len();
    let steps = view.new_calls(ws, s);
    let hits = loop_detection::check_in(ws, lock, s, feed, limits, steps)?;
    let before = copy.as_ref().or(batch.on_disk().map(|d| d.loops()));
    let s = batch.session();
    if before != Some(s.loops()) || s.loops_told().len() != told_before {
        batch
            .session_mut()
            .touched(&crate::system::clock::now_rfc3339());
        batch.touch();
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::hook::samples::{project, turn, AGENT};

    fn track(p: &crate::pipeline::harness::Project) -> Tracked {
        let ws = p.workspace();
        let sf = StateFile::load(&ws.state_path).unwrap();
        let config = Config::from_front(&sf.fm);
        let view = TranscriptView::new(Some(p.transcript()), AGENT);
        let usage = view.usage().unwrap().unwrap();
        let path = p.transcript().display().to_string();
        let reading = Reading::Transcript(Box::new(usage), path);
        let options = Options {
            view: Some(&view),
            ..Options::default()
        };
        by_hand(
            &ws,
            &sf,
            &config,
            "s1",
            reading,
            options,
            Some(AGENT),
            &Output::SILENT,
        )
        .unwrap()
    }

    #[test]
    fn track_fires_a_stage_the_transcript_crossed_once_and_says_it_as_a_hook_would() {
        let p = project();
        p.checkpoint("write the parser");
        p.append(&turn(1, 140_000, "cargo test"));
        let tracked = track(&p);
        assert_eq!(tracked.applied.session.tokens(), Some(140_000));
        let names: Vec<_> = tracked
            .applied
            .fired
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["stage-80"]);
        assert_eq!(tracked.instructions.len(), 1);
        assert!(
            tracked.instructions[0].starts_with(
                "ctxkeep: context is at 70.0 % (140000 of 200000 tokens), 87.5 % of the 160000"
            ),
            "{}",
            tracked.instructions[0]
        );
        assert_eq!(p.logged("stage").len(), 1);
        // The same reading again: nothing new fires, nothing is said.
        let again = track(&p);
        assert!(again.applied.fired.is_empty());
        assert!(again.instructions.is_empty());
    }
}
