//! An agent's JSON settings edited as text: ctxkeep inserts or removes its
//! own members and elements, and every other byte stays as the user wrote it
//! (indentation, line endings, escapes, number spellings, key order,
//! duplicate keys, comments where the file allows them).
//!
//! The document is parsed twice: by serde_json, which validates it and gives
//! the value the agent reads (a duplicate key's last occurrence wins, as in
//! JavaScript), and by the small parser here, which only records where each
//! value, key and comma is. An edit splices text at those places and is
//! checked by parsing the result again. New entries are laid out like their
//! surroundings: on lines of their own, indented one step deeper than their
//! container's line, in a container that spans lines; on the same line in
//! one that does not.
//!
//! Removing is the exact inverse of inserting, so `install` then
//! `uninstall` gives back the original bytes. An empty object or list that
//! ctxkeep fills is left in place when emptied again if the install noted
//! it (`kept.rs`). Where two originals would become the same text, one of
//! them cannot come back: an empty object or list that ctxkeep fills,
//! written across lines with nothing inside (`{` and `}` on two lines),
//! comes back as `{}`.

use serde_json::Value;

/// One step of a path into the document: a member of an object (its last
/// occurrence, the one the agent reads) or an element of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    At(usize),
}

/// A JSON document and the value it holds.
#[derive(Debug, Clone)]
pub struct JsonText {
    text: String,
    /// `//` and `/* */` comments are allowed (Gemini CLI's settings).
    comments: bool,
    value: Value,
    /// Empty lists and objects that were there before ctxkeep's entries went in: an uninstall
    /// that empties them again leaves them (see [`JsonText::empty_containers`]).
    kept: Vec<Vec<String>>,
}

impl JsonText {
    /// Parses `text`. A blank text is an empty object that has not been
    /// written yet. The error says what is wrong, for a one-line message.
    pub fn parse(text: &str, comments: bool) -> Result<JsonText, String> {
        if text.trim().is_empty() {
            return Ok(JsonText {
                text: text.to_string(),
                comments,
                value: Value::Object(Default::default()),
                kept: Vec::new(),
            });
        }
        let plain = if comments {
            blank_comments(text)?
        } else {
            text.to_string()
        };
        let value = serde_json::from_str(&plain).map_err(|e| format!("not valid JSON ({e})"))?;
        Ok(JsonText {
            text: text.to_string(),
            comments,
            value,
            kept: Vec::new(),
        })
    }

    /// The paths of the empty lists and objects in the document (keys, and list positions as
    /// numbers), outermost first, down to a depth of 4 (ctxkeep's deepest container is a hook
    /// group's list, `hooks.EVENT.N.hooks`): what an uninstall could not tell from containers
    /// ctxkeep made and emptied again.
    pub fn empty_containers(&self) -> Vec<Vec<String>> {
        fn walk(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
            let children: Vec<(String, &Value)> = match v {
                Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
                Value::Array(a) => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i.to_string(), v))
                    .collect(),
                _ => return,
            };
            if children.is_empty() {
                out.push(at.clone());
            } else if at.len() < 4 {
                for (step, child) in children {
                    at.push(step);
                    walk(child, at, out);
                    at.pop();
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.value, &mut Vec::new(), &mut out);
        out.retain(|p| !p.is_empty());
        out
    }

    /// Containers an uninstall must leave even when it empties them.
    pub fn keep_empty(&mut self, paths: Vec<Vec<String>>) {
        self.kept = paths;
    }

    /// Whether the container at `path` was there, empty, before ctxkeep's entries went in.
    pub fn kept(&self, path: &[Step]) -> bool {
        self.kept.iter().any(|k| {
            k.len() == path.len()
                && k.iter().zip(path).all(|(k, step)| match step {
                    Step::Key(key) => k == key,
                    Step::At(n) => *k == n.to_string(),
                })
        })
    }

    /// What the agent reads.
    pub fn value(&self) -> &Value {
        &self.value
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Sets `key` in the object at `object` to `value`: the member's value is
    /// replaced where the key is already there, else the member is added
    /// after the last one.
    pub fn set(&mut self, object: &[Step], key: &str, value: &Value) -> Result<(), String> {
        if self.text.trim().is_empty() {
            // A new file (or a blank one): an empty object to add into.
            self.text = format!("{{}}{}", newline_of(&self.text));
        }
        let tree = self.tree()?;
        let style = Style::of(&self.text, &tree);
        let (node, parent_multiline) = find(&tree, object, None)?;
        if node.kind != Kind::Object {
            return Err(format!("{} is not an object", show(object)));
        }
        let edits = match node
            .items
            .iter()
            .rposition(|i| i.key.as_deref() == Some(key))
        {
            Some(at) => {
                let item = &node.items[at];
                let indent = line_indent(&self.text, item.start);
                let multiline = node.spans_lines;
                let text = style.render(value, indent, multiline);
                vec![Edit::new(item.value.start, item.value.end, text)]
            }
            None => self.append(node, parent_multiline, &style, |indent, multiline| {
                format!(
                    "{}:{}{}",
                    Value::String(key.into()),
                    style.colon,
                    style.render(value, indent, multiline)
                )
            }),
        };
        self.apply(edits)
    }

    /// Adds `value` after the last element of the list at `array`.
    pub fn push(&mut self, array: &[Step], value: &Value) -> Result<(), String> {
        let tree = self.tree()?;
        let style = Style::of(&self.text, &tree);
        let (node, parent_multiline) = find(&tree, array, None)?;
        if node.kind != Kind::Array {
            return Err(format!("{} is not a list", show(array)));
        }
        let edits = self.append(node, parent_multiline, &style, |indent, multiline| {
            style.render(value, indent, multiline)
        });
        self.apply(edits)
    }

    /// Removes the member or element at `path`, with the comma and the line
    /// break that go with it; a container left empty is closed up (`{}`).
    pub fn remove(&mut self, path: &[Step]) -> Result<(), String> {
        let Some((last, parent_path)) = path.split_last() else {
            return Err("cannot remove the whole document".into());
        };
        let tree = self.tree()?;
        let (parent, _) = find(&tree, parent_path, None)?;
        let at = index_in(parent, *last).ok_or_else(|| format!("no {}", show(path)))?;
        let t = &self.text;
        let items = &parent.items;
        let item = &items[at];
        let mut edits = Vec::new();
        if items.len() == 1 {
            let from = lead(t, item.start);
            let mut to = item.value.end;
            // What `append` opened in an empty container goes too: the line
            // break and indentation left before the closing bracket, when
            // nothing but that line's blanks would stay inside. That
            // indentation was the bracket's line's then; another edit of the
            // same install may have moved the bracket to a new line since, so
            // the item's own indentation less one step says it first.
            if from == parent.start + 1 {
                let rest = &t[to..parent.end - 1];
                let item_line = starts_line(t, item.start).then(|| line_indent(t, item.start));
                // The step, from the item's own first inner line (ctxkeep's items are
                // containers written across lines where their container spans lines).
                let step = item_line.and_then(|outer| {
                    let first = item.value.items.first()?;
                    starts_line(t, first.start)
                        .then(|| line_indent(t, first.start))?
                        .strip_prefix(outer)
                });
                // Else (an item emptied before it goes) the document's step.
                let unit = Style::of(t, &tree).unit;
                let opened = [
                    item_line.zip(step).and_then(|(i, s)| i.strip_suffix(s)),
                    item_line.and_then(|i| i.strip_suffix(unit.as_str())),
                    Some(line_indent(t, parent.start)),
                ];
                for indent in opened.into_iter().flatten() {
                    let Some(after) = strip_line_break(rest).and_then(|r| r.strip_prefix(indent))
                    else {
                        continue;
                    };
                    let after = parent.end - 1 - after.len();
                    if last_line_break(t, after, parent.end - 1).is_none() {
                        to = after;
                        break;
                    }
                }
            }
            edits.push(Edit::new(from, to, String::new()));
        } else if at + 1 < items.len() {
            // Not the last: up to the next one, when only blanks and the
            // comma lie between; else the item and its own comma.
            let next = &items[at + 1];
            if only_blanks_and_comma(&t[item.value.end..next.start]) {
                edits.push(Edit::new(item.start, next.start, String::new()));
            } else {
                edits.push(Edit::new(
                    lead(t, item.start),
                    item.value.end,
                    String::new(),
                ));
                if let Some(c) = item.comma {
                    edits.push(Edit::new(c, c + 1, String::new()));
                }
            }
        } else {
            // The last: the comma before it goes with it.
            let prev = &items[at - 1];
            let comma = prev.comma.ok_or("a list item without a comma")?;
            if only_blanks_and_comma(&t[comma..item.start]) {
                edits.push(Edit::new(comma, item.value.end, String::new()));
            } else {
                edits.push(Edit::new(comma, comma + 1, String::new()));
                edits.push(Edit::new(
                    lead(t, item.start),
                    item.value.end,
                    String::new(),
                ));
            }
        }
        self.apply(edits)
    }

    /// The edits that add one item at the end of `node`; `item` renders it
    /// for an indentation and a layout (multi-line or not).
    fn append(
        &self,
        node: &Node,
        parent_multiline: Option<bool>,
        style: &Style,
        item: impl Fn(&str, bool) -> String,
    ) -> Vec<Edit> {
        let t = &self.text;
        let nl = style.newline;
        let open_indent = line_indent(t, node.start);
        match node.items.last() {
            None => {
                // An empty container opens onto lines of its own unless it
                // sits in one written on a single line.
                if parent_multiline == Some(false) {
                    return vec![Edit::new(node.start + 1, node.start + 1, item("", false))];
                }
                let indent = format!("{open_indent}{}", style.unit);
                let new = format!("{nl}{indent}{}", item(&indent, true));
                match last_line_break(t, node.start + 1, node.end - 1) {
                    // Before the line break that ends the inside.
                    Some(at) => {
                        let at = if t[..at].ends_with('\r') { at - 1 } else { at };
                        vec![Edit::new(at, at, new)]
                    }
                    None => vec![Edit::new(
                        node.start + 1,
                        node.start + 1,
                        format!("{new}{nl}{open_indent}"),
                    )],
                }
            }
            Some(last) if node.spans_lines => {
                let indent = node
                    .items
                    .iter()
                    .rev()
                    .find(|i| starts_line(t, i.start))
                    .map(|i| line_indent(t, i.start).to_string())
                    .unwrap_or_else(|| format!("{open_indent}{}", style.unit));
                // After a comment on the last item's line, so the comment
                // stays with that item.
                let after = after_same_line_comments(t, last.value.end);
                vec![
                    Edit::new(last.value.end, last.value.end, ",".into()),
                    Edit::new(after, after, format!("{nl}{indent}{}", item(&indent, true))),
                ]
            }
            Some(last) => vec![Edit::new(
                last.value.end,
                last.value.end,
                format!(",{}{}", style.comma, item(open_indent, false)),
            )],
        }
    }

    /// The text with comments blanked (same byte offsets), parsed for spans.
    fn tree(&self) -> Result<Node, String> {
        let plain = if self.comments {
            blank_comments(&self.text)?
        } else {
            self.text.clone()
        };
        Parser {
            s: plain.as_bytes(),
            text: &plain,
            pos: 0,
            depth: 0,
        }
        .document()
    }

    /// Applies non-overlapping edits (two at one place land in the order
    /// given) and checks that the result still parses: a slip here must
    /// never reach the file.
    fn apply(&mut self, edits: Vec<Edit>) -> Result<(), String> {
        let mut edits: Vec<(usize, Edit)> = edits.into_iter().enumerate().collect();
        edits.sort_by_key(|(n, e)| std::cmp::Reverse((e.start, *n)));
        let mut text = self.text.clone();
        for (_, e) in edits {
            text.replace_range(e.start..e.end, &e.text);
        }
        let mut next = JsonText::parse(&text, self.comments).map_err(|e| {
            format!("ctxkeep's edit would break the file ({e}); nothing was changed")
        })?;
        next.kept = std::mem::take(&mut self.kept);
        *self = next;
        Ok(())
    }
}

#[derive(Debug)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

impl Edit {
    fn new(start: usize, end: usize, text: String) -> Edit {
        Edit { start, end, text }
    }
}

/// How the file writes what ctxkeep adds: its line break, one step of
/// indentation, and what follows a colon and (on one line) a comma.
struct Style {
    newline: &'static str,
    unit: String,
    colon: String,
    comma: String,
}

impl Style {
    fn of(text: &str, tree: &Node) -> Style {
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
    fn render(&self, value: &Value, indent: &str, multiline: bool) -> String {
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
fn blank_or(s: &str, fallback: &str) -> String {
    if s.bytes().all(|b| b == b' ' || b == b'\t') {
        s.to_string()
    } else {
        fallback.to_string()
    }
}

fn line_start(t: &str, pos: usize) -> usize {
    t[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The spaces and tabs that begin the line holding `pos`.
fn line_indent(t: &str, pos: usize) -> &str {
    let start = line_start(t, pos);
    let line = &t[start..];
    let len = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..len.min(pos - start)]
}

/// Whether only spaces and tabs come before `pos` on its line.
fn starts_line(t: &str, pos: usize) -> bool {
    t[line_start(t, pos)..pos]
        .bytes()
        .all(|b| b == b' ' || b == b'\t')
}

/// Where an item's text begins when it is taken out: the spaces and tabs
/// before it, and the line break before those when it starts a line.
fn lead(t: &str, pos: usize) -> usize {
    let before = t[..pos].trim_end_matches([' ', '\t']);
    if let Some(b) = before.strip_suffix('\n') {
        b.strip_suffix('\r').unwrap_or(b).len()
    } else {
        before.len()
    }
}

fn strip_line_break(s: &str) -> Option<&str> {
    s.strip_prefix("\r\n").or_else(|| s.strip_prefix('\n'))
}

fn only_blanks_and_comma(s: &str) -> bool {
    s.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b','))
}

/// The end of the comments that follow `pos` on its line (or `pos`).
fn after_same_line_comments(t: &str, pos: usize) -> usize {
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
fn last_line_break(t: &str, from: usize, to: usize) -> Option<usize> {
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

/// The text with every comment's bytes turned into spaces (line breaks
/// kept), so offsets and line numbers stay those of the file. Refuses an
/// unterminated block comment.
fn blank_comments(text: &str) -> Result<String, String> {
    let mut out = text.as_bytes().to_vec();
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (c, b.get(i + 1)) {
            (b'"', _) => in_string = true,
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let Some(len) = text[i + 2..].find("*/") else {
                    let line = text[..i].matches('\n').count() + 1;
                    return Err(format!(
                        "not valid JSON (a comment at line {line} never ends)"
                    ));
                };
                for (j, o) in out.iter_mut().enumerate().skip(i).take(len + 4) {
                    if b[j] != b'\n' && b[j] != b'\r' {
                        *o = b' ';
                    }
                }
                i += len + 4;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Only ASCII bytes were changed, and whole characters at that.
    String::from_utf8(out).map_err(|_| "not valid JSON (a comment splits a character)".to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    Scalar,
}

/// Where a value is: `start..end` covers it from its first byte (`{`, `[`,
/// `"` or the scalar) to just past its last.
#[derive(Debug)]
struct Node {
    kind: Kind,
    start: usize,
    end: usize,
    /// A line break lies between its first and last byte.
    spans_lines: bool,
    items: Vec<Item>,
}

/// A member of an object (with its key) or an element of a list.
#[derive(Debug)]
struct Item {
    key: Option<String>,
    /// The key's opening quote, or the element's first byte.
    start: usize,
    colon: Option<usize>,
    value: Node,
    /// The comma after the value.
    comma: Option<usize>,
}

/// The node at `path` and whether its container spans several lines (None
/// for the document itself).
fn find<'n>(
    node: &'n Node,
    path: &[Step],
    multiline: Option<bool>,
) -> Result<(&'n Node, Option<bool>), String> {
    let Some((step, rest)) = path.split_first() else {
        return Ok((node, multiline));
    };
    let at = index_in(node, *step).ok_or_else(|| format!("no {}", show(path)))?;
    find(&node.items[at].value, rest, Some(node.spans_lines))
}

fn index_in(node: &Node, step: Step) -> Option<usize> {
    match (node.kind, step) {
        (Kind::Object, Step::Key(k)) => {
            node.items.iter().rposition(|i| i.key.as_deref() == Some(k))
        }
        (Kind::Array, Step::At(n)) if n < node.items.len() => Some(n),
        _ => None,
    }
}

fn show(path: &[Step]) -> String {
    if path.is_empty() {
        return "the document".into();
    }
    let parts: Vec<String> = path
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.to_string(),
            Step::At(n) => n.to_string(),
        })
        .collect();
    format!("`{}`", parts.join("."))
}

/// Records spans in text that serde_json has already accepted (comments
/// blanked); refuses anything else rather than guess.
struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 256;

impl Parser<'_> {
    fn document(mut self) -> Result<Node, String> {
        self.blank();
        let root = self.value()?;
        self.blank();
        if self.pos != self.s.len() {
            return Err(self.error());
        }
        Ok(root)
    }

    fn error(&self) -> String {
        format!("not valid JSON (unexpected text at byte {})", self.pos)
    }

    fn blank(&mut self) {
        while matches!(self.s.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<usize, String> {
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            Ok(self.pos - 1)
        } else {
            Err(self.error())
        }
    }

    fn value(&mut self) -> Result<Node, String> {
        let start = self.pos;
        match self.s.get(self.pos) {
            Some(b'{') => self.container(Kind::Object, b'}'),
            Some(b'[') => self.container(Kind::Array, b']'),
            Some(b'"') => {
                self.string()?;
                Ok(self.leaf(start))
            }
            Some(_) => {
                while let Some(c) = self.s.get(self.pos) {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(self.error());
                }
                Ok(self.leaf(start))
            }
            None => Err(self.error()),
        }
    }

    fn leaf(&self, start: usize) -> Node {
        Node {
            kind: Kind::Scalar,
            start,
            end: self.pos,
            spans_lines: false,
            items: Vec::new(),
        }
    }

    fn string(&mut self) -> Result<(), String> {
        self.expect(b'"')?;
        while let Some(&c) = self.s.get(self.pos) {
            self.pos += 1;
            match c {
                b'\\' => self.pos += 1,
                b'"' => return Ok(()),
                _ => {}
            }
        }
        Err(self.error())
    }

    fn container(&mut self, kind: Kind, close: u8) -> Result<Node, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let start = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        self.blank();
        if self.s.get(self.pos) == Some(&close) {
            self.pos += 1;
        } else {
            loop {
                self.blank();
                let item_start = self.pos;
                let (key, colon) = if kind == Kind::Object {
                    self.string()?;
                    let key: String = serde_json::from_str(&self.text[item_start..self.pos])
                        .map_err(|_| self.error())?;
                    self.blank();
                    let colon = self.expect(b':')?;
                    self.blank();
                    (Some(key), Some(colon))
                } else {
                    (None, None)
                };
                let value = self.value()?;
                self.blank();
                let comma = match self.s.get(self.pos) {
                    Some(b',') => Some(self.expect(b',')?),
                    Some(&c) if c == close => None,
                    _ => return Err(self.error()),
                };
                items.push(Item {
                    key,
                    start: item_start,
                    colon,
                    value,
                    comma,
                });
                if comma.is_none() {
                    self.pos += 1;
                    break;
                }
            }
        }
        self.depth -= 1;
        Ok(Node {
            kind,
            start,
            end: self.pos,
            spans_lines: self.text[start..self.pos].contains('\n'),
            items,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::settings::{AgentSettings, Installed, StatusLine};
    use crate::agents::Agent;
    use proptest::prelude::*;
    use serde_json::json;

    fn parse(text: &str) -> JsonText {
        JsonText::parse(text, true).unwrap()
    }

    #[test]
    fn a_member_is_added_as_its_neighbours_are_written() {
        let cases = [
            ("{}", "{\n  \"k\": [\n    1\n  ]\n}"),
            ("{}\n", "{\n  \"k\": [\n    1\n  ]\n}\n"),
            ("{\n\t\"a\": 1\n}", "{\n\t\"a\": 1,\n\t\"k\": [\n\t\t1\n\t]\n}"),
            (
                "{\r\n   \"a\": {\r\n      \"b\": 1\r\n   }\r\n}",
                "{\r\n   \"a\": {\r\n      \"b\": 1\r\n   },\r\n   \"k\": [\r\n      1\r\n   ]\r\n}",
            ),
            ("{\"a\":1}", "{\"a\":1,\"k\":[1]}"),
            ("{ \"a\": 1, \"b\": 2 }", "{ \"a\": 1, \"b\": 2, \"k\": [1] }"),
            (
                "{\n  \"a\": 1 // mine\n}",
                "{\n  \"a\": 1, // mine\n  \"k\": [\n    1\n  ]\n}",
            ),
            (
                "{\n  // nothing yet\n}",
                "{\n  // nothing yet\n  \"k\": [\n    1\n  ]\n}",
            ),
            ("", "{\n  \"k\": [\n    1\n  ]\n}\n"),
        ];
        for (before, after) in cases {
            let mut doc = parse(before);
            doc.set(&[], "k", &json!([1])).unwrap();
            assert_eq!(doc.text(), after, "{before:?}");
            if !before.is_empty() {
                doc.remove(&[Step::Key("k")]).unwrap();
                assert_eq!(doc.text(), before, "back from {after:?}");
            }
        }
    }

    #[test]
    fn elements_and_members_in_nested_places() {
        let text = "{\n  \"a\": [\n    1\n  ],\n  \"b\": [ 2 ],\n  \"c\": {\"d\": []}\n}\n";
        let mut doc = parse(text);
        doc.push(&[Step::Key("a")], &json!({ "x": 1 })).unwrap();
        doc.push(&[Step::Key("b")], &json!("y")).unwrap();
        doc.push(&[Step::Key("c"), Step::Key("d")], &json!(3))
            .unwrap();
        assert_eq!(
            doc.text(),
            "{\n  \"a\": [\n    1,\n    {\n      \"x\": 1\n    }\n  ],\n  \"b\": [ 2, \"y\" ],\n  \"c\": {\"d\": [3]}\n}\n"
        );
        doc.remove(&[Step::Key("c"), Step::Key("d"), Step::At(0)])
            .unwrap();
        doc.remove(&[Step::Key("b"), Step::At(1)]).unwrap();
        doc.remove(&[Step::Key("a"), Step::At(1)]).unwrap();
        assert_eq!(doc.text(), text);
    }

    #[test]
    fn removing_the_first_or_a_middle_item_keeps_its_neighbours_layout() {
        let mut doc = parse("{\n  \"x\": 1,\n  \"y\": 2,\n  \"z\": 3\n}");
        doc.remove(&[Step::Key("y")]).unwrap();
        assert_eq!(doc.text(), "{\n  \"x\": 1,\n  \"z\": 3\n}");
        doc.remove(&[Step::Key("x")]).unwrap();
        assert_eq!(doc.text(), "{\n  \"z\": 3\n}");
        let mut doc = parse("[1, 2, 3]");
        doc.remove(&[Step::At(0)]).unwrap();
        assert_eq!(doc.text(), "[2, 3]");
        // A comment beside an item stays.
        let mut doc = parse("{\n  \"x\": 1, // about x\n  \"y\": 2\n}");
        doc.remove(&[Step::Key("x")]).unwrap();
        assert_eq!(doc.text(), "{ // about x\n  \"y\": 2\n}");
    }

    #[test]
    fn a_duplicate_key_edits_the_occurrence_the_agent_reads() {
        let mut doc = parse("{\"a\": {\"x\": 1}, \"a\": {\"y\": 2}}");
        assert_eq!(doc.value(), &json!({ "a": { "y": 2 } }));
        doc.set(&[Step::Key("a")], "z", &json!(3)).unwrap();
        assert_eq!(
            doc.text(),
            "{\"a\": {\"x\": 1}, \"a\": {\"y\": 2, \"z\": 3}}"
        );
        doc.set(&[], "a", &json!(null)).unwrap();
        assert_eq!(doc.text(), "{\"a\": {\"x\": 1}, \"a\": null}");
    }

    #[test]
    fn comments_only_where_allowed_and_refused_when_unfinished() {
        assert!(JsonText::parse("{} // x", false).is_err());
        assert!(JsonText::parse("{} // x", true).is_ok());
        let err = JsonText::parse("{\n/* x }", true).unwrap_err();
        assert!(
            err.contains("line 2") && err.contains("never ends"),
            "{err}"
        );
        assert!(
            JsonText::parse("{\"a\": 1,}", true).is_err(),
            "no trailing comma"
        );
        let doc = parse("{\"u\": \"http://x/*y*/\" /* c */ }");
        assert_eq!(doc.value()["u"], "http://x/*y*/");
    }

    #[test]
    fn an_empty_container_written_across_lines_comes_back_closed() {
        // The one layout that cannot come back: it reads as `{}` opened.
        let mut doc = parse("{\n}\n");
        doc.set(&[], "k", &json!(1)).unwrap();
        assert_eq!(doc.text(), "{\n  \"k\": 1\n}\n");
        doc.remove(&[Step::Key("k")]).unwrap();
        assert_eq!(doc.text(), "{}\n");
    }

    /// A tiny generator of settings documents written in every way JSON
    /// allows (comments when `comments`), from a seed.
    struct Gen {
        state: u64,
        nl: &'static str,
        unit: &'static str,
        comments: bool,
    }

    enum V {
        Obj(Vec<(String, V)>),
        Arr(Vec<V>),
        Raw(String),
    }

    const STRINGS: [&str; 10] = [
        r#""plain""#,
        r#""caf\u00e9""#,
        r#""é""#,
        r#""a\"b\\c""#,
        r#""tab\tx\n""#,
        r#""\/""#,
        r#""🐢 \ud83d\udc22""#,
        r#""//not a comment""#,
        r#""/*nor this*/""#,
        r#""""#,
    ];
    const NUMBERS: [&str; 8] = [
        "0",
        "-0.0",
        "1e3",
        "1.50",
        "2E-7",
        "12345678901234567890123",
        "true",
        "null",
    ];
    const KEYS: [&str; 6] = ["model", "env", "é", "a\\\"b", "x\\u0041", "Notification"];

    impl Gen {
        fn next(&mut self) -> u64 {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.state
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len() as u64) as usize]
        }

        fn scalar(&mut self) -> V {
            let all: Vec<&str> = STRINGS.iter().chain(NUMBERS.iter()).copied().collect();
            V::Raw(self.pick(&all).to_string())
        }

        fn any(&mut self, depth: u32) -> V {
            match (depth, self.below(4)) {
                (0, _) | (_, 0 | 1) => self.scalar(),
                (_, 2) => V::Arr((0..self.below(3)).map(|_| self.any(depth - 1)).collect()),
                _ => V::Obj(
                    (0..self.below(3))
                        .map(|_| (self.pick(&KEYS).to_string(), self.any(depth - 1)))
                        .collect(),
                ),
            }
        }

        fn command(&mut self, command: &str) -> V {
            V::Obj(vec![
                ("type".into(), V::Raw(r#""command""#.into())),
                ("command".into(), V::Raw(format!("\"{command}\""))),
            ])
        }

        /// A settings document: the user's keys, hooks and servers (never
        /// ctxkeep's, never left empty where ctxkeep adds).
        fn settings(&mut self, settings: &AgentSettings) -> V {
            let mut root = Vec::new();
            for _ in 0..self.below(4) {
                root.push((self.pick(&KEYS).to_string(), self.any(2)));
            }
            if self.below(2) == 0 {
                let mut events = Vec::new();
                // Empty lists and objects too: the user's, which an uninstall must leave.
                for _ in 0..self.below(4) {
                    let names: Vec<&str> = settings
                        .events
                        .iter()
                        .map(|e| e.name)
                        .chain(["Notification"])
                        .collect();
                    let groups = (0..self.below(3))
                        .map(|_| {
                            let mut group = Vec::new();
                            if self.below(2) == 0 {
                                group.push(("matcher".into(), V::Raw(r#""Write""#.into())));
                            }
                            let entries =
                                (0..self.below(3)).map(|_| self.command("fmt.sh")).collect();
                            group.push(("hooks".into(), self.list(entries)));
                            V::Obj(group)
                        })
                        .collect();
                    events.push((self.pick(&names).to_string(), self.list(groups)));
                }
                root.push(("hooks".into(), self.object(events)));
            }
            if self.below(2) == 0 {
                let servers = (0..self.below(3))
                    .map(|n| {
                        (
                            format!("docs{n}"),
                            V::Obj(vec![("command".into(), V::Raw(r#""d""#.into()))]),
                        )
                    })
                    .collect();
                root.push((settings.mcp.key.into(), self.object(servers)));
            }
            if settings.status_line && self.below(3) == 0 {
                root.push(("statusLine".into(), self.command("~/line.sh")));
            }
            let n = root.len() as u64;
            if n > 1 {
                // Shuffle a little: ctxkeep's keys need not come last.
                let a = self.below(n) as usize;
                let b = self.below(n) as usize;
                root.swap(a, b);
            }
            let present: Vec<String> = root
                .iter()
                .map(|(k, _)| k.clone())
                .filter(|k| ["hooks", settings.mcp.key, "statusLine"].contains(&k.as_str()))
                .collect();
            if !present.is_empty() && self.below(3) == 0 {
                // A duplicate the agent does not read (the last one wins).
                let key = self
                    .pick(&present.iter().map(String::as_str).collect::<Vec<_>>())
                    .to_string();
                root.insert(0, (key, V::Raw("1".into())));
            }
            V::Obj(root)
        }

        fn comment(&mut self, line: bool) -> String {
            match (line, self.below(3)) {
                (true, 0) => " // a note".into(),
                (_, 1) => " /* a \"note\" */".into(),
                (_, 2) => format!(" /* two{}lines */", self.nl),
                _ => String::new(),
            }
        }

        /// A list ctxkeep adds into: when empty, `[]` or `[ ]` (the module's note: one written
        /// across lines comes back as `[]`, so it is not generated).
        fn list(&mut self, items: Vec<V>) -> V {
            match items.is_empty() {
                true => V::Raw(self.pick(&["[]", "[ ]"]).into()),
                false => V::Arr(items),
            }
        }

        /// As [`Gen::list`], for an object.
        fn object(&mut self, members: Vec<(String, V)>) -> V {
            match members.is_empty() {
                true => V::Raw(self.pick(&["{}", "{ }"]).into()),
                false => V::Obj(members),
            }
        }

        fn print(&mut self, v: &V, level: usize, root: bool, out: &mut String) {
            let (open, close, items): (char, char, Vec<(Option<&String>, &V)>) = match v {
                V::Raw(s) => return out.push_str(s),
                V::Obj(m) => ('{', '}', m.iter().map(|(k, v)| (Some(k), v)).collect()),
                V::Arr(a) => ('[', ']', a.iter().map(|v| (None, v)).collect()),
            };
            let indent = self.unit.repeat(level);
            let inner = self.unit.repeat(level + 1);
            let c = self.comments;
            out.push(open);
            if items.is_empty() {
                match self.below(4) {
                    0 => out.push(' '),
                    1 if c => out.push_str(&self.comment(false)),
                    2 if c => {
                        let note = format!("{}{inner}// empty{}{indent}", self.nl, self.nl);
                        out.push_str(&note)
                    }
                    3 if !root => out.push_str(&format!("{}{indent}", self.nl)),
                    _ => {}
                }
                out.push(close);
                return;
            }
            let multiline = self.below(3) != 0;
            for (n, (key, value)) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                    if multiline && c {
                        let note = self.comment(true);
                        out.push_str(&note);
                    }
                }
                if multiline {
                    out.push_str(self.nl);
                    if c && self.below(5) == 0 {
                        out.push_str(&format!("{inner}// above{}", self.nl));
                    }
                    out.push_str(&inner);
                } else if n > 0 || self.below(2) == 0 {
                    out.push(' ');
                }
                if let Some(k) = key {
                    let colon = self.pick(&[":", ": ", " : ", ":  "]);
                    out.push_str(&format!("\"{k}\"{colon}"));
                }
                self.print(value, level + 1, false, out);
            }
            if multiline {
                if c {
                    let note = self.comment(true);
                    out.push_str(&note);
                }
                out.push_str(self.nl);
                out.push_str(&indent);
            } else if c {
                let note = self.comment(false);
                out.push_str(&note);
            }
            out.push(close);
        }

        fn document(seed: u64, settings: &AgentSettings, comments: bool) -> String {
            let mut g = Gen {
                state: seed | 1,
                nl: "\n",
                unit: "  ",
                comments,
            };
            g.nl = g.pick(&["\n", "\r\n"]);
            g.unit = g.pick(&["  ", "    ", "\t", "   "]);
            let doc = g.settings(settings);
            let mut out = String::new();
            if comments && g.below(3) == 0 {
                out.push_str(&format!("// settings{}", g.nl));
            }
            if g.below(4) == 0 {
                out.push_str(g.nl);
            }
            g.print(&doc, 0, true, &mut out);
            match g.below(3) {
                0 => {}
                1 => out.push_str(g.nl),
                _ => out.push_str(&format!("  {}", g.nl)),
            }
            out
        }
    }

    fn all_ours(found: &Installed, status_line: bool) -> bool {
        found.hooks.iter().all(|(_, c)| c.is_some())
            && (!status_line || found.status_line != StatusLine::None)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Whatever the layout, `install` only inserts, and `uninstall`
        /// gives back the bytes it started from.
        #[test]
        fn install_then_uninstall_is_the_identity(seed in any::<u64>()) {
            for agent in Agent::ALL {
                let settings = agent.settings();
                let comments = settings.comments_allowed;
                let original = Gen::document(seed, settings, comments);
                let mut doc = JsonText::parse(&original, comments)
                    .map_err(|e| TestCaseError::fail(format!("{e}:\n{original}")))?;
                let before = doc.value().clone();
                // What `hooks install` notes and `hooks uninstall` reads back (kept.rs).
                let noted = crate::install::kept::Kept::of(&doc);
                settings.install(&mut doc, false).map_err(TestCaseError::fail)?;
                settings.mcp.register_json(&mut doc).map_err(TestCaseError::fail)?;
                let installed = doc.text().to_string();
                let mut rest = installed.bytes();
                prop_assert!(original.bytes().all(|b| rest.any(|c| c == b)), "{}\n---\n{}", original, installed);
                prop_assert!(all_ours(&settings.installed(doc.value()), settings.status_line));
                prop_assert!(settings.mcp.registered_json(doc.value()).is_some());
                if let Some(n) = noted {
                    doc.keep_empty(n.empty);
                }
                settings.uninstall(&mut doc).map_err(TestCaseError::fail)?;
                settings.mcp.unregister_json(&mut doc).map_err(TestCaseError::fail)?;
                prop_assert_eq!(doc.text(), original.as_str(), "installed:\n{}", installed);
                prop_assert_eq!(doc.value(), &before);
            }
        }
    }
}
