//! The model table: context window and the tiktoken encoding used to count.
//!
//! Names match case-insensitively, exactly first, then by the longest table
//! key that is a prefix ending at a separator (`claude-sonnet-4-5-20250929`
//! matches `claude-sonnet-4-5`; `gpt-50` does not match `gpt-5`). A provider
//! prefix (`openai/`, `anthropic.` as in Bedrock ids) is ignored. A `[1m]`
//! suffix (Claude Code's 1M-context variants) sets the window to 1,000,000.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::context::tokens::Encoding;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    pub encoding: Encoding,
    /// Context window in tokens.
    pub window: u64,
}

/// A per-model setting from the project config; unset fields keep the
/// table's value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelOverride {
    pub window: Option<u64>,
    pub encoding: Option<Encoding>,
}

const O200K: Encoding = Encoding::O200kBase;
const CL100K: Encoding = Encoding::Cl100kBase;

/// Window of the `[1m]` variants.
pub const ONE_M: u64 = 1_000_000;

/// Keys are lower case. Keep more specific keys: the longest prefix wins.
///
/// Claude: Anthropic's tokenizer is not public, so counts use o200k_base as
/// an estimate. The 4.x models have a 200,000-token window by default; the
/// 1M-context beta variants need `--window 1000000` or a `[1m]` suffix. The 5
/// models (Sonnet 5 since Claude Code 2.1.197, Opus 5, its default Opus since
/// 2.1.219) have a native 1,000,000-token window. A Claude name the table does
/// not know matches no entry: its window is not guessed.
///
/// Gemini: its tokenizer is not tiktoken either; o200k_base is an estimate.
const TABLE: &[(&str, Encoding, u64)] = &[
    // Anthropic
    ("claude-opus-4", O200K, 200_000),
    ("claude-sonnet-4", O200K, 200_000),
    ("claude-haiku-4", O200K, 200_000),
    ("claude-opus-5", O200K, ONE_M),
    ("claude-sonnet-5", O200K, ONE_M),
    ("claude-3", O200K, 200_000),
    // Claude Code's aliases name the newest of each line (Opus 5, Sonnet 5).
    ("opus", O200K, ONE_M),
    ("sonnet", O200K, ONE_M),
    ("haiku", O200K, 200_000),
    // OpenAI, o200k_base
    ("gpt-4o", O200K, 128_000),
    ("chatgpt-4o", O200K, 128_000),
    ("gpt-4.1", O200K, 1_047_576),
    ("gpt-4.5", O200K, 128_000),
    ("gpt-5", O200K, 400_000),
    ("gpt-5-chat", O200K, 128_000),
    ("gpt-5-codex", O200K, 400_000),
    ("gpt-5.1-codex", O200K, 400_000),
    ("gpt-5.1-codex-mini", O200K, 400_000),
    ("gpt-5.1-codex-max", O200K, 400_000),
    ("gpt-5.2-codex", O200K, 400_000),
    ("gpt-5.1", O200K, 400_000),
    ("gpt-5.2", O200K, 400_000),
    ("gpt-5.5", O200K, 400_000),
    ("codex-mini", O200K, 200_000),
    ("gpt-oss", O200K, 131_072),
    ("o1", O200K, 200_000),
    ("o1-mini", O200K, 128_000),
    ("o1-preview", O200K, 128_000),
    ("o3", O200K, 200_000),
    ("o3-mini", O200K, 200_000),
    ("o3-pro", O200K, 200_000),
    ("o4-mini", O200K, 200_000),
    // OpenAI, cl100k_base
    ("gpt-4", CL100K, 8_192),
    ("gpt-4-32k", CL100K, 32_768),
    ("gpt-4-turbo", CL100K, 128_000),
    ("gpt-4-1106-preview", CL100K, 128_000),
    ("gpt-4-0125-preview", CL100K, 128_000),
    ("gpt-3.5-turbo", CL100K, 16_385),
    ("gpt-3.5-turbo-instruct", CL100K, 4_096),
    // Google
    ("gemini-1.5-pro", O200K, 2_097_152),
    ("gemini-1.5-flash", O200K, 1_048_576),
    ("gemini-2", O200K, 1_048_576),
    ("gemini-3", O200K, 1_048_576),
];

/// Lower-cased name without provider prefix, and whether it had `[1m]`.
fn normalize(name: &str) -> (String, bool) {
    let mut n = name.trim().to_ascii_lowercase();
    let one_m = n.ends_with("[1m]");
    if one_m {
        n.truncate(n.len() - "[1m]".len());
    }
    if let Some(i) = n.rfind('/') {
        n.drain(..=i);
    }
    if let Some(i) = n.rfind("anthropic.") {
        n.drain(..i + "anthropic.".len());
    }
    (n.trim().to_string(), one_m)
}

/// Whether `key` names `name`: equal, or a prefix that ends at a separator.
fn prefix_len(key: &str, name: &str) -> Option<usize> {
    if !name.starts_with(key) {
        return None;
    }
    let key_ends_at_separator = key
        .chars()
        .next_back()
        .is_some_and(|c| !c.is_ascii_alphanumeric());
    let next_is_separator = name[key.len()..]
        .chars()
        .next()
        .is_none_or(|c| !c.is_ascii_alphanumeric());
    (key_ends_at_separator || next_is_separator).then_some(key.len())
}

/// Exact match first, else the longest prefix match.
fn best_match<'a, T>(name: &str, entries: impl Iterator<Item = (&'a str, T)>) -> Option<T> {
    let mut best: Option<(usize, T)> = None;
    for (key, v) in entries {
        if key == name {
            return Some(v);
        }
        if let Some(len) = prefix_len(key, name) {
            if best.as_ref().is_none_or(|(l, _)| len > *l) {
                best = Some((len, v));
            }
        }
    }
    best.map(|(_, v)| v)
}

/// The refusal of a `--model` neither the table nor the project's `models:`
/// knows (exit 2), worded alike by every command; `what_to_do` says what
/// to give instead.
/// Every entry of the built-in table, as (name, encoding, window), in table order.
pub fn table() -> impl Iterator<Item = (&'static str, Encoding, u64)> {
    TABLE.iter().copied()
}

pub fn not_in_table(name: &str, what_to_do: &str) -> crate::system::error::Error {
    crate::system::error::Error::Usage(format!(
        "--model: '{name}' is not in the model table; {what_to_do}"
    ))
}

/// Whether two names are the same model (case, provider prefix and a
/// `[1m]` suffix aside: the status line says `claude-opus-4-6[1m]` where the
/// transcript says `claude-opus-4-6`).
pub fn same_model(a: &str, b: &str) -> bool {
    normalize(a).0 == normalize(b).0
}

/// The built-in entry for `name`, if known.
pub fn lookup(name: &str) -> Option<ModelInfo> {
    let (n, one_m) = normalize(name);
    let (encoding, window) = best_match(&n, TABLE.iter().map(|&(k, e, w)| (k, (e, w))))?;
    Some(ModelInfo {
        encoding,
        window: if one_m { ONE_M } else { window },
    })
}

/// The family a model name belongs to: its first word (`claude`, `gpt`,
/// `gemini`), after the provider prefix.
fn family(name: &str) -> String {
    let (n, _) = normalize(name);
    n.split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The smallest window a model of `name`'s family has in the table that
/// holds `tokens`: what a session that passed its assumed window without
/// compacting is measured against. None when the family has none that large
/// (the window is then unknown).
pub fn larger_window(name: &str, tokens: u64) -> Option<u64> {
    let fam = family(name);
    if fam.is_empty() {
        return None;
    }
    TABLE
        .iter()
        .filter(|(k, _, w)| family(k) == fam && *w >= tokens)
        .map(|&(_, _, w)| w)
        .min()
}

/// Like [`lookup`], with the project's overrides on top. Override keys match
/// the same way (case-insensitive, exact, then longest prefix). An override's
/// `window` wins over a `[1m]` suffix, which wins over the table. A model
/// missing from the table is known when an override gives its window (the
/// encoding then defaults to o200k_base).
pub fn lookup_with(name: &str, overrides: &BTreeMap<String, ModelOverride>) -> Option<ModelInfo> {
    let base = lookup(name);
    let (n, _) = normalize(name);
    let keyed: Vec<(String, &ModelOverride)> =
        overrides.iter().map(|(k, v)| (normalize(k).0, v)).collect();
    let Some(o) = best_match(&n, keyed.iter().map(|(k, v)| (k.as_str(), *v))) else {
        return base;
    };
    let window = o.window.or(base.map(|b| b.window))?;
    let encoding = o.encoding.or(base.map(|b| b.encoding)).unwrap_or_default();
    Some(ModelInfo { encoding, window })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(name: &str) -> Option<u64> {
        lookup(name).map(|m| m.window)
    }

    #[test]
    fn claude_models_and_dated_names() {
        assert_eq!(w("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(w("claude-opus-4-1"), Some(200_000));
        assert_eq!(w("Claude-Haiku-4-5"), Some(200_000));
        assert_eq!(w("claude-sonnet-4-5[1m]"), Some(1_000_000));
        assert_eq!(w("sonnet[1M]"), Some(1_000_000));
        assert_eq!(w("opus"), Some(1_000_000));
        assert_eq!(w("claude-opus-5"), Some(1_000_000));
        assert_eq!(w("claude-opus-5-5"), Some(1_000_000));
        assert_eq!(w("claude-sonnet-5-20261001"), Some(1_000_000));
        assert_eq!(w("claude-opus-4-6"), Some(200_000));
        assert_eq!(
            w("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some(200_000)
        );
        assert_eq!(
            lookup("claude-opus-4-5").unwrap().encoding,
            Encoding::O200kBase
        );
    }

    #[test]
    fn openai_models() {
        assert_eq!(w("gpt-4.1"), Some(1_047_576));
        assert_eq!(w("gpt-4.1-mini-2025-04-14"), Some(1_047_576));
        assert_eq!(w("gpt-4o-2024-08-06"), Some(128_000));
        assert_eq!(w("gpt-5"), Some(400_000));
        assert_eq!(w("gpt-5.1-codex-max"), Some(400_000));
        assert_eq!(w("gpt-5-mini"), Some(400_000));
        assert_eq!(w("openai/gpt-5-codex"), Some(400_000));
        assert_eq!(w("o3"), Some(200_000));
        assert_eq!(w("o4-mini-2025-04-16"), Some(200_000));
        let g4 = lookup("gpt-4-0613").unwrap();
        assert_eq!((g4.encoding, g4.window), (Encoding::Cl100kBase, 8_192));
        assert_eq!(lookup("gpt-4-turbo-2024-04-09").unwrap().window, 128_000);
        assert_eq!(
            lookup("gpt-3.5-turbo").unwrap().encoding,
            Encoding::Cl100kBase
        );
        assert_eq!(lookup("gpt-4o").unwrap().encoding, Encoding::O200kBase);
    }

    #[test]
    fn gemini_models() {
        assert_eq!(w("gemini-2.5-pro"), Some(1_048_576));
        assert_eq!(w("gemini-3-pro-preview"), Some(1_048_576));
        assert_eq!(w("models/gemini-2.0-flash"), Some(1_048_576));
    }

    #[test]
    fn unknown_and_non_separator_prefixes() {
        assert_eq!(lookup("llama-3-70b"), None);
        assert_eq!(lookup(""), None);
        assert_eq!(lookup("gpt-50"), None);
        assert_eq!(lookup("o30"), None);
        assert_eq!(lookup("sonnetx"), None);
        // A Claude model the table does not know is not taken for a 200k one.
        assert_eq!(lookup("claude-opus-6"), None);
    }

    #[test]
    fn a_larger_window_is_looked_for_in_the_same_family() {
        assert_eq!(larger_window("claude-opus-4-6", 297_000), Some(1_000_000));
        assert_eq!(larger_window("claude-opus-4-6", 150_000), Some(200_000));
        assert_eq!(larger_window("claude-opus-4-6", 1_200_000), None);
        assert_eq!(larger_window("gemini-2.5-pro", 1_500_000), Some(2_097_152));
        assert_eq!(larger_window("llama-3", 10), None);
    }

    #[test]
    fn overrides() {
        let mut o = BTreeMap::new();
        o.insert(
            "claude-sonnet-4-5".to_string(),
            ModelOverride {
                window: Some(500_000),
                encoding: None,
            },
        );
        o.insert(
            "My-Local".to_string(),
            ModelOverride {
                window: Some(32_768),
                encoding: Some(Encoding::Cl100kBase),
            },
        );
        o.insert(
            "gpt-4o".to_string(),
            ModelOverride {
                window: None,
                encoding: Some(Encoding::Cl100kBase),
            },
        );
        o.insert(
            "only-enc".to_string(),
            ModelOverride {
                window: None,
                encoding: Some(Encoding::P50kBase),
            },
        );
        let s = lookup_with("claude-sonnet-4-5-20250929[1m]", &o).unwrap();
        assert_eq!((s.window, s.encoding), (500_000, Encoding::O200kBase));
        // Other Claude models keep the table's value.
        assert_eq!(lookup_with("claude-opus-4-5", &o).unwrap().window, 200_000);
        let l = lookup_with("my-local-7b", &o).unwrap();
        assert_eq!((l.window, l.encoding), (32_768, Encoding::Cl100kBase));
        let g = lookup_with("gpt-4o-mini", &o).unwrap();
        assert_eq!((g.window, g.encoding), (128_000, Encoding::Cl100kBase));
        assert_eq!(lookup_with("only-enc", &o), None);
        assert_eq!(lookup_with("unknown", &o), None);
        assert_eq!(lookup_with("gpt-5", &BTreeMap::new()), lookup("gpt-5"));
    }

    #[test]
    fn override_serde() {
        let o: ModelOverride =
            serde_json::from_str(r#"{"window": 1000, "encoding": "cl100k_base"}"#).unwrap();
        assert_eq!(o.window, Some(1000));
        assert_eq!(o.encoding, Some(Encoding::Cl100kBase));
        let e = serde_json::from_str::<ModelOverride>(r#"{"encoding": "gpt9"}"#).unwrap_err();
        assert!(e.to_string().contains("o200k_base"), "{e}");
        assert!(serde_json::from_str::<ModelOverride>(r#"{"windw": 1}"#).is_err());
    }
}
