//! `ctxkeep track`: sources, stages that fire once, sessions, truncation.

use predicates::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use crate::support::Project;
use crate::transcripts::*;

/// `track --json`, parsed strictly: the output is a contract.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Track {
    pub session: String,
    pub tokens: Option<u64>,
    pub window: u64,
    pub percent: Option<f64>,
    pub limit: u64,
    pub limit_percent: Option<f64>,
    pub limit_source: String,
    pub limit_note: Option<String>,
    pub window_source: String,
    #[serde(default)]
    pub limit_learned_from: Option<usize>,
    pub stages_against: String,
    pub source: Option<String>,
    pub stage: Option<String>,
    pub fired: Vec<Fired>,
    pub handoff_due: bool,
    pub messages: Option<u64>,
    pub rearmed: Vec<String>,
    pub truncation_suspected: bool,
    #[serde(default)]
    pub transcript: Option<TranscriptInfo>,
    pub instructions: Vec<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Fired {
    pub at: f64,
    pub name: String,
    pub action: String,
    pub checkpoint: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TranscriptInfo {
    pub path: String,
    pub agent: String,
    pub model: Option<String>,
    pub compacted: bool,
    pub malformed_lines: u64,
}

pub fn track(p: &Project, args: &[&str]) -> (Track, i32) {
    let mut all = vec!["track"];
    all.extend_from_slice(args);
    let (v, code) = p.json(&all);
    let t = serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"));
    (t, code)
}

fn names(t: &Track) -> Vec<&str> {
    t.fired.iter().map(|f| f.name.as_str()).collect()
}

fn archived(p: &Project) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(p.path(".ctxkeep/checkpoints"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

fn events(p: &Project, kind: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(p.path(".ctxkeep/events.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == kind)
        .collect()
}

fn stderr_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stderr.clone()).unwrap()
}

fn stdout_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(a.get_output().stdout.clone()).unwrap()
}

fn init_with(stages: &str, window: &str) -> Project {
    let p = Project::new();
    p.ctxkeep(&["init", "--stages", stages, "--window", window])
        .assert()
        .success();
    p.commit_all("init");
    p.checkpoint(&[]).success();
    p
}

#[test]
fn stage_scenario_40_85_90_30_82_fires_exactly_once_per_climb() {
    let p = init_with("50:warn,80:checkpoint", "200000");
    let state_before = p.state();

    let (t, code) = track(&p, &["--tokens", "80000"]);
    assert_eq!((code, t.percent), (0, Some(40.0)));
    assert!(t.fired.is_empty() && t.stage.is_none());
    assert_eq!(p.state(), state_before, "no checkpoint, no rewrite");

    // New work since the checkpoint, so the stage's checkpoint records something.
    p.write("src/lexer.rs", "fn lex() {}\n");
    let (t, _) = track(&p, &["--tokens", "170000"]);
    assert_eq!(names(&t), ["stage-50", "stage-80"]);
    assert_eq!(t.fired[0].checkpoint, None, "warn writes no checkpoint");
    assert_eq!(t.fired[1].checkpoint.as_deref(), Some("ckpt-0002"));
    assert_eq!(t.stage.as_deref(), Some("stage-80"));
    // Two stages crossed at once: one instruction, for the higher.
    assert_eq!(t.instructions.len(), 1);
    assert!(
        t.instructions[0].contains("stage stage-80"),
        "{:?}",
        t.instructions
    );
    let after_85 = p.state();
    assert!(after_85.contains("trigger: stage-80"), "{after_85}");

    let (t, _) = track(&p, &["--tokens", "180000"]);
    assert!(t.fired.is_empty(), "90 %: nothing fires twice");
    assert_eq!(p.state(), after_85);

    let (t, _) = track(&p, &["--tokens", "60000"]);
    assert!(t.fired.is_empty());
    assert_eq!(t.rearmed, ["stage-50", "stage-80"]);
    assert_eq!(t.stage, None);
    assert_eq!(p.state(), after_85);

    p.write("src/parser.rs", "fn parse() {}\n");
    let (t, _) = track(&p, &["--tokens", "164000"]);
    assert_eq!(
        names(&t),
        ["stage-50", "stage-80"],
        "82 %: re-armed stages fire again"
    );
    assert_eq!(t.fired[1].checkpoint.as_deref(), Some("ckpt-0003"));

    assert_eq!(
        archived(&p),
        ["ckpt-0001.json", "ckpt-0002.json", "ckpt-0003.json"],
        "the manual one and one per climb past 80"
    );
    let stage_events = events(&p, "stage");
    let fired: Vec<&str> = stage_events
        .iter()
        .map(|e| e["stage"].as_str().unwrap())
        .collect();
    assert_eq!(fired, ["stage-50", "stage-80", "stage-50", "stage-80"]);
    // The stage's checkpoint carries the budget and the fields over.
    let record: Value =
        serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0003.json")).unwrap();
    assert_eq!(record["trigger"], "stage-80");
    assert_eq!(record["budget"]["tokens"], 164000);
    assert_eq!(record["budget"]["percent"], 82.0);
    assert_eq!(record["phase"], "implementing the parser");
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn a_jump_fires_every_crossed_stage_but_writes_one_checkpoint() {
    let p = init_with("80:warn,90:checkpoint,95:checkpoint,98:handoff", "200000");
    track(&p, &["--tokens", "100000"]);
    p.write("src/lexer.rs", "fn lex() {}\n");
    let a = p
        .ctxkeep(&["track", "--tokens", "194000"])
        .assert()
        .success();
    let (stdout, stderr) = (stdout_of(&a), stderr_of(&a));
    // The instructions are for the agent: on stdout, one for the highest
    // stage crossed, within its character budget, no block repeated.
    assert_eq!(
        stdout.matches("ctxkeep: context is at 97").count(),
        1,
        "{stdout}"
    );
    assert!(stdout.contains("stage stage-95 (checkpoint)"), "{stdout}");
    assert_eq!(stdout.matches("Recorded now").count(), 1, "{stdout}");
    assert!(stdout.trim_end().chars().count() <= 1_200, "{stdout}");
    assert!(
        stdout.contains("Checkpoint ckpt-0002 was written"),
        "{stdout}"
    );
    assert!(!stderr.contains("context is at"), "{stderr}");
    // The summary for people: one line on stderr.
    let summary: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("default:"))
        .collect();
    assert_eq!(summary.len(), 1, "{stderr}");
    assert!(
        summary[0].contains("97 %") && summary[0].contains("fired stage-80, stage-90, stage-95")
    );

    assert_eq!(archived(&p), ["ckpt-0001.json", "ckpt-0002.json"]);
    assert!(p.state().contains("trigger: stage-95"));
    assert_eq!(events(&p, "stage").len(), 3);
    assert_eq!(events(&p, "checkpoint").len(), 2);

    let (t, _) = track(&p, &["--tokens", "195000"]);
    assert!(t.fired.is_empty() && !t.handoff_due);
    p.write("src/parser.rs", "fn parse() {}\n");
    let (t, _) = track(&p, &["--tokens", "199000"]);
    assert_eq!(
        t.fired,
        [Fired {
            at: 98.0,
            name: "stage-98".into(),
            action: "handoff".into(),
            checkpoint: Some("ckpt-0003".into()),
        }]
    );
    assert!(t.handoff_due);
    assert!(t.instructions[0].contains("URGENT: hand off now"));
    // Still due on the next reading; cleared when usage drops below the stage.
    assert!(track(&p, &["--add", "10"]).0.handoff_due);
    assert!(!track(&p, &["--tokens", "20000"]).0.handoff_due);
}

#[test]
fn claude_code_transcript_skips_every_trap() {
    let p = init_with("80", "200000");
    let mut text = jsonl(&[
        claude_user("start"),
        claude_assistant("msg_A", 3, 1200, 140072),
        claude_assistant("msg_A", 3, 1200, 140072), // one line per content block
        claude_agent_progress(190_000),
        claude_sidechain(180_000),
        claude_synthetic_error(),
        "{not json".to_string(),
    ]);
    text.push_str(&claude_assistant("msg_B", 5, 0, 199_000)[..80]); // torn: being written
    p.write("t/session.jsonl", &text);
    let (t, code) = track(&p, &["--transcript", "t/session.jsonl"]);
    assert_eq!(code, 0);
    assert_eq!(t.tokens, Some(141_275));
    assert_eq!(t.window, 200_000);
    assert_eq!(t.source.as_deref(), Some("usage"));
    let info = t.transcript.unwrap();
    assert_eq!(info.path, "t/session.jsonl");
    assert_eq!(info.agent, "claude-code");
    assert_eq!(info.model.as_deref(), Some("claude-opus-4-6"));
    assert_eq!(info.malformed_lines, 1);
    let a = p
        .ctxkeep(&[
            "track",
            "--agent",
            "claude-code",
            "--transcript",
            "t/session.jsonl",
        ])
        .assert()
        .success();
    assert!(stderr_of(&a).contains("t/session.jsonl: skipped 1 malformed line"));
}

#[test]
fn claude_code_compaction_rearms_stages() {
    let p = init_with("80", "200000");
    let before = jsonl(&[claude_assistant("msg_A", 1, 301, 166_457)]);
    p.write("s.jsonl", &before);
    let (t, _) = track(&p, &["--transcript", "s.jsonl"]);
    assert_eq!((t.tokens, names(&t)), (Some(166_759), vec!["stage-80"]));

    // Compacted with postTokens: the old token count is stale, the new one small.
    p.write(
        "s.jsonl",
        before.clone() + &jsonl(&[claude_compact_boundary(Some(12_000))]),
    );
    let (t, _) = track(&p, &["--transcript", "s.jsonl"]);
    assert_eq!(t.tokens, Some(12_000));
    assert_eq!(t.rearmed, ["stage-80"]);
    assert!(t.transcript.unwrap().compacted);

    // Climb again, then a compaction without postTokens: unknown, re-armed.
    p.write(
        "s.jsonl",
        jsonl(&[claude_assistant("msg_B", 1, 0, 170_000)]),
    );
    assert_eq!(
        names(&track(&p, &["--transcript", "s.jsonl"]).0),
        ["stage-80"]
    );
    p.write(
        "s.jsonl",
        jsonl(&[
            claude_assistant("msg_B", 1, 0, 170_000),
            claude_compact_boundary(None),
        ]),
    );
    let (t, code) = track(&p, &["--transcript", "s.jsonl"]);
    assert_eq!(code, 0);
    assert_eq!((t.tokens, t.percent), (None, None));
    assert_eq!(t.rearmed, ["stage-80"]);
    let a = p.ctxkeep(&["status"]).assert().success();
    assert!(stdout_of(&a).contains("size unknown since the last compaction"));
}

#[test]
fn codex_uses_last_token_usage_and_the_transcripts_window() {
    let p = init_with("80", "200000");
    p.write(
        "rollout.jsonl",
        jsonl(&[
            codex_meta(),
            codex_turn_context("gpt-5.3-codex"),
            codex_token_count_null(),
            codex_token_count((30_000, 34_900), 900_000, Some(258_400)),
            codex_token_count((30_000, 34_900), 900_000, Some(258_400)), // written twice
            codex_token_count((0, 2_000_000), 2_000_000, Some(258_400)), // compaction artefact
            codex_token_count_null(),
        ]),
    );
    let (t, _) = track(&p, &["--transcript", "rollout.jsonl"]);
    assert_eq!((t.tokens, t.window), (Some(34_900), 258_400));
    assert_eq!(t.percent, Some(13.5));
    let info = t.transcript.unwrap();
    assert_eq!(
        (info.agent.as_str(), info.model.as_deref()),
        ("codex", Some("gpt-5.3-codex"))
    );
    // --window beats what the transcript says.
    let (t, _) = track(&p, &["--transcript", "rollout.jsonl", "--window", "100000"]);
    assert_eq!((t.window, t.percent), (100_000, Some(34.9)));
}

#[test]
fn codex_without_a_window_takes_the_configs() {
    let p = init_with("80", "150000");
    p.write(
        "old.jsonl",
        jsonl(&[
            codex_meta(),
            codex_turn_context("aide-gpt-5"),
            codex_token_count((20_000, 24_158), 50_000, None),
        ]),
    );
    let (t, _) = track(&p, &["--agent", "codex", "--transcript", "old.jsonl"]);
    assert_eq!((t.tokens, t.window), (Some(24_158), 150_000));
}

#[test]
fn gemini_last_copy_of_a_reappended_record_wins() {
    let p = init_with("80", "200000");
    p.write(
        "chat.jsonl",
        jsonl(&[
            gemini_meta(),
            gemini_user("u1"),
            gemini_reply("g1", 1_000),
            r#"{"$set":{"lastUpdated":"2026-04-23T12:53:10.000Z"}}"#.to_string(),
            gemini_reply("g1", 1_500),
            gemini_user("u2"),
        ]),
    );
    let (t, _) = track(&p, &["--transcript", "chat.jsonl"]);
    assert_eq!((t.tokens, t.window), (Some(1_500), 1_048_576));
    assert_eq!(t.transcript.unwrap().agent, "gemini");
}

#[test]
fn a_new_transcript_with_no_usage_is_unknown_not_an_error() {
    let p = init_with("80", "200000");
    p.write("new.jsonl", jsonl(&[claude_user("hello")]));
    let a = p
        .ctxkeep(&["track", "--transcript", "new.jsonl"])
        .assert()
        .success();
    assert!(stderr_of(&a).contains("new.jsonl has no main-session usage yet"));
    // A file only subagents wrote has no main-session token count either.
    p.write("side.jsonl", jsonl(&[claude_sidechain(42_182)]));
    let (t, _) = track(
        &p,
        &["--agent", "claude-code", "--transcript", "side.jsonl"],
    );
    assert_eq!(t.tokens, None);
}

#[test]
fn transcript_errors_are_one_line_and_write_nothing() {
    let p = init_with("80", "200000");
    let a = p
        .ctxkeep(&["track", "--transcript", "missing.jsonl"])
        .assert()
        .code(66);
    let err = stderr_of(&a);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing.jsonl"), "{err}");
    p.write("notes.jsonl", "{\"hello\":\"world\"}\n");
    p.ctxkeep(&["track", "--transcript", "notes.jsonl"])
        .assert()
        .code(65)
        .stderr(
            predicates::str::contains("notes.jsonl").and(predicates::str::contains(
                "--agent claude-code|codex|gemini",
            )),
        );
    assert!(!p.path(".ctxkeep/sessions/default.json").exists());
}

#[test]
fn sources_and_flags_are_checked() {
    let p = init_with("80", "200000");
    for args in [
        vec!["track"],
        vec!["track", "--tokens", "1", "--add", "2"],
        vec!["track", "--tokens", "1", "--transcript", "x"],
        vec!["track", "--tokens", "1", "--window", "0"],
        vec!["track", "--tokens", "1", "--agent", "codex"],
        vec!["track", "--tokens", "1", "--session", " "],
        vec!["track", "--tokens", "1", "--fail-at", "-5"],
        vec!["track", "--count", "x", "--encoding", "klingon"],
    ] {
        p.ctxkeep(&args).assert().code(2);
    }
    assert!(!p.path(".ctxkeep/sessions").exists());
    let bare = Project::new();
    bare.ctxkeep(&["track", "--tokens", "1"]).assert().code(66);
}

#[test]
fn fail_at_exits_1_after_recording() {
    let p = init_with("99", "1000");
    let (t, code) = track(&p, &["--tokens", "850", "--fail-at", "85"]);
    assert_eq!((code, t.percent), (1, Some(85.0)));
    let (_, code) = track(&p, &["--tokens", "849", "--fail-at", "85"]);
    assert_eq!(code, 0, "84.9 % is below 85");
    let (t, code) = track(&p, &["--add", "1", "--fail-at", "85"]);
    assert_eq!(
        (code, t.tokens),
        (1, Some(850)),
        "recorded even when failing"
    );
}

#[test]
fn add_is_relative_and_never_below_zero() {
    let p = init_with("80", "1000");
    assert_eq!(track(&p, &["--add", "300"]).0.tokens, Some(300));
    assert_eq!(track(&p, &["--add", "-100"]).0.tokens, Some(200));
    let (t, _) = track(&p, &["--add", "-5000"]);
    assert_eq!((t.tokens, t.source.as_deref()), (Some(0), Some("manual")));
}

#[test]
fn sessions_are_kept_apart() {
    let p = init_with("80", "1000");
    track(&p, &["--tokens", "100", "--session", "a"]);
    p.ctxkeep(&["--json", "track", "--tokens", "900"])
        .env("CTXKEEP_SESSION", "b")
        .assert()
        .success();
    track(&p, &["--tokens", "500"]);
    assert_eq!(
        track(&p, &["--add", "1", "--session", "a"]).0.tokens,
        Some(101)
    );
    assert_eq!(
        track(&p, &["--add", "1", "--session", "b"]).0.tokens,
        Some(901)
    );
    assert_eq!(track(&p, &["--add", "1"]).0.tokens, Some(501));
    // A hostile id stays inside the sessions folder.
    let (t, _) = track(&p, &["--tokens", "7", "--session", "../../escape"]);
    assert_eq!(t.session, "../../escape");
    let files: Vec<String> = std::fs::read_dir(p.path(".ctxkeep/sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(!p.path("escape.json").exists() && !p.path("../escape.json").exists());
}

#[test]
fn a_dropping_message_count_suggests_truncation() {
    let p = init_with("80", "1000");
    let (t, _) = track(&p, &["--tokens", "100", "--messages", "40"]);
    assert!(!t.truncation_suspected);
    let (t, _) = track(&p, &["--messages", "41"]);
    assert_eq!(
        (t.messages, t.tokens),
        (Some(41), Some(100)),
        "--messages alone keeps the token count"
    );
    let a = p.ctxkeep(&["track", "--messages", "12"]).assert().success();
    let err = stderr_of(&a);
    assert!(
        err.contains("fell from 41 to 12") && err.contains("ctxkeep resume"),
        "{err}"
    );
    let ev = events(&p, "truncation_suspected");
    assert_eq!(ev.len(), 1);
    assert_eq!(
        (ev[0]["previous"].as_u64(), ev[0]["messages"].as_u64()),
        (Some(41), Some(12))
    );
    assert!(!track(&p, &["--messages", "13"]).0.truncation_suspected);
}

#[test]
fn count_source_is_an_estimate() {
    let p = init_with("80", "1000");
    p.write("notes.md", "hello world\n".repeat(50));
    let expected = ctxkeep::context::tokens::count(
        &"hello world\n".repeat(50),
        ctxkeep::context::tokens::Encoding::O200kBase,
    )
    .unwrap() as u64;
    let (t, _) = track(&p, &["--count", "notes.md"]);
    assert_eq!(
        (t.tokens, t.source.as_deref()),
        (Some(expected), Some("estimate"))
    );
    let out = p
        .ctxkeep(&["--json", "track", "--count", "-"])
        .write_stdin("hello world")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tokens"], 2);
    p.ctxkeep(&["track", "--count", "nope.md"])
        .assert()
        .code(66);
}

#[test]
fn a_manual_checkpoint_records_the_sessions_budget() {
    let p = init_with("99", "200000");
    track(&p, &["--tokens", "50000", "--session", "s1"]);
    let (v, _) = p.json(&["checkpoint", "--session", "s1", "--next", "carry on"]);
    assert_eq!(v["budget"]["tokens"], 50000);
    assert_eq!(v["budget"]["percent"], 25.0);
    let (v, _) = p.json(&["checkpoint", "--next", "no session tracked"]);
    assert!(v.get("budget").is_none(), "{v}");
}

#[test]
fn a_damaged_session_file_is_set_aside_and_the_session_starts_afresh() {
    for damaged in [&b"{\"id\": 5"[..], b"\x00\x17garbage\xff", b"[1, 2]\n"] {
        let p = init_with("80", "1000");
        p.write(".ctxkeep/sessions/default.json", damaged);
        assert_eq!(track(&p, &["--tokens", "5"]).0.tokens, Some(5));
        assert_eq!(track(&p, &["--add", "3"]).0.tokens, Some(8));
        assert_eq!(
            std::fs::read(p.path(".ctxkeep/sessions/default.json.bad")).unwrap(),
            damaged,
            "kept as it was"
        );
        let log = p.read(".ctxkeep/events.jsonl");
        let errors: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("\"event\":\"error\""))
            .collect();
        assert_eq!(errors.len(), 1, "{log}");
        assert!(
            errors[0].contains("default.json") && errors[0].contains("started afresh"),
            "{log}"
        );
    }
}

#[test]
fn an_empty_session_file_left_by_a_power_cut_starts_the_session_afresh() {
    // Live budgets are written without fsync (they are rebuilt from the next
    // reading); an empty file is what a power cut can leave.
    let p = init_with("80", "1000");
    p.write(".ctxkeep/sessions/default.json", "");
    assert_eq!(track(&p, &["--add", "7"]).0.tokens, Some(7));
    assert_eq!(track(&p, &["--add", "3"]).0.tokens, Some(10));
}

#[test]
fn concurrent_updates_are_never_lost() {
    let p = init_with("99", "100000");
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..20 {
                    p.ctxkeep(&["track", "--add", "1"]).assert().success();
                }
            });
        }
    });
    let session: Value = serde_json::from_str(&p.read(".ctxkeep/sessions/default.json")).unwrap();
    assert_eq!(session["tokens"], 160);
    let leftovers: Vec<_> = std::fs::read_dir(p.path(".ctxkeep/sessions"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn counting_a_grown_file_again_gives_the_whole_count() {
    let p = init_with("99", "1000000");
    let first = "fn main() {\n    println!(\"hi\");\n}\n".repeat(300);
    p.write("log.txt", &first);
    let whole = |t: &str| {
        ctxkeep::context::tokens::count(t, ctxkeep::context::tokens::Encoding::O200kBase).unwrap()
            as u64
    };
    assert_eq!(
        track(&p, &["--count", "log.txt"]).0.tokens,
        Some(whole(&first))
    );
    let grown = first.clone() + "// appended later\nlet y = 2;\n";
    p.write("log.txt", &grown);
    assert_eq!(
        track(&p, &["--count", "log.txt"]).0.tokens,
        Some(whole(&grown))
    );
    // Rewritten rather than appended: the remembered cursor must not be trusted.
    let rewritten = "something else entirely\n".repeat(10);
    p.write("log.txt", &rewritten);
    assert_eq!(
        track(&p, &["--count", "log.txt"]).0.tokens,
        Some(whole(&rewritten))
    );
    let session: Value = serde_json::from_str(&p.read(".ctxkeep/sessions/default.json")).unwrap();
    assert_eq!(session["count"]["cursor"]["len"], rewritten.len());
}

#[test]
fn the_model_table_gives_the_window_when_the_config_has_none() {
    let p = init_with("99", "200000");
    // A config without `window:`, with an override for an unknown model.
    let state = p.state().replace("window: 200000\n", "");
    let state = state.replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nmodels:\n  aide-gpt-5:\n    window: 300000\n",
        1,
    );
    p.write("project-state.md", &state);
    let rollout = |model: &str| {
        jsonl(&[
            codex_meta(),
            codex_turn_context(model),
            codex_token_count((20_000, 24_000), 50_000, None),
        ])
    };
    p.write("a.jsonl", rollout("gpt-4o"));
    let (t, _) = track(&p, &["--transcript", "a.jsonl"]);
    assert_eq!(
        (t.window, t.percent),
        (128_000, Some(18.8)),
        "gpt-4o from the table"
    );
    p.write("b.jsonl", rollout("aide-gpt-5"));
    assert_eq!(
        track(&p, &["--transcript", "b.jsonl"]).0.window,
        300_000,
        "config override"
    );
    p.write("c.jsonl", rollout("home-made-model"));
    assert_eq!(
        track(&p, &["--transcript", "c.jsonl"]).0.window,
        200_000,
        "unknown: default"
    );
}

#[test]
fn a_stage_with_nothing_new_writes_no_checkpoint_and_says_what_is_recorded() {
    let p = init_with("50:checkpoint", "200000");
    let before = p.state();
    let (t, code) = track(&p, &["--tokens", "150000"]);
    assert_eq!((code, names(&t)), (0, vec!["stage-50"]));
    assert_eq!(t.fired[0].checkpoint, None, "nothing new since ckpt-0001");
    assert_eq!(p.state(), before, "project-state.md not rewritten");
    assert_eq!(events(&p, "checkpoint_skipped")[0]["same_as"], "ckpt-0001");
    assert!(
        !t.instructions[0].contains("Recorded now"),
        "none was written now"
    );
    assert!(
        t.instructions[0].contains("Last recorded (ckpt-0001): phase \"implementing the parser\""),
        "{}",
        t.instructions[0]
    );
}

/// A session id of 128 punctuation bytes (each escaped to three in a file name, past the
/// 255 a name may have) is tracked like any other, and kept apart from one that differs in
/// its last byte.
#[test]
fn a_long_session_id_of_punctuation_is_tracked() {
    let p = Project::initialized();
    let long = "!".repeat(128);
    let other = format!("{}?", "!".repeat(127));
    let (_, code) = track(&p, &["--session", &long, "--tokens", "50000"]);
    assert_eq!(code, 0);
    let (_, code) = track(&p, &["--session", &other, "--tokens", "70000"]);
    assert_eq!(code, 0);
    let (v, code) = p.json(&["status", "--session", &long]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        (v["tracked"].as_bool(), v["tokens"].as_u64()),
        (Some(true), Some(50_000)),
        "{v}"
    );
    let (v, _) = p.json(&["status", "--session", &other]);
    assert_eq!(v["tokens"].as_u64(), Some(70_000), "{v}");
}
