//! The tools: their arguments (with the JSON schemas the model reads), the
//! descriptions written for the model, and each call, made through the
//! service its command uses.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::Options;
use crate::domain::checkpoint::{Checkpoint, Fields};
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::handoff::{ack, resume};
use crate::pipeline::{record, status};
use crate::system::error::Error;
use crate::verify::report as verify;

pub const NAMES: &[&str] = &["checkpoint", "resume", "status", "verify", "ack"];

/// The trigger a checkpoint written through the server records.
const TRIGGER: &str = "mcp";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckpointArgs {
    /// Where the work is, in a few words (e.g. "implementing", "debugging the parser").
    phase: Option<String>,
    /// The task in hand, specific enough for a reader who has seen nothing of this session.
    active_task: Option<String>,
    /// Who is doing the work (e.g. "claude-code", a person's name).
    controlling_agent: Option<String>,
    /// The exact next step: a command to run, a file and function to change.
    next_action: Option<String>,
    /// Decisions made since the last commit, each with its reason. Replaces the list; omit to keep it.
    decisions: Option<Vec<String>>,
    /// What is undecided or blocked, each a question. Replaces the list; omit to keep it.
    open_questions: Option<Vec<String>>,
    /// Anything else the next reader needs.
    notes: Option<String>,
    /// Action items you finished since the last checkpoint: added to its done list and taken
    /// off its remaining list.
    done: Option<Vec<String>>,
    /// Action items still to do, each a concrete step: added to the remaining list carried
    /// over from the last checkpoint.
    remaining: Option<Vec<String>>,
    /// Empty the remaining list before adding `remaining` (to replace it).
    #[serde(default)]
    clear_remaining: bool,
    /// Your agent session's id, when you know it: its live budget and what its transcript
    /// shows you did are recorded too. Defaults to the server's session.
    session: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResumeArgs {
    /// Open a session in the chain, as starting from the checkpoint does: the prompt then
    /// carries a restore nonce to give to `ack`. Default false: only read the prompt.
    #[serde(default)]
    open_session: bool,
    /// The prompt's token budget (default: the project's `resume_max_tokens`).
    max_tokens: Option<usize>,
    /// The agent that will read the prompt, recorded with the session.
    agent: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    /// The session whose context gauge to show (default: the server's session).
    session: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VerifyArgs {
    /// Count the warnings that matter for a cold read as errors.
    #[serde(default)]
    strict: bool,
    /// The size check's token budget (default: the project's).
    max_tokens: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AckArgs {
    /// The restore nonce the resume prompt gave.
    nonce: String,
}

/// The JSON schema of `T`'s arguments, as a tool's input schema.
fn schema<T: JsonSchema>() -> Arc<serde_json::Map<String, Value>> {
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({}));
    let map = value
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut map: serde_json::Map<String, Value> = map
        .into_iter()
        .filter(|(k, _)| k != "$schema" && k != "title")
        .collect();
    map.entry("type").or_insert_with(|| json!("object"));
    // An argument left out is how a tool is told "no value": `null` as a
    // type too only confuses clients that read `type` as one string.
    for prop in map
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(|props| props.values_mut())
    {
        let one = match prop.get("type") {
            Some(Value::Array(types)) => {
                let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                (kept.len() == 1).then(|| kept[0].clone())
            }
            _ => None,
        };
        if let Some(t) = one {
            prop["type"] = t;
        }
    }
    Arc::new(map)
}

/// Every tool, with what the model reads about it.
pub fn list() -> Vec<Tool> {
    let read_only = |title: &str| {
        ToolAnnotations::with_title(title)
            .read_only(true)
            .open_world(false)
    };
    vec![
        Tool::new(
            "checkpoint",
            "Record where the work stands in project-state.md, so that a fresh session can continue \
             cold. Call it after a decision, before you stop or hand off, and when a ctxkeep stage \
             asks. Give the fields that changed; the rest carry over from the last checkpoint. \
             Keep the action items current: `remaining` adds steps still to do, `done` marks \
             steps finished. \
             The first checkpoint needs phase, active_task, controlling_agent and next_action; \
             one that would leave any of them empty is refused and nothing is written. Returns the new checkpoint's id and `verify`'s findings for it: fix any error at once \
             by calling `checkpoint` again with the field it names.",
            schema::<CheckpointArgs>(),
        )
        .with_annotations(
            ToolAnnotations::with_title("Write a checkpoint")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
        Tool::new(
            "resume",
            "The continuation prompt a fresh session starts from: the last checkpoint's phase, \
             task, next action, decisions and open questions, within a token budget. Call it at \
             the start of a session, or when you have lost track. Only reads, unless \
             `open_session` is true.",
            schema::<ResumeArgs>(),
        )
        .with_annotations(ToolAnnotations::with_title("Read the continuation prompt").open_world(false)),
        Tool::new(
            "status",
            "How full the session's context window is, which stage it reached (warn, checkpoint, \
             handoff), the last checkpoint and the last resume. Call it to decide whether to \
             checkpoint or hand off now.",
            schema::<StatusArgs>(),
        )
        .with_annotations(read_only("Show the context gauge")),
        Tool::new(
            "verify",
            "Check that the checkpoint is intact and can be read cold: each finding has a code, \
             the field it concerns and what to do. `ok` is false while there are errors.",
            schema::<VerifyArgs>(),
        )
        .with_annotations(read_only("Check the checkpoint")),
        Tool::new(
            "ack",
            "Confirm that you read the resume prompt, with the restore nonce it gave. Returns the \
             session acknowledged; a wrong nonce is an error.",
            schema::<AckArgs>(),
        )
        .with_annotations(
            ToolAnnotations::with_title("Acknowledge the restore")
                .read_only(false)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
    ]
}

/// The arguments of a call, or the usage error a bad one is.
fn args<T: DeserializeOwned>(tool: &str, value: Value) -> anyhow::Result<T> {
    serde_json::from_value(value).map_err(|e| {
        Error::Usage(format!("{tool}: the arguments do not fit its schema: {e}")).into()
    })
}

/// A result: `text` for the model, `data` as the structured content.
fn done(text: String, data: impl serde::Serialize) -> anyhow::Result<CallToolResult> {
    let mut data = serde_json::to_value(data)?;
    crate::system::redact::redact_json(&mut data);
    let text = crate::system::redact::redact(&text);
    let mut result = CallToolResult::success(vec![ContentBlock::text(
        crate::system::recorded::escape_controls(&text).into_owned(),
    )]);
    result.structured_content = Some(data);
    Ok(result)
}

/// Runs the tool `name` on the project in `ws`.
pub fn call(
    name: &str,
    value: Value,
    ws: &Workspace,
    opts: &Options,
) -> anyhow::Result<CallToolResult> {
    match name {
        "checkpoint" => checkpoint(args(name, value)?, ws, opts),
        "resume" => {
            let a: ResumeArgs = args(name, value)?;
            let report = resume::resume(
                ws,
                &resume::Options {
                    force: false,
                    max_tokens: a.max_tokens,
                    agent: a.agent,
                    peek: !a.open_session,
                    ..resume::Options::default()
                },
                &ws.out,
            )?;
            done(report.prompt.clone(), &report)
        }
        "status" => {
            let a: StatusArgs = args(name, value)?;
            // No session named: the one most recently tracked, as `ctxkeep status` does.
            let session = a.session.or_else(|| opts.session.clone());
            let report = status::status(ws, session.as_deref(), &ws.out)?;
            done(status::human(&report), &report)
        }
        "verify" => {
            let a: VerifyArgs = args(name, value)?;
            let report = verify_report(
                ws,
                &verify::Options {
                    strict: a.strict,
                    max_tokens: a.max_tokens,
                    probe: None,
                    staged: false,
                    errors_only: false,
                },
            )?;
            done(verify::human(&report, &ws.display_state()), &report)
        }
        "ack" => {
            let a: AckArgs = args(name, value)?;
            let report = ack::ack(ws, ack::By::Nonce(&a.nonce), "mcp")?;
            done(report.message(), &report)
        }
        other => Err(Error::Usage(format!("no tool {other:?}")).into()),
    }
}

/// The call's session, else the server's, else the default one.
fn session_of(given: Option<String>, opts: &Options) -> String {
    given
        .or_else(|| opts.session.clone())
        .unwrap_or_else(|| crate::domain::session::DEFAULT_SESSION.to_string())
}

fn checkpoint(a: CheckpointArgs, ws: &Workspace, opts: &Options) -> anyhow::Result<CallToolResult> {
    let session = crate::domain::session::validate_id(&session_of(a.session, opts))?;
    // The session's transcript (its hooks recorded where it is) says what
    // the session did.
    let transcript: Option<PathBuf> = crate::domain::session::load(ws, &session)
        .ok()
        .flatten()
        .and_then(|s| s.transcript().map(PathBuf::from))
        .filter(|p| p.is_file());
    let fields = Fields {
        phase: a.phase,
        active_task: a.active_task,
        controlling_agent: a.controlling_agent,
        next_action: a.next_action,
        decisions: a.decisions,
        open_questions: a.open_questions,
        notes: a.notes,
        done: a.done,
        remaining: a.remaining,
        clear_remaining: a.clear_remaining.then_some(true),
        add_decisions: Vec::new(),
    };
    let written = record::by_hand(
        ws,
        record::Request {
            fields,
            trigger: TRIGGER,
            session: &session,
            transcript: transcript.as_deref(),
        },
        &ws.out,
    )?;
    let report = verify_report(ws, &verify::Options::default())?;
    let text = format!(
        "wrote {}\n{}",
        written.id,
        verify::human(&report, &ws.display_state())
    );
    done(
        text,
        json!({ "id": written.id, "checkpoint": written, "verify": report }),
    )
}

/// `verify`'s report; a file with conflict markers gets its CK123 findings.
fn verify_report(ws: &Workspace, opts: &verify::Options) -> anyhow::Result<verify::VerifyReport> {
    let text = StateFile::read_text(&ws.state_path)?;
    match StateFile::from_text(&ws.state_path, text.clone()) {
        Ok(sf) => verify::verify(ws, &sf, opts),
        Err(Error::Conflicted { .. }) => Ok(verify::conflicted(ws, &text)),
        Err(e) => Err(e.into()),
    }
}

/// The state file's text, for the `ctxkeep://state` resource.
pub fn state_text(ws: &Workspace) -> anyhow::Result<String> {
    let text =
        crate::system::fsutil::read_text(&ws.state_path, crate::domain::state::MAX_FILE_BYTES)?;
    Ok(crate::system::redact::redact(&text).into_owned())
}

/// The current checkpoint record, for the `ctxkeep://checkpoint` resource.
pub fn current_checkpoint(ws: &Workspace) -> anyhow::Result<Checkpoint> {
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    sf.fm.checkpoint.clone().ok_or_else(|| {
        Error::no_input(
            &ws.state_path,
            "no checkpoint yet; write one with `ctxkeep checkpoint`",
        )
        .into()
    })
}

/// The newest checkpoint of an agent session's line of work, for
/// `ctxkeep://checkpoint?session=ID`.
pub fn line_checkpoint(ws: &Workspace, session: &str) -> anyhow::Result<Checkpoint> {
    let current = current_checkpoint(ws)?;
    let session = crate::domain::session::validate_id(session)?;
    crate::domain::lines::own(ws, Some(&current), &session).ok_or_else(|| {
        Error::no_input(
            &ws.state_path,
            format!("no checkpoint of session {session:?}"),
        )
        .into()
    })
}

/// The `resume` prompt: as `ctxkeep resume` prints it, a session opened.
pub fn resume_prompt(ws: &Workspace, agent: Option<String>) -> anyhow::Result<(String, String)> {
    let report = resume::resume(
        ws,
        &resume::Options {
            agent,
            ..Default::default()
        },
        &ws.out,
    )?;
    Ok((
        format!("Continue from {}", report.checkpoint.id),
        report.prompt,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::workspace::Locate;
    use crate::handoff::test_project::initialized;
    use crate::system::output::Output;

    const NEXT: &str = "run cargo test parser and fix the blank-line case in src/parse.rs";

    fn options(ws: &Workspace) -> Options {
        Options {
            locate: Locate {
                state: Some(ws.state_path.clone()),
                lock_timeout: 5.0,
                out: Output::SILENT,
            },
            session: None,
        }
    }

    fn text_of(result: &CallToolResult) -> String {
        let value = serde_json::to_value(&result.content).unwrap();
        value[0]["text"].as_str().unwrap_or_default().to_string()
    }

    fn checkpoint_args() -> Value {
        json!({
            "phase": "implementing",
            "active_task": "make the widget parser accept blank lines",
            "controlling_agent": "claude-code",
            "next_action": NEXT,
        })
    }

    #[test]
    fn the_tools_listed_are_the_names_with_plain_object_schemas() {
        let tools = list();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, NAMES);
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
            assert!(!tool.input_schema.contains_key("$schema"), "{}", tool.name);
            for (arg, prop) in tool.input_schema["properties"].as_object().unwrap() {
                // An optional argument is left out, never given as null.
                assert!(!prop["type"].is_array(), "{}.{arg}: {prop}", tool.name);
            }
        }
        let read_only = |name: &str| {
            tools
                .iter()
                .find(|t| t.name == name)
                .and_then(|t| t.annotations.as_ref()?.read_only_hint)
        };
        assert_eq!(read_only("status"), Some(true));
        assert_eq!(read_only("verify"), Some(true));
        assert_eq!(read_only("checkpoint"), Some(false));
    }

    #[test]
    fn an_unknown_tool_or_argument_is_a_usage_error() {
        let (_dir, ws) = initialized();
        let err = call("nope", json!({}), &ws, &options(&ws)).unwrap_err();
        assert_eq!(err.to_string(), "no tool \"nope\"");
        let err = call("status", json!({ "sesion": "s1" }), &ws, &options(&ws))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("status: the arguments do not fit its schema: unknown field `sesion`"),
            "{err}"
        );
    }

    #[test]
    fn a_checkpoint_call_writes_one_that_resume_and_the_resources_give_back() {
        let (_dir, ws) = initialized();
        let err = current_checkpoint(&ws).unwrap_err().to_string();
        assert!(err.contains("no checkpoint yet"), "{err}");
        let opts = options(&ws);
        let wrote = call("checkpoint", checkpoint_args(), &ws, &opts).unwrap();
        let id = wrote.structured_content.as_ref().unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(text_of(&wrote).starts_with(&format!("wrote {id}\n")));
        assert_eq!(current_checkpoint(&ws).unwrap().next_action, NEXT);

        // `resume` only reads unless asked to open a session.
        let peek = call("resume", json!({}), &ws, &opts).unwrap();
        assert!(text_of(&peek).contains(NEXT));
        assert!(peek.structured_content.as_ref().unwrap()["nonce"].is_null());
        let opened = call("resume", json!({ "open_session": true }), &ws, &opts).unwrap();
        let nonce = opened.structured_content.as_ref().unwrap()["nonce"]
            .as_str()
            .expect("a nonce")
            .to_string();
        let acked = call("ack", json!({ "nonce": nonce }), &ws, &opts).unwrap();
        assert_eq!(acked.is_error, Some(false));

        let (title, prompt) = resume_prompt(&ws, None).unwrap();
        assert_eq!(title, format!("Continue from {id}"));
        assert!(prompt.contains(NEXT));
        let err = line_checkpoint(&ws, "s-elsewhere").unwrap_err().to_string();
        assert!(
            err.contains("no checkpoint of session \"s-elsewhere\""),
            "{err}"
        );
    }

    #[test]
    fn the_state_resource_is_redacted() {
        let (_dir, ws) = initialized();
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
        let mut text = std::fs::read_to_string(&ws.state_path).unwrap();
        text.push_str(&format!("\nThe CI token is {token}.\n"));
        std::fs::write(&ws.state_path, text).unwrap();
        let shown = state_text(&ws).unwrap();
        assert!(!shown.contains(&token), "{shown}");
        assert!(shown.contains("[REDACTED:github]"), "{shown}");
    }
}
