//! The sandbox `hooks doctor` runs the installed commands in: a copy of the project's state file
//! and a small transcript of the agent's, in a temp dir.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::agents::Agent;
use crate::domain::workspace::{Workspace, STATE_FILE};
use crate::system::error::Error;

/// A copy of the project's state file and a small transcript of the
/// agent's in a temp dir.
pub(super) struct Sandbox {
    /// Removed when the checks end.
    _dir: tempfile::TempDir,
    agent: Agent,
    state: PathBuf,
    transcript: PathBuf,
    cwd: PathBuf,
}

/// What `hooks doctor` sends with `event`, unless the agent says otherwise.
fn event_fields(event: &str) -> Value {
    match event {
        // `compact` renders the resume prompt when there is a checkpoint.
        "SessionStart" => json!({ "source": "compact" }),
        "UserPromptSubmit" | "BeforeAgent" => json!({ "prompt": "hello" }),
        "PostToolUse" => {
            json!({ "tool_name": "Bash", "tool_input": { "command": "true" }, "tool_response": {} })
        }
        "AfterTool" => json!({
            "tool_name": "run_shell_command", "tool_input": { "command": "true" },
            "tool_response": { "llmContent": "", "returnDisplay": "" },
        }),
        "AfterAgent" => {
            json!({ "prompt": "hello", "prompt_response": "ok", "stop_hook_active": false })
        }
        "PreCompact" => json!({ "trigger": "manual", "custom_instructions": "" }),
        "PostCompact" => json!({ "trigger": "manual", "compact_summary": "" }),
        "PreCompress" => json!({ "trigger": "manual" }),
        "Stop" => json!({ "stop_hook_active": false, "last_assistant_message": "ok" }),
        "SessionEnd" => json!({ "reason": "other" }),
        _ => json!({}),
    }
}

impl Sandbox {
    pub(super) fn new(ws: &Workspace, agent: Agent) -> anyhow::Result<Sandbox> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", "cannot create", e))?;
        let state = dir.path().join(STATE_FILE);
        std::fs::copy(&ws.state_path, &state)
            .map_err(|e| Error::io(&ws.state_path, "cannot copy for the check", e))?;
        let sample = &agent.spec().doctor;
        let transcript = dir.path().join(sample.transcript_name);
        std::fs::write(&transcript, sample.transcript)
            .map_err(|e| Error::io(&transcript, "cannot write", e))?;
        Ok(Sandbox {
            _dir: dir,
            agent,
            state,
            transcript,
            cwd: ws.root.clone(),
        })
    }

    /// A payload in the agent's shape for `event`.
    pub(super) fn hook_payload(&self, event: &str) -> String {
        let mut p = json!({
            "session_id": "ctxkeep-doctor",
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "hook_event_name": event,
        });
        let sample = &self.agent.spec().doctor;
        let common = (sample.common_fields)();
        let extra = (sample.event_fields)(event).unwrap_or_else(|| event_fields(event));
        if let Some(p) = p.as_object_mut() {
            for extra in [common, extra] {
                if let Value::Object(extra) = extra {
                    p.extend(extra);
                }
            }
        }
        p.to_string()
    }

    /// Runs a hook command: it must exit 0, say nothing on stderr (a hook
    /// that failed open does), and print nothing or one JSON object (with
    /// `json_always`, exactly one JSON object; with `plain`, any text).
    pub(super) fn run(
        &self,
        command: &str,
        payload: &str,
        json_always: bool,
        plain: bool,
        timeout: Duration,
    ) -> Result<(), String> {
        let out = self.spawn(command, payload, timeout)?;
        let stdout = out.stdout.trim();
        if plain {
            return Ok(());
        }
        if stdout.is_empty() {
            if json_always {
                return Err("printed nothing on stdout; the agent wants a JSON object".into());
            }
            return Ok(());
        }
        if !serde_json::from_str::<Value>(stdout).is_ok_and(|v| v.is_object()) {
            return Err(format!(
                "printed something that is not a JSON object: {}",
                first_line(stdout)
            ));
        }
        Ok(())
    }

    /// Runs the status-line command; returns the line it printed.
    pub(super) fn run_status_line(
        &self,
        command: &str,
        timeout: Duration,
    ) -> Result<String, String> {
        let payload = json!({
            "session_id": "ctxkeep-doctor",
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "model": { "id": "claude-sonnet-4-5", "display_name": "Sonnet" },
            "version": "2.1.140",
            "context_window": {
                "context_window_size": 200000,
                "current_usage": { "input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 990, "cache_read_input_tokens": 19000 },
            },
        });
        let out = self.spawn(command, &payload.to_string(), timeout)?;
        let line = first_line(&out.stdout).to_string();
        if line.is_empty() || line.starts_with("ctxkeep: ") {
            return Err(format!("printed no gauge: {line:?}"));
        }
        Ok(line)
    }

    /// Starts the MCP server as a client would, and lists its tools: the
    /// names, once it answered `tools/list`.
    pub(super) fn run_mcp(&self, command: &str, timeout: Duration) -> Result<Vec<String>, String> {
        use std::io::BufRead;
        let mut child = self.command(command, Stdio::null())?;
        let requests = [
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "ctxkeep-doctor", "version": env!("CARGO_PKG_VERSION") } } }),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        ];
        let mut stdin = child.stdin.take();
        if let Some(input) = stdin.as_mut() {
            for r in &requests {
                let _ = writeln!(input, "{r}");
            }
            let _ = input.flush();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let deadline = Instant::now() + timeout;
        let answer = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                        break Err(format!(
                            "printed something that is not JSON-RPC: {}",
                            first_line(&line)
                        ));
                    };
                    if msg["id"] == 2 {
                        break Ok(msg);
                    }
                    if msg.get("error").is_some() {
                        break Err(format!("answered with an error: {}", msg["error"]));
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    break Err(format!("no tool list after {} s", timeout.as_secs_f64()))
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    break Err("exited before listing its tools".into())
                }
            }
        };
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
        let answer = answer?;
        let tools: Vec<String> = answer["result"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect();
        if !tools.iter().any(|t| t == "checkpoint") {
            return Err(format!("lists no checkpoint tool: {answer}"));
        }
        Ok(tools)
    }

    /// Starts `command` through `sh` in the project, against the sandbox's
    /// state file, with stdin and stdout piped.
    fn command(&self, command: &str, stderr: Stdio) -> Result<std::process::Child, String> {
        Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&self.cwd)
            .env("CTXKEEP_STATE", &self.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start sh: {e}"))
    }

    fn spawn(&self, command: &str, stdin: &str, timeout: Duration) -> Result<Finished, String> {
        let mut child = self.command(command, Stdio::piped())?;
        let started = Instant::now();
        if let Some(mut input) = child.stdin.take() {
            // A command that exits without reading its input is not an error here.
            let _ = input.write_all(stdin.as_bytes());
        }
        let read = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_string(&mut text);
                }
                text
            })
        };
        let stdout = read(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = read(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "still running after {} s; killed",
                        timeout.as_secs_f64()
                    ));
                }
                Err(e) => return Err(format!("cannot wait for it: {e}")),
            }
        };
        let elapsed = started.elapsed();
        let out = Finished {
            stdout: stdout.join().unwrap_or_default(),
        };
        let stderr = stderr.join().unwrap_or_default();
        match status.code() {
            Some(0) if stderr.trim().is_empty() => Ok(out),
            Some(0) => Err(format!(
                "exit 0 but it reported: {}",
                first_line(stderr.trim())
            )),
            Some(127) => Err("command not found (is ctxkeep on the PATH the agent uses?)".into()),
            Some(code) => Err(format!("exit {code}: {}", first_line(stderr.trim()))),
            None => Err(format!(
                "killed by a signal after {} ms",
                elapsed.as_millis()
            )),
        }
    }
}

struct Finished {
    stdout: String,
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
