//! `verify --probe CMD`: the cold-read test done by a fresh reader.
//!
//! The resume prompt (rendered as `resume` would, without opening a session)
//! is redacted and given on stdin, with an instruction, to `sh -c CMD` (an
//! agent CLI such as `claude -p`, or any script). The reader answers with one
//! JSON object: the phase, active task and next action as it understood
//! them, and what it could not resolve without the lost conversation. Each
//! restated field is compared with the checkpoint's (CK305), each unresolved
//! phrase becomes a finding (CK304), and a command that fails, times out or
//! answers nothing usable is a finding of its own (CK306), never an error.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::domain::checkpoint::{Checkpoint, Field};
use crate::verify::checks::{Finding, Severity};

/// `--probe-timeout`'s default, in seconds.
pub const DEFAULT_TIMEOUT_SECS: f64 = 120.0;

/// A restatement matches when its token overlap (Dice coefficient over the
/// sets of normalised words) reaches this.
pub const OVERLAP_THRESHOLD: f64 = 0.5;

/// Most of the answer kept (and parsed); a reader's answer is a few KiB.
const MAX_ANSWER_BYTES: usize = 256 * 1024;
/// The end of stderr quoted in a CK306 finding.
const STDERR_TAIL_CHARS: usize = 600;
/// Parse attempts on `{` positions before giving up on a long garbage answer.
const MAX_PARSE_ATTEMPTS: usize = 4096;

/// What follows the resume prompt on the probe's stdin.
pub const INSTRUCTION: &str = r#"
---
You are checking whether the checkpoint above can be read cold. Do not run any tool, do not start the work, and do not use anything but the text above.

Answer with exactly one JSON object and nothing else, of this shape:
{"phase": "...", "active_task": "...", "next_action": "...", "unresolved": [{"field": "...", "phrase": "...", "why": "..."}]}

- phase, active_task, next_action: each as you understood it, in one sentence; keep the checkpoint's own words where they are clear.
- unresolved: every word or phrase you could not act on without the conversation that produced the checkpoint (a reference to something never named, a placeholder, a term never defined). "field" is the field it is in (phase, active_task, controlling_agent, next_action, decisions, open_questions or notes), "phrase" is the exact text quoted from it, "why" says in a few words what is missing. An empty list when everything is clear.
"#;

/// What the probe runs, and how strictly its findings count.
#[derive(Debug, Clone)]
pub struct Options {
    /// Run through `sh -c`.
    pub command: String,
    pub timeout: Duration,
    /// `verify --strict`: CK304, CK305 and CK306 are errors, not warnings.
    pub strict: bool,
}

/// How the probe command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It answered with a usable JSON object.
    Answered,
    /// It exited with a non-zero status (or was killed by a signal).
    Failed,
    /// Still running after the timeout; its process group was killed.
    TimedOut,
    /// It exited 0 but printed no JSON object with the expected keys.
    Unusable,
    /// `sh` could not be started.
    NotStarted,
}

/// The reader's answer, as parsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    pub phase: String,
    pub active_task: String,
    pub next_action: String,
    pub unresolved: Vec<Unresolved>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unresolved {
    pub field: String,
    pub phrase: String,
    pub why: String,
}

/// Which comparison decided a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Equal after normalising case, white space and punctuation.
    Equal,
    /// Token overlap (Dice coefficient) against `OVERLAP_THRESHOLD`.
    Overlap,
}

/// One restated field against the checkpoint's.
#[derive(Debug, Clone, Serialize)]
pub struct FieldCheck {
    pub field: &'static str,
    /// The checkpoint's value, as the reader saw it (redacted).
    pub expected: String,
    pub restated: String,
    pub method: Method,
    /// The overlap, 1.0 when equal.
    pub overlap: f64,
    pub matches: bool,
}

/// Everything the probe did, for `verify --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub command: String,
    pub status: Status,
    /// The command's exit code (null when killed or not started).
    pub exit_code: Option<i32>,
    pub elapsed_ms: u64,
    /// Its stdout as it came (redacted, cut at 256 KiB).
    pub raw_answer: String,
    pub answer: Option<Answer>,
    pub fields: Vec<FieldCheck>,
    /// The end of its stderr (redacted).
    pub stderr_tail: String,
}

impl Report {
    /// One line for the human report's notes.
    pub fn summary(&self) -> String {
        let secs = self.elapsed_ms as f64 / 1000.0;
        match self.status {
            Status::Answered => {
                let fields: Vec<String> = self
                    .fields
                    .iter()
                    .map(|f| {
                        let how = match f.method {
                            Method::Equal => "equal".to_string(),
                            Method::Overlap => format!("overlap {:.2}", f.overlap),
                        };
                        let verdict = if f.matches { "" } else { ", differs" };
                        format!("{} {how}{verdict}", f.field)
                    })
                    .collect();
                let n = self.answer.as_ref().map_or(0, |a| a.unresolved.len());
                format!(
                    "probe answered in {secs:.1} s: {}; {n} unresolved phrase(s)",
                    fields.join(", ")
                )
            }
            Status::Failed => format!("probe failed after {secs:.1} s"),
            Status::TimedOut => format!("probe timed out after {secs:.1} s"),
            Status::Unusable => format!("probe answered nothing usable in {secs:.1} s"),
            Status::NotStarted => "probe could not be started".to_string(),
        }
    }
}

/// What goes to the probe's stdin: the prompt and the instruction, with
/// every secret redacted.
pub fn stdin_for(prompt: &str) -> String {
    crate::system::redact::redact(&format!("{}\n{INSTRUCTION}", prompt.trim_end())).into_owned()
}

/// Runs the probe on `prompt` (the rendered resume prompt) in `cwd`, checks
/// its answer against `checkpoint`, and returns the report and its findings.
/// Never fails: a command that cannot help is a CK306 finding.
pub fn probe(
    opts: &Options,
    prompt: &str,
    checkpoint: &Checkpoint,
    cwd: &Path,
) -> (Report, Vec<Finding>) {
    let input = stdin_for(prompt);
    let started = Instant::now();
    let run = execute(&opts.command, &input, opts.timeout, cwd);
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let raw = crate::system::redact::redact(&run.stdout).into_owned();
    let stderr_tail = tail(
        &crate::system::redact::redact(&run.stderr),
        STDERR_TAIL_CHARS,
    );
    let answer = parse_answer(&raw);
    let status = match (&run.end, &answer) {
        (End::NotStarted(_), _) => Status::NotStarted,
        (End::TimedOut, _) => Status::TimedOut,
        (End::Exited(Some(0)), Some(_)) => Status::Answered,
        (End::Exited(Some(0)), None) => Status::Unusable,
        (End::Exited(_), _) => Status::Failed,
    };
    let mut report = Report {
        command: crate::system::redact::redact(&opts.command).into_owned(),
        status,
        exit_code: match run.end {
            End::Exited(c) => c,
            _ => None,
        },
        elapsed_ms,
        raw_answer: raw,
        answer: None,
        fields: Vec::new(),
        stderr_tail,
    };
    let severity = if opts.strict {
        Severity::Error
    } else {
        Severity::Warning
    };
    let mut findings = Vec::new();
    if status != Status::Answered {
        findings.push(failure(&report, &run.end, opts, severity));
        return (report, findings);
    }
    let answer = answer.expect("answered");
    // The reader saw the redacted prompt: compare with what it saw.
    let seen = |s: &str| crate::system::redact::redact(s).into_owned();
    for (field, expected, restated) in [
        (Field::Phase.key(), &checkpoint.phase, &answer.phase),
        (
            Field::ActiveTask.key(),
            &checkpoint.active_task,
            &answer.active_task,
        ),
        (
            Field::NextAction.key(),
            &checkpoint.next_action,
            &answer.next_action,
        ),
    ] {
        let check = compare(field, &seen(expected), restated);
        if !check.matches {
            findings.push(Finding::new(
                "CK305",
                severity,
                Some(field),
                format!(
                    "a fresh reader restated `{field}` as {:?}, which does not match the checkpoint's {:?} (token overlap {:.2} < {OVERLAP_THRESHOLD}); say it so that it reads one way",
                    short(&check.restated), short(&check.expected), check.overlap
                ),
            ));
        }
        report.fields.push(check);
    }
    for u in &answer.unresolved {
        let field = field_of(u, checkpoint);
        let label = field.map(|f| format!("`{f}`")).unwrap_or_else(|| {
            if u.field.trim().is_empty() {
                "the checkpoint".to_string()
            } else {
                format!("{:?}", u.field.trim())
            }
        });
        let why = if u.why.trim().is_empty() {
            String::new()
        } else {
            format!(" ({})", short(u.why.trim()))
        };
        findings.push(Finding::new(
            "CK304",
            severity,
            field,
            format!(
                "a fresh reader could not resolve {:?} in {label}{why}; say what it refers to",
                short(u.phrase.trim())
            ),
        ));
    }
    report.answer = Some(answer);
    (report, findings)
}

fn failure(report: &Report, end: &End, opts: &Options, severity: Severity) -> Finding {
    let what = match end {
        End::NotStarted(why) => format!("could not be started ({why})"),
        End::TimedOut => format!(
            "was still running after {} s and was stopped (raise --probe-timeout)",
            opts.timeout.as_secs_f64()
        ),
        End::Exited(Some(0)) => {
            "exited 0 but printed no JSON object with phase, active_task and next_action"
                .to_string()
        }
        End::Exited(Some(c)) => format!("failed with exit code {c}"),
        End::Exited(None) => "was killed by a signal".to_string(),
    };
    let stderr = match report.stderr_tail.trim() {
        "" => "; it printed nothing on stderr".to_string(),
        t => format!("; its stderr ends with: {t}"),
    };
    Finding::new(
        "CK306",
        severity,
        None,
        format!(
            "the probe command `{}` {what}, so the checkpoint was not read by a fresh reader{stderr}",
            report.command
        ),
    )
}

/// The checkpoint field an unresolved phrase is in: the one the reader
/// named, else the first whose text holds the phrase.
fn field_of(u: &Unresolved, c: &Checkpoint) -> Option<&'static str> {
    // The action items are not in what the reader was asked about.
    let fields = || {
        Field::ALL
            .into_iter()
            .filter(|f| !matches!(f, Field::Done | Field::Remaining))
    };
    let named = u.field.trim().to_lowercase().replace([' ', '-'], "_");
    let alias = match named.as_str() {
        "task" | "active task" => Some(Field::ActiveTask),
        "next" | "next_step" => Some(Field::NextAction),
        "questions" | "open_question" => Some(Field::OpenQuestions),
        "decision" => Some(Field::Decisions),
        "agent" => Some(Field::ControllingAgent),
        other => fields().find(|f| f.key() == other),
    };
    if let Some(f) = alias {
        return Some(f.key());
    }
    let phrase = u.phrase.trim().to_lowercase();
    if phrase.is_empty() {
        return None;
    }
    let value = |f: Field| match f.text(c) {
        Some(text) => text.clone(),
        None => f.items(c).map(|l| l.join("\n")).unwrap_or_default(),
    };
    fields()
        .find(|f| value(*f).to_lowercase().contains(&phrase))
        .map(Field::key)
}

/// Compares a restated field with the checkpoint's: equal after
/// normalising case, white space and punctuation; otherwise the Dice
/// coefficient of the two sets of normalised words must reach
/// `OVERLAP_THRESHOLD`.
pub fn compare(field: &'static str, expected: &str, restated: &str) -> FieldCheck {
    let (a, b) = (normalise(expected), normalise(restated));
    let (method, overlap) = if a == b {
        (Method::Equal, 1.0)
    } else {
        (Method::Overlap, dice(&a, &b))
    };
    FieldCheck {
        field,
        expected: expected.to_string(),
        restated: restated.to_string(),
        method,
        overlap: (overlap * 1000.0).round() / 1000.0,
        matches: method == Method::Equal || overlap >= OVERLAP_THRESHOLD,
    }
}

/// Lower case, every run of punctuation and white space one space.
fn normalise(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn dice(a: &str, b: &str) -> f64 {
    use std::collections::BTreeSet;
    let x: BTreeSet<&str> = a.split(' ').filter(|w| !w.is_empty()).collect();
    let y: BTreeSet<&str> = b.split(' ').filter(|w| !w.is_empty()).collect();
    if x.is_empty() || y.is_empty() {
        return 0.0;
    }
    2.0 * x.intersection(&y).count() as f64 / (x.len() + y.len()) as f64
}

/// The last JSON object in `text` that has `phase`, `active_task` and
/// `next_action`: the answer may sit in prose or in a ```json fence, and a
/// reader that corrects itself gives its final answer last.
pub fn parse_answer(text: &str) -> Option<Answer> {
    let mut last = None;
    let mut pos = 0;
    let mut attempts = 0;
    while let Some(i) = text[pos..].find('{').map(|i| pos + i) {
        attempts += 1;
        if attempts > MAX_PARSE_ATTEMPTS {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                let end = i + stream.byte_offset();
                match answer_of(&v) {
                    Some(a) => {
                        last = Some(a);
                        pos = end; // objects inside it are not answers
                    }
                    None => pos = i + 1,
                }
            }
            _ => pos = i + 1,
        }
    }
    last
}

fn answer_of(v: &Value) -> Option<Answer> {
    let o = v.as_object()?;
    let text = |k: &str| -> Option<String> {
        match o.get(k)? {
            Value::String(s) => Some(s.trim().to_string()),
            Value::Null => Some(String::new()),
            other => Some(other.to_string()),
        }
    };
    let phase = text(Field::Phase.key())?;
    let active_task = text(Field::ActiveTask.key())?;
    let next_action = text(Field::NextAction.key())?;
    let unresolved = match o.get("unresolved") {
        Some(Value::Array(items)) => items.iter().filter_map(unresolved_of).collect(),
        _ => Vec::new(),
    };
    Some(Answer {
        phase,
        active_task,
        next_action,
        unresolved,
    })
}

fn unresolved_of(v: &Value) -> Option<Unresolved> {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").trim().to_string();
    let u = match v {
        Value::String(p) => Unresolved {
            field: String::new(),
            phrase: p.trim().to_string(),
            why: String::new(),
        },
        Value::Object(o) => Unresolved {
            field: s(o.get("field")),
            phrase: s(o.get("phrase")),
            why: s(o.get("why")),
        },
        _ => return None,
    };
    (!u.phrase.is_empty()).then_some(u)
}

/// At most 160 characters, for messages.
fn short(s: &str) -> String {
    let mut it = s.chars();
    let head: String = it.by_ref().take(160).collect();
    if it.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// The last `n` characters, from a line start when one is near.
fn tail(s: &str, n: usize) -> String {
    let s = s.trim_end();
    let count = s.chars().count();
    if count <= n {
        return s.trim_start().to_string();
    }
    let cut: String = s.chars().skip(count - n).collect();
    format!("…{}", cut.trim_start())
}

enum End {
    Exited(Option<i32>),
    TimedOut,
    NotStarted(String),
}

struct Run {
    end: End,
    stdout: String,
    stderr: String,
}

/// How long what the reader leaves running gets between SIGTERM and SIGKILL.
const LEFTOVER_GRACE: Duration = Duration::from_secs(2);

/// Runs `sh -c command` in its own process group, `input` on stdin, and
/// stops the whole group when it exits, when `timeout` passes, or at Ctrl-C
/// (then verify ends as it would have): an agent CLI may start children
/// that would otherwise live on.
fn execute(command: &str, input: &str, timeout: Duration, cwd: &Path) -> Run {
    // Caught from before the start, so that no Ctrl-C can leave the reader
    // running on its own.
    crate::system::process::with_signals_caught(|| run_reader(command, input, timeout, cwd))
}

fn run_reader(command: &str, input: &str, timeout: Duration, cwd: &Path) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match crate::system::process::own_group(&mut cmd).spawn() {
        Ok(c) => c,
        Err(e) => {
            return Run {
                end: End::NotStarted(format!("cannot run sh: {e}")),
                stdout: String::new(),
                stderr: String::new(),
            }
        }
    };
    // Written from a thread: a command that does not read its stdin must not
    // block us, and one that exits early only closes the pipe.
    let stdin = child.stdin.take().map(|mut pipe| {
        let input = input.to_string();
        std::thread::spawn(move || {
            let _ = pipe.write_all(input.as_bytes());
        })
    });
    let stdout = collect(child.stdout.take());
    let stderr = collect(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let end = match crate::system::process::wait(&mut child, Some(deadline), true, LEFTOVER_GRACE) {
        Ok(w) => match w.stopped {
            Some(crate::system::process::Stopped::Deadline) => End::TimedOut,
            Some(crate::system::process::Stopped::Interrupt) => End::Exited(None),
            None => End::Exited(w.status.code()),
        },
        Err(e) => {
            let _ = crate::system::process::terminate(&mut child, Duration::ZERO);
            End::NotStarted(format!("cannot wait for it: {e}"))
        }
    };
    drop(stdin);
    // A grandchild outside the group may keep the pipes open: wait a little
    // for the rest of the output, then take what has come.
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline && !(stdout.done() && stderr.done()) {
        std::thread::sleep(Duration::from_millis(5));
    }
    Run {
        end,
        stdout: stdout.text(),
        stderr: stderr.text(),
    }
}

/// A pipe read to its end (or `MAX_ANSWER_BYTES`) by a thread.
struct Collected {
    buf: Arc<Mutex<(Vec<u8>, bool)>>,
}

impl Collected {
    fn done(&self) -> bool {
        self.buf.lock().map(|b| b.1).unwrap_or(true)
    }

    fn text(&self) -> String {
        let b = self.buf.lock().map(|b| b.0.clone()).unwrap_or_default();
        String::from_utf8_lossy(&b).into_owned()
    }
}

fn collect<R: Read + Send + 'static>(pipe: Option<R>) -> Collected {
    let buf = Arc::new(Mutex::new((Vec::new(), false)));
    let shared = Arc::clone(&buf);
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        if let Some(mut p) = pipe {
            loop {
                match p.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let Ok(mut b) = shared.lock() else { break };
                        // Past the cap the pipe is drained but not kept.
                        let room = MAX_ANSWER_BYTES.saturating_sub(b.0.len());
                        b.0.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
            }
        }
        if let Ok(mut b) = shared.lock() {
            b.1 = true;
        }
    });
    Collected { buf }
}

/// `verify --probe`: renders the resume prompt as `resume` would (no session
/// opened, nothing logged), runs the probe in the project's root, adds its
/// findings. `None` when there is no readable checkpoint to probe.
pub fn for_verify(
    ws: &crate::domain::workspace::Workspace,
    sf: &crate::domain::state::StateFile,
    opts: &Options,
    max_tokens: Option<usize>,
    findings: &mut Vec<Finding>,
) -> anyhow::Result<Option<Report>> {
    let Some(checkpoint) = sf.fm.checkpoint.as_ref() else {
        return Ok(None);
    };
    if findings
        .iter()
        .any(|f| f.code == "CK001" || f.code == "CK002")
    {
        return Ok(None);
    }
    let config = crate::domain::config::Config::from_front(&sf.fm);
    let budget = max_tokens.unwrap_or(config.resume_max_tokens);
    let rendered = crate::handoff::prompt::render_prompt(ws, sf, checkpoint, &config, budget)?;
    let (report, mut found) = probe(opts, &rendered.prompt, checkpoint, &ws.root);
    for f in &mut found {
        if let Some(field) = &f.field {
            f.line = sf.nested_key_line("checkpoint", field);
        }
    }
    findings.extend(found);
    Ok(Some(report))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint() -> Checkpoint {
        Checkpoint {
            phase: "implementing the parser".into(),
            active_task: "split front matter in src/state.rs".into(),
            next_action: "run cargo test and fix the CRLF case".into(),
            ..Default::default()
        }
    }

    /// Runs the probe with a fake reader: a shell script written here.
    fn run_script(script: &str, timeout: Duration) -> (Report, Vec<Finding>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("reader.sh"), script).unwrap();
        let opts = Options {
            command: "sh reader.sh".into(),
            timeout,
            strict: false,
        };
        let (r, f) = probe(&opts, "the prompt", &checkpoint(), dir.path());
        (r, f, dir)
    }

    fn run(script: &str) -> (Report, Vec<Finding>) {
        let (r, f, _d) = run_script(script, Duration::from_secs(20));
        (r, f)
    }

    const GOOD: &str = r#"{"phase": "Implementing the parser.", "active_task": "split the front matter in src/state.rs", "next_action": "run cargo test and fix the CRLF case", "unresolved": []}"#;

    #[test]
    fn a_good_answer_gives_no_finding() {
        let (r, f) = run(&format!("cat > /dev/null\necho '{GOOD}'\n"));
        assert_eq!(r.status, Status::Answered, "{r:?}");
        assert!(f.is_empty(), "{f:?}");
        let methods: Vec<Method> = r.fields.iter().map(|x| x.method).collect();
        assert_eq!(methods, [Method::Equal, Method::Overlap, Method::Equal]);
        assert!(r.fields.iter().all(|x| x.matches));
        assert!(r.raw_answer.contains("CRLF"));
    }

    #[test]
    fn an_answer_in_a_fence_inside_prose_takes_the_last_object() {
        let script = format!(
            "cat > /dev/null\ncat <<'END'\nSure. First draft: {{\"phase\": \"x\", \"active_task\": \"y\", \"next_action\": \"z\"}}\nFinal:\n```json\n{GOOD}\n```\nHope this helps {{ not json\nEND\n"
        );
        let (r, f) = run(&script);
        assert_eq!(r.status, Status::Answered, "{r:?}");
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn a_mismatching_field_is_ck305_naming_the_field() {
        let answer = GOOD.replace(
            "run cargo test and fix the CRLF case",
            "deploy the website to production",
        );
        let (_, f) = run(&format!("echo '{answer}'\n"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].code, "CK305");
        assert_eq!(f[0].field.as_deref(), Some("next_action"));
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].message.contains("deploy the website"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn unresolved_phrases_become_ck304_with_field_and_phrase() {
        let answer = GOOD.replace(
            r#""unresolved": []"#,
            r#""unresolved": [{"field": "next_action", "phrase": "the CRLF case", "why": "which case is never said"}, {"phrase": "front matter", "why": "undefined"}]"#,
        );
        let (_, f) = run(&format!("echo '{answer}'\n"));
        let codes: Vec<&str> = f.iter().map(|x| x.code).collect();
        assert_eq!(codes, ["CK304", "CK304"], "{f:?}");
        assert_eq!(f[0].field.as_deref(), Some("next_action"));
        assert!(f[0].message.contains("the CRLF case"));
        assert!(f[0].message.contains("which case is never said"));
        // No field named: the one whose text holds the phrase.
        assert_eq!(f[1].field.as_deref(), Some("active_task"));
    }

    #[test]
    fn strict_makes_probe_findings_errors() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            command: "echo '{\"phase\":\"a\",\"active_task\":\"b\",\"next_action\":\"c\"}'".into(),
            timeout: Duration::from_secs(20),
            strict: true,
        };
        let (_, f) = probe(&opts, "p", &checkpoint(), dir.path());
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f
            .iter()
            .all(|x| x.code == "CK305" && x.severity == Severity::Error));
    }

    #[test]
    fn a_failing_command_is_ck306_with_its_stderr_tail() {
        let (r, f) = run("echo 'model not found: nope' >&2\nexit 3\n");
        assert_eq!(r.status, Status::Failed);
        assert_eq!(r.exit_code, Some(3));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, "CK306");
        assert!(f[0].message.contains("exit code 3"), "{}", f[0].message);
        assert!(f[0].message.contains("model not found: nope"));
    }

    #[test]
    fn a_timeout_kills_the_process_group() {
        let started = Instant::now();
        let (r, f, dir) = run_script(
            "(sleep 30; touch late) &\nsleep 30\n",
            Duration::from_millis(300),
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(r.status, Status::TimedOut);
        assert_eq!(f[0].code, "CK306");
        assert!(f[0].message.contains("--probe-timeout"));
        std::thread::sleep(Duration::from_millis(200));
        assert!(!dir.path().join("late").exists());
    }

    #[test]
    fn garbage_output_is_unusable() {
        let (r, f) = run("echo 'I cannot help with that {\"phase\": 1'\n");
        assert_eq!(r.status, Status::Unusable);
        assert_eq!(f[0].code, "CK306");
        assert!(f[0].message.contains("no JSON object"), "{}", f[0].message);
    }

    #[test]
    fn a_secret_never_reaches_the_probe() {
        let secret = ["gh", "p_"].concat() + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7j";
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            command: "cat > seen.txt".into(),
            timeout: Duration::from_secs(20),
            strict: false,
        };
        let prompt = format!("- Next action: push with token {secret}\n");
        let _ = probe(&opts, &prompt, &checkpoint(), dir.path());
        let seen = std::fs::read_to_string(dir.path().join("seen.txt")).unwrap();
        assert!(seen.contains("push with token"), "{seen}");
        assert!(!seen.contains(&secret), "{seen}");
        assert!(seen.contains("exactly one JSON object"));
    }

    #[test]
    fn comparison_is_equal_after_normalising_else_overlap() {
        let c = compare(
            "phase",
            "Implementing the parser.",
            "implementing  THE parser",
        );
        assert_eq!((c.method, c.matches), (Method::Equal, true));
        let c = compare("phase", "implementing the parser", "writing docs");
        assert_eq!((c.method, c.matches), (Method::Overlap, false));
    }
}
