//! `ctxkeep hooks install|uninstall|doctor claude-code`: ctxkeep's entries in
//! the project's `.claude/settings.json`, merged in and taken out without
//! touching anything else, and a check that each installed command runs.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use super::{Ctx, Outcome};
use crate::claude_settings::{self as settings, Change, StatusLine};
use crate::cli::{HooksArgs, HooksCommand, HooksDoctorArgs, HooksInstallArgs, HooksUninstallArgs};
use crate::error::Error;
use crate::fsutil;
use crate::workspace::{Workspace, STATE_FILE};

/// A settings file is small; anything bigger is not one.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

pub fn run(args: HooksArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    match args.command {
        HooksCommand::Install(a) => install(a, ctx),
        HooksCommand::Uninstall(a) => uninstall(a, ctx),
        HooksCommand::Doctor(a) => doctor(a, ctx),
    }
}

/// What `hooks install|uninstall --json` prints.
#[derive(Debug, Serialize)]
struct EditReport {
    settings: String,
    dry_run: bool,
    /// The file was (or, with --dry-run, would be) rewritten.
    changed: bool,
    changes: Vec<Change>,
    /// The user's own status line, left in place.
    kept_status_line: Option<String>,
}

/// `--settings`, else `.claude/settings.json` beside the state file.
fn settings_path(given: Option<PathBuf>, ctx: &Ctx) -> anyhow::Result<PathBuf> {
    match given {
        Some(p) => Ok(p),
        None => {
            let ws = Workspace::resolve(&ctx.locate(), false)?;
            Ok(ws.root.join(".claude").join("settings.json"))
        }
    }
}

/// The settings document and the text it was read from (None: no file yet).
fn load(path: &Path) -> anyhow::Result<(Value, Option<String>)> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok((json!({}), None));
    }
    let text = fsutil::read_text(path, MAX_SETTINGS_BYTES)?;
    if text.trim().is_empty() {
        return Ok((json!({}), Some(text)));
    }
    let doc = serde_json::from_str(&text).map_err(|e| {
        Error::data(
            path,
            format!("not valid JSON ({e}); fix it by hand, nothing was changed"),
        )
    })?;
    Ok((doc, Some(text)))
}

/// Writes the document atomically; refuses if the file changed since it was read.
fn save(path: &Path, doc: &Value, original: Option<&str>) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fsutil::ensure_dir(dir)?;
    }
    let mut text = serde_json::to_string_pretty(doc)?;
    text.push('\n');
    fsutil::atomic_write(path, text.as_bytes(), original.map(str::as_bytes))?;
    Ok(())
}

fn install(args: HooksInstallArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let path = settings_path(args.edit.settings, ctx)?;
    let (mut doc, original) = load(&path)?;
    let plan = settings::install(&mut doc, args.force).map_err(|why| Error::data(&path, why))?;
    if let Some(cmd) = &plan.kept_status_line {
        ctx.out.warn(&format!(
            "{}: kept your statusLine ({cmd}); hooks then take the window from the config or the model table. Replace it with --force, or pipe the same input to `ctxkeep statusline` from your script",
            path.display()
        ));
    }
    if let Some(replaced) = plan.changes.iter().find(|c| c.op == "removed") {
        ctx.out.warn(&format!(
            "{}: replaced your statusLine ({}) because of --force; note it down: `ctxkeep hooks uninstall` will not bring it back",
            path.display(),
            replaced.command
        ));
    }
    finish_edit(
        &path,
        &doc,
        original,
        plan.changes,
        plan.kept_status_line,
        args.edit.dry_run,
        ctx,
    )
}

fn uninstall(args: HooksUninstallArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let path = settings_path(args.edit.settings, ctx)?;
    let (mut doc, original) = load(&path)?;
    let changes = settings::uninstall(&mut doc).map_err(|why| Error::data(&path, why))?;
    finish_edit(&path, &doc, original, changes, None, args.edit.dry_run, ctx)
}

fn finish_edit(
    path: &Path,
    doc: &Value,
    original: Option<String>,
    changes: Vec<Change>,
    kept_status_line: Option<String>,
    dry_run: bool,
    ctx: &Ctx,
) -> anyhow::Result<Outcome> {
    let changed = !changes.is_empty();
    if changed && !dry_run {
        save(path, doc, original.as_deref())?;
    }
    let report = EditReport {
        settings: path.display().to_string(),
        dry_run,
        changed,
        changes,
        kept_status_line,
    };
    ctx.out.json(&report)?;
    let lines: Vec<String> = report.changes.iter().map(Change::to_string).collect();
    if !lines.is_empty() {
        ctx.out.data(&lines.join("\n"))?;
    }
    ctx.out.info(&match (changed, dry_run) {
        (false, _) => format!("{}: nothing to change", report.settings),
        (true, true) => format!("{}: dry run, nothing written", report.settings),
        (true, false) => format!("{}: written", report.settings),
    });
    Ok(Outcome::Ok)
}

/// One line of `hooks doctor`.
#[derive(Debug, Serialize)]
struct Check {
    name: String,
    ok: bool,
    detail: String,
}

/// What `hooks doctor --json` prints.
#[derive(Debug, Serialize)]
struct DoctorReport {
    settings: String,
    ok: bool,
    checks: Vec<Check>,
}

fn doctor(args: HooksDoctorArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    if !args.timeout.is_finite() || args.timeout <= 0.0 {
        return Err(Error::Usage("--timeout must be a number of seconds > 0".into()).into());
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let path = args
        .settings
        .unwrap_or_else(|| ws.root.join(".claude").join("settings.json"));
    let mut checks = Vec::new();
    let doc = if path.is_file() {
        load(&path)?.0
    } else {
        checks.push(Check {
            name: "settings".into(),
            ok: false,
            detail: format!(
                "{} does not exist; run `ctxkeep hooks install claude-code`",
                path.display()
            ),
        });
        json!({})
    };
    let found = settings::installed(&doc);

    // The commands run against a copy of the project, so checking writes
    // no checkpoint, session or event into the real one.
    let sandbox = Sandbox::new(&ws)?;
    for (event, command) in &found.hooks {
        let name = format!("hooks.{event}");
        let Some(command) = command else {
            checks.push(Check {
                name,
                ok: false,
                detail: "not installed; run `ctxkeep hooks install claude-code`".into(),
            });
            continue;
        };
        let run = sandbox.run(command, &sandbox.hook_payload(event, &ws), timeout);
        checks.push(Check {
            name,
            ok: run.is_ok(),
            detail: match run {
                Ok(()) => format!("{command}: runs"),
                Err(why) => format!("{command}: {why}"),
            },
        });
    }
    match &found.status_line {
        StatusLine::Ours(command) => {
            let run = sandbox.run_status_line(command, timeout);
            checks.push(Check {
                name: "statusLine".into(),
                ok: run.is_ok(),
                detail: match run {
                    Ok(line) => format!("{command}: {line}"),
                    Err(why) => format!("{command}: {why}"),
                },
            });
        }
        StatusLine::Theirs(command) => checks.push(Check {
            name: "statusLine".into(),
            ok: true,
            detail: format!(
                "yours ({command}); hooks take the window from the config or the model table"
            ),
        }),
        StatusLine::None => checks.push(Check {
            name: "statusLine".into(),
            ok: false,
            detail: "not installed; run `ctxkeep hooks install claude-code`".into(),
        }),
    }

    let failed = checks.iter().filter(|c| !c.ok).count();
    let report = DoctorReport {
        settings: path.display().to_string(),
        ok: failed == 0,
        checks,
    };
    ctx.out.json(&report)?;
    let text: Vec<String> = report
        .checks
        .iter()
        .map(|c| {
            format!(
                "{:<4}  {}: {}",
                if c.ok { "ok" } else { "FAIL" },
                c.name,
                c.detail
            )
        })
        .collect();
    ctx.out.data(&text.join("\n"))?;
    if failed == 0 {
        ctx.out.info(&format!(
            "{}: all {} checks passed",
            report.settings,
            report.checks.len()
        ));
        Ok(Outcome::Ok)
    } else {
        ctx.out.info(&format!(
            "{}: {failed} of {} checks failed",
            report.settings,
            report.checks.len()
        ));
        Ok(Outcome::No)
    }
}

/// A copy of the project's state file and a small transcript in a temp dir.
struct Sandbox {
    /// Removed when the checks end.
    _dir: tempfile::TempDir,
    state: PathBuf,
    transcript: PathBuf,
    cwd: PathBuf,
}

/// A Claude Code transcript with one main-chain reply (20,000 tokens).
const SAMPLE_TRANSCRIPT: &str = r#"{"parentUuid":null,"isSidechain":false,"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_doctor","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":990,"cache_read_input_tokens":19000,"output_tokens":5}},"uuid":"u-doctor","timestamp":"2026-01-01T00:00:00.000Z"}
"#;

impl Sandbox {
    fn new(ws: &Workspace) -> anyhow::Result<Sandbox> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", "cannot create", e))?;
        let state = dir.path().join(STATE_FILE);
        std::fs::copy(&ws.state_path, &state)
            .map_err(|e| Error::io(&ws.state_path, "cannot copy for the check", e))?;
        let transcript = dir.path().join("transcript.jsonl");
        std::fs::write(&transcript, SAMPLE_TRANSCRIPT)
            .map_err(|e| Error::io(&transcript, "cannot write", e))?;
        Ok(Sandbox {
            _dir: dir,
            state,
            transcript,
            cwd: ws.root.clone(),
        })
    }

    /// A payload in Claude Code's shape for `event`.
    fn hook_payload(&self, event: &str, ws: &Workspace) -> String {
        let mut p = json!({
            "session_id": "ctxkeep-doctor",
            "transcript_path": self.transcript,
            "cwd": ws.root,
            "hook_event_name": event,
            "permission_mode": "default",
        });
        let extra = match event {
            // `compact` renders the resume prompt when there is a checkpoint.
            "SessionStart" => json!({ "source": "compact" }),
            "UserPromptSubmit" => json!({ "prompt": "hello" }),
            "PostToolUse" => {
                json!({ "tool_name": "Bash", "tool_input": { "command": "true" }, "tool_response": {} })
            }
            "PreCompact" => json!({ "trigger": "manual", "custom_instructions": "" }),
            "SessionEnd" => json!({ "reason": "other" }),
            _ => json!({}),
        };
        if let (Some(p), Value::Object(extra)) = (p.as_object_mut(), extra) {
            p.extend(extra);
        }
        p.to_string()
    }

    /// Runs a hook command: it must exit 0, say nothing on stderr (a hook
    /// that failed open does), and print nothing or one JSON object.
    fn run(&self, command: &str, payload: &str, timeout: Duration) -> Result<(), String> {
        let out = self.spawn(command, payload, timeout)?;
        let stdout = out.stdout.trim();
        if !stdout.is_empty() && !serde_json::from_str::<Value>(stdout).is_ok_and(|v| v.is_object())
        {
            return Err(format!(
                "printed something that is not a JSON object: {}",
                first_line(stdout)
            ));
        }
        Ok(())
    }

    /// Runs the status-line command; returns the line it printed.
    fn run_status_line(&self, command: &str, timeout: Duration) -> Result<String, String> {
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

    fn spawn(&self, command: &str, stdin: &str, timeout: Duration) -> Result<Finished, String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&self.cwd)
            .env("CTXKEEP_STATE", &self.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start sh: {e}"))?;
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
