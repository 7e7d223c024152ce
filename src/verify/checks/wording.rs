//! CK2xx placeholders and CK3xx cold-read: text that a reader who never saw
//! the conversation cannot act on.
//!
//! Text inside backticks or double quotes is a quotation (a command, a
//! message, a code identifier), not the writer's words, so it is masked
//! before these checks. Each field raises at most one of CK201–CK204 and the
//! next action at most one of CK302/CK303, so one defect gives one finding.

use super::{texts, Finding, Locator, Severity, Text};
use crate::domain::checkpoint::{Checkpoint, Field};

use cold_read::cold_phrases;
use next_action::{goes_on_vaguely, idles, next_action, words, VAGUE_WORDS};
use placeholders::placeholders;

/// Every wording finding; with `errors_only`, the warnings that need work of their own
/// (the next action's verb, the remaining items) are not looked for.
pub fn check(c: &Checkpoint, loc: &Locator, errors_only: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    for t in texts(c) {
        let before = out.len();
        placeholders(&t, loc, &mut out);
        // The words of an unfilled template are the template's, not the writer's.
        if !(out.len() > before && out[before].message.contains("only the template slot")) {
            cold_phrases(&t, loc, &mut out);
        }
        if t.field == Field::NextAction && out.len() == before && !t.text.trim().is_empty() {
            out.extend(next_action(&t, loc, errors_only));
        }
    }
    if errors_only {
        return out;
    }
    for (i, item) in c.remaining.iter().enumerate() {
        let t = Text {
            field: Field::Remaining,
            item: Some(i),
            text: item,
        };
        out.extend(vague_remaining(&t, loc));
    }
    out
}

/// CK307: a remaining item judged by the next action's rule for saying
/// nothing (an idle, only vague words, "continue" with no object): the
/// reader is left to guess the step.
fn vague_remaining(t: &Text, loc: &Locator) -> Option<Finding> {
    let masked = mask_quoted(t.text);
    let w = words(&masked);
    let vague = idles(&masked)
        || (masked == t.text
            && !w.is_empty()
            && (w.iter().all(|x| VAGUE_WORDS.contains(&x.as_str())) || goes_on_vaguely(&w)));
    vague.then(|| finding("CK307", Severity::Warning, t, 0, loc, format!(
        "{} {:?} does not say what to do to what; name the step and its object (e.g. --remaining \"add a test for blank lines in tests/parse.rs\"), or mark it done with --done",
        t.label(),
        t.text.trim()
    )))
}

pub(super) fn finding(
    code: &'static str,
    sev: Severity,
    t: &Text,
    line: usize,
    loc: &Locator,
    msg: String,
) -> Finding {
    Finding::new(code, sev, Some(t.field.key()), msg).at(loc.text_line(t, line))
}

/// Replaces text between backticks or double quotes with spaces, keeping
/// byte offsets (an unclosed quote masks nothing).
pub(crate) fn mask_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['`', '"', '“']) {
        let open = rest[i..].chars().next().unwrap_or('"');
        let close = if open == '“' { '”' } else { open };
        let after = &rest[i + open.len_utf8()..];
        match after.find(close) {
            Some(j) => {
                out.push_str(&rest[..i]);
                let span = open.len_utf8() + j + close.len_utf8();
                out.push_str(&" ".repeat(span));
                rest = &rest[i + span..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// Whether a case-insensitive regex that needs one of `words` (lower-case
/// ASCII) could match `text`. Only ASCII text is ruled out: under Unicode case
/// folding a few other letters (the Kelvin sign, the long s) match ASCII ones.
/// Like `could_hold_slot`, it spares compiling a regex no line needs.
pub(super) fn may_hold_any(text: &str, words: &[&str]) -> bool {
    if !text.is_ascii() {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    words.iter().any(|w| lower.contains(w))
}

mod cold_read;
mod next_action;
mod placeholders;

#[cfg(test)]
mod tests;
