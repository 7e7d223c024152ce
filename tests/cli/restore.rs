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

/// The pre-destructive records written so far.
fn pre_destructive(p: &Project) -> usize {
    records(p)
        .iter()
        .filter(|r| r["trigger"] == "pre-destructive")
        .count()
}

#[test]
fn deletions_behind_shells_wrappers_aliases_and_other_spellings_are_snapshotted() {
    let p = project_with_work();
    p.git(&["config", "alias.nuke", "reset --hard"]);
    p.git(&["config", "alias.wipe", "!sh -c 'git clean -fd'"]);
    let mut taken = 0;
    for line in [
        "bash -c 'git reset --hard'",
        "eval \"git checkout -- .\"",
        "(cd src && rm -rf .)",
        "timeout 60 git reset --hard",
        "env -i git reset --hard",
        "\\git reset --hard",
        "git nuke",
        "git wipe",
        "echo | xargs git reset --hard",
        "make clean",
        "rm -r src",
        "rm src/lib.rs",
        "rm -f src/*.rs",
        "git rm -f src/lib.rs",
        "find src -name '*.rs' -delete",
        "find . -name '*.txt' -exec rm {} \\;",
        "git ls-files -m | xargs rm",
        "git checkout HEAD src",
        "git switch --discard-changes main",
        "rm -rf \"$D\"",
        "git -C src checkout -- lib.rs",
        "git --work-tree=. --git-dir=.git checkout -- src",
        "git --work-tree . reset --hard",
        "git checkout --pathspec-from-file=paths.txt",
        "git restore --pathspec-from-file=paths.txt",
        "git rm --pathspec-from-file paths.txt",
    ] {
        bash(&p, line);
        taken += 1;
        assert_eq!(pre_destructive(&p), taken, "no snapshot before {line}");
        let last = records(&p).pop().unwrap();
        assert_eq!(last["git"]["snapshot"]["before"], line);
        assert!(last["git"]["snapshot"]["commit"].is_string(), "{line}");
    }
    // Harmless lines, an alias that only reads, and deletions of paths with no work stay free.
    p.git(&["config", "alias.st", "status -sb"]);
    for line in [
        "git st",
        "git status",
        "git --work-tree=. status",
        "git checkout main",
        "rm -r build",
        "find docs -delete",
        "bash -c 'cargo build'",
    ] {
        bash(&p, line);
        assert_eq!(pre_destructive(&p), taken, "a snapshot before {line}");
    }
}

#[test]
fn after_rm_rf_src_restore_brings_it_back_without_force() {
    let p = project_with_work();
    bash(&p, "rm -rf src notes");
    std::fs::remove_dir_all(p.path("src")).unwrap();
    std::fs::remove_dir_all(p.path("notes")).unwrap();
    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(p.read("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
    assert_eq!(p.read("notes/new.txt"), "half a thought\n");
}

#[test]
fn restore_never_overwrites_a_newer_ignored_file_or_a_folder() {
    let p = project_with_work();
    bash(&p, "git reset --hard && git clean -fd");
    p.git(&["reset", "--hard", "-q"]);
    p.git(&["clean", "-fdq"]);
    // Newer work at paths git does not show: an ignored file, and a folder where the
    // snapshot has a file.
    p.write(".git/info/exclude", "notes/\n");
    p.write("notes/new.txt", "written after, and ignored\n");
    std::fs::remove_file(p.path("src/lib.rs")).unwrap();
    p.write("src/lib.rs/mod.rs", "// a folder now\n");
    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("notes/new.txt") && err.contains("src/lib.rs"),
        "{err}"
    );
    assert!(err.contains("nothing restored"), "{err}");
    assert_eq!(p.read("notes/new.txt"), "written after, and ignored\n");
    assert_eq!(p.read("src/lib.rs/mod.rs"), "// a folder now\n");
    // README.md was deleted in the snapshot and is back from the reset: not restored either.
    assert!(p.path("README.md").exists());
}

#[test]
fn restore_says_head_moved_and_keeps_what_was_committed_since() {
    let p = project_with_work();
    bash(&p, "git reset --hard");
    p.git(&["reset", "--hard", "-q"]);
    // Committed since the snapshot: restore would put the old work over it.
    p.write("src/lib.rs", "pub fn committed() {}\n");
    p.commit_all("moved on");
    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("src/lib.rs (committed since the snapshot)"),
        "{err}"
    );
    assert!(err.contains("HEAD moved since the snapshot"), "{err}");
    assert_eq!(p.read("src/lib.rs"), "pub fn committed() {}\n");
    // With the file as the snapshot's base again, it comes back, and restore says HEAD moved.
    p.git(&["revert", "--no-edit", "HEAD"]);
    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("HEAD moved since the snapshot"), "{text}");
    assert_eq!(p.read("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
    let (v, _) = p.json(&["restore"]);
    assert!(v["head_moved"]["from"].is_string(), "{v}");
}

#[test]
fn a_snapshot_commit_written_into_the_state_file_by_hand_is_refused() {
    let p = project_with_work();
    bash(&p, "git reset --hard");
    // The reset, sparing project-state.md (its current checkpoint names the snapshot).
    p.git(&["checkout", "HEAD", "--", "src", "README.md"]);
    std::fs::remove_dir_all(p.path("notes")).unwrap();
    let snap = records(&p).pop().unwrap()["git"]["snapshot"]["commit"]
        .as_str()
        .unwrap()
        .to_string();
    // An old ordinary commit (before src/lib.rs existed), as a cloned state file could name it:
    // restoring it would delete committed files.
    let root = p.git(&["rev-list", "--max-parents=0", "HEAD"]);
    assert!(p.state().contains(&snap));
    let crafted = p.state().replace(&snap, root.trim());
    p.write("project-state.md", crafted);
    let before = p.snapshot();
    let out = p.ctxkeep(&["restore", "--force"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a snapshot ctxkeep made"), "{err}");
    assert!(p.snapshot() == before, "nothing touched");
    assert!(p.path("src/lib.rs").exists());
}

#[test]
fn a_busy_lock_does_not_lose_the_snapshot_before_a_destructive_command() {
    let p = project_with_work();
    std::fs::create_dir_all(p.path(".ctxkeep")).unwrap();
    // Another ctxkeep holding the lock (a long checkpoint, a stuck process).
    let holder = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(p.path(".ctxkeep/lock"))
        .unwrap();
    holder.lock().unwrap();
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(
            json!({
                "session_id": "s1", "cwd": p.root(), "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": { "command": "git reset --hard" },
            })
            .to_string(),
        )
        .output()
        .unwrap();
    drop(holder);
    assert!(out.status.success(), "{out:?}");
    // No checkpoint could be written, but the work is kept under a pending ref.
    let refs = snapshot_refs(&p);
    assert!(
        refs.iter()
            .any(|r| r.starts_with("refs/ctxkeep/snapshots/pending-")),
        "{refs:?}"
    );
    p.git(&["reset", "--hard", "-q"]);
    p.git(&["clean", "-fdq", "--", "notes"]);
    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(p.read("notes/new.txt"), "half a thought\n");
    assert_eq!(p.read("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
}

#[test]
fn git_clean_taking_an_uncommitted_state_file_leaves_a_snapshot_restore_finds() {
    let p = Project::new();
    p.write("src/lib.rs", "pub fn one() {}\n");
    p.commit_all("lib");
    p.ctxkeep(&["init"]).assert().success();
    p.checkpoint(&[]).success();
    p.write("notes/plan.txt", "the plan\n");
    let state = p.state();
    bash(&p, "git clean -fdx");
    p.git(&["clean", "-fdxq"]);
    assert!(!p.path("project-state.md").exists());
    // Every other command says where the file can come back from.
    let status = p.ctxkeep(&["status"]).output().unwrap();
    let said = String::from_utf8_lossy(&status.stderr);
    assert_eq!(status.status.code(), Some(66), "{said}");
    assert!(
        said.contains("`ctxkeep restore` brings the file back"),
        "{said}"
    );
    let out = p.ctxkeep(&["restore"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(p.read("notes/plan.txt"), "the plan\n");
    assert_eq!(p.state(), state, "project-state.md is back as it was");
}

#[test]
fn a_stash_drop_keeps_the_stash_entry() {
    let p = project_with_work();
    p.git(&["stash", "-q"]);
    bash(&p, "git stash drop");
    p.git(&["stash", "drop", "-q"]);
    let kept = p.git(&[
        "for-each-ref",
        "--format=%(objectname)",
        "refs/ctxkeep/stash/",
    ]);
    let commit = kept.trim();
    assert!(!commit.is_empty(), "no stash entry kept");
    p.git(&["stash", "store", "-m", "back", commit]);
    p.git(&["stash", "pop", "-q"]);
    assert_eq!(p.read("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
}

#[test]
fn hooks_doctor_warns_when_a_remote_mirrors_the_snapshot_refs() {
    let p = Project::initialized();
    p.ctxkeep(&["hooks", "install", "claude-code"])
        .assert()
        .success();
    p.git(&[
        "remote",
        "add",
        "origin",
        "https://example.invalid/repo.git",
    ]);
    let (report, code) = crate::hooks::doctor_text(&p, "claude-code");
    assert!(!report.contains("snapshots:"), "{report}");
    assert_eq!(code, Some(0), "{report}");
    p.git(&["config", "remote.origin.mirror", "true"]);
    let (report, code) = crate::hooks::doctor_text(&p, "claude-code");
    assert!(
        report.contains("ok    snapshots: warning: `git push` to origin (remote.origin.mirror=true) sends ctxkeep's snapshot refs"),
        "{report}"
    );
    // A warning, not a failure: the hooks work.
    assert_eq!(code, Some(0), "{report}");
    p.git(&["config", "--unset", "remote.origin.mirror"]);
    p.git(&["config", "remote.origin.push", "+refs/*:refs/*"]);
    let (report, _) = crate::hooks::doctor_text(&p, "claude-code");
    assert!(report.contains("snapshots: warning"), "{report}");
}

#[cfg(unix)]
#[test]
fn what_a_snapshot_cannot_keep_is_an_error_event_and_one_line_to_the_model() {
    let p = project_with_work();
    // A tracked file turned into a FIFO: git lists it, nothing can be read from it (root
    // reads a file of mode 000, so this is the unreadable file every user can make).
    p.write("tracked.txt", "one\n");
    p.commit_all("tracked");
    p.write("src/lib.rs", "pub fn one() {}\npub fn two() {}\n");
    std::fs::remove_file(p.path("tracked.txt")).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(p.path("tracked.txt"))
        .status()
        .unwrap();
    assert!(ok.success());
    let out = bash(&p, "git reset --hard");
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let line = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(
        line,
        "ctxkeep: the snapshot of uncommitted work left out 1 path(s): tracked.txt: not a regular file"
    );
    // The rest is kept.
    let last = records(&p).pop().unwrap();
    assert_eq!(
        last["git"]["snapshot"]["left_out"],
        json!(["tracked.txt: not a regular file"])
    );
    let events = p.read(".ctxkeep/events.jsonl");
    let error: Value = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "error")
        .unwrap();
    assert_eq!(
        error["left_out"],
        json!(["tracked.txt: not a regular file"])
    );
    std::fs::remove_file(p.path("tracked.txt")).unwrap();
    p.git(&["reset", "--hard", "-q"]);
    let (v, code) = p.json(&["restore"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(p.read("src/lib.rs"), "pub fn one() {}\npub fn two() {}\n");
    // What was left out is not taken for deleted: restore leaves it alone.
    assert_eq!(p.read("tracked.txt"), "one\n");
    assert!(!v["files"].to_string().contains("tracked.txt"), "{v}");
}

/// A PreToolUse hook for `command` with a `git` on PATH that counts its runs:
/// how many times the hook started git.
#[cfg(unix)]
fn bash_counting_git(p: &Project, command: &str) -> usize {
    use std::os::unix::fs::PermissionsExt;
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
    let shim = p.home().join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let log = p.home().join("git-runs");
    let _ = std::fs::remove_file(&log);
    std::fs::write(
        shim.join("git"),
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(shim.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let payload = json!({
        "session_id": "s1", "cwd": p.root(), "hook_event_name": "PreToolUse",
        "transcript_path": p.path("no-transcript.jsonl"),
        "tool_name": "Bash", "tool_input": { "command": command },
    });
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .env("PATH", path)
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::read_to_string(&log)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[cfg(unix)]
#[test]
fn git_checkout_of_a_path_without_double_dash_is_snapshotted_and_a_switch_is_not() {
    let p = project_with_work();
    p.git(&["branch", "topic"]);
    let mut taken = 0;
    for line in [
        "git checkout src",
        "git checkout .",
        "git checkout HEAD src",
        "git checkout main -- src",
        "git checkout src/lib.rs lib",
        "git checkout ./src",
        "git -C src checkout lib.rs",
        "cd src && git checkout lib.rs",
    ] {
        bash(&p, line);
        taken += 1;
        assert_eq!(pre_destructive(&p), taken, "no snapshot before {line}");
        let last = records(&p).pop().unwrap();
        assert_eq!(last["git"]["snapshot"]["before"], line);
    }
    // The count is real: a discard starts git (status, then the snapshot).
    assert!(bash_counting_git(&p, "git checkout src/lib.rs") > 0);
    taken += 1;
    // Switches, and names with nothing on disk: no snapshot, and git is not even started.
    for line in [
        "git checkout main",
        "git checkout topic",
        "git checkout -b x",
        "git checkout -",
        "git checkout HEAD~1",
        "git checkout gone.rs",
    ] {
        assert_eq!(bash_counting_git(&p, line), 0, "git started for {line}");
        assert_eq!(pre_destructive(&p), taken, "a snapshot before {line}");
    }
    // A branch named like the folder: git switches branches (loose ref, then packed).
    p.git(&["branch", "src"]);
    bash(&p, "git checkout src");
    assert_eq!(
        pre_destructive(&p),
        taken,
        "a snapshot before a switch to src"
    );
    p.git(&["pack-refs", "--all"]);
    bash(&p, "git checkout src");
    assert_eq!(
        pre_destructive(&p),
        taken,
        "a snapshot before a switch to packed src"
    );
    // A tag, and a revision before paths, read the same way.
    p.git(&["tag", "notes"]);
    bash(&p, "git checkout notes src");
    taken += 1;
    assert_eq!(
        pre_destructive(&p),
        taken,
        "no snapshot before checkout notes src"
    );
}

/// Runs `script` in the project with `sh`, hermetic; panics when it fails.
fn run(p: &Project, script: &str) {
    let out = p.sh(script).output().unwrap();
    assert!(out.status.success(), "{script}: {out:?}");
}

#[test]
fn work_inside_a_submodule_is_kept_before_it_is_discarded_and_restore_brings_it_back() {
    let p = Project::initialized();
    let lib = p.home().join("lib");
    let lib_url = format!("file://{}", lib.display());
    run(
        &p,
        &format!(
            "git init -q -b main '{0}' && cd '{0}' && printf 'pub fn lib() {{}}\\n' > a.rs \
             && git add a.rs && git commit -q -m lib",
            lib.display()
        ),
    );
    p.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &lib_url,
        "sub",
    ]);
    p.commit_all("submodule");
    p.checkpoint(&[]).success();
    let mut taken = 0;
    for (line, runs) in [
        (
            "git submodule foreach git reset --hard",
            "git submodule foreach -q git reset -q --hard",
        ),
        ("git -C sub reset --hard", "git -C sub reset -q --hard"),
        ("cd sub && git checkout .", "cd sub && git checkout -q ."),
        ("git -C sub checkout a.rs", "git -C sub checkout -q a.rs"),
    ] {
        p.write("sub/a.rs", "pub fn lib() {}\npub fn mine() {}\n");
        p.write("sub/draft.rs", "// half a thought\n");
        bash(&p, line);
        taken += 1;
        assert_eq!(pre_destructive(&p), taken, "no snapshot before {line}");
        run(&p, runs);
        run(&p, "rm -f sub/draft.rs");
        assert_eq!(p.read("sub/a.rs"), "pub fn lib() {}\n", "{line}");
        let (v, code) = p.json(&["restore"]);
        assert_eq!(code, 0, "{line}: {v}");
        assert_eq!(
            p.read("sub/a.rs"),
            "pub fn lib() {}\npub fn mine() {}\n",
            "{line}"
        );
        assert_eq!(p.read("sub/draft.rs"), "// half a thought\n", "{line}");
        let listed = v["files"].to_string();
        assert!(
            listed.contains("sub/a.rs") && listed.contains("sub/draft.rs"),
            "{v}"
        );
        // Newer work in the submodule is not overwritten.
        p.write("sub/a.rs", "pub fn newer() {}\n");
        let (v, code) = p.json(&["restore"]);
        assert_ne!(code, 0, "{v}");
        assert_eq!(p.read("sub/a.rs"), "pub fn newer() {}\n");
        run(&p, "git -C sub checkout -q -- a.rs && rm -f sub/draft.rs");
    }
    // A submodule `git status` is told to ignore is looked into all the same.
    p.git(&[
        "config",
        "-f",
        ".gitmodules",
        "submodule.sub.ignore",
        "dirty",
    ]);
    p.commit_all("ignore the submodule's work");
    p.write(
        "sub/a.rs",
        "pub fn lib() {}
pub fn mine() {}
",
    );
    assert_eq!(p.git(&["status", "--porcelain"]), "");
    bash(&p, "git -C sub reset --hard");
    assert_eq!(pre_destructive(&p), taken + 1);
    run(&p, "git -C sub reset -q --hard");
    let (v, code) = p.json(&["restore"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        p.read("sub/a.rs"),
        "pub fn lib() {}
pub fn mine() {}
"
    );
    // Told to ignore it through the local config only (not committed, so `.gitmodules` says
    // nothing): looked into all the same, each way git reads it.
    p.git(&[
        "config",
        "-f",
        ".gitmodules",
        "--unset",
        "submodule.sub.ignore",
    ]);
    p.commit_all("the submodule's work is listed again");
    for (key, value) in [
        ("submodule.sub.ignore", "all"),
        ("diff.ignoreSubmodules", "dirty"),
    ] {
        p.git(&["config", key, value]);
        p.write("sub/a.rs", "pub fn lib() {}\npub fn local() {}\n");
        p.write("sub/draft.rs", "// a second thought\n");
        let status = p.git(&["status", "--porcelain"]);
        assert!(!status.contains("sub"), "{key}: {status}");
        let before = pre_destructive(&p);
        bash(&p, "git -C sub reset --hard && git -C sub clean -fd");
        assert_eq!(pre_destructive(&p), before + 1, "{key}");
        run(&p, "git -C sub reset -q --hard && git -C sub clean -qfd");
        let (v, code) = p.json(&["restore"]);
        assert_eq!(code, 0, "{key}: {v}");
        assert_eq!(
            p.read("sub/a.rs"),
            "pub fn lib() {}\npub fn local() {}\n",
            "{key}"
        );
        assert_eq!(p.read("sub/draft.rs"), "// a second thought\n", "{key}");
        run(&p, "git -C sub checkout -q -- a.rs && rm -f sub/draft.rs");
        p.git(&["config", "--unset", key]);
    }
    // `gc` drops a submodule's own snapshot with the outer snapshots that held it: an old
    // outer snapshot (2019) whose submodule entry is an inner snapshot, pushed past the newest
    // 50 by 55 newer ones (2020) that hold none; the inner snapshots recent ones hold stay.
    let inner_refs = || {
        let out = p
            .sh("git -C sub for-each-ref --format='%(refname)' refs/ctxkeep/")
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let recent = inner_refs();
    let out = p
        .sh(
            "export GIT_AUTHOR_NAME=ctxkeep GIT_AUTHOR_EMAIL=ctxkeep@localhost \
             GIT_COMMITTER_NAME=ctxkeep GIT_COMMITTER_EMAIL=ctxkeep@localhost
             export GIT_AUTHOR_DATE=2019-01-01T00:00:00Z GIT_COMMITTER_DATE=2019-01-01T00:00:00Z
             inner=$(git -C sub commit-tree 'HEAD^{tree}' -p HEAD -m old) || exit 1
             git -C sub update-ref refs/ctxkeep/snapshots/submodule-1 $inner || exit 1
             export GIT_INDEX_FILE=\"$PWD/.git/old-index\"
             git read-tree HEAD && git update-index --cacheinfo 160000,$inner,sub || exit 1
             outer=$(git commit-tree $(git write-tree) -p HEAD -m old) || exit 1
             rm .git/old-index; unset GIT_INDEX_FILE
             git update-ref refs/ctxkeep/snapshots/old-held $outer || exit 1
             export GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z
             filler=$(git commit-tree 'HEAD^{tree}' -p HEAD -m old) || exit 1
             for n in $(seq 10 64); do git update-ref refs/ctxkeep/snapshots/old-$n $filler; done
             echo $inner",
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let inner = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let (dry, code) = p.json(&["gc", "--dry-run"]);
    assert_eq!(code, 0, "{dry}");
    assert_eq!(
        dry["submodule_snapshots_removed"],
        json!([format!("sub@{inner}")])
    );
    assert!(
        inner_refs().contains("submodule-1"),
        "a dry run drops nothing"
    );
    let (gc, code) = p.json(&["gc"]);
    assert_eq!(code, 0, "{gc}");
    assert!(
        gc["snapshots_removed"].to_string().contains("old-held"),
        "{gc}"
    );
    assert_eq!(
        gc["submodule_snapshots_removed"],
        json!([format!("sub@{inner}")])
    );
    assert_eq!(inner_refs(), recent, "only the old inner snapshot goes");
}

/// The project of [`what_a_snapshot_cannot_keep_is_an_error_event_and_one_line_to_the_model`]:
/// work to keep, and a tracked file turned into a FIFO, which no snapshot can read.
fn project_with_a_fifo() -> Project {
    let p = project_with_work();
    p.write("tracked.txt", "one\n");
    p.commit_all("tracked");
    p.write("src/lib.rs", "pub fn one() {}\npub fn two() {}\n");
    std::fs::remove_file(p.path("tracked.txt")).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(p.path("tracked.txt"))
        .status()
        .unwrap();
    assert!(ok.success());
    p
}

/// A Gemini CLI 0.61.0 hook payload as captured (tests/fixtures/agents), in this project,
/// running `command`.
fn gemini_payload(p: &Project, event: &str, command: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/agents/gemini-0.61.0/hooks/{event}-run_shell_command.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["cwd"] = json!(p.root());
    v["transcript_path"] = json!(p.path("chat.jsonl"));
    v["tool_input"]["command"] = json!(command);
    v.to_string()
}

/// `ctxkeep hook AGENT` with `payload`; its stdout.
fn agent_hook(p: &Project, agent: &str, payload: String) -> String {
    let out = p
        .ctxkeep(&["hook", agent])
        .write_stdin(payload)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

const LEFT_OUT: &str =
    "ctxkeep: the snapshot of uncommitted work left out 1 path(s): tracked.txt: not a regular file";

/// Gemini CLI's `BeforeTool` takes no context and Qwen Code only logs a `PreToolUse` hook's: what
/// a snapshot left out reaches the model at the next after-tool event instead, once.
#[test]
fn gemini_and_qwen_are_told_what_a_snapshot_left_out_after_the_command() {
    // Gemini CLI: `BeforeTool` answers `{}`; the next `AfterTool` carries the line.
    let p = project_with_a_fifo();
    let before = agent_hook(
        &p,
        "gemini",
        gemini_payload(&p, "BeforeTool", "git reset --hard"),
    );
    assert!(!before.contains("left out"), "{before}");
    assert_eq!(pre_destructive(&p), 1);
    let after = agent_hook(
        &p,
        "gemini",
        gemini_payload(&p, "AfterTool", "git reset --hard"),
    );
    let reply: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        reply["hookSpecificOutput"]["additionalContext"], LEFT_OUT,
        "{after}"
    );
    // Once.
    let again = agent_hook(&p, "gemini", gemini_payload(&p, "AfterTool", "ls"));
    assert!(!again.contains("left out"), "{again}");

    // Qwen Code: Claude Code's payloads, the line at the next `PostToolUse`.
    let p = project_with_a_fifo();
    let qwen = |event: &str, command: &str| {
        json!({
            "session_id": "q1", "transcript_path": p.path("chat.jsonl"), "cwd": p.root(),
            "hook_event_name": event, "permission_mode": "yolo",
            "timestamp": "2026-01-15T10:00:00.000Z", "tool_name": "run_shell_command",
            "tool_input": {"command": command}, "tool_response": "ok",
        })
        .to_string()
    };
    let before = agent_hook(&p, "qwen-code", qwen("PreToolUse", "git reset --hard"));
    assert!(!before.contains("left out"), "{before}");
    assert_eq!(pre_destructive(&p), 1);
    let after = agent_hook(&p, "qwen-code", qwen("PostToolUse", "git reset --hard"));
    let reply: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        reply["hookSpecificOutput"]["additionalContext"], LEFT_OUT,
        "{after}"
    );
    let again = agent_hook(&p, "qwen-code", qwen("PostToolUse", "ls"));
    assert!(!again.contains("left out"), "{again}");
}
