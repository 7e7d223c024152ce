//! CK301: words that point into the conversation the reader never saw ("as discussed", "that
//! bug", "in the chat"), a runtime handle that ended with the session, "no change".

use std::sync::LazyLock;

use regex::Regex;

use super::{finding, mask_quoted, may_hold_any};
use crate::system::word_list;
use crate::verify::checks::{Finding, Locator, Severity, Text};

/// Phrases that point into the lost conversation. Word-bounded and
/// case-insensitive; a space stands for any run of white space.
pub(super) static COLD_PHRASES: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("cold_phrases.txt")));

pub(super) static COLD: LazyLock<Regex> = LazyLock::new(|| {
    let alt = COLD_PHRASES
        .iter()
        .map(|p| p.trim_end().replace(' ', r"\s+"))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&format!(r"(?i)\b(?:{alt})\b")).expect("cold-read regex")
});

/// A word every one of COLD_PHRASES holds (see `may_hold_any`).
pub(super) static COLD_WORDS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("cold_words.txt")));

/// "that bug" points back only when nothing says which: it must end the
/// clause or be followed by words like "we" or "again", and not follow a
/// verb that takes a clause ("check that error messages name the file").
pub(super) static THAT_THING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(\w+\s+)?(that\s+(?:bug|issue|error|problem|fix|approach|change|thing|idea|crash|failure|regression|hack|workaround|one))\b(\s*[\w']+)?").expect("that regex")
});

/// The conversation named as the place something happened: "it failed in a
/// chat that ...", "agreed on the call". The word after it tells a product
/// feature ("in the chat window") from the conversation.
pub(super) static CONVERSATION_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b((?:in|on|during|from|after|since)\s+(?:a|an|the|that|this|our|one|an?\s+earlier|the\s+earlier|a\s+previous|the\s+previous|the\s+last|a\s+past)\s+(?:chat|conversation|thread|call|meeting))\b(\s*[\w-]+)?")
        .expect("conversation regex")
});
pub(super) const CONVERSATION_WORDS: &[&str] =
    &["chat", "conversation", "thread", "call", "meeting"];

/// Nouns that make "chat", "call" or "thread" a thing in the product.
pub(super) static PRODUCT_NOUNS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("product_nouns.txt")));

/// A field (or item) that only says it did not change points at a version
/// of it the reader never saw: "Patterns: (no change)", "変更なし".
pub(super) static NO_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:[^:：\n]{1,60}[:：]\s*)?[(（\[]?\s*(no\s+changes?|unchanged|not\s+changed|same\s+as\s+before|as\s+before|n/c|変更なし|変更無し|変化なし|sin\s+cambios|keine\s+änderung(?:en)?|inchangée?s?|无变化|没有变化|不变)\s*[)）\]]?\s*[.。]?\s*$")
        .expect("no-change regex")
});
/// What every branch of NO_CHANGE's ASCII alternatives holds.
pub(super) const NO_CHANGE_WORDS: &[&str] = &["chang", "before", "n/c", "cambios"];

/// A handle of the writing session's own runtime, which ends with it: "via
/// task-50", "see shell_3". (Upper-case ids such as `TASK-50` are tracker
/// ids, which the reference check looks up in the repository.)
pub(super) static RUNTIME_HANDLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?i:via|in|on|from|see|check|using|with|by)\s+((?:task|job|shell|bash|terminal|pane|subagent|process|pid)[-_#]\d+)\b")
        .expect("runtime handle regex")
});
/// RUNTIME_HANDLE's handle names, matched case-sensitively by the regex.
pub(super) const HANDLE_NAMES: &[&str] = &[
    "task", "job", "shell", "bash", "terminal", "pane", "subagent", "process", "pid",
];

pub(super) static CLAUSE_VERBS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("clause_verbs.txt")));
pub(super) static POINTING_FOLLOWERS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("pointing_followers.txt")));

pub(super) fn cold_phrases(t: &Text, loc: &Locator, out: &mut Vec<Finding>) {
    let label = t.label();
    let mut seen: Vec<String> = Vec::new();
    let no_change = may_hold_any(t.text, NO_CHANGE_WORDS)
        .then(|| NO_CHANGE.captures(t.text))
        .flatten();
    if let Some(c) = no_change {
        let phrase = c[1].split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(finding("CK301", Severity::Error, t, 0, loc, format!(
            "{label} only says {phrase:?}: the reader does not have the version it did not change from; write out what it is"
        )));
        return;
    }
    for (i, line) in mask_quoted(t.text).lines().enumerate() {
        let mut hits: Vec<String> = Vec::new();
        if may_hold_any(line, &COLD_WORDS) {
            hits.extend(
                COLD.find_iter(line)
                    .map(|m| m.as_str().split_whitespace().collect::<Vec<_>>().join(" ")),
            );
        }
        let that_things = may_hold_any(line, &["that"]).then(|| THAT_THING.captures_iter(line));
        for c in that_things.into_iter().flatten() {
            let before = c.get(1).map(|m| m.as_str().trim().to_lowercase());
            let after = c.get(3).map(|m| m.as_str().trim().to_lowercase());
            let points = after
                .as_deref()
                .is_none_or(|w| POINTING_FOLLOWERS.contains(&w))
                && before.as_deref().is_none_or(|w| !CLAUSE_VERBS.contains(&w));
            if points {
                hits.push(c[2].split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        let places =
            may_hold_any(line, CONVERSATION_WORDS).then(|| CONVERSATION_PLACE.captures_iter(line));
        for c in places.into_iter().flatten() {
            let after = c.get(2).map(|m| m.as_str().trim().to_lowercase());
            if after.as_deref().is_none_or(|w| !PRODUCT_NOUNS.contains(&w)) {
                hits.push(c[1].split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        let mut handles: Vec<String> = Vec::new();
        if HANDLE_NAMES.iter().any(|name| line.contains(name)) {
            handles.extend(RUNTIME_HANDLE.captures_iter(line).map(|c| c[1].to_string()));
        }
        handles.dedup();
        for handle in handles {
            if seen.contains(&handle) {
                continue;
            }
            seen.push(handle.clone());
            out.push(finding("CK301", Severity::Error, t, i, loc, format!(
                "{label} names {handle:?}, a handle of the writing session's own runtime (a background task, shell or job) that ended with it; say what it ran and where its output is"
            )));
        }
        for phrase in hits {
            let key = phrase.to_lowercase();
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            out.push(finding("CK301", Severity::Error, t, i, loc, format!(
                "{label} says {phrase:?}, which only makes sense to someone who saw the conversation; say what it refers to"
            )));
        }
    }
}
