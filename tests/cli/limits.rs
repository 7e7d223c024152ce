//! Where each agent compacts on its own: the limit stages are measured
//! against, read from the agent's configuration or the front matter, and
//! shown by `track`, `status` and the status line.

use serde_json::Value;

use crate::support::Project;
use crate::track::track;
use crate::transcripts::*;

/// An initialized project with the default stages (80/90/95/98).
fn project(window: &str) -> Project {
    let p = Project::new();
    p.ctxkeep(&["init", "--window", window]).assert().success();
    p.commit_all("init");
    p.checkpoint(&[]).success();
    p
}

/// Adds `yaml` (top-level keys) to the front matter.
fn front(p: &Project, yaml: &str) {
    let text = p.state();
    let text = text.replacen("ctxkeep: 1\n", &format!("ctxkeep: 1\n{yaml}"), 1);
    p.write("project-state.md", text);
}

fn home_file(p: &Project, rel: &str, text: &str) {
    let path = p.home().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Climbs to just past each default stage of `limit` with `write(tokens)`
/// and checks that the stage fires there, below the agent's compaction
/// point, one at a time.
fn each_default_stage_fires_before(p: &Project, limit: u64, file: &str, write: &dyn Fn(u64)) {
    for at in [80u64, 90, 95, 98] {
        let tokens = limit * at / 100 + 50;
        assert!(
            tokens < limit,
            "{tokens} must be below the compaction point {limit}"
        );
        write(tokens);
        let (t, code) = track(p, &["--transcript", file]);
        assert_eq!(code, 0);
        assert_eq!(t.tokens, Some(tokens));
        assert_eq!(t.limit, limit);
        let fired: Vec<&str> = t.fired.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(fired, [format!("stage-{at}")], "at {tokens} of {limit}");
        assert!(t.limit_percent.unwrap() >= at as f64);
        assert!(t.percent.unwrap() < t.limit_percent.unwrap());
        // Until the agent was seen compacting, the model is shown where it is expected to.
        let said = format!(
            "of the {limit} at which the agent is expected to compact on its own; stage stage-{at}"
        );
        assert!(t.instructions[0].contains(&said), "{}", t.instructions[0]);
    }
}

#[test]
fn claude_code_every_stage_fires_before_it_compacts() {
    let p = project("200000");
    each_default_stage_fires_before(&p, 167_000, "s.jsonl", &|tokens| {
        p.write("s.jsonl", jsonl(&[claude_assistant("m", 1, 0, tokens - 1)]))
    });
    let (t, _) = track(&p, &["--transcript", "s.jsonl"]);
    assert_eq!(t.limit_source, "default");
    assert_eq!(t.stages_against, "limit");
    assert_eq!(t.limit_note, None);
}

#[test]
fn codex_every_stage_fires_before_it_compacts() {
    let p = project("200000");
    // Codex with a configured 200,000 window: its rollout reports 190,000.
    home_file(&p, ".codex/config.toml", "model_context_window = 200000\n");
    each_default_stage_fires_before(&p, 180_000, "rollout.jsonl", &|tokens| {
        p.write(
            "rollout.jsonl",
            jsonl(&[
                codex_meta(),
                codex_turn_context("gpt-5.5"),
                codex_token_count((tokens - 100, tokens), tokens, Some(190_000)),
            ]),
        )
    });
    let (t, _) = track(&p, &["--transcript", "rollout.jsonl"]);
    assert_eq!((t.window, t.limit_source.as_str()), (190_000, "default"));
}

#[test]
fn gemini_every_stage_fires_before_it_compresses() {
    let p = project("200000");
    each_default_stage_fires_before(&p, 524_288, "chat.jsonl", &|tokens| {
        p.write(
            "chat.jsonl",
            jsonl(&[gemini_meta(), gemini_user("u1"), gemini_reply("g1", tokens)]),
        )
    });
}

#[test]
fn codex_config_and_the_front_matter_set_the_limit() {
    let p = project("200000");
    let rollout = |tokens: u64| {
        p.write(
            "rollout.jsonl",
            jsonl(&[
                codex_meta(),
                codex_token_count((tokens - 100, tokens), tokens, Some(190_000)),
            ]),
        )
    };
    home_file(
        &p,
        ".codex/config.toml",
        "model_context_window = 200000\nmodel_auto_compact_token_limit = 120000\n",
    );
    rollout(100_000);
    let (t, _) = track(&p, &["--transcript", "rollout.jsonl"]);
    assert_eq!(t.limit, 120_000);
    assert_eq!(t.limit_source, "config:~/.codex/config.toml");
    assert_eq!(t.limit_percent, Some(83.3));
    assert_eq!(t.percent, Some(52.6));
    assert_eq!(t.stage.as_deref(), Some("stage-80"));

    // The front matter wins over the agent's configuration.
    front(&p, "compaction:\n  codex: \"60%\"\n");
    let (t, _) = track(&p, &["--transcript", "rollout.jsonl"]);
    assert_eq!(
        (t.limit, t.limit_source.as_str()),
        (114_000, "front-matter")
    );

    // `stages: window` measures stages against the window, as before limits.
    let text = p.state().replacen("compaction:\n  codex: \"60%\"\n", "", 1);
    p.write("project-state.md", text);
    front(&p, "compaction:\n  stages: window\n");
    let (t, _) = track(&p, &["--transcript", "rollout.jsonl"]);
    assert_eq!(t.stages_against, "window");
    assert_eq!(t.stage, None, "52.6 % of the window is below every stage");
    assert_eq!(t.limit, 120_000, "the limit is still shown");
}

#[test]
fn a_malformed_agent_config_never_fails_the_reading() {
    let p = project("200000");
    home_file(
        &p,
        ".codex/config.toml",
        "model_auto_compact_token_limit = [\n",
    );
    p.write(
        "rollout.jsonl",
        jsonl(&[codex_token_count((1_000, 1_100), 1_100, Some(190_000))]),
    );
    let (t, code) = track(&p, &["--transcript", "rollout.jsonl"]);
    assert_eq!(code, 0);
    assert_eq!((t.limit, t.limit_source.as_str()), (180_000, "default"));
    let note = t.limit_note.unwrap();
    assert!(
        note.starts_with("~/.codex/config.toml: not valid TOML"),
        "{note}"
    );
    let out = p.ctxkeep(&["status"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("limit note: ~/.codex/config.toml: not valid TOML"),
        "{text}"
    );
}

#[test]
fn manual_sources_keep_the_window_as_their_limit() {
    let p = project("200000");
    let (t, _) = track(&p, &["--tokens", "170000"]);
    assert_eq!((t.limit, t.limit_source.as_str()), (200_000, "window"));
    assert_eq!(t.limit_percent, t.percent);
    let fired: Vec<&str> = t.fired.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(fired, ["stage-80"], "85 % of the window, as before limits");
    // Unless the front matter gives them one.
    front(&p, "compaction:\n  default: 180000\n");
    let (t, _) = track(&p, &["--tokens", "171000"]);
    assert_eq!(
        (t.limit, t.limit_source.as_str()),
        (180_000, "front-matter")
    );
    assert_eq!(t.limit_percent, Some(95.0));
}

#[test]
fn status_shows_the_window_and_the_limit() {
    let p = project("200000");
    let (v, _) = p.json(&["status"]);
    assert_eq!(v["limit"], 200_000);
    assert_eq!(v["limit_source"], "window");
    assert_eq!(v["limit_percent"], Value::Null);
    p.write("s.jsonl", jsonl(&[claude_assistant("m", 1, 0, 150_299)]));
    track(&p, &["--transcript", "s.jsonl"]);
    let (v, code) = p.json(&["status"]);
    assert_eq!(code, 0);
    assert_eq!(v["window"], 200_000);
    assert_eq!(v["percent"], 75.2);
    assert_eq!(v["limit"], 167_000);
    assert_eq!(v["limit_percent"], 90.0);
    assert_eq!(v["limit_source"], "default");
    assert_eq!(v["stages_against"], "limit");
    assert_eq!(v["stage"], "stage-90");
    let out = p.ctxkeep(&["status"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("limit: 90 % of 167,000 tokens (the agent's default); stages measured against the limit"),
        "{text}"
    );
}

#[test]
fn an_automatic_compaction_seen_becomes_the_limit_the_stages_use() {
    let p = project("200000");
    p.checkpoint(&[]).success();
    let transcript = p.path("t.jsonl");
    let hook = |event: &str, extra: serde_json::Value| {
        let mut v = serde_json::json!({
            "session_id": "learn-1", "transcript_path": transcript, "cwd": p.root(),
            "hook_event_name": event,
        });
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let out = p
            .ctxkeep(&["hook", "claude-code"])
            .write_stdin(v.to_string())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(0) && stderr.is_empty(),
            "{stderr}"
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // The newest Claude Code compacts later than its documented point: at 190,000 here.
    let lines = std::cell::RefCell::new(Vec::new());
    let add = |line: String| {
        lines.borrow_mut().push(line);
        std::fs::write(&transcript, jsonl(&lines.borrow())).unwrap();
    };
    add(claude_assistant_on("claude-opus-4-6", "m1", 150_000));
    let said = hook("UserPromptSubmit", serde_json::json!({ "prompt": "x" }));
    assert!(
        said.contains("at which the agent is expected to compact"),
        "{said}"
    );
    // ctxkeep's last reading is 182,000; the agent's own token count at the compaction 190,000.
    add(claude_assistant_on("claude-opus-4-6", "m2", 182_000));
    hook("PreCompact", serde_json::json!({ "trigger": "auto" }));
    add(claude_compaction("auto", 190_000));
    hook("SessionStart", serde_json::json!({ "source": "compact" }));
    hook("PostCompact", serde_json::json!({ "trigger": "auto" }));
    assert!(
        !p.path(".ctxkeep/compactions.json").exists(),
        "judged at the next reading"
    );
    add(claude_assistant_on("claude-opus-4-6", "m3", 30_000));
    hook("UserPromptSubmit", serde_json::json!({ "prompt": "go on" }));
    // A manual compaction says nothing of where the agent compacts on its own.
    add(claude_assistant_on("claude-opus-4-6", "m4", 120_000));
    hook("PreCompact", serde_json::json!({ "trigger": "manual" }));
    add(claude_compaction("manual", 120_000));
    hook("PostCompact", serde_json::json!({ "trigger": "manual" }));
    add(claude_assistant_on("claude-opus-4-6", "m5", 25_000));
    hook("UserPromptSubmit", serde_json::json!({ "prompt": "z" }));
    let learned: serde_json::Value =
        serde_json::from_str(&p.read(".ctxkeep/compactions.json")).unwrap();
    assert_eq!(
        learned["claude-code"]["claude-opus-4-6"],
        serde_json::json!([190_000])
    );
    let events = p.read(".ctxkeep/events.jsonl");
    assert!(
        events.contains(r#""why":"manual""#),
        "the manual one is recorded as such: {events}"
    );

    // The next reading measures against 190,000, and the model is shown that it was seen.
    add(claude_assistant_on("claude-opus-4-6", "m6", 160_000));
    let (t, _) = track(&p, &["--transcript", "t.jsonl", "--session", "learn-1"]);
    assert_eq!((t.limit, t.limit_source.as_str()), (190_000, "observed"));
    assert_eq!(t.limit_learned_from, Some(1));
    add(claude_assistant_on("claude-opus-4-6", "m7", 182_000));
    let said = hook("UserPromptSubmit", serde_json::json!({ "prompt": "y" }));
    assert!(
        said.contains("95.8 % of the 190000 at which the agent compacted on its own before"),
        "{said}"
    );
    assert!(!said.contains("expected"), "{said}");
}

/// `track --json ARGS` with `env` added to the hermetic environment.
fn track_with(p: &Project, args: &[&str], env: &[(&str, &str)]) -> crate::track::Track {
    let mut all = vec!["--json", "track"];
    all.extend_from_slice(args);
    let mut cmd = p.ctxkeep(&all);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

/// A plain `ctxkeep init` (its configured window is 200,000) and a first checkpoint.
fn plain_project() -> Project {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    p.commit_all("init");
    p.checkpoint(&[]).success();
    p
}

fn write_on(p: &Project, model: &str, context: u64) {
    p.write(
        "t.jsonl",
        jsonl(&[claude_assistant_on(model, &format!("m{context}"), context)]),
    );
}

#[test]
fn a_1m_model_past_200k_is_measured_against_its_own_window() {
    let p = plain_project();
    // Before: 164k on claude-opus-5 fired "URGENT: hand off now" (82 % of a 200k window).
    write_on(&p, "claude-opus-5", 164_000);
    let t = track_with(&p, &["--transcript", "t.jsonl"], &[]);
    assert_eq!(
        (t.window, t.window_source.as_str(), t.percent),
        (1_000_000, "model", Some(16.4))
    );
    assert!(t.fired.is_empty() && t.instructions.is_empty(), "{t:?}");
    // Before: "percent": 148.5 at 297k.
    write_on(&p, "claude-opus-5-5", 297_000);
    let t = track_with(&p, &["--transcript", "t.jsonl"], &[]);
    assert_eq!((t.percent, t.limit), (Some(29.7), 967_000));
    assert!(t.fired.is_empty());
    // Claude Code's own setting holds a 1M model to 200k: measured against that.
    write_on(&p, "claude-opus-5", 150_000);
    let held = [("CLAUDE_CODE_DISABLE_1M_CONTEXT", "1")];
    let t = track_with(&p, &["--transcript", "t.jsonl", "--session", "held"], &held);
    assert_eq!(
        (t.window, t.window_source.as_str(), t.limit),
        (200_000, "env:CLAUDE_CODE_DISABLE_1M_CONTEXT", 167_000)
    );
}

#[test]
fn usage_past_the_assumed_window_proves_a_larger_one_said_once() {
    let p = plain_project();
    // The table has claude-opus-4-6 at 200k; a session on its 1M variant says nothing of it
    // in the transcript.
    write_on(&p, "claude-opus-4-6", 150_000);
    let t = track_with(&p, &["--transcript", "t.jsonl"], &[]);
    assert_eq!((t.window, t.percent), (200_000, Some(75.0)));
    for (tokens, percent) in [(297_000, 29.7), (310_000, 31.0)] {
        write_on(&p, "claude-opus-4-6", tokens);
        let t = track_with(&p, &["--transcript", "t.jsonl"], &[]);
        assert_eq!(
            (t.window, t.window_source.as_str(), t.percent),
            (1_000_000, "evidence", Some(percent))
        );
        assert!(t.limit_percent.unwrap() <= 100.0);
    }
    let events = p.read(".ctxkeep/events.jsonl");
    assert_eq!(
        events.matches(r#""event":"window_evidence""#).count(),
        1,
        "{events}"
    );
    // A model whose family has no window that large: unknown, never a number.
    p.write(
        "t.jsonl",
        jsonl(&[claude_assistant_on("claude-opus-4-6", "x", 1_500_000)]),
    );
    let t = track_with(&p, &["--transcript", "t.jsonl", "--session", "huge"], &[]);
    assert_eq!(
        (t.window_source.as_str(), t.percent, t.limit_percent),
        ("unknown", None, None)
    );
    assert!(t.fired.is_empty(), "nothing fires on an unknown window");
    let out = p
        .ctxkeep(&["status", "--session", "huge"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("window unknown"), "{text}");
    assert!(!text.contains("750"), "no percent past 100: {text}");
}

#[test]
fn autocompactwindow_in_claude_codes_settings_sets_the_limit_per_model() {
    let p = plain_project();
    write_on(&p, "claude-opus-5", 100_000);
    p.write(
        ".claude/settings.json",
        r#"{"autoCompactWindow": 400000, "modelSettings": {"claude-sonnet-5": {"autoCompactWindow": 300000}}}"#,
    );
    let t = track_with(&p, &["--transcript", "t.jsonl"], &[]);
    assert_eq!(
        t.limit, 367_000,
        "400,000 less Claude Code's 33,000 margins"
    );
    assert!(
        t.limit_source.starts_with("config:") && t.limit_source.ends_with(".claude/settings.json"),
        "{}",
        t.limit_source
    );
    write_on(&p, "claude-sonnet-5", 100_000);
    let t = track_with(&p, &["--transcript", "t.jsonl", "--session", "s5"], &[]);
    assert_eq!(t.limit, 267_000, "the model's own setting");
    // The environment wins over the files.
    let env = [("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "250000")];
    let t = track_with(&p, &["--transcript", "t.jsonl", "--session", "s6"], &env);
    assert_eq!(
        (t.limit, t.limit_source.as_str()),
        (217_000, "env:CLAUDE_CODE_AUTO_COMPACT_WINDOW")
    );
}

#[test]
fn a_stage_fires_once_per_fill_a_dip_and_climb_fires_nothing_again() {
    let p = project("200000");
    let before = std::cell::RefCell::new(Vec::<String>::new());
    // The stages this reading fired: fired now, not fired before it.
    let fired = |tokens: &str| -> Vec<String> {
        let (t, _) = track(&p, &["--tokens", tokens]);
        let now: Vec<String> = t.fired.iter().map(|f| f.name.clone()).collect();
        let new = now
            .iter()
            .filter(|n| !before.borrow().contains(n))
            .cloned()
            .collect();
        *before.borrow_mut() = now;
        new
    };
    assert_eq!(fired("190500"), ["stage-80", "stage-90", "stage-95"]);
    // A cleared tool output: 2–3k down, then back up, twice.
    for tokens in ["187800", "191000", "188200", "192500"] {
        assert!(fired(tokens).is_empty(), "{tokens}");
    }
    // Well below (more than 10 % of the limit under stage-95): it fires again on the climb.
    assert!(fired("165000").is_empty());
    assert_eq!(fired("190500"), ["stage-95"]);
}

/// Runs Claude Code's hook for `event` in session `session` of transcript `t.jsonl`; its stdout.
fn claude_hook(p: &Project, session: &str, event: &str, extra: Value) -> String {
    let mut v = serde_json::json!({
        "session_id": session, "transcript_path": p.path("t.jsonl"), "cwd": p.root(),
        "hook_event_name": event,
    });
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(v.to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(0) && stderr.is_empty(),
        "{stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The transcript grows by `line`.
fn append(p: &Project, line: String) {
    let mut text = std::fs::read_to_string(p.path("t.jsonl")).unwrap_or_default();
    text.push_str(&line);
    text.push('\n');
    p.write("t.jsonl", text);
}

fn events_named(p: &Project, event: &str) -> Vec<Value> {
    p.read(".ctxkeep/events.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == event)
        .collect()
}

#[test]
fn a_compaction_forced_by_a_model_switch_or_an_idle_one_teaches_nothing() {
    let p = plain_project();
    let s = "switch-1";
    // Real-shaped: Opus on a 1M window at 149,997, `/model sonnet`, and Claude Code compacts
    // at once at its own 173,977, above where Sonnet compacts under load.
    append(&p, claude_assistant_on("claude-opus-4-6", "m1", 149_997));
    claude_hook(
        &p,
        s,
        "UserPromptSubmit",
        serde_json::json!({ "prompt": "x" }),
    );
    claude_hook(
        &p,
        s,
        "PreCompact",
        serde_json::json!({ "trigger": "auto" }),
    );
    append(&p, claude_compaction("auto", 173_977));
    claude_hook(
        &p,
        s,
        "SessionStart",
        serde_json::json!({ "source": "compact" }),
    );
    claude_hook(
        &p,
        s,
        "PostCompact",
        serde_json::json!({ "trigger": "auto" }),
    );
    append(&p, claude_assistant_on("claude-sonnet-4-6", "m2", 29_374));
    claude_hook(
        &p,
        s,
        "UserPromptSubmit",
        serde_json::json!({ "prompt": "y" }),
    );
    assert!(!p.path(".ctxkeep/compactions.json").exists());
    let not = events_named(&p, "compaction_not_learned");
    assert_eq!(not.len(), 1, "{not:?}");
    assert_eq!(
        (&not[0]["why"], &not[0]["tokens"]),
        (
            &serde_json::json!("model-switch"),
            &serde_json::json!(173_977)
        )
    );

    // An idle compaction (nobody at the keyboard) gets its pre-compact checkpoint, recorded
    // as idle, and teaches nothing either.
    append(&p, claude_assistant_on("claude-sonnet-4-6", "m3", 120_000));
    claude_hook(&p, s, "Stop", serde_json::json!({}));
    let before = events_named(&p, "checkpoint").len();
    claude_hook(
        &p,
        s,
        "PreCompact",
        serde_json::json!({ "trigger": "idle" }),
    );
    let written = events_named(&p, "checkpoint");
    assert_eq!(written.len(), before + 1, "{written:?}");
    assert!(
        p.read(".ctxkeep/events.jsonl")
            .contains(r#""compaction":"idle""#),
        "recorded as idle"
    );
    append(&p, claude_compaction("auto", 120_000));
    claude_hook(
        &p,
        s,
        "PostCompact",
        serde_json::json!({ "trigger": "idle" }),
    );
    append(&p, claude_assistant_on("claude-sonnet-4-6", "m4", 20_000));
    claude_hook(
        &p,
        s,
        "UserPromptSubmit",
        serde_json::json!({ "prompt": "z" }),
    );
    assert!(!p.path(".ctxkeep/compactions.json").exists());
    let not = events_named(&p, "compaction_not_learned");
    assert_eq!(not.last().unwrap()["why"], "idle");
}

#[test]
fn a_model_switch_rebases_the_window_and_a_clear_rearms_the_stages() {
    let p = plain_project();
    let s = "switch-2";
    append(&p, claude_assistant_on("claude-opus-5", "m1", 180_000));
    let said = claude_hook(
        &p,
        s,
        "UserPromptSubmit",
        serde_json::json!({ "prompt": "x" }),
    );
    assert_eq!(said, "", "18 % of Opus 5's 1M window");
    // `/model` to a 200k model: its window and compaction point apply from now, and the
    // stages the smaller window crosses are given with the new model's next request.
    let said = claude_hook(
        &p,
        s,
        "PostModelSwitch",
        serde_json::json!({ "from_model": "claude-opus-5", "to_model": "claude-opus-4-6",
            "context_tokens": 181_000 }),
    );
    assert!(said.contains("stage stage-98 (handoff)"), "{said}");
    let (t, _) = p.json(&["status", "--session", s]);
    assert_eq!(
        (&t["tokens"], &t["window"], &t["limit"], &t["window_source"]),
        (
            &Value::from(181_000),
            &Value::from(200_000),
            &Value::from(167_000),
            &Value::from("model")
        )
    );
    assert_eq!(t["handoff_due"], true);
    // `/clear` empties the context: every stage is armed again.
    claude_hook(
        &p,
        s,
        "SessionStart",
        serde_json::json!({ "source": "clear" }),
    );
    let (t, _) = p.json(&["status", "--session", s]);
    assert_eq!(t["fired"], serde_json::json!([]), "{t}");
    assert_eq!(t["handoff_due"], false);
}

#[test]
fn a_configured_window_above_the_models_is_the_users_word_for_its_1m_variant() {
    let p = project("1000000");
    write_on(&p, "claude-opus-4-6", 150_000);
    let t = track_with(&p, &["--transcript", "t.jsonl"], &[]);
    assert_eq!(
        (t.window, t.window_source.as_str(), t.percent),
        (1_000_000, "config", Some(15.0))
    );
    assert!(
        t.fired.is_empty(),
        "no stage at 15 % of the window it runs on"
    );
}

#[test]
fn a_gemini_compression_teaches_only_from_past_its_point() {
    let p = plain_project();
    let hook = |input: u64, id: &str| {
        p.write(
            "chat.jsonl",
            jsonl(&[gemini_meta(), gemini_user("u1"), gemini_reply(id, input)]),
        );
        let payload = serde_json::json!({
            "session_id": "gem-1", "transcript_path": p.path("chat.jsonl"), "cwd": p.root(),
            "hook_event_name": "BeforeAgent", "prompt": "go on",
        });
        let out = p
            .ctxkeep(&["hook", "gemini"])
            .write_stdin(payload.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
    };
    let learned = || -> Value {
        serde_json::from_str(&p.read(".ctxkeep/compactions.json")).unwrap_or(Value::Null)
    };
    // Past 90 % of its compression point (524,288), then a drop: Gemini compressed on its own.
    hook(500_000, "g1");
    hook(100_000, "g2");
    assert_eq!(
        learned()["gemini"]["gemini-2.5-pro"],
        serde_json::json!([500_000])
    );
    // A drop from 88 % of the point it is now known to compress at: a `/compress` by hand.
    hook(440_000, "g3");
    hook(90_000, "g4");
    assert_eq!(
        learned()["gemini"]["gemini-2.5-pro"],
        serde_json::json!([500_000])
    );
}
