//! The format's merge rules: three versions of `project-state.md` (the
//! merge base, ours, theirs) into one. Settings keys three-way per key; the
//! checkpoint and history by `record`; the prose outside the markers by
//! git's own text merge; the marked block rendered again from the result.
//! See docs/state-file.md, "Merging".

pub mod driver;
pub mod record;

use std::path::Path;

use serde_json::{json, Value};

use crate::domain::checkpoint::yaml_to_json;
use crate::domain::state::conflicts::{self, Side as Pick};
use crate::domain::state::StateFile;
use crate::domain::templates::Templates;
use crate::system::error::Error;

/// The driver's name in `.gitattributes` and the git config.
pub const DRIVER: &str = "ctxkeep";

/// Whether a `.gitattributes` text gives the state file ctxkeep's driver.
pub fn names_driver(text: &str) -> bool {
    text.lines().any(|l| {
        let mut parts = l.split_whitespace();
        parts.next().is_some_and(|p| {
            p.trim_start_matches('/')
                .ends_with(crate::domain::workspace::STATE_FILE)
        }) && parts.any(|a| a == format!("merge={DRIVER}"))
    })
}

/// The three texts of a merge. An empty base means none (the file was
/// added on both sides, or the base is not known).
#[derive(Debug, Clone, Copy)]
pub struct Texts<'a> {
    pub base: &'a str,
    pub ours: &'a str,
    pub theirs: &'a str,
}

/// The merged file and what it could not settle.
#[derive(Debug, Clone)]
pub struct Merged {
    pub text: String,
    /// What was left between conflict markers: `key window`, `prose`.
    pub conflicts: Vec<String>,
    /// The new merged checkpoint, when both sides had written one.
    pub checkpoint: Option<Value>,
}

/// Merges three versions of the state file at `path` (for messages; its
/// folder `root` holds the project's templates). `now` stamps a merged
/// checkpoint, whose number is at least `min_number`.
pub fn merge(
    path: &Path,
    root: &Path,
    texts: Texts,
    now: &str,
    min_number: u64,
) -> Result<Merged, Error> {
    let parse = |text: &str| StateFile::parse(path, text.to_string());
    // A base git made by merging several bases may hold markers itself.
    let base_text = match conflicts::regions(texts.base).is_empty() {
        true => texts.base.to_string(),
        false => conflicts::pick(texts.base, Pick::Ours).unwrap_or_default(),
    };
    let base = parse(&base_text).or_else(|_| parse(""))?;
    let mut sf = parse(texts.ours)?;
    let theirs = parse(texts.theirs)?;
    let mut conflicted: Vec<String> = Vec::new();

    // Settings and the user's own keys: three-way per key.
    let names = |s: &StateFile| -> Vec<String> {
        s.mapping
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect()
    };
    let mut keys = names(&sf);
    for k in names(&theirs) {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for k in keys
        .iter()
        .filter(|k| !matches!(k.as_str(), "checkpoint" | "history"))
    {
        let (b, o, t) = (
            base.mapping.get(k.as_str()),
            sf.mapping.get(k.as_str()),
            theirs.mapping.get(k.as_str()),
        );
        if o == t || b == t {
            continue;
        }
        if b == o {
            sf.set_key_text(k, theirs.key_text(k).as_deref())?;
        } else {
            conflicted.push(k.clone());
        }
    }

    // The checkpoint and history.
    let side = |s: &StateFile| record::Side {
        checkpoint: s.mapping.get("checkpoint").map(yaml_to_json),
        history: s.fm.history.clone().unwrap_or_default(),
    };
    let outcome = record::merge(&side(&base), &side(&sf), &side(&theirs), now, min_number);
    let mut made = None;
    match &outcome {
        record::Outcome::Ours => {}
        record::Outcome::Theirs => {
            for k in ["checkpoint", "history"] {
                sf.set_key_text(k, theirs.key_text(k).as_deref())?;
            }
        }
        record::Outcome::Merged {
            checkpoint,
            history,
        } => {
            sf.set_keys(&[
                ("checkpoint", Some(checkpoint.clone())),
                ("history", Some(json!(history))),
            ])?;
            made = Some(checkpoint.clone());
        }
    }

    // The prose: git's three-way text merge, the marked block left empty.
    let (po, pb, pt) = (sf.prose(), base.prose(), theirs.prose());
    let prose = if po == pt || pb == pt {
        po.clone()
    } else if pb == po {
        pt
    } else {
        let (text, n) = crate::system::git::merge_text(&pb, &po, &pt)
            .map_err(|e| Error::data(path, format!("the prose could not be merged: {e}")))?;
        if n > 0 {
            conflicted.push("prose".into());
        }
        text
    };
    if outcome != record::Outcome::Ours || prose != po {
        sf.body = prose;
        let templates = Templates::load(root, sf.fm.templates.as_deref())?;
        let history: Value = sf
            .mapping
            .get("history")
            .map(yaml_to_json)
            .unwrap_or(json!([]));
        let block = templates.render(
            "state.md",
            json!({ "checkpoint": sf.fm.checkpoint, "history": history }),
        )?;
        sf.set_managed_block(&crate::system::redact::redact(&block))?;
        // A merged checkpoint records the block written with it, as any
        // checkpoint does, so that a later hand edit of the block shows.
        if let (Some(c), Some(content)) = (made.as_mut(), sf.managed_block()) {
            c["block_digest"] = json!(crate::domain::state::block_digest(content));
            record::reseal(c);
            sf.set_keys(&[("checkpoint", Some(c.clone()))])?;
        }
    }

    // Last, as the file no longer parses after it: both sides of each key
    // that changed differently.
    let settings: Vec<String> = conflicted
        .iter()
        .filter(|k| *k != "prose")
        .cloned()
        .collect();
    for k in &settings {
        let (o, t) = (sf.key_text(k), theirs.key_text(k));
        sf.mark_key_conflict(k, o.as_deref(), t.as_deref());
    }
    // The one rule: a merge a reader could not take back is no merge (the
    // driver falls back to git's text merge). Markers the merge leaves on
    // purpose are allowed.
    let text = sf.render();
    crate::domain::state::limits::check_text(path, &text, !conflicted.is_empty())?;
    Ok(Merged {
        text,
        conflicts: conflicted
            .into_iter()
            .map(|k| if k == "prose" { k } else { format!("key {k}") })
            .collect(),
        checkpoint: made,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "---\nctxkeep: 1\n# who owns it\nowner: alice # the lead\nwindow: 200000\n---\n# Notes\n\nfirst\n\n<!-- ctxkeep:begin -->\nold\n<!-- ctxkeep:end -->\n\nlast\n";

    fn run(base: &str, ours: &str, theirs: &str) -> Merged {
        let dir = tempfile::tempdir().unwrap();
        let texts = Texts { base, ours, theirs };
        merge(
            Path::new("project-state.md"),
            dir.path(),
            texts,
            "2026-01-15T12:00:00Z",
            0,
        )
        .unwrap()
    }

    #[test]
    fn keys_merge_one_by_one_with_their_comments() {
        let ours = BASE.replace("window: 200000", "window: 100000");
        let theirs = BASE.replace("owner: alice # the lead", "owner: bob # since May");
        let m = run(BASE, &ours, &theirs);
        assert!(m.conflicts.is_empty(), "{:?}", m.conflicts);
        assert!(
            m.text.starts_with(
                "---\nctxkeep: 1\n# who owns it\nowner: bob # since May\nwindow: 100000\n---\n"
            ),
            "{}",
            m.text
        );
        // Both changed one key differently: a conflict named by the key.
        let theirs = BASE.replace("window: 200000", "window: 150000");
        let m = run(BASE, &ours, &theirs);
        assert_eq!(m.conflicts, ["key window"]);
        assert!(
            m.text.contains(
                "<<<<<<< ours\nwindow: 100000\n=======\nwindow: 150000\n>>>>>>> theirs\n"
            ),
            "{}",
            m.text
        );
    }

    #[test]
    fn a_merge_no_reader_could_take_back_is_refused() {
        // Each side alone fits; both sides' keys together would be over
        // the 64 KiB of front matter a reader takes.
        let big = |k: &str| format!("{k}: \"{}\"\n", "x".repeat(40_000));
        let ours = BASE.replace(
            "window: 200000\n",
            &format!("window: 200000\n{}", big("mine")),
        );
        let theirs = BASE.replace(
            "window: 200000\n",
            &format!("window: 200000\n{}", big("yours")),
        );
        let dir = tempfile::tempdir().unwrap();
        let texts = Texts {
            base: BASE,
            ours: &ours,
            theirs: &theirs,
        };
        let e = merge(Path::new("project-state.md"), dir.path(), texts, "t", 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the front matter would be") && e.contains("nothing was written"),
            "{e}"
        );
    }

    #[test]
    fn prose_merges_as_text_and_crlf_is_kept() {
        let ours = BASE.replace("first\n", "first, edited here\n");
        let theirs = BASE.replace("last\n", "last, edited there\n");
        let m = run(BASE, &ours, &theirs);
        assert!(m.conflicts.is_empty());
        assert!(
            m.text.contains("first, edited here\n") && m.text.ends_with("last, edited there\n")
        );
        let crlf = |t: &str| t.replace('\n', "\r\n");
        let m = run(&crlf(BASE), &crlf(&ours), &crlf(&theirs));
        assert!(m.conflicts.is_empty());
        assert!(!m.text.replace("\r\n", "").contains('\n'), "{:?}", m.text);
        let theirs = BASE.replace("first\n", "first, edited there\n");
        let m = run(BASE, &ours, &theirs);
        assert_eq!(m.conflicts, ["prose"]);
        assert_eq!(crate::domain::state::conflicts::regions(&m.text).len(), 1);
    }
}
