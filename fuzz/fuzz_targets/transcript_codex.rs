//! The Codex rollout JSONL reader, fed from memory.
//! Invariants: no panic; a torn final line never changes the answer.
#![no_main]

#[path = "common.rs"]
mod common;

use ctxkeep::agents::Agent;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check_torn_tail_is_ignored("rollout-x.jsonl", data, Agent::Codex);
});
