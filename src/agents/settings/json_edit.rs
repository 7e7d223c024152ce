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

mod layout;
mod spans;

pub use layout::newline_of;
use layout::*;
use spans::*;

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
        crate::system::sorting::sort_by_key(&mut edits, |(n, e)| std::cmp::Reverse((e.start, *n)));
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

#[cfg(test)]
mod tests;
