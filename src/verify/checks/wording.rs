//! CK2xx placeholders and CK3xx cold-read: text that a reader who never saw
//! the conversation cannot act on.
//!
//! Text inside backticks or double quotes is a quotation (a command, a
//! message, a code identifier), not the writer's words, so it is masked
//! before these checks. Each field raises at most one of CK201–CK204 and the
//! next action at most one of CK302/CK303, so one defect gives one finding.

use std::sync::LazyLock;

use regex::Regex;

use super::{texts, Finding, Locator, Severity, Text};
use crate::domain::checkpoint::{Checkpoint, Field};
use crate::system::word_list;

pub fn check(c: &Checkpoint, loc: &Locator) -> Vec<Finding> {
    let mut out = Vec::new();
    for t in texts(c) {
        let before = out.len();
        placeholders(&t, loc, &mut out);
        // The words of an unfilled template are the template's, not the writer's.
        if !(out.len() > before && out[before].message.contains("only the template slot")) {
            cold_phrases(&t, loc, &mut out);
        }
        if t.field == Field::NextAction && out.len() == before && !t.text.trim().is_empty() {
            out.extend(next_action(&t, loc));
        }
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

fn finding(
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

/// Whole values that are a template's stand-in, not content.
static STAND_INS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/stand_ins.txt")));

/// Sentences of ctxkeep's own templates and `--help` texts: copied into a
/// field they describe nothing.
static TEMPLATE_TEXT: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/template_text.txt")));

static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i:^\s*(?:tbd|tba|todo|fixme|xxx)\b)",
        r"|\b(?:TBD|TBA)\b",
        r"|\b(?:TODO|FIXME|XXX)\b\s*(?::|$)",
        r"|\?{3,}",
    ))
    .expect("marker regex")
});

/// Unfilled slots: `<task>`, `{name}`, `{{ var }}`, `[insert ...]`. A `<`
/// glued to a word is a generic type (`Vec<String>`), and `/{id}` a route.
static SLOT: LazyLock<Regex> = LazyLock::new(|| {
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
fn could_hold_slot(line: &str) -> bool {
    line.contains(['{', '<', '[']) || line.contains("MM")
}

/// Whether a case-insensitive regex that needs one of `words` (lower-case
/// ASCII) could match `text`. Only ASCII text is ruled out: under Unicode case
/// folding a few other letters (the Kelvin sign, the long s) match ASCII ones.
/// Like `could_hold_slot`, it spares compiling a regex no line needs.
fn may_hold_any(text: &str, words: &[&str]) -> bool {
    if !text.is_ascii() {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    words.iter().any(|w| lower.contains(w))
}

/// `[...]` spans that are not a link (`[text](url)`) or glued to a word or
/// a path (`a[i]`, `/tmp/[Agent]/`).
static BRACKETED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^\w/\]])(\[[^\[\]]+\])(?:[^(\w/]|$)").expect("bracket regex")
});

/// A value that is only bracketed descriptions (`[First priority]`, `[Task
/// 1] | [Status]`), perhaps after a label (`Status: [...]`): a template's
/// slots never filled in.
fn only_bracketed(text: &str) -> Option<String> {
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

fn placeholders(t: &Text, loc: &Locator, out: &mut Vec<Finding>) {
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

fn item_noun(field: Field) -> &'static str {
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

fn flag_example(field: Field) -> &'static str {
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

/// Phrases that point into the lost conversation. Word-bounded and
/// case-insensitive; a space stands for any run of white space.
static COLD_PHRASES: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/cold_phrases.txt")));

static COLD: LazyLock<Regex> = LazyLock::new(|| {
    let alt = COLD_PHRASES
        .iter()
        .map(|p| p.trim_end().replace(' ', r"\s+"))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&format!(r"(?i)\b(?:{alt})\b")).expect("cold-read regex")
});

/// A word every one of COLD_PHRASES holds (see `may_hold_any`).
static COLD_WORDS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/cold_words.txt")));

/// "that bug" points back only when nothing says which: it must end the
/// clause or be followed by words like "we" or "again", and not follow a
/// verb that takes a clause ("check that error messages name the file").
static THAT_THING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(\w+\s+)?(that\s+(?:bug|issue|error|problem|fix|approach|change|thing|idea|crash|failure|regression|hack|workaround|one))\b(\s*[\w']+)?").expect("that regex")
});

/// The conversation named as the place something happened: "it failed in a
/// chat that ...", "agreed on the call". The word after it tells a product
/// feature ("in the chat window") from the conversation.
static CONVERSATION_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b((?:in|on|during|from|after|since)\s+(?:a|an|the|that|this|our|one|an?\s+earlier|the\s+earlier|a\s+previous|the\s+previous|the\s+last|a\s+past)\s+(?:chat|conversation|thread|call|meeting))\b(\s*[\w-]+)?")
        .expect("conversation regex")
});
const CONVERSATION_WORDS: &[&str] = &["chat", "conversation", "thread", "call", "meeting"];

/// Nouns that make "chat", "call" or "thread" a thing in the product.
static PRODUCT_NOUNS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/product_nouns.txt")));

/// A field (or item) that only says it did not change points at a version
/// of it the reader never saw: "Patterns: (no change)", "変更なし".
static NO_CHANGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:[^:：\n]{1,60}[:：]\s*)?[(（\[]?\s*(no\s+changes?|unchanged|not\s+changed|same\s+as\s+before|as\s+before|n/c|変更なし|変更無し|変化なし|sin\s+cambios|keine\s+änderung(?:en)?|inchangée?s?|无变化|没有变化|不变)\s*[)）\]]?\s*[.。]?\s*$")
        .expect("no-change regex")
});
/// What every branch of NO_CHANGE's ASCII alternatives holds.
const NO_CHANGE_WORDS: &[&str] = &["chang", "before", "n/c", "cambios"];

/// A handle of the writing session's own runtime, which ends with it: "via
/// task-50", "see shell_3". (Upper-case ids such as `TASK-50` are tracker
/// ids, which the reference check looks up in the repository.)
static RUNTIME_HANDLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?i:via|in|on|from|see|check|using|with|by)\s+((?:task|job|shell|bash|terminal|pane|subagent|process|pid)[-_#]\d+)\b")
        .expect("runtime handle regex")
});
/// RUNTIME_HANDLE's handle names, matched case-sensitively by the regex.
const HANDLE_NAMES: &[&str] = &[
    "task", "job", "shell", "bash", "terminal", "pane", "subagent", "process", "pid",
];

static CLAUSE_VERBS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/clause_verbs.txt")));
static POINTING_FOLLOWERS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/pointing_followers.txt")));

fn cold_phrases(t: &Text, loc: &Locator, out: &mut Vec<Finding>) {
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

/// Words that, alone, name no action: pronouns, fillers and verbs that need
/// an object. A next action made only of these is vague ("do it", "fix
/// that", "keep going", "continue with the task").
static VAGUE_WORDS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/vague_words.txt")));

/// Imperative verbs that start a concrete next action. A next action is an
/// instruction to act, so it should open with one ("run", "add", "rename");
/// one that opens otherwise is usually a description ("parser needs more
/// tests") or a hedge ("maybe look at caching"). `continue`/`finish`/
/// `resume` count: with an object ("finish the CRLF test") they are fine,
/// and without one CK302 catches them first.
static ACTION_VERBS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/action_verbs.txt")));

/// Lead-ins before the verb: "First, run ...", "Next: add ...".
static LEAD_INS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/lead_ins.txt")));

static ENGLISH_MARKERS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/english_markers.txt")));
static FOREIGN_MARKERS: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/foreign_markers.txt")));

fn words(s: &str) -> Vec<String> {
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
fn reads_as_english(text: &str) -> bool {
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

fn next_action(t: &Text, loc: &Locator) -> Option<Finding> {
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
    if clause_starts(&masked).iter().any(|c| opens_with_verb(c)) {
        return None;
    }
    Some(finding("CK303", Severity::Warning, t, 0, loc, format!(
        "next action {:?} does not start with an action verb; start with what to do (run, add, fix, write, ...)",
        t.text.trim()
    )))
}

/// What a "continue" or "keep" may name and still say nothing concrete:
/// "continue with project development", "keep monitoring for other issues".
static GENERIC_ACTIVITY: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/generic_activity.txt")));

fn goes_on_vaguely(w: &[String]) -> bool {
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
static SAYS_OF_WHAT: LazyLock<Vec<&str>> =
    LazyLock::new(|| word_list::entries(include_str!("wording/says_of_what.txt")));

/// An idle or a loop is no step at all: "idle: pull/push loop", "standby".
fn idles(text: &str) -> bool {
    static IDLE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\W*(?:idle|idling|standby|stand\s+by|nothing\s+(?:to\s+do|left|pending)|no\s+(?:further\s+)?(?:action|work)\s+(?:needed|required|pending))\b")
            .expect("idle regex")
    });
    IDLE.is_match(text.trim())
}

/// Where an instruction may begin: the start, and after a label ("Phase 5:",
/// "Optional:"), a sentence ("Do NOT touch X. Start ..."), a dash ("Issue 7
/// PR — make ..."), a lead-in clause ("Once CI is green, tag ...") or a
/// modal ("Next session should run ...").
fn clause_starts(text: &str) -> Vec<String> {
    static BREAK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i):\s|[.!;]\s|\s[—–-]+\s|,\s|\b(?:should|must|will|needs? to|has to|can)\s")
            .expect("clause regex")
    });
    let mut out = vec![text.to_string()];
    out.extend(BREAK.find_iter(text).map(|m| text[m.end()..].to_string()));
    out
}

fn opens_with_verb(clause: &str) -> bool {
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
fn waiting(text: &str) -> bool {
    static WAIT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\W*(?:wait|waiting|await|awaiting|blocked|on hold)\b|待ち\W*(?:[（(][^）)]*[）)])?\W*$")
            .expect("wait regex")
    });
    let text = text.trim();
    // Non-ASCII text (`待ち`) always takes the regex.
    may_hold_any(text, &["wait", "blocked", "on hold"]) && WAIT.is_match(text)
}

fn status_finding(t: &Text, loc: &Locator) -> Finding {
    finding("CK303", Severity::Warning, t, 0, loc, format!(
        "next action {:?} is a wait or a status, not an action; say what the next session does (run, add, fix, write, ...)",
        t.text.trim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word lists are data files anyone may edit: an entry a check compares with a
    /// lower-cased word must be one (else it never matches), and each is there once.
    #[test]
    fn word_lists_hold_lowercase_words_once() {
        let compared_with_words: [(&str, &[&str]); 10] = [
            ("vague_words", &VAGUE_WORDS),
            ("action_verbs", &ACTION_VERBS),
            ("lead_ins", &LEAD_INS),
            ("english_markers", &ENGLISH_MARKERS),
            ("foreign_markers", &FOREIGN_MARKERS),
            ("generic_activity", &GENERIC_ACTIVITY),
            ("says_of_what", &SAYS_OF_WHAT),
            ("pointing_followers", &POINTING_FOLLOWERS),
            ("clause_verbs", &CLAUSE_VERBS),
            ("product_nouns", &PRODUCT_NOUNS),
        ];
        for (name, list) in compared_with_words {
            assert!(!list.is_empty(), "{name}");
            for (i, entry) in list.iter().enumerate() {
                assert_eq!(words(entry), [*entry], "{name}: {entry:?}");
                assert!(!list[..i].contains(entry), "{name}: {entry:?} twice");
            }
        }
        for (name, list) in [
            ("stand_ins", &*STAND_INS),
            ("template_text", &*TEMPLATE_TEXT),
            ("cold_words", &*COLD_WORDS),
        ] {
            for (i, entry) in list.iter().enumerate() {
                assert_eq!(*entry, entry.to_lowercase(), "{name}: {entry:?}");
                assert!(!list[..i].contains(entry), "{name}: {entry:?} twice");
            }
        }
        // Comment lines are no phrases.
        assert!(!COLD_PHRASES.is_empty());
        assert!(COLD_PHRASES.iter().all(|p| !p.starts_with('#')));
    }

    #[test]
    fn masking_keeps_offsets_and_skips_unclosed_quotes() {
        assert_eq!(mask_quoted("run `a b` now"), "run       now");
        let curly = "say \"hi\" and “x”";
        assert_eq!(mask_quoted(curly).len(), curly.len());
        assert_eq!(mask_quoted(curly).trim_end(), "say      and");
        assert_eq!(mask_quoted("5\" screen"), "5\" screen");
    }

    #[test]
    fn slot_prefilter_passes_every_line_the_slot_regex_matches() {
        let slots = [
            "fill {{ var }} here",
            "{% if x %}",
            "write <task name> now",
            "call {name}",
            "[insert the reason]",
            "Date: [DATE]",
            "on YYYY-MM-DD",
            "by DD/MM/YYYY",
            "MM.DD.YYYY",
            "[Your answer here]",
        ];
        for line in slots {
            assert!(SLOT.is_match(line), "{line}");
            assert!(could_hold_slot(line), "{line}");
        }
        for line in [
            "run the gate again",
            "Vec<String> stays",
            "fix a[i]",
            "mm-dd",
        ] {
            assert!(!SLOT.is_match(line) || could_hold_slot(line), "{line}");
        }
        assert!(!could_hold_slot("measure checkpoint: run cargo test"));
    }

    #[test]
    fn word_prefilters_pass_every_line_their_regexes_match() {
        let cold = [
            "as we discussed",
            "discussed above",
            "we just discussed",
            "we were talking about",
            "like we talked about",
            "just agreed",
            "the approach we settled",
            "the decision we made",
            "as decided",
            "as I mentioned",
            "mentioned earlier",
            "like you suggested",
            "noted above",
            "see above",
            "the above",
            "above-mentioned",
            "the output above",
            "same as before",
            "as we did before",
            "like last time",
            "this chat",
            "earlier in our thread",
            "in this session",
            "our discussion",
            "my previous reply",
            "previous message",
            "where we left off",
            "you know what I mean",
            "what the user meant",
            "what you asked for",
            "the bug we hit",
            "the crash I ran into",
            "the bugs from yesterday",
            "since the prior session",
            "fix the remaining errors first",
            "AS  WE\tDISCUSSED",
        ];
        for line in cold {
            assert!(COLD.is_match(line), "{line}");
            assert!(may_hold_any(line, &COLD_WORDS), "{line}");
        }
        assert!(THAT_THING.is_match("fix That bug") && may_hold_any("fix That bug", &["that"]));
        for line in [
            "agreed on the Call",
            "in a previous meeting",
            "from the thread",
        ] {
            assert!(CONVERSATION_PLACE.is_match(line), "{line}");
            assert!(may_hold_any(line, CONVERSATION_WORDS), "{line}");
        }
        for text in [
            "(no changes)",
            "Unchanged",
            "same as BEFORE",
            "N/C",
            "sin cambios",
        ] {
            assert!(NO_CHANGE.is_match(text), "{text}");
            assert!(may_hold_any(text, NO_CHANGE_WORDS), "{text}");
        }
        for line in ["see shell_3", "via task-50", "by pid#12"] {
            assert!(RUNTIME_HANDLE.is_match(line), "{line}");
            assert!(HANDLE_NAMES.iter().any(|n| line.contains(n)), "{line}");
        }
        assert!(waiting("Waiting for CI") && waiting("ON HOLD") && waiting("レビュー待ち"));
        assert!(!may_hold_any("run the gate again", &COLD_WORDS));
        // Under Unicode case folding the Kelvin sign is a `k`: such text takes the regex.
        assert!(COLD.is_match("you \u{212A}now what I mean"));
        assert!(may_hold_any("you \u{212A}now what I mean", &COLD_WORDS));
    }

    #[test]
    fn english_detection() {
        assert!(reads_as_english("the parser needs tests"));
        assert!(!reads_as_english("Ejecutar cargo test y corregir el fallo"));
        assert!(!reads_as_english("src/state.rs の CRLF テストを直す"));
        assert!(!reads_as_english("Den Test für CRLF reparieren"));
    }
}
