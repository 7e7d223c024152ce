//! Before a shell command that can discard uncommitted work: what to keep decided
//! (`decide::look`) from the command and git's status, then the work kept in git and a
//! `pre-destructive` checkpoint naming it.

use serde_json::json;

use super::Hook;
use crate::domain::session;
use crate::pipeline::decide;

impl Hook {
    /// Before a shell command that can discard uncommitted work (the payload's
    /// check found one): read (the command's threats, git's aliases when it runs one; the
    /// repository and its status) → `decide::look` → the look performed: before `git stash
    /// drop|clear` the stash entries are kept; when the command would discard some of the work,
    /// it is stored in git first (without the lock: a snapshot writes only objects and a ref),
    /// then a `pre-destructive` checkpoint names it (the lock waited for at most
    /// [`DESTRUCTIVE_LOCK_WAIT`]). The command is never held up by more than that, and
    /// never blocked. What could not be kept is an `error` event and one line
    /// to the model.
    pub(super) fn before_destructive(&self, command: &str) -> anyhow::Result<Option<String>> {
        if !self.reading.config.snapshots {
            return Ok(None);
        }
        let cwd = self
            .reading
            .payload
            .cwd
            .clone()
            .unwrap_or_else(|| self.ws.root.clone());
        let kinds = crate::pipeline::snapshot::threats(command, &self.ws.root, &cwd);
        if kinds.is_empty() {
            // `git checkout main`: a switch, found without starting git.
            return Ok(None);
        }
        let Ok(top) = crate::system::git::toplevel(&self.ws.root) else {
            return Ok(None);
        };
        let exclude = crate::system::fsutil::resolve_target(&self.ws.state_path);
        let git = crate::system::git::state(&self.ws.root, std::slice::from_ref(&exclude))
            .ok()
            .map(|mut g| {
                crate::pipeline::snapshot::add_ignored_submodules(&mut g, &top);
                g
            });
        let look = decide::look(&kinds, git.as_ref(), &top, &cwd);
        let mut not_kept: Vec<String> = Vec::new();
        if look.keep_stashes {
            if let Err(e) = crate::system::git::snapshot::keep_stashes(&top) {
                not_kept.push(format!("the stash: {e}"));
            }
        }
        // Without git's status nothing more is kept, nor said.
        let Some(g) = git else {
            return Ok(None);
        };
        let (failure, busy) = match look.snapshot {
            true => self.snapshot_before(&g, command, &mut not_kept),
            false => (None, false),
        };
        if failure.is_none() && not_kept.is_empty() {
            return Ok(None);
        }
        Ok(self.say_not_kept(&not_kept, failure, busy))
    }

    /// The uncommitted work in `g` stored in git, then a `pre-destructive` checkpoint naming
    /// it; what the snapshot left out goes into `not_kept`. Returns why it failed, if it did,
    /// and whether the lock was found busy.
    fn snapshot_before(
        &self,
        g: &crate::system::git::GitState,
        command: &str,
        not_kept: &mut Vec<String>,
    ) -> (Option<String>, bool) {
        let current = self.reading.sf.fm.checkpoint.as_ref();
        let (taken, pending) =
            match crate::pipeline::snapshot::take_before(&self.ws, g, current, command) {
                Ok(taken) => taken,
                Err(e) => {
                    not_kept.push(format!("the uncommitted work: {e}"));
                    return (Some(format!("no snapshot before `{command}`: {e}")), false);
                }
            };
        not_kept.extend(taken.left_out.iter().cloned());
        let budget = session::load(&self.ws, &self.reading.session)
            .ok()
            .flatten()
            .and_then(|s| s.budget());
        let written = self.auto_checkpoint(
            crate::pipeline::snapshot::TRIGGER,
            budget,
            json!({ "session": self.reading.session, "agent": self.reading.agent, "command": command,
                    "snapshot": taken.snapshot }),
            true,
        );
        match written {
            // The checkpoint's own ref holds it now.
            Ok(_) => {
                if let Some(name) = pending {
                    let _ = crate::system::git::snapshot::drop_ref(&self.ws.root, &name);
                }
                (None, false)
            }
            // The work is kept all the same, under the pending ref `restore` finds.
            Err(e) => (
                Some(format!(
                    "no checkpoint before `{command}` (the snapshot is kept): {e:#}"
                )),
                crate::system::error::code_name_of(&e) == "lock_timeout",
            ),
        }
    }

    /// What could not be kept: an `error` event and one line to the model (kept in the
    /// session's record for an agent whose pre-tool answer reaches none). Even under
    /// `--strict` (exit 2 would block the call): the failure is logged, the command runs. A
    /// lock just found busy is not waited for again.
    fn say_not_kept(
        &self,
        not_kept: &[String],
        failure: Option<String>,
        busy: bool,
    ) -> Option<String> {
        let line =
            (!not_kept.is_empty()).then(|| crate::pipeline::snapshot::left_out_line(not_kept));
        // An agent whose pre-tool answer reaches no model gets the line at its next after-tool
        // event instead, kept in the session's record until then.
        let waits = !self.reading.agent.policy().pre_tool_context_read();
        let batch = (!busy)
            .then(|| {
                crate::pipeline::apply::Batch::open(
                    &self.ws,
                    &self.reading.session,
                    self.reading.config.window,
                )
                .ok()
            })
            .flatten();
        if let Some(mut batch) = batch {
            let message = failure.or_else(|| line.clone()).unwrap_or_default();
            let message = crate::system::redact::redact(&message).into_owned();
            self.log(
                batch.lock(),
                "error",
                json!({
                    "command": "hook", "agent": self.reading.agent, "hook_event": self.reading.payload.event,
                    "session": self.reading.session, "code": "snapshot_incomplete",
                    "message": message, "left_out": not_kept,
                }),
            );
            if let (true, Some(line)) = (waits, &line) {
                batch.session_mut().note_waits(line);
                batch.touch();
            }
            let _ = batch.finish();
        }
        line.filter(|_| !waits)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::pipeline::harness::Project;
    use crate::pipeline::hook::samples::{project, AGENT};

    fn git(p: &Project, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(p.root())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}");
    }

    fn before(p: &Project, command: &str) -> crate::pipeline::harness::Ran {
        p.event(AGENT, "PreToolUse")
            .with("tool_name", json!("Bash"))
            .with("tool_input", json!({ "command": command }))
            .run()
    }

    #[test]
    fn uncommitted_work_is_kept_and_named_in_a_checkpoint_before_a_hard_reset() {
        let p = project();
        git(&p, &["init", "-q", "-b", "main"]);
        p.write("lexer.rs", "fn lex() {}\n");
        git(&p, &["add", "-A"]);
        git(&p, &["commit", "-qm", "initial"]);
        p.checkpoint("write the parser");
        p.write("lexer.rs", "fn lex() { todo!() }\n");
        let ran = before(&p, "git reset --hard");
        assert_eq!(ran.error, None);
        // The command goes ahead; nothing is said when everything was kept.
        assert_eq!(ran.reply, None);
        let written = p
            .archived("ckpt-0002")
            .expect("a pre-destructive checkpoint");
        assert_eq!(written["trigger"], "pre-destructive");
        assert!(written["git"]["snapshot"].is_object(), "{written}");
    }

    #[test]
    fn outside_a_repository_a_destructive_command_is_let_through_untouched() {
        let p = project();
        p.checkpoint("write the parser");
        let ran = before(&p, "git reset --hard");
        assert_eq!((ran.reply, ran.error), (None, None));
        assert!(ran.written.is_empty(), "{:?}", ran.written);
    }
}
