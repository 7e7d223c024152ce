//! `ctxkeep ack NONCE`: the agent confirms it read the resume prompt, which
//! printed the nonce. A wrong nonce says no (exit 1).

use serde::Serialize;

use super::{Ctx, Outcome};
use crate::chain::{self, Acked, Link};
use crate::cli::AckArgs;
use crate::state::StateFile;
use crate::workspace::Workspace;

#[derive(Debug, Serialize)]
struct AckReport {
    /// The latest session is acknowledged (now or before).
    acknowledged: bool,
    /// It already was; nothing was written.
    already: bool,
    /// The session's number, when there is one.
    session: Option<u64>,
    checkpoint: Option<String>,
    /// `command` or `transcript`.
    via: Option<String>,
    at: Option<String>,
}

impl AckReport {
    fn of(s: Option<&Link>, already: bool) -> AckReport {
        let ack = s.and_then(|s| s.ack.as_ref());
        AckReport {
            acknowledged: ack.is_some(),
            already,
            session: s.map(|s| s.record.number),
            checkpoint: s.map(|s| s.record.checkpoint.clone()),
            via: ack.map(|a| a.via.clone()),
            at: ack.map(|a| a.at.clone()),
        }
    }
}

pub fn run(args: AckArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    StateFile::load(&ws.state_path)?.require_initialized()?;
    let lock = ws.lock()?;
    let report = match (&args.nonce, &args.transcript) {
        (_, Some(path)) => match chain::ack_from_transcript(&ws, &lock, path)? {
            Some(s) => AckReport::of(Some(&s), false),
            None => {
                let chain = chain::read(&ws)?;
                let last = chain.last();
                AckReport::of(last, last.is_some_and(|s| s.ack.is_some()))
            }
        },
        (Some(nonce), None) => match chain::acknowledge(&ws, &lock, nonce, "command")? {
            Acked::Recorded(s) => AckReport::of(Some(&s), false),
            Acked::Already(s) => AckReport::of(Some(&s), true),
        },
        (None, None) => {
            return Err(crate::error::Error::Usage(
                "give the NONCE the resume prompt printed, or --transcript PATH".into(),
            )
            .into())
        }
    };
    drop(lock);
    ctx.out.json(&report)?;
    let message = match (&report.session, report.acknowledged, report.already) {
        (None, _, _) => "no resume to acknowledge yet".to_string(),
        (Some(n), true, false) => format!(
            "acknowledged session {n} ({}): the restore was read",
            report.checkpoint.as_deref().unwrap_or("")
        ),
        (Some(n), true, true) => format!("session {n} was already acknowledged"),
        (Some(n), false, _) => format!("session {n}: the nonce was not found in the transcript"),
    };
    ctx.out.info(&message);
    Ok(Outcome::Ok)
}
