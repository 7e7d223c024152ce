//! ctxkeep's MCP server (`ctxkeep mcp`) in the file where each agent reads a
//! project's MCP servers: Claude Code's `.mcp.json` and Gemini CLI's
//! `.gemini/settings.json` (`mcpServers`, JSON), Codex's
//! `.codex/config.toml` (`[mcp_servers.ctxkeep]`, TOML, read in a trusted
//! project). Pure functions over the file's text, edited in place (only
//! ctxkeep's entry goes in or out); the entry is ctxkeep's when it is named
//! `ctxkeep` and runs `ctxkeep mcp` (any path to the binary, any extra
//! arguments).

use serde_json::{json, Map, Value};

use super::json_edit::{newline_of, JsonText, Step};
use super::Change;

/// The server's name in every agent's configuration; Claude Code names its
/// tools `mcp__ctxkeep__<tool>`.
pub const SERVER: &str = "ctxkeep";
/// What the entry runs, as the `+`/`-` lines show it.
pub const COMMAND: &str = "ctxkeep mcp";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A JSON object with the servers under `key`.
    Json,
    /// A TOML document with the servers as `[key.<name>]` tables.
    Toml,
    /// A JSON object with the servers under `key`, each a local server whose
    /// `command` is a list of words (`{"type": "local", "command": [...]}`).
    JsonLocal,
}

/// Where one agent reads a project's MCP servers.
#[derive(Debug, Clone, Copy)]
pub struct McpSettings {
    /// The folder beside `project-state.md` that holds the file (None: the
    /// project root itself).
    pub dir: Option<&'static str>,
    pub file: &'static str,
    pub format: Format,
    /// The key that maps a server's name to its entry.
    pub key: &'static str,
}

impl McpSettings {
    /// The usual place: JSON, servers under `mcpServers`, in `file` (in `dir`, else at the
    /// project root).
    pub const fn json(dir: Option<&'static str>, file: &'static str) -> McpSettings {
        McpSettings {
            dir,
            file,
            format: Format::Json,
            key: "mcpServers",
        }
    }

    /// The file, relative to the project root.
    pub fn relative_path(&self) -> std::path::PathBuf {
        match self.dir {
            Some(d) => std::path::Path::new(d).join(self.file),
            None => self.file.into(),
        }
    }

    fn change(&self, op: &'static str, command: String) -> Change {
        Change {
            op,
            key: format!("{}.{SERVER}", self.key),
            command,
        }
    }

    /// ctxkeep's entry in a JSON document: its command line, when there.
    pub fn registered_json(&self, doc: &Value) -> Option<String> {
        let entry = doc.get(self.key)?.get(SERVER)?;
        command_line(entry).filter(|c| is_ours(c))
    }

    /// Adds ctxkeep's entry to a JSON document's text when it is missing,
    /// leaving every other byte as it is. An entry named `ctxkeep` that runs
    /// something else is the user's: refused.
    pub fn register_json(&self, doc: &mut JsonText) -> Result<Vec<Change>, String> {
        let root = doc
            .value()
            .as_object()
            .ok_or("the settings are not a JSON object")?;
        let entry = match self.format {
            Format::JsonLocal => {
                json!({ "type": "local", "command": ["ctxkeep", "mcp"], "enabled": true })
            }
            _ => json!({ "command": "ctxkeep", "args": ["mcp"] }),
        };
        match root.get(self.key) {
            None => {
                let mut servers = Map::new();
                servers.insert(SERVER.into(), entry);
                doc.set(&[], self.key, &Value::Object(servers))?;
            }
            Some(Value::Object(servers)) => {
                if let Some(entry) = servers.get(SERVER) {
                    return match command_line(entry) {
                        Some(c) if is_ours(&c) => Ok(Vec::new()),
                        other => Err(format!(
                            "`{}.{SERVER}` is already there and runs {}; rename or remove it, or pass --no-mcp",
                            self.key,
                            other.unwrap_or_else(|| "no command".into())
                        )),
                    };
                }
                doc.set(&[Step::Key(self.key)], SERVER, &entry)?;
            }
            Some(_) => return Err(format!("`{}` is not an object", self.key)),
        }
        Ok(vec![self.change("added", COMMAND.into())])
    }

    /// Removes ctxkeep's entry (and the servers' key, when that leaves it
    /// empty); nothing else, not a byte.
    pub fn unregister_json(&self, doc: &mut JsonText) -> Result<Vec<Change>, String> {
        let Some(command) = self.registered_json(doc.value()) else {
            return Ok(Vec::new());
        };
        doc.remove(&[Step::Key(self.key), Step::Key(SERVER)])?;
        let emptied = doc.value()[self.key].as_object().is_some_and(Map::is_empty);
        if emptied && !doc.kept(&[Step::Key(self.key)]) {
            doc.remove(&[Step::Key(self.key)])?;
        }
        Ok(vec![self.change("removed", command)])
    }

    /// ctxkeep's entry in a TOML text: its command line, when there.
    pub fn registered_toml(&self, text: &str) -> Result<Option<String>, String> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| format!("not valid TOML ({e})"))?;
        let entry = doc.get(self.key).and_then(|s| s.get(SERVER));
        Ok(entry
            .and_then(|e| serde_json::to_value(e).ok())
            .and_then(|e| command_line(&e))
            .filter(|c| is_ours(c)))
    }

    /// The TOML text with ctxkeep's table added at the end, when it is
    /// missing; everything else is kept byte for byte. A blank line comes
    /// before the table, unless the text did not end its last line (then
    /// the line is ended), so [`McpSettings::unregister_toml`] can give the
    /// same bytes back.
    pub fn register_toml(&self, text: &str) -> Result<(String, Vec<Change>), String> {
        if self.registered_toml(text)?.is_some() {
            return Ok((text.to_string(), Vec::new()));
        }
        let nl = newline_of(text);
        let mut out = text.to_string();
        if !out.is_empty() {
            out.push_str(nl);
        }
        out.push_str(&format!(
            "[{}.{SERVER}]{nl}command = \"ctxkeep\"{nl}args = [\"mcp\"]{nl}",
            self.key
        ));
        // An entry of another shape named ctxkeep, or the servers written as
        // an inline table, would make the new table a duplicate.
        if let Err(e) = toml::from_str::<toml::Table>(&out) {
            return Err(format!(
                "`{}.{SERVER}` cannot be added as a table here ({}); add it by hand, or pass --no-mcp",
                self.key,
                e.message()
            ));
        }
        Ok((out, vec![self.change("added", COMMAND.into())]))
    }

    /// The TOML text without ctxkeep's table: its header and its keys (and
    /// comments between them). Comments and blank lines after its last key
    /// belong to what follows and stay, as does a comment above it. The
    /// result must read as the same document less ctxkeep's entry; an entry
    /// written another way is left, with nothing changed.
    pub fn unregister_toml(&self, text: &str) -> Result<(String, Vec<Change>), String> {
        let Some(command) = self.registered_toml(text)? else {
            return Ok((text.to_string(), Vec::new()));
        };
        let unchanged = || Ok((text.to_string(), Vec::new()));
        let Some(table) = self.table_span(text) else {
            return unchanged();
        };
        // Whole lines: from the header's to the one the last value ends on.
        let start = text[..table.start].rfind('\n').map_or(0, |i| i + 1);
        let end = text[table.end..]
            .find('\n')
            .map_or(text.len(), |i| table.end + i + 1);
        let blank = |l: &str| l.trim().is_empty();
        let out = if blank(&text[end..]) {
            // Last in the file: the line break `register_toml` put before
            // the table goes too.
            let before = &text[..start];
            match before.strip_suffix('\n') {
                Some(b) => b.strip_suffix('\r').unwrap_or(b).to_string(),
                None => before.to_string(),
            }
        } else {
            let mut after = &text[end..];
            while let Some(line) = after.split_inclusive('\n').next().filter(|l| blank(l)) {
                after = &after[line.len()..];
            }
            format!("{}{after}", &text[..start])
        };
        // The document less ctxkeep's entry (an emptied servers table read
        // as none); the new text must hold exactly that.
        let without_ours = |t: &str, take_out: bool| -> Option<toml::Table> {
            let mut doc: toml::Table = toml::from_str(t).ok()?;
            if let Some(servers) = doc.get_mut(self.key).and_then(toml::Value::as_table_mut) {
                if take_out {
                    servers.remove(SERVER);
                }
                if servers.is_empty() {
                    doc.remove(self.key);
                }
            }
            Some(doc)
        };
        match (without_ours(text, true), without_ours(&out, false)) {
            (Some(want), Some(got)) if want == got => {
                Ok((out, vec![self.change("removed", command)]))
            }
            _ => unchanged(),
        }
    }

    /// Where ctxkeep's table is in `text`, as toml_edit parses it: from its header's `[` to the
    /// end of its last value (a value's span leaves out a comment after it). None when the
    /// entry is not a `[key.ctxkeep]` table (an inline table, dotted keys elsewhere) or has a
    /// sub-table of its own (`[key.ctxkeep.env]`): taking that apart is left to the user.
    fn table_span(&self, text: &str) -> Option<std::ops::Range<usize>> {
        /// The end of the last value written under the header (dotted keys included).
        fn last_value_end(table: &toml_edit::Table, mut end: usize) -> Option<usize> {
            for (_, item) in table.iter() {
                end = match item {
                    toml_edit::Item::Value(v) => end.max(v.span()?.end),
                    toml_edit::Item::Table(t) if t.is_dotted() => last_value_end(t, end)?,
                    _ => return None,
                };
            }
            Some(end)
        }
        let doc = toml_edit::Document::parse(text).ok()?;
        let entry = doc.as_table().get(self.key)?.as_table()?.get(SERVER)?;
        let entry = entry
            .as_table()
            .filter(|t| !t.is_implicit() && !t.is_dotted())?;
        let header = entry.span()?;
        Some(header.start..last_value_end(entry, header.end)?)
    }
}

/// An entry's command and arguments as one line.
fn command_line(entry: &Value) -> Option<String> {
    if let Some(words) = entry.get("command").and_then(Value::as_array) {
        let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
        return (!words.is_empty()).then(|| words.join(" "));
    }
    let command = entry.get("command")?.as_str()?;
    let args = entry
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    Some(
        std::iter::once(command)
            .chain(args)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Whether a command line runs `ctxkeep mcp`.
fn is_ours(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    (name == "ctxkeep" || name == "ctxkeep.exe") && words.next() == Some("mcp")
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: McpSettings = McpSettings {
        dir: None,
        file: ".mcp.json",
        format: Format::Json,
        key: "mcpServers",
    };
    const TOML: McpSettings = McpSettings {
        dir: Some(".codex"),
        file: "config.toml",
        format: Format::Toml,
        key: "mcp_servers",
    };

    #[test]
    fn json_registration_keeps_other_servers_and_is_undone_exactly() {
        let original = "{ \"mcpServers\": { \"docs\": { \"command\": \"docs-mcp\" } }, \"x\": 1 }";
        let mut doc = JsonText::parse(original, false).unwrap();
        assert_eq!(JSON.register_json(&mut doc).unwrap().len(), 1);
        assert_eq!(doc.value()["mcpServers"]["ctxkeep"]["args"], json!(["mcp"]));
        assert!(JSON.register_json(&mut doc).unwrap().is_empty());
        assert_eq!(
            JSON.registered_json(doc.value()).as_deref(),
            Some("ctxkeep mcp")
        );
        assert_eq!(JSON.unregister_json(&mut doc).unwrap().len(), 1);
        assert_eq!(doc.text(), original);
        let mut empty = JsonText::parse("{}", false).unwrap();
        JSON.register_json(&mut empty).unwrap();
        JSON.unregister_json(&mut empty).unwrap();
        assert_eq!(empty.text(), "{}");
    }

    #[test]
    fn a_users_entry_of_the_same_name_is_neither_replaced_nor_removed() {
        let doc = |t: &str| JsonText::parse(t, false).unwrap();
        let mut theirs = doc(r#"{ "mcpServers": { "ctxkeep": { "command": "other" } } }"#);
        assert!(JSON.register_json(&mut theirs).is_err());
        assert!(JSON.unregister_json(&mut theirs).unwrap().is_empty());
        assert!(JSON
            .register_json(&mut doc(r#"{ "mcpServers": [] }"#))
            .is_err());
    }

    #[test]
    fn toml_registration_appends_a_table_and_takes_only_it_away() {
        let original = "# mine\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n";
        let (added, changes) = TOML.register_toml(original).unwrap();
        assert_eq!(changes.len(), 1);
        assert!(added.starts_with(original));
        assert!(added.ends_with("[mcp_servers.ctxkeep]\ncommand = \"ctxkeep\"\nargs = [\"mcp\"]\n"));
        assert!(TOML.register_toml(&added).unwrap().1.is_empty());
        let (removed, changes) = TOML.unregister_toml(&added).unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(removed, original);
        let (fresh, _) = TOML.register_toml("").unwrap();
        assert_eq!(TOML.unregister_toml(&fresh).unwrap().0, "");
    }

    #[test]
    fn toml_that_cannot_take_the_table_is_refused() {
        assert!(TOML
            .register_toml("mcp_servers = { docs = { command = \"d\" } }\n")
            .is_err());
        assert!(TOML.register_toml("not toml [").is_err());
    }

    #[test]
    fn toml_comments_outside_ctxkeeps_table_stay() {
        let installed = "a = 1\n\n# ours, by hand\n[mcp_servers.ctxkeep] # the server\ncommand = \"ctxkeep\"\n# inside\nargs = [\n  \"mcp\",\n] # inside too\n\n\n# about the next\n[next]\nb = 2\n";
        let (removed, changes) = TOML.unregister_toml(installed).unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(
            removed,
            "a = 1\n\n# ours, by hand\n# about the next\n[next]\nb = 2\n"
        );
        // A comment after ctxkeep's keys at the end of the file stays too.
        let (removed, _) = TOML
            .unregister_toml(
                "[mcp_servers.ctxkeep]\ncommand = \"ctxkeep\"\nargs = [\"mcp\"]\n# the end\n",
            )
            .unwrap();
        assert_eq!(removed, "# the end\n");
    }

    #[test]
    fn toml_entries_written_another_way_are_left_alone() {
        for text in [
            // A sub-table of ctxkeep's elsewhere: taking the table out
            // would leave that behind.
            "[mcp_servers.ctxkeep]\ncommand = \"ctxkeep\"\nargs = [\"mcp\"]\n[mcp_servers.ctxkeep.env]\nA = \"1\"\n",
            "[mcp_servers]\nctxkeep = { command = \"ctxkeep\", args = [\"mcp\"] }\n",
            // Dotted keys outside the table.
            "[mcp_servers]\nctxkeep.command = \"ctxkeep\"\nctxkeep.args = [\"mcp\"]\n",
        ] {
            let (out, changes) = TOML.unregister_toml(text).unwrap();
            assert_eq!(out, text);
            assert!(changes.is_empty(), "{text}");
        }
    }

    /// The table is found by parsing (toml_edit's spans), not by lines that look like headers:
    /// a value over several lines, one of them starting with `[`, goes out whole.
    #[test]
    fn toml_values_over_lines_that_look_like_headers_go_out_whole() {
        let text = "a = 1\n\n[mcp_servers.ctxkeep]\ncommand = \"ctxkeep\"\nargs = [\n[\"x\"],\n\"mcp\",\n]\ns = \"\"\"\n[not.a.header]\n\"\"\"\nenv.A = \"1\"\n\n[next]\nb = 2\n";
        let (out, changes) = TOML.unregister_toml(text).unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(out, "a = 1\n\n[next]\nb = 2\n");
    }

    /// A user's config.toml as people write them: comments above and inside tables, other
    /// servers and tables, ctxkeep's entry already there (written by hand, with a comment of its
    /// own), CRLF line breaks. Install changes nothing; uninstall takes out ctxkeep's table and
    /// nothing else; install and uninstall again give those bytes back.
    #[test]
    fn a_users_config_toml_keeps_every_other_byte_through_install_and_uninstall() {
        for nl in ["\n", "\r\n"] {
            let lines = |ls: &[&str]| ls.iter().map(|l| format!("{l}{nl}")).collect::<String>();
            let head = lines(&[
                "# Codex settings for this project",
                "model = \"o4-mini\"  # the fast one",
                "",
                "# servers we use",
                "[mcp_servers.docs]",
                "# the docs server, local",
                "command = \"docs-mcp\"",
                "args = [",
                "  \"--port\", # why: the default clashes",
                "  \"7000\",",
                "]",
                "",
                "# ctxkeep, added by hand",
            ]);
            let ours = lines(&[
                "[mcp_servers.ctxkeep]   # keeps the state file",
                "command = \"/usr/local/bin/ctxkeep\"",
                "# no flags",
                "args = [\"mcp\"]",
                "",
            ]);
            let tail = lines(&[
                "# profiles below",
                "[profiles.fast]",
                "model = 'o4-mini' # literal string",
                "",
                "[[hooks]]",
                "name = \"lint\"",
            ]);
            let original = format!("{head}{ours}{tail}");
            let (same, changes) = TOML.register_toml(&original).unwrap();
            assert!(changes.is_empty());
            assert_eq!(same, original);
            let (removed, changes) = TOML.unregister_toml(&original).unwrap();
            assert_eq!(changes.len(), 1);
            assert_eq!(changes[0].command, "/usr/local/bin/ctxkeep mcp");
            assert_eq!(removed, format!("{head}{tail}"));
            let (added, changes) = TOML.register_toml(&removed).unwrap();
            assert_eq!(changes.len(), 1);
            assert_eq!(
                added,
                format!("{removed}{nl}[mcp_servers.ctxkeep]{nl}command = \"ctxkeep\"{nl}args = [\"mcp\"]{nl}")
            );
            assert_eq!(TOML.unregister_toml(&added).unwrap().0, removed);
        }
    }

    /// A TOML document from a seed: comments, keys, tables, blank lines,
    /// either line break, with or without a final one.
    fn toml_document(mut seed: u64) -> String {
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let nl = if next(2) == 0 { "\n" } else { "\r\n" };
        let mut out = String::new();
        for i in 0..next(12) {
            let line = match next(7) {
                0 => "# a comment".to_string(),
                1 => String::new(),
                2 => format!("[table{i}]"),
                3 => format!("[mcp_servers.docs{i}] # theirs\ncommand = \"d\""),
                4 => format!("key{i} = \"caf\\u00e9\" # why"),
                5 => format!("list{i} = [\n  1, # one\n  2,\n]"),
                _ => format!("n{i} = 1e3"),
            };
            out.push_str(&line.replace('\n', nl));
            out.push_str(nl);
        }
        if next(3) == 0 {
            out.truncate(out.trim_end().len());
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn toml_install_then_uninstall_is_the_identity(seed in proptest::prelude::any::<u64>()) {
            let original = toml_document(seed | 1);
            let (added, changes) = TOML.register_toml(&original).unwrap();
            proptest::prop_assert_eq!(changes.len(), 1);
            proptest::prop_assert!(added.starts_with(&original));
            let (removed, changes) = TOML.unregister_toml(&added).unwrap();
            proptest::prop_assert_eq!(changes.len(), 1);
            proptest::prop_assert_eq!(removed, original);
        }
    }
}
