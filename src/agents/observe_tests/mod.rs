//! Transcripts written here in each agent's shape (no fixture text), then read as a hook would.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use chrono::{DateTime, Utc};

use crate::agents::{observe, Agent};
use crate::transcripts::activity::*;

mod claude_code;
mod codex;
mod cold_reader_record;
mod fact_times;
mod gemini;
mod opencode;
mod qwen;
mod shared_fixtures;
mod task_and_next_step;

// The line makers each section writes are shared with the others.
use claude_code::*;
use codex::*;
use gemini::*;
use task_and_next_step::*;

pub(super) fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-23T20:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// Writes `lines` (one JSON value each) as `name` in a temp dir.
pub(super) fn write(name: &str, lines: &[Value]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let mut text = String::new();
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

pub(super) const ROOT: &str = "/home/dev/proj";

pub(super) fn read(name: &str, lines: &[Value]) -> Observed {
    let (_d, path) = write(name, lines);
    let obs = observe(&path, None, Some(Path::new(ROOT)), now()).unwrap();
    assert_eq!(obs.read_at, "2026-11-23T20:00:00Z");
    obs
}

pub(super) fn plan(obs: &Observed) -> Vec<(&str, &str)> {
    obs.plan
        .iter()
        .map(|p| (p.text.as_str(), p.status.as_str()))
        .collect()
}
