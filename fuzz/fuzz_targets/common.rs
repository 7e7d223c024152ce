//! Shared by the transcript targets.
#![allow(dead_code)] // each target uses part of it

use std::io::Cursor;
use std::path::Path;

use ctxkeep::agents::{read_usage_from, Agent};
use ctxkeep::transcripts::usage::Usage;

/// Reads `data` as a transcript of `agent` (None: auto-detect) under the name `name`.
pub fn read(name: &str, data: &[u8], agent: Option<Agent>) -> anyhow::Result<Usage> {
    read_usage_from(Path::new(name), &mut Cursor::new(data), data.len() as u64, agent)
}

/// A JSONL reader must not be swayed by a final line still being written: appending bytes
/// without a newline gives exactly the same answer (docs/agents.md, "Reading a transcript").
pub fn check_torn_tail_is_ignored(name: &str, data: &[u8], agent: Agent) {
    let first = read(name, data, Some(agent));
    let mut torn = data.to_vec();
    torn.extend_from_slice(br#"{"type":"assistant","message":{"usage":{"input_tokens":99999"#);
    let second = read(name, &torn, Some(agent));
    match (first, second) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.agent, agent.as_str());
            assert_eq!(a, b, "a torn final line changed the answer");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("a torn final line changed the outcome: {a:?} vs {b:?}"),
    }
}
