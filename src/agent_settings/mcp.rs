//! ctxkeep's MCP server (`ctxkeep mcp`) in the file where each agent reads a
//! project's MCP servers: Claude Code's `.mcp.json` and Gemini CLI's
//! `.gemini/settings.json` (`mcpServers`, JSON), Codex's
//! `.codex/config.toml` (`[mcp_servers.ctxkeep]`, TOML, read in a trusted
//! project). Pure functions over the parsed document or the TOML text; the
//! entry is ctxkeep's when it is named `ctxkeep` and runs `ctxkeep mcp`
//! (any path to the binary, any extra arguments).

use serde_json::{json, Map, Value};

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

    /// Adds ctxkeep's entry to a JSON document when it is missing. An entry
    /// named `ctxkeep` that runs something else is the user's: refused.
    pub fn register_json(&self, doc: &mut Value) -> Result<Vec<Change>, String> {
        let root = doc
            .as_object_mut()
            .ok_or("the settings are not a JSON object")?;
        let servers = root
            .entry(self.key)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| format!("`{}` is not an object", self.key))?;
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
        servers.insert(
            SERVER.into(),
            json!({ "command": "ctxkeep", "args": ["mcp"] }),
        );
        Ok(vec![self.change("added", COMMAND.into())])
    }

    /// Removes ctxkeep's entry (and the servers' key, when that leaves it
    /// empty); nothing else.
    pub fn unregister_json(&self, doc: &mut Value) -> Result<Vec<Change>, String> {
        let Some(command) = self.registered_json(doc) else {
            return Ok(Vec::new());
        };
        let root = doc
            .as_object_mut()
            .ok_or("the settings are not a JSON object")?;
        if let Some(servers) = root.get_mut(self.key).and_then(Value::as_object_mut) {
            servers.remove(SERVER);
            if servers.is_empty() {
                root.remove(self.key);
            }
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
    /// missing; everything else is kept byte for byte.
    pub fn register_toml(&self, text: &str) -> Result<(String, Vec<Change>), String> {
        if self.registered_toml(text)?.is_some() {
            return Ok((text.to_string(), Vec::new()));
        }
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.trim().is_empty() {
            out.push('\n');
        }
        out.push_str(&format!(
            "[{}.{SERVER}]\ncommand = \"ctxkeep\"\nargs = [\"mcp\"]\n",
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

    /// The TOML text without ctxkeep's table (`[key.ctxkeep]` up to the next
    /// table); an entry written another way is left, with nothing changed.
    pub fn unregister_toml(&self, text: &str) -> Result<(String, Vec<Change>), String> {
        let Some(command) = self.registered_toml(text)? else {
            return Ok((text.to_string(), Vec::new()));
        };
        let header = format!("[{}.{SERVER}]", self.key);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let Some(start) = lines.iter().position(|l| l.trim() == header) else {
            return Ok((text.to_string(), Vec::new()));
        };
        let end = lines[start + 1..]
            .iter()
            .position(|l| l.trim_start().starts_with('['))
            .map_or(lines.len(), |i| start + 1 + i);
        let mut kept: Vec<&str> = lines[..start].to_vec();
        // The blank line `register_toml` put before the table goes too.
        if end == lines.len() && kept.last().is_some_and(|l| l.trim().is_empty()) {
            kept.pop();
        }
        kept.extend(&lines[end..]);
        let out = kept.concat();
        if toml::from_str::<toml::Table>(&out).is_err() {
            return Ok((text.to_string(), Vec::new()));
        }
        Ok((out, vec![self.change("removed", command)]))
    }
}

/// An entry's command and arguments as one line.
fn command_line(entry: &Value) -> Option<String> {
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
        let original = json!({ "mcpServers": { "docs": { "command": "docs-mcp" } }, "x": 1 });
        let mut doc = original.clone();
        assert_eq!(JSON.register_json(&mut doc).unwrap().len(), 1);
        assert_eq!(doc["mcpServers"]["ctxkeep"]["args"], json!(["mcp"]));
        assert!(JSON.register_json(&mut doc).unwrap().is_empty());
        assert_eq!(JSON.registered_json(&doc).as_deref(), Some("ctxkeep mcp"));
        assert_eq!(JSON.unregister_json(&mut doc).unwrap().len(), 1);
        assert_eq!(doc, original);
        let mut empty = json!({});
        JSON.register_json(&mut empty).unwrap();
        JSON.unregister_json(&mut empty).unwrap();
        assert_eq!(empty, json!({}));
    }

    #[test]
    fn a_users_entry_of_the_same_name_is_neither_replaced_nor_removed() {
        let mut doc = json!({ "mcpServers": { "ctxkeep": { "command": "other" } } });
        assert!(JSON.register_json(&mut doc).is_err());
        assert!(JSON.unregister_json(&mut doc).unwrap().is_empty());
        assert!(JSON
            .register_json(&mut json!({ "mcpServers": [] }))
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
}
