//! The record a cold reader gets, measured on whole real sessions (`../shared/sessions/`, never
//! copied here): at every compaction, the checkpoint current after `PreCompact` against the
//! summary the agent wrote for itself at that moment. A report, not a gate.
//!
//! ```sh
//! CTXKEEP_SHARED_SESSIONS=../shared/sessions \
//!     cargo test --locked --test cli replay_record_report -- --ignored --nocapture
//! ```
//!
//! For each compaction: files recall (the files the summary names, found among the files the
//! record lists as changed or worked from, matched by their tail), the request recorded beside
//! the summary's "Primary Request" (printed both, for a person to judge), what remains (the
//! identifiers and words of the summary's pending tasks and next step found in the record's
//! `observed` block), and whether the recorded next step is filler ("Let me …", or a sentence
//! cut before its list). `CTXKEEP_REPLAY_BIN` runs another build's hooks (the figures before).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::report::{files_named, remaining_identifiers};
use super::run::{replay_file, Run};
use super::Agent;

/// The summary's section under the first heading naming one of `names`, up to the next numbered
/// or Markdown heading.
fn section(summary: &str, names: &[&str]) -> String {
    let lines: Vec<&str> = summary.lines().collect();
    let heading = |l: &str| {
        let t = l.trim();
        let bare = t.trim_start_matches(|c: char| c == '#' || c == '*' || c.is_whitespace());
        let numbered = bare
            .split_once(". ")
            .is_some_and(|(n, rest)| n.chars().all(|c| c.is_ascii_digit()) && rest.len() < 80);
        (t.starts_with('#') || numbered) && t.len() < 90
    };
    let Some(start) = lines.iter().position(|l| {
        let lower = l.to_lowercase();
        heading(l) && names.iter().any(|n| lower.contains(n))
    }) else {
        return String::new();
    };
    let mut out = Vec::new();
    // An indented section ends at the summary's closing words (an unindented paragraph).
    let indented = lines[start + 1..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with(' '));
    let mut blank = false;
    for l in &lines[start + 1..] {
        if heading(l) && !l.trim_start().starts_with(['-', ' ']) {
            let t = l.trim_start_matches(|c: char| c == '#' || c == '*' || c.is_whitespace());
            if t.starts_with(|c: char| c.is_ascii_digit()) || l.trim().starts_with('#') {
                break;
            }
        }
        if indented && blank && !l.starts_with(' ') && !l.trim().is_empty() {
            break;
        }
        blank = l.trim().is_empty();
        out.push(*l);
    }
    out.join("\n").trim().to_string()
}

/// The marked words of a text (snake_case, paths, names with digits, CamelCase) and its longer
/// plain words, lowercased, unique: what "found in the record" is judged on.
fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c))) {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        let digit = w.chars().any(|c| c.is_ascii_digit());
        let letter = w.chars().any(|c| c.is_alphabetic());
        let camel = w.chars().skip(1).any(|c| c.is_uppercase());
        let marked = w.contains('_') || w.contains('/') || w.contains('.') || (digit && letter);
        let keep = (w.chars().count() >= 4 && (marked || camel)) || w.chars().count() >= 8;
        if keep && letter && !STOP.contains(&w.to_lowercase().as_str()) {
            let t = w.to_lowercase();
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Words of a summary's framing, not of the work.
const STOP: &[&str] = &[
    "completed",
    "pending",
    "in_progress",
    "explicitly",
    "requested",
    "currently",
    "following",
    "implementation",
    "conversation",
    "summary",
];

/// Whether a recorded next step is filler: a "Let me …" that names no work after it, or a
/// sentence cut before the list it announces.
pub fn is_filler(step: &str) -> bool {
    let t = step.trim();
    let lower = t.to_lowercase();
    let cut_before_list = t.ends_with(':');
    let let_me = (lower.starts_with("let me ") || lower.starts_with("now let me "))
        && t.chars().count() < 80;
    cut_before_list || let_me
}

struct Row {
    name: String,
    line: usize,
    summary_files: Vec<String>,
    recalled: Vec<String>,
    request: String,
    follow_ups: Vec<String>,
    summary_request: String,
    remaining_terms: Vec<String>,
    remaining_found: Vec<String>,
    summary_remaining: String,
    next_step: String,
    filler: bool,
}

impl Row {
    fn recall(&self) -> Option<f64> {
        (!self.summary_files.is_empty())
            .then(|| self.recalled.len() as f64 / self.summary_files.len() as f64)
    }
    fn remaining_share(&self) -> Option<f64> {
        (!self.remaining_terms.is_empty())
            .then(|| self.remaining_found.len() as f64 / self.remaining_terms.len() as f64)
    }
    /// The pending work and next step count as found when half their terms are in the record.
    fn remaining_found(&self) -> bool {
        self.remaining_share().is_some_and(|s| s >= 0.5)
    }
}

/// A path's last components with `/` for `\`, for matching a summary's path written on another
/// machine (or another OS) against the record's.
fn tail(path: &str, n: usize) -> String {
    let p = path.replace('\\', "/");
    let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
    parts[parts.len().saturating_sub(n)..].join("/")
}

fn same_file(recorded: &str, named: &str) -> bool {
    let named_parts = named.replace('\\', "/").matches('/').count() + 1;
    let n = named_parts.clamp(1, 3);
    tail(recorded, n) == tail(named, n)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn rows(run: &Run) -> Vec<Row> {
    let mut out = Vec::new();
    for c in &run.replay.compactions {
        let Some(summary) = c.summary.as_deref() else {
            continue;
        };
        let record = c
            .pre_compact
            .and_then(|i| run.steps.get(i))
            .filter(|s| s.ran)
            .and_then(|s| run.checkpoints.get(&s.current));
        let observed = record.map(|r| &r["observed"]);
        let mut listed = strings(observed.and_then(|o| o.get("files")));
        listed.extend(strings(observed.and_then(|o| o.get("worked_from"))));
        let summary_files = files_named(&section(summary, &["files and code"]));
        let recalled = summary_files
            .iter()
            .filter(|f| listed.iter().any(|l| same_file(l, f)))
            .cloned()
            .collect();
        let summary_remaining = [
            section(summary, &["pending tasks"]),
            section(summary, &["next step"]),
        ]
        .join("\n");
        // The project's measure of what remains (`report::remaining_identifiers`: paths,
        // snake_case, names with digits from the "Pending Tasks" heading on), else the
        // section's longer words when it names no identifier.
        let mut remaining_terms = remaining_identifiers(summary);
        if remaining_terms.is_empty() {
            remaining_terms = terms(&summary_remaining);
        }
        let held = observed
            .map(|o| o.to_string().to_lowercase())
            .unwrap_or_default();
        let remaining_found = remaining_terms
            .iter()
            .filter(|t| held.contains(t.as_str()))
            .cloned()
            .collect();
        let next_step = observed
            .and_then(|o| o["next_step"].as_str())
            .unwrap_or_default()
            .to_string();
        out.push(Row {
            name: run.name.clone(),
            line: c.line,
            filler: is_filler(&next_step),
            next_step,
            summary_files,
            recalled,
            request: observed
                .and_then(|o| o["request"].as_str())
                .unwrap_or("–")
                .to_string(),
            follow_ups: strings(observed.and_then(|o| o.get("follow_ups"))),
            summary_request: section(summary, &["primary request"]),
            remaining_terms,
            remaining_found,
            summary_remaining,
        });
    }
    out
}

fn cell(text: &str, max: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let one = one.replace('|', "\\|");
    if one.chars().count() <= max {
        one
    } else {
        format!("{}…", one.chars().take(max).collect::<String>())
    }
}

fn sessions(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("claude-code")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "jsonl") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
#[ignore = "a report over ../shared/sessions: CTXKEEP_SHARED_SESSIONS=DIR, --ignored --nocapture"]
fn replay_record_report() {
    let Some(root) = std::env::var_os("CTXKEEP_SHARED_SESSIONS").map(PathBuf::from) else {
        println!("record report: CTXKEEP_SHARED_SESSIONS is not set; nothing to replay");
        return;
    };
    let files = sessions(&root);
    assert!(!files.is_empty(), "no sessions under {}", root.display());
    let rows: Vec<Row> = files
        .iter()
        .flat_map(|p| rows(&replay_file(p, Some(Agent::ClaudeCode))))
        .collect();
    let pct = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into());
    println!("\n| Session | Line | Files in summary | Recorded (recall) | Pending + next step identifiers found | Found | Next step | Filler |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} ({}) | {}/{} ({}) | {} | {} | {} |",
            cell(&r.name, 14),
            r.line,
            r.summary_files.len(),
            r.recalled.len(),
            pct(r.recall()),
            r.remaining_found.len(),
            r.remaining_terms.len(),
            pct(r.remaining_share()),
            if r.remaining_found() { "yes" } else { "no" },
            cell(&r.next_step, 70),
            if r.filler { "yes" } else { "no" },
        );
    }
    let named: usize = rows.iter().map(|r| r.summary_files.len()).sum();
    let recalled: usize = rows.iter().map(|r| r.recalled.len()).sum();
    let found = rows.iter().filter(|r| r.remaining_found()).count();
    let filler = rows.iter().filter(|r| r.filler).count();
    println!(
        "\nCompactions {}; files recall {recalled}/{named} ({}); pending work and next step found at {found} ({}); filler next steps {filler}",
        rows.len(),
        pct((named > 0).then(|| recalled as f64 / named as f64)),
        pct((!rows.is_empty()).then(|| found as f64 / rows.len() as f64)),
    );
    for r in &rows {
        let missed: Vec<&String> = r
            .summary_files
            .iter()
            .filter(|f| !r.recalled.contains(f))
            .collect();
        let unfound: Vec<&String> = r
            .remaining_terms
            .iter()
            .filter(|t| !r.remaining_found.contains(t))
            .collect();
        println!(
            "\n### {} line {}\n\n- request recorded: {}\n- follow-ups recorded: {:?}\n- the summary's request: {}\n- files missed: {missed:?}\n- the summary's pending tasks and next step: {}\n- their terms not in the record: {unfound:?}\n- next step recorded: {}",
            r.name,
            r.line,
            cell(&r.request, 400),
            r.follow_ups.iter().map(|f| cell(f, 160)).collect::<Vec<_>>(),
            cell(&r.summary_request, 600),
            cell(&r.summary_remaining, 600),
            cell(&r.next_step, 300),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filler_is_a_let_me_without_work_or_a_cut_list() {
        assert!(is_filler("Let me verify there are no errors."));
        assert!(is_filler("The key insertion points are:"));
        assert!(!is_filler("Run the parser tests; then commit"));
    }

    #[test]
    fn paths_match_by_tail_across_machines_and_systems() {
        assert!(same_file(r"D:\proj\website\docs\a.md", "website/docs/a.md"));
        assert!(same_file("/Users/a/proj/src/x.rs", "src/x.rs"));
        assert!(!same_file("/Users/a/proj/src/x.rs", "lib/x.rs"));
    }

    #[test]
    fn a_section_runs_to_the_next_numbered_heading() {
        let s = "1. Primary Request and Intent:\n   Fix the parser.\n   - keep tests\n2. Key Concepts:\n   - x";
        assert_eq!(
            section(s, &["primary request"]),
            "Fix the parser.\n   - keep tests"
        );
    }
}
