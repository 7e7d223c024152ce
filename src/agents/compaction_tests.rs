//! Where each agent compacts, through the registry (the front matter first).

use std::collections::HashMap;

use super::{compaction_limit_with, Agent};
use crate::context::compaction::{CompactionConfig, Limit, LimitSpec, StagesAgainst};

struct Fixture {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
    vars: HashMap<&'static str, String>,
}

impl Fixture {
    fn new() -> Fixture {
        let home = tempfile::tempdir().unwrap();
        let mut vars = HashMap::new();
        vars.insert("HOME", home.path().display().to_string());
        Fixture {
            home,
            project: tempfile::tempdir().unwrap(),
            vars,
        }
    }

    fn set(&mut self, k: &'static str, v: &str) -> &mut Self {
        self.vars.insert(k, v.to_string());
        self
    }

    fn write(&self, under_home: bool, rel: &str, text: &str) {
        let base = if under_home {
            self.home.path()
        } else {
            self.project.path()
        };
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn limit(&self, agent: Option<Agent>, window: u64, front: Option<&str>) -> Limit {
        let front: Option<CompactionConfig> = front.map(|f| serde_yaml::from_str(f).unwrap());
        compaction_limit_with(
            agent,
            window,
            self.project.path(),
            front.as_ref(),
            None,
            &|k| self.vars.get(k).cloned(),
        )
    }
}

const CC: Option<Agent> = Some(Agent::ClaudeCode);
const CODEX: Option<Agent> = Some(Agent::Codex);
const GEMINI: Option<Agent> = Some(Agent::Gemini);

#[test]
fn claude_code_compacts_33k_below_its_window() {
    let f = Fixture::new();
    assert_eq!(f.limit(CC, 200_000, None), Limit::new(167_000, "default"));
    assert_eq!(f.limit(CC, 1_000_000, None).tokens, 967_000);
}

#[test]
fn claude_code_env_lowers_the_limit_and_bad_values_are_noted() {
    let mut f = Fixture::new();
    f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50");
    let l = f.limit(CC, 200_000, None);
    assert_eq!(l.tokens, 90_000, "50 % of 200,000 − 20,000");
    assert_eq!(l.source, "env:CLAUDE_AUTOCOMPACT_PCT_OVERRIDE");
    // It cannot raise the limit.
    f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "99");
    assert_eq!(f.limit(CC, 200_000, None).tokens, 167_000);
    f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "lots");
    let l = f.limit(CC, 200_000, None);
    assert_eq!((l.tokens, l.source.as_str()), (167_000, "default"));
    assert!(l
        .note
        .unwrap()
        .contains("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=\"lots\""));

    let mut f = Fixture::new();
    f.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");
    let l = f.limit(CC, 1_000_000, None);
    assert_eq!(l.tokens, 167_000);
    assert_eq!(l.source, "env:CLAUDE_CODE_AUTO_COMPACT_WINDOW");
    f.set("DISABLE_AUTO_COMPACT", "1");
    assert_eq!(
        f.limit(CC, 200_000, None),
        Limit::new(200_000, "env:DISABLE_AUTO_COMPACT")
    );
}

#[test]
fn codex_defaults_to_nine_tenths_of_the_configured_window() {
    let f = Fixture::new();
    // No config: the rollout's 190,000 is 95 % of 200,000.
    assert_eq!(
        f.limit(CODEX, 190_000, None),
        Limit::new(180_000, "default")
    );
    assert_eq!(f.limit(CODEX, 258_400, None).tokens, 244_800);
    f.write(
        true,
        ".codex/config.toml",
        "model_context_window = 200000\n",
    );
    assert_eq!(f.limit(CODEX, 190_000, None).tokens, 180_000);
}

#[test]
fn codex_reads_its_config_profile_and_project() {
    let mut f = Fixture::new();
    f.write(
        true,
        ".codex/config.toml",
        "model_context_window = 200_000\nmodel_auto_compact_token_limit = 120_000\n",
    );
    let l = f.limit(CODEX, 190_000, None);
    assert_eq!(l.tokens, 120_000);
    assert_eq!(l.source, "config:~/.codex/config.toml");
    // The active profile wins; the project's file wins over the user's.
    f.write(
        true,
        ".codex/config.toml",
        "profile = \"lean\"\nmodel_auto_compact_token_limit = 120000\n[profiles.lean]\nmodel_auto_compact_token_limit = 100000\n",
    );
    assert_eq!(f.limit(CODEX, 190_000, None).tokens, 100_000);
    f.write(
        false,
        ".codex/config.toml",
        "model_auto_compact_token_limit = 90000\n",
    );
    assert_eq!(f.limit(CODEX, 190_000, None).tokens, 90_000);
    // $CODEX_HOME replaces ~/.codex.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("config.toml"),
        "model_auto_compact_token_limit = 150000\n",
    )
    .unwrap();
    std::fs::remove_file(f.project.path().join(".codex/config.toml")).unwrap();
    f.set("CODEX_HOME", &other.path().display().to_string());
    let l = f.limit(CODEX, 190_000, None);
    assert_eq!(l.tokens, 150_000);
    assert!(l.source.ends_with("config.toml"), "{}", l.source);
    // A limit above the default: Codex keeps its default.
    std::fs::write(
        other.path().join("config.toml"),
        "model_auto_compact_token_limit = 185000\n",
    )
    .unwrap();
    let l = f.limit(CODEX, 190_000, None);
    assert_eq!((l.tokens, l.source.as_str()), (180_000, "default"));
    assert!(l.note.unwrap().contains("above Codex's default"));
}

#[test]
fn a_malformed_codex_config_falls_back_to_the_default_with_the_reason() {
    let f = Fixture::new();
    f.write(
        true,
        ".codex/config.toml",
        "model_auto_compact_token_limit = [oops\n",
    );
    let l = f.limit(CODEX, 190_000, None);
    assert_eq!((l.tokens, l.source.as_str()), (180_000, "default"));
    let note = l.note.unwrap();
    assert!(
        note.starts_with("~/.codex/config.toml: not valid TOML"),
        "{note}"
    );
    f.write(
        true,
        ".codex/config.toml",
        "model_auto_compact_token_limit = \"lots\"\n",
    );
    let l = f.limit(CODEX, 190_000, None);
    assert_eq!(l.tokens, 180_000);
    assert!(l.note.unwrap().contains("is a string, not an integer"));
}

#[test]
fn gemini_compresses_at_half_the_window_unless_its_settings_say() {
    let f = Fixture::new();
    assert_eq!(
        f.limit(GEMINI, 1_048_576, None),
        Limit::new(524_288, "default")
    );
    f.write(
        true,
        ".gemini/settings.json",
        "{\n  // comments are allowed\n  \"model\": {\"compressionThreshold\": 0.3}\n}\n",
    );
    let l = f.limit(GEMINI, 1_048_576, None);
    assert_eq!(l.tokens, 314_572);
    assert_eq!(l.source, "config:~/.gemini/settings.json");
    f.write(
        false,
        ".gemini/settings.json",
        r#"{"model": {"compressionThreshold": 0.7}, "x": "http://a//b /* no */"}"#,
    );
    let l = f.limit(GEMINI, 1_048_576, None);
    assert_eq!(l.tokens, 734_003, "the project's settings win");
    assert!(l.source.ends_with(".gemini/settings.json"));
}

#[test]
fn a_malformed_gemini_setting_falls_back_to_the_default_with_the_reason() {
    let f = Fixture::new();
    f.write(true, ".gemini/settings.json", "{\"model\": ");
    let l = f.limit(GEMINI, 1_048_576, None);
    assert_eq!((l.tokens, l.source.as_str()), (524_288, "default"));
    assert!(l
        .note
        .unwrap()
        .starts_with("~/.gemini/settings.json: not valid JSON"));
    f.write(
        true,
        ".gemini/settings.json",
        r#"{"model": {"compressionThreshold": 5}}"#,
    );
    let l = f.limit(GEMINI, 1_048_576, None);
    assert_eq!(l.tokens, 524_288);
    assert!(l.note.unwrap().contains("not a fraction"));
}

#[test]
fn the_front_matter_overrides_every_agent_and_manual_sources_use_the_window() {
    let mut f = Fixture::new();
    f.set("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50");
    let front = "claude-code: 150000\ncodex: \"80%\"\ngemini: 400000\n";
    assert_eq!(
        f.limit(CC, 200_000, Some(front)),
        Limit::new(150_000, "front-matter")
    );
    assert_eq!(f.limit(CODEX, 190_000, Some(front)).tokens, 152_000);
    assert_eq!(f.limit(GEMINI, 1_048_576, Some(front)).tokens, 400_000);
    assert_eq!(f.limit(None, 200_000, None), Limit::window(200_000));
    assert_eq!(f.limit(None, 200_000, Some(front)), Limit::window(200_000));
    let l = f.limit(None, 200_000, Some("default: \"90%\""));
    assert_eq!(l, Limit::new(180_000, "front-matter"));
    // Never above the window.
    assert_eq!(f.limit(CC, 200_000, Some("claude: 900000")).tokens, 200_000);
}

#[test]
fn front_matter_limits_are_checked() {
    for bad in [
        "codex: 0",
        "codex: \"120\"",
        "codex: \"0%\"",
        "codex: \"101%\"",
        "codex: -5",
    ] {
        assert!(
            serde_yaml::from_str::<CompactionConfig>(bad).is_err(),
            "{bad} should be refused"
        );
    }
    let c: CompactionConfig = serde_yaml::from_str("stages: window\ngemini: \"45.5%\"").unwrap();
    assert_eq!(c.stages, Some(StagesAgainst::Window));
    assert_eq!(c.for_names(&["gemini"]), Some(LimitSpec::Percent(45.5)));
}
