//! Retention: `ctxkeep gc` by hand, and the limits applied as ctxkeep goes.

use std::time::{Duration, SystemTime};

use serde::Deserialize;

use crate::lifecycle::{resume, set_config};
use crate::opencode::plugin_record;
use crate::support::Project;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Gc {
    dry_run: bool,
    checkpoints_removed: Vec<String>,
    events_rotated_bytes: Option<u64>,
    sessions_removed: usize,
    temp_files_removed: Vec<String>,
    agent_records_removed: Vec<String>,
    snapshots_removed: Vec<String>,
    submodule_snapshots_removed: Vec<String>,
}

fn gc(p: &Project, args: &[&str]) -> Gc {
    let mut all = vec!["gc"];
    all.extend_from_slice(args);
    let (v, code) = p.json(&all);
    assert_eq!(code, 0, "{v}");
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

fn archived(p: &Project) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(p.path(".ctxkeep/checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

fn age(p: &Project, rel: &str, by: Duration) {
    let f = std::fs::File::options()
        .write(true)
        .open(p.path(rel))
        .unwrap();
    f.set_modified(SystemTime::now() - by).unwrap();
}

#[test]
fn gc_keeps_the_archive_to_n_checkpoints_and_dry_run_changes_nothing() {
    let p = Project::initialized();
    for _ in 0..4 {
        p.checkpoint(&[]).success();
    }
    assert_eq!(archived(&p).len(), 4);
    set_config(&p, "retention: {checkpoints: 2}");
    let plan = gc(&p, &["--dry-run"]);
    assert!(plan.dry_run);
    assert_eq!(plan.checkpoints_removed, ["ckpt-0001", "ckpt-0002"]);
    assert_eq!(archived(&p).len(), 4, "a dry run removes nothing");
    p.ctxkeep(&["gc", "--dry-run"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
        "would remove 2 archived checkpoint(s) (retention: 2 checkpoints): ckpt-0001, ckpt-0002",
    ));
    let done = gc(&p, &[]);
    assert!(!done.dry_run);
    assert_eq!(done.checkpoints_removed, ["ckpt-0001", "ckpt-0002"]);
    assert_eq!(archived(&p), ["ckpt-0003.json", "ckpt-0004.json"]);
    p.ctxkeep(&["gc"])
        .assert()
        .success()
        .stdout("nothing to collect\n");
    // Applied as checkpoints are written too; numbering goes on.
    p.checkpoint(&[]).success();
    assert_eq!(archived(&p), ["ckpt-0004.json", "ckpt-0005.json"]);
}

#[test]
fn gc_removes_checkpoints_older_than_the_days_but_never_the_newest() {
    let mut p = Project::initialized();
    for _ in 0..3 {
        p.checkpoint(&[]).success();
    }
    set_config(&p, "retention: {checkpoints: 50, days: 30}");
    assert!(gc(&p, &[]).checkpoints_removed.is_empty(), "all young");
    p.set_now("2030-01-01T00:00:00Z");
    let done = gc(&p, &[]);
    assert_eq!(done.checkpoints_removed, ["ckpt-0001", "ckpt-0002"]);
    assert_eq!(archived(&p), ["ckpt-0003.json"]);
}

#[test]
fn the_event_log_is_rotated_at_its_size() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let before = p.read(".ctxkeep/events.jsonl");
    set_config(&p, "retention: {events_max_bytes: 50}");
    let plan = gc(&p, &["--dry-run"]);
    assert_eq!(plan.events_rotated_bytes, Some(before.len() as u64));
    assert!(!p.path(".ctxkeep/events.jsonl.1").exists());
    let done = gc(&p, &[]);
    assert_eq!(done.events_rotated_bytes, Some(before.len() as u64));
    assert_eq!(p.read(".ctxkeep/events.jsonl.1"), before);
    assert!(!p.path(".ctxkeep/events.jsonl").exists());
    // Past the size, a checkpoint rotates it by itself.
    p.checkpoint(&[]).success();
    p.checkpoint(&[]).success();
    let rotated = p.read(".ctxkeep/events.jsonl.1");
    assert!(rotated.contains("ckpt-0002"), "{rotated}");
    assert!(p.read(".ctxkeep/events.jsonl").contains("ckpt-0003"));
}

#[test]
fn gc_sweeps_stale_temp_files_only() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let hour = Duration::from_secs(3600);
    for (rel, old) in [
        (".ctxkeep/.events.jsonl.a1b2.tmp", true),
        (".ctxkeep/checkpoints/.ctxkeep-new.x9.tmp", true),
        (".ctxkeep/.fresh.json.c3.tmp", false),
        (".project-state.md.d4e5.tmp", true),
        (".my-own-notes.tmp", true),
    ] {
        p.write(rel, "partial");
        if old {
            age(&p, rel, 2 * hour);
        }
    }
    let plan = gc(&p, &["--dry-run"]);
    assert_eq!(plan.temp_files_removed.len(), 3, "{plan:?}");
    // No snapshot refs here: none to drop (tests/cli/restore.rs drops one).
    assert!(plan.snapshots_removed.is_empty(), "{plan:?}");
    assert!(plan.submodule_snapshots_removed.is_empty(), "{plan:?}");
    assert!(p.path(".project-state.md.d4e5.tmp").exists());
    let done = gc(&p, &[]);
    assert_eq!(
        done.temp_files_removed,
        [
            ".ctxkeep/.events.jsonl.a1b2.tmp",
            ".ctxkeep/checkpoints/.ctxkeep-new.x9.tmp",
            ".project-state.md.d4e5.tmp"
        ]
    );
    assert!(
        p.path(".ctxkeep/.fresh.json.c3.tmp").exists(),
        "may be a write in progress"
    );
    assert!(p.path(".my-own-notes.tmp").exists(), "not ctxkeep's");
    assert!(!p.path(".project-state.md.d4e5.tmp").exists());
}

#[test]
fn gc_trims_the_session_chain_and_numbers_go_on() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    set_config(&p, "retention: {sessions: 2}");
    for _ in 0..3 {
        resume(&p, &[]);
    }
    let done = gc(&p, &[]);
    assert_eq!(done.sessions_removed, 1);
    let chain = p.read(".ctxkeep/chain.jsonl");
    assert!(!chain.contains("\"number\":1,"), "{chain}");
    let (_, s) = resume(&p, &[]);
    assert_eq!(s.number, 4);
}

#[test]
fn gc_without_local_data_does_nothing_and_creates_nothing() {
    let p = Project::initialized();
    std::fs::remove_dir_all(p.path(".ctxkeep")).ok();
    p.ctxkeep(&["gc"])
        .assert()
        .success()
        .stdout("nothing to collect\n");
    assert!(!p.path(".ctxkeep").exists());
    p.ctxkeep(&["gc", "--dry-run"]).assert().success();
    assert!(!p.path(".ctxkeep").exists());
}

#[test]
fn gc_lists_then_removes_the_opencode_plugins_stale_records() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let old = plugin_record(&p, "ses_old.jsonl", 45);
    let recent = plugin_record(&p, "ses_recent.jsonl", 1);
    let plan = gc(&p, &["--dry-run"]);
    assert_eq!(plan.agent_records_removed, [old.display().to_string()]);
    assert!(old.exists(), "a dry run removed it");
    let out = p.ctxkeep(&["gc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains(
            "removed 1 agent session record(s) outside the project, not written for 30 days"
        ) && said.contains(&old.display().to_string()),
        "{said}"
    );
    assert!(!old.exists() && recent.exists());
    assert!(gc(&p, &[]).agent_records_removed.is_empty());
}

/// The plugin's records folder replaced by a symlink to a folder of the user's: `gc` reads
/// nothing through it, so an old `*.jsonl` of theirs stays.
#[test]
fn gc_never_follows_a_symlinked_records_folder() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let theirs = plugin_record(&p, "ses_theirs.jsonl", 45);
    let elsewhere = p.home().join("my-logs");
    std::fs::rename(theirs.parent().unwrap(), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, theirs.parent().unwrap()).unwrap();
    assert!(gc(&p, &["--dry-run"]).agent_records_removed.is_empty());
    assert!(gc(&p, &[]).agent_records_removed.is_empty());
    assert!(elsewhere.join("ses_theirs.jsonl").exists());
}
