//! `ctxkeep status`: a session's gauge, stage and last checkpoint. Reads
//! only; takes no lock.

use serde::Serialize;

use super::track::{Fired, Report};
use super::Ctx;
use crate::cli::StatusArgs;
use crate::config::Config;
use crate::output::{fmt_num, gauge, thousands};
use crate::session;
use crate::state::StateFile;
use crate::workspace::Workspace;

#[derive(Debug, Serialize)]
struct StatusReport {
    #[serde(flatten)]
    report: Report,
    /// False when the session was never tracked.
    tracked: bool,
    updated_at: Option<String>,
    last_checkpoint: Option<CheckpointRef>,
}

/// The last checkpoint, as `status` and `statusline` show it.
#[derive(Debug, Serialize)]
pub struct CheckpointRef {
    pub id: String,
    pub created_at: String,
}

pub fn run(args: StatusArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    let ws = Workspace::resolve(&ctx.global, false)?;
    let id = session::validate_id(&args.session)?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);
    let s = session::load(&ws, &id)?;
    let last_checkpoint = sf.fm.checkpoint.as_ref().map(|c| CheckpointRef {
        id: c.id.clone(),
        created_at: c.created_at.clone(),
    });
    let report = match &s {
        Some(s) => Report::of(s, &config.stages, s.fired.iter().map(Fired::from).collect()),
        None => Report {
            session: id.clone(),
            tokens: None,
            window: config.window,
            percent: None,
            source: None,
            stage: None,
            fired: Vec::new(),
            handoff_due: false,
            messages: None,
        },
    };
    let status = StatusReport {
        report,
        tracked: s.is_some(),
        updated_at: s.as_ref().map(|s| s.updated_at.clone()),
        last_checkpoint,
    };
    ctx.out.json(&status)?;
    ctx.out.data(&human(&status))?;
    Ok(0)
}

fn human(st: &StatusReport) -> String {
    let r = &st.report;
    let mut text = String::new();
    let gauge_line = match (r.tokens, r.percent) {
        _ if !st.tracked => format!(
            "session {}: nothing tracked yet (window {} tokens); run `ctxkeep track --transcript PATH` or `ctxkeep track --tokens N`",
            r.session,
            thousands(r.window)
        ),
        (Some(t), Some(p)) => format!(
            "session {}: {} {} %  {} / {} tokens ({})",
            r.session,
            gauge(p, 30),
            fmt_num(p),
            thousands(t),
            thousands(r.window),
            r.source.map(|s| s.to_string()).unwrap_or_default()
        ),
        _ => format!(
            "session {}: size unknown since the last compaction (window {} tokens)",
            r.session,
            thousands(r.window)
        ),
    };
    text.push_str(&gauge_line);
    text.push('\n');
    if st.tracked {
        let stage = match &r.stage {
            Some(name) => {
                let action = r
                    .fired
                    .iter()
                    .find(|f| &f.name == name)
                    .map(|f| format!(" ({})", f.action))
                    .unwrap_or_default();
                format!("{name}{action}")
            }
            None => "below every stage".into(),
        };
        text.push_str(&format!("stage: {stage}\n"));
        if let Some(updated) = &st.updated_at {
            let age = crate::clock::age(updated).unwrap_or_else(|| updated.clone());
            text.push_str(&format!("updated: {age} ago\n"));
        }
    }
    match &st.last_checkpoint {
        Some(c) => {
            let age = crate::clock::age(&c.created_at)
                .map(|a| format!("{a} ago"))
                .unwrap_or_else(|| c.created_at.clone());
            text.push_str(&format!("last checkpoint: {} ({age})\n", c.id));
        }
        None => text.push_str("last checkpoint: none yet (`ctxkeep checkpoint`)\n"),
    }
    if r.handoff_due {
        text.push_str("handoff due: update the checkpoint with the exact next action, then stop; a fresh session starts from `ctxkeep resume`\n");
    }
    text
}
