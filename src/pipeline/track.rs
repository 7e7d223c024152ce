//! `ctxkeep track`'s pass of the pipeline: read (loop detection's new calls, through the
//! transcript's view, and the limit, under the lock taken once), decide (`decide::by_hand`:
//! loop detection, then the usage reading, pure), apply (`apply::run`; the session written
//! once); the stages' instruction is rendered after the lock, as a hook's reply is.

use crate::agents::Agent;
use crate::domain::config::Config;
use crate::domain::session::Session;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::pipeline::apply::Batch;
use crate::pipeline::decide;
use crate::pipeline::tracking::{self, Applied, Options, Reading};
use crate::system::output::Output;
use crate::transcripts::activity::LoopHit;

/// What `track` did: the reading applied, the loops found in the transcript and what is said
/// to the agent (the stages' instruction, then the loops').
pub struct Tracked {
    pub applied: Applied,
    pub loops: Vec<LoopHit>,
    pub instructions: Vec<String>,
}

/// Applies `reading` to session `id` as `ctxkeep track` does; with a transcript (`options.view`),
/// loop detection reads what it gained since the session's last reading. `_agent`: the agent
/// that wrote it, when known (the view reads it as that agent's).
#[allow(clippy::too_many_arguments)]
pub fn by_hand(
    ws: &Workspace,
    sf: &StateFile,
    config: &Config,
    id: &str,
    reading: Reading,
    options: Options<'_>,
    _agent: Option<Agent>,
    out: &Output,
) -> anyhow::Result<Tracked> {
    let mut batch = Batch::open(ws, id, config.window)?;
    let had_record = batch.recorded();
    let env = |name: &str| std::env::var(name).ok();
    let now = crate::system::clock::now_rfc3339();
    let (decided, loops) = {
        let (_, s, on_disk) = batch.split();
        // Read, under the lock.
        let calls = match (options.view, config.loop_limits) {
            (Some(view), Some(limits)) => {
                let calls = crate::pipeline::read::calls_read(ws, view, s, on_disk, None, None);
                Some((calls, limits))
            }
            _ => None,
        };
        let facts = tracking::usage_facts(&reading, &options, sf, config, had_record, &env, &now);
        let read = crate::pipeline::read::usage_read(ws, s, facts, config);
        // Decide.
        let current = std::mem::replace(s, Session::new(id, config.window));
        let decided = decide::by_hand(current, calls, read);
        (decided.usage, decided.loops)
    };
    // Apply.
    let (lock, s) = batch.parts();
    let applied = tracking::applied(ws, lock, s, decided, &reading, sf, options, out)?;
    batch.touch();
    batch.finish()?;
    let mut instructions = tracking::instructions(ws, config, &applied)?;
    let (loops, texts): (Vec<_>, Vec<_>) = loops.into_iter().unzip();
    instructions.extend(texts);
    Ok(Tracked {
        applied,
        loops,
        instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::hook::samples::{project, turn, AGENT};
    use crate::pipeline::read::TranscriptView;

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
