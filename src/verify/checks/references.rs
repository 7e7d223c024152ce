//! CK4xx references: task and decision ids, issue numbers and file paths
//! the checkpoint names must lead somewhere a cold reader can follow, in the
//! checkpoint itself or in the repository. Only the repository is read.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use super::{texts, Finding, Locator, Repo, Severity, Text};
use crate::domain::checkpoint::Checkpoint;
use crate::domain::state::StateFile;

/// `DEC-0021`, `ADR-7`, `PROJ-123`, `T-12`: an upper-case key, a dash, a
/// number; what stands around it is checked in `ids_in`.
static ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:[A-Z][A-Z0-9]{1,9}|T)-\d{1,6}\b").expect("id regex"));

/// `#123`; `ids_in` rules out `&#123;`, `page#12` and colours.
static ISSUE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"#\d{1,7}\b").expect("issue regex"));

/// Whether `line` could hold an [`ID`]: a `-` after an upper-case letter or a digit and before
/// a digit. Compiling the regex (its Unicode `\b` and `\d`) cost more than the rest of these
/// checks, so a checkpoint whose texts hold no such dash never compiles it.
fn could_hold_id(line: &str) -> bool {
    let mut chars = line.chars().peekable();
    let mut before = None;
    while let Some(c) = chars.next() {
        if c == '-'
            && before.is_some_and(|b: char| b.is_ascii_uppercase() || b.is_ascii_digit())
            && chars.peek().is_some_and(|a| a.is_numeric())
        {
            return true;
        }
        before = Some(c);
    }
    false
}

/// Matches of `re` in `line` not glued to a path, a version or a word.
fn refs_in<'a>(re: &Regex, line: &'a str, glue_before: &str) -> Vec<&'a str> {
    re.find_iter(line)
        .filter(|m| {
            let before = line[..m.start()].chars().next_back();
            let mut after = line[m.end()..].chars();
            let a1 = after.next();
            let a2 = after.next();
            before.is_none_or(|c| !c.is_alphanumeric() && !glue_before.contains(c))
                && a1.is_none_or(|c| !c.is_alphanumeric() && c != '-' && c != '_')
                && !(a1 == Some('.') && a2.is_some_and(|c| c.is_alphanumeric()))
        })
        .map(|m| m.as_str())
        .collect()
}

/// Standards and names shaped like ids that are not this project's.
const NOT_IDS: &[&str] = &[
    "UTF", "SHA", "ISO", "RFC", "CVE", "CWE", "GPT", "ES", "MD", "TLS", "SSL", "HTTP", "AES",
    "RSA", "ECDSA", "ED", "PEP", "ECMA", "IEEE", "ANSI", "POSIX", "WCAG", "PCI", "FIPS", "UTC",
    "GMT", "CP", "WIN", "LATIN", "KOI", "BASE", "COVID", "IPV", "USB", "HDMI", "MP", "H", "PG",
    "CC", "GPL", "LGPL", "AGPL", "MPL", "BSD", "APACHE", "CRC", "FNV", "XXH", "ARM", "X",
];

/// Extensions that make a word a file name.
const EXTS: &[&str] = &[
    "rs", "toml", "md", "markdown", "txt", "json", "jsonl", "yaml", "yml", "py", "js", "mjs",
    "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp", "cs", "rb", "php",
    "sh", "bash", "zsh", "fish", "ps1", "sql", "html", "css", "scss", "lock", "cfg", "ini", "conf",
    "xml", "csv", "proto", "gradle", "swift", "lua", "pl", "ex", "exs", "erl", "hs", "ml", "scala",
    "clj", "vue", "svelte", "mk", "cmake", "bzl", "nix", "tf", "rst", "adoc", "ipynb", "dart",
    "zig", "sol", "graphql", "svg", "png", "jpg", "snap", "patch", "diff", "env",
];

const EXTENSIONLESS: &[&str] = &[
    "Makefile",
    "Dockerfile",
    "Containerfile",
    "Justfile",
    "justfile",
    "Gemfile",
    "Rakefile",
    "Procfile",
    "Vagrantfile",
    "CODEOWNERS",
];

/// Product names that look like files.
const NOT_FILES: &[&str] = &[
    "docs.rs",
    "node.js",
    "vue.js",
    "next.js",
    "nuxt.js",
    "three.js",
    "d3.js",
    "chart.js",
    "express.js",
    "react.js",
    "ember.js",
    "angular.js",
    "backbone.js",
    "alpine.js",
    "solid.js",
];

/// A path after these words names a file still to be made.
const MAKING: &[&str] = &[
    "create",
    "creating",
    "created",
    "add",
    "adding",
    "added",
    "new",
    "write",
    "writing",
    "touch",
    "generate",
    "generating",
    "scaffold",
    "into",
    "init",
];
const MOVING: &[&str] = &[
    "rename", "renaming", "move", "moving", "mv", "copy", "cp", "split", "extract",
];

/// Where a reference first appears: which text, and its line in the value.
#[derive(Clone, Copy)]
struct Seen {
    text: usize,
    line: usize,
}

/// Every reference finding; with `errors_only`, only CK410 (the others warn, and looking
/// for what a checkpoint names may search the repository's files and history).
pub fn check(
    c: &Checkpoint,
    sf: &StateFile,
    repo: &Repo,
    loc: &Locator,
    errors_only: bool,
) -> Vec<Finding> {
    if errors_only {
        return match repo.staged {
            true => Vec::new(),
            false => gone_dirty_paths(c, repo, loc),
        };
    }
    let all = texts(c);
    let mut ids: BTreeMap<String, (Seen, BTreeSet<usize>, bool)> = BTreeMap::new();
    let mut issues: BTreeMap<String, (Seen, BTreeSet<usize>, bool)> = BTreeMap::new();
    let mut paths: BTreeMap<String, Seen> = BTreeMap::new();
    for (ti, t) in all.iter().enumerate() {
        for (li, line) in t.text.lines().enumerate() {
            let lead =
                line.trim_start_matches(|ch: char| ch.is_whitespace() || "-*+•>".contains(ch));
            let id_refs = match could_hold_id(line) {
                true => refs_in(&ID, line, "_/.-"),
                false => Vec::new(),
            };
            for m in id_refs {
                let prefix = m.split('-').next().unwrap_or("");
                if NOT_IDS.contains(&prefix) {
                    continue;
                }
                let e = ids.entry(m.to_string()).or_insert((
                    Seen { text: ti, line: li },
                    BTreeSet::new(),
                    false,
                ));
                e.1.insert(ti);
                e.2 |= defines(lead, m);
            }
            let issue_refs = match line.contains('#') {
                true => refs_in(&ISSUE, line, "_&#/"),
                false => Vec::new(),
            };
            for m in issue_refs {
                let e = issues.entry(m.to_string()).or_insert((
                    Seen { text: ti, line: li },
                    BTreeSet::new(),
                    false,
                ));
                e.1.insert(ti);
                e.2 |= defines(lead, m);
            }
            for p in path_candidates(line, repo) {
                paths.entry(p).or_insert(Seen { text: ti, line: li });
            }
        }
    }
    // Defined in the checkpoint: opens an item ("DEC-0021: ...") or is
    // named in two places.
    let open = |m: BTreeMap<String, (Seen, BTreeSet<usize>, bool)>| -> BTreeMap<String, Seen> {
        m.into_iter()
            .filter(|(_, (_, texts, defined))| !defined && texts.len() < 2)
            .map(|(k, (seen, _, _))| (k, seen))
            .collect()
    };
    let mut ids = open(ids);
    let mut issues = open(issues);
    if !ids.is_empty() || !issues.is_empty() {
        search_repository(sf, repo, &mut ids, &mut issues);
    }

    let mut out = Vec::new();
    let mut push = |code, seen: Seen, msg: String| {
        let t: &Text = &all[seen.text];
        out.push(
            Finding::new(code, Severity::Warning, Some(t.field.key()), msg)
                .at(loc.text_line(t, seen.line)),
        );
    };
    for (id, seen) in ids {
        let label = all[seen.text].label();
        push("CK401", seen, format!(
            "{label} names {id}, which is neither defined in the checkpoint nor found in the repository; say what it is (e.g. \"{id}: <the decision>\"), or commit the record that defines it"
        ));
    }
    for (n, seen) in issues {
        let label = all[seen.text].label();
        push("CK402", seen, format!(
            "{label} names issue {n}, which appears nowhere in the checkpoint or the repository; add its title or a link so a cold reader knows what it is"
        ));
    }
    for (p, seen) in paths {
        if !path_exists(&p, c, repo) {
            let label = all[seen.text].label();
            push("CK403", seen, format!(
                "{label} names `{p}`, which is neither in the repository nor among the checkpoint's files; fix the path, or say the file is still to be created"
            ));
        }
    }
    // Uncommitted work lives in this working tree only; a commit never holds it.
    if !repo.staged {
        out.extend(gone_dirty_paths(c, repo, loc));
    }
    out
}

/// Marks ids and issue numbers found in the repository (tracked files, the
/// user's own prose in the state file, and for issues the commit messages)
/// by removing them from the maps.
fn search_repository(
    sf: &StateFile,
    repo: &Repo,
    ids: &mut BTreeMap<String, Seen>,
    issues: &mut BTreeMap<String, Seen>,
) {
    const MAX_FILE: u64 = 1024 * 1024;
    const MAX_TOTAL: u64 = 64 * 1024 * 1024;
    // ADR-7 may be a file docs/adr/0007-use-sqlite.md, DEC-0021 DEC-0021.md.
    ids.retain(|id, _| {
        let Some((prefix, num)) = id.split_once('-') else {
            return true;
        };
        let (prefix, id_lower) = (prefix.to_lowercase(), id.to_lowercase());
        let num = number(num);
        !repo.files().iter().any(|f| {
            let lower = f.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            name.contains(&id_lower)
                || (lower.contains(&prefix)
                    && name
                        .trim_start_matches('0')
                        .strip_prefix(num)
                        .is_some_and(|r| r.starts_with(['-', '_', '.'])))
        })
    });
    let pattern = |ids: &BTreeMap<String, Seen>,
                   issues: &BTreeMap<String, Seen>|
     -> Option<regex::bytes::Regex> {
        let mut alts: Vec<String> = ids
            .keys()
            .filter_map(|id| id.split_once('-'))
            .map(|(p, n)| format!(r"\b{}-0*{}\b", regex::escape(p), number(n)))
            .collect();
        alts.extend(issues.keys().map(|n| format!(r"{}\b", regex::escape(n))));
        (!alts.is_empty()).then(|| regex::bytes::Regex::new(&alts.join("|")).expect("escaped"))
    };
    let strike =
        |hay: &[u8], ids: &mut BTreeMap<String, Seen>, issues: &mut BTreeMap<String, Seen>| {
            let Some(re) = pattern(ids, issues) else {
                return;
            };
            for m in re.find_iter(hay) {
                let s = String::from_utf8_lossy(m.as_bytes());
                if s.starts_with('#') {
                    issues.remove(s.as_ref());
                } else if let Some((p, n)) = s.split_once('-') {
                    ids.retain(|k, _| {
                        k.split_once('-')
                            .is_none_or(|(kp, kn)| kp != p || number(kn) != number(n))
                    });
                }
            }
        };
    // The user's prose in the state file, outside the block ctxkeep renders
    // from the checkpoint (which would always match).
    let prose = match sf.managed_block() {
        Some(block) => sf.body.replacen(block, "", 1),
        None => sf.body.clone(),
    };
    strike(prose.as_bytes(), ids, issues);
    let mut total = 0u64;
    for f in repo.files() {
        if ids.is_empty() && issues.is_empty() || total > MAX_TOTAL {
            return;
        }
        if std::path::Path::new(f) == repo.state_rel {
            continue;
        }
        let path = repo.top.join(f);
        // Not followed: a tracked symlink may point outside the repository.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_FILE {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        total += bytes.len() as u64;
        if bytes.iter().take(8192).any(|&b| b == 0) {
            continue;
        }
        strike(&bytes, ids, issues);
    }
    if !issues.is_empty() && repo.no_git.is_none() {
        if let Ok(log) = crate::system::git::commit_messages(&repo.top, 5000) {
            strike(log.as_bytes(), ids, issues);
        }
    }
}

/// "DEC-0021: use serde" defines DEC-0021; "DEC-0021 is done" only names it.
fn defines(lead: &str, id: &str) -> bool {
    lead.strip_prefix(id).is_some_and(|rest| {
        let rest = rest.trim_start();
        rest.starts_with([':', '-', '—', '–', '(', '='])
    })
}

/// An id's number without its zero padding: DEC-0021 and DEC-21 are one.
fn number(n: &str) -> &str {
    match n.trim_start_matches('0') {
        "" => "0",
        t => t,
    }
}

/// Words of a line that name a repository file or folder.
fn path_candidates(line: &str, repo: &Repo) -> Vec<String> {
    let spaced = line.replace('`', " ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let lower_line = line.to_lowercase();
    let moving = MOVING
        .iter()
        .any(|m| lower_line.split_whitespace().any(|w| w == *m));
    let mut out = Vec::new();
    for (i, raw) in tokens.iter().enumerate() {
        let prev: Vec<String> = tokens[i.saturating_sub(2)..i]
            .iter()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .collect();
        if prev.iter().any(|w| MAKING.contains(&w.as_str()))
            || (moving && prev.last().is_some_and(|w| w == "to" || w == "as"))
        {
            continue;
        }
        if let Some(p) = as_path(raw, repo) {
            out.push(p);
        }
    }
    out
}

fn as_path(raw: &str, repo: &Repo) -> Option<String> {
    let mut tok = raw.trim_matches(|c: char| "()[]{}<>\"'“”‘’,;!?".contains(c));
    tok = tok.trim_end_matches(['.', ':', ',']);
    // src/state.rs:42:7 and src/state.rs#L10 name the file.
    if let Some(i) = tok.find("#L") {
        tok = &tok[..i];
    }
    while let Some((head, tail)) = tok.rsplit_once(':') {
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
            tok = head;
        } else {
            break;
        }
    }
    if tok.is_empty()
        || tok.len() > 200
        || tok.contains("://")
        || tok.starts_with("www.")
        || tok.starts_with(['~', '$', '/', '-', '.']) && !tok.starts_with("./")
        || !tok
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/+".contains(c))
    {
        return None;
    }
    let tok = tok.strip_prefix("./").unwrap_or(tok);
    let last = tok.trim_end_matches('/').rsplit('/').next().unwrap_or(tok);
    let known_ext = last
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTS.contains(&ext));
    if !tok.contains('/') {
        let product = NOT_FILES.contains(&tok.to_lowercase().as_str())
            || (tok.ends_with(".js") && tok.starts_with(|c: char| c.is_uppercase()));
        return ((known_ext && !product) || EXTENSIONLESS.contains(&tok)).then(|| tok.to_string());
    }
    let first = tok.split('/').next().unwrap_or("");
    let rooted = || {
        !first.is_empty()
            && (repo.top.join(first).exists()
                || repo.tracks_any(&[first.to_string()], |f| f.split('/').next() == Some(first)))
    };
    (raw.contains("./") || known_ext || rooted()).then(|| tok.trim_end_matches('/').to_string())
}

fn path_exists(p: &str, c: &Checkpoint, repo: &Repo) -> bool {
    let suffix = format!("/{p}");
    let dir = format!("{p}/");
    let in_checkpoint = || {
        c.git.as_ref().is_some_and(|g| {
            g.dirty
                .iter()
                .any(|d| d.path == p || d.path.ends_with(&suffix) || d.path.starts_with(&dir))
        })
    };
    // Cheapest first: git is asked only about a path neither on disk nor in the record.
    let in_files = || {
        let specs = [p.to_string(), format!("*{suffix}"), format!("*{suffix}/*")];
        repo.tracks_any(&specs, |f| {
            f == p
                || f.ends_with(&suffix)
                || f.starts_with(&dir)
                || f.contains(&format!("{suffix}/"))
        })
    };
    repo.present(p) || in_checkpoint() || in_files()
}

/// CK410: a file the checkpoint lists as uncommitted work that is no longer
/// there, and was not recorded as deleted: the work it describes is lost.
fn gone_dirty_paths(c: &Checkpoint, repo: &Repo, loc: &Locator) -> Vec<Finding> {
    let Some(git) = &c.git else {
        return Vec::new();
    };
    git.dirty
        .iter()
        .filter(|d| d.status != "deleted" && !d.path.is_empty())
        // A name that was not UTF-8 is recorded lossily (U+FFFD) and cannot
        // be looked up on disk; no finding beats a false "lost work".
        .filter(|d| !d.path.contains('\u{fffd}'))
        .filter(|d| repo.top.join(&d.path).symlink_metadata().is_err())
        .map(|d| {
            Finding::new(
                "CK410",
                Severity::Error,
                Some("git"),
                format!(
                    "`{}` is listed as uncommitted ({}) but is gone from the working tree; restore it, or write a new checkpoint with `ctxkeep checkpoint` so the record matches",
                    d.path, d.status
                ),
            )
            .at(loc.find_in_front(&d.path).or_else(|| loc.field_line("git")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_quick_look_lets_every_id_through() {
        for line in ["DEC-0021", "see ADR-7.", "T-12 done", "X9-١٢"] {
            assert!(could_hold_id(line) && ID.is_match(line), "{line}");
        }
        for line in ["ckpt-0002", "a-b", "UTF-x", "-12", "PROJ-"] {
            assert!(!could_hold_id(line), "{line}");
        }
    }

    proptest! {
        /// A line the look passes over has no match: the look only saves compiling.
        #[test]
        fn a_line_without_the_dash_has_no_id(line in "([A-Za-z0-9T# .\\-_/]|\\PC){0,40}") {
            if !could_hold_id(&line) {
                prop_assert!(!ID.is_match(&line), "{}", line);
            }
            if !line.contains('#') {
                prop_assert!(!ISSUE.is_match(&line), "{}", line);
            }
        }
    }
}
