//! How a JSON file is laid out, read so that what ctxkeep adds looks like the rest: its line
//! break and indentation, the text around colons and commas, and where lines and comments begin
//! and end around an item.

use serde_json::Value;

use super::spans::Node;

/// How the file writes what ctxkeep adds: its line break, one step of
/// indentation, and what follows a colon and (on one line) a comma.
pub(super) struct Style {
    pub(super) newline: &'static str,
    pub(super) unit: String,
    pub(super) colon: String,
    pub(super) comma: String,
}

impl Style {
    pub(super) fn of(text: &str, tree: &Node) -> Style {
        let mut style = Style {
            newline: newline_of(text),
            unit: String::new(),
            colon: String::new(),
            comma: String::new(),
        };
        let mut colon = None;
        let mut comma = None;
        let mut stack = vec![tree];
        while let Some(node) = stack.pop() {
            let multiline = node.spans_lines;
            if let Some(first) = node.items.first() {
                let open = line_indent(text, node.start);
                let own = line_indent(text, first.start);
                if style.unit.is_empty()
                    && multiline
                    && starts_line(text, first.start)
                    && own.len() > open.len()
                    && own.starts_with(open)
                {
                    style.unit = own[open.len()..].to_string();
                }
                if colon.is_none() {
                    if let Some(c) = first.colon {
                        colon = Some(blank_or(&text[c + 1..first.value.start], " "));
                    }
                }
                if comma.is_none() && !multiline {
                    if let (Some(c), Some(second)) = (first.comma, node.items.get(1)) {
                        comma = Some(blank_or(&text[c + 1..second.start], " "));
                    }
                }
            }
            stack.extend(node.items.iter().rev().map(|i| &i.value));
        }
        if style.unit.is_empty() {
            style.unit = "  ".into();
        }
        style.colon = colon.unwrap_or_else(|| " ".into());
        style.comma = comma.unwrap_or_else(|| style.colon.clone());
        style
    }

    /// `value` as JSON text; on several lines (`indent` is the indentation
    /// of the line it starts on) or on one.
    pub(super) fn render(&self, value: &Value, indent: &str, multiline: bool) -> String {
        let mut out = String::new();
        self.render_into(&mut out, value, indent, multiline);
        out
    }

    fn render_into(&self, out: &mut String, value: &Value, indent: &str, multiline: bool) {
        let (open, close, items): (char, char, Vec<(Option<&String>, &Value)>) = match value {
            Value::Object(m) if !m.is_empty() => {
                ('{', '}', m.iter().map(|(k, v)| (Some(k), v)).collect())
            }
            Value::Array(a) if !a.is_empty() => ('[', ']', a.iter().map(|v| (None, v)).collect()),
            other => {
                out.push_str(&other.to_string());
                return;
            }
        };
        let inner = format!("{indent}{}", self.unit);
        out.push(open);
        for (n, (key, v)) in items.iter().enumerate() {
            if n > 0 {
                out.push(',');
                if !multiline {
                    out.push_str(&self.comma);
                }
            }
            if multiline {
                out.push_str(self.newline);
                out.push_str(&inner);
            }
            if let Some(k) = key {
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                out.push_str(&self.colon);
            }
            self.render_into(out, v, &inner, multiline);
        }
        if multiline {
            out.push_str(self.newline);
            out.push_str(indent);
        }
        out.push(close);
    }
}

/// The text's line break: `\r\n` when its first line ends so, else `\n`.
pub fn newline_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// `s` when it is only spaces and tabs, else `fallback`.
pub(super) fn blank_or(s: &str, fallback: &str) -> String {
    if s.bytes().all(|b| b == b' ' || b == b'\t') {
        s.to_string()
    } else {
        fallback.to_string()
    }
}

pub(super) fn line_start(t: &str, pos: usize) -> usize {
    t[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The spaces and tabs that begin the line holding `pos`.
pub(super) fn line_indent(t: &str, pos: usize) -> &str {
    let start = line_start(t, pos);
    let line = &t[start..];
    let len = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..len.min(pos - start)]
}

/// Whether only spaces and tabs come before `pos` on its line.
pub(super) fn starts_line(t: &str, pos: usize) -> bool {
    t[line_start(t, pos)..pos]
        .bytes()
        .all(|b| b == b' ' || b == b'\t')
}

/// Where an item's text begins when it is taken out: the spaces and tabs
/// before it, and the line break before those when it starts a line.
pub(super) fn lead(t: &str, pos: usize) -> usize {
    let before = t[..pos].trim_end_matches([' ', '\t']);
    if let Some(b) = before.strip_suffix('\n') {
        b.strip_suffix('\r').unwrap_or(b).len()
    } else {
        before.len()
    }
}

pub(super) fn strip_line_break(s: &str) -> Option<&str> {
    s.strip_prefix("\r\n").or_else(|| s.strip_prefix('\n'))
}

pub(super) fn only_blanks_and_comma(s: &str) -> bool {
    s.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b','))
}

/// The end of the comments that follow `pos` on its line (or `pos`).
pub(super) fn after_same_line_comments(t: &str, pos: usize) -> usize {
    let mut end = pos;
    let mut at = pos;
    loop {
        let rest = &t[at..];
        let blank = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let rest = &rest[blank..];
        if rest.starts_with("//") {
            let len = rest.find('\n').unwrap_or(rest.len());
            let len = if rest[..len].ends_with('\r') {
                len - 1
            } else {
                len
            };
            return at + blank + len;
        }
        if let Some(body) = rest.strip_prefix("/*") {
            match body.find("*/") {
                Some(i) => {
                    at += blank + 2 + i + 2;
                    end = at;
                }
                None => return end,
            }
            continue;
        }
        return end;
    }
}

/// The last line break in `t[from..to]` (blanks and comments only) that
/// is not inside a block comment.
pub(super) fn last_line_break(t: &str, from: usize, to: usize) -> Option<usize> {
    let mut found = None;
    let mut at = from;
    while at < to {
        let rest = &t[at..to];
        if let Some(body) = rest.strip_prefix("/*") {
            at += 2 + body.find("*/").map_or(body.len(), |i| i + 2);
        } else if rest.starts_with("//") {
            at += rest.find('\n').unwrap_or(rest.len());
        } else {
            if rest.starts_with('\n') {
                found = Some(at);
            }
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}
