//! The end of a reading: what the [`Recorder`] gathered, in transcript order, turned into an
//! [`Observed`] (the request and what was said after it, the plan, the files, what was left
//! open, the commands, the steps loop detection judges).

use super::*;

impl Recorder {
    pub(in crate::transcripts::activity) fn finish(
        self,
        agent: &str,
        now: DateTime<Utc>,
    ) -> Observed {
        let (obs, _) = self.finish_with_reads(agent, now);
        obs
    }

    /// [`Recorder::finish`], with what the index keeps beyond the observation: every file
    /// read, how often, and whether an edit came right after.
    pub(crate) fn finish_with_reads(
        self,
        agent: &str,
        now: DateTime<Utc>,
    ) -> (Observed, Vec<index::ReadFile>) {
        let mut obs = Observed {
            agent: agent.to_string(),
            session: self.session.clone(),
            read_at: now.to_rfc3339_opts(SecondsFormat::Secs, true),
            ..Observed::default()
        };
        if self.not_main {
            return (obs, Vec::new());
        }
        obs.task_found = self.request.is_some();
        obs.outdates_before = self.outdates_before;
        obs.request = self
            .request
            .clone()
            .or(self.bare_command.clone())
            .map(|r| text::request_text(&r));
        obs.request_at = if self.request.is_some() {
            self.time_of(self.request_at)
        } else {
            self.time_of(self.bare_command_at)
        };
        obs.compacted_at = self.time_of(self.compacted_at);
        obs.follow_ups = self.follow_ups.iter().map(|f| follow_up_text(f)).collect();
        obs.plan_file = self
            .plan_file
            .as_deref()
            .map(|p| crate::system::redact::redact(p).into_owned());
        // A task list written after the plan with every item completed: the plan is done.
        let plan_done = self.plan_seq > self.plan_mode_seq
            && !self.plan.is_empty()
            && self
                .plan
                .iter()
                .filter(|t| !t.text.is_empty())
                .all(|t| t.status == PlanStatus::Completed);
        obs.from_plan_mode = self
            .plan_mode
            .as_ref()
            .filter(|_| !plan_done)
            .and_then(|(plan, at)| plan_mode::outline(plan, at.clone()));
        obs.plan = self
            .plan
            .iter()
            .filter(|t| !t.text.is_empty())
            .map(|t| PlanItem {
                text: crate::system::redact::redact(&t.text).into_owned(),
                status: t.status,
            })
            .collect();
        let mut latest: Vec<String> = Vec::new();
        let mut commands: Vec<CommandRun> = Vec::new();
        let mut reads: Vec<index::ReadFile> = Vec::new();
        // The read whose file an edit may come right after.
        let mut last_read: Option<Vec<String>> = None;
        obs.opens_with_edit = self
            .events
            .iter()
            .find(|s| !matches!(s.event, Event::ShellFiles(_)))
            .is_some_and(|s| matches!(s.event, Event::Files(_)));
        for slot in &self.events {
            match &slot.event {
                Event::Files(paths) | Event::ShellFiles(paths) => {
                    if let Some(read) = last_read.take() {
                        for r in reads.iter_mut().filter(|r| read.contains(&r.path)) {
                            r.before_edit = true;
                        }
                    }
                    if slot.ok == Some(false) {
                        continue; // an error changed nothing
                    }
                    for p in paths {
                        latest.retain(|q| q != p);
                        latest.push(p.clone());
                    }
                }
                Event::Read(paths) => {
                    for p in paths {
                        index::note_read(&mut reads, p, 1, false);
                    }
                    last_read = Some(paths.clone());
                }
                Event::Command(cmd) => {
                    last_read = None;
                    commands.push(CommandRun {
                        command: text::cut(
                            crate::system::redact::redact(cmd.trim()).as_ref(),
                            MAX_COMMAND_CHARS,
                        ),
                        ok: slot.ok,
                        exit_code: slot.exit_code,
                        times: 1,
                        at: self.time_of(slot.at),
                    });
                }
            }
        }
        obs.ends_with_read = last_read;
        obs.left_open = self.left_open();
        obs.compacted = self.compacted;
        for slot in &self.events[self.window_start.min(self.events.len())..] {
            if let Event::Read(paths) = &slot.event {
                for p in paths {
                    index::note_window_read(&mut obs.window_reads, p);
                }
            }
        }
        obs.worked_from = index::worked_from_in_window(&reads, &latest, &obs.window_reads);
        obs.more_files = latest.len().saturating_sub(MAX_FILES) as u64;
        obs.files = latest.into_iter().rev().take(MAX_FILES).collect();
        let commands = collapse_repeats(commands);
        let skip = commands.len().saturating_sub(MAX_COMMANDS);
        obs.commands = commands.into_iter().skip(skip).collect();
        // The newest of the agent's stated step and its plan's item in progress: a plan item
        // the agent has talked past since is stale, and so is a statement the plan moved on from.
        let stated = self
            .replies
            .iter()
            .zip(&self.reply_seqs)
            .zip(&self.mid_turn)
            .zip(&self.reply_ats)
            .rev()
            .find_map(|(((r, seq), mid), at)| {
                let step = if *mid {
                    text::stated_next_step(r)
                } else {
                    text::stated_at_turn_end(r)
                };
                Some((step?, *seq, text::states_the_step_in_hand(r), *at))
            });
        let in_progress = obs
            .plan
            .iter()
            .find(|p| p.status == PlanStatus::InProgress)
            .map(|p| p.text.clone());
        let plan_said_at = self.plan_seq;
        let plan_time = self.time_of(self.plan_at);
        // Whether the plan changed after a statement: by the lines' times where both are known
        // and differ (a reader that hands over what was said after the calls, as Codex's
        // does, reads them out of order), else by the order read.
        let plan_newer = |said: usize, at: Stamp| match (plan_time.as_deref(), self.time_of(at)) {
            (Some(plan), Some(said_at)) if plan != said_at => {
                crate::transcripts::activity::line_time::later(Some(plan), Some(&said_at))
            }
            _ => plan_said_at > said,
        };
        let mut step_at = self.plan_at;
        obs.next_step = match (stated, in_progress) {
            (Some((_, said, _, at)), Some(item)) if plan_newer(said, at) => Some(item),
            (Some((step, said, in_hand, at)), _) => {
                // A list of what remains, said after the plan, makes its open items older; one
                // step replaces only the item in progress, and the change in hand laid out
                // leaves the plan as it is.
                let list = step.contains("; ");
                obs.next_step_newer_than_plan =
                    list && !in_hand && (plan_said_at == 0 || !plan_newer(said, at));
                step_at = at;
                Some(step)
            }
            (None, item) => item,
        }
        .map(|s| {
            text::cut(
                crate::system::redact::redact(&s).as_ref(),
                text::MAX_NEXT_STEP_CHARS,
            )
        })
        .filter(|s| !completed_in(&obs.plan, s));
        if obs.next_step.is_some() {
            obs.next_step_at = self.time_of(step_at);
        }
        obs.plan_at = plan_time.filter(|_| !obs.plan.is_empty());
        obs.agent_asked = self.saw_turn.then_some(self.agent_asked);
        obs.plan_changed = plan_said_at > 0;
        obs.steps = self
            .events
            .into_iter()
            .filter_map(Slot::into_step)
            .collect();
        (obs, reads)
    }
}

impl Recorder {
    /// What the window shows left open (see [`left_open`]): the checks whose last run failed
    /// since the request that set the task, the commands handed to the user and not run
    /// since; None when nothing is.
    fn left_open(&self) -> Option<left_open::LeftOpen> {
        let commands = |from: usize| {
            self.events[from.min(self.events.len())..]
                .iter()
                .filter_map(|s| match &s.event {
                    Event::Command(c) => Some((s, c.as_str())),
                    _ => None,
                })
        };
        let runs = commands(self.task_at)
            .filter(|(s, _)| s.done)
            .map(|(s, c)| left_open::Run {
                command: c,
                ok: runs::verdict(c, s.ok, s.exit_code, &s.output),
                exit_code: s.exit_code,
                output: &s.output,
                at: self.raw_time(s.at),
            });
        let mut failing = left_open::open_checks(runs);
        for f in &mut failing {
            f.files = f
                .files
                .iter()
                .filter_map(|p| self.root.display(p, self.cwd.as_deref()))
                .collect();
        }
        // Checks a monitor reported failing since the task, with no later pass reported.
        failing.extend(monitor::still_failing(&self.reported).into_iter().map(|v| {
            left_open::FailingCheck {
                command: format!("CI: {}", v.check),
                files: Vec::new(),
                error: crate::system::redact::redact(&v.line).into_owned(),
                at: None,
            }
        }));
        if failing.len() > left_open::MAX_FAILING {
            failing.drain(..failing.len() - left_open::MAX_FAILING);
        }
        let (handed, at, handed_time) = self.handover.handed(self.events.len());
        let for_the_user = left_open::not_run_since(handed, commands(at).map(|(_, c)| c));
        let for_the_user_at = handed_time
            .filter(|_| !for_the_user.is_empty())
            .and_then(crate::transcripts::activity::line_time::stored);
        let open = left_open::LeftOpen {
            failing,
            for_the_user,
            for_the_user_at,
        };
        (!open.is_empty()).then_some(open)
    }
}

impl Slot {
    /// The call as loop detection sees it; None for what it does not judge (reads, files a
    /// command names).
    pub(super) fn into_step(self) -> Option<loops::Step> {
        let action = match self.event {
            Event::ShellFiles(_) | Event::Read(_) => return None,
            Event::Command(c) => loops::Action::Command(c),
            Event::Files(paths) => loops::Action::Files(
                paths
                    .into_iter()
                    .map(|path| loops::FileChange {
                        path,
                        content: None,
                        before: None,
                    })
                    .collect(),
            ),
        };
        let outcome = if self.done {
            loops::Outcome::Done {
                ok: self.ok,
                exit_code: self.exit_code,
                output: self.output,
            }
        } else {
            loops::Outcome::Pending
        };
        Some(loops::Step {
            id: self.id,
            action,
            outcome,
        })
    }
}

/// Runs of the same command with the same outcome, one after another, as one entry each with
/// their count: "`cargo test`: failed ×4" rather than four lines.
pub(crate) fn collapse_repeats(commands: Vec<CommandRun>) -> Vec<CommandRun> {
    let mut out: Vec<CommandRun> = Vec::with_capacity(commands.len());
    for c in commands {
        match out.last_mut() {
            Some(last)
                if last.command == c.command
                    && last.ok == c.ok
                    && last.exit_code == c.exit_code =>
            {
                last.times = last.times.saturating_add(c.times);
                last.at = c.at.or(last.at.take());
            }
            _ => out.push(c),
        }
    }
    out
}
