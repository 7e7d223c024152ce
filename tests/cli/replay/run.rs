//! Runs a replay: a fresh project set up as the end-to-end suite sets one up (tests/e2e/run:
//! `init --window 200000`, a first checkpoint, then `hooks install AGENT`), the transcript written
//! line by line into the test's HOME, and `ctxkeep hook AGENT` run for each event the installed
//! hooks subscribe to, with the transcript cut where the CLI would have had it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{reconstruct, Agent, HookEvent, Replay, Transcript};
use crate::support::Project;

/// The task and next action of the project's first checkpoint (as the end-to-end suite writes it).
pub const TASK: &str = "make the widget parser accept blank lines";
pub const NEXT: &str = "run the widget tests and fix the first failure (E2E-NEXT-4711)";

/// One hook run (or, for an event no installed hook subscribes to, its place in the order).
pub struct Step {
    pub event: HookEvent,
    /// Whether an installed hook subscribes to the event (only those are run).
    pub ran: bool,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// What the hook adds to the model's context.
    pub context: Option<String>,
    /// What it shows the user, and what it asks the summarizer (see [`Reply`]).
    pub system_message: Option<String>,
    pub summarizer: Option<String>,
    /// Why the hook's stdout is not what the agent accepts, if it is not.
    pub invalid: Option<String>,
    /// Records appended to `.ctxkeep/events.jsonl` by this run.
    pub logged: Vec<Value>,
    /// The checkpoint current in the project after the run.
    pub current: String,
}

impl Step {
    /// The events of kind `name` this run logged.
    pub fn logged<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Value> {
        self.logged.iter().filter(move |e| e["event"] == name)
    }
}

pub struct Run {
    /// The transcript's file name (the report's row).
    pub name: String,
    pub agent: Agent,
    pub lines: usize,
    /// The transcript as read (what each hook saw is a prefix of it).
    pub transcript: Transcript,
    pub replay: Replay,
    /// The events `hooks install AGENT` subscribed ctxkeep to.
    pub wired: BTreeSet<String>,
    pub steps: Vec<Step>,
    /// Every checkpoint record the project held, by id, as archived when written.
    pub checkpoints: BTreeMap<String, Value>,
}

impl Run {
    pub fn ran(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().filter(|s| s.ran)
    }
}

/// Replays the transcript at `path` (`agent` detected from its lines when not given).
pub fn replay_file(path: &Path, agent: Option<Agent>) -> Run {
    let t = Transcript::read(path);
    let agent = agent.unwrap_or_else(|| Agent::detect(&t));
    let replay = reconstruct(agent, &t);
    drive(t, replay)
}

fn drive(t: Transcript, replay: Replay) -> Run {
    let agent = replay.agent;
    let p = Project::new();
    p.ctxkeep(&["init", "--window", "200000"])
        .assert()
        .success();
    p.ctxkeep(&[
        "checkpoint",
        "--phase",
        "widgets",
        "--task",
        TASK,
        "--agent",
        agent.name(),
        "--next",
        NEXT,
    ])
    .assert()
    .success();
    p.ctxkeep(&["hooks", "install", agent.name()])
        .assert()
        .success();
    p.commit_all("ctxkeep state");
    let wired = wired_events(&p, agent);

    let dir = p.home().join("transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(t.file_name());
    let mut file = std::fs::File::create(&path).unwrap();
    let mut written = 0;
    let mut log = EventLog::new(p.path(".ctxkeep"));
    let mut checkpoints = BTreeMap::new();
    let mut current = "ckpt-0001".to_string();
    if let Some(first) = load_checkpoint(&p, &current) {
        checkpoints.insert(current.clone(), first);
    }
    log.read_new();
    let mut steps = Vec::new();
    for event in &replay.events {
        if !wired.contains(&event.name) {
            steps.push(Step {
                event: event.clone(),
                ran: false,
                code: 0,
                stdout: String::new(),
                stderr: String::new(),
                context: None,
                system_message: None,
                summarizer: None,
                invalid: None,
                logged: Vec::new(),
                current: current.clone(),
            });
            continue;
        }
        for line in &t.lines[written..event.cut] {
            file.write_all(&line.raw).unwrap();
            file.write_all(b"\n").unwrap();
        }
        file.flush().unwrap();
        written = event.cut;
        let payload = payload(&p, &replay, event, &path);
        let out = hook_command(&p, agent)
            .write_stdin(payload)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let reply = read_reply(agent, &event.name, &stdout);
        let logged = log.read_new();
        for e in logged.iter().filter(|e| e["event"] == "checkpoint") {
            if let Some(id) = e["id"].as_str() {
                current = id.to_string();
                // Kept now: retention may prune the archive later in the run.
                if let Some(record) = load_checkpoint(&p, id) {
                    checkpoints.insert(id.to_string(), record);
                }
            }
        }
        steps.push(Step {
            event: event.clone(),
            ran: true,
            code: out.status.code().unwrap_or(-1),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            context: reply.context,
            system_message: reply.system_message,
            summarizer: reply.summarizer,
            invalid: reply.invalid,
            logged,
            current: current.clone(),
        });
    }
    Run {
        name: t.file_name(),
        agent,
        lines: t.lines.len(),
        transcript: t,
        replay,
        wired,
        steps,
        checkpoints,
    }
}

/// `ctxkeep hook AGENT`, with the binary `CTXKEEP_REPLAY_BIN` names when set (another
/// build's hooks, e.g. main's for the results before a change), else this build's.
fn hook_command(p: &Project, agent: Agent) -> assert_cmd::Command {
    match std::env::var_os("CTXKEEP_REPLAY_BIN") {
        Some(bin) => {
            let mut std = std::process::Command::new(bin);
            p.env(&mut std);
            std.args(["hook", agent.name()]);
            assert_cmd::Command::from_std(std)
        }
        None => p.ctxkeep(&["hook", agent.name()]),
    }
}

/// The events whose hooks run `ctxkeep hook`, from the settings file `hooks install` wrote.
fn wired_events(p: &Project, agent: Agent) -> BTreeSet<String> {
    let doc: Value = serde_json::from_str(&p.read(agent.settings())).unwrap();
    doc["hooks"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, groups)| groups.to_string().contains("ctxkeep hook"))
        .map(|(name, _)| name.clone())
        .collect()
}

fn payload(p: &Project, replay: &Replay, event: &HookEvent, transcript: &Path) -> String {
    let mut v = serde_json::json!({
        "session_id": replay.session,
        "transcript_path": transcript,
        "cwd": p.root(),
        "hook_event_name": event.name,
    });
    v.as_object_mut().unwrap().extend(event.fields.clone());
    v.to_string()
}

fn load_checkpoint(p: &Project, id: &str) -> Option<Value> {
    let text = std::fs::read_to_string(p.path(&format!(".ctxkeep/checkpoints/{id}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// What a hook's stdout says to the agent.
#[derive(Debug, Default)]
pub struct Reply {
    /// Added to the model's context (`hookSpecificOutput.additionalContext`, or Claude Code's
    /// plain text at a start or a prompt).
    pub context: Option<String>,
    /// Shown to the user (`systemMessage`).
    pub system_message: Option<String>,
    /// Claude Code's `PreCompact` plain text: instructions for the summarizer.
    pub summarizer: Option<String>,
    /// Why the agent would not accept it, if it would not.
    pub invalid: Option<String>,
}

/// The keys an agent reads in a hook's JSON answer (FORMATS §1.9, §2.6, §3.4).
const REPLY_KEYS: &[&str] = &[
    "hookSpecificOutput",
    "systemMessage",
    "suppressOutput",
    "continue",
    "stopReason",
    "decision",
    "reason",
];

/// Reads a hook's stdout as `agent` does: nothing; or one JSON object of the keys it knows,
/// `hookSpecificOutput.hookEventName` naming the event and `additionalContext` within Claude
/// Code's 10,000 characters (Gemini: always one JSON object, `{}` when there is nothing); or, for
/// Claude Code, plain text where it takes plain text (a start or a prompt: context; `PreCompact`:
/// the summarizer's instructions).
pub fn read_reply(agent: Agent, event: &str, stdout: &str) -> Reply {
    let text = stdout.trim_end_matches('\n');
    let bad = |why: String| Reply {
        invalid: Some(why),
        ..Reply::default()
    };
    if text.is_empty() {
        return match agent {
            Agent::Gemini => bad("Gemini needs JSON on stdout".into()),
            _ => Reply::default(),
        };
    }
    if agent == Agent::ClaudeCode && !text.starts_with('{') {
        return match event {
            "SessionStart" | "UserPromptSubmit" => Reply {
                context: Some(text.to_string()),
                ..Reply::default()
            },
            "PreCompact" => Reply {
                summarizer: Some(text.to_string()),
                ..Reply::default()
            },
            _ => bad(format!("plain text at {event}: {text:?}")),
        };
    }
    if text.contains('\n') {
        return bad(format!("more than one line: {text:?}"));
    }
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else {
        return bad(format!("not a JSON object: {text:?}"));
    };
    let mut reply = Reply {
        system_message: root
            .get("systemMessage")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Reply::default()
    };
    if let Some(key) = root.keys().find(|k| !REPLY_KEYS.contains(&k.as_str())) {
        reply.invalid = Some(format!("unknown key {key:?}"));
        return reply;
    }
    let Some(out) = root.get("hookSpecificOutput") else {
        return reply;
    };
    reply.context = out["additionalContext"].as_str().map(str::to_string);
    reply.invalid = if out["hookEventName"] != event {
        Some(format!("hookEventName {} at {event}", out["hookEventName"]))
    } else if reply.context.is_none() {
        Some("hookSpecificOutput without additionalContext".into())
    } else if reply
        .context
        .as_deref()
        .is_some_and(|c| c.chars().count() > 10_000)
    {
        Some("additionalContext over 10,000 characters".into())
    } else {
        None
    };
    reply
}

/// `.ctxkeep/events.jsonl`, read as it grows (and across a rotation to `events.jsonl.1`).
struct EventLog {
    dir: PathBuf,
    offset: u64,
}

impl EventLog {
    fn new(dir: PathBuf) -> EventLog {
        EventLog { dir, offset: 0 }
    }

    fn read_new(&mut self) -> Vec<Value> {
        let current = std::fs::read(self.dir.join("events.jsonl")).unwrap_or_default();
        let mut bytes = Vec::new();
        if (current.len() as u64) < self.offset {
            // Rotated: the rest of the old log, then the new one from its start.
            let old = std::fs::read(self.dir.join("events.jsonl.1")).unwrap_or_default();
            bytes.extend_from_slice(old.get(self.offset as usize..).unwrap_or_default());
            self.offset = 0;
        }
        bytes.extend_from_slice(&current[self.offset as usize..]);
        self.offset = current.len() as u64;
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}
