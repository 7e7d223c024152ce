//! Uncommitted work kept in git with the checkpoints ctxkeep writes on its
//! own ([`crate::system::git::snapshot`]): taken when the work tree changed since the
//! last snapshot, linked from the checkpoint (`git.snapshot`), its ref named
//! after the checkpoint so that retention prunes both together; brought back
//! by `ctxkeep restore`.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::domain::checkpoint::{Archive, Checkpoint, GitState};
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::Lock;
use crate::system::git::snapshot::{self, SnapFile, Snapshot, Taken};
use crate::system::output::Output;
use crate::transcripts::destructive::{self, Kind};

/// The trigger of the checkpoint written before a destructive command.
pub const TRIGGER: &str = "pre-destructive";

/// Stores the work `g` lists (all of it: called before the list is capped)
/// unless the last snapshot (`prev`'s) has the same tree, which is then
/// carried over; `before`: the command it is taken before; `ready`: a
/// snapshot already taken for it (the pre-tool hook takes it before the
/// lock). Never fails the checkpoint: git's refusal is a warning. Returns
/// what it could not keep.
pub fn attach(
    ws: &Workspace,
    g: &mut GitState,
    prev: Option<&Checkpoint>,
    why: &str,
    before: Option<&str>,
    ready: Option<Snapshot>,
    out: &Output,
) -> Vec<String> {
    let mut left_out = Vec::new();
    if let Some(ready) = ready {
        left_out = ready.left_out.clone();
        g.snapshot = Some(ready);
    } else {
        if g.dirty.is_empty() {
            return left_out;
        }
        let last = prev
            .and_then(|p| p.git.as_ref())
            .and_then(|pg| pg.snapshot.clone());
        let paths: Vec<String> = g.dirty.iter().map(|d| d.path.clone()).collect();
        let message = format!("ctxkeep: uncommitted work at {why}");
        match snapshot::take(
            &ws.root,
            &paths,
            &[],
            g.head.as_deref(),
            &message,
            last.as_ref(),
        ) {
            Ok(taken) => {
                left_out = taken.left_out;
                g.snapshot = taken.snapshot.or(last);
            }
            Err(e) => {
                out.warn(&format!("uncommitted work was not stored in git: {e}"));
                return left_out;
            }
        }
    }
    if let (Some(s), Some(command)) = (g.snapshot.as_mut(), before) {
        s.before = Some(crate::system::output::clip(command, COMMAND_CHARS));
    }
    left_out
}

/// The snapshot the pre-tool hook takes before a destructive command,
/// without the lock (it writes only objects and a ref): the work `g`
/// lists, with `project-state.md` and the checkpoint it names (`current`),
/// kept under a `pending-<time>` ref until its checkpoint names it.
pub fn take_before(
    ws: &Workspace,
    g: &GitState,
    current: Option<&Checkpoint>,
    command: &str,
) -> Result<(Taken, Option<String>), crate::system::git::Unavailable> {
    let paths: Vec<String> = g.dirty.iter().map(|d| d.path.clone()).collect();
    let mut own = vec![crate::system::fsutil::resolve_target(&ws.state_path)];
    if let Some(c) = current {
        own.push(ws.checkpoints_dir().join(format!("{}.json", c.id)));
    }
    let message = format!("ctxkeep: uncommitted work at {TRIGGER}");
    let mut taken = snapshot::take(&ws.root, &paths, &own, g.head.as_deref(), &message, None)?;
    let mut pending = None;
    if let Some(s) = taken.snapshot.as_mut() {
        s.before = Some(crate::system::output::clip(command, COMMAND_CHARS));
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let name = format!("{PENDING}{stamp}");
        snapshot::keep(&ws.root, &name, &s.commit)?;
        pending = Some(name);
    }
    Ok((taken, pending))
}

/// The name a snapshot ref has until its checkpoint is written.
pub const PENDING: &str = "pending-";

/// How much of a command a snapshot records.
const COMMAND_CHARS: usize = 300;

/// Names the snapshot after the checkpoint that records it, so git keeps it.
pub fn keep(ws: &Workspace, record: &Checkpoint, out: &Output) {
    let Some(s) = record.git.as_ref().and_then(|g| g.snapshot.as_ref()) else {
        return;
    };
    if let Err(e) = snapshot::keep(&ws.root, &record.id, &s.commit) {
        out.warn(&format!("the snapshot of {} has no ref: {e}", record.id));
    }
}

/// What `command`, run from `cwd`, would discard: `git checkout A …` read
/// as git reads it ([`snapshot::checkout_paths`]), git's aliases read (`git config
/// --get-regexp alias`, in the repository around `root`) only when it runs a
/// git subcommand git does not have. Empty: nothing to keep, and no git run
/// to find that out.
pub fn threats(command: &str, root: &Path, cwd: &Path) -> Vec<Kind> {
    let found: Vec<Kind> = destructive::recognise_all(command)
        .into_iter()
        .map(|f| f.kind)
        .collect();
    let found = if found.iter().any(|k| matches!(k, Kind::Alias(..))) {
        let aliases = snapshot::aliases(root).unwrap_or_default();
        let mut out = Vec::new();
        expand(found, &aliases, 0, &mut out);
        out
    } else {
        found
    };
    found
        .into_iter()
        .filter_map(|k| match k {
            Kind::Checkout { within, operands } => {
                snapshot::checkout_paths(&within, &operands, cwd).map(Kind::Discard)
            }
            k => Some(k),
        })
        .collect()
}

/// Replaces each alias by what it runs (an alias of an alias too, a few deep).
fn expand(kinds: Vec<Kind>, aliases: &[(String, String)], depth: usize, out: &mut Vec<Kind>) {
    for kind in kinds {
        let Kind::Alias(name, args) = kind else {
            out.push(kind);
            continue;
        };
        let Some((_, value)) = aliases.iter().find(|(n, _)| *n == name) else {
            // Not an alias either: git refuses the command.
            continue;
        };
        if depth > 3 {
            out.push(Kind::Unsure);
            continue;
        }
        let args: Vec<String> = args
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
            .collect();
        let line = match value.strip_prefix('!') {
            Some(shell) => format!("{shell} {}", args.join(" ")),
            None => format!("git {value} {}", args.join(" ")),
        };
        let inner = destructive::recognise_all(&line)
            .into_iter()
            .map(|f| f.kind)
            .collect();
        expand(inner, aliases, depth + 1, out);
    }
}

/// Whether one of `kinds`, run from `cwd`, would discard some of the
/// uncommitted work in `g`, the repository at `top`.
pub fn at_risk(kinds: &[Kind], g: &GitState, top: &Path, cwd: &Path) -> bool {
    if g.dirty.is_empty() {
        return false;
    }
    let under = |targets: &[String]| {
        g.dirty
            .iter()
            .any(|d| destructive::covers(targets, top, cwd, &d.path))
    };
    kinds.iter().any(|kind| match kind {
        Kind::Discard(paths) | Kind::Remove(paths) => under(paths),
        Kind::PushForce(refspecs) => {
            refspecs.is_empty()
                || refspecs.iter().any(|r| {
                    let dst = r.trim_start_matches('+');
                    let dst = dst.rsplit(':').next().unwrap_or(dst);
                    let dst = dst.trim_start_matches("refs/heads/");
                    dst == "HEAD" || g.branch.as_deref() == Some(dst)
                })
        }
        Kind::ResetHard | Kind::Clean | Kind::Unsure | Kind::Alias(..) => true,
        // Read by [`threats`] before; one left here is taken for what it may be.
        Kind::Checkout { .. } => true,
        // The stash is kept on its own ([`keep_stashes`]).
        Kind::StashDrop => false,
    })
}

/// Adds to `g` the submodules that hold uncommitted work `git status` was told to ignore
/// (`submodule.<name>.ignore` in `.gitmodules` or a config file, `diff.ignoreSubmodules`): their
/// work is not listed, yet a hard reset inside one loses it. Git is asked once, past every such
/// setting, about the submodules `.gitmodules` names and `git status` did not list.
pub fn add_ignored_submodules(g: &mut GitState, top: &Path) {
    let Ok(text) = crate::system::fsutil::read_text(&top.join(".gitmodules"), 1 << 20) else {
        return;
    };
    let unlisted: Vec<String> = text
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "path").then(|| value.trim().trim_matches('"').to_string())
        })
        .filter(|p| !g.dirty.iter().any(|d| d.path == *p) && top.join(p).join(".git").exists())
        .collect();
    if unlisted.is_empty() {
        return;
    }
    // A failure of git leaves them out, as before: the snapshot of the rest still goes ahead.
    for p in crate::system::git::snapshot::dirty_submodules(top, &unlisted).unwrap_or_default() {
        g.dirty.push(crate::system::git::DirtyFile {
            path: p,
            status: "modified".into(),
        });
    }
}

/// What `restore` brought back.
#[derive(Debug, Serialize)]
pub struct Restored {
    /// The checkpoint whose snapshot it was (or the ref's name, `pending-…`, when no
    /// checkpoint was written for it).
    pub checkpoint: String,
    pub commit: String,
    pub files: Vec<SnapFile>,
    /// HEAD then and now, when it moved since the snapshot was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_moved: Option<HeadMoved>,
}

#[derive(Debug, Serialize)]
pub struct HeadMoved {
    pub from: String,
    pub to: String,
}

/// A snapshot to restore: the name it goes by and its commit.
pub struct Found {
    pub name: String,
    pub commit: String,
}

/// The snapshot `id` names (a checkpoint's, else a ref of that name), or by
/// default the newest: the latest checkpoint's, or a newer ref no checkpoint
/// names yet (a pre-tool hook that could not write its checkpoint). Without
/// a state file (deleted with the work) the refs alone. A commit that no ref
/// under `refs/ctxkeep/snapshots/` holds is refused: only ctxkeep makes those.
pub fn find(ws: &Workspace, id: Option<&str>) -> anyhow::Result<Found> {
    let refs = snapshot::list(&ws.root).unwrap_or_default();
    let by_ref = |name: &str| {
        refs.iter().find(|(n, _)| n == name).map(|(n, c)| Found {
            name: n.clone(),
            commit: c.clone(),
        })
    };
    let sf = crate::domain::state::StateFile::load(&ws.state_path)
        .ok()
        .filter(|sf| sf.require_initialized().is_ok());
    let Some(sf) = sf else {
        // The state file went (`git clean -fd` before its first commit): the refs still hold it.
        let newest = match id {
            Some(id) => by_ref(id),
            None => refs.first().map(|(n, c)| Found {
                name: n.clone(),
                commit: c.clone(),
            }),
        };
        return newest.ok_or_else(|| {
            Error::NotInitialized {
                path: ws.state_path.clone(),
                why: "not initialized, and no snapshot of uncommitted work is kept here",
            }
            .into()
        });
    };
    let archive = Archive {
        dir: &ws.checkpoints_dir(),
    };
    let current = sf.fm.checkpoint.clone();
    let snap = |c: &Checkpoint| c.git.as_ref().and_then(|g| g.snapshot.clone());
    let recorded: Option<(Checkpoint, Snapshot)> = match id {
        Some(id) => {
            let c = current
                .filter(|c| c.id == id)
                .or_else(|| archive.load(id).ok());
            match (c, by_ref(id)) {
                (Some(c), _) if snap(&c).is_some() => {
                    let s = snap(&c).unwrap_or_else(|| unreachable!());
                    Some((c, s))
                }
                (_, Some(found)) => return Ok(found),
                (Some(_), None) => {
                    return Err(Error::no_input(
                        &ws.state_path,
                        format!("checkpoint {id} holds no snapshot of uncommitted work"),
                    )
                    .into())
                }
                (None, None) => {
                    return Err(Error::no_input(
                        ws.checkpoints_dir().join(format!("{id}.json")),
                        format!("no checkpoint {id} (not current, not archived)"),
                    )
                    .into())
                }
            }
        }
        None => current
            .into_iter()
            .chain(
                archive
                    .ids()
                    .into_iter()
                    .rev()
                    .filter_map(|id| archive.load(&id).ok()),
            )
            .find_map(|c| snap(&c).map(|s| (c, s))),
    };
    if id.is_none() {
        // A pending ref newer than the checkpoint's snapshot: its checkpoint was never written.
        let newer_pending = refs
            .iter()
            .take_while(|(_, c)| recorded.as_ref().is_none_or(|(_, s)| *c != s.commit))
            .find(|(n, _)| n.starts_with(PENDING));
        if let Some((n, c)) = newer_pending {
            return Ok(Found {
                name: n.clone(),
                commit: c.clone(),
            });
        }
    }
    let (c, s) = match recorded {
        Some(found) => found,
        None => match refs.first() {
            Some((n, c)) => {
                return Ok(Found {
                    name: n.clone(),
                    commit: c.clone(),
                })
            }
            None => {
                return Err(Error::no_input(
                    &ws.state_path,
                    "no checkpoint holds a snapshot of uncommitted work",
                )
                .into())
            }
        },
    };
    if snapshot::exists(&ws.root, &s.commit) && !snapshot::made_by_ctxkeep(&ws.root, &s.commit) {
        return Err(Error::Refused(format!(
            "{}: checkpoint {} names {} as its snapshot, but no ref under {} holds that commit: it is not a snapshot ctxkeep made here; nothing restored",
            ws.display_state(),
            c.id,
            s.commit,
            snapshot::REF_PREFIX
        ))
        .into());
    }
    Ok(Found {
        name: c.id,
        commit: s.commit,
    })
}

/// Brings a snapshot's files back into the working tree, comparing each with
/// the file as it is now (ignored or not): a path that is missing now is
/// what restore is for; one that holds the snapshot's bytes or the
/// committed ones it was taken on is written; anything else there (newer
/// work, a directory, content committed since HEAD moved) is named and
/// nothing is written, unless `force`.
pub fn restore(
    ws: &Workspace,
    lock: &Lock,
    id: Option<&str>,
    force: bool,
) -> anyhow::Result<Restored> {
    let found = find(ws, id)?;
    let unavailable =
        |e: crate::system::git::Unavailable| Error::Refused(format!("cannot restore: {e}"));
    if !snapshot::exists(&ws.root, &found.commit) {
        return Err(Error::no_input(
            &ws.root,
            format!(
                "the snapshot of {} ({}) is no longer in this repository",
                found.name, found.commit
            ),
        )
        .into());
    }
    let top = snapshot::top(&ws.root).map_err(unavailable)?;
    let own = own_paths(ws, &top);
    // ctxkeep's own files come back only where they are missing (deleted with the work).
    // Submodules come back from their own snapshots, each checked like the rest.
    let subs: Vec<Submodule> = snapshot::submodule_snapshots(&ws.root, &found.commit)
        .map_err(unavailable)?
        .into_iter()
        .map(|(path, folder, commit)| Submodule::read(path, folder, commit))
        .collect::<Result<_, _>>()
        .map_err(unavailable)?;
    let files: Vec<SnapFile> = snapshot::files(&ws.root, &found.commit)
        .map_err(unavailable)?
        .into_iter()
        .filter(|f| {
            !own.iter()
                .any(|o| f.path == *o || f.path.starts_with(&format!("{o}/")))
                || std::fs::symlink_metadata(top.join(snapshot::bytes_path(&f.raw))).is_err()
        })
        .filter(|f| !subs.iter().any(|s| s.path == f.path))
        .collect();
    let base = snapshot::parent(&ws.root, &found.commit);
    let head = crate::system::git::head(&ws.root).ok().flatten();
    let head_moved = match (&base, &head) {
        (Some(b), Some(h)) if b != h => Some(HeadMoved {
            from: b.clone(),
            to: h.clone(),
        }),
        _ => None,
    };
    if !force {
        let mut clash = clashes(
            &ws.root,
            &top,
            &found.commit,
            base.as_deref(),
            head_moved.as_ref().and(head.as_deref()),
            &files,
        )
        .map_err(unavailable)?;
        for sub in &subs {
            let theirs = clashes(
                &sub.folder,
                &sub.folder,
                &sub.commit,
                sub.base.as_deref(),
                sub.moved_to.as_deref(),
                &sub.files,
            )
            .map_err(unavailable)?;
            clash.extend(theirs.into_iter().map(|c| format!("{}/{c}", sub.path)));
        }
        if !clash.is_empty() {
            let moved = head_moved
                .as_ref()
                .map(|m| {
                    format!(
                        "; HEAD moved since the snapshot ({} -> {})",
                        short(&m.from),
                        short(&m.to)
                    )
                })
                .unwrap_or_default();
            return Err(Error::Refused(format!(
                "{} path(s) hold work the snapshot of {} would overwrite ({}){moved}; nothing restored: move or commit them, or give --force",
                clash.len(),
                found.name,
                clash.join(", ")
            ))
            .into());
        }
    }
    snapshot::restore(&ws.root, &found.commit, &files).map_err(unavailable)?;
    let mut files = files;
    for sub in subs {
        snapshot::restore(&sub.folder, &sub.commit, &sub.files).map_err(unavailable)?;
        files.extend(sub.files.into_iter().map(|f| SnapFile {
            path: format!("{}/{}", sub.path, f.path),
            ..f
        }));
    }
    let _ = crate::domain::events::append(
        ws,
        lock,
        "restore",
        json!({ "checkpoint": found.name, "commit": found.commit, "files": files.len(), "force": force,
                "head_moved": head_moved.is_some() }),
    );
    Ok(Restored {
        checkpoint: found.name,
        commit: found.commit,
        files,
        head_moved,
    })
}

/// A submodule's own snapshot, as `restore` brings it back.
struct Submodule {
    /// Its path in the outer repository.
    path: String,
    folder: std::path::PathBuf,
    commit: String,
    /// The submodule's HEAD when it was taken.
    base: Option<String>,
    /// Its HEAD now, when it moved since.
    moved_to: Option<String>,
    files: Vec<SnapFile>,
}

impl Submodule {
    fn read(
        path: String,
        folder: std::path::PathBuf,
        commit: String,
    ) -> Result<Self, crate::system::git::Unavailable> {
        let files = snapshot::files(&folder, &commit)?;
        let base = snapshot::parent(&folder, &commit);
        let head = crate::system::git::head(&folder).ok().flatten();
        let moved_to = head.filter(|h| base.as_ref() != Some(h));
        Ok(Submodule {
            path,
            folder,
            commit,
            base,
            moved_to,
            files,
        })
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// The paths restore would lose work at, each with why: what is there now
/// is neither the snapshot's bytes nor those of the commit it was taken on
/// (`base`), or (`head`: HEAD moved) the file was committed since.
fn clashes(
    root: &Path,
    top: &Path,
    commit: &str,
    base: Option<&str>,
    head: Option<&str>,
    files: &[SnapFile],
) -> Result<Vec<String>, crate::system::git::Unavailable> {
    let raw: Vec<Vec<u8>> = files.iter().map(|f| f.raw.clone()).collect();
    let kept = snapshot::contents(root, commit, &raw)?;
    let was = match base {
        Some(b) => snapshot::contents(root, b, &raw)?,
        None => vec![None; files.len()],
    };
    let now_committed = match head {
        Some(h) => Some(snapshot::contents(root, h, &raw)?),
        None => None,
    };
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        // A submodule's commit: restore leaves it as it is (its own work comes back on its own).
        if matches!(&kept[i], Some((mode, _)) if mode == "160000") {
            continue;
        }
        let rel = snapshot::bytes_path(&f.raw);
        let path = top.join(&rel);
        // A file in the way of a directory the snapshot needs.
        if let Some(blocked) = rel
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .find(|a| std::fs::symlink_metadata(top.join(a)).is_ok_and(|m| !m.is_dir()))
        {
            out.push(format!(
                "{} (a file now, the snapshot has a folder)",
                blocked.display()
            ));
            continue;
        }
        let on_disk = match std::fs::symlink_metadata(&path) {
            Err(_) => continue, // deleted since: what restore is for
            Ok(m) if m.is_dir() => {
                out.push(format!(
                    "{} (a folder now, the snapshot has a file)",
                    f.path
                ));
                continue;
            }
            Ok(m) if m.file_type().is_symlink() => std::fs::read_link(&path)
                .ok()
                .map(|t| t.as_os_str().as_encoded_bytes().to_vec()),
            Ok(_) => std::fs::read(&path).ok(),
        };
        let bytes = |h: &snapshot::Held| h.as_ref().map(|(_, b)| b.clone());
        if on_disk.is_some() && on_disk == bytes(&kept[i]) {
            continue; // already the snapshot's
        }
        if let Some(committed) = &now_committed {
            if bytes(&committed[i]) != bytes(&was[i]) {
                out.push(format!("{} (committed since the snapshot)", f.path));
                continue;
            }
        }
        if on_disk.is_none() || on_disk != bytes(&was[i]) {
            out.push(format!("{} (changed since the snapshot)", f.path));
        }
    }
    Ok(out)
}

/// ctxkeep's own paths relative to the top level: the state file and `.ctxkeep/`.
fn own_paths(ws: &Workspace, top: &Path) -> Vec<String> {
    let top = top.canonicalize().unwrap_or_else(|_| top.to_path_buf());
    let rel = |p: std::path::PathBuf| {
        let p = match p.parent().map(|d| d.canonicalize()) {
            Some(Ok(dir)) => dir.join(p.file_name().unwrap_or_default()),
            _ => p,
        };
        p.strip_prefix(&top)
            .ok()
            .map(|r| r.to_string_lossy().into_owned())
    };
    [
        rel(crate::system::fsutil::resolve_target(&ws.state_path)),
        rel(ws.data_dir.clone()),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What a snapshot could not keep, as one line (`the snapshot before …
/// left out: a.txt: permission denied, …`), at most a few paths named.
pub fn left_out_line(left_out: &[String]) -> String {
    const NAMED: usize = 5;
    let mut named: Vec<&str> = left_out.iter().take(NAMED).map(String::as_str).collect();
    let more = left_out.len().saturating_sub(NAMED);
    let extra = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    crate::system::sorting::sort(&mut named);
    format!(
        "ctxkeep: the snapshot of uncommitted work left out {} path(s): {}{extra}",
        left_out.len(),
        named.join("; ")
    )
}

/// Logs what a snapshot could not keep as an `error` event, and warns.
pub fn report_left_out(
    ws: &Workspace,
    lock: &Lock,
    trigger: &str,
    left_out: &[String],
    out: &Output,
) {
    let line = left_out_line(left_out);
    out.warn(&line);
    let _ = crate::domain::events::append(
        ws,
        lock,
        "error",
        json!({
            "command": "snapshot", "trigger": trigger, "code": "snapshot_incomplete",
            "message": crate::system::redact::redact(&line).into_owned(), "left_out": left_out,
        }),
    );
}
