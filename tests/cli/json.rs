//! `--json` outputs are a contract: parsed into strict mirrors that reject
//! unknown or missing keys.

use serde::Deserialize;

use crate::support::Project;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Checkpoint {
    id: String,
    created_at: String,
    trigger: String,
    phase: String,
    active_task: String,
    controlling_agent: String,
    next_action: String,
    decisions: Vec<String>,
    open_questions: Vec<String>,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    git: Option<Git>,
    #[serde(default)]
    budget: Option<Budget>,
    /// Absent from a record written before it existed, or by hand.
    #[serde(default)]
    block_digest: Option<String>,
    digest: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Git {
    branch: Option<String>,
    head: Option<String>,
    dirty: Vec<Dirty>,
    /// Only when paths were left out (more than 100 uncommitted).
    #[serde(default)]
    dirty_omitted: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Dirty {
    path: String,
    status: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Budget {
    tokens: u64,
    window: u64,
    percent: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Resume {
    checkpoint: Checkpoint,
    prompt: String,
    tokens: usize,
    omitted: Vec<String>,
    nonce: Option<String>,
    session: Option<crate::lifecycle::SessionRecord>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Verify {
    ok: bool,
    checkpoint: Option<CheckpointRef>,
    errors: Vec<Finding>,
    warnings: Vec<Finding>,
    notes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CheckpointRef {
    id: String,
    created_at: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Finding {
    code: String,
    severity: String,
    field: Option<String>,
    line: Option<usize>,
    message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Init {
    path: String,
    created: bool,
    changed: Vec<String>,
    model: Option<String>,
    window: u64,
    encoding: String,
    stages: Vec<Stage>,
    gitignore_updated: bool,
    templates_dir: Option<String>,
    templates_written: Vec<String>,
    merge_driver_attributes_added: bool,
    merge_driver_config_added: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Stage {
    at: f64,
    action: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ErrorDoc {
    ok: bool,
    error: ErrorBody,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ErrorBody {
    code: String,
    message: String,
    exit_code: u8,
}

fn parse<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

#[test]
fn json_outputs_match_their_mirrors() {
    let p = Project::new();
    let (v, _) = p.json(&["init"]);
    let init: Init = parse(v);
    assert!(init.created && init.gitignore_updated);
    p.commit_all("init");
    let (v, _) = p.json(&[
        "checkpoint",
        "--phase",
        "p",
        "--task",
        "t",
        "--agent",
        "a",
        "--next",
        "write the docs",
    ]);
    let c: Checkpoint = parse(v);
    assert_eq!(c.id, "ckpt-0001");
    let (v, _) = p.json(&["resume"]);
    let r: Resume = parse(v);
    assert!(r.tokens > 0 && r.prompt.contains("write the docs"));
    let nonce = r.nonce.expect("resume --json has the nonce");
    assert_eq!(r.session.map(|s| s.nonce), Some(nonce));
    let (v, _) = p.json(&["verify"]);
    let ver: Verify = parse(v);
    assert!(ver.ok && ver.errors.is_empty());
}

#[test]
fn errors_in_json_mode_are_one_document() {
    let p = Project::new();
    let (v, code) = p.json(&["verify"]);
    assert_eq!(code, 66);
    let e: ErrorDoc = parse(v);
    assert!(!e.ok);
    assert_eq!(e.error.code, "no_input");
    assert_eq!(e.error.exit_code, 66);
}

/// With `--json`, a command line clap refuses is one JSON document on
/// stdout too (code `usage`, exit 2), as the docs promise for every error;
/// clap's own message stays on stderr.
#[test]
fn usage_errors_in_json_mode_are_one_document() {
    let p = Project::initialized();
    for args in [
        &["checkpoint", "--json", "--nxt", "x"][..],
        &["--json", "count"],
        &["--json", "status", "--no-such-flag"],
        &["--json"],
        &[
            "--json",
            "relay",
            "--agent-cmd",
            "x",
            "--until-timeout",
            "5m",
        ],
    ] {
        let out = p.ctxkeep(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        let e: ErrorDoc = parse(serde_json::from_str(&text).unwrap());
        assert!(!e.ok);
        assert_eq!(e.error.code, "usage", "{args:?}");
        assert_eq!(e.error.exit_code, 2);
        assert!(!e.error.message.contains('\n'));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("error:"), "{args:?}: {err}");
    }
    let (v, _) = p.json(&["checkpoint", "--nxt", "x"]);
    assert!(
        v["error"]["message"].as_str().unwrap().contains("'--nxt'"),
        "{v}"
    );
    // Without --json, stdout stays empty; after `--`, `--json` is a value.
    let out = p.ctxkeep(&["checkpoint", "--nxt", "x"]).output().unwrap();
    assert!(out.stdout.is_empty());
    let out = p
        .ctxkeep(&["relay", "--bogus", "--", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}
