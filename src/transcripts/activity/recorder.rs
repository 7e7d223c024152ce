//! The [`Recorder`]: what the per-agent readers find, in transcript order, turned into an
//! [`Observed`] at the end.

use std::collections::HashMap;

use chrono::{DateTime, SecondsFormat, Utc};

use super::{
    error_sites, failure, index, left_open, loops, monitor, plan_mode, runs, shell, text,
    CommandRun, Observed, PlanItem, PlanStatus, Root, MAX_COMMANDS, MAX_COMMAND_CHARS, MAX_FILES,
    MAX_FOLLOW_UPS, MAX_FOLLOW_UP_CHARS, TAIL_BYTES,
};

mod finish;
pub(crate) use finish::collapse_repeats;

enum Event {
    Files(Vec<String>),
    Command(String),
    /// Files a shell command names as changed (`sed -i`, `mv`, `>`): in the record, not in
    /// loop detection (its content is not known).
    ShellFiles(Vec<String>),
    /// Files read (never waiting for an outcome: their results are not parsed).
    Read(Vec<String>),
}

struct Slot {
    event: Event,
    /// The agent's id for the call.
    id: Option<String>,
    /// Its outcome has been read (or it needs none: a change reported without a call).
    done: bool,
    ok: Option<bool>,
    exit_code: Option<i64>,
    /// A command's output (bounded), for telling one failure from another.
    output: String,
    /// When it came (see [`Recorder::stamp`]).
    at: Stamp,
}

/// Where a fact's time is in [`Recorder::times`]; None when its line had none.
type Stamp = Option<u32>;

/// The agent's latest replies kept to look for its stated next step.
const MAX_REPLIES: usize = 8;

/// A plan item with the agent's id for it (Claude Code's task ids).
struct Task {
    id: Option<String>,
    text: String,
    status: PlanStatus,
}

/// Collects what the per-agent readers find, in transcript order; outcomes arrive later than
/// the calls and are matched by the call's id.
pub struct Recorder {
    pub(crate) root: Root,
    /// The last request that states the task, and the last bare slash command.
    request: Option<String>,
    bare_command: Option<String>,
    request_at: Stamp,
    bare_command_at: Stamp,
    /// The time of the line being read, as the agent wrote it (empty: none), and the distinct
    /// times facts were stamped with: a fact keeps where its time is, and only the facts kept
    /// have theirs parsed, at the end.
    line_at: String,
    times: Vec<String>,
    /// When the plan last changed, and when the last compaction read came.
    plan_at: Stamp,
    compacted_at: Stamp,
    /// Remarks since the request, oldest first (see [`text::Weight::Remark`]).
    follow_ups: Vec<String>,
    /// The plan file the agent last wrote in plan mode.
    plan_file: Option<String>,
    /// The plan it last set out in plan mode (its raw text and when), with the call whose
    /// result says whether the user accepted it, and where it came in `seq`.
    plan_mode: Option<(String, Option<String>)>,
    plan_mode_call: Option<String>,
    plan_mode_seq: usize,
    /// The working folder of the line being read, when the agent records it.
    pub(crate) cwd: Option<String>,
    /// Where the plan last changed and the stated replies were said, in events read: the newer
    /// one gives the next step.
    plan_seq: usize,
    reply_seqs: Vec<usize>,
    reply_ats: Vec<Stamp>,
    seq: usize,
    /// The agent's replies since the last request, the newest last (at most [`MAX_REPLIES`]).
    replies: Vec<String>,
    /// For each reply, whether a call came after it: words said on the way to a call narrate
    /// the step in hand; the words a turn ends with say what comes next.
    mid_turn: Vec<bool>,
    plan: Vec<Task>,
    events: Vec<Slot>,
    /// Call id → its entries in `events` (a patch run through the shell is a command and a
    /// file change).
    calls: HashMap<String, Vec<usize>>,
    /// Claude Code `TaskCreate` call id → index in `plan`, until its result names the task.
    task_creates: HashMap<String, usize>,
    pub(crate) session: Option<String>,
    /// The file belongs to a subagent: nothing in it is the main session's.
    pub(crate) not_main: bool,
    /// The commands the agent's replies gave the user to run.
    handover: left_open::Handover,
    /// Where in `events` the last request that states the task came: a check that failed
    /// before it belongs to earlier work.
    task_at: usize,
    /// How much of the transcript's end is read.
    pub(crate) window: u64,
    /// Where in `events` the current context window starts (after the last compaction read),
    /// and whether one was read.
    window_start: usize,
    compacted: bool,
    /// The agent's last reply asked the user an open question (see
    /// [`text::asks_open_question`]): the prompt after it may be the answer. Set by an
    /// earlier part's reading when this one starts with the prompt.
    pub(crate) agent_asked: bool,
    /// A reply or a prompt was read (the part says whether the agent's last words asked).
    saw_turn: bool,
    /// A prompt read here made what the agent said or planned before it out of date (a new
    /// task, a bare command, a follow-up that sets work; not a question that asks for none).
    outdates_before: bool,
    /// Checks a message a tool injected reported since the task was set (see [`monitor`]).
    reported: Vec<monitor::Verdict>,
}

impl Recorder {
    pub(super) fn new(root: Root) -> Recorder {
        Recorder {
            root,
            request: None,
            bare_command: None,
            request_at: None,
            bare_command_at: None,
            line_at: String::new(),
            times: Vec::new(),
            plan_at: None,
            compacted_at: None,
            follow_ups: Vec::new(),
            plan_file: None,
            plan_mode: None,
            plan_mode_call: None,
            plan_mode_seq: 0,
            cwd: None,
            plan_seq: 0,
            reply_seqs: Vec::new(),
            reply_ats: Vec::new(),
            seq: 0,
            replies: Vec::new(),
            mid_turn: Vec::new(),
            plan: Vec::new(),
            events: Vec::new(),
            calls: HashMap::new(),
            task_creates: HashMap::new(),
            session: None,
            not_main: false,
            handover: left_open::Handover::default(),
            task_at: 0,
            window: TAIL_BYTES,
            window_start: 0,
            compacted: false,
            agent_asked: false,
            saw_turn: false,
            outdates_before: false,
            reported: Vec::new(),
        }
    }

    /// The time of the line about to be read (as the agent wrote it; None when it has none):
    /// what is recorded from it keeps it.
    pub(crate) fn line_time(&mut self, raw: Option<&str>) {
        self.line_at.clear();
        if let Some(raw) = raw {
            self.line_at.push_str(raw);
        }
    }

    /// The current line's time, for a fact recorded from it.
    fn stamp(&mut self) -> Stamp {
        if self.line_at.is_empty() {
            return None;
        }
        if self.times.last() != Some(&self.line_at) {
            self.times.push(self.line_at.clone());
        }
        Some(self.times.len() as u32 - 1)
    }

    /// A stamp's time as the record keeps it.
    fn time_of(&self, at: Stamp) -> Option<String> {
        self.raw_time(at).and_then(super::line_time::stored)
    }

    fn raw_time(&self, at: Stamp) -> Option<&str> {
        at.and_then(|i| self.times.get(i as usize))
            .map(String::as_str)
    }

    /// The agent compacted its context here: what was read before is no longer in view.
    pub(crate) fn context_compacted(&mut self) {
        self.window_start = self.events.len();
        self.compacted = true;
        self.compacted_at = self.stamp();
    }

    /// Whether a call with this id is waiting for its outcome (the pre-filter's question).
    pub(crate) fn is_pending(&self, call_id: &str) -> bool {
        self.calls.contains_key(call_id)
            || self.task_creates.contains_key(call_id)
            || self.plan_mode_call.as_deref() == Some(call_id)
    }

    /// What the user said, in transcript order: a task replaces the request, a bare slash
    /// command is kept in case no task is found, a nudge changes nothing. A new request makes
    /// the agent's earlier replies out of date.
    pub(crate) fn request(&mut self, text: String) {
        let weight = text::weight_after(&text, self.agent_asked);
        if weight == text::Weight::Injected {
            // A tool's message: neither the user's words nor an answer to the agent.
            return;
        }
        self.handover.prompt(self.events.len());
        // The agent's question stands until its next reply: a prompt sent again after an
        // interruption answers it too.
        self.saw_turn = true;
        // A question that asks for no work ("why do we see dupes here?") leans on the work
        // under way: what the agent said remains still stands after it.
        let sets_work = !text::asks_no_work(&text);
        match weight {
            text::Weight::Task => {
                self.task_at = self.events.len();
                // A failure a monitor reported belongs to the earlier work.
                self.reported.clear();
                self.request = Some(text);
                self.request_at = self.stamp();
                self.follow_ups.clear();
                self.plan_mode = None;
                self.plan_mode_call = None;
                if sets_work {
                    self.clear_replies();
                }
            }
            text::Weight::BareCommand => {
                self.bare_command = Some(text);
                self.bare_command_at = self.stamp();
                self.clear_replies();
            }
            text::Weight::Remark => {
                keep_follow_up(&mut self.follow_ups, text);
                if sets_work {
                    self.clear_replies();
                }
            }
            text::Weight::Nudge | text::Weight::Injected => {}
        }
    }

    fn clear_replies(&mut self) {
        self.outdates_before = true;
        self.replies.clear();
        self.reply_seqs.clear();
        self.reply_ats.clear();
        self.mid_turn.clear();
    }

    /// Text the agent wrote to the user (not its tool calls or thoughts), in transcript order.
    pub(crate) fn reply(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        if self.replies.len() == MAX_REPLIES {
            self.replies.remove(0);
            self.reply_seqs.remove(0);
            self.reply_ats.remove(0);
            self.mid_turn.remove(0);
        }
        self.seq += 1;
        self.agent_asked = text::asks_open_question(text);
        self.saw_turn = true;
        let at = self.stamp();
        let raw = at
            .and_then(|i| self.times.get(i as usize))
            .map(String::as_str);
        self.handover.reply(text, self.events.len(), raw);
        self.replies.push(text.to_string());
        self.reply_seqs.push(self.seq);
        self.reply_ats.push(at);
        self.mid_turn.push(false);
    }

    /// The plan file the agent wrote in its plan mode (the agent's reader knows where).
    pub(crate) fn plan_file(&mut self, path: String) {
        self.plan_file = Some(path);
    }

    /// The plan the agent set out in plan mode (`call_id`'s input), at time `at`.
    pub(crate) fn plan_mode_plan(&mut self, call_id: &str, plan: &str, at: Option<String>) {
        self.seq += 1;
        self.plan_mode_seq = self.seq;
        self.plan_mode = Some((plan.to_string(), at));
        self.plan_mode_call = Some(call_id.to_string());
    }

    /// The result of the plan-mode call: a refused plan is not the plan (the agent sets out
    /// another).
    pub(crate) fn plan_mode_answered(&mut self, call_id: &str, refused: bool) {
        if self.plan_mode_call.as_deref() != Some(call_id) {
            return;
        }
        self.plan_mode_call = None;
        if refused {
            self.plan_mode = None;
        }
    }

    /// Files the agent read with a tool (not waiting for the result: it is not parsed).
    pub(crate) fn read_files(&mut self, paths: Vec<String>) {
        if !paths.is_empty() {
            self.push(None, Event::Read(paths));
        }
    }

    pub(crate) fn files(&mut self, call_id: Option<&str>, paths: Vec<String>) {
        if !paths.is_empty() {
            self.push(call_id, Event::Files(paths));
        }
    }

    /// A message a tool injected into the conversation: the checks it reports (a CI
    /// monitor's failures are left open until it reports them passing).
    pub(crate) fn injected(&mut self, text: &str) {
        if !text.contains("<ci-monitor-event>") && !text.contains("<task-notification>") {
            return;
        }
        self.reported.extend(monitor::verdicts(text));
    }

    /// Files a subagent's own call changed (read from the parent's transcript): in the
    /// record, not in the main session's loop detection; an error reported for `call_id`
    /// drops them.
    pub(crate) fn delegated_files(&mut self, call_id: &str, paths: Vec<String>) {
        if !paths.is_empty() {
            self.push(Some(call_id), Event::ShellFiles(paths));
        }
    }

    pub(crate) fn command(&mut self, call_id: Option<&str>, command: String) {
        if command.trim().is_empty() {
            return;
        }
        let named = shell::named_files(&command);
        let cwd = self.cwd.clone();
        let shown = |paths: Vec<String>, root: &Root| -> Vec<String> {
            paths
                .iter()
                .filter_map(|p| root.display(p, cwd.as_deref()))
                .collect()
        };
        let changed = shown(named.changed, &self.root);
        let read = shown(named.read, &self.root);
        self.push(call_id, Event::Command(command));
        if !changed.is_empty() {
            self.push(call_id, Event::ShellFiles(changed));
        }
        if !read.is_empty() {
            self.push(None, Event::Read(read));
        }
    }

    /// A call came: the agent's last words were on the way to it.
    fn called(&mut self) {
        if let Some(last) = self.mid_turn.last_mut() {
            *last = true;
        }
    }

    fn push(&mut self, call_id: Option<&str>, event: Event) {
        self.called();
        let at = match &event {
            Event::Command(_) => self.stamp(),
            _ => None,
        };
        if let Some(id) = call_id {
            self.calls
                .entry(id.to_string())
                .or_default()
                .push(self.events.len());
        }
        self.events.push(Slot {
            event,
            id: call_id.map(str::to_string),
            done: call_id.is_none(),
            ok: None,
            exit_code: None,
            output: String::new(),
            at,
        });
    }

    /// The outcome of call `call_id` (ignored unless that call is waiting for one).
    pub(crate) fn outcome(&mut self, call_id: &str, ok: Option<bool>, exit_code: Option<i64>) {
        self.outcome_with_output(call_id, ok, exit_code, "");
    }

    /// [`Recorder::outcome`] with the call's output, which tells one failure from another.
    pub(crate) fn outcome_with_output(
        &mut self,
        call_id: &str,
        ok: Option<bool>,
        exit_code: Option<i64>,
        output: &str,
    ) {
        let mut failed_command = false;
        for i in self.calls.remove(call_id).unwrap_or_default() {
            let slot = &mut self.events[i];
            slot.done = true;
            slot.ok = ok.or(exit_code.map(|c| c == 0));
            slot.exit_code = exit_code;
            if matches!(slot.event, Event::Command(_)) {
                slot.output = failure::bounded(output);
                failed_command |= slot.ok == Some(false);
            }
        }
        if failed_command {
            self.failed_output(output);
        }
    }

    /// The output of a command that failed: a failing build or test names where its errors
    /// are, files the work goes on in (counted as read). Also for a failure whose call an
    /// earlier part of the transcript held.
    pub(crate) fn failed_output(&mut self, output: &str) {
        let cwd = self.cwd.clone();
        let sites: Vec<String> = error_sites::error_sites(output)
            .iter()
            .filter_map(|p| self.root.display(p, cwd.as_deref()))
            .filter(|p| index::inside_project(p))
            .collect();
        self.read_files(sites);
    }

    /// Calls whose outcome an earlier read did not find: their outcome may be in this one.
    pub(crate) fn waiting(&mut self, pending: &[loops::PendingCall]) {
        for p in pending {
            if !p.files.is_empty() {
                self.push(Some(&p.id), Event::Files(p.files.clone()));
            }
            if let Some(c) = &p.command {
                self.push(Some(&p.id), Event::Command(c.clone()));
            }
        }
    }

    /// The calls read, in order, for loop detection.
    pub(super) fn into_steps(self) -> Vec<loops::Step> {
        self.events
            .into_iter()
            .filter_map(Slot::into_step)
            .collect()
    }

    /// Whether a call is waiting under this id (and what it was: true for a command).
    pub(crate) fn call_is_command(&self, call_id: &str) -> Option<bool> {
        self.calls.get(call_id).map(|slots| {
            slots
                .iter()
                .any(|&i| matches!(self.events[i].event, Event::Command(_)))
        })
    }

    /// The whole list at once (`TodoWrite`, `update_plan`, `write_todos`).
    pub(crate) fn replace_plan(&mut self, items: Vec<(String, Option<PlanStatus>)>) {
        self.called();
        self.plan_changed();
        self.task_creates.clear();
        self.plan = items
            .into_iter()
            .filter_map(|(text, status)| {
                let text = text.trim().to_string();
                Some(Task {
                    id: None,
                    text,
                    status: status?,
                })
                .filter(|t| !t.text.is_empty())
            })
            .collect();
    }

    /// Claude Code `TaskCreate`: a new pending task whose id comes with the result.
    pub(crate) fn task_create(&mut self, call_id: &str, text: String) {
        self.called();
        self.plan_changed();
        self.task_creates
            .insert(call_id.to_string(), self.plan.len());
        self.plan.push(Task {
            id: None,
            text: text.trim().to_string(),
            status: PlanStatus::Pending,
        });
    }

    /// The result of a `TaskCreate`: the task's id, or failure (the task was not created).
    pub(crate) fn task_created(&mut self, call_id: &str, id: Option<String>, failed: bool) {
        let Some(i) = self.task_creates.remove(call_id) else {
            return;
        };
        if failed {
            self.plan[i].text.clear(); // dropped in finish()
        } else {
            self.plan[i].id = id;
        }
    }

    /// Claude Code `TaskUpdate`: status (None = deleted) and subject changes by task id.
    pub(crate) fn task_update(
        &mut self,
        id: &str,
        status: Option<Option<PlanStatus>>,
        text: Option<String>,
    ) {
        self.plan_changed();
        let Some(i) = self.plan.iter().position(|t| t.id.as_deref() == Some(id)) else {
            // Created before the window: known only if the update names it.
            if let (Some(text), Some(Some(status))) = (text, status) {
                self.plan.push(Task {
                    id: Some(id.to_string()),
                    text,
                    status,
                });
            }
            return;
        };
        match status {
            Some(None) => {
                self.plan[i].text.clear();
            }
            Some(Some(s)) => self.plan[i].status = s,
            None => {}
        }
        if let Some(t) = text.filter(|t| !t.trim().is_empty()) {
            if !self.plan[i].text.is_empty() {
                self.plan[i].text = t.trim().to_string();
            }
        }
    }

    /// The plan changed here: it is newer than what was said before.
    fn plan_changed(&mut self) {
        self.seq += 1;
        self.plan_seq = self.seq;
        self.plan_at = self.stamp();
    }
}

/// Adds a follow-up, the newest last, keeping at most [`MAX_FOLLOW_UPS`]: when full, the
/// oldest that does not refine the task leaves first (a refinement, "let's store it in
/// metadata", carries what the task became; a reaction or a question is answered by then).
pub(crate) fn keep_follow_up(follow_ups: &mut Vec<String>, text: String) {
    if follow_ups.len() >= MAX_FOLLOW_UPS {
        let drop = follow_ups
            .iter()
            .position(|f| !text::refines(f))
            .unwrap_or(0);
        follow_ups.remove(drop);
    }
    follow_ups.push(text);
}

/// A follow-up as stored: redacted, then cut, keeping its closing ask.
fn follow_up_text(raw: &str) -> String {
    text::keep_closing_ask(
        crate::system::redact::redact(raw.trim()).as_ref(),
        MAX_FOLLOW_UP_CHARS,
    )
}

/// Whether `step` is an item the plan has completed: done work is never the next step.
pub(crate) fn completed_in(plan: &[PlanItem], step: &str) -> bool {
    let step = step.trim().to_lowercase();
    plan.iter()
        .any(|p| p.status == PlanStatus::Completed && p.text.trim().to_lowercase() == step)
}
