//! Where OpenCode compacts on its own: once a reply's tokens (input, output
//! and cache together) reach the model's context less its output allowance
//! (the model's output limit, at most 32,000; `limit.input` less
//! `compaction.reserved` where the model states an input limit). Off with
//! `compaction.auto: false` in `opencode.json` (the user's or the project's)
//! or `OPENCODE_DISABLE_AUTOCOMPACT`. ctxkeep does not know the model's
//! output limit: the default takes the largest allowance, and a compaction
//! seen teaches it where the session really compacts.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::context::compaction::{home, Limit};

/// The most OpenCode keeps free for a reply.
pub const OUTPUT_ALLOWANCE: u64 = 32_000;

pub fn limit(window: u64, project: &Path, env: &dyn Fn(&str) -> Option<String>) -> Limit {
    if env("OPENCODE_DISABLE_AUTOCOMPACT")
        .is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
    {
        let mut l = Limit::window(window);
        l.source = "env:OPENCODE_DISABLE_AUTOCOMPACT".into();
        return l;
    }
    let config = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home(env).map(|h| h.join(".config")));
    let files: Vec<PathBuf> = config
        .map(|c| c.join("opencode").join("opencode.json"))
        .into_iter()
        .chain([
            project.join("opencode.json"),
            project.join(".opencode").join("opencode.json"),
        ])
        .collect();
    // The last file that says wins, as OpenCode merges them in that order.
    let off = files.iter().rev().find_map(|f| {
        let text = std::fs::read_to_string(f).ok()?;
        let doc = crate::agents::settings::json_edit::JsonText::parse(&text, true).ok()?;
        match doc.value().pointer("/compaction/auto") {
            Some(Value::Bool(auto)) => Some((!auto, f.clone())),
            _ => None,
        }
    });
    match off {
        Some((true, file)) => {
            let mut l = Limit::window(window);
            l.source = format!("config:{}", file.display());
            l
        }
        _ => Limit::new(
            window.saturating_sub(OUTPUT_ALLOWANCE).max(window / 2),
            "default",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_allowance_is_kept_free_unless_auto_compaction_is_off() {
        let dir = tempfile::tempdir().unwrap();
        let env = |_: &str| None;
        let l = limit(200_000, dir.path(), &env);
        assert_eq!((l.tokens, l.source.as_str()), (168_000, "default"));
        std::fs::write(
            dir.path().join("opencode.json"),
            "{\n  // off\n  \"compaction\": {\"auto\": false}\n}\n",
        )
        .unwrap();
        let l = limit(200_000, dir.path(), &env);
        assert_eq!(l.tokens, 200_000);
        assert!(l.source.starts_with("config:"), "{}", l.source);
        let off = |k: &str| (k == "OPENCODE_DISABLE_AUTOCOMPACT").then(|| "1".to_string());
        assert_eq!(
            limit(100_000, tempfile::tempdir().unwrap().path(), &off).tokens,
            100_000
        );
    }
}
