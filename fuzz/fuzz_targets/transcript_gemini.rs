//! The Gemini CLI reader: JSONL recordings and legacy single-JSON sessions, fed from memory.
//! Invariants: no panic; the answer names Gemini and its one window; JSONL that starts with a
//! metadata line ignores a torn final line.
#![no_main]

#[path = "common.rs"]
mod common;

use ctxkeep::agents::gemini::usage::GEMINI_WINDOW;
use ctxkeep::agents::Agent;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(u) = common::read("session-x.json", data, Some(Agent::Gemini)) {
        assert_eq!(u.agent, Agent::Gemini.as_str());
        assert_eq!(u.window, Some(GEMINI_WINDOW));
        assert!(
            u.tokens.is_none_or(|t| t > 0),
            "a zero count is never a context"
        );
    }
    // A first line that is a complete JSON object makes it JSONL whatever follows.
    let first_is_object = data
        .iter()
        .position(|&b| b == b'\n')
        .and_then(|n| serde_json::from_slice::<serde_json::Value>(&data[..n]).ok())
        .is_some_and(|v| v.is_object());
    if first_is_object {
        common::check_torn_tail_is_ignored("session-x.jsonl", data, Agent::Gemini);
    }
});
