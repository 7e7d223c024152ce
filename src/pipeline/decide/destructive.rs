//! The look before a shell command that can discard uncommitted work: what to keep, from the
//! command as parsed (its threats, aliases read) and what git's status says.

use std::path::Path;

use crate::system::git::GitState;
use crate::transcripts::destructive::Kind;

/// What the look keeps before the command runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Look {
    /// `git stash drop|clear`: the stash entries kept.
    pub keep_stashes: bool,
    /// The command would discard some of the uncommitted work: a snapshot of it, then a
    /// `pre-destructive` checkpoint naming it.
    pub snapshot: bool,
}

/// Decides the look for `kinds` run from `cwd` in the repository at `top`, whose status is
/// `git` (None: git could not say; nothing is snapshotted then, the stash still kept).
pub fn look(kinds: &[Kind], git: Option<&GitState>, top: &Path, cwd: &Path) -> Look {
    Look {
        keep_stashes: kinds.contains(&Kind::StashDrop),
        snapshot: git.is_some_and(|g| crate::pipeline::snapshot::at_risk(kinds, g, top, cwd)),
    }
}

#[cfg(test)]
mod tests {
    //! `decide::look` fed a parsed command's threats and a constructed `git status`; no git.

    use super::*;
    use crate::system::git::DirtyFile;

    fn status(dirty: &[&str], branch: &str) -> GitState {
        GitState {
            branch: Some(branch.into()),
            dirty: dirty
                .iter()
                .map(|p| DirtyFile {
                    path: p.to_string(),
                    status: "modified".into(),
                })
                .collect(),
            ..GitState::default()
        }
    }

    fn look_at(kinds: &[Kind], git: Option<&GitState>) -> Look {
        look(kinds, git, Path::new("/r"), Path::new("/r"))
    }

    const SNAPSHOT: Look = Look {
        keep_stashes: false,
        snapshot: true,
    };

    #[test]
    fn a_hard_reset_snapshots_uncommitted_work_and_nothing_when_the_tree_is_clean() {
        let dirty = status(&["src/lexer.rs"], "main");
        assert_eq!(look_at(&[Kind::ResetHard], Some(&dirty)), SNAPSHOT);
        let clean = status(&[], "main");
        assert_eq!(look_at(&[Kind::ResetHard], Some(&clean)), Look::default());
    }

    #[test]
    fn discarding_paths_snapshots_only_when_they_cover_uncommitted_work() {
        let dirty = status(&["src/lexer.rs"], "main");
        let docs = [Kind::Discard(vec!["docs".into()])];
        assert_eq!(look_at(&docs, Some(&dirty)), Look::default());
        let src = [Kind::Remove(vec!["src".into()])];
        assert_eq!(look_at(&src, Some(&dirty)), SNAPSHOT);
    }

    #[test]
    fn a_force_push_snapshots_when_it_rewrites_the_current_branch() {
        let dirty = status(&["src/lexer.rs"], "main");
        let here = [Kind::PushForce(vec!["+refs/heads/main".into()])];
        assert_eq!(look_at(&here, Some(&dirty)), SNAPSHOT);
        let elsewhere = [Kind::PushForce(vec!["release".into()])];
        assert_eq!(look_at(&elsewhere, Some(&dirty)), Look::default());
    }

    #[test]
    fn a_stash_drop_keeps_the_stash_even_when_git_status_cannot_be_read() {
        let kept = Look {
            keep_stashes: true,
            snapshot: false,
        };
        let dirty = status(&["src/lexer.rs"], "main");
        assert_eq!(look_at(&[Kind::StashDrop], Some(&dirty)), kept);
        assert_eq!(look_at(&[Kind::StashDrop, Kind::ResetHard], None), kept);
    }
}
