//! CK8xx session chain: the last resume's restore was acknowledged. Reads
//! `.ctxkeep/chain.jsonl` when there is one (never in a fresh clone, where
//! this check has nothing to say) and creates nothing.

use super::{Finding, Severity, Subject};

pub fn check(s: &Subject) -> Vec<Finding> {
    let Ok(chain) = crate::handoff::chain::read(s.ws) else {
        return Vec::new();
    };
    let Some(last) = chain.last() else {
        return Vec::new();
    };
    // A project that does not ask for the confirmation is not warned it is missing.
    if last.ack.is_some() || !crate::domain::config::Config::from_front(&s.sf.fm).acknowledgement {
        return Vec::new();
    }
    vec![Finding::new(
        "CK801",
        Severity::Warning,
        None,
        format!(
            "the last resume ({}, from {} at {}) was never confirmed, so nothing shows the session read the restored state: no reply of the agent carried the line its prompt asked for (`Resuming from CHECKPOINT (ctxkeep NONCE)`), and nobody ran `ctxkeep ack NONCE`",
            last.record.id(),
            last.record.checkpoint,
            last.record.started_at
        ),
    )]
}
