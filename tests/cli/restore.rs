//! Uncommitted work kept in git: the snapshot a pre-tool hook takes before a
//! destructive command, the ones automatic checkpoints take, and `restore`.

use serde_json::{json, Value};

use crate::support::Project;

/// A project with a checkpoint, a committed `src/lib.rs`, and work on top:
/// `src/lib.rs` changed, `notes/new.txt` added, `README.md` deleted.
fn project_with_work() -> Project {
    let p = Project::initialized();
    p.write("src/lib.rs", "pub fn one() {}\n");
    p.commit_all("lib");
    p.checkpoint(&[]).success();
    p.write("src/lib.rs", "pub fn one() {}\npub fn two() {}\n");
    p.write("notes/new.txt", "half a thought\n");
    std::fs::remove_file(p.path("README.md")).unwrap();
    p
}

fn hook(p: &Project, event: &str, fields: Value) -> std::process::Output {
    let mut payload = json!({
        "session_id": "s1", "cwd": p.root(), "hook_event_name": event,
        "transcript_path": p.path("no-transcript.jsonl"),
    });
    payload
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{event}");
    out
}

fn bash(p: &Project, command: &str) -> std::process::Output {
    hook(
        p,
        "PreToolUse",
        json!({ "tool_name": "Bash", "tool_input": { "command": command } }),
    )
}

/// The archived records, oldest first.
fn records(p: &Project) -> Vec<Value> {
    let mut names: Vec<_> = std::fs::read_dir(p.path(".ctxkeep/checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| serde_json::from_str(&std::fs::read_to_string(n).unwrap()).unwrap())
        .collect()
}

fn snapshot_refs(p: &Project) -> Vec<String> {
    p.git(&["for-each-ref", "--format=%(refname)", "refs/ctxkeep/"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn work_lost_to_a_hard_reset_after_the_hook_comes_back_with_restore() {
    let p = project_with_work();
    let before = records(&p).len();
    // An everyday command costs nothing: no checkpoint, no ref.
    let out = bash(&p, "cargo test && git status");
    assert_eq!(out.stdout, b"");
    assert_eq!(records(&p).len(), before);

    let out = bash(&p, "git reset --hard && git clean -fd");
    assert_eq!(out.stdout, b"", "the command is never blocked");
    let all = records(&p);
    assert_eq!(all.len(), before + 1);
    let last = &all[before];
    assert_eq!(last["trigger"], "pre-destructive");
    let snap = &last["git"]["snapshot"];
    assert_eq!(snap["before"], "git reset --hard && git clean -fd");
    assert_eq!(snap["files"], 3);
    let id = last["id"].as_str().unwrap();
    assert_eq!(snapshot_refs(&p), [format!("refs/ctxkeep/snapshots/{id}")]);
    // Never on a branch; the user's index and HEAD untouched.
    assert_eq!(
        p.git(&["branch", "--format=%(refname)"]),
        "refs/heads/main\n"
    );
    assert_eq!(p.git(&["diff", "--cached", "--name-only"]), "");

    // What the agent then runs.
    p.git(&["reset", "--hard", "-q"]);
    p.git(&["clean", "-fdq"]);
    assert!(!p.path("notes/new.txt").exists());

    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("restored 3 file(s) from the snapshot of {id}")),
        "{text}"
    );
    for line in [
        "modified src/lib.rs",
        "added    notes/new.txt",
        "deleted  README.md",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert_eq!(p.read("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
    assert_eq!(p.read("notes/new.txt"), "half a thought\n");
    assert!(!p.path("README.md").exists());
    // HEAD and git's index are as the reset left them: the work is uncommitted again.
    assert_eq!(p.git(&["diff", "--cached", "--name-only"]), "");
}

#[test]
fn restore_keeps_local_changes_unless_forced_and_lists_files_in_json() {
    let p = project_with_work();
    bash(&p, "git checkout -- .");
    p.git(&["checkout", "--", "."]);
    p.write("src/lib.rs", "pub fn mine() {}\n");

    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("src/lib.rs") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(p.read("src/lib.rs"), "pub fn mine() {}\n");

    let (v, code) = p.json(&["restore", "--force"]);
    assert_eq!(code, 0);
    let files: Vec<(&str, &str)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("README.md", "deleted"),
            ("notes/new.txt", "added"),
            ("src/lib.rs", "modified")
        ]
    );
    assert_eq!(p.read("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
    // The same files again are no clash: restoring twice is harmless.
    p.ctxkeep(&["restore"]).assert().success();
}

#[test]
fn nothing_to_lose_means_no_snapshot() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.commit_all("checkpoint");
    let before = records(&p).len();
    // A clean tree: nothing to keep.
    bash(&p, "git reset --hard HEAD~1");
    // Work outside the paths a command names is not at risk.
    p.write("src/keep.rs", "fn keep() {}\n");
    bash(&p, "rm -rf build");
    bash(&p, "git checkout -- docs");
    assert_eq!(records(&p).len(), before);
    assert!(snapshot_refs(&p).is_empty());
    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert_eq!(out.status.code(), Some(66), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no checkpoint holds a snapshot"));
    // Turned off, even a reset of real work takes none.
    let text = p
        .state()
        .replacen("ctxkeep: 1\n", "ctxkeep: 1\nsnapshots: false\n", 1);
    p.write("project-state.md", text);
    bash(&p, "git reset --hard");
    assert_eq!(records(&p).len(), before);
}

#[test]
fn automatic_checkpoints_keep_the_work_once_per_change_and_a_committed_retention_keeps_the_refs() {
    let p = project_with_work();
    let text = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nretention: {checkpoints: 2}\n",
        1,
    );
    p.write("project-state.md", text);
    hook(&p, "PreCompact", json!({ "trigger": "auto" }));
    let first = records(&p).last().unwrap().clone();
    assert_eq!(first["trigger"], "pre-compact");
    assert!(first["git"]["snapshot"]["commit"].is_string(), "{first}");
    // Nothing changed since: the session's end has nothing new to record.
    hook(&p, "SessionEnd", json!({ "reason": "other" }));
    assert_eq!(records(&p).last().unwrap()["id"], first["id"]);

    // The same files with other contents are new work.
    p.write("notes/new.txt", "a whole thought\n");
    hook(&p, "SessionEnd", json!({ "reason": "other" }));
    let all = records(&p);
    let last = all.last().unwrap();
    assert_eq!(last["trigger"], "session-end");
    assert_ne!(
        last["git"]["snapshot"]["commit"],
        first["git"]["snapshot"]["commit"]
    );
    // Another change: the oldest record goes (two kept), but not its snapshot: the refs are
    // local data, and a committed `retention` (a teammate's) does not decide when they go.
    p.write("notes/new.txt", "a finished thought\n");
    hook(&p, "SessionEnd", json!({ "reason": "other" }));
    let all = records(&p);
    let last = all.last().unwrap();
    assert_eq!(all.len(), 2);
    assert_ne!(all[0]["id"], first["id"]);
    let first_ref = format!("refs/ctxkeep/snapshots/{}", first["id"].as_str().unwrap());
    let ids: Vec<String> = all
        .iter()
        .map(|r| format!("refs/ctxkeep/snapshots/{}", r["id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        snapshot_refs(&p),
        [vec![first_ref.clone()], ids.clone()].concat()
    );
    // Its work can still be brought back by name.
    let (v, code) = p.json(&["restore", first["id"].as_str().unwrap(), "--force"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(p.read("notes/new.txt"), "half a thought\n");
    p.write("notes/new.txt", "a finished thought\n");

    // `log` shows which checkpoints hold one; `resume` says how to bring it back.
    let (log, _) = p.json(&["log"]);
    let entry = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == last["id"])
        .unwrap();
    assert_eq!(entry["snapshot"], last["git"]["snapshot"]["commit"]);
    let prompt = p.ctxkeep(&["resume", "--peek"]).output().unwrap();
    let prompt = String::from_utf8(prompt.stdout).unwrap();
    assert!(
        prompt.contains(&format!("ctxkeep restore {}", last["id"].as_str().unwrap())),
        "{prompt}"
    );

    // `gc` drops the refs past the newest 50 whose checkpoint is gone: here 55 old ones.
    let old = p.git(&["commit-tree", "HEAD^{tree}", "-m", "old"]);
    let old = old.trim();
    let dated = std::process::Command::new("git")
        .current_dir(p.root())
        .args([
            "commit-tree",
            "HEAD^{tree}",
            "-p",
            old,
            "-m",
            "old snapshot",
        ])
        .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
        .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
        .env("GIT_AUTHOR_NAME", "ctxkeep")
        .env("GIT_AUTHOR_EMAIL", "ctxkeep@localhost")
        .env("GIT_COMMITTER_NAME", "ctxkeep")
        .env("GIT_COMMITTER_EMAIL", "ctxkeep@localhost")
        .output()
        .unwrap();
    let dated = String::from_utf8(dated.stdout).unwrap();
    for n in 0..55 {
        p.git(&[
            "update-ref",
            &format!("refs/ctxkeep/snapshots/old-{n:02}"),
            dated.trim(),
        ]);
    }
    let (gc, code) = p.json(&["gc"]);
    assert_eq!(code, 0);
    let removed = gc["snapshots_removed"].as_array().unwrap();
    assert_eq!(removed.len(), 55 + 3 - 50, "{gc}");
    assert!(
        removed
            .iter()
            .all(|r| r.as_str().unwrap().starts_with("old-")),
        "{gc}"
    );
    let left = snapshot_refs(&p);
    assert_eq!(left.len(), 50);
    assert!(left.contains(&first_ref) && ids.iter().all(|i| left.contains(i)));
}
