//! Every agent ctxkeep works with, one folder each, behind one interface.
//!
//! This file is the registry: the [`Agent`] ids and the one `match` that
//! maps an id to its [`AgentSpec`] (its facts as one value, its
//! [`Policy`], its [`Transcripts`] reader). Everything else that
//! is particular to an agent lives in its folder (`claude_code/`, `codex/`,
//! `gemini/`, `qwen/`, `opencode/`, `copilot/`), split by concern: `usage.rs` (context usage from its
//! transcript), `observe.rs` (what the session did), `settings.rs` (its
//! hook settings and MCP registration), `compaction.rs` (where it compacts
//! on its own), `hooks.rs` (its hook payloads, and the samples `hooks
//! doctor` sends). The shared machinery (the tail reader, tracking, stages,
//! the checkpoint writer, the settings merge, relay's loop) reads an
//! agent's [`AgentSpec`] and never names an agent; `tests/cli/architecture.rs`
//! checks that. docs/architecture.md, "Adding an agent", lists every place
//! a new agent touches.

/// The [`Transcripts`] methods every agent answers from its folder's modules of the usual names:
/// `usage::read_from`, `observe::read` and `hooks::payload` (and, given `authored_text`,
/// `hooks::authored_text`). Used inside an agent's `impl Transcripts`.
macro_rules! from_agent_modules {
    () => {
        fn read_usage(
            &self,
            path: &std::path::Path,
            src: &mut dyn $crate::agents::ReadSeek,
            len: u64,
        ) -> anyhow::Result<$crate::transcripts::usage::Usage> {
            usage::read_from(path, src, len)
        }
        fn observe(
            &self,
            path: &std::path::Path,
            file: std::fs::File,
            len: u64,
            rec: &mut $crate::transcripts::activity::Recorder,
        ) -> anyhow::Result<()> {
            observe::read(path, file, len, rec)
        }
        fn payload(
            &self,
            root: &serde_json::Map<String, serde_json::Value>,
        ) -> Result<$crate::agents::payload::Payload, $crate::system::error::Error> {
            hooks::payload(root)
        }
    };
    (authored_text) => {
        from_agent_modules!();
        fn authored_text(&self, line: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
            hooks::authored_text(line)
        }
    };
}

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod mcp_registration;
pub mod opencode;
pub mod own_files;
pub mod payload;
pub mod policy;
pub mod qwen;
mod recorded_call;
pub mod records;
pub mod settings;

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::agents::payload::Payload;
use crate::agents::settings::AgentSettings;
use crate::context::compaction::{CompactionConfig, Limit};
use crate::system::error::Error;
use crate::transcripts::activity::{Observed, Recorder};
use crate::transcripts::compaction_summary::Found;
use crate::transcripts::usage::{StatusLine, Usage};

pub use self::policy::Policy;

/// An agent ctxkeep knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
    QwenCode,
    #[serde(rename = "opencode")]
    OpenCode,
    Copilot,
}

impl Agent {
    /// Every agent, in the order lists and help show them.
    pub const ALL: [Agent; 6] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::QwenCode,
        Agent::OpenCode,
        Agent::Copilot,
    ];

    /// What ctxkeep knows about this agent.
    pub fn spec(self) -> &'static AgentSpec {
        match self {
            Agent::ClaudeCode => &claude_code::SPEC,
            Agent::Codex => &codex::SPEC,
            Agent::Gemini => &gemini::SPEC,
            Agent::QwenCode => &qwen::SPEC,
            Agent::OpenCode => &opencode::SPEC,
            Agent::Copilot => &copilot::SPEC,
        }
    }

    /// The name on the command line, in the chain and in session files.
    pub fn as_str(self) -> &'static str {
        self.spec().id
    }

    /// The name people read ("Claude Code").
    pub fn display_name(self) -> &'static str {
        self.spec().display_name
    }

    /// Its hook settings, MCP registration and trust steps.
    pub fn settings(self) -> &'static AgentSettings {
        &self.spec().settings
    }

    /// How its hooks behave where agents differ.
    pub fn policy(self) -> &'static Policy {
        &self.spec().policy
    }

    /// The transcript of `session` when the hook payload does not name it.
    pub fn find_transcript(self, session: &str) -> Option<PathBuf> {
        self.spec().transcripts.find_transcript(session)
    }

    /// The agent that wrote a file with nothing to sniff and a name no agent
    /// claims (an empty transcript, the first line still being written).
    const FALLBACK: Agent = Agent::ClaudeCode;
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown agent {0:?}: expected {names}", names = names_or())]
pub struct ParseAgentError(pub String);

/// "claude-code, codex or gemini".
fn names_or() -> String {
    let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl FromStr for Agent {
    type Err = ParseAgentError;

    /// Accepts each agent's name and its aliases (`claude`, `gemini-cli`, …),
    /// in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        Agent::ALL
            .into_iter()
            .find(|a| {
                let spec = a.spec();
                spec.id == wanted || spec.aliases.contains(&wanted.as_str())
            })
            .ok_or_else(|| ParseAgentError(s.to_string()))
    }
}

pub use crate::transcripts::usage::ReadSeek;

/// What a headless session of the agent runs, for `relay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headless {
    /// The executable looked up on PATH.
    pub program: &'static str,
    /// Words between the program and the user's pass-through arguments.
    pub before_args: &'static [&'static str],
    /// Words between the pass-through arguments and the prompt.
    pub before_prompt: &'static [&'static str],
}

impl Headless {
    /// The command line, the prompt last.
    pub fn argv(&self, args: &[String], prompt: &str) -> Vec<String> {
        let mut argv = vec![self.program.to_string()];
        argv.extend(self.before_args.iter().map(|w| w.to_string()));
        argv.extend(args.iter().cloned());
        argv.extend(self.before_prompt.iter().map(|w| w.to_string()));
        argv.push(prompt.to_string());
        argv
    }
}

/// The environment, by variable name (a stand-in in tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A plugin of ctxkeep's that the agent installs from its own marketplace
/// (Claude Code's): its hooks run `ctxkeep hook <agent> --plugin`.
#[derive(Debug, Clone, Copy)]
pub struct Plugin {
    /// What a user types to install it.
    pub install: &'static str,
    /// The settings file that enables the plugin for the project at
    /// `project` (`env` stands for the environment); None: not enabled.
    pub enabled_in: fn(project: &Path, env: Env) -> Option<PathBuf>,
    /// The project's settings files, besides the one `hooks install` writes,
    /// whose ctxkeep hooks also make the plugin's step aside.
    pub other_settings: &'static [&'static str],
    /// The version of the plugin the agent installed (`env` stands for the
    /// environment); None: not installed, or the agent does not say.
    pub installed_version: fn(env: Env) -> Option<String>,
}

/// A small transcript and the payload fields `hooks doctor` sends a hook
/// in a sandbox copy of the project.
pub struct DoctorSample {
    /// The transcript's file name (some agents are recognized by it).
    pub transcript_name: &'static str,
    pub transcript: &'static str,
    /// The payload fields the agent sends with every event, besides the
    /// session, the transcript, the directory and the event's name.
    pub common_fields: fn() -> Value,
    /// The fields the agent sends with an event where they differ from what
    /// `hooks doctor` sends every agent with that event; None: the same.
    pub event_fields: fn(&str) -> Option<Value>,
}

impl DoctorSample {
    /// For [`DoctorSample::event_fields`]: every event's fields are the ones all agents send.
    pub fn usual_event_fields(_event: &str) -> Option<Value> {
        None
    }
}

/// Everything ctxkeep knows about one agent, as one value: its folder's `mod.rs` holds its
/// `SPEC`, the registry below hands it out as `&'static AgentSpec`. Facts are data; what is
/// code is a function of the agent's (its configuration, its samples) or its [`Transcripts`].
pub struct AgentSpec {
    /// The name on the command line, in the chain and in session files (`claude-code`).
    pub id: &'static str,
    /// Other spellings the command line and the front matter accept.
    pub aliases: &'static [&'static str],
    /// The name people read (`Claude Code`).
    pub display_name: &'static str,
    /// Its hook settings file, the events ctxkeep hooks, trust steps, MCP registration.
    pub settings: AgentSettings,
    /// How its hooks behave where agents differ.
    pub policy: Policy,
    /// Where it compacts on its own in a `window`-token session on a model, from its
    /// configuration (`env` stands for the environment).
    pub compaction_limit: fn(u64, Option<&str>, &Path, Env) -> Limit,
    /// The window its configuration holds a session to when that is below the model's, and
    /// where that comes from (Claude Code's `CLAUDE_CODE_DISABLE_1M_CONTEXT`); None when its
    /// configuration has no such setting.
    pub window_cap: Option<WindowCap>,
    /// What `hooks doctor` runs its hooks on.
    pub doctor: DoctorSample,
    /// Its headless mode, for `relay`.
    pub headless: Option<Headless>,
    /// ctxkeep's plugin for it, when there is one.
    pub plugin: Option<Plugin>,
    /// Its status-line input, when it has a status line that runs a command.
    pub status_line: Option<fn(&mut dyn Read) -> anyhow::Result<StatusLine>>,
    /// The folder of per-session records its integration writes outside any project, which
    /// [`records`] keeps bounded; None for an agent that keeps its own transcripts.
    pub records_dir: Option<fn() -> Option<PathBuf>>,
    /// Reading its transcripts and hook payloads.
    pub transcripts: &'static dyn Transcripts,
}

/// The window an agent's configuration holds a session to, and where that comes from.
pub type WindowCap = fn(u64, Env) -> Option<(u64, String)>;

/// What is code in an agent: reading its transcripts and its hook payloads. One unit struct
/// per agent implements it; the defaults are what an agent without the feature does.
pub trait Transcripts: Sync {
    /// Context usage at the end of the transcript in the first `len` bytes of `src`.
    fn read_usage(&self, path: &Path, src: &mut dyn ReadSeek, len: u64) -> anyhow::Result<Usage>;
    /// What the session did, from the transcript's tail, into `rec`.
    fn observe(&self, path: &Path, file: File, len: u64, rec: &mut Recorder) -> anyhow::Result<()>;
    /// Whether a transcript line has this agent's shape.
    fn sniff_line(&self, line: &Map<String, Value>) -> bool;
    /// Whether the head of a file with no JSON line is this agent's (a
    /// single-document transcript).
    fn sniff_head(&self, _head: &[u8]) -> bool {
        false
    }
    /// Whether a file with nothing to sniff is this agent's by its name.
    fn claims_file_name(&self, _path: &Path) -> bool {
        false
    }
    /// The transcript of `session` when the hook payload does not name it.
    fn find_transcript(&self, _session: &str) -> Option<PathBuf> {
        None
    }
    /// The text a transcript line holds that the agent itself wrote
    /// (replies and tool calls; never prompts, injected context or tool
    /// results); empty for lines that are not this agent's.
    fn authored_text(&self, line: &Map<String, Value>) -> Vec<String>;
    /// The summary the agent wrote at its last compaction, from its
    /// transcript; one written before `since` (when the compaction began) is
    /// an earlier compaction's and not returned.
    fn compaction_summary(
        &self,
        _path: &Path,
        _since: Option<DateTime<Utc>>,
    ) -> anyhow::Result<Found> {
        Ok(Found::None)
    }
    /// One hook payload, parsed: what the event means to ctxkeep (default: Claude Code's
    /// shape and event names).
    fn payload(&self, root: &Map<String, Value>) -> Result<Payload, Error> {
        crate::agents::payload::from_object(root, |event| event)
    }
}

// --- Calls that pick the agent ------------------------------------------------------------

/// Which agent wrote the transcript at `path`, from its content (first lines,
/// then last lines), else from its name when it is empty.
pub fn detect(path: &Path) -> anyhow::Result<Agent> {
    let (mut file, len) = crate::transcripts::usage::open_transcript(path)?;
    detect_from(path, &mut file, len)?.ok_or_else(|| not_recognized(path))
}

/// The order lines are tried in: the most particular shapes first (a Gemini
/// line with an `id` and a `sessionId`, or a Qwen Code record in Claude
/// Code's envelope, would pass Claude Code's looser test).
const SNIFF_ORDER: [Agent; 6] = [
    Agent::Copilot,
    Agent::Codex,
    Agent::Gemini,
    Agent::QwenCode,
    Agent::OpenCode,
    Agent::ClaudeCode,
];

fn detect_from(path: &Path, src: &mut dyn ReadSeek, len: u64) -> anyhow::Result<Option<Agent>> {
    let by_line = |line: &Map<String, Value>| {
        SNIFF_ORDER
            .into_iter()
            .find(|a| a.spec().transcripts.sniff_line(line))
    };
    let by_head = |head: &[u8]| {
        Agent::ALL
            .into_iter()
            .find(|a| a.spec().transcripts.sniff_head(head))
    };
    let by_name = || {
        Agent::ALL
            .into_iter()
            .find(|a| a.spec().transcripts.claims_file_name(path))
            .unwrap_or(Agent::FALLBACK)
    };
    crate::transcripts::usage::sniff(path, src, len, &by_line, &by_head, &by_name)
}

fn not_recognized(path: &Path) -> anyhow::Error {
    let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
    Error::data(
        path,
        format!(
            "not a recognized transcript (expected Claude Code, Codex, Gemini CLI, Qwen Code \
             or GitHub Copilot CLI JSONL, an OpenCode session record of ctxkeep's plugin, or a \
             Gemini session JSON); `track` takes --agent {} to name it",
            names.join("|")
        ),
    )
    .into()
}

/// Reads the context usage at the end of the transcript at `path`. `agent: None` detects it.
pub fn read_usage(path: &Path, agent: Option<Agent>) -> anyhow::Result<Usage> {
    let (mut file, len) = crate::transcripts::usage::open_transcript(path)?;
    read_usage_from(path, &mut file, len, agent)
}

/// As [`read_usage`], over the first `len` bytes of an open source (the fuzz
/// targets feed bytes through a `Cursor`). `path` names the transcript in
/// errors and is the name detection falls back on.
pub fn read_usage_from(
    path: &Path,
    src: &mut dyn ReadSeek,
    len: u64,
    agent: Option<Agent>,
) -> anyhow::Result<Usage> {
    let agent = match agent {
        Some(a) => a,
        None => detect_from(path, src, len)?.ok_or_else(|| not_recognized(path))?,
    };
    agent.spec().transcripts.read_usage(path, src, len)
}

/// What the session in the transcript at `path` did (see
/// [`crate::transcripts::activity::observe`]); `agent: None` detects the format.
pub fn observe(
    path: &Path,
    agent: Option<Agent>,
    repo_root: Option<&Path>,
    now: DateTime<Utc>,
) -> anyhow::Result<Observed> {
    let agent = resolve(path, agent)?;
    crate::transcripts::activity::observe(path, &reader(agent), repo_root, now)
}

/// [`observe`] over only the last `window` bytes.
pub fn observe_within(
    path: &Path,
    agent: Option<Agent>,
    repo_root: Option<&Path>,
    now: DateTime<Utc>,
    window: u64,
) -> anyhow::Result<Observed> {
    let agent = resolve(path, agent)?;
    crate::transcripts::activity::observe_within(path, &reader(agent), repo_root, now, window)
}

/// Opens the transcript at `path` for one event's reading with `agent`'s readers (see
/// [`crate::transcripts::activity::event_read`]); `agent: None` detects the format.
pub fn event_read(
    path: &Path,
    agent: Option<Agent>,
) -> anyhow::Result<crate::transcripts::activity::event_read::EventRead> {
    // One open, the format detected from it when the agent is not known.
    let (mut file, len) = crate::transcripts::usage::open_transcript(path)?;
    let agent = match agent {
        Some(a) => a,
        None => detect_from(path, &mut file, len)?.ok_or_else(|| not_recognized(path))?,
    };
    let transcripts = agent.spec().transcripts;
    let readers = crate::transcripts::activity::event_read::Readers {
        observe: reader(agent),
        usage: Box::new(move |path, mut file, len| transcripts.read_usage(path, &mut file, len)),
        authored: authored_text,
    };
    Ok(crate::transcripts::activity::event_read::EventRead::of_open(path, file, len, readers))
}

fn resolve(path: &Path, agent: Option<Agent>) -> anyhow::Result<Agent> {
    match agent {
        Some(a) => Ok(a),
        None => detect(path),
    }
}

fn reader(agent: Agent) -> crate::transcripts::activity::Reader<'static> {
    let spec = agent.spec();
    crate::transcripts::activity::Reader {
        agent: spec.id,
        read: Box::new(move |path, file, len, rec| spec.transcripts.observe(path, file, len, rec)),
    }
}

/// The text of a transcript line that an agent wrote itself, whichever
/// agent's line it is.
pub fn authored_text(line: &Map<String, Value>) -> Vec<String> {
    Agent::ALL
        .into_iter()
        .flat_map(|a| a.spec().transcripts.authored_text(line))
        .collect()
}

/// Where a session compacts on its own: the front matter's `compaction:`
/// for the agent, else the agent's own configuration when it sets one, else
/// where the agent was `observed` compacting (`limit_source: observed`),
/// else its default (what it is expected to do); without an agent, the front
/// matter's `default` or the window. Reads the process's environment.
pub fn compaction_limit(
    agent: Option<Agent>,
    window: u64,
    project: &Path,
    front: Option<&CompactionConfig>,
    observed: Option<u64>,
) -> Limit {
    compaction_limit_with(agent, window, project, front, observed, &|name| {
        std::env::var(name).ok()
    })
}

/// [`compaction_limit`] with `env` standing for the environment (tests).
pub fn compaction_limit_with(
    agent: Option<Agent>,
    window: u64,
    project: &Path,
    front: Option<&CompactionConfig>,
    observed: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Limit {
    compaction_limit_for_model(agent, window, None, project, front, observed, env)
}

/// [`compaction_limit_with`] for a session on `model` (an agent may set its
/// point per model).
pub fn compaction_limit_for_model(
    agent: Option<Agent>,
    window: u64,
    model: Option<&str>,
    project: &Path,
    front: Option<&CompactionConfig>,
    observed: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Limit {
    let names: Vec<&str> = match agent {
        Some(a) => std::iter::once(a.spec().id)
            .chain(a.spec().aliases.iter().copied())
            .collect(),
        None => Vec::new(),
    };
    crate::context::compaction::limit_with(window, front, &names, &|window| match agent {
        Some(a) => {
            let own = (a.spec().compaction_limit)(window, model, project, env);
            // What was seen beats the agent's default, never what the user set
            // (a setting changed since is what the agent will do next).
            match observed {
                Some(tokens) if own.source == "default" => Limit::new(tokens, "observed"),
                _ => own,
            }
        }
        None => Limit::window(window),
    })
}

/// The window `agent`'s configuration holds a `window`-token session to, when
/// it holds it below that (see [`AgentSpec::window_cap`]). Reads the
/// process's environment.
pub fn window_cap(agent: Agent, window: u64) -> Option<(u64, String)> {
    window_cap_in(agent, window, &|name| std::env::var(name).ok())
}

/// [`window_cap`] with the environment handed in.
pub fn window_cap_in(
    agent: Agent,
    window: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<(u64, String)> {
    let cap = agent.spec().window_cap?;
    cap(window, env)
}

/// The summary `agent` wrote at its last compaction, from the transcript at
/// `path` (see [`Transcripts::compaction_summary`]).
pub fn compaction_summary(
    agent: Agent,
    path: &Path,
    since: Option<DateTime<Utc>>,
) -> anyhow::Result<Found> {
    agent.spec().transcripts.compaction_summary(path, since)
}

/// What `ctxkeep statusline` reads on `input`: the status-line input of the
/// agent that has one, and that agent.
pub fn read_status_line(input: &mut dyn Read) -> anyhow::Result<(Agent, StatusLine)> {
    for agent in Agent::ALL {
        if let Some(read) = agent.spec().status_line {
            return Ok((agent, read(input)?));
        }
    }
    Err(Error::Usage("no agent has a status line that runs a command".into()).into())
}

/// Parses a hook payload of `agent`'s from `input`, at most
/// [`crate::agents::payload::MAX_PAYLOAD_BYTES`].
pub fn read_payload(agent: Agent, input: impl Read) -> Result<Payload, Error> {
    let root = crate::agents::payload::read_object(input)?;
    agent.spec().transcripts.payload(&root)
}

/// As [`read_payload`], from text.
pub fn parse_payload(agent: Agent, text: &str) -> Result<Payload, Error> {
    let root = crate::agents::payload::parse_object(text)?;
    agent.spec().transcripts.payload(&root)
}

#[cfg(test)]
mod compaction_tests;
#[cfg(test)]
mod event_read_tests;
#[cfg(test)]
mod left_open_tests;
#[cfg(test)]
mod observe_tests;
#[cfg(test)]
mod tests;
