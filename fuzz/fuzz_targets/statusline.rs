//! The Claude Code status-line payload parser (`track --statusline` reads it from stdin).
//! Invariants: no panic; reading bytes agrees with parsing text; the result serializes.
#![no_main]

use ctxkeep::agents::claude_code::statusline::{parse_statusline, read_statusline};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let read = read_statusline(data);
    match std::str::from_utf8(data) {
        Ok(text) => {
            let parsed = parse_statusline(text);
            match (&read, &parsed) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(_), Err(_)) => {}
                _ => panic!("read and parse disagree: {read:?} vs {parsed:?}"),
            }
        }
        Err(_) => assert!(read.is_err(), "non-UTF-8 input must be refused"),
    }
    if let Ok(s) = read {
        serde_json::to_string(&s).expect("a status line serializes");
        assert!(s.window.is_none_or(|w| w > 0));
    }
});
