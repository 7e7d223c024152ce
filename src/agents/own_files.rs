//! ctxkeep's own files among a repository's uncommitted changes: what `init` and `hooks
//! install` wrote (`.ctxkeep/`, the `.gitignore` and `.gitattributes` lines, each agent's
//! settings and MCP entries, OpenCode's plugin file). They are never shown to the model as the
//! user's work, nor counted by `verify` as changes the checkpoint should describe, unless the
//! user changed the file by hand too: a change is ctxkeep's own when taking ctxkeep's part out
//! of the file leaves what HEAD had (with ctxkeep's part taken out too).

use std::path::Path;

use serde_json::Value;

use crate::agents::settings::json_edit::JsonText;
use crate::agents::settings::mcp::Format;
use crate::agents::Agent;
use crate::system::git::DirtyFile;

/// A settings file is small; a bigger one is not looked into.
const MAX_BYTES: u64 = 1024 * 1024;

/// The comment `init` writes above its `.gitignore` line.
const GITIGNORE_COMMENT: &str = "# ctxkeep's local data (live budgets, archive, events)";
/// The comment `init` writes above its `.gitattributes` line.
const GITATTRIBUTES_COMMENT: &str = "# ctxkeep merges its checkpoints (see `ctxkeep merge-file`)";

/// `dirty` without ctxkeep's own changes; `top` is the folder the paths are relative to.
pub fn without_own(top: &Path, dirty: &[DirtyFile]) -> Vec<DirtyFile> {
    dirty.iter().filter(|d| !is_own(top, d)).cloned().collect()
}

/// Whether the uncommitted change `d` is only ctxkeep's.
pub fn is_own(top: &Path, d: &DirtyFile) -> bool {
    if d.path == ".ctxkeep" || d.path.starts_with(".ctxkeep/") {
        return true;
    }
    if d.status == "untracked" && is_our_temp_file(&d.path) {
        return true;
    }
    if !matches!(d.status.as_str(), "modified" | "untracked" | "added") {
        return false;
    }
    let Some(strip) = stripper(&d.path) else {
        return false;
    };
    let Ok(now) = crate::system::fsutil::read_text(&top.join(&d.path), MAX_BYTES) else {
        return false;
    };
    let before = match d.status.as_str() {
        "modified" => match crate::system::git::text_at_head(top, &d.path) {
            Ok(Some(t)) => t,
            _ => return false,
        },
        _ => String::new(),
    };
    match (strip(&now), strip(&before)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A temp file ctxkeep writes beside the state file while it replaces it, or beside a file it
/// creates (the names `fsutil::temp_prefixes_for` gives): a write killed midway leaves one behind,
/// which a later lock's sweep removes once it is an hour old. Never the user's work, so never
/// recorded as uncommitted (a checkpoint that listed it would be rejected as lost work once the
/// sweep took it).
fn is_our_temp_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    // Most paths are not temp files at all: asked before the prefixes are built (a checkpoint
    // asks for every uncommitted path).
    if !name.ends_with(".tmp") {
        return false;
    }
    let state_file = Path::new(crate::domain::workspace::STATE_FILE);
    crate::system::fsutil::is_temp_name(name, &crate::system::fsutil::temp_prefixes_for(state_file))
}

/// What a file holds once ctxkeep's part is taken out, in a form two texts can be compared
/// in (None: not readable as that file).
type Strip = Box<dyn Fn(&str) -> Option<Value>>;

/// Whether `path`'s file name is one that ctxkeep writes. Most uncommitted paths are none,
/// and are told so here without building every agent's paths (which made this check a fifth
/// of a checkpoint's instructions with 200 changed files: it runs for the write, for `verify`'s
/// repository check and for the resume prompt's size check). The names are gathered once.
fn named_like_ours(path: &str) -> bool {
    static NAMES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        let name = |p: &'static str| p.rsplit('/').next().unwrap_or(p);
        let mut names = vec![".gitignore", ".gitattributes"];
        for agent in Agent::ALL {
            let s = agent.settings();
            names.extend(
                [Some(s.file), s.personal, Some(s.mcp.file)]
                    .into_iter()
                    .flatten()
                    .map(name),
            );
        }
        names
    });
    let own = path.rsplit('/').next().unwrap_or(path);
    NAMES.contains(&own)
}

/// How to take ctxkeep's part out of the file at `path`, when it is one ctxkeep writes.
fn stripper(path: &str) -> Option<Strip> {
    if !named_like_ours(path) {
        return None;
    }
    match path {
        ".gitignore" => return Some(Box::new(|t| Some(lines_without(t, is_gitignore_line)))),
        ".gitattributes" => {
            return Some(Box::new(|t| Some(lines_without(t, is_gitattributes_line))))
        }
        _ => {}
    }
    for agent in Agent::ALL {
        let s = agent.settings();
        let settings_file = |f: &str| Path::new(s.dir).join(f) == Path::new(path);
        if s.code.is_none() && (settings_file(s.file) || s.personal.is_some_and(settings_file)) {
            let comments = s.comments_allowed;
            // Gemini CLI's MCP server is in its settings file.
            let holds_mcp = s.mcp.relative_path() == Path::new(path);
            return Some(Box::new(move |t| {
                let mut doc = parse(t, comments)?;
                s.uninstall(&mut doc).ok()?;
                if holds_mcp && s.mcp.format == Format::Json {
                    s.mcp.unregister_json(&mut doc).ok()?;
                }
                Some(normalized(doc.value()))
            }));
        }
        if let Some(code) = s.code {
            if settings_file(s.file) {
                // ctxkeep's file whole: nothing of it is the user's.
                return Some(Box::new(move |t| {
                    Some(Value::Bool(t.trim().is_empty() || code.is_ours(t)))
                        .filter(|ours| *ours == Value::Bool(true))
                        .map(|_| Value::Null)
                }));
            }
        }
        if s.mcp.relative_path() == Path::new(path) {
            let mcp = s.mcp;
            return Some(Box::new(move |t| match mcp.format {
                Format::Json => {
                    let mut doc = parse(t, true)?;
                    mcp.unregister_json(&mut doc).ok()?;
                    Some(normalized(doc.value()))
                }
                _ => {
                    let (rest, _) = mcp.unregister_toml(t).ok()?;
                    Some(Value::String(rest.trim().to_string()))
                }
            }));
        }
    }
    None
}

fn parse(text: &str, comments: bool) -> Option<JsonText> {
    JsonText::parse(text, comments).ok()
}

/// An empty document and an absent file are the same: nothing of the user's.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Null => Value::Object(Default::default()),
        v => v.clone(),
    }
}

/// The file's lines without ctxkeep's (and blank ones), as one comparable list.
fn lines_without(text: &str, ours: fn(&str) -> bool) -> Value {
    Value::Array(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !ours(l))
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

fn is_gitignore_line(l: &str) -> bool {
    l == GITIGNORE_COMMENT || matches!(l, ".ctxkeep" | ".ctxkeep/" | "/.ctxkeep" | "/.ctxkeep/")
}

fn is_gitattributes_line(l: &str) -> bool {
    // As `init` writes it (`project-state.md merge=ctxkeep`); read here rather than through
    // the merge module, which the agents' wing sits below.
    let mut words = l.split_whitespace();
    l == GITATTRIBUTES_COMMENT
        || (words
            .next()
            .is_some_and(|p| p.ends_with(crate::domain::workspace::STATE_FILE))
            && words.any(|w| w == "merge=ctxkeep"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_temp_files_ctxkeep_names_are_its_own() {
        for ours in [
            ".project-state.md.k9Xz2Q.tmp",
            "docs/.project-state.md.AbC123.tmp",
            ".ctxkeep-new.x1Y2z3.tmp",
        ] {
            assert!(is_own(Path::new("."), &dirty(ours, "untracked")), "{ours}");
            assert!(!is_own(Path::new("."), &dirty(ours, "modified")), "{ours}");
        }
        for theirs in [
            ".notes.tmp",
            ".project-state.md.abc.tmp",
            ".project-state.md.k9Xz2Q.tmp.bak",
            "project-state.md.k9Xz2Q.tmp",
            ".project-state.md.k9-z2Q.tmp",
        ] {
            assert!(
                !is_own(Path::new("."), &dirty(theirs, "untracked")),
                "{theirs}"
            );
        }
    }

    fn dirty(path: &str, status: &str) -> DirtyFile {
        DirtyFile {
            path: path.into(),
            status: status.into(),
        }
    }

    #[test]
    fn every_file_ctxkeep_writes_passes_the_quick_look_at_its_name() {
        for agent in Agent::ALL {
            let s = agent.settings();
            let mut paths = vec![Path::new(s.dir).join(s.file), s.mcp.relative_path()];
            if s.code.is_none() {
                paths.extend(s.personal.map(|p| Path::new(s.dir).join(p)));
            }
            for path in paths {
                let path = path.to_string_lossy();
                assert!(stripper(&path).is_some(), "{agent:?}: {path}");
            }
        }
        assert!(stripper("src/settings.rs").is_none());
        assert!(stripper("docs/.gitignore.md").is_none());
    }

    #[test]
    fn what_init_and_install_wrote_is_ctxkeeps_and_a_hand_edit_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let write = |p: &str, t: &str| {
            std::fs::create_dir_all(top.join(p).parent().unwrap()).unwrap();
            std::fs::write(top.join(p), t).unwrap();
        };
        write(".gitignore", &format!("{GITIGNORE_COMMENT}\n.ctxkeep/\n"));
        write(
            ".gitattributes",
            &format!("{GITATTRIBUTES_COMMENT}\nproject-state.md merge=ctxkeep\n"),
        );
        let claude = Agent::ClaudeCode.settings();
        let mut doc = JsonText::parse("", false).unwrap();
        claude.install(&mut doc, false).unwrap();
        write(".claude/settings.json", doc.text());
        write(
            ".mcp.json",
            r#"{"mcpServers": {"ctxkeep": {"command": "ctxkeep", "args": ["mcp"]}}}"#,
        );
        for p in [
            ".gitignore",
            ".gitattributes",
            ".claude/settings.json",
            ".mcp.json",
        ] {
            assert!(is_own(top, &dirty(p, "untracked")), "{p}");
        }
        assert!(is_own(top, &dirty(".ctxkeep/events.jsonl", "untracked")));
        // The user's own lines and entries make them the user's work again.
        write(
            ".gitignore",
            &format!("target/\n{GITIGNORE_COMMENT}\n.ctxkeep/\n"),
        );
        write(
            ".mcp.json",
            r#"{"mcpServers": {"ctxkeep": {"command": "ctxkeep", "args": ["mcp"]}, "db": {"command": "db-mcp"}}}"#,
        );
        let mut doc = JsonText::parse(r#"{"model": "opus"}"#, false).unwrap();
        claude.install(&mut doc, false).unwrap();
        write(".claude/settings.json", doc.text());
        for p in [".gitignore", ".mcp.json", ".claude/settings.json"] {
            assert!(!is_own(top, &dirty(p, "untracked")), "{p}");
        }
        assert!(!is_own(top, &dirty("src/main.rs", "untracked")));
        assert!(!is_own(top, &dirty(".gitignore", "deleted")));
    }
}
