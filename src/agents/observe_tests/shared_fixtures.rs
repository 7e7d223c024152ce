//! The real transcripts in ../shared/fixtures, when present.

use super::*;

/// `$CARGO_MANIFEST_DIR/../shared/fixtures`, else `$CTXKEEP_SHARED/fixtures`.
pub(super) fn shared_fixtures() -> Option<PathBuf> {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    if beside.is_dir() {
        return Some(beside);
    }
    let env = PathBuf::from(std::env::var_os("CTXKEEP_SHARED")?).join("fixtures");
    env.is_dir().then_some(env)
}

pub(super) fn transcripts_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            transcripts_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl")
            || (p.extension().is_some_and(|x| x == "json")
                && p.to_string_lossy().contains("gemini"))
        {
            out.push(p);
        }
    }
}

#[test]
fn every_shared_fixture_reads_plausibly() {
    let Some(dir) = shared_fixtures() else {
        eprintln!("skipped: no ../shared/fixtures (set CTXKEEP_SHARED)");
        return;
    };
    let mut paths = Vec::new();
    transcripts_under(&dir, &mut paths);
    assert!(!paths.is_empty());
    let mut by_name = std::collections::HashMap::new();
    for p in &paths {
        let obs = observe(p, None, None, now()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        // Never more than the caps; every plan status is one of the three words.
        assert!(obs.files.len() <= MAX_FILES && obs.commands.len() <= MAX_COMMANDS);
        if let Some(r) = &obs.request {
            assert!(r.chars().count() <= MAX_REQUEST_CHARS);
        }
        let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        by_name.insert(rel, obs);
    }
    let find = |part: &str| -> &Observed {
        by_name
            .iter()
            .find(|(k, _)| k.contains(part))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no fixture named like {part}"))
    };
    // Subagent transcripts: all sidechain, nothing of a main session.
    for part in [
        "subagents/agent-a881341",
        "subagents/agent-acompact",
        "agent-test-hash",
    ] {
        assert!(find(part).is_empty(), "{part}: {:?}", find(part));
    }
    // A Codex session that updated its plan and patched files, partly through a code cell.
    let codex = find("vct/codex.jsonl");
    assert_eq!(codex.agent, "codex");
    assert!(!codex.plan.is_empty());
    for f in [
        "go.mod",
        "README.zh-TW.md",
        "docs/RELEASE_NOTES.md",
        "core/version.go",
    ] {
        assert!(
            codex.files.iter().any(|x| x.ends_with(f)),
            "{f} in {:?}",
            codex.files
        );
    }
    assert!(!codex.files.iter().any(|x| x.contains("should_not_count")));
    assert!(codex.request.is_some());
    assert!(!codex.commands.is_empty());
    // Claude Code sessions with TodoWrite keep a plan; their writes and edits are files.
    let ccv = find("ccv/5c0375b4");
    assert!(!ccv.plan.is_empty());
    assert!(!ccv.files.is_empty());
    assert!(ccv
        .request
        .as_deref()
        .is_some_and(|r| r.starts_with("/orchestrator")));
    assert!(find("ccv/1af7fc5e").request.as_deref() == Some("/init"));
    let manual = find("manual-compact-window");
    assert!(!manual.files.is_empty() && !manual.commands.is_empty());
    assert!(manual.session.is_some());
    // Gemini: a written and a replaced file, the typed request rather than the CLI's nudge.
    let gem = find("gemini/vct/gemini.jsonl");
    assert!(
        gem.files.iter().any(|f| f == "GEMINI.md"),
        "{:?}",
        gem.files
    );
    let req = gem.request.as_deref().unwrap_or("");
    assert!(!req.contains("Please continue") && !req.is_empty(), "{req}");
    assert!(find("test_conversation_gemini.legacy.json")
        .request
        .is_some());
}
