//! One reading of the repository per command (docs/performance.md): a checkpoint and the
//! checks it runs on what it wrote, `verify`, `resume` and an automatic checkpoint each run
//! `git status` once, and none lists the whole tree with `git ls-files`.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::support::Project;
use crate::transcripts::*;

/// A project whose git is a wrapper logging each call's arguments (one line per call).
struct Logged {
    p: Project,
    git: std::path::PathBuf,
    log: std::path::PathBuf,
}

impl Logged {
    fn new() -> Logged {
        let p = Project::initialized();
        for i in 0..20 {
            p.write(&format!("src/m{}/f{i}.rs", i % 4), "pub fn f() {}\n");
        }
        p.commit_all("twenty files");
        // Uncommitted work: one file changed, one new.
        p.write("src/m0/f0.rs", "pub fn f() -> u8 { 1 }\n");
        p.write("notes/new.txt", "new\n");
        let git = p.home().join("git-logged");
        let log = p.home().join("git.log");
        let real = real_git();
        std::fs::write(
            &git,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >>'{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.trim()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
        Logged { p, git, log }
    }

    /// The git calls `ctxkeep ARGS` made (stdin: `input`), `-C DIR --no-pager` left out.
    fn calls(&self, args: &[&str], input: &str) -> Vec<String> {
        let _ = std::fs::remove_file(&self.log);
        let out = self
            .p
            .ctxkeep(args)
            .env("CTXKEEP_GIT", &self.git)
            .write_stdin(input.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.code().is_some_and(|c| c == 0 || c == 1),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| match l.split_once("--no-pager ") {
                Some((_, rest)) => rest.to_string(),
                None => l.to_string(),
            })
            .collect()
    }
}

/// The git the tests' wrappers hand each call to.
fn real_git() -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn count(calls: &[String], prefix: &str) -> usize {
    calls.iter().filter(|c| c.starts_with(prefix)).count()
}

/// No `git ls-files` of the whole tree: only with pathspecs after `--`.
fn lists_whole_tree(calls: &[String]) -> bool {
    calls
        .iter()
        .any(|c| c.starts_with("ls-files") && !c.contains(" -- "))
}

#[test]
fn a_checkpoint_and_the_checks_on_what_it_wrote_read_the_repository_once() {
    let l = Logged::new();
    let calls = l.calls(
        &[
            "checkpoint",
            "--phase",
            "build",
            "--task",
            "read git once",
            "--agent",
            "test",
            "--next",
            "finish src/m0/f0.rs, then f5.rs and the missing gone.rs",
        ],
        "",
    );
    assert_eq!(count(&calls, "status"), 1, "{calls:#?}");
    assert_eq!(count(&calls, "rev-parse --show-toplevel"), 1, "{calls:#?}");
    assert!(!lists_whole_tree(&calls), "{calls:#?}");
    // The checks still found what git tracks by a bare name and what it does not.
    let (v, _) = l.p.json(&["verify"]);
    let text = v.to_string();
    assert!(text.contains("gone.rs"), "{v}");
    assert!(!text.contains("`f5.rs`"), "{v}");
}

/// A hand checkpoint starts git twice, the status and one `rev-parse` beside it: the snapshot
/// refs are counted from git's files (listed only when there are more than retention keeps,
/// loose or packed), the merge driver's config is not read (it can only warn), the snapshots'
/// index comes from the same `rev-parse`.
#[test]
fn a_hand_checkpoint_starts_git_twice_and_lists_the_snapshot_refs_only_when_some_may_go() {
    let l = Logged::new();
    // One archived checkpoint kept: each checkpoint prunes one, and then looks at the refs.
    for _ in 0..2 {
        l.p.checkpoint(&[]).success();
    }
    let text = l.p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nretention: {checkpoints: 1}\n",
        1,
    );
    l.p.write("project-state.md", text);
    let hand = ["checkpoint", "--trigger", "test"];
    let calls = l.calls(&hand, "");
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert_eq!(count(&calls, "status"), 1, "{calls:#?}");
    assert_eq!(count(&calls, "rev-parse --show-toplevel"), 1, "{calls:#?}");
    // Snapshot refs under the 50 retention keeps, loose and packed: still not listed.
    let head = l.p.git(&["rev-parse", "HEAD"]);
    let head = head.trim();
    for n in 0..30 {
        l.p.git(&[
            "update-ref",
            &format!("refs/ctxkeep/snapshots/p-{n:02}"),
            head,
        ]);
    }
    l.p.git(&["pack-refs", "--all"]);
    for n in 0..20 {
        l.p.git(&[
            "update-ref",
            &format!("refs/ctxkeep/snapshots/l-{n:02}"),
            head,
        ]);
    }
    let calls = l.calls(&hand, "");
    assert_eq!(count(&calls, "for-each-ref"), 0, "{calls:#?}");
    assert_eq!(calls.len(), 2, "{calls:#?}");
    // One more, and some may go: git lists them.
    l.p.git(&["update-ref", "refs/ctxkeep/snapshots/l-20", head]);
    let calls = l.calls(&hand, "");
    assert_eq!(count(&calls, "for-each-ref"), 1, "{calls:#?}");
}

#[test]
fn verify_and_resume_read_the_status_once() {
    let l = Logged::new();
    l.p.checkpoint(&[]).success();
    l.p.write("notes/later.txt", "later\n");
    let verify = l.calls(&["verify"], "");
    assert_eq!(count(&verify, "status"), 1, "{verify:#?}");
    assert_eq!(
        count(&verify, "rev-parse --show-toplevel"),
        1,
        "{verify:#?}"
    );
    assert!(!lists_whole_tree(&verify), "{verify:#?}");
    // The change since the checkpoint is still reported.
    let (v, _) = l.p.json(&["verify"]);
    assert!(v.to_string().contains("notes/later.txt"), "{v}");

    let resume = l.calls(&["resume"], "");
    assert_eq!(count(&resume, "status"), 1, "{resume:#?}");
    assert_eq!(
        count(&resume, "rev-parse --show-toplevel"),
        1,
        "{resume:#?}"
    );
}

#[test]
fn an_automatic_checkpoint_reads_the_status_once() {
    let l = Logged::new();
    l.p.checkpoint(&[]).success();
    let lines = vec![
        claude_user("Read the repository once"),
        claude_tool_use("t1", "Bash", r#"{"command":"cargo test"}"#, 30_000),
        claude_tool_result("t1", false, "ok"),
    ];
    let transcript = l.p.home().join("t.jsonl");
    std::fs::write(&transcript, jsonl(&lines)).unwrap();
    let payload = json!({
        "session_id": "sess-1",
        "transcript_path": transcript,
        "cwd": l.p.root(),
        "hook_event_name": "PreCompact",
        "trigger": "manual",
    });
    let calls = l.calls(&["hook", "claude-code"], &payload.to_string());
    assert_eq!(count(&calls, "status"), 1, "{calls:#?}");
    assert!(!lists_whole_tree(&calls), "{calls:#?}");
    assert!(
        l.p.state().contains("trigger: pre-compact"),
        "{}",
        l.p.state()
    );
}

/// A hand checkpoint asks git for the status as soon as it holds the lock, before it reads the
/// state file: one refused after that (here a file that is no longer ctxkeep's) stops the git
/// it started, changes nothing and says what it always said.
#[test]
fn a_checkpoint_refused_after_asking_git_leaves_no_git_running_and_the_file_as_it_was() {
    let p = Project::initialized();
    p.commit_all("start");
    let finished = p.home().join("git.finished");
    let real = real_git();
    // A slow git, which says when it got past its wait: never, when it is stopped.
    let git = p.home().join("git-slow");
    std::fs::write(
        &git,
        format!(
            "#!/bin/sh\nsleep 1\necho \"$*\" >>'{}'\nexec '{}' \"$@\"\n",
            finished.display(),
            real.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = "# Notes\n\nNo front matter here any more.\n";
    p.write("project-state.md", text);
    let out = p
        .ctxkeep(&["checkpoint", "--trigger", "test"])
        .env("CTXKEEP_GIT", &git)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(66), "{err}");
    assert!(err.contains("no ctxkeep front matter"), "{err}");
    assert_eq!(p.state(), text);
    // Past the slow git's wait: a git left running would have said so by now.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let ran = std::fs::read_to_string(&finished).unwrap_or_default();
    assert_eq!(ran, "", "git ran on after the checkpoint was refused");
}
