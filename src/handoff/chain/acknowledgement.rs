//! Acknowledging a link: the nonce its prompt carries, and the record that its session read the
//! prompt (given by `ack`, or found echoed in the agent's transcript).

use std::path::Path;

use serde_json::json;

use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::{self, Lock};

use super::{read, AckRecord, Line, Link, NONCE_LEN, TRANSCRIPT_SCAN_BYTES};

/// What `ack` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Acked {
    /// The acknowledgement was recorded now.
    Recorded(Link),
    /// The session was acknowledged before; nothing written.
    Already(Link),
}

/// Records that the latest session's agent read its prompt, given the nonce
/// it printed. A nonce of an older session, or none at all, says no (exit 1).
pub fn acknowledge(ws: &Workspace, lock: &Lock, nonce: &str, via: &str) -> Result<Acked, Error> {
    let chain = read(ws)?;
    let Some(last) = chain.last() else {
        return Err(Error::no_input(
            ws.chain_path(),
            "no resume to acknowledge yet; run `ctxkeep resume` first",
        ));
    };
    let given = nonce.trim().to_ascii_lowercase();
    if given == last.record.nonce {
        if last.ack.is_some() {
            return Ok(Acked::Already(last.clone()));
        }
        return Ok(Acked::Recorded(append_ack(ws, lock, last, via)?));
    }
    let shown = crate::system::output::clip(nonce.trim(), 40);
    if let Some(old) = chain.sessions.iter().find(|s| s.record.nonce == given) {
        return Err(Error::Refused(format!(
            "nonce {shown:?} belongs to {}, which {} has replaced; acknowledge the nonce of the latest resume",
            old.record.id(),
            last.record.id()
        )));
    }
    Err(Error::Refused(format!(
        "wrong nonce {shown:?}: it is not the one {} printed; run `ctxkeep resume` and acknowledge the nonce it prints",
        last.record.id()
    )))
}

/// Records the acknowledgement of `session` (the caller holds the lock) and
/// returns the session with it.
fn append_ack(ws: &Workspace, held: &Lock, session: &Link, via: &str) -> Result<Link, Error> {
    let ack = AckRecord {
        number: session.record.number,
        at: crate::system::clock::now_rfc3339(),
        via: via.to_string(),
    };
    let line = serde_json::to_string(&Line::Ack(ack.clone())).expect("ack serializes");
    fsutil::append_line(&ws.chain_path(), &line)?;
    crate::domain::events::append(
        ws,
        held,
        "ack",
        json!({ "session": ack.number, "via": ack.via }),
    )?;
    Ok(Link {
        record: session.record.clone(),
        ack: Some(ack),
    })
}

/// For the Claude Code hooks (UserPromptSubmit, PostToolUse): when the
/// latest session is not acknowledged yet and the agent has echoed its nonce
/// in the transcript, records the acknowledgement (`via: transcript`) and
/// returns the session. Reads only the transcript's last 8 MiB, and only
/// what the agent wrote (assistant text and tool calls), never the prompt
/// injected into it or tool output, which carry the nonce themselves.
pub fn ack_from_transcript(
    ws: &Workspace,
    lock: &Lock,
    transcript: &Path,
) -> Result<Option<Link>, Error> {
    // A transcript that is not there is a misconfigured hook: say so even
    // when there is nothing to acknowledge.
    if let Err(e) = std::fs::metadata(transcript) {
        return Err(match e.kind() {
            std::io::ErrorKind::NotFound => Error::no_input(transcript, "no such transcript"),
            _ => crate::system::fsutil::input_error(transcript, e),
        });
    }
    ack_if_echoed(ws, lock, &|nonce| {
        crate::transcripts::usage::echo::echoes(
            transcript,
            nonce,
            TRANSCRIPT_SCAN_BYTES,
            &crate::agents::authored_text,
        )
    })
}

/// [`ack_from_transcript`] with the look into the transcript handed in: `echoed(nonce)` says
/// whether the agent wrote the latest session's nonce in the transcript's last
/// [`ECHO_SCAN_BYTES`] (an event that has the transcript open already looks there).
pub fn ack_if_echoed(
    ws: &Workspace,
    lock: &Lock,
    echoed: &dyn Fn(&str) -> Result<bool, Error>,
) -> Result<Option<Link>, Error> {
    let chain = read(ws)?;
    let Some(last) = chain.last() else {
        return Ok(None);
    };
    if last.ack.is_some() {
        return Ok(None);
    }
    if !echoed(&last.record.nonce)? {
        return Ok(None);
    }
    append_ack(ws, lock, last, "transcript").map(Some)
}

/// How far back from a transcript's end a restore's nonce is looked for.
pub const ECHO_SCAN_BYTES: u64 = TRANSCRIPT_SCAN_BYTES;

/// A short nonce, unpredictable enough that only a session that read the
/// prompt can give it. Not a secret: the clock, the process and the record
/// are hashed, no random-number crate needed.
pub(super) fn new_nonce(number: u64, digest: &str) -> String {
    use sha2::{Digest, Sha256};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = Sha256::new();
    h.update(nanos.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(number.to_le_bytes());
    h.update(digest.as_bytes());
    // A heap address varies between runs too (ASLR).
    let probe = Box::new(0u8);
    h.update((&*probe as *const u8 as usize).to_le_bytes());
    let hash = h.finalize();
    let n = u64::from_le_bytes(hash[..8].try_into().expect("8 bytes")) % 100_000_000;
    format!("{n:0width$}", width = NONCE_LEN)
}
