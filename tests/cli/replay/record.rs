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
//! record lists as changed or worked from, matched by their tail; counted over every file named
//! and over those the main session's own tool calls named), the request recorded beside the
//! summary's "Primary Request" (printed both, for a person to judge), what remains (the marked
//! words of the summary's "Pending Tasks" and "Next Step" sections found in the parts of the
//! record that say what remains: the request and follow-ups, the open plan items, the next
//! step, the agent's summary's remains, the tracker, plan mode's plan, what the session left open, the checkpoint's `remaining` and
//! `next_action`; not its lists of files and commands), and whether the recorded next step is
//! filler ("Let me …", or a sentence cut before its list); then a reading sheet (the request,
//! follow-ups, next step, open plan items a reader is shown, the older summary's remains, what
//! was left open) to judge by reading. A summary that says nothing remains
//! has nothing to find and is counted apart. `CTXKEEP_REPLAY_BIN` runs another build's hooks
//! (the results before).

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

/// What "found in the record" is judged on, lowercased, unique: the identifiers of a text (the
/// project's rule, `report::remaining_identifiers`: snake_case, files, names with digits) and
/// its camelCase names, and what it quotes (see [`quoted`]); else, when it has none, its longer
/// plain words. Neither the agent's own transcript (the path a summary ends with) nor prose
/// pairs ("create/update") are the work.
fn terms(text: &str) -> Vec<String> {
    terms_with(text, quoted)
}

/// [`terms`] with the former rule for quotes ([`quoted_phrases`]), for the results before.
fn terms_before_quote_rule(text: &str) -> Vec<String> {
    terms_with(text, quoted_phrases)
}

fn terms_with(text: &str, quotes: fn(&str) -> Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = remaining_identifiers(&format!("Pending Tasks:\n{text}"));
    // camelCase names outside paths and file names (those count once, as the file).
    for token in text
        .split_whitespace()
        .filter(|t| !t.contains(['/', '.', '\\']))
    {
        for w in token.split(|c: char| !c.is_alphanumeric()) {
            let camel =
                w.chars().any(|c| c.is_lowercase()) && w.chars().skip(1).any(char::is_uppercase);
            if camel && w.chars().count() >= 6 && !out.contains(&w.to_lowercase()) {
                out.push(w.to_lowercase());
            }
        }
    }
    out.retain(|t| !(t.ends_with(".jsonl") && (t.contains("redacted") || t.contains(".claude"))));
    for q in quotes(text) {
        if !out.contains(&q) {
            out.push(q);
        }
    }
    if out.is_empty() {
        out = plain_words(text);
    }
    out
}

/// What `text` quotes, as a reader would look for it: a quote holding code spans (a summary
/// quoting a plan: `> 1. `mise run test` - all tests pass`) by those spans, the commands and
/// names it marks; any other by its words once Markdown's markers (`#`, `>`, `1.`, `-`, `*`)
/// are taken out, when they are four or more, lowercased, blanks collapsed, cut to 60
/// characters.
fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for q in text.split(['"', '\u{201c}', '\u{201d}']).skip(1).step_by(2) {
        let spans: Vec<String> = q
            .split('`')
            .skip(1)
            .step_by(2)
            .map(squash)
            .filter(|s| !s.is_empty())
            .collect();
        if !spans.is_empty() {
            out.extend(spans);
            continue;
        }
        let words: Vec<&str> = q
            .split_whitespace()
            .filter(|w| !is_markdown_marker(w))
            .collect();
        if words.len() >= 4 {
            out.push(squash(&words.join(" ")).chars().take(60).collect());
        }
    }
    out
}

/// `#`, `##`, `>`, `-`, `*`, `1.`: a Markdown marker, not content.
fn is_markdown_marker(word: &str) -> bool {
    word.chars().all(|c| c == '#')
        || matches!(word, ">" | "-" | "*")
        || word
            .strip_suffix('.')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The former rule: the phrases of four words or more `text` quotes, lowercased, blanks
/// collapsed, cut to 60 characters.
fn quoted_phrases(text: &str) -> Vec<String> {
    text.split(['"', '\u{201c}', '\u{201d}'])
        .skip(1)
        .step_by(2)
        .map(squash)
        .filter(|q| q.split_whitespace().count() >= 4)
        .map(|q| q.chars().take(60).collect())
        .collect()
}

fn squash(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The longer plain words of a text, lowercased, unique, framing words aside.
fn plain_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let t = w.to_lowercase();
        if w.chars().count() >= 8 && !STOP.contains(&t.as_str()) && !out.contains(&t) {
            out.push(t);
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
    /// The files the record lists (changed and worked from), and how many of them the summary
    /// names: the record's precision.
    listed: usize,
    listed_named: usize,
    listed_unnamed: Vec<String>,
    request: String,
    follow_ups: Vec<String>,
    summary_request: String,
    remaining_terms: Vec<String>,
    remaining_found: Vec<String>,
    /// Whether the measure found it with the former rule for quotes ([`quoted_phrases`]).
    found_before_quote_rule: bool,
    /// The summary says nothing remains: nothing to find.
    nothing_pending: bool,
    /// The former measure: identifiers from the "Pending Tasks" heading to the summary's end,
    /// found anywhere in `observed` (files and commands included).
    lax_found: bool,
    /// The summary's files the main session's own tool calls named before the compaction.
    touched: Vec<String>,
    summary_remaining: String,
    next_step: String,
    /// What the record says the session left open (`observed.left_open`), as JSON.
    left_open: String,
    filler: bool,
    /// The open plan items a reader is shown (none when a stated step is newer than the plan).
    open_items: Vec<String>,
    /// What remained by the agent's summary at the compaction before, when the record keeps it.
    from_summary: String,
    /// The summary's "Current Work" and "Optional Next Step", for reading the record against.
    summary_current: String,
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
        !self.nothing_pending && self.remaining_share().is_some_and(|s| s >= 0.5)
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

/// [`same_file`], with a path the summary names under one of the session's working folders
/// (`cwds`, the publisher's machine) compared relative to it: the record shows the project's
/// files relative to the project (`notes/vamp.md` is `/Users/a/dev/duet/notes/vamp.md`).
fn same_file_in(recorded: &str, named: &str, cwds: &[String]) -> bool {
    let relative = !recorded.starts_with(['/', '~']) && !recorded.contains(":\\");
    let inside = cwds
        .iter()
        .find_map(|c| named.strip_prefix(c.as_str())?.strip_prefix('/'));
    match inside {
        Some(rel) if relative => recorded.replace('\\', "/") == rel,
        _ => same_file(recorded, named),
    }
}

/// The working folders the main session's lines name before line `upto` (1-based).
fn session_folders(run: &Run, upto: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in run
        .transcript
        .lines
        .iter()
        .take(upto.saturating_sub(1))
        .filter_map(|l| l.value.as_ref())
    {
        if let Some(c) = v["cwd"].as_str() {
            let c = c.trim_end_matches('/').to_string();
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
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
        let cwds = session_folders(run, c.line);
        let recalled = summary_files
            .iter()
            .filter(|f| listed.iter().any(|l| same_file_in(l, f, &cwds)))
            .cloned()
            .collect();
        let listed_unnamed: Vec<String> = listed
            .iter()
            .filter(|l| !summary_files.iter().any(|f| same_file_in(l, f, &cwds)))
            .cloned()
            .collect();
        let listed_named = listed.len() - listed_unnamed.len();
        let summary_remaining = [
            section(summary, &["pending tasks"]),
            section(summary, &["next step"]),
        ]
        .join("\n");
        let remaining_terms = terms(&summary_remaining);
        let held = remains_text(record);
        let remaining_found: Vec<String> = remaining_terms
            .iter()
            .filter(|t| held.contains(t.as_str()))
            .cloned()
            .collect();
        let terms_before = terms_before_quote_rule(&summary_remaining);
        let hits_before = terms_before
            .iter()
            .filter(|t| held.contains(t.as_str()))
            .count();
        let found_before_quote_rule =
            !terms_before.is_empty() && hits_before * 2 >= terms_before.len();
        // The former measure, printed beside the new one.
        let lax_terms = remaining_identifiers(summary);
        let lax_terms = if lax_terms.is_empty() {
            terms(&summary_remaining)
        } else {
            lax_terms
        };
        let everything = observed
            .map(|o| o.to_string().to_lowercase())
            .unwrap_or_default();
        let lax_hits = lax_terms
            .iter()
            .filter(|t| everything.contains(t.as_str()))
            .count();
        let lax_found = !lax_terms.is_empty() && lax_hits * 2 >= lax_terms.len();
        let nothing_pending = says_none(&section(summary, &["pending tasks"]))
            && says_none(&section(summary, &["next step"]));
        let touched = summary_files
            .iter()
            .filter(|f| main_session_named(run, c.line, f))
            .cloned()
            .collect();
        let next_step = observed
            .and_then(|o| o["next_step"].as_str())
            .unwrap_or_default()
            .to_string();
        let left_open = observed
            .and_then(|o| o.get("left_open"))
            .map(Value::to_string)
            .unwrap_or_default();
        let newer = observed.is_some_and(|o| o["next_step_newer_than_plan"] == true);
        let open_items: Vec<String> = observed
            .and_then(|o| o["plan"].as_array())
            .into_iter()
            .flatten()
            .filter(|p| !newer && p["status"] != "completed")
            .filter_map(|p| {
                Some(format!(
                    "[{}] {}",
                    p["status"].as_str()?,
                    p["text"].as_str()?
                ))
            })
            .collect();
        let from_summary = observed
            .map(|o| &o["from_summary"])
            .filter(|f| f.is_object())
            .map(|f| {
                ["pending", "current_work", "next_step"]
                    .iter()
                    .filter_map(|k| f[*k].as_str().map(|v| format!("{k}: {v}")))
                    .collect::<Vec<_>>()
                    .join(" / ")
            })
            .unwrap_or_default();
        out.push(Row {
            open_items,
            from_summary,
            summary_current: [
                section(summary, &["current work"]),
                section(summary, &["next step"]),
            ]
            .join(" / "),
            left_open,
            name: run.name.clone(),
            line: c.line,
            filler: is_filler(&next_step),
            next_step,
            summary_files,
            recalled,
            listed: listed.len(),
            listed_named,
            listed_unnamed,
            request: observed
                .and_then(|o| o["request"].as_str())
                .unwrap_or("–")
                .to_string(),
            follow_ups: strings(observed.and_then(|o| o.get("follow_ups"))),
            summary_request: section(summary, &["primary request"]),
            remaining_terms,
            remaining_found,
            found_before_quote_rule: found_before_quote_rule && !nothing_pending,
            nothing_pending,
            lax_found,
            touched,
            summary_remaining,
        });
    }
    out
}

/// The parts of a checkpoint that say what remains, lowercased: the request and follow-ups,
/// the open plan items, the next step, the agent's summary's remains, the tracker, the plan
/// file and plan mode's plan, what the session left open (`left_open`), and the checkpoint's
/// own `remaining` and `next_action`. Not the files or commands.
fn remains_text(record: Option<&Value>) -> String {
    let Some(r) = record else {
        return String::new();
    };
    let o = &r["observed"];
    let open: Vec<&Value> = o["plan"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["status"] != "completed")
        .collect();
    let parts = [
        o["request"].clone(),
        o["follow_ups"].clone(),
        serde_json::json!(open),
        o["next_step"].clone(),
        o["from_summary"].clone(),
        o["tracker"].clone(),
        o["plan_file"].clone(),
        o["from_plan_mode"].clone(),
        o["left_open"].clone(),
        r["remaining"].clone(),
        r["next_action"].clone(),
    ];
    let text = parts
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(" ")
        .replace("\\n", " ");
    squash(&text)
}

/// A summary part that says nothing remains ("None explicitly pending", "No explicit next
/// step requested"), or no such part.
fn says_none(part: &str) -> bool {
    let t = part
        .trim()
        .trim_start_matches(['-', '*', ' '])
        .to_lowercase();
    t.is_empty()
        || t.starts_with("none")
        || t.starts_with("no explicit")
        || t.starts_with("no pending")
}

/// Whether one of the main session's own tool calls before line `upto` (1-based) named the
/// file `named` in its input (a read, an edit, a search, a command): a file the session touched,
/// not one the summary only mentions or a subagent read.
fn main_session_named(run: &Run, upto: usize, named: &str) -> bool {
    let tail2 = tail(named, 2);
    let needle = tail2.rsplit('/').next().unwrap_or("");
    run.transcript
        .lines
        .iter()
        .take(upto.saturating_sub(1))
        .filter_map(|l| l.value.as_ref())
        .filter(|v| v["type"] == "assistant" && v["isSidechain"] != true)
        .flat_map(|v| {
            v["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use")
        .any(|b| {
            // The fields that name what a call works on (a subagent's task among them), not
            // the text it writes.
            ["file_path", "notebook_path", "path", "command", "prompt"]
                .iter()
                .filter_map(|k| b["input"][*k].as_str())
                .any(|v| {
                    let v = v.replace('\\', "/");
                    v.contains(&tail2) || (tail2 == needle && v.contains(needle))
                })
        })
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
    println!("\n| Session | Line | Files in summary (touched) | Recorded (recall) | Files listed (named by the summary) | Pending + next step terms found | Found | Found by the former rule for quotes | Former measure | Next step | Filler |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} ({}) | {} ({}) | {} ({}) | {}/{} ({}) | {} | {} | {} | {} | {} |",
            cell(&r.name, 14),
            r.line,
            r.summary_files.len(),
            r.touched.len(),
            r.recalled.len(),
            pct(r.recall()),
            r.listed,
            r.listed_named,
            r.remaining_found.len(),
            r.remaining_terms.len(),
            pct(r.remaining_share()),
            if r.nothing_pending {
                "nothing pending"
            } else if r.remaining_found() {
                "yes"
            } else {
                "no"
            },
            if r.nothing_pending {
                "–"
            } else if r.found_before_quote_rule {
                "yes"
            } else {
                "no"
            },
            if r.lax_found { "yes" } else { "no" },
            cell(&r.next_step, 70),
            if r.filler { "yes" } else { "no" },
        );
    }
    let named: usize = rows.iter().map(|r| r.summary_files.len()).sum();
    let recalled: usize = rows.iter().map(|r| r.recalled.len()).sum();
    let touched: usize = rows.iter().map(|r| r.touched.len()).sum();
    let recalled_touched: usize = rows
        .iter()
        .map(|r| r.touched.iter().filter(|f| r.recalled.contains(f)).count())
        .sum();
    let found = rows.iter().filter(|r| r.remaining_found()).count();
    let to_find = rows.iter().filter(|r| !r.nothing_pending).count();
    let lax = rows.iter().filter(|r| r.lax_found).count();
    let before_quote_rule = rows.iter().filter(|r| r.found_before_quote_rule).count();
    let filler = rows.iter().filter(|r| r.filler).count();
    let listed: usize = rows.iter().map(|r| r.listed).sum();
    let listed_named: usize = rows.iter().map(|r| r.listed_named).sum();
    println!(
        "\nCompactions {}; files listed {listed}, of which the summaries name {listed_named} ({}); files recall {recalled}/{named} ({}), over the files the main session's calls named {recalled_touched}/{touched} ({}); pending work and next step found at {found} of {to_find} with something pending ({}; {found} of {} over all); with the former rule for quotes {before_quote_rule} of {to_find}; by the former measure {lax} of {}; filler next steps {filler}",
        rows.len(),
        pct((listed > 0).then(|| listed_named as f64 / listed as f64)),
        pct((named > 0).then(|| recalled as f64 / named as f64)),
        pct((touched > 0).then(|| recalled_touched as f64 / touched as f64)),
        pct((to_find > 0).then(|| found as f64 / to_find as f64)),
        rows.len(),
        rows.len(),
    );
    // The sheet a person reads to judge the request and what remains against the summary.
    println!("\n| Session | Line | Request recorded | Follow-ups | Next step recorded | Open plan items shown | Older summary's remains kept | Left open |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&r.name, 14),
            r.line,
            cell(&r.request, 70),
            r.follow_ups.len(),
            if r.next_step.is_empty() {
                "–".to_string()
            } else {
                cell(&r.next_step, 70)
            },
            r.open_items.len(),
            if r.from_summary.is_empty() {
                "no"
            } else {
                "yes"
            },
            if r.left_open.is_empty() { "no" } else { "yes" },
        );
    }
    for r in &rows {
        let missed: Vec<String> = r
            .summary_files
            .iter()
            .filter(|f| !r.recalled.contains(f))
            .map(|f| {
                if r.touched.contains(f) {
                    f.clone()
                } else {
                    format!("{f} (no call of the main session named it)")
                }
            })
            .collect();
        let unfound: Vec<&String> = r
            .remaining_terms
            .iter()
            .filter(|t| !r.remaining_found.contains(t))
            .collect();
        println!(
            "\n### {} line {}\n\n- request recorded: {}\n- follow-ups recorded: {:?}\n- the summary's request: {}\n- files missed: {missed:?}\n- files listed the summary does not name: {:?}\n- the summary's pending tasks and next step: {}\n- their terms not in the record: {unfound:?}\n- next step recorded: {}\n- open plan items shown: {:?}\n- the older summary's remains kept: {}\n- left open recorded: {}\n- the summary's current work and next step: {}",
            r.name,
            r.line,
            cell(&r.request, 400),
            r.follow_ups.iter().map(|f| cell(f, 160)).collect::<Vec<_>>(),
            cell(&r.summary_request, 600),
            r.listed_unnamed,
            cell(&r.summary_remaining, 600),
            cell(&r.next_step, 300),
            r.open_items.iter().map(|o| cell(o, 120)).collect::<Vec<_>>(),
            cell(&r.from_summary, 300),
            cell(&r.left_open, 600),
            cell(&r.summary_current, 500),
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
    fn what_remains_is_looked_for_only_where_the_record_says_what_remains() {
        let record = serde_json::json!({
            "next_action": "ship it",
            "observed": {
                "request": "Add the parse_table test",
                "plan": [{"text": "old_done_item", "status": "completed"},
                         {"text": "wire_the_flag", "status": "pending"}],
                "files": ["src/lexer.rs"],
                "commands": [{"command": "cargo test lexer_cases"}]
            }
        });
        let held = remains_text(Some(&record));
        assert!(held.contains("parse_table") && held.contains("wire_the_flag"));
        assert!(!held.contains("lexer") && !held.contains("old_done_item"));
    }

    #[test]
    fn a_summary_that_says_nothing_remains_and_the_agents_transcript_are_not_terms() {
        assert!(says_none("- None explicitly pending - the fix was applied"));
        assert!(says_none("No explicit next step requested."));
        assert!(!says_none("Run `mise run test`"));
        assert_eq!(
            terms("Run `parse_table` tests; see /Users/a/.claude/projects/x/REDACTED.jsonl"),
            ["parse_table"]
        );
        assert_eq!(
            terms("Deploy everything afterwards"),
            ["everything", "afterwards"]
        );
        assert_eq!(
            terms("Fix `findSessionsForWorktree`; create/update the PR. The user said: \"commit all that is staged now\""),
            ["findsessionsforworktree", "commit all that is staged now"]
        );
    }

    #[test]
    fn a_quote_of_markdown_is_looked_for_by_its_code_spans_and_words_not_its_markers() {
        let quoting_a_plan =
            "Run tests. The plan states: > \"## Checks > 1. `make test` - all pass > 2. `make lint` - clean\"";
        assert_eq!(terms(quoting_a_plan), ["make test", "make lint"]);
        assert_eq!(
            terms_before_quote_rule(quoting_a_plan),
            ["## checks > 1. `make test` - all pass > 2. `make lint` - cle"]
        );
        assert_eq!(
            quoted("said: \"## Done > 1. ship the parser today\""),
            ["done ship the parser today"]
        );
    }

    #[test]
    fn a_named_path_under_the_sessions_folder_matches_the_projects_relative_path() {
        let cwds = vec!["/Users/a/dev/duet".to_string()];
        assert!(same_file_in(
            "notes/vamp.md",
            "/Users/a/dev/duet/notes/vamp.md",
            &cwds
        ));
        assert!(!same_file_in(
            "README.md",
            "/Users/a/dev/lore/README.md",
            &cwds
        ));
        assert!(same_file_in(
            "/Users/a/dev/lore/README.md",
            "/Users/a/dev/lore/README.md",
            &cwds
        ));
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
