//! Handing work to a fresh session: the resume prompt, the session chain (`chain.jsonl`),
//! acknowledgements, and keeping `.ctxkeep/` bounded (`retention`, the session chain among it).

pub mod ack;
pub mod chain;
pub mod prompt;
pub mod resume;
pub mod retention;

/// A project in a temp dir for unit tests: initialized as `ctxkeep init` makes it (its state
/// file written here, below the wings that run `init` and write checkpoints: a test that writes
/// one lives above, with `pipeline::harness::checkpoint`).
#[cfg(test)]
pub(crate) mod test_project {
    use crate::domain::checkpoint::Fields;
    use crate::domain::workspace::Workspace;

    /// The state file `ctxkeep init` writes with the default settings, before any checkpoint.
    pub(crate) const INITIALIZED: &str = "---
ctxkeep: 1
window: 200000
encoding: o200k_base
stages:
  - {at: 80, action: warn}
  - {at: 90, action: checkpoint}
  - {at: 95, action: checkpoint}
  - {at: 98, action: handoff}
---
# Project state

<!-- ctxkeep:begin -->
No checkpoint yet.
<!-- ctxkeep:end -->
";

    /// An initialized project (no git repository, no merge driver); the dir goes with the guard.
    pub(crate) fn initialized() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project-state.md"), INITIALIZED).unwrap();
        std::fs::create_dir(dir.path().join(".ctxkeep")).unwrap();
        let ws = Workspace::in_dir(dir.path());
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
}
