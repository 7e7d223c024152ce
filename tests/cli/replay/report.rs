//! What a replay shows: the injections by kind and where they went, blocks repeated within one
//! injection, stages marked where no instruction was given, the checkpoints by trigger, and at
//! each compaction the checkpoint current at `PreCompact` against the agent's own summary.
//! The wording ctxkeep injects is recognised in `kind_of` alone.

use std::collections::BTreeMap;

use serde_json::Value;

use super::run::{Run, Step};
use super::Agent;

/// What a block of injected text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The resume prompt (with a stuck warning in front, when there is one).
    Resume,
    /// A restored conversation's note of what changed.
    Note,
    /// A stage's instruction.
    Stage,
    /// A loop ("gutter") warning.
    Loop,
    /// After a compaction, instead of the prompt: what the summary left out, or the note
    /// given while the summary cannot be read yet.
    GiveBack,
    Other,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Resume => "resume prompt",
            Kind::Note => "note",
            Kind::Stage => "stage instruction",
            Kind::Loop => "loop warning",
            Kind::GiveBack => "give-back",
            Kind::Other => "other",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Block {
    pub kind: Kind,
    pub text: String,
}

/// The kind of block a line starts, if it starts one.
fn kind_of(line: &str) -> Option<Kind> {
    let lower = line.to_ascii_lowercase();
    if line.starts_with("WARNING: ")
        || line.starts_with("You are continuing work from a checkpoint")
    {
        return Some(Kind::Resume);
    }
    let rest = lower.strip_prefix("ctxkeep: ")?;
    Some(
        if rest.starts_with("the compaction summary")
            || rest.starts_with("the conversation was compacted")
        {
            Kind::GiveBack
        } else if rest.contains("loop") {
            Kind::Loop
        } else if rest.starts_with("context is at") || rest.contains(" stage ") {
            Kind::Stage
        } else if rest.starts_with("since this session") || rest.starts_with("checkpoint ") {
            Kind::Note
        } else {
            Kind::Other
        },
    )
}

/// The injected text cut into the blocks ctxkeep joined (each starts at a line `kind_of` knows;
/// a stuck warning and the resume prompt after it are one block).
pub fn blocks(context: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for line in context.split('\n') {
        let starts = kind_of(line).filter(|_| {
            // "You are continuing…" right after a stuck warning belongs to it.
            !(line.starts_with("You are continuing")
                && out.last().is_some_and(|b| {
                    b.kind == Kind::Resume
                        && b.text.starts_with("WARNING: ")
                        && !b.text.contains("You are continuing")
                }))
        });
        match (starts, out.last_mut()) {
            (None, Some(b)) => {
                b.text.push('\n');
                b.text.push_str(line);
            }
            (kind, _) => out.push(Block {
                kind: kind.unwrap_or(Kind::Other),
                text: line.to_string(),
            }),
        }
    }
    for b in &mut out {
        b.text = b.text.trim_end().to_string();
    }
    out
}

/// Extra copies of lines (of at least 40 characters) within one injection: the same sentence
/// given again, e.g. one "Recorded now (…)" per stage.
pub fn repeated(context: &str) -> usize {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for line in context.lines().map(str::trim) {
        if line.chars().count() >= 40 {
            *seen.entry(line).or_default() += 1;
        }
    }
    seen.values().map(|n| n - 1).sum()
}

/// Whether what a hook of this event adds reaches the model: Claude Code and Codex read
/// `additionalContext` at a session's start, a prompt and a tool's end; Gemini CLI at a prompt
/// (`BeforeAgent`, where a start's context goes too) and a tool's end.
pub fn reaches_model(agent: Agent, event: &str) -> bool {
    match agent {
        Agent::ClaudeCode => matches!(
            event,
            "SessionStart" | "UserPromptSubmit" | "PostToolUse" | "PostToolUseFailure"
        ),
        Agent::Codex => matches!(event, "SessionStart" | "UserPromptSubmit" | "PostToolUse"),
        Agent::Gemini => matches!(event, "SessionStart" | "BeforeAgent" | "AfterTool"),
    }
}

/// One hook's injection, cut into blocks.
pub struct Injection<'a> {
    pub step: &'a Step,
    pub blocks: Vec<Block>,
    pub chars: usize,
    pub repeated: usize,
}

pub fn injections(run: &Run) -> Vec<Injection<'_>> {
    run.ran()
        .filter_map(|s| {
            let context = s.context.as_deref()?;
            Some(Injection {
                step: s,
                blocks: blocks(context),
                chars: context.chars().count(),
                repeated: repeated(context),
            })
        })
        .collect()
}

/// One transcript's results.
#[derive(Debug, Default)]
pub struct Summary {
    pub hook_calls: usize,
    pub injections: usize,
    pub injected_chars: usize,
    pub max_chars: usize,
    pub by_kind: BTreeMap<Kind, usize>,
    /// Injections holding several stage instructions.
    pub stacked: usize,
    /// Resume prompts given with a stuck warning in front.
    pub stuck_warnings: usize,
    pub repeated: usize,
    /// Stages logged as fired by a hook that gave no stage instruction, by event.
    pub unsaid_stages: BTreeMap<String, usize>,
    /// Loop patterns logged by a hook that gave no loop warning.
    pub unsaid_loops: usize,
    /// Checkpoints written, by trigger.
    pub checkpoints: BTreeMap<String, usize>,
    pub skipped_checkpoints: usize,
    /// Hooks that exited non-zero, wrote to stderr, logged an error or printed what the agent
    /// does not accept.
    pub failures: Vec<String>,
    /// Injections at an event whose output does not reach the model.
    pub misplaced: usize,
}

impl Summary {
    pub fn count(&self, kind: Kind) -> usize {
        self.by_kind.get(&kind).copied().unwrap_or(0)
    }
}

pub fn summarize(run: &Run) -> Summary {
    let mut s = Summary {
        hook_calls: run.ran().count(),
        ..Summary::default()
    };
    for inj in injections(run) {
        s.injections += 1;
        s.injected_chars += inj.chars;
        s.max_chars = s.max_chars.max(inj.chars);
        s.repeated += inj.repeated;
        let stages = inj.blocks.iter().filter(|b| b.kind == Kind::Stage).count();
        if stages > 1 {
            s.stacked += 1;
        }
        for b in &inj.blocks {
            *s.by_kind.entry(b.kind).or_default() += 1;
            if b.kind == Kind::Resume && b.text.starts_with("WARNING: ") {
                s.stuck_warnings += 1;
            }
        }
        if !reaches_model(run.agent, &inj.step.event.name) {
            s.misplaced += 1;
        }
    }
    for step in run.ran() {
        let given = step.context.as_deref().map(blocks).unwrap_or_default();
        let stages = step.logged("stage").count();
        if stages > 0 && !given.iter().any(|b| b.kind == Kind::Stage) {
            *s.unsaid_stages.entry(step.event.name.clone()).or_default() += stages;
        }
        let loops = step.logged("gutter").count();
        if loops > 0 && !given.iter().any(|b| b.kind == Kind::Loop) {
            s.unsaid_loops += loops;
        }
        for e in step.logged("checkpoint") {
            let trigger = e["trigger"].as_str().unwrap_or("?").to_string();
            *s.checkpoints.entry(trigger).or_default() += 1;
        }
        s.skipped_checkpoints += step.logged("checkpoint_skipped").count();
        let mut why = Vec::new();
        if step.code != 0 {
            why.push(format!("exit {}", step.code));
        }
        if !step.stderr.trim().is_empty() {
            why.push(format!("stderr {:?}", step.stderr.trim()));
        }
        if let Some(e) = step.logged("error").next() {
            why.push(format!("error event {}", e["message"]));
        }
        if let Some(bad) = &step.invalid {
            why.push(bad.clone());
        }
        if !why.is_empty() {
            s.failures.push(format!(
                "{} at line {}: {}",
                step.event.label(),
                step.event.line,
                why.join("; ")
            ));
        }
    }
    s
}

/// At one compaction: the checkpoint current when `PreCompact` had run, against the summary the
/// agent wrote.
#[derive(Debug)]
pub struct Audit {
    pub line: usize,
    pub trigger: String,
    pub pre_tokens: Option<u64>,
    /// The checkpoint current after the `PreCompact` hook, and its trigger.
    pub checkpoint: Option<String>,
    pub checkpoint_trigger: Option<String>,
    pub summary_chars: Option<usize>,
    /// Files the summary names, those of them the transcript shows the agent changing before the
    /// compaction (what a checkpoint could know of: a window cut from a longer session starts
    /// after the rest), and those the checkpoint records.
    pub summary_files: Vec<String>,
    pub in_transcript: Vec<String>,
    pub recalled: Vec<String>,
    /// The request the checkpoint records.
    pub request: Option<String>,
    pub nudge: bool,
    pub request_in_summary: bool,
    /// Plan items pending or in progress, and whether an own next step is recorded.
    pub open_items: usize,
    pub next_step: bool,
    /// Identifiers in the summary's pending work / current work / next step, and how many of
    /// them the checkpoint holds anywhere.
    pub remaining: Vec<String>,
    pub remaining_held: Vec<String>,
    /// The checkpoint's facts (ctxkeep's own rule, `ctxkeep::transcripts::compaction_summary::facts`): how many, how
    /// many the summary has, and how many the summary and what ctxkeep injected after the
    /// compaction (the resume prompt, or the give-back) have together.
    pub facts: usize,
    pub facts_in_summary: Option<usize>,
    pub facts_after: usize,
    /// Characters of the resume prompts and give-backs injected after the compaction (until
    /// the next one), and the injections.
    pub injected_chars: usize,
    pub injected: Vec<Kind>,
}

impl Audit {
    pub fn recall(&self) -> Option<f64> {
        (!self.summary_files.is_empty())
            .then(|| self.recalled.len() as f64 / self.summary_files.len() as f64)
    }

    /// Recall over the summary's files the transcript shows changed before the compaction.
    pub fn recall_in_transcript(&self) -> Option<f64> {
        (!self.in_transcript.is_empty()).then(|| {
            let held = self
                .recalled
                .iter()
                .filter(|f| self.in_transcript.contains(f))
                .count();
            held as f64 / self.in_transcript.len() as f64
        })
    }

    pub fn overlap(&self) -> Option<f64> {
        (!self.remaining.is_empty())
            .then(|| self.remaining_held.len() as f64 / self.remaining.len() as f64)
    }
}

/// Requests that only ask the agent to go on.
const NUDGES: &[&str] = &[
    "continue",
    "go on",
    "keep going",
    "carry on",
    "proceed",
    "go ahead",
    "resume",
    "check again",
    "try again",
];

/// Whether a request is a nudge rather than a task: at most six words, one of them a nudge.
pub fn is_nudge(request: &str) -> bool {
    let words: Vec<String> = request
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let text = words.join(" ");
    words.len() <= 6 && NUDGES.iter().any(|n| text.contains(n))
}

/// File extensions a path named in a summary ends with.
const EXTENSIONS: &[&str] = &[
    "rs", "toml", "lock", "md", "txt", "json", "jsonl", "yaml", "yml", "ex", "exs", "heex", "eex",
    "erl", "hrl", "js", "mjs", "cjs", "ts", "tsx", "jsx", "py", "go", "rb", "java", "kt", "c", "h",
    "cc", "cpp", "hpp", "cs", "sh", "sql", "html", "css", "scss", "vue", "svelte", "swift", "php",
    "xml", "ini", "cfg", "conf", "env", "dart", "lua", "zig", "proto", "graphql",
];

/// The file paths a text names.
pub fn files_named(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in words(text) {
        let token = token.trim_start_matches("./");
        let Some((stem, ext)) = token.rsplit_once('.') else {
            continue;
        };
        if stem.is_empty() || stem.ends_with('/') || !EXTENSIONS.contains(&ext) {
            continue;
        }
        // The agent's own data (the transcript the summary points at) is not the work.
        if AGENT_DATA.iter().any(|d| token.contains(d)) {
            continue;
        }
        if !out.iter().any(|f| f == token) {
            out.push(token.to_string());
        }
    }
    // A bare name that a path in the list ends with is that path.
    let all = out.clone();
    out.retain(|f| !all.iter().any(|g| g != f && g.ends_with(&format!("/{f}"))));
    out
}

const AGENT_DATA: &[&str] = &["/.claude/", "/.codex/", "/.gemini/"];

/// Plan status words, not identifiers of the work.
const STATUS_WORDS: &[&str] = &["in_progress", "pending", "completed"];

/// The files the agent changed in the transcript's first `upto` lines, from its edit tools'
/// arguments (Claude Code `Edit`/`Write`/`MultiEdit`/`NotebookEdit`, Codex `apply_patch`,
/// Gemini `write_file`/`replace`).
pub fn changed_files(run: &Run, upto: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: &str| {
        if !p.is_empty() && !out.iter().any(|f| f == p) {
            out.push(p.to_string());
        }
    };
    for line in run.transcript.lines.iter().take(upto) {
        let Some(v) = &line.value else { continue };
        match run.agent {
            Agent::ClaudeCode => {
                for b in v
                    .pointer("/message/content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let edit = matches!(
                        b["name"].as_str(),
                        Some("Edit" | "Write" | "MultiEdit" | "NotebookEdit")
                    );
                    if b["type"] == "tool_use" && edit {
                        let input = &b["input"];
                        add(input["file_path"]
                            .as_str()
                            .or(input["notebook_path"].as_str())
                            .unwrap_or_default());
                    }
                }
            }
            Agent::Codex => {
                let p = &v["payload"];
                if p["name"] == "apply_patch" {
                    let patch = p["input"]
                        .as_str()
                        .map(str::to_string)
                        .or_else(|| {
                            let args: Value =
                                serde_json::from_str(p["arguments"].as_str()?).ok()?;
                            args["input"].as_str().map(str::to_string)
                        })
                        .unwrap_or_default();
                    for l in patch.lines() {
                        for head in ["*** Update File: ", "*** Add File: ", "*** Delete File: "] {
                            if let Some(path) = l.strip_prefix(head) {
                                add(path.trim());
                            }
                        }
                    }
                }
            }
            Agent::Gemini => {
                for call in v["toolCalls"].as_array().into_iter().flatten() {
                    if matches!(call["name"].as_str(), Some("write_file" | "replace")) {
                        add(call["args"]["file_path"].as_str().unwrap_or_default());
                    }
                }
            }
        }
    }
    out
}

/// Words of a text as paths and identifiers are written: letters, digits and `_ . / - @ ~ +`,
/// without a trailing full stop.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || "_./-@~+".contains(c)))
        .map(|w| w.trim_end_matches(['.', '-']))
        .filter(|w| !w.is_empty() && !w.starts_with("http"))
}

/// Whether two paths name the same file (one may be relative, or only the file's name).
fn same_file(a: &str, b: &str) -> bool {
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// The identifiers in the part of a summary about what remains (from its first "Pending Tasks",
/// "Current Work" or "Next Step" heading on): paths, snake_case, ids with digits and so on.
pub fn remaining_identifiers(summary: &str) -> Vec<String> {
    let lower = summary.to_lowercase();
    let Some(from) = ["pending tasks", "current work", "next step"]
        .iter()
        .filter_map(|h| lower.find(h))
        .min()
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for w in words(&summary[from..]) {
        let inner = w.trim_matches(|c: char| !c.is_alphanumeric());
        let digit = inner.chars().any(|c| c.is_ascii_digit());
        let letter = inner.chars().any(|c| c.is_alphabetic());
        // snake_case, a file, or a name with a number in it (`spotter-gqc.6`, `v2`); not
        // hyphenated words, word/word pairs, status words or the agent's own files.
        let marked = (inner.contains('_') && !STATUS_WORDS.contains(&inner))
            || !files_named(inner).is_empty()
            || (digit && letter);
        if inner.chars().count() >= 4 && marked && !AGENT_DATA.iter().any(|d| w.contains(&d[1..])) {
            let id = inner.to_lowercase();
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// The text a compaction's checkpoint facts are looked for in, and the facts found.
fn facts_found(record: Option<&Value>, text: &str) -> (usize, usize) {
    let Some(c) = record.and_then(|r| {
        serde_json::from_value::<ctxkeep::domain::checkpoint::Checkpoint>(r.clone()).ok()
    }) else {
        return (0, 0);
    };
    let facts = c.facts();
    let (kept, _) = ctxkeep::transcripts::compaction_summary::facts::split(&facts, text);
    (facts.len(), kept.len())
}

/// The resume prompts and give-backs injected after compaction `i` (before the next one).
fn injected_after(run: &Run, i: usize) -> Vec<Block> {
    let compactions = &run.replay.compactions;
    let from = compactions[i].pre_compact.map_or(0, |p| p + 1);
    let to = compactions
        .get(i + 1)
        .and_then(|c| c.pre_compact)
        .unwrap_or(run.steps.len());
    run.steps
        .iter()
        .enumerate()
        .filter(|(n, s)| *n >= from && *n < to && s.ran)
        .filter_map(|(_, s)| s.context.as_deref())
        .flat_map(blocks)
        .filter(|b| matches!(b.kind, Kind::Resume | Kind::GiveBack))
        .collect()
}

pub fn audits(run: &Run) -> Vec<Audit> {
    run.replay
        .compactions
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let checkpoint = c
                .pre_compact
                .and_then(|i| run.steps.get(i))
                .filter(|s| s.ran)
                .map(|s| s.current.clone());
            let record = checkpoint.as_ref().and_then(|id| run.checkpoints.get(id));
            let observed = record.map(|r| &r["observed"]);
            let summary = c.summary.as_deref().unwrap_or_default();
            let summary_files = files_named(summary);
            let checkpoint_files: Vec<&str> = observed
                .and_then(|o| o["files"].as_array())
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let changed = changed_files(run, c.line.saturating_sub(1));
            let in_transcript = summary_files
                .iter()
                .filter(|f| changed.iter().any(|c| same_file(c, f)))
                .cloned()
                .collect();
            let recalled = summary_files
                .iter()
                .filter(|f| checkpoint_files.iter().any(|c| same_file(c, f)))
                .cloned()
                .collect();
            let request = observed
                .and_then(|o| o["request"].as_str())
                .map(str::to_string);
            let flat = |s: &str| {
                s.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            };
            let request_in_summary = request.as_deref().is_some_and(|r| {
                let r = flat(r);
                let head: String = r.chars().take(40).collect();
                !head.is_empty() && flat(summary).contains(&head)
            });
            let open_items = observed
                .and_then(|o| o["plan"].as_array())
                .into_iter()
                .flatten()
                .filter(|p| matches!(p["status"].as_str(), Some("pending" | "in_progress")))
                .count();
            let next_step = observed
                .and_then(|o| o["next_step"].as_str())
                .is_some_and(|s| !s.trim().is_empty());
            let ids = remaining_identifiers(summary);
            let held = record
                .map(|r| r.to_string().to_lowercase())
                .unwrap_or_default();
            let found = ids
                .iter()
                .filter(|id| held.contains(id.as_str()))
                .cloned()
                .collect();
            let given = injected_after(run, i);
            let given_text: Vec<&str> = given.iter().map(|b| b.text.as_str()).collect();
            let (facts, in_summary) = facts_found(record, summary);
            let (_, after) = facts_found(record, &format!("{summary}\n{}", given_text.join("\n")));
            Audit {
                facts,
                facts_in_summary: c.summary.as_ref().map(|_| in_summary),
                facts_after: after,
                injected_chars: given.iter().map(|b| b.text.chars().count()).sum(),
                injected: given.iter().map(|b| b.kind).collect(),
                line: c.line,
                trigger: c.trigger.clone(),
                pre_tokens: c.pre_tokens,
                checkpoint_trigger: record
                    .and_then(|r| r["trigger"].as_str())
                    .map(str::to_string),
                checkpoint,
                summary_chars: c.summary.as_ref().map(|s| s.chars().count()),
                summary_files,
                in_transcript,
                recalled,
                nudge: request.as_deref().is_some_and(is_nudge),
                request,
                request_in_summary,
                open_items,
                next_step,
                remaining: ids,
                remaining_held: found,
            }
        })
        .collect()
}

/// A table cell: one line, no pipes, at most `max` characters.
fn cell(text: &str, max: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let one = one.replace('|', "\\|");
    if one.chars().count() <= max {
        one
    } else {
        format!("{}…", one.chars().take(max).collect::<String>())
    }
}

fn counts(map: &BTreeMap<String, usize>) -> String {
    if map.is_empty() {
        return "–".into();
    }
    map.iter()
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report as Markdown: one row per transcript, then each loop warning and stage
/// instruction, then each compaction.
pub fn markdown(runs: &[Run]) -> String {
    let mut out = String::new();
    out.push_str(
        "| Transcript | Agent | Lines | Hook calls | Injections (chars, max) | Resume prompts (stuck warning) | Loop warnings | Stage instructions (stacked) | Repeated lines | Stages marked, no instruction | Checkpoints (skipped) | Failures |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for run in runs {
        let s = summarize(run);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} ({}, {}) | {} ({}) | {} | {} ({}) | {} | {} | {} ({}) | {} |\n",
            cell(&run.name, 60),
            run.agent.name(),
            run.lines,
            s.hook_calls,
            s.injections,
            s.injected_chars,
            s.max_chars,
            s.count(Kind::Resume),
            s.stuck_warnings,
            s.count(Kind::Loop),
            s.count(Kind::Stage),
            s.stacked,
            s.repeated,
            counts(&s.unsaid_stages),
            counts(&s.checkpoints),
            s.skipped_checkpoints,
            s.failures.len(),
        ));
    }
    out.push_str(
        "\n| Transcript | Line | Event | Kind | Chars | Text |\n|---|---|---|---|---|---|\n",
    );
    for run in runs {
        for inj in injections(run) {
            for b in inj
                .blocks
                .iter()
                .filter(|b| matches!(b.kind, Kind::Loop | Kind::Stage))
            {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} |\n",
                    cell(&run.name, 40),
                    inj.step.event.line,
                    inj.step.event.label(),
                    b.kind.name(),
                    b.text.chars().count(),
                    cell(b.text.lines().next().unwrap_or_default(), 110),
                ));
            }
        }
    }
    out.push_str(
        "\n| Transcript | Line | Trigger | preTokens | Checkpoint at PreCompact | Summary chars | Files in summary (changed in the transcript) | Recorded (recall; of those changed) | Request recorded | Nudge | In summary | Open plan items | Next step | Remaining ids found |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for run in runs {
        for a in audits(run) {
            let pct = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into());
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} ({}) | {} ({}; {}) | {} | {} | {} | {} | {} | {}/{} ({}) |\n",
                cell(&run.name, 40),
                a.line,
                a.trigger,
                a.pre_tokens.map(|t| t.to_string()).unwrap_or_else(|| "–".into()),
                match (&a.checkpoint, &a.checkpoint_trigger) {
                    (Some(id), Some(t)) => format!("{id} ({t})"),
                    (Some(id), None) => id.clone(),
                    _ => "–".into(),
                },
                a.summary_chars.map(|c| c.to_string()).unwrap_or_else(|| "unreadable".into()),
                a.summary_files.len(),
                a.in_transcript.len(),
                a.recalled.len(),
                pct(a.recall()),
                pct(a.recall_in_transcript()),
                cell(a.request.as_deref().unwrap_or("–"), 60),
                if a.nudge { "yes" } else { "no" },
                if a.request_in_summary { "yes" } else { "no" },
                a.open_items,
                if a.next_step { "yes" } else { "no" },
                a.remaining_held.len(),
                a.remaining.len(),
                pct(a.overlap()),
            ));
        }
    }
    out.push_str(
        "\n| Transcript | Line | Trigger | Checkpoint facts | In the summary | Summary + injected | Injected after (chars) |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for run in runs {
        for a in audits(run) {
            let share = |n: usize| {
                if a.facts == 0 {
                    "–".to_string()
                } else {
                    format!("{n} ({:.2})", n as f64 / a.facts as f64)
                }
            };
            let kinds: Vec<&str> = a.injected.iter().map(|k| k.name()).collect();
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} ({}) |\n",
                cell(&run.name, 40),
                a.line,
                a.trigger,
                a.facts,
                a.facts_in_summary
                    .map(share)
                    .unwrap_or_else(|| "unreadable".into()),
                share(a.facts_after),
                a.injected_chars,
                if kinds.is_empty() {
                    "nothing".to_string()
                } else {
                    kinds.join(" + ")
                },
            ));
        }
    }
    out
}
