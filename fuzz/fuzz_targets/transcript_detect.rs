//! Format detection then reading (`track` without `--agent`), fed from memory.
//! Invariants: no panic; a detected transcript reads as the agent detected.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

/// Names matter only for files with no content to sniff.
const NAMES: [&str; 3] = [
    "session.jsonl",
    "rollout-2026-01-01T00-00-00-x.jsonl",
    "session-2026-01-01T00-00-x.json",
];

fuzz_target!(|data: &[u8]| {
    let name = NAMES[data.len() % NAMES.len()];
    if let Ok(u) = common::read(name, data, None) {
        let agent = u.agent.parse::<ctxkeep::agents::Agent>().expect("a detected agent is named");
        let direct = common::read(name, data, Some(agent)).expect("the detected agent reads it");
        assert_eq!(u, direct);
    }
});
