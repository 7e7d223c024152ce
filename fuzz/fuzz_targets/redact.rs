//! Secret redaction (RELIABILITY.md §4).
//! Invariants: no panic; nothing is found in redacted text; findings are sorted, disjoint and on
//! character boundaries; `contains_secret` agrees with `find`; redacted JSON strings are clean.
#![no_main]

use ctxkeep::system::redact::{contains_secret, find, redact, redact_json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let findings = find(&text);
    let mut last_end = 0;
    for f in &findings {
        assert!(
            f.start < f.end && f.start >= last_end,
            "findings overlap: {findings:?}"
        );
        assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
        last_end = f.end;
    }
    assert_eq!(contains_secret(&text), !findings.is_empty());

    let clean = redact(&text);
    let left = find(&clean);
    assert!(
        left.is_empty(),
        "redacted text still holds {left:?}: {clean:?}"
    );
    assert_eq!(redact(&clean), clean, "redaction is not a fixed point");
    if findings.is_empty() {
        assert_eq!(clean, text, "text without secrets must pass untouched");
    }

    if let Ok(mut doc) = serde_json::from_slice::<serde_json::Value>(data) {
        redact_json(&mut doc);
        check_json_clean(&doc);
    }
});

fn check_json_clean(v: &serde_json::Value) {
    match v {
        serde_json::Value::String(s) => assert!(find(s).is_empty(), "JSON string kept {s:?}"),
        serde_json::Value::Array(a) => a.iter().for_each(check_json_clean),
        serde_json::Value::Object(m) => m.values().for_each(check_json_clean),
        _ => {}
    }
}
