//! The merge jobs: git's merge driver (`merge-file`), finishing a merge the
//! driver did not make (`resolve`), and setting the driver up (`init`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::domain::checkpoint::{Archive, Checkpoint};
use crate::domain::merge::{self, names_driver, Texts, DRIVER};
use crate::domain::state::conflicts::{self, Side};
use crate::domain::state::MAX_FILE_BYTES;
use crate::domain::workspace::{Workspace, STATE_FILE};
use crate::system::error::Error;
use crate::system::fsutil::Lock;
use crate::system::output::Output;

#[derive(Debug, Serialize)]
pub struct MergeReport {
    pub path: String,
    /// What is left between conflict markers (`key window`, `prose`).
    pub conflicts: Vec<String>,
    /// The merged checkpoint's id, when both sides had written one.
    pub merged_checkpoint: Option<String>,
    /// Where the three versions came from: `index` (git's stages), `markers`
    /// (the sides between the conflict markers) or `files` (the driver's).
    pub source: &'static str,
    /// The merge could not be made by the format's rules; this is git's
    /// plain text merge.
    pub fallback: Option<String>,
    /// The merged text (for `resolve --dry-run`).
    #[serde(skip)]
    pub text: String,
    pub written: bool,
}

fn read(path: &Path) -> Result<String, Error> {
    crate::system::fsutil::read_text(path, MAX_FILE_BYTES)
}

/// The next checkpoint number the local archive leaves free (1 without one).
fn archive_floor(root: &Path) -> u64 {
    let dir = root
        .join(crate::domain::workspace::DATA_DIR)
        .join("checkpoints");
    Archive { dir: &dir }.max_number() + 1
}

/// Merges by the format's rules; on a file that is not a state file (or
/// not one this ctxkeep reads), git's text merge instead, so the user gets
/// the usual markers rather than nothing.
fn merge_or_fallback(path: &Path, root: &Path, texts: Texts) -> (merge::Merged, Option<String>) {
    let now = crate::system::clock::now_rfc3339();
    match merge::merge(path, root, texts, &now, archive_floor(root)) {
        Ok(m) => (m, None),
        Err(e) => {
            let (text, n) = crate::system::git::merge_text(texts.base, texts.ours, texts.theirs)
                .unwrap_or_else(|_| (texts.ours.to_string(), 1));
            // The text merge is held to the same rule: a result no reader
            // could take back (both sides' additions over the front matter's
            // limit) is not made; ours stays, as a conflict to settle by hand.
            if let Err(why) = crate::domain::state::limits::check_text(path, &text, true) {
                let merged = merge::Merged {
                    text: texts.ours.to_string(),
                    conflicts: vec!["text".into()],
                    checkpoint: None,
                };
                return (merged, Some(format!("{e}; and as plain text: {why}")));
            }
            let merged = merge::Merged {
                text,
                conflicts: if n > 0 {
                    vec!["text".into()]
                } else {
                    Vec::new()
                },
                checkpoint: None,
            };
            (merged, Some(e.to_string()))
        }
    }
}

/// Archives a merged checkpoint where `.ctxkeep/` is (best effort: the
/// archive is a local convenience; the file is the record). Call under the
/// project lock, which also covered choosing its id: the no-clobber create
/// then never meets another writer's checkpoint of that id.
fn archive(root: &Path, record: &serde_json::Value, out: &Output) -> Option<Checkpoint> {
    let dir = root.join(crate::domain::workspace::DATA_DIR);
    if !dir.is_dir() {
        return None;
    }
    let c = serde_json::from_value::<Checkpoint>(record.clone()).ok()?;
    match (Archive {
        dir: &dir.join("checkpoints"),
    })
    .store(&c, None)
    {
        Ok(()) => Some(c),
        Err(e) => {
            out.warn(&format!("the merged checkpoint was not archived: {e}"));
            None
        }
    }
}

/// The project lock the driver takes where `.ctxkeep/` is: every writer takes it, and the
/// merged checkpoint's id is chosen from the archive, which they add to. None without the
/// folder (a fresh clone: no writer there yet, and no archive to take ids from).
fn driver_lock(root: &Path, timeout: Duration, out: &Output) -> Result<Option<Lock>, Error> {
    let dir = root.join(crate::domain::workspace::DATA_DIR);
    if !dir.is_dir() {
        return Ok(None);
    }
    Lock::acquire(&dir.join("lock"), timeout, out).map(Some)
}

/// git's merge driver: `%O %A %B %P`. The result goes to `ours` (git's
/// temp file); conflicts left are in the report.
pub fn merge_file(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    name: Option<&str>,
    lock_timeout: Duration,
    out: &Output,
) -> anyhow::Result<MergeReport> {
    // git runs the driver at the top of the work tree; %P is relative to it.
    let shown = PathBuf::from(name.unwrap_or(STATE_FILE));
    if shown.file_name().is_none_or(|n| n != STATE_FILE) {
        return refuse_other_file(&shown, base, ours, theirs);
    }
    let (b, o, t) = (read(base)?, read(ours)?, read(theirs)?);
    let root = std::env::current_dir()
        .unwrap_or_default()
        .join(shown.parent().unwrap_or(Path::new("")));
    let texts = Texts {
        base: &b,
        ours: &o,
        theirs: &t,
    };
    // From the archive's floor to the archived record, under the lock: a hook writing a
    // checkpoint meanwhile would otherwise take the same id.
    let _lock = driver_lock(&root, lock_timeout, out)?;
    let (m, fallback) = merge_or_fallback(&shown, &root, texts);
    crate::system::fsutil::atomic_write(ours, m.text.as_bytes(), None)?;
    if let Some(c) = m.checkpoint.as_ref().and_then(|c| archive(&root, c, out)) {
        // Until the merge is concluded, the archived record only stands for a merge under
        // way: one aborted never shows in `log`, and the next checkpoint removes it.
        Archive {
            dir: &root
                .join(crate::domain::workspace::DATA_DIR)
                .join("checkpoints"),
        }
        .mark_merging(&c);
    }
    Ok(report(&shown, m, fallback, "files", true))
}

/// The driver named for a file that is not a state file (`* merge=ctxkeep` in a cloned
/// repository's `.gitattributes`): ctxkeep's rules would append its block to code. The file
/// gets git's own text merge (its conflict markers where both sides changed a line) and the
/// driver fails, so git reports a conflict there instead of a clean merge; nothing else is
/// written.
fn refuse_other_file(
    shown: &Path,
    base: &Path,
    ours: &Path,
    theirs: &Path,
) -> anyhow::Result<MergeReport> {
    // A file ctxkeep cannot read as text (binary, too large) stays as ours, still a conflict.
    if let (Ok(b), Ok(o), Ok(t)) = (read(base), read(ours), read(theirs)) {
        if let Ok((merged, _)) = crate::system::git::merge_text(&b, &o, &t) {
            crate::system::fsutil::atomic_write(ours, merged.as_bytes(), None)?;
        }
    }
    Err(Error::Usage(format!(
        "{}: ctxkeep's merge driver merges {STATE_FILE} only; this file was merged as plain text and left as a conflict: check it, `git add` it, and name the driver for {STATE_FILE} alone in .gitattributes (`{STATE_FILE} merge={DRIVER}`)",
        shown.display()
    ))
    .into())
}

fn report(
    path: &Path,
    m: merge::Merged,
    fallback: Option<String>,
    source: &'static str,
    written: bool,
) -> MergeReport {
    MergeReport {
        path: path.display().to_string(),
        conflicts: m.conflicts,
        merged_checkpoint: m
            .checkpoint
            .as_ref()
            .and_then(|c| c.get("id"))
            .and_then(|v| v.as_str())
            .map(str::to_string),
        source,
        fallback,
        text: m.text,
        written,
    }
}

/// Finishes a merge left with conflict markers in the state file: from
/// git's index stages while a merge is under way, else from the two sides
/// between the markers (and the base, in diff3 style). Writes the result
/// unless `dry_run`.
pub fn resolve(ws: &Workspace, dry_run: bool, out: &Output) -> anyhow::Result<MergeReport> {
    let text = read(&ws.state_path)?;
    let regions = conflicts::regions(&text);
    if regions.is_empty() {
        return Ok(MergeReport {
            path: ws.display_state(),
            conflicts: Vec::new(),
            merged_checkpoint: None,
            source: "markers",
            fallback: None,
            text,
            written: false,
        });
    }
    // Markers only in the prose: the rest was merged (by the driver) and
    // what is left is the user's to settle; rewriting it from the sides
    // could undo edits made since.
    if let Ok(sf) = crate::domain::state::StateFile::parse(&ws.state_path, text.clone()) {
        let front_lines = text[..text.len() - sf.body.len()].matches('\n').count();
        if regions.iter().all(|r| r.first > front_lines) {
            return Ok(MergeReport {
                path: ws.display_state(),
                conflicts: vec![format!("prose ({})", conflicts::describe(&regions))],
                merged_checkpoint: None,
                source: "markers",
                fallback: None,
                text,
                written: false,
            });
        }
    }
    let (b, o, t, source) = match stages(ws) {
        Some((b, o, t)) => (b, o, t, "index"),
        None => {
            let side = |s| conflicts::pick(&text, s);
            (
                side(Side::Base).unwrap_or_default(),
                side(Side::Ours).unwrap_or_default(),
                side(Side::Theirs).unwrap_or_default(),
                "markers",
            )
        }
    };
    let texts = Texts {
        base: &b,
        ours: &o,
        theirs: &t,
    };
    let (m, fallback) = merge_or_fallback(&ws.state_path, &ws.root, texts);
    if dry_run {
        return Ok(report(&ws.state_path, m, fallback, source, false));
    }
    let _lock = ws.lock()?;
    crate::system::fsutil::atomic_write(&ws.state_path, m.text.as_bytes(), Some(text.as_bytes()))?;
    if let Some(c) = &m.checkpoint {
        archive(&ws.root, c, out);
    }
    let mut r = report(&ws.state_path, m, fallback, source, true);
    r.path = ws.display_state();
    Ok(r)
}

/// The base, ours and theirs of the state file in git's index while a
/// merge (or rebase, cherry-pick) stopped on it.
fn stages(ws: &Workspace) -> Option<(String, String, String)> {
    let top = crate::system::git::toplevel(&ws.root).ok()?;
    let top = std::fs::canonicalize(&top).unwrap_or(top);
    let state =
        std::fs::canonicalize(crate::system::fsutil::resolve_target(&ws.state_path)).ok()?;
    let rel = state
        .strip_prefix(&top)
        .ok()?
        .to_string_lossy()
        .into_owned();
    let get = |n| {
        crate::system::git::index_stage(&top, n, &rel)
            .ok()
            .flatten()
    };
    let (o, t) = (get(2)?, get(3)?);
    Some((get(1).unwrap_or_default(), o, t))
}

/// What `init` did about the merge driver.
#[derive(Debug, Default, Serialize)]
pub struct DriverSetup {
    pub gitattributes_updated: bool,
    pub config_updated: bool,
}

/// The command git runs: this binary when `ctxkeep` on the PATH is not it.
fn driver_command() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok());
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("ctxkeep"))
                .filter_map(|c| std::fs::canonicalize(c).ok())
                .any(|c| Some(&c) == exe.as_ref())
        })
        .unwrap_or(false);
    let program = match (&exe, on_path) {
        (Some(exe), false) => {
            format!("'{}'", exe.display().to_string().replace('\'', "'\\''"))
        }
        _ => "ctxkeep".to_string(),
    };
    format!("{program} merge-file %O %A %B %P")
}

/// Names the driver for the state file in `.gitattributes` (committed, so
/// every clone has it) and defines it in the repository's local config
/// (which git does not share: every clone runs `init` once).
pub fn setup_driver(ws: &Workspace) -> anyhow::Result<DriverSetup> {
    let Ok(top) = crate::system::git::toplevel(&ws.root) else {
        return Ok(DriverSetup::default());
    };
    let mut done = DriverSetup::default();
    let path = top.join(".gitattributes");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(&path, "cannot read", e).into()),
    };
    if !names_driver(&text) {
        let mut new = text.clone();
        if !new.is_empty() && !new.ends_with('\n') {
            new.push('\n');
        }
        new.push_str(&format!(
            "# ctxkeep merges its checkpoints (see `ctxkeep merge-file`)\n{STATE_FILE} merge={DRIVER}\n"
        ));
        crate::system::fsutil::atomic_write(&path, new.as_bytes(), Some(text.as_bytes()))?;
        done.gitattributes_updated = true;
    }
    let key = format!("merge.{DRIVER}.driver");
    if crate::system::git::config_get(&top, &key)
        .ok()
        .flatten()
        .is_none()
    {
        crate::system::git::config_set_local(&top, &key, &driver_command())
            .map_err(|e| anyhow::anyhow!("could not set {key} in the local git config: {e}"))?;
        done.config_updated = true;
    }
    Ok(done)
}
