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
    /// What the hook adds to the model's context (`hookSpecificOutput.additionalContext`).
    pub context: Option<String>,
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
        let out = p
            .ctxkeep(&["hook", agent.name()])
            .write_stdin(payload)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let (context, invalid) = read_reply(agent, &event.name, &stdout);
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
            context,
            invalid,
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

/// What the hook added to the model's context, and why its stdout is not what the agent
/// accepts, if it is not: nothing, or one JSON object `{"hookSpecificOutput": {"hookEventName":
/// EVENT, "additionalContext": TEXT}}` (Gemini: always one JSON object, `{}` when empty), the
/// text within Claude Code's 10,000 characters.
pub fn read_reply(agent: Agent, event: &str, stdout: &str) -> (Option<String>, Option<String>) {
    let text = stdout.trim_end_matches('\n');
    if text.is_empty() {
        let why = (agent == Agent::Gemini).then(|| "Gemini needs JSON on stdout".to_string());
        return (None, why);
    }
    if text.contains('\n') {
        return (None, Some(format!("more than one line: {text:?}")));
    }
    let v: Value = match serde_json::from_str(text) {
        Ok(v @ Value::Object(_)) => v,
        _ => return (None, Some(format!("not a JSON object: {text:?}"))),
    };
    if v.as_object().is_some_and(|o| o.is_empty()) {
        return (None, None);
    }
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    if keys != ["hookSpecificOutput"] {
        return (None, Some(format!("unexpected keys {keys:?}")));
    }
    let out = &v["hookSpecificOutput"];
    let Some(context) = out["additionalContext"].as_str() else {
        return (None, Some("no additionalContext".into()));
    };
    if out["hookEventName"] != event {
        return (
            Some(context.to_string()),
            Some(format!("hookEventName {} at {event}", out["hookEventName"])),
        );
    }
    if context.chars().count() > 10_000 {
        return (
            Some(context.to_string()),
            Some("additionalContext over 10,000 characters".into()),
        );
    }
    (Some(context.to_string()), None)
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
