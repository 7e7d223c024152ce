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

/// Runs `args` in each project at once (every write paused a while, a test hook, so that
/// the installs overlap), `home` as everyone's HOME; their outputs, in order.
fn at_once(projects: &[&Project], home: &Path, args: &[&str]) -> Vec<std::process::Output> {
    let children: Vec<Child> = projects
        .iter()
        .map(|p| {
            p.ctxkeep_std(args)
                .env("HOME", home)
                .env("CTXKEEP_TEST_PAUSE_BEFORE_RENAME", "150")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// Two installs at once in one project both succeed and leave the hooks installed; the
/// uninstall then gives back the files as they were.
#[test]
fn two_installs_at_once_in_one_project_leave_the_hooks_installed() {
    let p = Project::initialized();
    p.write(".mcp.json", "{\n  \"mcpServers\": {}\n}\n");
    let before = p.read(".mcp.json");
    for round in 0..3 {
        let outs = at_once(
            &[&p, &p],
            p.home(),
            &["hooks", "install", "claude-code", "--team"],
        );
        for out in &outs {
            assert_eq!(
                out.status.code(),
                Some(0),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let settings = p.read(".claude/settings.json");
        assert!(
            settings.contains("ctxkeep hook claude-code"),
            "round {round}: {settings}"
        );
        assert!(p.read(".mcp.json").contains("\"ctxkeep\""), "round {round}");
        p.ctxkeep(&["hooks", "uninstall", "claude-code"])
            .assert()
            .success();
        assert_eq!(p.read(".mcp.json"), before, "round {round}");
        assert!(!p.path(".claude/settings.json").exists(), "round {round}");
    }
}

/// Installs at once in six projects of one user: each one's note of what its files held
/// is kept, so each uninstall gives back the user's own files byte for byte.
#[test]
fn installs_at_once_in_several_projects_keep_every_note() {
    let projects: Vec<Project> = (0..6).map(|_| Project::initialized()).collect();
    let home = projects[0].home().to_path_buf();
    let originals = [
        (".mcp.json", "{\n  \"mcpServers\": {}\n}\n"),
        (".claude/settings.json", "{\n  \"hooks\": {}\n}\n"),
    ];
    for p in &projects {
        fs::create_dir_all(p.path(".claude")).unwrap();
        for (file, text) in originals {
            p.write(file, text);
        }
    }
    let all: Vec<&Project> = projects.iter().collect();
    for out in at_once(&all, &home, &["hooks", "install", "claude-code", "--team"]) {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for out in at_once(&all, &home, &["hooks", "uninstall", "claude-code"]) {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (i, p) in projects.iter().enumerate() {
        for (file, text) in originals {
            assert!(p.path(file).exists(), "project {i}: {file} was removed");
            assert_eq!(p.read(file), text, "project {i}: {file}");
        }
    }
}
