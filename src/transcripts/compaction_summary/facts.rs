//! The facts of a checkpoint that an agent's compaction summary should keep, and whether a
//! summary keeps each one.
//!
//! A fact is named as it appears in the checkpoint: a file's path, a plan item's text, a
//! command as run, the request, the next action. Whether a summary keeps it is decided on
//! words, not meaning, so the rule is simple enough to explain:
//! - a **file** is kept when the summary names its path, or its file name where no other file
//!   of the checkpoint has that name;
//! - a **failing command** is kept when the summary names its first words (up to three,
//!   leaving out flags and `VAR=value`): the program and, of three, one more; all of them when
//!   there are two;
//! - **prose** (the request, the task, the next action, plan items, decisions) is kept when
//!   the summary names every identifier it holds (a word with a digit, `_`, `/` or `.` inside,
//!   such as `E2E-NEXT-4711`, `parser.rs` or `round_half`): the summary's own words around
//!   them are a paraphrase, and a paraphrase keeps the fact. Prose with no identifier is kept
//!   when the summary has at least [`PROSE_SHARE`] of its other words (three letters or more,
//!   common words left out, plural and `-ing`/`-ed` endings ignored).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::transcripts::activity::{left_open, line_time, Observed, PlanStatus};

/// The share of the words of a prose fact with no identifier a summary must have to keep it.
pub const PROSE_SHARE: f64 = 0.5;

/// What a fact is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The user's request, as the transcript shows it (`observed.request`).
    Request,
    /// The checkpoint's active task, where it says more than the request.
    Task,
    /// The checkpoint's next action.
    NextAction,
    /// The next step the agent itself stated (`observed.next_step`), where it says more than
    /// the next action.
    NextStep,
    /// A plan item still open (pending or in progress).
    PlanItem,
    /// A file the session changed.
    File,
    /// A command whose last run failed.
    FailingCommand,
    /// A decision recorded in the checkpoint.
    Decision,
    /// An issue of the project's tracker in progress or ready (`observed.tracker`): `id: title`.
    TrackerIssue,
    /// The plan file the agent wrote in plan mode (`observed.plan_file`).
    PlanFile,
}

impl Kind {
    /// How the give-back and the brief label facts of this kind.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Request => "Request",
            Kind::Task => "Active task",
            Kind::NextAction => "Next action",
            Kind::NextStep => "The agent's next step",
            Kind::PlanItem => "Open plan items",
            Kind::File => "Files changed",
            Kind::FailingCommand => "Failing commands",
            Kind::Decision => "Decisions",
            Kind::TrackerIssue => "Tracker issues (in progress, ready)",
            Kind::PlanFile => "Plan mode's plan file",
        }
    }
}

/// One fact of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    pub kind: Kind,
    /// As the checkpoint has it.
    pub text: String,
    /// What goes with it: a plan item's status, a failing command's exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the session said it (the record's time for it): a next step's statement, a
    /// failing check's last failed run. Absent when the transcript gave no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl Fact {
    fn new(kind: Kind, text: &str) -> Fact {
        Fact {
            kind,
            text: text.trim().to_string(),
            detail: None,
            at: None,
        }
    }

    fn said_at(mut self, at: Option<&str>) -> Fact {
        self.at = at.map(str::to_string);
        self
    }
}

/// What a checkpoint recorded that its facts come from (the record is `domain`'s
/// `Checkpoint`, which hands these over in `Checkpoint::facts`).
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    pub active_task: &'a str,
    pub next_action: &'a str,
    /// Its remaining action items.
    pub remaining: &'a [String],
    pub decisions: &'a [String],
    /// What the session did, as the checkpoint saw it.
    pub observed: Option<&'a Observed>,
}

/// The facts of `c`, in the order a reader needs them: the request and task, the next action
/// and the agent's own next step, the open plan items, the failing commands, the files, the decisions. Empty texts and
/// duplicates are left out, and so is a fact with no word a summary could be checked for.
pub fn of(c: &Recorded) -> Vec<Fact> {
    let mut out: Vec<Fact> = Vec::new();
    let observed = c.observed;
    if let Some(r) = observed.and_then(|o| o.request.as_deref()) {
        out.push(Fact::new(Kind::Request, r));
    }
    out.push(Fact::new(Kind::Task, c.active_task));
    // A next action taken from the agent's next step was said when the step was.
    let step_at = observed.and_then(|o| o.next_step_at.as_deref());
    let step = observed.and_then(|o| o.next_step.as_deref());
    let action_is_step = step.is_some_and(|s| s.trim().eq_ignore_ascii_case(c.next_action.trim()));
    out.push(
        Fact::new(Kind::NextAction, c.next_action).said_at(step_at.filter(|_| action_is_step)),
    );
    if let Some(step) = step {
        out.push(Fact::new(Kind::NextStep, step).said_at(step_at));
    }
    if let Some(o) = observed {
        for p in o.open_items() {
            let mut f = Fact::new(Kind::PlanItem, &p.text);
            f.detail = Some(p.status.as_str().to_string());
            out.push(f);
        }
        // Only what still fails: a later passing run of the same check ended the failure.
        for run in left_open::still_failing(&o.commands) {
            let mut f = Fact::new(Kind::FailingCommand, &run.command).said_at(run.at.as_deref());
            f.detail = run.exit_code.map(|c| format!("exit {c}"));
            out.push(f);
        }
        for check in o.left_open.iter().flat_map(|l| &l.failing) {
            if !out.iter().any(|f| {
                f.kind == Kind::FailingCommand && left_open::same_check(&f.text, &check.command)
            }) {
                out.push(
                    Fact::new(Kind::FailingCommand, &check.command).said_at(check.at.as_deref()),
                );
            }
        }
        for file in &o.files {
            out.push(Fact::new(Kind::File, file));
        }
    }
    // The checkpoint's own remaining items, after the plan's (an item both hold is one fact).
    for r in c.remaining {
        out.push(Fact::new(Kind::PlanItem, r));
    }
    for d in c.decisions {
        out.push(Fact::new(Kind::Decision, d));
    }
    // What the session recorded beyond its own words: the tracker's issues and the plan file.
    if let Some(o) = observed {
        for t in &o.tracker {
            let mut f = Fact::new(Kind::TrackerIssue, &format!("{}: {}", t.id, t.title));
            f.detail = Some(t.status.clone());
            out.push(f);
        }
        if let Some(plan) = &o.plan_file {
            out.push(Fact::new(Kind::PlanFile, plan));
        }
    }
    let mut seen: BTreeSet<String> = BTreeSet::new();
    out.retain(|f| {
        let key = f.text.to_lowercase();
        !f.text.is_empty() && !words(&f.text).is_empty() && seen.insert(key)
    });
    out
}

/// The facts of `missing` that are still true by `now`, what the session shows at the moment
/// they would be given back (newer evidence replaces older): a failing command whose latest
/// run of the same check passed is left out, and so are a plan item now completed and a next
/// step the agent has replaced with another since. Where both the fact and the evidence have
/// a time, the evidence replaces the fact only when it is the later of the two.
pub fn still_true(missing: &[Fact], now: &Observed) -> Vec<Fact> {
    // Evidence said at `at` replaces the fact unless both times are known and the fact's is
    // the later one (without them, the order read decides, as the caller read it).
    let newer = |at: Option<&str>, f: &Fact| !line_time::later(f.at.as_deref(), at);
    let replaced = |f: &Fact| match f.kind {
        Kind::FailingCommand => now
            .commands
            .iter()
            .rev()
            .find(|r| r.ok.is_some() && left_open::same_check(&f.text, &r.command))
            .is_some_and(|r| r.ok == Some(true) && newer(r.at.as_deref(), f)),
        Kind::PlanItem => now.plan.iter().any(|p| {
            p.status == PlanStatus::Completed && p.text.trim().eq_ignore_ascii_case(f.text.trim())
        }),
        Kind::NextStep => now.next_step.as_deref().is_some_and(|n| {
            !n.trim().eq_ignore_ascii_case(f.text.trim()) && newer(now.next_step_at.as_deref(), f)
        }),
        _ => false,
    };
    missing.iter().filter(|f| !replaced(f)).cloned().collect()
}

/// A summary prepared once for checking many facts.
pub struct Summary {
    /// Lowercased, whitespace collapsed.
    flat: String,
    /// Every word and every part of a word (split at `_ . / -`), stemmed.
    words: BTreeSet<String>,
}

impl Summary {
    pub fn new(text: &str) -> Summary {
        let flat = collapse(&text.to_lowercase());
        let mut set = BTreeSet::new();
        for w in tokens(&flat) {
            set.insert(stem(w));
            for part in w.split(['_', '.', '/', '-', ':']).filter(|p| !p.is_empty()) {
                set.insert(stem(part));
            }
        }
        Summary { flat, words: set }
    }

    /// Whether the summary keeps `fact` (see the module's rules). `files` are all the
    /// checkpoint's files, to tell whether a file name alone is enough.
    pub fn keeps(&self, fact: &Fact, files: &[&str]) -> bool {
        match fact.kind {
            Kind::File | Kind::PlanFile => self.names_file(&fact.text, files),
            // An issue is kept when the summary names its id.
            Kind::TrackerIssue => {
                let id = fact.text.split(':').next().unwrap_or_default();
                self.has_word(&id.to_lowercase())
            }
            Kind::FailingCommand => self.names_command(&fact.text),
            _ => self.has_prose(&fact.text),
        }
    }

    fn names_file(&self, path: &str, files: &[&str]) -> bool {
        // A Windows summary writes `website\docs\a.md` for `website/docs/a.md`.
        let path = path.to_lowercase().replace('\\', "/");
        let slashed;
        let flat = if self.flat.contains('\\') {
            slashed = self.flat.replace('\\', "/");
            &slashed
        } else {
            &self.flat
        };
        if bounded(flat, &path) {
            return true;
        }
        let name = path.rsplit('/').next().unwrap_or(&path);
        let unique = files
            .iter()
            .filter(|f| f.to_lowercase().rsplit('/').next() == Some(name))
            .count()
            <= 1;
        name != path && unique && bounded(flat, name)
    }

    fn names_command(&self, command: &str) -> bool {
        let flat = collapse(&command.to_lowercase());
        if self.flat.contains(&flat) {
            return true;
        }
        let first = flat.split(['|', ';', '&', '\n']).next().unwrap_or_default();
        let heads: Vec<&str> = first
            .split_whitespace()
            .filter(|w| !w.starts_with('-') && !w.contains('='))
            .take(3)
            .collect();
        if heads.is_empty() {
            return false;
        }
        // The program must be named, and with it the rest (two of three words).
        if !self.has_word(heads[0]) {
            return false;
        }
        let found = heads.iter().filter(|w| self.has_word(w)).count();
        match heads.len() {
            1 | 2 => found == heads.len(),
            _ => found >= 2,
        }
    }

    /// A word of a command or a path: the whole of it, or its last path part.
    fn has_word(&self, w: &str) -> bool {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        if w.is_empty() {
            return false;
        }
        if self.words.contains(&stem(w)) || bounded(&self.flat, w) {
            return true;
        }
        let last = w.rsplit('/').next().unwrap_or(w);
        last != w && bounded(&self.flat, last)
    }

    fn has_prose(&self, text: &str) -> bool {
        let words = words(text);
        let (ids, plain): (Vec<&String>, Vec<&String>) = words.iter().partition(|w| is_id(w));
        if !ids.is_empty() {
            return ids.iter().all(|id| self.has_word(id));
        }
        if plain.is_empty() {
            return true;
        }
        let found = plain
            .iter()
            .filter(|w| self.words.contains(&stem(w)))
            .count();
        found as f64 >= PROSE_SHARE * plain.len() as f64
    }
}

/// The audit of one summary: the facts it keeps and those it does not, in the facts' order.
pub fn split(facts: &[Fact], summary: &str) -> (Vec<Fact>, Vec<Fact>) {
    let s = Summary::new(summary);
    let files: Vec<&str> = facts
        .iter()
        .filter(|f| f.kind == Kind::File)
        .map(|f| f.text.as_str())
        .collect();
    facts.iter().cloned().partition(|f| s.keeps(f, &files))
}

/// Words common enough to say nothing about the work.
const COMMON: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "then", "than", "are", "was",
    "were", "will", "would", "should", "can", "could", "have", "has", "had", "not", "but", "you",
    "your", "our", "its", "all", "any", "each", "there", "their", "them", "they", "what", "when",
    "where", "which", "who", "how", "why", "also", "just", "only", "some", "more", "most", "other",
    "such", "very", "over", "under", "about", "after", "before", "again", "once", "here", "now",
    "out", "off", "own", "same", "too", "let", "please", "need", "want", "sure", "yes", "okay",
    "use", "using", "via", "per", "one", "two", "first", "next", "new", "it's", "don't", "let's",
    "make", "sure", "still", "being", "been", "does", "did", "done", "get",
];

/// The words of a fact a summary is checked for: identifiers whole, other words of three
/// letters or more that are not common.
fn words(text: &str) -> Vec<String> {
    let flat = text.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for w in tokens(&flat) {
        let keep = is_id(w) || (w.chars().count() >= 3 && !COMMON.contains(&w));
        if keep && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// Words as paths and identifiers are written: letters, digits and `_ . / - :`, without
/// punctuation at either end.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || "_./-:'".contains(c)))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
}

/// An identifier: a word with a digit, or with `_ . / :` inside, or a hyphen between parts
/// that hold a digit (`E2E-NEXT-4711`).
fn is_id(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit()) || w.contains(['_', '.', '/', ':'])
}

/// A word without its plural or `-ing`/`-ed` ending or a final `e`, so "lines" meets "line"
/// and "changed" meets "change".
fn stem(w: &str) -> String {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    if is_id(w) {
        return w.to_string();
    }
    let mut root = w;
    for end in ["ing", "ed", "es", "s"] {
        if let Some(r) = w.strip_suffix(end) {
            if r.chars().count() >= 3 {
                root = r;
                break;
            }
        }
    }
    match root.strip_suffix('e') {
        Some(r) if r.chars().count() >= 3 => r.to_string(),
        _ => root.to_string(),
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `needle` occurs in `hay` as a whole path or word: not inside a longer name (a path
/// may end with it: `/repo/src/a.rs` names `src/a.rs`).
fn bounded(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let name_char = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(at, _)| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        let before_ok = before.is_none_or(|c| !(name_char(c) || c == '.' || c == '-'));
        // A full stop after a path ends the sentence; a letter after it makes another name.
        let after_ok = after.is_none_or(|c| !(name_char(c) || c == '/'))
            && !(after == Some('.')
                && hay[at + needle.len() + 1..]
                    .chars()
                    .next()
                    .is_some_and(name_char));
        before_ok && after_ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::activity::{CommandRun, Observed, PlanItem, PlanStatus};

    #[test]
    fn newer_evidence_replaces_a_fact_only_when_it_was_said_later() {
        let fact = |kind, text: &str, at: Option<&str>| Fact {
            kind,
            text: text.into(),
            detail: None,
            at: at.map(str::to_string),
        };
        let run = |ok, at: Option<&str>| CommandRun {
            command: "cargo test parser".into(),
            ok: Some(ok),
            exit_code: Some(if ok { 0 } else { 101 }),
            times: 1,
            at: at.map(str::to_string),
        };
        let failing = fact(
            Kind::FailingCommand,
            "cargo test",
            Some("2026-11-28T10:10:00Z"),
        );
        let step = fact(
            Kind::NextStep,
            "Fix the parser",
            Some("2026-11-28T10:10:00Z"),
        );
        let now = |run_at: Option<&str>, step_at: Option<&str>| Observed {
            commands: vec![run(true, run_at)],
            next_step: Some("Commit the parser".into()),
            next_step_at: step_at.map(str::to_string),
            ..Observed::default()
        };
        let missing = [failing.clone(), step.clone()];
        // Said after the facts, or with no time to tell: replaced.
        for (run_at, step_at) in [
            (Some("2026-11-28T10:20:00Z"), Some("2026-11-28T10:20:00Z")),
            (None, None),
        ] {
            assert!(still_true(&missing, &now(run_at, step_at)).is_empty());
        }
        // Evidence older than the facts (another read, an older record) replaces nothing.
        let older = now(Some("2026-11-28T10:00:00Z"), Some("2026-11-28T10:00:00Z"));
        assert_eq!(still_true(&missing, &older), missing);
    }

    /// What a checkpoint records, owned (a checkpoint hands in the same through
    /// `Checkpoint::facts`).
    #[derive(Default)]
    struct Sample {
        active_task: String,
        next_action: String,
        remaining: Vec<String>,
        decisions: Vec<String>,
        observed: Option<Observed>,
    }

    impl Sample {
        fn facts(&self) -> Vec<Fact> {
            of(&Recorded {
                active_task: &self.active_task,
                next_action: &self.next_action,
                remaining: &self.remaining,
                decisions: &self.decisions,
                observed: self.observed.as_ref(),
            })
        }
    }

    fn checkpoint() -> Sample {
        Sample {
            active_task: "make the widget parser accept blank lines".into(),
            next_action: "run the widget tests and fix the first failure (E2E-NEXT-4711)".into(),
            decisions: vec!["keep serde_yaml behind a 64 KiB cap".into()],
            observed: Some(Observed {
                request: Some("Make the widget parser accept blank lines".into()),
                plan: vec![
                    PlanItem {
                        text: "write the failing test".into(),
                        status: PlanStatus::Completed,
                    },
                    PlanItem {
                        text: "handle CRLF line endings".into(),
                        status: PlanStatus::InProgress,
                    },
                ],
                files: vec!["src/widget.rs".into(), "tests/blank.rs".into()],
                commands: vec![
                    CommandRun {
                        command: "cargo test --locked widget".into(),
                        ok: Some(false),
                        exit_code: Some(101),
                        times: 1,
                        at: None,
                    },
                    CommandRun {
                        command: "ls -la".into(),
                        ok: Some(true),
                        exit_code: Some(0),
                        times: 1,
                        at: None,
                    },
                ],
                agent: "claude-code".into(),
                ..Observed::default()
            }),
            ..Sample::default()
        }
    }

    fn names(facts: &[Fact]) -> Vec<&str> {
        facts.iter().map(|f| f.text.as_str()).collect()
    }

    #[test]
    fn the_facts_are_the_request_next_action_open_items_failures_files_and_decisions() {
        let facts = checkpoint().facts();
        // The task says what the request says: one fact.
        assert_eq!(
            names(&facts),
            [
                "Make the widget parser accept blank lines",
                "run the widget tests and fix the first failure (E2E-NEXT-4711)",
                "handle CRLF line endings",
                "cargo test --locked widget",
                "src/widget.rs",
                "tests/blank.rs",
                "keep serde_yaml behind a 64 KiB cap",
            ]
        );
        assert_eq!(facts[3].detail.as_deref(), Some("exit 101"));
        assert_eq!(facts[2].detail.as_deref(), Some("in_progress"));
    }

    #[test]
    fn the_remaining_action_items_are_facts_once() {
        let mut c = checkpoint();
        c.remaining = vec![
            "Handle CRLF line endings".into(),
            "bump the version in Cargo.toml".into(),
        ];
        let facts = c.facts();
        let items: Vec<&str> = facts
            .iter()
            .filter(|f| f.kind == Kind::PlanItem)
            .map(|f| f.text.as_str())
            .collect();
        assert_eq!(
            items,
            ["handle CRLF line endings", "bump the version in Cargo.toml"]
        );
    }

    #[test]
    fn a_summary_that_drops_a_file_and_the_marker_keeps_the_rest() {
        let summary = "The user asked to make the widget parser accept blank lines. \
            I changed /work/repo/src/widget.rs; `cargo test` still fails with exit 101. \
            Still handling CRLF line endings. We keep serde_yaml behind a 64 KiB cap. \
            Next: run the widget tests.";
        let (kept, missing) = split(&checkpoint().facts(), summary);
        assert_eq!(
            names(&missing),
            [
                "run the widget tests and fix the first failure (E2E-NEXT-4711)",
                "tests/blank.rs"
            ]
        );
        assert_eq!(kept.len(), 5);
    }

    #[test]
    fn a_file_name_alone_counts_only_when_no_other_file_has_it() {
        let s = Summary::new("Edited mod.rs and blank.rs.");
        assert!(s.keeps(
            &Fact::new(Kind::File, "tests/blank.rs"),
            &["tests/blank.rs"]
        ));
        let files = ["src/a/mod.rs", "src/b/mod.rs"];
        assert!(!s.keeps(&Fact::new(Kind::File, "src/a/mod.rs"), &files));
        // Inside a longer name it is not named.
        let s = Summary::new("see xblank.rs and blank.rsx");
        assert!(!s.keeps(&Fact::new(Kind::File, "blank.rs"), &["blank.rs"]));
    }

    #[test]
    fn a_paraphrase_keeps_prose_and_a_different_topic_does_not() {
        let fact = Fact::new(
            Kind::Request,
            "Write notes.txt saying alpha, change it to beta",
        );
        assert!(
            Summary::new("the user wanted notes.txt written with alpha, then changed to beta")
                .keeps(&fact, &[])
        );
        assert!(!Summary::new("the user wanted a README").keeps(&fact, &[]));
        // An identifier must be there, whatever else is.
        let fact = Fact::new(Kind::NextAction, "fix the first failure (E2E-NEXT-4711)");
        assert!(!Summary::new("next: fix the first failure").keeps(&fact, &[]));
    }

    #[test]
    fn a_command_is_named_by_its_first_words() {
        let fact = Fact::new(Kind::FailingCommand, "cargo test --locked -q parser::");
        assert!(Summary::new("cargo test fails").keeps(&fact, &[]));
        assert!(!Summary::new("the tests fail").keeps(&fact, &[]));
        let fact = Fact::new(Kind::FailingCommand, "echo before-compaction");
        assert!(!Summary::new("ran echo").keeps(&fact, &[]));
    }
}
