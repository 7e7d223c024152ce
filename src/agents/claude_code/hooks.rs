//! Claude Code's hooks: its payloads are the shape every agent's hooks
//! share (`crate::hook_payload`); this is what `hooks doctor` sends them.

use serde_json::{json, Value};

use crate::agents::DoctorSample;

/// A Claude Code transcript with one main-chain reply (20,000 tokens).
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "transcript.jsonl",
    transcript: r#"{"parentUuid":null,"isSidechain":false,"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_doctor","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":990,"cache_read_input_tokens":19000,"output_tokens":5}},"uuid":"u-doctor","timestamp":"2026-01-01T00:00:00.000Z"}
"#,
};

pub fn doctor_common_fields() -> Value {
    json!({ "permission_mode": "default" })
}
