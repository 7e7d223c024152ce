//! The apply stage: the project lock taken once per event, the session's record loaded once
//! under it, every step of the event changing that one copy, and the record written once at
//! the end, atomically, and only when it changed. Log lines are appended under the same lock
//! as the steps make them, so the event log keeps the order they ran in.

use crate::domain::session::{self, Session};
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::fsutil::Lock;

use super::effects::{Effect, LearnPoint, LogLine, StageCheckpoint};

/// One event's hold on the project and on one session's record.
pub struct Batch<'w> {
    ws: &'w Workspace,
    lock: Lock,
    session: Session,
    /// The record as it is on disk (None: there is none yet).
    on_disk: Option<Session>,
    /// A step changed a session that has no record yet: it is written.
    touched: bool,
}

impl<'w> Batch<'w> {
    /// Takes the project lock (sweeping stale temp files when a sweep is due) and loads
    /// session `id`, or starts one with `window`.
    pub fn open(ws: &'w Workspace, id: &str, window: u64) -> Result<Batch<'w>, Error> {
        let lock = ws.lock_for_event()?;
        let on_disk = session::load_setting_aside(ws, &lock, id)?;
        let session = on_disk.clone().unwrap_or_else(|| Session::new(id, window));
        Ok(Batch {
            ws,
            lock,
            session,
            on_disk,
            touched: false,
        })
    }

    pub fn lock(&self) -> &Lock {
        &self.lock
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The record as it was loaded (None: there is none yet).
    pub fn on_disk(&self) -> Option<&Session> {
        self.on_disk.as_ref()
    }

    /// The session to change; a session with no record yet is written only if
    /// [`touch`](Self::touch) is called.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// The lock and the session at once, for the steps that need both.
    pub fn parts(&mut self) -> (&Lock, &mut Session) {
        (&self.lock, &mut self.session)
    }

    /// The lock, the session to change and the record as loaded, at once (the read stage
    /// compares with what was loaded while it reads under the lock).
    pub fn split(&mut self) -> (&Lock, &mut Session, Option<&Session>) {
        (&self.lock, &mut self.session, self.on_disk.as_ref())
    }

    /// The session is to be written even if it has no record yet.
    pub fn touch(&mut self) {
        self.touched = true;
    }

    /// Whether the session has a record, or will have one when the batch ends.
    pub fn recorded(&self) -> bool {
        self.on_disk.is_some() || self.touched
    }

    /// Appends a line to the event log under the held lock.
    pub fn log(&self, line: LogLine) -> Result<(), Error> {
        crate::domain::events::append(self.ws, &self.lock, line.event, line.fields)
    }

    /// Writes the session's record if it changed, and lets the lock go; returns the session
    /// as it stands.
    pub fn finish(self) -> Result<Session, Error> {
        let changed = match &self.on_disk {
            Some(disk) => *disk != self.session,
            None => self.touched,
        };
        if changed {
            session::save(self.ws, &self.lock, &self.session)?;
        }
        Ok(self.session)
    }
}

/// What the apply stage needs besides the session to run an event's effects: the project, its
/// lock (held), where warnings go, and the transcript a stage's checkpoint reads what the
/// session did from (its path and agent, and the event's open view of it).
pub struct Ctx<'a> {
    pub ws: &'a Workspace,
    pub lock: &'a Lock,
    pub out: &'a crate::system::output::Output,
    pub transcript: Option<(&'a str, Option<crate::agents::Agent>)>,
    pub view: Option<&'a super::read::TranscriptView>,
}

/// What running the effects gave, for the reply and the callers.
#[derive(Default)]
pub struct Outcomes {
    /// The checkpoint a stage asked for: written, or skipped as adding nothing.
    pub stage_checkpoint: Option<super::record::Written>,
    /// The stages settled, once their checkpoint ran.
    pub settled: Option<super::decide::Settled>,
    /// An automatic checkpoint: written, or the one that stands when nothing was new.
    pub checkpoint: Option<crate::domain::checkpoint::Checkpoint>,
}

/// Runs `effects` in order on the session `s` (the event's, written by its batch once all
/// have run): the only place a decision's effects touch the disk. A log line that cannot be
/// written is a warning; a checkpoint that cannot be written fails the event. The effects of an
/// event family that need its handler (a start given, an audit on its own lock) are run by
/// that handler, which hands the others to [`run_one`].
pub fn run(ctx: &Ctx<'_>, s: &mut Session, effects: Vec<Effect>) -> anyhow::Result<Outcomes> {
    let mut outcomes = Outcomes::default();
    for effect in effects {
        if let Some(left) = run_one(ctx, s, effect, &mut outcomes)? {
            anyhow::bail!("no handler runs this effect here: {left:?}");
        }
    }
    Ok(outcomes)
}

/// Runs one effect, its outcome kept in `outcomes`; returns it back when it is one only its
/// event's handler runs.
pub fn run_one(
    ctx: &Ctx<'_>,
    s: &mut Session,
    effect: Effect,
    outcomes: &mut Outcomes,
) -> anyhow::Result<Option<Effect>> {
    let log = |line: LogLine| {
        if let Err(e) = crate::domain::events::append(ctx.ws, ctx.lock, line.event, line.fields) {
            ctx.out
                .warn(&format!("the event log could not be updated: {e}"));
        }
    };
    match effect {
        Effect::Log(line) => log(line),
        Effect::Learn(point) => {
            if remember_point(ctx.ws, &point) {
                log(point.log);
            }
        }
        Effect::StageCheckpoint(checkpoint) => {
            let written = write_stage_checkpoint(
                ctx.ws,
                ctx.lock,
                s,
                &checkpoint,
                ctx.transcript,
                ctx.view,
                ctx.out,
            )?;
            s.checkpoint_seen(&written.checkpoint().id);
            outcomes.stage_checkpoint = Some(written);
        }
        Effect::Settle(settle) => {
            // A skipped checkpoint (nothing new) is named nowhere as written.
            let id = match &outcomes.stage_checkpoint {
                Some(super::record::Written::New(c)) => Some(c.id.as_str()),
                _ => None,
            };
            let settled =
                super::decide::settle_stages(s, &settle.step, id, settle.reach, &settle.now);
            for line in super::decide::stage_logs(s, &settled.fired) {
                log(line);
            }
            outcomes.settled = Some(settled);
        }
        Effect::Checkpoint(c) => {
            let written = write_auto_checkpoint(ctx, s, &c)?;
            // The session wrote it, so it has seen it: a resume of this same session is not
            // shown its own checkpoint.
            s.checkpoint_seen(&written.checkpoint().id);
            outcomes.checkpoint = Some(written.checkpoint().clone());
        }
        Effect::CompactionBegins { trigger, now } => {
            if let Some(c) = &outcomes.checkpoint {
                s.compaction_began(&now, trigger, &c.id);
            }
        }
        family => return Ok(Some(family)),
    }
    Ok(None)
}

/// Writes an automatic checkpoint (the caller holds the lock): what the session did, from the
/// event's view of its transcript completed from the session's index; a command whose result
/// the agent has not written yet (a compaction in the middle of a turn) gets the outcome its
/// hook's payload gave. A transcript that cannot be read still gets a checkpoint.
fn write_auto_checkpoint(
    ctx: &Ctx<'_>,
    s: &Session,
    c: &super::effects::AutoCheckpoint,
) -> anyhow::Result<super::record::Written> {
    let observed = ctx
        .view
        .and_then(|v| v.observe(ctx.ws, ctx.lock, s.id()))
        .map(|mut o| {
            crate::transcripts::activity::loops::with_payload_outcomes(&mut o, &s.loops().recent);
            o
        });
    let new = super::record::New {
        fields: crate::domain::checkpoint::Fields::default(),
        trigger: &c.trigger,
        budget: c.budget.clone(),
        observed,
        extra: c.extra.clone(),
        automatic: true,
        line: Some((
            crate::domain::checkpoint::Line {
                session: s.id().to_string(),
                agent: c.agent.clone(),
            },
            s.began_at().map(str::to_string),
        )),
    };
    match c.asked {
        true => super::record::write_new_always(ctx.ws, ctx.lock, new, ctx.out),
        false => super::record::write_new(ctx.ws, ctx.lock, new, ctx.out),
    }
}

/// Remembers where the agent compacted on its own (`.ctxkeep/compactions.json`); whether it
/// was remembered (its log line is written only then). Never fails the event.
pub fn remember_point(ws: &Workspace, point: &LearnPoint) -> bool {
    crate::context::compaction::Learned::record(
        &ws.compactions_path(),
        point.agent,
        point.model.as_deref(),
        point.tokens,
    )
    .is_ok()
}

/// Writes the checkpoint a stage asks for (the caller holds `lock`): what the session did,
/// read only now (rare), from the transcript its reading came from (`transcript`, with the
/// agent that wrote it), completed from the session's index.
pub fn write_stage_checkpoint(
    ws: &Workspace,
    lock: &Lock,
    s: &Session,
    effect: &StageCheckpoint,
    transcript: Option<(&str, Option<crate::agents::Agent>)>,
    view: Option<&super::read::TranscriptView>,
    out: &crate::system::output::Output,
) -> anyhow::Result<super::record::Written> {
    let observed = transcript.and_then(|(path, agent)| {
        // Completed from the session's index: files and the request from its start; through
        // the event's open transcript when it has this one.
        let open = view.filter(|v| {
            v.path() == Some(std::path::Path::new(path)) && matches!(v.read(), Ok(Some(_)))
        });
        let mut o = match open {
            Some(v) => v.observe(ws, lock, s.id())?,
            None => crate::pipeline::session_index::observed_locked(
                ws,
                lock,
                s.id(),
                std::path::Path::new(path),
                agent,
            )?,
        };
        // The call that fired the hook: its outcome is in the payload, not yet here.
        crate::transcripts::activity::loops::with_payload_outcomes(&mut o, &s.loops().recent);
        Some(o)
    });
    super::record::write_new(
        ws,
        lock,
        super::record::New {
            fields: crate::domain::checkpoint::Fields::default(),
            trigger: &effect.trigger,
            budget: s.budget(),
            observed,
            extra: serde_json::json!({ "session": s.id() }),
            automatic: true,
            line: Some((
                crate::domain::checkpoint::Line {
                    session: s.id().to_string(),
                    agent: s.agent().unwrap_or_default().to_string(),
                },
                s.began_at().map(str::to_string),
            )),
        },
        out,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_writes_the_record_once_and_only_when_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::in_dir(dir.path());
        // Nothing touched a new session: no record.
        Batch::open(&ws, "s", 1000).unwrap().finish().unwrap();
        assert!(session::load(&ws, "s").unwrap().is_none());
        let mut b = Batch::open(&ws, "s", 1000).unwrap();
        b.session_mut()
            .tokens_given(10, 1000, session::Source::Manual, None);
        b.session_mut()
            .tokens_given(20, 1000, session::Source::Manual, None);
        b.touch();
        b.finish().unwrap();
        assert_eq!(session::load(&ws, "s").unwrap().unwrap().tokens(), Some(20));
        // Unchanged: the file is left as it was.
        let path = session::path(&ws, "s");
        std::fs::write(&path, {
            let mut t = std::fs::read_to_string(&path).unwrap();
            t.push('\n');
            t
        })
        .unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        Batch::open(&ws, "s", 1000).unwrap().finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }
}
