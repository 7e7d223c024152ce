//! CK302/CK303 (and CK307's rule): a next action that names no step and object, or that is a
//! wait or a status rather than an action.

use std::sync::LazyLock;

use regex::Regex;

use super::{finding, mask_quoted, may_hold_any};
use crate::system::word_list;
use crate::verify::checks::{Finding, Locator, Severity, Text};

/// Words that, alone, name no action: pronouns, fillers and verbs that need
/// an object. A next action made only of these is vague ("do it", "fix
/// that", "keep going", "continue with the task").
pub(super) static VAGUE_WORDS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("vague_words.txt")));

/// Imperative verbs that start a concrete next action. A next action is an
/// instruction to act, so it should open with one ("run", "add", "rename");
/// one that opens otherwise is usually a description ("parser needs more
/// tests") or a hedge ("maybe look at caching"). `continue`/`finish`/
/// `resume` count: with an object ("finish the CRLF test") they are fine,
/// and without one CK302 catches them first.
pub(super) static ACTION_VERBS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("action_verbs.txt")));

/// Lead-ins before the verb: "First, run ...", "Next: add ...".
pub(super) static LEAD_INS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("lead_ins.txt")));

pub(super) static ENGLISH_MARKERS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("english_markers.txt")));
pub(super) static FOREIGN_MARKERS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("foreign_markers.txt")));

pub(super) fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The verb check is for English text; other languages are not judged.
/// Short English phrases often have no function word ("Cron jobs
/// configured"), so English is the default for Latin text: it takes foreign
/// function words to say otherwise, and a lone one-letter word ("6M/Y",
/// "a/b") is not enough.
pub(super) fn reads_as_english(text: &str) -> bool {
    let w = words(text);
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    let non_ascii = text
        .chars()
        .filter(|c| c.is_alphabetic() && !c.is_ascii())
        .count();
    if non_ascii * 20 > letters.max(1) {
        return false;
    }
    let english = w
        .iter()
        .filter(|x| ENGLISH_MARKERS.contains(&x.as_str()))
        .count();
    let foreign: Vec<&String> = w
        .iter()
        .filter(|x| FOREIGN_MARKERS.contains(&x.as_str()))
        .collect();
    let strong = foreign.iter().filter(|x| x.chars().count() > 1).count();
    !(strong >= 2 || (strong == 1 && english == 0) || (foreign.len() >= 2 && english == 0))
}

/// CK302 (an error), then CK303 (a warning, not looked for with `errors_only`).
pub(super) fn next_action(t: &Text, loc: &Locator, errors_only: bool) -> Option<Finding> {
    let masked = mask_quoted(t.text);
    let w = words(&masked);
    let has_quote = masked != t.text;
    if idles(&masked) {
        return Some(finding("CK302", Severity::Error, t, 0, loc, format!(
            "next action {:?} tells the next session to idle or loop, which is no step; say what it does first (e.g. \"run cargo test lexer and fix the escape case\")",
            t.text.trim()
        )));
    }
    if !has_quote
        && !w.is_empty()
        && (w.iter().all(|x| VAGUE_WORDS.contains(&x.as_str())) || goes_on_vaguely(&w))
    {
        return Some(finding("CK302", Severity::Error, t, 0, loc, format!(
            "next action {:?} does not say what to do to what; name the action and its object (e.g. \"run cargo test lexer and fix the escape case\")",
            t.text.trim()
        )));
    }
    if errors_only {
        return None;
    }
    let trimmed = t
        .text
        .trim_start_matches(|c: char| c.is_whitespace() || "-*+•>#".contains(c));
    if trimmed.starts_with('`') || trimmed.starts_with('$') {
        return None; // a quoted command is as concrete as it gets
    }
    if !reads_as_english(&masked) {
        return waiting(&masked).then(|| status_finding(t, loc));
    }
    if waiting(&masked) {
        return Some(status_finding(t, loc));
    }
    // The whole text first: most open with their verb, and then no clause is looked for.
    if opens_with_verb(&masked) || clause_starts(&masked).iter().any(|c| opens_with_verb(c)) {
        return None;
    }
    Some(finding("CK303", Severity::Warning, t, 0, loc, format!(
        "next action {:?} does not start with an action verb; start with what to do (run, add, fix, write, ...)",
        t.text.trim()
    )))
}

/// What a "continue" or "keep" may name and still say nothing concrete:
/// "continue with project development", "keep monitoring for other issues".
pub(super) static GENERIC_ACTIVITY: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("generic_activity.txt")));

pub(super) fn goes_on_vaguely(w: &[String]) -> bool {
    if !matches!(
        w.first().map(String::as_str),
        Some("continue" | "keep" | "proceed")
    ) {
        return false;
    }
    if w.iter()
        .all(|x| VAGUE_WORDS.contains(&x.as_str()) || GENERIC_ACTIVITY.contains(&x.as_str()))
    {
        return true;
    }
    // "Continue implementation through the graph, ...": the activity is
    // named only in general, and what follows does not say of what ("of
    // the lexer", "for issue 12", "on src/lexer.rs" would).
    let mut rest = w[1..]
        .iter()
        .skip_while(|x| matches!(x.as_str(), "with" | "the" | "on" | "our" | "my"));
    match (rest.next(), rest.next()) {
        (Some(activity), next) => {
            GENERIC_ACTIVITY.contains(&activity.as_str())
                && next.is_none_or(|n| !SAYS_OF_WHAT.contains(&n.as_str()))
        }
        _ => false,
    }
}

/// Words after a general activity that go on to say what it is about.
pub(super) static SAYS_OF_WHAT: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("says_of_what.txt")));

/// An idle or a loop is no step at all: "idle: pull/push loop", "standby".
pub(super) fn idles(text: &str) -> bool {
    let text = text.trim();
    may_idle(text) && IDLE.is_match(text)
}

pub(super) static IDLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\W*(?:idle|idling|standby|stand\s+by|nothing\s+(?:to\s+do|left|pending)|no\s+(?:further\s+)?(?:action|work)\s+(?:needed|required|pending))\b")
        .expect("idle regex")
});

/// Whether IDLE could match `text`: in ASCII text its first word must begin with `idl`,
/// `stand` or `no` (any case). Like `may_hold_any`, it spares compiling the regex (a third of
/// a checkpoint's checks) for the usual next action; other text always takes the regex.
pub(super) fn may_idle(text: &str) -> bool {
    if !text.is_ascii() {
        return true;
    }
    let first = text.trim_start_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let head = first.get(..5).unwrap_or(first).to_ascii_lowercase();
    ["idl", "stand", "no"].iter().any(|w| head.starts_with(w))
}

/// Where an instruction may begin: the start, and after a label ("Phase 5:",
/// "Optional:"), a sentence ("Do NOT touch X. Start ..."), a dash ("Issue 7
/// PR — make ..."), a lead-in clause ("Once CI is green, tag ...") or a
/// modal ("Next session should run ...").
pub(super) fn clause_starts(text: &str) -> Vec<String> {
    static BREAK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i):\s|[.!;]\s|\s[—–-]+\s|,\s|\b(?:should|must|will|needs? to|has to|can)\s")
            .expect("clause regex")
    });
    let mut out = vec![text.to_string()];
    out.extend(BREAK.find_iter(text).map(|m| text[m.end()..].to_string()));
    out
}

pub(super) fn opens_with_verb(clause: &str) -> bool {
    let w = words(clause);
    let mut it = w.iter().filter(|x| !x.chars().all(|c| c.is_ascii_digit()));
    let Some(mut verb) = it.next() else {
        return false;
    };
    while LEAD_INS.contains(&verb.as_str()) {
        match it.next() {
            Some(v) => verb = v,
            None => return false,
        }
    }
    // "re-run", "version-bump": the last part of a compound names the verb.
    let last = verb.rsplit('-').next().unwrap_or(verb);
    ACTION_VERBS.contains(&verb.as_str()) || ACTION_VERBS.contains(&last)
}

/// A wait is a status, not an action: "Wait for the first trades",
/// "Waiting on review", a Japanese "...待ち".
pub(super) fn waiting(text: &str) -> bool {
    static WAIT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\W*(?:wait|waiting|await|awaiting|blocked|on hold)\b|待ち\W*(?:[（(][^）)]*[）)])?\W*$")
            .expect("wait regex")
    });
    let text = text.trim();
    // Non-ASCII text (`待ち`) always takes the regex.
    may_hold_any(text, &["wait", "blocked", "on hold"]) && WAIT.is_match(text)
}

pub(super) fn status_finding(t: &Text, loc: &Locator) -> Finding {
    finding("CK303", Severity::Warning, t, 0, loc, format!(
        "next action {:?} is a wait or a status, not an action; say what the next session does (run, add, fix, write, ...)",
        t.text.trim()
    ))
}
