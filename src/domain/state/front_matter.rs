//! The front matter's text: split it from the body, parse it with limits,
//! and edit one top-level key block or the marked block as text.

use std::path::Path;

use serde::Deserialize;
use serde_yaml::{Mapping, Value};

use super::{FrontMatter, BEGIN_MARKER, END_MARKER, MAX_DEPTH, MAX_FRONT_MATTER_BYTES};
use crate::system::error::Error;

#[derive(Debug, Clone)]
pub(super) struct Front {
    pub open: String,
    pub text: String,
    pub close: String,
    /// 1-based file line where the front matter text starts.
    pub first_line: usize,
}

/// Splits the text (BOM already removed) into front matter and body.
pub(super) fn split<'a>(path: &Path, text: &'a str) -> Result<(Option<Front>, &'a str), Error> {
    let first_end = match text.find('\n') {
        Some(i) => i + 1,
        None => return Ok((None, text)),
    };
    let first = &text[..first_end];
    if first
        .trim_end_matches(['\n', '\r'])
        .trim_end_matches([' ', '\t'])
        != "---"
    {
        return Ok((None, text));
    }
    let mut pos = first_end;
    let mut line_no = 2;
    while pos < text.len() {
        let end = text[pos..]
            .find('\n')
            .map(|i| pos + i + 1)
            .unwrap_or(text.len());
        let line = &text[pos..end];
        let bare = line
            .trim_end_matches(['\n', '\r'])
            .trim_end_matches([' ', '\t']);
        if bare == "---" || bare == "..." {
            let front_text = &text[first_end..pos];
            if front_text.len() > MAX_FRONT_MATTER_BYTES {
                return Err(Error::TooLarge {
                    path: path.to_path_buf(),
                    what: "front matter ",
                    size: Some(front_text.len() as u64),
                    limit: MAX_FRONT_MATTER_BYTES as u64,
                    hint: "".into(),
                });
            }
            return Ok((
                Some(Front {
                    open: first.to_string(),
                    text: front_text.to_string(),
                    close: line.to_string(),
                    first_line: 2,
                }),
                &text[end..],
            ));
        }
        pos = end;
        line_no += 1;
    }
    let _ = line_no;
    Err(Error::data(
        path,
        "front matter opened at line 1 is not closed (add a line `---` after it)",
    ))
}

/// Rejects nesting deeper than MAX_DEPTH before the YAML parser sees it:
/// libyaml-based parsing is quadratic in depth.
pub(super) fn check_depth(path: &Path, text: &str, first_line: usize) -> Result<(), Error> {
    let mut indents: Vec<usize> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        while indents.last().is_some_and(|&l| l >= indent) {
            indents.pop();
        }
        indents.push(indent);
        // Flow collections and "- - -" sequences nest on one line.
        let mut depth = indents.len();
        let mut flow = 0usize;
        let mut max_flow = 0usize;
        let mut quote: Option<char> = None;
        let mut dashes = trimmed;
        while let Some(r) = dashes.strip_prefix("- ") {
            depth += 1;
            dashes = r.trim_start();
        }
        for c in trimmed.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '[' | '{') => {
                    flow += 1;
                    max_flow = max_flow.max(flow);
                }
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                (None, '#') => break,
                _ => {}
            }
        }
        if depth + max_flow > MAX_DEPTH {
            return Err(Error::data(
                path,
                format!(
                    "front matter nested too deeply at line {} (limit {MAX_DEPTH})",
                    first_line + i
                ),
            ));
        }
    }
    Ok(())
}

/// The front matter's keys and ctxkeep's fields, as parsed before (the same text in this
/// process, or a hook event's cache file: [`super::kept`]) or parsed now.
pub(super) fn parse_front(
    path: &Path,
    text: &str,
    first_line: usize,
) -> Result<(Mapping, FrontMatter), Error> {
    super::kept::parse_front(path, text, first_line, None)
}

/// What [`parse_text`] parsed: `from_value` when ctxkeep's fields read from the parsed keys
/// alone (so that a cache holding the keys can give them back).
pub(super) struct Parsed {
    pub mapping: Mapping,
    pub fm: FrontMatter,
    pub from_value: bool,
}

/// Parses the front matter's text with YAML, its limits checked first.
pub(super) fn parse_text(path: &Path, text: &str, first_line: usize) -> Result<Parsed, Error> {
    check_depth(path, text, first_line)?;
    if text.trim().is_empty() {
        return Ok(Parsed {
            mapping: Mapping::new(),
            fm: FrontMatter::default(),
            from_value: true,
        });
    }
    let value: Value = serde_yaml::from_str(text).map_err(|e| {
        duplicate_key_error(path, text, first_line, &e)
            .unwrap_or_else(|| yaml_error(path, &e, first_line, "front matter"))
    })?;
    if !matches!(value, Value::Mapping(_) | Value::Null) {
        return Err(Error::data(
            path,
            "front matter must be a mapping of keys to values",
        ));
    }
    // From the parsed value rather than the text again: scanning the YAML is
    // most of a checkpoint's own time. Only a failure re-reads the text, for
    // an error that names the line.
    let (fm, from_value) = match FrontMatter::deserialize(&value) {
        Ok(fm) => (fm, true),
        Err(_) => (
            serde_yaml::from_str(text)
                .map_err(|e| yaml_error(path, &e, first_line, "front matter"))?,
            false,
        ),
    };
    let mapping = match value {
        Value::Mapping(m) => m,
        _ => Mapping::new(),
    };
    Ok(Parsed {
        mapping,
        fm,
        from_value,
    })
}

/// serde_yaml places a duplicate key at the start of its mapping; name the
/// line of the repeat instead, found by scanning block-style keys.
pub(super) fn duplicate_key_error(
    path: &Path,
    text: &str,
    first_line: usize,
    e: &serde_yaml::Error,
) -> Option<Error> {
    let msg = e.to_string();
    let at = msg.find("duplicate entry with key ")?;
    let key = msg[at + "duplicate entry with key ".len()..]
        .split(" at line ")
        .next()?
        .trim_matches('"')
        .to_string();
    // One set of keys per open mapping, keyed by its indentation.
    let mut open: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut indent = line.len() - trimmed.len();
        let mut rest = trimmed;
        if let Some(r) = rest.strip_prefix("- ") {
            // A sequence item opens a fresh mapping one level in.
            let r2 = r.trim_start_matches(' ');
            indent += 2 + (r.len() - r2.len());
            rest = r2;
            open.retain(|(l, _)| *l < indent);
            open.push((indent, Vec::new()));
        }
        let Some((k, _)) = rest.split_once(':') else {
            continue;
        };
        let k = k.trim().trim_matches(['"', '\'']).to_string();
        open.retain(|(l, _)| *l <= indent);
        if open.last().is_none_or(|(l, _)| *l != indent) {
            open.push((indent, Vec::new()));
        }
        let keys = &mut open.last_mut()?.1;
        if keys.contains(&k) && k == key {
            return Some(Error::data(
                path,
                format!(
                    "front matter: duplicate key {key:?} at line {} (each key may appear once)",
                    first_line + i
                ),
            ));
        }
        keys.push(k);
    }
    None
}

pub(super) fn yaml_error(
    path: &Path,
    e: &serde_yaml::Error,
    first_line: usize,
    what: &str,
) -> Error {
    let mut msg = e.to_string();
    if msg.contains("repetition limit exceeded") {
        msg = "too many alias expansions (an alias bomb?); remove the `*` aliases".into();
    }
    // serde_yaml counts lines from the start of the front matter; name the file's.
    if let Some(i) = msg.find(" at line ") {
        msg.truncate(i);
    }
    match e.location() {
        Some(loc) => Error::data(
            path,
            format!(
                "{what}: {msg} at line {} column {}",
                loc.line() + first_line - 1,
                loc.column()
            ),
        ),
        None => Error::data(path, format!("{what}: {msg}")),
    }
}

/// Parses a YAML or JSON document given by the user (e.g. `checkpoint --from`).
pub fn parse_user_yaml<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
) -> Result<T, Error> {
    if text.len() > MAX_FRONT_MATTER_BYTES * 4 {
        return Err(Error::data(path, "input too large (limit 256 KiB)"));
    }
    check_depth(path, text, 1)?;
    // Parse untyped first so duplicate keys and aliases are rejected with a line.
    let _: Value = serde_yaml::from_str(text).map_err(|e| yaml_error(path, &e, 1, "input"))?;
    serde_yaml::from_str(text).map_err(|e| yaml_error(path, &e, 1, "input"))
}

/// The byte range of a top-level key's block: from `key:` at column 0 to the
/// next line that starts at column 0 (trailing blank lines excluded).
pub(super) fn find_key_block(text: &str, key: &str) -> Option<(usize, usize)> {
    let mut pos = 0;
    let mut start = None;
    let mut last_content_end = 0;
    for line in text.split_inclusive('\n') {
        let line_start = pos;
        pos += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        let column0 = !bare.is_empty() && !bare.starts_with([' ', '\t']);
        match start {
            None => {
                if bare.starts_with(key)
                    && bare[key.len()..].starts_with(':')
                    && (bare.len() == key.len() + 1
                        || bare[key.len() + 1..].starts_with([' ', '\t']))
                {
                    start = Some(line_start);
                    last_content_end = pos;
                }
            }
            Some(s) => {
                if column0 {
                    return Some((s, last_content_end));
                }
                if !bare.trim().is_empty() {
                    last_content_end = pos;
                }
            }
        }
    }
    start.map(|s| (s, last_content_end))
}

pub(super) fn replace_key_block(text: &str, key: &str, block: Option<&str>, nl: &str) -> String {
    match (find_key_block(text, key), block) {
        (Some((s, e)), Some(b)) => {
            let mut b = b.to_string();
            if e == text.len() && !text.ends_with('\n') {
                b = b.trim_end_matches(['\n', '\r']).to_string();
            }
            format!("{}{}{}", &text[..s], b, &text[e..])
        }
        (Some((s, e)), None) => format!("{}{}", &text[..s], &text[e..]),
        (None, Some(b)) => {
            let mut t = text.to_string();
            if !t.is_empty() && !t.ends_with('\n') {
                t.push_str(nl);
            }
            t.push_str(b);
            t
        }
        (None, None) => text.to_string(),
    }
}

pub(super) fn managed_block_range(body: &str) -> Result<Option<(usize, usize)>, usize> {
    let mut pos = 0;
    let mut begin: Option<(usize, usize)> = None;
    for (i, line) in body.split_inclusive('\n').enumerate() {
        let bare = line.trim();
        match begin {
            None if bare == BEGIN_MARKER => begin = Some((pos + line.len(), i + 1)),
            Some((s, _)) if bare == END_MARKER => return Ok(Some((s, pos))),
            _ => {}
        }
        pos += line.len();
    }
    match begin {
        Some((_, line)) => Err(line),
        None => Ok(None),
    }
}
