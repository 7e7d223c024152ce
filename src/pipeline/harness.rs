//! The in-process harness for the hook pipeline (built as starship's `ModuleRenderer` is): a
//! temporary project with an initialized state file, a transcript the test grows, a payload
//! built field by field; one event run in-process through the same code as `ctxkeep hook`
//! (the agent's payload parser, [`Hook`], the [`reply`] renderer), returning what the hook
//! would print and which files the event wrote. Handler tests assert what the agent and the
//! user see: the reply's text, the event log, the session record, the checkpoints written.
//!
//! The harness names no agent: a test hands in the agent and the transcript lines in its
//! format.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::agents::payload::Action;
use crate::agents::Agent;
use crate::domain::checkpoint::Fields;
use crate::domain::workspace::Workspace;
use crate::pipeline::hook::{reply, Hook};
use crate::system::output::Output;

use crate::handoff::test_project::INITIALIZED;

/// A temporary project with ctxkeep initialized in it.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// A project with the default settings.
    pub fn new() -> Project {
        Project::with_settings("")
    }

    /// A project whose front matter carries `settings` too (YAML lines, e.g.
    /// `"compaction:\n  default: 150000\n"`).
    pub fn with_settings(settings: &str) -> Project {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let text = INITIALIZED.replacen("---\n# Project", &format!("{settings}---\n# Project"), 1);
        std::fs::write(dir.path().join("project-state.md"), text).expect("the state file");
        Project { dir }
    }

    /// The project's folder.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The project's workspace, as `hook` resolves it.
    pub fn workspace(&self) -> Workspace {
        Workspace::in_dir(self.root())
    }

    /// Writes a checkpoint by hand (`ctxkeep checkpoint --next NEXT`); returns its id.
    pub fn checkpoint(&self, next: &str) -> String {
        let request = crate::pipeline::record::Request {
            fields: Fields {
                phase: Some("build".into()),
                active_task: Some("the lexer".into()),
                controlling_agent: Some("a person".into()),
                next_action: Some(next.into()),
                ..Fields::default()
            },
            trigger: "manual",
            session: crate::domain::session::DEFAULT_SESSION,
            transcript: None,
        };
        crate::pipeline::record::by_hand(&self.workspace(), request, &Output::SILENT)
            .expect("a checkpoint by hand")
            .id
    }

    /// The transcript the events name (it exists once a line is appended).
    pub fn transcript(&self) -> PathBuf {
        self.root().join("transcript.jsonl")
    }

    /// Appends `lines` (one JSON value each, in the agent's format) to the transcript.
    pub fn append(&self, lines: &[Value]) {
        let mut text = std::fs::read_to_string(self.transcript()).unwrap_or_default();
        for line in lines {
            text.push_str(&line.to_string());
            text.push('\n');
        }
        std::fs::write(self.transcript(), text).expect("the transcript");
    }

    /// Writes `content` to `rel` in the project.
    pub fn write(&self, rel: &str, content: &str) {
        let path = self.root().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("a folder");
        }
        std::fs::write(path, content).expect("a file");
    }

    /// The text of `rel` in the project ("" when there is none).
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap_or_default()
    }

    /// The lines of the event log of kind `kind`, oldest first.
    pub fn logged(&self, kind: &str) -> Vec<Value> {
        self.read(".ctxkeep/events.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["event"] == kind)
            .collect()
    }

    /// Session `id`'s record, when it has one.
    pub fn session(&self, id: &str) -> Option<Value> {
        serde_json::from_str(&self.read(&format!(".ctxkeep/sessions/{id}.json"))).ok()
    }

    /// The checkpoint archived as `id`.
    pub fn archived(&self, id: &str) -> Option<Value> {
        serde_json::from_str(&self.read(&format!(".ctxkeep/checkpoints/{id}.json"))).ok()
    }

    /// An event of `agent` named `name`, in session `s1`, naming the transcript and the
    /// project as its working folder.
    pub fn event(&self, agent: Agent, name: &str) -> Event<'_> {
        let mut payload = Map::new();
        payload.insert("session_id".into(), json!("s1"));
        payload.insert("transcript_path".into(), json!(self.transcript()));
        payload.insert("cwd".into(), json!(self.root()));
        payload.insert("hook_event_name".into(), json!(name));
        Event {
            project: self,
            agent,
            payload,
        }
    }

    /// Every file under the project but the lock, with its bytes.
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut all = BTreeMap::new();
        let mut dirs = vec![self.root().to_path_buf()];
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    if path.file_name().is_some_and(|n| n != ".git") {
                        dirs.push(path);
                    }
                    continue;
                }
                let rel = path.strip_prefix(self.root()).unwrap_or(&path);
                let rel = rel.display().to_string();
                if rel != ".ctxkeep/lock" {
                    all.insert(rel, std::fs::read(&path).unwrap_or_default());
                }
            }
        }
        all
    }
}

/// One event to run: the agent and its payload, built field by field.
pub struct Event<'p> {
    project: &'p Project,
    agent: Agent,
    payload: Map<String, Value>,
}

/// What one event did.
#[derive(Debug)]
pub struct Ran {
    /// What the hook prints on stdout (without the final newline); None: nothing.
    pub reply: Option<String>,
    /// The files the event created or changed, relative to the project, sorted.
    pub written: Vec<String>,
    /// The error the hook failed open with, if it did.
    pub error: Option<String>,
}

impl Ran {
    /// The text added to the model's context (`additionalContext`, wherever the agent reads
    /// it); None when the reply adds none.
    pub fn context(&self) -> Option<String> {
        let reply: Value = serde_json::from_str(self.reply.as_deref()?).ok()?;
        reply
            .pointer("/hookSpecificOutput/additionalContext")
            .or_else(|| reply.get("additionalContext"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// Whether the event wrote the file `rel`.
    pub fn wrote(&self, rel: &str) -> bool {
        self.written.iter().any(|w| w == rel)
    }
}

impl Event<'_> {
    /// Sets the payload's field `key`.
    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.payload.insert(key.into(), value);
        self
    }

    /// Runs the event in-process, as `ctxkeep hook AGENT` would with this payload on stdin.
    pub fn run(self) -> Ran {
        let before = self.project.files();
        let text = Value::Object(self.payload).to_string();
        let mut event = None;
        let result = (|| -> anyhow::Result<_> {
            let payload = crate::agents::parse_payload(self.agent, &text)?;
            event = Some(payload.event.clone());
            if payload.action == Action::Ignore {
                return Ok(None);
            }
            Hook::new(
                self.project.workspace(),
                self.agent,
                payload,
                Output::SILENT,
            )?
            .handle()
        })();
        let (answer, error) = match result {
            Ok(answer) => (answer, None),
            Err(e) => (None, Some(format!("{e:#}"))),
        };
        let reply = reply::render(answer, event.as_deref(), self.agent, false);
        let after = self.project.files();
        let written = after
            .iter()
            .filter(|(path, bytes)| before.get(*path) != Some(bytes))
            .map(|(path, _)| path.clone())
            .collect();
        Ran {
            reply,
            written,
            error,
        }
    }
}

/// Writes a checkpoint of `fields` by hand in `ws`, in the default session, as `ctxkeep
/// checkpoint` writes it.
pub fn checkpoint(
    ws: &Workspace,
    fields: crate::domain::checkpoint::Fields,
) -> crate::domain::checkpoint::Checkpoint {
    crate::pipeline::record::by_hand(
        ws,
        crate::pipeline::record::Request {
            fields,
            trigger: "manual",
            session: crate::domain::session::DEFAULT_SESSION,
            transcript: None,
        },
        &ws.out,
    )
    .unwrap()
}
