//! Handing work to a fresh session: the resume prompt, the session chain (`chain.jsonl`),
//! acknowledgements, and keeping `.ctxkeep/` bounded (`retention`, the session chain among it).

pub mod ack;
pub mod chain;
pub mod prompt;
pub mod resume;
pub mod retention;

/// A project in a temp dir for the handoff modules' unit tests: initialized as `ctxkeep init`
/// makes it, with checkpoints written as `ctxkeep checkpoint` writes them.
#[cfg(test)]
pub(crate) mod test_project {
    use crate::domain::checkpoint::{Checkpoint, Fields};
    use crate::domain::workspace::Workspace;

    /// An initialized project (no git repository, no merge driver); the dir goes with the guard.
    pub(crate) fn initialized() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        let settings = crate::install::init::Settings {
            no_merge_driver: true,
            ..Default::default()
        };
        crate::install::init::init(&ws, settings, &ws.out).unwrap();
        (dir, ws)
    }

    /// The fields a hand-written checkpoint gives, with `next` as its next action.
    pub(crate) fn fields(next: &str) -> Fields {
        Fields {
            phase: Some("implementing".into()),
            active_task: Some("make the widget parser accept blank lines".into()),
            controlling_agent: Some("claude-code".into()),
            next_action: Some(next.into()),
            ..Default::default()
        }
    }

    /// Writes a checkpoint of `fields` by hand, in the default session.
    pub(crate) fn checkpoint(ws: &Workspace, fields: Fields) -> Checkpoint {
        crate::pipeline::record::by_hand(
            ws,
            crate::pipeline::record::Request {
                fields,
                trigger: "manual",
                session: crate::domain::session::DEFAULT_SESSION,
                transcript: None,
            },
            &ws.out,
        )
        .unwrap()
    }
}
