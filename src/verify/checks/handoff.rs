//! CK8xx session chain: the last resume's restore was acknowledged. Reads
//! `.ctxkeep/chain.jsonl` when there is one (never in a fresh clone, where
//! this check has nothing to say) and creates nothing.

use super::{Finding, Severity, Subject};

pub fn check(s: &Subject) -> Vec<Finding> {
    let Ok(chain) = crate::handoff::ledger::read(s.ws) else {
        return Vec::new();
    };
    let Some(last) = chain.last() else {
        return Vec::new();
    };
    if last.ack.is_some() {
        return Vec::new();
    }
    vec![Finding::new(
        "CK801",
        Severity::Warning,
        None,
        format!(
            "the last resume ({}, from {} at {}) was never acknowledged, so nothing shows the session read the restored state; the agent should run the `ctxkeep ack NONCE` its prompt gives",
            last.record.id(),
            last.record.checkpoint,
            last.record.started_at
        ),
    )]
}
