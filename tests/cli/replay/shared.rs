//! The replay over the real transcripts in `../shared/fixtures` (never copied here), printed as
//! Markdown: a report, not a gate.
//!
//! ```sh
//! CTXKEEP_SHARED_FIXTURES=../shared/fixtures \
//!     cargo test --locked --test cli replay_report -- --ignored --nocapture
//! ```
//!
//! `CTXKEEP_REPLAY_VERBOSE=1` also prints every loop warning and stage instruction in full, with
//! the event and transcript line that carried it, for judging them against the session.

use std::path::{Path, PathBuf};

use super::report::{self, Kind};
use super::run::replay_file;
use super::Agent;

/// Every JSONL transcript under the agents' folders, sorted, with the agent its folder names.
pub(super) fn transcripts(root: &Path) -> Vec<(PathBuf, Agent)> {
    let mut out = Vec::new();
    for (folder, agent) in [
        ("claude-code", Agent::ClaudeCode),
        ("codex", Agent::Codex),
        ("gemini", Agent::Gemini),
    ] {
        let mut stack = vec![root.join(folder)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    out.push((path, agent));
                }
            }
        }
    }
    out.sort();
    out
}

fn commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

#[test]
#[ignore = "a report over ../shared/fixtures: CTXKEEP_SHARED_FIXTURES=DIR, --ignored --nocapture"]
fn replay_report() {
    let Some(root) = std::env::var_os("CTXKEEP_SHARED_FIXTURES").map(PathBuf::from) else {
        println!("replay report: CTXKEEP_SHARED_FIXTURES is not set; nothing to replay");
        return;
    };
    let files = transcripts(&root);
    assert!(
        !files.is_empty(),
        "no JSONL transcripts under {}",
        root.display()
    );
    let runs: Vec<_> = files
        .iter()
        .map(|(path, agent)| replay_file(path, Some(*agent)))
        .collect();
    let verbose = std::env::var_os("CTXKEEP_REPLAY_VERBOSE").is_some();
    println!(
        "\n## Replay of {} transcripts at {}\n",
        runs.len(),
        commit()
    );
    println!("{}", report::markdown(&runs));
    for run in &runs {
        for failure in report::summarize(run).failures {
            println!("- {}: {failure}", run.name);
        }
        if !verbose {
            continue;
        }
        for a in report::audits(run) {
            println!(
                "\n### {} compaction at line {}\n\n- request recorded: {:?}\n- files in the summary: {:?}\n- of them changed in the transcript before it: {:?}\n- recorded by the checkpoint: {:?}\n- identifiers in what remains: {:?}\n- of them in the checkpoint: {:?}\n",
                run.name, a.line, a.request, a.summary_files, a.in_transcript, a.recalled,
                a.remaining, a.remaining_held
            );
        }
        for inj in report::injections(run) {
            for b in inj
                .blocks
                .iter()
                .filter(|b| matches!(b.kind, Kind::Loop | Kind::Stage))
            {
                println!(
                    "\n### {} line {} ({}, {})\n\n{}\n",
                    run.name,
                    inj.step.event.line,
                    inj.step.event.label(),
                    b.kind.name(),
                    b.text
                );
            }
        }
    }
}

/// One transcript, hook call by hook call: `CTXKEEP_REPLAY_FILE=PATH cargo test --locked --test
/// cli replay_one -- --ignored --nocapture` prints each event with its line, the cut, what the
/// hook printed and logged, then the checkpoints it wrote.
#[test]
#[ignore = "prints one transcript's replay: CTXKEEP_REPLAY_FILE=PATH, --ignored --nocapture"]
fn replay_one() {
    let Some(path) = std::env::var_os("CTXKEEP_REPLAY_FILE").map(PathBuf::from) else {
        println!("replay_one: CTXKEEP_REPLAY_FILE is not set");
        return;
    };
    let run = replay_file(&path, None);
    println!(
        "{} ({}), session {}",
        run.name,
        run.agent.name(),
        run.replay.session
    );
    for s in &run.steps {
        let logged: Vec<String> = s
            .logged
            .iter()
            .map(|e| {
                let what = e.get("why").or(e.get("trigger")).or(e.get("stage"));
                format!(
                    "{} {}",
                    e["event"].as_str().unwrap_or("?"),
                    what.map(|w| w.to_string()).unwrap_or_default()
                )
            })
            .collect();
        println!(
            "line {:>5} cut {:>5} {:<32} {} exit {} stdout {} chars, logged {:?}",
            s.event.line,
            s.event.cut,
            s.event.label(),
            if s.ran { "ran " } else { "(not installed)" },
            s.code,
            s.stdout.chars().count(),
            logged
        );
    }
    for s in run.ran() {
        for (to, text) in [
            ("the model", &s.context),
            ("the user", &s.system_message),
            ("the summarizer", &s.summarizer),
        ] {
            if let Some(text) = text {
                println!(
                    "\n{} at line {}, to {to}:\n{text}",
                    s.event.label(),
                    s.event.line
                );
            }
        }
    }
    for (id, c) in &run.checkpoints {
        println!("{id} {}: {}", c["trigger"], c["observed"]);
    }
}
