//! Writers at once: git's merge driver beside running hooks, a hook beside another program
//! changing the state file, installs at once. Each loop is bounded; nothing is timed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use serde_json::{json, Value};

use crate::support::Project;

const STATE: &str = "project-state.md";

fn wait_ok(child: Child) -> std::process::Output {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The state file's text after a checkpoint whose next action is `next`.
fn state_after(p: &Project, next: &str) -> String {
    p.checkpoint_next(next).success();
    p.state()
}

/// git's merge driver, run while checkpoints are written: the merged checkpoint's id is
/// always its own in the archive. The driver pauses before its write (a test hook), so that
/// without the lock a checkpoint written meanwhile would take the id it chose.
#[test]
fn the_merge_driver_and_the_hooks_never_archive_two_checkpoints_under_one_id() {
    let p = Project::initialized();
    let base = state_after(&p, "start the parser");
    let ours = state_after(&p, "finish the lexer");
    p.write(STATE, &base);
    let theirs = state_after(&p, "finish the printer");
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| -> PathBuf {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        path
    };
    let (b, t) = (file("base", &base), file("theirs", &theirs));
    for round in 0..4 {
        let o = file("ours", &ours);
        let mut driver = p.ctxkeep_std(&["--json", "merge-file"]);
        driver
            .args([&b, &o, &t])
            .arg(STATE)
            .env("CTXKEEP_TEST_PAUSE_BEFORE_RENAME", "400")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let driver = driver.spawn().unwrap();
        let writers: Vec<Child> = (0..3)
            .map(|i| {
                p.ctxkeep_std(&["checkpoint", "--next", &format!("write test {round}.{i}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let report: Value = serde_json::from_slice(&wait_ok(driver).stdout).unwrap();
        writers.into_iter().for_each(|w| {
            wait_ok(w);
        });
        let id = report["merged_checkpoint"].as_str().unwrap();
        let archived: Value =
            serde_json::from_str(&p.read(&format!(".ctxkeep/checkpoints/{id}.json"))).unwrap();
        assert!(
            archived["merged"].as_array().is_some_and(|m| !m.is_empty()),
            "round {round}: {id} in the archive is another checkpoint: {archived}"
        );
    }
}

/// The temp file a write of the state file makes beside it, while it is there.
fn state_temp(root: &Path) -> Option<PathBuf> {
    fs::read_dir(root).unwrap().flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        (name.starts_with(".project-state.md.") && name.ends_with(".tmp")).then(|| e.path())
    })
}

/// Another program (git checking out, an editor) changes the state file while a
/// `PreCompact` hook writes its checkpoint: the hook reads it again and writes, keeping what
/// the other program wrote. The hook pauses before its rename (a test hook), and the test
/// changes the file once in that pause.
#[test]
fn a_pre_compact_hook_writes_its_checkpoint_when_the_file_changed_meanwhile() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    for round in 0..2 {
        let payload = json!({
            "session_id": format!("s-{round}"),
            "transcript_path": p.path("missing.jsonl"),
            "cwd": p.root(),
            "hook_event_name": "PreCompact",
            "trigger": "manual",
            "custom_instructions": "",
        });
        let mut hook = p.ctxkeep_std(&["hook", "claude-code"]);
        hook.env("CTXKEEP_TEST_PAUSE_BEFORE_RENAME", "300")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut hook = hook.spawn().unwrap();
        {
            use std::io::Write;
            let mut stdin = hook.stdin.take().unwrap();
            stdin.write_all(payload.to_string().as_bytes()).unwrap();
        }
        let mut seen = false;
        for _ in 0..6000 {
            if state_temp(p.root()).is_some() {
                seen = true;
                break;
            }
            if hook.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(seen, "round {round}: the hook never wrote the state file");
        let edited = format!("{}\nA line the editor saved in round {round}.\n", p.state());
        p.write(STATE, &edited);
        wait_ok(hook);
        let state = p.state();
        assert!(
            state.contains(&format!("A line the editor saved in round {round}.")),
            "{state}"
        );
        let events = p.read(".ctxkeep/events.jsonl");
        let written = events
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["event"] == "checkpoint" && e["trigger"] == "pre-compact")
            .count();
        assert_eq!(written, round + 1, "{events}");
    }
}
