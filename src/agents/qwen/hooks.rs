//! Qwen Code's hooks: Claude Code's events and payload shape (the default
//! `hook_payload` reading); this is what `hooks doctor` sends them.

use serde_json::{json, Map, Value};

use crate::agents::DoctorSample;

/// A Qwen Code chat record with one reply (20,000 prompt tokens).
pub const DOCTOR_SAMPLE: DoctorSample = DoctorSample {
    transcript_name: "ctxkeep-doctor.jsonl",
    transcript: r#"{"uuid":"u1","parentUuid":null,"sessionId":"ctxkeep-doctor","timestamp":"2026-01-01T00:00:01.000Z","type":"user","provenance":"real_user","cwd":"/","version":"0.24.4","message":{"role":"user","parts":[{"text":"hello"}]}}
{"uuid":"a1","parentUuid":"u1","sessionId":"ctxkeep-doctor","timestamp":"2026-01-01T00:00:02.000Z","type":"assistant","provenance":"assistant_output","cwd":"/","version":"0.24.4","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":{"promptTokenCount":20000,"candidatesTokenCount":5,"totalTokenCount":20005,"cachedContentTokenCount":0},"contextWindowSize":262144}
"#,
};

pub fn doctor_common_fields() -> Value {
    json!({ "permission_mode": "default", "timestamp": "2026-01-01T00:00:03.000Z" })
}

/// A reply's text and tool calls (`type: assistant`, `message.parts`).
pub fn authored_text(line: &Map<String, Value>) -> Vec<String> {
    if line.get("type").and_then(Value::as_str) != Some("assistant") {
        return Vec::new();
    }
    line.get("message")
        .and_then(|m| m.get("parts"))
        .map(|p| vec![p.to_string()])
        .unwrap_or_default()
}
