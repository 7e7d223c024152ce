//! CK0xx/CK1xx: the format version, the record's required fields, its
//! digest, and signs that the file was cut short.

use super::{Finding, Severity};
use crate::domain::checkpoint::{Checkpoint, Field};
use crate::domain::state::{seal, Seal};
use crate::domain::state::{StateFile, FORMAT_VERSION};

/// The checks of the file's structure: version, presence of a checkpoint,
/// required fields, id and digest.
pub fn structural(sf: &StateFile, strict: bool) -> Vec<Finding> {
    let mut f = Vec::new();
    match sf.fm.ctxkeep {
        Some(FORMAT_VERSION) => {}
        other => {
            let msg = match other {
                None => "no `ctxkeep:` format key; run `ctxkeep init`".to_string(),
                Some(v) => format!("format version {v} is not supported (this ctxkeep reads {FORMAT_VERSION}); upgrade ctxkeep"),
            };
            let mut x = Finding::new("CK001", Severity::Error, Some("ctxkeep"), msg);
            x.line = sf.key_line("ctxkeep");
            f.push(x);
            return f;
        }
    }
    // A key one or two letters from one ctxkeep reads is a typo whose
    // setting is silently not applied: said always; other keys under --strict.
    f.extend(
        unknown_keys(sf)
            .into_iter()
            .filter(|x| strict || x.message.contains("did you mean")),
    );
    let Some(c) = &sf.fm.checkpoint else {
        f.push(Finding::new(
            "CK002",
            Severity::Error,
            Some("checkpoint"),
            "no checkpoint recorded yet; write one with `ctxkeep checkpoint --phase ... --task ... --agent ... --next ...`",
        ));
        return f;
    };
    let cut = cut_record(sf);
    for (code, field) in REQUIRED {
        // A headline read from the session's own record has no hand-set phase, and its next
        // step is what remains: not a gap when the record says what the work is.
        let by_session = matches!(field, Field::Phase | Field::NextAction) && c.says_the_work();
        let (value, flag, field) = (field.text(c).map_or("", |v| v), field.flag(), field.key());
        if value.trim().is_empty()
            && !by_session
            && !cut
                .as_ref()
                .is_some_and(|(_, missing)| missing.contains(&field))
        {
            let mut x = Finding::new(
                code,
                Severity::Error,
                Some(field),
                format!("`{field}` is empty; set it with `ctxkeep checkpoint {flag} \"...\"`"),
            );
            x.line = sf
                .nested_key_line("checkpoint", field)
                .or(sf.key_line("checkpoint"));
            f.push(x);
        }
    }
    if crate::domain::checkpoint::id_number(&c.id).is_none() {
        let mut x = Finding::new(
            "CK105",
            Severity::Error,
            Some("id"),
            format!("checkpoint id {:?} is not of the form ckpt-NNNN; run `ctxkeep checkpoint` to write a fresh one", c.id),
        );
        x.line = sf.nested_key_line("checkpoint", "id");
        f.push(x);
    }
    if chrono::DateTime::parse_from_rfc3339(&c.created_at).is_err() {
        let mut x = Finding::new(
            "CK106",
            Severity::Error,
            Some("created_at"),
            format!(
                "created_at {:?} is not an RFC 3339 time; run `ctxkeep checkpoint` to re-seal",
                c.created_at
            ),
        );
        x.line = sf.nested_key_line("checkpoint", "created_at");
        f.push(x);
    }
    match seal(sf) {
        Some(Seal::Altered) => {
            // An error, not a warning: `resume` refuses such a record, and
            // the gate must fail whatever the reader it guards would refuse.
            let mut x = Finding::new(
                "CK110",
                Severity::Error,
                Some("digest"),
                format!("{} was edited by hand since ctxkeep wrote it (digest mismatch), so `resume` refuses it; run `ctxkeep checkpoint` to re-seal it with the edit", c.id),
            );
            x.line = sf.nested_key_line("checkpoint", "digest");
            f.push(x);
        }
        Some(Seal::Missing) if cut.is_some() => {}
        Some(Seal::Missing) => {
            let mut x = Finding::new(
                "CK111",
                Severity::Error,
                Some("digest"),
                format!("{} has no digest, so damage cannot be detected; run `ctxkeep checkpoint` to seal it", c.id),
            );
            x.line = sf.key_line("checkpoint");
            f.push(x);
        }
        _ => {}
    }
    if let Some((last, missing)) = cut {
        let mut x = Finding::new(
            "CK121",
            Severity::Error,
            Some("checkpoint"),
            format!(
                "the checkpoint record stops after `{last}`: {} missing, so the file was cut short or damaged; restore it from git or write a new one with `ctxkeep checkpoint`",
                missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                    + if missing.len() == 1 { " is" } else { " are" }
            ),
        );
        x.line = sf
            .nested_key_line("checkpoint", last)
            .or(sf.key_line("checkpoint"));
        f.push(x);
    }
    f.extend(body(sf, c));
    f.extend(lines_of_their_own(sf, c));
    f
}

/// Keys whose values are one line by nature: file names, commands, refs, ids.
const ONE_LINE_KEYS: &[&str] = &[
    "path",
    "files",
    "worked_from",
    "command",
    "branch",
    "head",
    "id",
    "status",
    "trigger",
    "created_at",
    "controlling_agent",
];

/// CK125: a value that would write lines of its own where ctxkeep shows it (a file name with a
/// line break, an escape sequence). ctxkeep shows such values escaped, but a record holding
/// them came from a hostile file name or was crafted: the gate says so rather than pass.
fn lines_of_their_own(sf: &StateFile, c: &Checkpoint) -> Vec<Finding> {
    fn walk(
        v: &serde_json::Value,
        at: &str,
        one_line: bool,
        out: &mut Vec<(String, &'static str, Severity)>,
    ) {
        match v {
            serde_json::Value::String(s) => {
                // In a one-line value (a path, a command) a break or an escape is crafted; in
                // prose (a prompt with pasted terminal output) it can be honest, and it is shown
                // escaped either way: a warning there, not a failed gate.
                let severity = if one_line {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                if s.chars().any(crate::system::recorded::is_unsafe_char) {
                    out.push((at.to_string(), "a control character", severity));
                } else if one_line && s.contains(['\n', '\r']) {
                    out.push((at.to_string(), "a line break", Severity::Error));
                }
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}[{i}]"), one_line, out);
                }
            }
            serde_json::Value::Object(map) => {
                for (k, item) in map {
                    walk(
                        item,
                        &format!("{at}.{k}"),
                        ONE_LINE_KEYS.contains(&k.as_str()),
                        out,
                    );
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(&c.to_json(), "checkpoint", false, &mut found);
    found
        .into_iter()
        .take(5)
        .map(|(at, what, severity)| {
            let mut x = Finding::new(
                "CK125",
                severity,
                Some(at.split(['.', '[']).nth(1).unwrap_or("checkpoint")),
                if severity == Severity::Error {
                    format!("`{at}` holds {what}: shown raw it would read as lines of ctxkeep's own (ctxkeep shows it escaped); rename the file or write a fresh checkpoint")
                } else {
                    format!("`{at}` holds {what} (pasted terminal output?); ctxkeep shows it escaped")
                },
            );
            x.line = sf.key_line("checkpoint");
            x
        })
        .collect()
}

/// The keys ctxkeep always writes, in the order it writes them.
const RECORD_KEYS: [&str; 10] = [
    "id",
    "created_at",
    "trigger",
    Field::Phase.key(),
    Field::ActiveTask.key(),
    Field::ControllingAgent.key(),
    Field::NextAction.key(),
    Field::Decisions.key(),
    Field::OpenQuestions.key(),
    "digest",
];

/// A record that lacks its digest and other keys ctxkeep always writes was
/// cut mid-record (the digest is written last). Returns the last key present
/// and the keys missing.
fn cut_record(sf: &StateFile) -> Option<(&'static str, Vec<&'static str>)> {
    let m = sf.mapping.get("checkpoint")?.as_mapping()?;
    let has = |k: &str| m.contains_key(k);
    if has("digest") {
        return None;
    }
    let missing: Vec<&str> = RECORD_KEYS.into_iter().filter(|k| !has(k)).collect();
    if missing.len() < 2 {
        return None; // only the digest: a hand-written record (CK111)
    }
    let last = RECORD_KEYS.into_iter().rev().find(|k| has(k))?;
    Some((last, missing))
}

/// The body: the marked block ctxkeep writes with every checkpoint must be
/// whole, and no merge may be left half done.
fn body(sf: &StateFile, c: &Checkpoint) -> Vec<Finding> {
    use crate::domain::state::{BEGIN_MARKER, END_MARKER};
    let mut f = Vec::new();
    let front_lines = sf.original[..sf.original.len() - sf.body.len()]
        .matches('\n')
        .count();
    let mut begin: Option<usize> = None;
    let mut closed = false;
    let mut conflict: Option<usize> = None;
    for (i, line) in sf.body.lines().enumerate() {
        let t = line.trim();
        if begin.is_none() && t == BEGIN_MARKER {
            begin = Some(front_lines + i + 1);
        } else if begin.is_some() && t == END_MARKER {
            closed = true;
        }
        let conflict_marker = ["<<<<<<<", ">>>>>>>"].iter().any(|m| {
            line.strip_prefix(m)
                .is_some_and(|r| r.is_empty() || r.starts_with(' '))
        });
        if conflict.is_none() && conflict_marker {
            conflict = Some(front_lines + i + 1);
        }
    }
    match (begin, closed) {
        (Some(line), false) => {
            let mut x = Finding::new(
                "CK120",
                Severity::Error,
                Some("body"),
                format!("`{BEGIN_MARKER}` has no `{END_MARKER}` after it: the file was cut short; restore the end from git, or add the end marker and run `ctxkeep checkpoint`"),
            );
            x.line = Some(line);
            f.push(x);
        }
        (None, _) => f.push(Finding::new(
            "CK122",
            Severity::Warning,
            Some("body"),
            format!("the marked block that shows {} to readers is missing (the file was cut short, or the markers were deleted); run `ctxkeep checkpoint` to write it again", c.id),
        )),
        _ => {}
    }
    if let (Some(line), true, Some(_)) = (begin, closed, crate::domain::state::edited_block(sf)) {
        let mut x = Finding::new(
            "CK124",
            Severity::Warning,
            Some("body"),
            format!("the marked block was edited by hand since ctxkeep wrote it with {}; the next checkpoint rewrites it (keeping the edited text in .ctxkeep/checkpoints/); put your own text outside the markers", c.id),
        );
        x.line = Some(line);
        f.push(x);
    }
    if let Some(line) = conflict {
        let mut x = Finding::new(
            "CK123",
            Severity::Error,
            Some("body"),
            "an unresolved merge conflict (`<<<<<<<` / `>>>>>>>`); resolve it, then run `ctxkeep checkpoint`",
        );
        x.line = Some(line);
        f.push(x);
    }
    f
}

/// Each required field, with the code of the finding that it is empty.
const REQUIRED: [(&str, Field); 4] = [
    ("CK101", Field::Phase),
    ("CK102", Field::ActiveTask),
    ("CK103", Field::ControllingAgent),
    ("CK104", Field::NextAction),
];

/// Keys ctxkeep does not read are kept as written; `--strict` points them
/// out, because a typo (`widnow:`) silently falls back to the default.
fn unknown_keys(sf: &StateFile) -> Vec<Finding> {
    sf.mapping
        .keys()
        .map(|k| match k.as_str() {
            Some(s) => s.to_string(),
            None => serde_yaml::to_string(k)
                .unwrap_or_default()
                .trim()
                .to_string(),
        })
        .filter(|k| !crate::domain::state::KNOWN_KEYS.contains(&k.as_str()))
        .map(|k| {
            let message = match near_key(&k) {
                Some(known) => format!(
                    "`{k}` is not a key ctxkeep reads, so its setting is not applied; did you mean `{known}`?"
                ),
                None => format!(
                    "`{k}` is not a key ctxkeep reads; it is kept as written (check for a typo)"
                ),
            };
            let mut x = Finding::new("CK130", Severity::Warning, Some(&k), message);
            x.line = sf.key_line(&k);
            x
        })
        .collect()
}

/// The known key `key` is a misspelling of: at most two edits away (one for
/// keys of up to four letters).
fn near_key(key: &str) -> Option<&'static str> {
    let key = key.to_ascii_lowercase();
    crate::domain::state::KNOWN_KEYS
        .iter()
        .map(|k| (edit_distance(&key, k), *k))
        .filter(|(d, k)| *d > 0 && *d <= if k.len() <= 4 { 1 } else { 2 })
        .min()
        .map(|(_, k)| k)
        .or_else(|| {
            crate::domain::state::KNOWN_KEYS
                .iter()
                .copied()
                .find(|k| *k == key)
        })
}

/// Levenshtein distance over bytes (keys are short ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diag + usize::from(ca != cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// CK123 for each conflict region of the file's text, with its lines.
pub fn conflicts(text: &str, shown: &str) -> Vec<Finding> {
    use crate::domain::state::conflicts;
    conflicts::regions(text)
        .into_iter()
        .map(|r| {
            let mut x = Finding::new(
                "CK123",
                Severity::Error,
                None,
                format!(
                    "unresolved merge conflict in {shown} {}; run `ctxkeep resolve`",
                    conflicts::describe(&[r])
                ),
            );
            x.line = Some(r.first);
            x
        })
        .collect()
}
