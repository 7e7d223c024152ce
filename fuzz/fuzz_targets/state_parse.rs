//! The front-matter splitter and the YAML parse of `project-state.md`.
//! Invariants: no panic; a file that parses renders back byte for byte.
#![no_main]

use std::path::Path;

use ctxkeep::domain::state::StateFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // `StateFile::load` refuses non-UTF-8 before parsing; the parser only sees text.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sf) = StateFile::parse(Path::new("project-state.md"), text.to_string()) {
        assert_eq!(
            sf.render(),
            text,
            "an unchanged file must render as it was read"
        );
        assert!(
            text.ends_with(&sf.body),
            "the body is the file's tail, byte for byte"
        );
        // The line lookups used by `verify` must not panic either.
        for key in ["ctxkeep", "checkpoint", "history", "model"] {
            let _ = sf.key_line(key);
            let _ = sf.nested_key_line(key, "phase");
        }
        let _ = sf.managed_block();
        let _ = sf.require_initialized();
    }
});
