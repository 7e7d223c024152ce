//! Where each value, key and comma of a JSON text is: a small parser run on text serde_json has
//! already accepted (comments blanked first), which records spans and refuses anything else.

use super::Step;

/// The text with every comment's bytes turned into spaces (line breaks
/// kept), so offsets and line numbers stay those of the file. Refuses an
/// unterminated block comment.
pub(super) fn blank_comments(text: &str) -> Result<String, String> {
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
pub(super) enum Kind {
    Object,
    Array,
    Scalar,
}

/// Where a value is: `start..end` covers it from its first byte (`{`, `[`,
/// `"` or the scalar) to just past its last.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
    /// A line break lies between its first and last byte.
    pub(super) spans_lines: bool,
    pub(super) items: Vec<Item>,
}

/// A member of an object (with its key) or an element of a list.
#[derive(Debug)]
pub(super) struct Item {
    pub(super) key: Option<String>,
    /// The key's opening quote, or the element's first byte.
    pub(super) start: usize,
    pub(super) colon: Option<usize>,
    pub(super) value: Node,
    /// The comma after the value.
    pub(super) comma: Option<usize>,
}

/// The node at `path` and whether its container spans several lines (None
/// for the document itself).
pub(super) fn find<'n>(
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

pub(super) fn index_in(node: &Node, step: Step) -> Option<usize> {
    match (node.kind, step) {
        (Kind::Object, Step::Key(k)) => {
            node.items.iter().rposition(|i| i.key.as_deref() == Some(k))
        }
        (Kind::Array, Step::At(n)) if n < node.items.len() => Some(n),
        _ => None,
    }
}

pub(super) fn show(path: &[Step]) -> String {
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
pub(super) struct Parser<'a> {
    pub(super) s: &'a [u8],
    pub(super) text: &'a str,
    pub(super) pos: usize,
    pub(super) depth: usize,
}

const MAX_DEPTH: usize = 256;

impl Parser<'_> {
    pub(super) fn document(mut self) -> Result<Node, String> {
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
