//! Where the late stages fire against where each real session actually compacted, over the
//! whole public sessions in `../shared/sessions` (read in place, never copied here): a
//! measurement, printed as Markdown, that fails when a stage of 95 % or more fires before 85 %
//! of the session's real compaction point, or when a percentage above 100 is given or logged.
//!
//! ```sh
//! CTXKEEP_SHARED_SESSIONS=../shared/sessions \
//!     cargo test --locked --test cli replay_limits -- --ignored --nocapture
//! ```
//!
//! `CTXKEEP_REPLAY_BIN=PATH` measures another build's hooks (e.g. main's, for the results before
//! a change).

use std::path::{Path, PathBuf};

use super::run::{replay_file, Run};
use super::Agent;

/// No stage at or above this percent may fire before [`EARLIEST`] of the real point.
const LATE_STAGE: f64 = 95.0;
/// The share of the session's real compaction point a late stage may fire at, at the earliest.
const EARLIEST: f64 = 85.0;

/// A late stage as a hook logged it.
struct LateStage {
    line: usize,
    stage: String,
    tokens: u64,
    /// The real compaction point it is measured against (the next compaction's, else the
    /// session's last one), and that compaction's line.
    point: Option<(u64, usize)>,
}

impl LateStage {
    fn share(&self) -> Option<f64> {
        let (point, _) = self.point?;
        Some((self.tokens as f64 * 1000.0 / point as f64).round() / 10.0)
    }
}

struct Measured {
    name: String,
    compactions: Vec<(usize, String, Option<u64>)>,
    late: Vec<LateStage>,
    /// The highest percentage logged with a stage or given to the model.
    highest: f64,
}

/// Every percentage in `text` (a number right before " %").
fn percents(text: &str) -> Vec<f64> {
    text.match_indices(" %")
        .filter_map(|(at, _)| {
            let head = &text[..at];
            let start = head
                .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
                .map_or(0, |i| i + 1);
            head[start..].parse().ok()
        })
        .collect()
}

fn measure(run: &Run) -> Measured {
    let compactions: Vec<(usize, String, Option<u64>)> = run
        .replay
        .compactions
        .iter()
        .map(|c| (c.line, c.trigger.clone(), c.pre_tokens))
        .collect();
    let point_for = |line: usize| {
        let known: Vec<(u64, usize)> = compactions
            .iter()
            .filter_map(|(l, _, p)| p.map(|p| (p, *l)))
            .collect();
        known
            .iter()
            .find(|(_, l)| *l > line)
            .or(known.last())
            .copied()
    };
    let mut late = Vec::new();
    let mut highest: f64 = 0.0;
    for step in run.ran() {
        for e in step.logged("stage") {
            for key in ["percent", "limit_percent"] {
                highest = highest.max(e[key].as_f64().unwrap_or(0.0));
            }
            let at = e["at"].as_f64().unwrap_or(0.0);
            if at >= LATE_STAGE {
                late.push(LateStage {
                    line: step.event.line,
                    stage: e["stage"].as_str().unwrap_or("?").to_string(),
                    tokens: e["tokens"].as_u64().unwrap_or(0),
                    point: point_for(step.event.line),
                });
            }
        }
        if let Some(text) = &step.context {
            highest = percents(text).into_iter().fold(highest, f64::max);
        }
    }
    Measured {
        name: run.name.clone(),
        compactions,
        late,
        highest,
    }
}

/// The whole sessions the report reads: Claude Code's and Codex's (`shared::transcripts`).
fn sessions(root: &Path) -> Vec<(PathBuf, Agent)> {
    super::shared::transcripts(root)
        .into_iter()
        .filter(|(_, agent)| matches!(agent, Agent::ClaudeCode | Agent::Codex))
        .collect()
}

#[test]
fn percents_are_read_from_text() {
    assert_eq!(
        percents("context is at 85.0 % (170000 of 200000 tokens), 101.8 % of the 167000"),
        [85.0, 101.8]
    );
    assert!(percents("no share here").is_empty());
}

#[test]
#[ignore = "a measurement over ../shared/sessions: CTXKEEP_SHARED_SESSIONS=DIR, --ignored --nocapture"]
fn replay_limits() {
    let Some(root) = std::env::var_os("CTXKEEP_SHARED_SESSIONS").map(PathBuf::from) else {
        println!("replay limits: CTXKEEP_SHARED_SESSIONS is not set; nothing to replay");
        return;
    };
    let files = sessions(&root);
    assert!(!files.is_empty(), "no sessions under {}", root.display());
    let measured: Vec<Measured> = files
        .iter()
        .map(|(path, agent)| measure(&replay_file(path, Some(*agent))))
        .collect();
    println!("\n## Late stages against each session's real compaction point\n");
    println!("| Session | Compactions (line, trigger, preTokens) | Stages ≥ 95 fired (line, stage, tokens, % of the real point) | Highest % logged or told |");
    println!("|---|---|---|---|");
    let mut early = Vec::new();
    let mut over = Vec::new();
    for m in &measured {
        let compactions: Vec<String> = m
            .compactions
            .iter()
            .map(|(l, t, p)| format!("{l} {t} {}", p.map_or("–".into(), |p| p.to_string())))
            .collect();
        let late: Vec<String> = m
            .late
            .iter()
            .map(|s| {
                let share = s.share().map_or("no point known".to_string(), |p| {
                    format!("{p} % of {}", s.point.unwrap().0)
                });
                format!("{} {} {} ({share})", s.line, s.stage, s.tokens)
            })
            .collect();
        println!(
            "| {} | {} | {} | {} |",
            m.name,
            compactions.join("; "),
            if late.is_empty() {
                "none".into()
            } else {
                late.join("; ")
            },
            m.highest
        );
        for s in &m.late {
            if s.share().is_some_and(|p| p < EARLIEST) {
                early.push(format!(
                    "{} line {}: {} at {:?} %",
                    m.name,
                    s.line,
                    s.stage,
                    s.share()
                ));
            }
        }
        if m.highest > 100.0 {
            over.push(format!("{}: {} %", m.name, m.highest));
        }
    }
    assert!(
        early.is_empty(),
        "late stages before {EARLIEST} % of the real point: {early:#?}"
    );
    assert!(over.is_empty(), "percentages above 100: {over:#?}");
}
