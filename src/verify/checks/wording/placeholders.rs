//! CK201–CK204: a field that still holds a template's slot, stand-in or text, or a bracketed
//! placeholder, instead of content.

use std::sync::LazyLock;

use regex::Regex;

use super::{finding, mask_quoted, may_hold_any};
use crate::domain::checkpoint::Field;
use crate::system::word_list;
use crate::verify::checks::{Finding, Locator, Severity, Text};

/// Whole values that are a template's stand-in, not content.
pub(super) static STAND_INS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("stand_ins.txt")));

/// Sentences of ctxkeep's own templates and `--help` texts: copied into a
/// field they describe nothing.
pub(super) static TEMPLATE_TEXT: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("template_text.txt")));

pub(super) static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i:^\s*(?:tbd|tba|todo|fixme|xxx)\b)",
        r"|\b(?:TBD|TBA)\b",
        r"|\b(?:TODO|FIXME|XXX)\b\s*(?::|$)",
        r"|\?{3,}",
    ))
    .expect("marker regex")
});

/// What every match of MARKER holds (see `may_hold_any`).
pub(super) const MARKER_WORDS: &[&str] = &["tbd", "tba", "todo", "fixme", "xxx", "???"];

/// Unfilled slots: `<task>`, `{name}`, `{{ var }}`, `[insert ...]`. A `<`
/// glued to a word is a generic type (`Vec<String>`), and `/{id}` a route.
pub(super) static SLOT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\{\{.*?\}\}|\{%.*?%\}",
        r"|(?:^|[\s(\[,;:])(<[A-Za-z][\w .'-]{0,40}>|\{[A-Za-z_][\w .-]{0,40}\})(?:$|[^\w])",
        r"|(?i:\[(?:your |insert |fill in|enter |describe |add )[^\]]{0,40}\])",
        // `[DATE]`, `[PENDING START PHASE]`: capitals in brackets name a slot.
        r"|(?:^|[\s(,;:|])(\[[A-Z][A-Z0-9_ /-]{1,40}\])(?:$|[^A-Za-z0-9(])",
        // Date and time formats left as written in a template.
        r"|\b(?:YYYY[-/.]MM(?:[-/.]DD)?|DD[-/.]MM[-/.]YYYY|MM[-/.]DD[-/.]YYYY)\b",
    ))
    .expect("slot regex")
});

/// Whether SLOT could match `line` at all: each of its alternatives needs a
/// `{`, `<` or `[`, or (the date formats) a literal `MM`. Checking first spares
/// the regex's compilation, most of a checkpoint's instructions, when no
/// line could hold a slot.
pub(super) fn could_hold_slot(line: &str) -> bool {
    line.contains(['{', '<', '[']) || line.contains("MM")
}

/// a path (`a[i]`, `/tmp/[Agent]/`).
pub(super) static BRACKETED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^\w/\]])(\[[^\[\]]+\])(?:[^(\w/]|$)").expect("bracket regex")
});

/// A value that is only bracketed descriptions (`[First priority]`, `[Task
/// 1] | [Status]`), perhaps after a label (`Status: [...]`): a template's
/// slots never filled in.
pub(super) fn only_bracketed(text: &str) -> Option<String> {
    if !text.contains('[') {
        return None;
    }
    let mut first = None;
    let mut rest = String::new();
    let mut pos = 0;
    for c in BRACKETED.captures_iter(text) {
        let m = c.get(1).expect("group");
        if !m.as_str().chars().any(char::is_alphabetic) {
            continue;
        }
        first.get_or_insert_with(|| m.as_str().to_string());
        rest.push_str(&text[pos..m.start()]);
        rest.push(' ');
        pos = m.end();
    }
    rest.push_str(&text[pos..]);
    let first = first?;
    // A leading label such as "Overall Status:" does not count as content.
    let rest = match rest.split_once(':') {
        Some((label, after)) if label.split_whitespace().count() <= 3 => after.to_string(),
        _ => rest,
    };
    (!rest.chars().any(char::is_alphanumeric)).then_some(first)
}

pub(super) fn placeholders(t: &Text, loc: &Locator, out: &mut Vec<Finding>) {
    let raw = t.text.trim();
    let label = t.label();
    let is_bullet_only = |s: &str| {
        let s = s.trim();
        matches!(s, "-" | "*" | "+" | "•" | "- [ ]" | "* [ ]" | "- [x]")
            || (s.ends_with('.')
                && s[..s.len() - 1].chars().all(|c| c.is_ascii_digit())
                && s.len() > 1)
    };
    // CK204: an empty item in a list field, or an empty bullet in the notes.
    if t.item.is_some() && (raw.is_empty() || is_bullet_only(raw)) {
        out.push(finding(
            "CK204",
            Severity::Error,
            t,
            0,
            loc,
            format!(
                "{label} is empty; remove it, or write the {} in full",
                item_noun(t.field)
            ),
        ));
        return;
    }
    if raw.is_empty() {
        return; // required fields: CK101–CK104
    }
    if t.field == Field::Notes {
        if let Some(i) = t.text.lines().position(is_bullet_only) {
            out.push(finding(
                "CK204",
                Severity::Error,
                t,
                i,
                loc,
                format!(
                    "{label} has an empty list item at its line {}; remove it or fill it in",
                    i + 1
                ),
            ));
            return;
        }
    }
    // CK201: a stand-in value, or template text copied in.
    let lower = raw.to_lowercase();
    if STAND_INS.contains(&lower.as_str()) {
        out.push(finding("CK201", Severity::Error, t, 0, loc, format!(
            "{label} is the placeholder {raw:?}; write what it stands for (e.g. `ctxkeep checkpoint {}`)", flag_example(t.field)
        )));
        return;
    }
    for (i, line) in t.text.lines().enumerate() {
        let l = line.to_lowercase();
        if let Some(s) = TEMPLATE_TEXT.iter().find(|s| l.contains(*s)) {
            out.push(finding("CK201", Severity::Error, t, i, loc, format!(
                "{label} holds template text ({s:?}) instead of content; replace it with the real {}", item_noun(t.field)
            )));
            return;
        }
    }
    // CK202 and CK203 look at the writer's words only.
    for (i, line) in mask_quoted(t.text).lines().enumerate() {
        if let Some(slot) = only_bracketed(line) {
            out.push(finding(
                "CK203",
                Severity::Error,
                t,
                i,
                loc,
                format!(
                    "{label} is only the template slot {slot}; write the real {} in its place",
                    item_noun(t.field)
                ),
            ));
            return;
        }
    }
    for (i, line) in mask_quoted(t.text).lines().enumerate() {
        if !may_hold_any(line, MARKER_WORDS) {
            continue;
        }
        if let Some(m) = MARKER.find(line) {
            // "TODO: run the tests" as a next action is a tag before a real
            // instruction, not a marker left in (the cold-read corpus labels it
            // clean); a bare "TODO:" or one before a word is still a marker.
            let rest = &line[m.end()..];
            let tagged = m.as_str().trim_end().ends_with(':') || rest.starts_with(':');
            if t.field == Field::NextAction && tagged {
                let after = rest.trim_start_matches(':');
                if after.split_whitespace().count() >= 2 {
                    continue;
                }
            }
            let what = m.as_str().trim().trim_end_matches(':').trim();
            out.push(finding("CK202", Severity::Error, t, i, loc, format!(
                "{label} still says {what:?}; replace the marker with the actual {} (or drop the item)", item_noun(t.field)
            )));
            return;
        }
    }
    for (i, line) in mask_quoted(t.text).lines().enumerate() {
        if !could_hold_slot(line) {
            continue;
        }
        if let Some(c) = SLOT.captures(line) {
            let slot = c
                .get(1)
                .unwrap_or_else(|| c.get(0).expect("match"))
                .as_str()
                .trim();
            out.push(finding("CK203", Severity::Error, t, i, loc, format!(
                "{label} has an unfilled slot {slot}; fill it in (quote it in backticks if it is literal text)"
            )));
            return;
        }
    }
}

pub(super) fn item_noun(field: Field) -> &'static str {
    match field {
        Field::Decisions => "decision",
        Field::OpenQuestions => "question",
        Field::NextAction => "next action",
        Field::ActiveTask => "task",
        Field::ControllingAgent => "agent",
        Field::Phase => "phase",
        Field::Notes | Field::Done | Field::Remaining => "text",
    }
}

pub(super) fn flag_example(field: Field) -> &'static str {
    match field {
        Field::Phase => "--phase \"implementing the lexer\"",
        Field::ActiveTask => "--task \"tokenize strings in src/lexer.rs\"",
        Field::ControllingAgent => "--agent claude-code",
        Field::NextAction => "--next \"run cargo test lexer and fix the escape case\"",
        Field::Decisions => "--decision \"...\"",
        Field::OpenQuestions => "--question \"...\"",
        Field::Notes | Field::Done | Field::Remaining => "--note \"...\"",
    }
}
