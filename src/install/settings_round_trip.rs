//! `hooks install` then `hooks uninstall` on settings files written in every way JSON allows:
//! each agent's hooks and MCP entry go in and out through the JSON text editor, with what the
//! install notes as kept, and the bytes come back.

use proptest::prelude::*;

use crate::agents::settings::json_edit::JsonText;
use crate::agents::settings::{AgentSettings, Installed, StatusLine};
use crate::agents::Agent;

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
                        let entries = (0..self.below(3)).map(|_| self.command("fmt.sh")).collect();
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
            let noted = super::kept::Kept::of(&doc);
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
