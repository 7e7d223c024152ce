//! Writing a checkpoint: the fields given, the rest carried over, git state
//! captured, secrets redacted, the digest sealed; then the front matter, the
//! marked block, the archive and the event log, all under the lock.

use std::io::Read;
use std::path::Path;

use serde_json::json;

use crate::domain::actions;
use crate::domain::checkpoint::{
    format_id, id_number, Archive, Budget, Checkpoint, Field, Fields, Line,
};
use crate::domain::config::Config;
use crate::domain::state::{limits, StateFile};
use crate::domain::templates::Templates;
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::Lock;
use crate::system::output::Output;
use crate::transcripts::activity::Observed;

mod compare;
mod observed;
mod place;

use compare::{differs_for_history, records_nothing_new};
pub use observed::observe_transcript;
use observed::settle_observed;
pub use place::{place, seal_in_block};

/// A checkpoint written by hand must say where the work stands: one that
/// would leave a required field empty is refused, and nothing is written.
fn refuse_missing_fields(record: &Checkpoint) -> Result<(), Error> {
    let mut missing = crate::domain::checkpoint::missing_fields(record);
    // A headline carried from the session's own record has no hand-set phase, and its next
    // step may be what remains: giving other fields by hand does not make them a gap.
    if record.headline_from_session() {
        missing.retain(|f| !matches!(f, Field::Phase | Field::NextAction));
    }
    if missing.is_empty() {
        return Ok(());
    }
    let flags: Vec<&str> = missing.iter().map(|field| field.flag()).collect();
    let missing: Vec<&str> = missing.iter().map(|field| field.key()).collect();
    Err(Error::Refused(format!(
        "the checkpoint would have no {}; give {} (or those fields in a --from file); nothing was written",
        missing.join(", "),
        flags.join(", ")
    )))
}

/// Reads checkpoint fields as YAML or JSON from a file or `-` (stdin).
pub fn read_fields(src: &str) -> anyhow::Result<Fields> {
    let (path, text) = if src == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .take(crate::domain::state::MAX_FRONT_MATTER_BYTES as u64 * 4 + 1)
            .read_to_end(&mut buf)
            .map_err(|e| Error::io("<stdin>", "cannot read", e))?;
        let text = crate::system::fsutil::text_from_bytes(buf, Path::new("<stdin>"), 0)?;
        (Path::new("<stdin>").to_path_buf(), text)
    } else {
        let p = Path::new(src).to_path_buf();
        let text = crate::system::fsutil::read_text(
            &p,
            crate::domain::state::MAX_FRONT_MATTER_BYTES as u64 * 4,
        )?;
        (p, text)
    };
    if text.contains('\0') {
        return Err(Error::data(&path, "not a text file").into());
    }
    if text.trim().is_empty() {
        return Ok(Fields::default());
    }
    Ok(crate::domain::state::parse_user_yaml(&path, &text)?)
}

/// What a checkpoint is written from.
#[derive(Clone)]
pub struct New<'a> {
    pub fields: Fields,
    pub trigger: &'a str,
    pub budget: Option<Budget>,
    /// What the session's transcript says it did.
    pub observed: Option<Observed>,
    /// Added to the `checkpoint` (or `checkpoint_skipped`) event.
    pub extra: serde_json::Value,
    /// Written by ctxkeep on its own (a stage, `pre-compact`, `session-end`):
    /// skipped when it would record nothing new. One by hand is always written.
    pub automatic: bool,
    /// The line of work it belongs to (the agent session), when known; for an automatic
    /// checkpoint, with when that session began (see `headline::settle`).
    pub line: Option<(Line, Option<String>)>,
}

/// A checkpoint asked for by hand (`ctxkeep checkpoint`, the MCP tool).
pub struct Request<'a> {
    pub fields: Fields,
    /// One word, e.g. `manual` or `mcp`.
    pub trigger: &'a str,
    /// The session whose live budget the checkpoint records.
    pub session: &'a str,
    /// The agent's transcript, for what the session did (`observed`).
    pub transcript: Option<&'a Path>,
}

/// Writes a checkpoint asked for by hand: checks the trigger and the
/// session, refuses a bad or missing state file before any lock that would
/// create `.ctxkeep/` (so that bad input creates nothing), reads the
/// transcript, then writes under the lock with the session's budget.
pub fn by_hand(ws: &Workspace, req: Request, out: &Output) -> anyhow::Result<Checkpoint> {
    by_hand_looking(ws, req, out, None)
}

/// A look at the state file as a checkpoint places it (the text it writes, read back), taken
/// on a thread of its own while the write waits for the disk: `checkpoint` runs the checks
/// that can reject what it wrote there. Its answer is kept only when the write succeeded.
pub struct Look<'a> {
    check: &'a (dyn Fn(&StateFile) -> Vec<String> + Sync),
    found: Vec<String>,
}

impl<'a> Look<'a> {
    pub fn new(check: &'a (dyn Fn(&StateFile) -> Vec<String> + Sync)) -> Look<'a> {
        Look {
            check,
            found: Vec::new(),
        }
    }

    /// What the check gave on the state file as written (nothing when it was not written).
    pub fn found(self) -> Vec<String> {
        self.found
    }
}

/// [`by_hand`], with `look` taken beside the write (see [`Look`]).
pub fn by_hand_looking(
    ws: &Workspace,
    req: Request,
    out: &Output,
    look: Option<&mut Look>,
) -> anyhow::Result<Checkpoint> {
    let trigger = req.trigger.trim();
    limits::check_trigger(trigger)?;
    // Before the lock, which would create `.ctxkeep/`: refused input
    // changes nothing. `write_new` checks again for its other callers.
    limits::check_fields(&ws.state_path, &req.fields)?;
    let session = crate::domain::session::validate_id(req.session)?;
    // Where `.ctxkeep/` is there already, taking the lock creates nothing: it is taken first
    // and git asked for the status under it at once, so git reads the work tree while the
    // state file is read and parsed below (after the sweep of stale temp files, as every
    // status a checkpoint records). A transcript to read keeps the lock for after it.
    let early = match req.transcript {
        None if ws.data_dir.is_dir() => {
            let lock = ws.lock()?;
            crate::system::git::read_status_ahead(&ws.root);
            Some(lock)
        }
        _ => None,
    };
    // `write_new` checks again under the lock.
    StateFile::load(&ws.state_path)?.require_initialized()?;
    // Read before the lock: a transcript can be large.
    let observed = match req.transcript {
        Some(path) => Some(observe_transcript(ws, path, None)?),
        None => None,
    };
    let lock = match early {
        Some(lock) => lock,
        None => ws.lock()?,
    };
    // The current session's live budget, when it is tracked.
    let budget = crate::domain::session::load(ws, &session)?.and_then(|s| s.budget());
    // A session named (not the default) makes the checkpoint its author's line.
    let line = (session != crate::domain::session::DEFAULT_SESSION).then(|| {
        let agent = req.fields.controlling_agent.clone().unwrap_or_default();
        (
            Line {
                session: session.clone(),
                agent,
            },
            None,
        )
    });
    let new = New {
        fields: req.fields,
        trigger,
        budget,
        observed,
        extra: json!({}),
        automatic: false,
        line,
    };
    let record = write_retrying(ws, &lock, new, true, out, look)?
        .checkpoint()
        .clone();
    drop(lock);
    Ok(record)
}

/// What [`write_new`] did.
#[derive(Debug)]
pub enum Written {
    New(Checkpoint),
    /// Nothing new since `previous`: the file was not touched.
    Skipped {
        previous: Checkpoint,
        why: String,
    },
}

impl Written {
    /// The checkpoint that stands: the new one, or the one it would repeat.
    pub fn checkpoint(&self) -> &Checkpoint {
        match self {
            Written::New(c) | Written::Skipped { previous: c, .. } => c,
        }
    }
}

/// Writes a checkpoint (the caller holds the lock): carries over what is not
/// given, captures git, seals the digest, updates front matter, the marked
/// block, the archive and the event log. An automatic one that would repeat
/// the last is skipped instead; see [`New`].
pub fn write_new(ws: &Workspace, lock: &Lock, new: New, out: &Output) -> anyhow::Result<Written> {
    write_retrying(ws, lock, new, true, out, None)
}

/// [`write_new`] for an automatic checkpoint the user asked for (a manual
/// compaction): written even when it would record nothing new.
pub fn write_new_always(
    ws: &Workspace,
    lock: &Lock,
    new: New,
    out: &Output,
) -> anyhow::Result<Written> {
    write_retrying(ws, lock, new, false, out, None)
}

/// How often an automatic checkpoint is tried again when another program changed the state
/// file during the write, and the pause before the first retry (doubled each time): about
/// 1.3 s in all, well within an agent's hook timeout.
const RETRIES: u32 = 7;
const FIRST_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// [`write`], tried again for an automatic checkpoint when another program (git checking out
/// or merging, an editor) changed the state file between its read and its write: a hook has
/// no one to run it again, and a `pre-compact` checkpoint lost is the one that mattered. One
/// by hand fails at once and says to run the command again.
fn write_retrying(
    ws: &Workspace,
    lock: &Lock,
    new: New,
    skip_repeats: bool,
    out: &Output,
    mut look: Option<&mut Look>,
) -> anyhow::Result<Written> {
    let mut pause = FIRST_PAUSE;
    for _ in 0..RETRIES {
        if !new.automatic {
            break;
        }
        match write(
            ws,
            lock,
            new.clone(),
            skip_repeats,
            out,
            look.as_deref_mut(),
        ) {
            Err(e) if changed_meanwhile(&e) => {
                // What changed the file may have been git (a checkout): read the repository again.
                crate::system::git::forget_reads();
                std::thread::sleep(pause);
                pause *= 2;
            }
            done => return done,
        }
    }
    write(ws, lock, new, skip_repeats, out, look)
}

fn changed_meanwhile(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref::<Error>(), Some(Error::Conflict { .. }))
}

fn write(
    ws: &Workspace,
    lock: &Lock,
    new: New,
    skip_repeats: bool,
    out: &Output,
    look: Option<&mut Look>,
) -> anyhow::Result<Written> {
    let New {
        fields,
        trigger,
        budget,
        observed,
        extra,
        automatic,
        line,
    } = new;
    // git reads the work tree while the state file is read and parsed below.
    crate::system::git::read_status_ahead(&ws.root);
    // The one rule: nothing a reader would refuse is written.
    limits::check_fields(&ws.state_path, &fields)?;
    let fields_given = Fields {
        phase: fields.phase.clone(),
        active_task: fields.active_task.clone(),
        next_action: fields.next_action.clone(),
        ..Fields::default()
    };
    let mut sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);
    if !(automatic && skip_repeats) {
        // Compiled while git still reads the work tree, for `place` below (templates are kept
        // per process): a checkpoint that may be skipped as nothing new never needs them. An
        // error is reported where they are used, as before.
        let _ = Templates::load(&ws.root, config.templates.as_deref());
    }
    // The other live lines of work, named in the block (read from the archive, which only
    // this lock's holder changes), also while git reads: not for a checkpoint that may be
    // skipped, which reads them below when it is not.
    let session = line.as_ref().map(|(l, _)| l.session.clone());
    let others_read_ahead = (!(automatic && skip_repeats))
        .then(|| crate::domain::lines::others_live(ws, session.as_deref()));
    let prev = sf.fm.checkpoint.clone();
    let observed = match automatic {
        true => settle_observed(prev.as_ref(), observed),
        false => observed,
    };
    let archive = Archive {
        dir: &ws.checkpoints_dir(),
    };
    // The last archived number, and a hand edit of the block unless the checkpoint may be
    // skipped, before git's answer too.
    let archived_max = archive.max_number();
    let edited_ahead = (!(automatic && skip_repeats))
        .then(|| crate::domain::state::edited_block(&sf).map(str::to_string));

    let git = match crate::system::git::state(
        &ws.root,
        std::slice::from_ref(&crate::system::fsutil::resolve_target(&ws.state_path)),
    ) {
        Ok(mut g) => {
            // Before the list is capped: the snapshot holds every file.
            if automatic && config.snapshots {
                let before = extra.get("command").and_then(|c| c.as_str());
                // The pre-tool hook's snapshot, taken before the lock.
                let ready = extra
                    .get("snapshot")
                    .and_then(|s| serde_json::from_value(s.clone()).ok());
                let left_out = crate::pipeline::snapshot::attach(
                    ws,
                    &mut g,
                    prev.as_ref(),
                    trigger,
                    before,
                    ready,
                    out,
                );
                if !left_out.is_empty() && before.is_none() {
                    crate::pipeline::snapshot::report_left_out(ws, lock, trigger, &left_out, out);
                }
            }
            // What ctxkeep itself wrote (its settings entries, its .gitignore line) is not the
            // user's work: a cold reader is not told about it.
            g.dirty = crate::agents::own_files::without_own(&ws.root, &g.dirty);
            g.cap_dirty(limits::MAX_DIRTY_LISTED);
            Some(g)
        }
        Err(why) => {
            out.warn(&format!("git state left out of the checkpoint: {why}"));
            None
        }
    };

    let prev_head = prev
        .as_ref()
        .and_then(|p| p.git.as_ref())
        .and_then(|g| g.head.clone());
    let head = git.as_ref().and_then(|g| g.head.clone());
    let head_moved = prev_head.is_some() && head.is_some() && prev_head != head;
    let carried = |get: fn(&Checkpoint) -> String| prev.as_ref().map(get).unwrap_or_default();
    let actions = action_items(prev.as_ref(), &fields, observed.as_ref(), automatic);
    if !automatic {
        limits::check_remaining(&ws.state_path, &actions.remaining)?;
    }
    // Where decisions not carried over went: their checkpoint keeps them.
    let kept_in = |p: &Checkpoint| {
        format!(
            "checkpoint {} keeps them (`ctxkeep log`, .ctxkeep/checkpoints/{}.json)",
            p.id, p.id
        )
    };
    let mut decisions = match fields.decisions {
        Some(d) => {
            if let Some(p) = prev.as_ref().filter(|p| {
                !head_moved && !p.decisions.is_empty() && p.decisions.iter().any(|x| !d.contains(x))
            }) {
                out.info(&format!(
                    "--decision replaced the {} decision(s) recorded before; {}. Use --add-decision to add to the list",
                    p.decisions.len(),
                    kept_in(p)
                ));
            }
            d
        }
        None if head_moved => {
            if let Some(p) = prev.as_ref().filter(|p| !p.decisions.is_empty()) {
                out.info(&format!(
                    "HEAD moved since the last checkpoint: its {} decision(s) belong to that commit now and were not carried over; {}",
                    p.decisions.len(),
                    kept_in(p)
                ));
            }
            Vec::new()
        }
        None => prev
            .as_ref()
            .map(|p| p.decisions.clone())
            .unwrap_or_default(),
    };
    if !fields.add_decisions.is_empty() {
        for d in &fields.add_decisions {
            if !decisions.contains(d) {
                decisions.push(d.clone());
            }
        }
        // The list as it now stands follows the same limits as one given whole.
        let whole = Fields {
            decisions: Some(decisions.clone()),
            ..Fields::default()
        };
        limits::check_fields(&ws.state_path, &whole)?;
    }

    let last_number = [
        prev.as_ref().and_then(Checkpoint::number),
        sf.fm
            .history
            .iter()
            .flatten()
            .filter_map(|h| id_number(&h.id))
            .max(),
        Some(archived_max),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);

    let mut record = Checkpoint {
        id: format_id(last_number + 1),
        created_at: crate::system::clock::now_rfc3339(),
        trigger: trigger.to_string(),
        phase: fields.phase.unwrap_or_else(|| carried(|p| p.phase.clone())),
        active_task: fields
            .active_task
            .unwrap_or_else(|| carried(|p| p.active_task.clone())),
        controlling_agent: fields
            .controlling_agent
            .unwrap_or_else(|| carried(|p| p.controlling_agent.clone())),
        next_action: fields
            .next_action
            .unwrap_or_else(|| carried(|p| p.next_action.clone())),
        decisions,
        open_questions: fields.open_questions.unwrap_or_else(|| {
            prev.as_ref()
                .map(|p| p.open_questions.clone())
                .unwrap_or_default()
        }),
        notes: fields.notes.unwrap_or_else(|| carried(|p| p.notes.clone())),
        done: actions.done,
        remaining: actions.remaining,
        git,
        budget,
        observed,
        merged: Vec::new(),
        line: None,
        headline_from: None,
        earlier_by_hand: None,
        block_digest: String::new(),
        digest: String::new(),
    };
    match (automatic, line) {
        (true, Some((line, began))) => {
            crate::pipeline::headline::settle(&mut record, prev.as_ref(), &line, began.as_deref());
            record.line = Some(line);
        }
        (_, line) => {
            record.line = line.map(|(l, _)| l);
            // Fields not given are carried, and so is where they came from.
            let headline_given = [
                &fields_given.phase,
                &fields_given.active_task,
                &fields_given.next_action,
            ]
            .iter()
            .any(|f| f.is_some());
            if let Some(p) = prev.as_ref().filter(|_| !headline_given) {
                record.headline_from = p.headline_from.clone();
                record.earlier_by_hand = p.earlier_by_hand.clone();
            }
        }
    }
    if !automatic {
        refuse_missing_fields(&record)?;
    }
    redact_record(&mut record)?;

    if let (true, Some(p)) = (automatic && skip_repeats, &prev) {
        if records_nothing_new(p, &record) {
            let why = format!("nothing new since {}", p.id);
            let mut event = json!({ "trigger": record.trigger, "same_as": p.id, "why": why });
            if let (Some(e), serde_json::Value::Object(extra)) = (event.as_object_mut(), extra) {
                e.extend(extra);
            }
            crate::domain::events::append(ws, lock, "checkpoint_skipped", event)?;
            return Ok(Written::Skipped {
                previous: p.clone(),
                why,
            });
        }
    }

    // History lists a checkpoint only when it differs from the one after it
    // in what a reader acts on; one that only repeats is superseded.
    let mut history: Vec<_> = prev
        .iter()
        .filter(|p| differs_for_history(p, &record))
        .map(Checkpoint::brief)
        .collect();
    history.extend(sf.fm.history.clone().unwrap_or_default());
    history.truncate(3);
    // The previous entries come from the file, which may have been edited by hand.
    let mut history_json = serde_json::to_value(&history)?;
    crate::system::redact::redact_json(&mut history_json);

    // The block is rewritten at every checkpoint: a hand edit inside it
    // goes to the archive with this record instead of being lost.
    let edited_block = match edited_ahead {
        Some(edited) => edited,
        None => crate::domain::state::edited_block(&sf).map(str::to_string),
    };
    let templates = Templates::load(&ws.root, config.templates.as_deref())?;
    // The other live lines of work, named in the block (read from the archive: a
    // checkpoint is written rarely, at a stage, a compaction or a session's end).
    let others = match others_read_ahead {
        Some(others) => others,
        None => crate::domain::lines::others_live(ws, record.session()),
    };
    let (left_out, keys) =
        seal_in_block(&mut sf, &mut record, &mut history_json, &templates, &others)?;
    warn_about_hard_links(&ws.state_path, out);
    let check = look.as_ref().map(|l| l.check);
    let written = std::thread::scope(|scope| {
        // The archive first: its no-clobber create reserves the id. The sealed record is
        // stored (written and synced to disk) on a thread of its own while the front matter
        // takes its new keys and is read back; a front matter that does not read back takes
        // the record back out.
        let storing = scope.spawn(|| archive.store(&record, edited_block.as_deref()));
        let set = sf.set_keys(&keys);
        // The look reads the text as it will be written, with the repository as read here, on
        // a thread of its own: its checks run while the write waits for the disk.
        let looking = match (check, &set) {
            (Some(check), Ok(())) => {
                let text = sf.render();
                let reads = crate::system::git::carry_reads();
                Some(scope.spawn(move || {
                    let _reads = reads.map(crate::system::git::CarriedReads::share);
                    // Read back as a reader would (its front matter parsed once, above).
                    StateFile::from_text(&ws.state_path, text)
                        .map(|placed| check(&placed))
                        .unwrap_or_default()
                }))
            }
            _ => None,
        };
        let stored = storing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let written = (|| -> anyhow::Result<()> {
            if let Err(e) = set {
                if stored.is_ok() {
                    archive.take_back(&record.id);
                }
                return Err(e.into());
            }
            stored?;
            if let Some(p) = &prev {
                archive.settle_merge(p);
            }
            if let Err(e) = sf.save() {
                archive.take_back(&record.id);
                return Err(e.into());
            }
            warn_after_save(
                ws,
                &archive,
                &record,
                prev.as_ref(),
                &left_out,
                edited_block.is_some(),
                out,
            );
            keep_and_log(ws, lock, &archive, &record, &config, extra, out)
        })();
        if let (Some(looking), Some(look)) = (looking, look) {
            let found = looking
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            if written.is_ok() {
                look.found = found;
            }
        }
        written
    });
    written.map(|()| Written::New(record))
}

/// The new checkpoint's action items: by hand, the last ones with what is
/// given (see [`actions::by_hand`]); automatic, what the agent's plan shows
/// unless the agent wrote the lists itself (see [`actions::automatic`]).
fn action_items(
    prev: Option<&Checkpoint>,
    fields: &Fields,
    observed: Option<&Observed>,
    automatic: bool,
) -> actions::Actions {
    let given = actions::Given {
        done: fields.done.as_deref().unwrap_or_default(),
        remaining: fields.remaining.as_deref().unwrap_or_default(),
        clear_remaining: fields.clear_remaining == Some(true),
    };
    let nothing_given =
        given.done.is_empty() && given.remaining.is_empty() && !given.clear_remaining;
    if automatic && nothing_given {
        return actions::automatic(prev, observed);
    }
    let before = prev.map(actions::Actions::of).unwrap_or_default();
    actions::by_hand(&before, given)
}

/// What a written checkpoint tells the user: keys left out of the front matter to keep it
/// readable, and a hand edit of the block kept in the archived record.
fn warn_after_save(
    ws: &Workspace,
    archive: &Archive,
    record: &Checkpoint,
    prev: Option<&Checkpoint>,
    left_out: &[String],
    block_was_edited: bool,
    out: &Output,
) {
    if !left_out.is_empty() {
        out.warn(&format!(
            "{}: left out of {} so that the front matter stays within the {} bytes ctxkeep reads back: {}",
            ws.display_state(),
            record.id,
            crate::domain::state::MAX_FRONT_MATTER_BYTES,
            left_out.join(", ")
        ));
    }
    if block_was_edited {
        out.warn(&format!(
            "{}: the marked block (between the ctxkeep markers) was edited by hand since {}; ctxkeep rewrites it at every checkpoint, so the edited text is kept in {} (key replaced_block); put your own text outside the markers",
            ws.display_state(),
            prev.map(|p| p.id.as_str()).unwrap_or("the last checkpoint"),
            archive.path(&record.id).display()
        ));
    }
}

/// After a checkpoint is written: its snapshot kept, old records pruned (with their snapshot
/// refs), the event log rotated when over its size, and the checkpoint's event appended.
fn keep_and_log(
    ws: &Workspace,
    lock: &Lock,
    archive: &Archive,
    record: &Checkpoint,
    config: &Config,
    extra: serde_json::Value,
    out: &Output,
) -> anyhow::Result<()> {
    crate::pipeline::snapshot::keep(ws, record, out);
    let pruned = archive.prune(
        config.retention,
        config.retention_days,
        crate::system::clock::now(),
    );
    if !pruned.is_empty() {
        crate::handoff::retention::drop_snapshot_refs(ws);
    }
    if let Err(e) = crate::domain::events::rotate_if_over(ws, lock, config.events_max_bytes) {
        out.warn(&format!("the event log could not be rotated: {e}"));
    }
    let mut event = json!({ "id": record.id, "trigger": record.trigger, "budget": record.budget });
    if let (Some(e), serde_json::Value::Object(extra)) = (event.as_object_mut(), extra) {
        e.extend(extra);
    }
    // A full disk here must not pass silently; the checkpoint itself stands,
    // and the next writer seals any torn line the failed append left.
    crate::domain::events::append(ws, lock, "checkpoint", event).map_err(|e| {
        anyhow::Error::new(e).context(format!(
            "checkpoint {} was written, but its event could not be logged",
            record.id
        ))
    })?;
    Ok(())
}

/// A write replaces the file, so other hard links keep the old content.
pub fn warn_about_hard_links(path: &Path, out: &Output) {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            out.warn(&format!(
                "{} has {} hard links; a write replaces the file, so the other links keep the old text (use a symlink instead)",
                path.display(),
                meta.nlink()
            ));
        }
    }
}

/// Redacts every string of the record (fields, trigger, git branch and
/// paths) before it is sealed, so the front matter, the marked block, the
/// archive and the event log all get the redacted text.
fn redact_record(r: &mut Checkpoint) -> anyhow::Result<()> {
    let mut v = r.to_json();
    crate::system::redact::redact_json(&mut v);
    *r = serde_json::from_value(v)?;
    Ok(())
}
