//! `ctxkeep demo`: the whole loop run for real in a throwaway project, by
//! this very binary, so that a newcomer sees each command and what it says.
//! Nothing outside the demo's own folder is read or written.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::system::error::Error;

/// The transcript `track` reads in the demo: a short Claude Code session of
/// our own whose last turn crosses the 80 % stage.
const TRANSCRIPT: &str = include_str!("../../assets/demo-session.jsonl");

const PARSER: &str = "/// Splits a file into its front matter and body.\npub fn split_front(text: &str) -> Option<(&str, &str)> {\n    let rest = text.strip_prefix(\"---\\n\")?;\n    rest.split_once(\"\\n---\\n\")\n}\n";

const NEXT: &str = "run cargo test and fix split_front for CRLF input";

/// One command of the demo and what it printed.
#[derive(Debug, Serialize)]
pub struct Step {
    /// What it is for, in a few words.
    pub why: &'static str,
    /// As a user would type it.
    pub command: String,
    pub exit_code: i32,
    /// stdout and stderr, interleaved as they were written.
    pub output: String,
}

/// Runs the demo in `dir` (empty or new): a git repository in
/// `dir/project`, the transcript beside it. `on_step` sees each step as it
/// ends. A step that exits otherwise than it should stops the demo.
pub fn run(dir: &Path, on_step: &mut dyn FnMut(&Step)) -> anyhow::Result<Vec<Step>> {
    let project = dir.join("project");
    crate::system::fsutil::ensure_dir(&project)?;
    std::fs::create_dir_all(project.join("src"))
        .map_err(|e| Error::io(&project, "cannot create the demo project", e))?;
    write(&project.join("src/parse.rs"), PARSER)?;
    write(
        &project.join("README.md"),
        "# parser\n\nA front-matter splitter.\n",
    )?;
    let transcript = dir.join("session.jsonl");
    write(&transcript, TRANSCRIPT)?;
    // The checkpoint names the agent that wrote the demo's transcript.
    let writer = crate::agents::detect(&transcript)?.as_str();
    git_setup(&project);

    let me =
        std::env::current_exe().map_err(|e| Error::io("ctxkeep", "cannot find this program", e))?;
    let mut steps = Vec::new();
    let plan: Vec<(&'static str, Vec<&str>, i32)> = vec![
        ("create project-state.md and .ctxkeep/", vec!["init"], 0),
        (
            "record where the work stands",
            vec![
                "checkpoint",
                "--phase",
                "parser",
                "--task",
                "accept CRLF line endings in src/parse.rs",
                "--agent",
                writer,
                "--next",
                NEXT,
            ],
            0,
        ),
        (
            "read how full the agent's context is from its transcript; the 80 % stage fires",
            vec!["track", "--transcript", "../session.jsonl"],
            0,
        ),
        (
            "the gauge, the stage and the last checkpoint",
            vec!["status"],
            0,
        ),
        (
            "the CI gate: could someone who never saw the conversation act on it?",
            vec!["verify"],
            0,
        ),
        (
            "a next action that leans on the lost conversation...",
            vec![
                "checkpoint",
                "--next",
                "fix the remaining case as discussed",
            ],
            0,
        ),
        ("...is refused by the gate (exit 1)", vec!["verify"], 1),
        (
            "say it plainly again",
            vec!["checkpoint", "--next", NEXT],
            0,
        ),
        ("passes again", vec!["verify"], 0),
        (
            "the prompt a fresh session starts from (it confirms in its reply, by the marker line the prompt asks for)",
            vec!["resume"],
            0,
        ),
    ];
    for (why, args, expected) in plan {
        let step = run_step(&me, &project, why, &args)?;
        on_step(&step);
        let code = step.exit_code;
        let command = step.command.clone();
        steps.push(step);
        if code != expected {
            return Err(Error::Refused(format!(
                "demo step `{command}` exited {code}, expected {expected}; its project is in {}",
                dir.display()
            ))
            .into());
        }
    }
    Ok(steps)
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::io(path, "cannot write", e))
}

/// A repository with one commit, so the checkpoint records git state. The
/// demo still runs without git (ctxkeep then says the git part is left out).
fn git_setup(project: &Path) {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(project)
            .args([
                "-c",
                "user.name=ctxkeep demo",
                "-c",
                "user.email=demo@example.invalid",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let _ = git(&["init", "-q"]) && git(&["add", "-A"]) && git(&["commit", "-q", "-m", "parser"]);
}

fn run_step(
    me: &PathBuf,
    project: &Path,
    why: &'static str,
    args: &[&str],
) -> anyhow::Result<Step> {
    let (mut reader, writer) = std::io::pipe()?;
    let mut cmd = Command::new(me);
    cmd.args(args)
        .current_dir(project)
        // The user's own project and session must not leak in.
        .env_remove("CTXKEEP_STATE")
        .env_remove("CTXKEEP_SESSION")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("PRE_COMMIT")
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    if crate::system::output::ascii() {
        cmd.env("CTXKEEP_ASCII", "1");
    }
    let mut child = cmd.spawn().map_err(|e| Error::io(me, "cannot run", e))?;
    // The command's copies of the pipe's writer go with it.
    drop(cmd);
    let mut output = String::new();
    reader.read_to_string(&mut output)?;
    let status = child.wait()?;
    Ok(Step {
        why,
        command: shown(args),
        exit_code: status.code().unwrap_or(-1),
        output,
    })
}

/// `ctxkeep ARGS` as it would be typed, quoted where the shell needs it.
fn shown(args: &[&str]) -> String {
    let mut s = String::from("ctxkeep");
    for a in args {
        s.push(' ');
        if !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
        {
            s.push_str(a);
        } else {
            s.push('"');
            s.push_str(
                &a.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('$', "\\$")
                    .replace('`', "\\`"),
            );
            s.push('"');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_as_typed() {
        assert_eq!(shown(&["verify"]), "ctxkeep verify");
        assert_eq!(
            shown(&["checkpoint", "--next", "fix \"it\" as discussed"]),
            "ctxkeep checkpoint --next \"fix \\\"it\\\" as discussed\""
        );
    }
}
