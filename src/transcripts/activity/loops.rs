//! Loop detection, judged by progress rather than repetition. A session is in a loop
//! when it repeats itself without getting anywhere:
//!
//! - **the same failure**: one check (a command known by what it runs: `check_key`) fails
//!   `same_failure` times in a row with the same exit code and the same output (its lines with
//!   numbers, hashes and timings taken out: see [`super::failure`]); a different error, or fewer
//!   failures, is progress and starts the count again;
//! - **edits that change nothing**: one file is changed and the checks run after it fail the
//!   same way as before it, `same_file` times; a check that passes or fails differently is
//!   progress;
//! - **oscillation**: one file makes the same change (from one content to another) `oscillation`
//!   times, going back to an earlier content in between;
//! - **blocked**: one command fails `blocked` times with no pass in between while one file is
//!   changed before each run, whatever it prints (a commit the project's pre-commit hook
//!   blocks, now on a linter, now on a type checker, while the agent edits the same file); a
//!   run reporting fewer failures than the one before is progress and starts the count again.
//!
//! Edits alone, or edits with passing checks, never count. Each loop is given once: once per
//! failure (whichever rule saw it first) and once per oscillating file.
//!
//! [`LoopState`] is small and serializable: the hooks keep it in the session's record and feed
//! it one tool call at a time ([`Step`]), so nothing is read twice.

use serde::{Deserialize, Serialize};

use super::failure::{self, Failure};
use super::runs::{command_key, verdict};
// Where the hooks read them from.
pub use super::runs::{with_payload_outcomes, RecentRun};

/// Front-matter settings `loops: {same_failure, same_file, oscillation}`; 0 turns a rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoopLimits {
    /// Runs in a row of one command failing the same way.
    pub same_failure: u32,
    /// Changes of one file, each followed by a check that failed as before it.
    pub same_file: u32,
    /// Times one file makes the same change, back and forth.
    pub oscillation: u32,
    /// Failures of one command with no pass in between, one file changed before each.
    pub blocked: u32,
}

impl Default for LoopLimits {
    fn default() -> Self {
        LoopLimits {
            same_failure: 3,
            same_file: 3,
            oscillation: 3,
            blocked: 5,
        }
    }
}

/// A loop found: `{"kind":"same_failure","command":…,"count":…,"error":…}`,
/// `{"kind":"same_file","path":…,"count":…,"command":…,"error":…}` or
/// `{"kind":"oscillation","path":…,"count":…}`. `command` is redacted, `error` is not (it is
/// redacted wherever it is shown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LoopHit {
    SameFailure {
        command: String,
        count: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    SameFile {
        path: String,
        count: u32,
        /// The check that keeps failing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Oscillation {
        path: String,
        count: u32,
    },
    /// One command failing again and again, whatever it prints, while one file is changed
    /// before each run.
    Blocked {
        command: String,
        count: u32,
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// One tool call, as a hook payload or a transcript shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The agent's id for the call, when it gives one.
    pub id: Option<String>,
    pub action: Action,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A shell command, as run (unredacted).
    Command(String),
    /// Files changed by an edit or a write.
    Files(Vec<FileChange>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// As shown (relative to the project when inside it).
    pub path: String,
    /// A hash of the content the change left, when known.
    pub content: Option<String>,
    /// A hash of the content before it, when known (the file's first change then counts).
    pub before: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not known yet (the result comes later in the transcript).
    Pending,
    /// Finished: `ok` as the agent says, the exit code, and the output (bounded).
    Done {
        ok: Option<bool>,
        exit_code: Option<i64>,
        output: String,
    },
}

impl Outcome {
    pub fn done(ok: Option<bool>, exit_code: Option<i64>, output: &str) -> Outcome {
        Outcome::Done {
            ok,
            exit_code,
            output: failure::bounded(output),
        }
    }
}

/// How many commands, files, call ids and recent runs are remembered.
const MAX_COMMANDS: usize = 16;
const MAX_FILES: usize = 32;
const MAX_STATES: usize = 12;
const MAX_IDS: usize = 64;
const MAX_SAID: usize = 32;
const MAX_RECENT: usize = 8;
const MAX_SHOWN_CHARS: usize = 200;

/// What loop detection remembers of a session between two hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopState {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    commands: Vec<CommandTrack>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    files: Vec<FileTrack>,
    /// The last failure of any command: what the next check is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_failure: Option<Failure>,
    /// The command that failed last, as shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_failed: Option<String>,
    /// The loops already given: `failure:<signature>`, `oscillation:<path>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(rename = "told")]
    said: Vec<String>,
    /// Ids of the calls already counted (a payload's call comes again in the transcript).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) fed: Vec<String>,
    /// Calls counted from a payload that had no id (Gemini's): their copy in the transcript
    /// is recognised by what they did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) twins: Vec<String>,
    /// Calls seen without their outcome yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) pending: Vec<PendingCall>,
    /// How far the transcript has been read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<Cursor>,
    /// Loops found at an event that could not reach the model (a `Stop`): given at the next
    /// event that can.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    unsaid: Vec<LoopHit>,
    /// The last commands with their outcome, for a checkpoint written before the transcript
    /// has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<RecentRun>,
    /// File changes counted so far: what tells the files changed since a command's last run.
    #[serde(default, skip_serializing_if = "is_zero")]
    edits: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CommandTrack {
    /// A hash of the command with its output filters and `cd … &&` taken off.
    key: String,
    /// As shown (redacted, cut).
    shown: String,
    /// Failures in a row, the same each time.
    streak: u32,
    /// Its last run's failure; None when it last succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last: Option<Failure>,
    /// Failures with no pass in between, `blocked_on` changed before each (whatever they
    /// printed), and `edits` (the state's count of changes) at its last run.
    #[serde(default, skip_serializing_if = "is_zero")]
    blocked: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blocked_on: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    at: u32,
    /// The failures of that run of failures (their signatures, at most [`MAX_STATES`]), and
    /// how many came back after an earlier one: a run of new failures each time is progress
    /// (a linter finding the next thing), one that brings a failure back is not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    seen: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    repeats: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileTrack {
    path: String,
    /// Hashes of its last contents, oldest first; `?` for a content not known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    states: Vec<String>,
    /// Changed since the last check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    edited: bool,
    /// Checks after a change of it that failed as before the change.
    #[serde(default, skip_serializing_if = "is_zero")]
    stalled: u32,
    /// The state's count of changes at its last change.
    #[serde(default, skip_serializing_if = "is_zero")]
    changed_at: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A call waiting for its outcome, by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// Where the transcript was read up to: the end of its last complete line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub path: String,
    pub offset: u64,
}

impl LoopState {
    /// The calls waiting for an outcome belong to another transcript (or this one rewritten):
    /// forgotten, their calls are read again as new.
    pub fn forget_pending(&mut self) {
        self.pending.clear();
    }

    /// The transcript was read up to `cursor`.
    pub fn read_to(&mut self, cursor: Cursor) {
        self.cursor = Some(cursor);
    }

    /// The loops kept for an event that can give them to the model, taken (given once).
    pub fn take_unsaid(&mut self) -> Vec<LoopHit> {
        std::mem::take(&mut self.unsaid)
    }

    /// Loops found at an event that cannot reach the model: kept for the next one that can.
    pub fn keep_unsaid(&mut self, hits: impl IntoIterator<Item = LoopHit>) {
        self.unsaid.extend(hits);
    }

    /// Nothing remembered (the record leaves the key out).
    pub fn is_empty(&self) -> bool {
        *self == LoopState::default()
    }

    /// Counts one finished call; returns the loops it completes that were not given yet (they
    /// are marked given).
    pub fn feed(&mut self, step: &Step, limits: &LoopLimits) -> Vec<LoopHit> {
        if let Some(id) = &step.id {
            remember(&mut self.fed, id.clone(), MAX_IDS);
            self.pending.retain(|p| &p.id != id);
        }
        let Outcome::Done {
            ok,
            exit_code,
            output,
        } = &step.outcome
        else {
            return Vec::new();
        };
        match &step.action {
            Action::Command(cmd) => self.command(cmd, *ok, *exit_code, output, limits),
            Action::Files(changes) => {
                if *ok == Some(false) {
                    return Vec::new(); // a failed edit changed nothing
                }
                changes
                    .iter()
                    .filter_map(|c| self.file(c, limits))
                    .collect()
            }
        }
    }

    fn command(
        &mut self,
        cmd: &str,
        ok: Option<bool>,
        exit_code: Option<i64>,
        output: &str,
        limits: &LoopLimits,
    ) -> Vec<LoopHit> {
        let verdict = verdict(cmd, ok, exit_code, output);
        let shown = super::text::cut(
            crate::system::redact::redact(cmd.trim()).as_ref(),
            MAX_SHOWN_CHARS,
        );
        remember_run(
            &mut self.recent,
            RecentRun {
                command: shown.clone(),
                ok: ok.or(exit_code.map(|c| c == 0)),
                exit_code,
                passed: match super::left_open::verdict_in_output(output) {
                    Some(false) => Some(false),
                    _ => verdict,
                },
            },
        );
        let key = check_key(cmd);
        let i = match self.commands.iter().position(|c| c.key == key) {
            Some(i) => i,
            None => {
                self.commands.push(CommandTrack {
                    key: key.clone(),
                    shown: shown.clone(),
                    streak: 0,
                    last: None,
                    blocked: 0,
                    blocked_on: None,
                    at: self.edits,
                    seen: Vec::new(),
                    repeats: 0,
                });
                if self.commands.len() > MAX_COMMANDS {
                    self.commands.remove(0);
                }
                self.commands.len() - 1
            }
        };
        let mut hits = Vec::new();
        match verdict {
            None => {}
            Some(true) => {
                let c = &mut self.commands[i];
                c.blocked = 0;
                c.blocked_on = None;
                c.at = self.edits;
                c.seen.clear();
                c.repeats = 0;
                let blocked_key = format!("blocked:{key}");
                self.said.retain(|k| *k != blocked_key);
                let c = &mut self.commands[i];
                if c.last.take().is_some() {
                    // A check that failed now passes: whatever was edited worked.
                    c.streak = 0;
                    self.last_failure = None;
                    self.last_failed = None;
                    for f in &mut self.files {
                        f.stalled = 0;
                        f.edited = false;
                    }
                }
            }
            Some(false) => {
                let failure = Failure::of(exit_code, output);
                let blocked = self.blocked(i, &failure);
                let c = &mut self.commands[i];
                c.shown = shown.clone();
                let again = c.last.as_ref().is_some_and(|l| failure.same_as(l));
                c.streak = if again { c.streak + 1 } else { 1 };
                // A run that printed nothing keeps the last failure that did say something: the
                // next run is compared with it, and a warning quotes it.
                let failure = match &c.last {
                    Some(last) if again && failure.says_nothing() => last.clone(),
                    _ => failure,
                };
                c.last = Some(failure.clone());
                let streak = c.streak;
                // The checks' verdict on the edits since the last one.
                let same_as_last = self
                    .last_failure
                    .as_ref()
                    .is_some_and(|l| failure.same_as(l));
                for f in &mut self.files {
                    if same_as_last {
                        if f.edited {
                            f.stalled += 1;
                        }
                    } else if self.last_failure.is_some() {
                        f.stalled = 0; // it fails differently now: progress
                    }
                    f.edited = false;
                }
                self.last_failure = Some(failure.clone());
                self.last_failed = Some(shown.clone());
                if limits.same_failure > 0 && streak >= limits.same_failure {
                    if let Some(hit) = self.say(
                        loop_key(&failure, &key),
                        LoopHit::SameFailure {
                            command: shown.clone(),
                            count: streak,
                            error: error_of(&failure),
                        },
                    ) {
                        hits.push(hit);
                    }
                }
                if limits.same_file > 0 {
                    let stalled: Vec<(String, u32)> = self
                        .files
                        .iter()
                        .filter(|f| f.stalled >= limits.same_file)
                        .map(|f| (f.path.clone(), f.stalled))
                        .collect();
                    for (path, count) in stalled {
                        if let Some(hit) = self.say(
                            loop_key(&failure, &key),
                            LoopHit::SameFile {
                                path,
                                count,
                                command: Some(shown.clone()),
                                error: error_of(&failure),
                            },
                        ) {
                            hits.push(hit);
                        }
                    }
                }

                // One loop is told once: not again as blocked when a rule above told it.
                let told = self.said.contains(&loop_key(&failure, &key));
                if let (true, false, Some((path, count))) = (limits.blocked > 0, told, blocked) {
                    if count >= limits.blocked {
                        if let Some(hit) = self.say(
                            format!("blocked:{key}"),
                            LoopHit::Blocked {
                                command: shown.clone(),
                                count,
                                path,
                                error: error_of(&failure),
                            },
                        ) {
                            hits.push(hit);
                        }
                    }
                }
            }
        }
        hits
    }

    /// Counts a failure (`failure`) of command `i` toward the blocked rule: one more when its
    /// last run failed too and the file it is blocked on (or, starting, any file) was changed
    /// since, the count unchanged for a retry with no change, and from one again after a pass,
    /// a change of another file, or a run reporting fewer failures (progress). Returns the file
    /// and the count when one file is being changed between the failures.
    fn blocked(&mut self, i: usize, failure: &Failure) -> Option<(String, u32)> {
        let edits = self.edits;
        let c = &self.commands[i];
        let since = c.at;
        let changed: Vec<&FileTrack> = self.files.iter().filter(|f| f.changed_at > since).collect();
        let progress = matches!(
            (failure.failures, c.last.as_ref().and_then(|l| l.failures)),
            (Some(now), Some(was)) if now < was
        );
        let (count, on) = match (&c.last, &c.blocked_on) {
            (None, _) => (1, None),
            _ if progress => (1, None),
            (Some(_), _) if changed.is_empty() => (c.blocked.max(1), c.blocked_on.clone()),
            (Some(_), Some(on)) if changed.iter().any(|f| &f.path == on) => {
                (c.blocked + 1, Some(on.clone()))
            }
            (Some(_), _) => {
                // Starting, or another file now: the most recently changed one.
                let newest = changed.iter().max_by_key(|f| f.changed_at)?;
                (2, Some(newest.path.clone()))
            }
        };
        let c = &mut self.commands[i];
        if count <= 2 {
            // A new run of failures: the one before this, when it counts, is its first.
            let first = (count == 2).then(|| c.last.as_ref().map(|l| l.signature.clone()));
            c.seen = first.flatten().into_iter().collect();
            c.repeats = 0;
        }
        if c.seen.contains(&failure.signature) {
            c.repeats += 1;
        } else {
            remember(&mut c.seen, failure.signature.clone(), MAX_STATES);
        }
        c.blocked = count;
        c.blocked_on = on.clone();
        c.at = edits;
        // Only a run that keeps bringing failures back is blocked (two at least).
        let repeats = c.repeats;
        on.filter(|_| repeats >= 2).map(|path| (path, count))
    }

    fn file(&mut self, change: &FileChange, limits: &LoopLimits) -> Option<LoopHit> {
        self.edits = self.edits.saturating_add(1);
        let edits = self.edits;
        let path = crate::system::redact::redact(&change.path).into_owned();
        let i = match self.files.iter().position(|f| f.path == path) {
            Some(i) => i,
            None => {
                self.files.push(FileTrack {
                    path,
                    states: Vec::new(),
                    edited: false,
                    stalled: 0,
                    changed_at: 0,
                });
                if self.files.len() > MAX_FILES {
                    self.files.remove(0);
                }
                self.files.len() - 1
            }
        };
        let f = &mut self.files[i];
        f.edited = true;
        f.changed_at = edits;
        if let (true, Some(before)) = (f.states.is_empty(), &change.before) {
            f.states.push(before.clone());
        }
        let state = change.content.clone().unwrap_or_else(|| "?".into());
        let Some(from) = f.states.last().cloned() else {
            f.states.push(state);
            return None;
        };
        if from == state && state != "?" {
            return None; // nothing changed
        }
        // How many times this very change was made before.
        let made = f
            .states
            .windows(2)
            .filter(|w| w[0] == from && w[1] == state && state != "?" && from != "?")
            .count() as u32
            + 1;
        f.states.push(state);
        if f.states.len() > MAX_STATES {
            f.states.remove(0);
        }
        if limits.oscillation > 0 && made >= limits.oscillation && from != "?" {
            let path = f.path.clone();
            return self.say(
                format!("oscillation:{path}"),
                LoopHit::Oscillation { path, count: made },
            );
        }
        None
    }

    /// `hit`, unless its loop was given already.
    fn say(&mut self, key: String, hit: LoopHit) -> Option<LoopHit> {
        if self.said.contains(&key) {
            return None;
        }
        remember(&mut self.said, key, MAX_SAID);
        Some(hit)
    }

    /// Whether the loop `hit` is over: a run of its check passed since (the latest run of the
    /// same check among the recent ones, else that check's own last verdict). An oscillation
    /// has no check and is never over by this.
    pub fn ended(&self, hit: &LoopHit) -> bool {
        let command = match hit {
            LoopHit::SameFailure { command, .. } => command.as_str(),
            LoopHit::SameFile {
                command: Some(command),
                ..
            }
            | LoopHit::Blocked { command, .. } => command.as_str(),
            _ => return false,
        };
        let latest = self
            .recent
            .iter()
            .rev()
            .find(|r| r.passed.is_some() && super::left_open::same_check(command, &r.command));
        match latest {
            Some(r) => r.passed == Some(true),
            None => {
                let key = check_key(command);
                self.commands
                    .iter()
                    .any(|c| c.key == key && c.last.is_none())
            }
        }
    }

    /// Whether a call with this id was counted already.
    pub fn was_fed(&self, id: &str) -> bool {
        self.fed.iter().any(|f| f == id)
    }

    /// A call counted from a payload without an id: its copy in the transcript is skipped once.
    pub fn expect_twin(&mut self, step: &Step) {
        self.twins.push(twin_key(&step.action));
        if self.twins.len() > MAX_COMMANDS {
            self.twins.remove(0);
        }
    }

    /// Whether `step`, read from the transcript, is the copy of a call counted from a payload
    /// without an id; its id is then known as counted.
    pub fn take_twin(&mut self, step: &Step) -> bool {
        if self.twins.is_empty() {
            return false;
        }
        let key = twin_key(&step.action);
        let Some(i) = self.twins.iter().position(|k| *k == key) else {
            return false;
        };
        self.twins.remove(i);
        if let Some(id) = &step.id {
            remember(&mut self.fed, id.clone(), MAX_IDS);
            self.pending.retain(|p| &p.id != id);
        }
        true
    }

    /// Remembers a call whose outcome comes later.
    pub fn wait_for(&mut self, step: &Step) {
        let Some(id) = &step.id else { return };
        if self.was_fed(id) || self.pending.iter().any(|p| &p.id == id) {
            return;
        }
        // Kept in the session's record: redacted (the key and what is shown come out the same).
        let redact = |t: &str| crate::system::redact::redact(t).into_owned();
        let (command, files) = match &step.action {
            Action::Command(c) => (Some(redact(c)), Vec::new()),
            Action::Files(f) => (None, f.iter().map(|c| redact(&c.path)).collect()),
        };
        self.pending.push(PendingCall {
            id: id.clone(),
            command,
            files,
        });
        if self.pending.len() > MAX_COMMANDS {
            self.pending.remove(0);
        }
    }
}

fn remember(list: &mut Vec<String>, item: String, max: usize) {
    list.retain(|x| *x != item);
    list.push(item);
    if list.len() > max {
        list.remove(0);
    }
}

fn remember_run(list: &mut Vec<RecentRun>, run: RecentRun) {
    list.push(run);
    if list.len() > MAX_RECENT {
        list.remove(0);
    }
}

/// Which check a command runs, hashed: its [`command_key`] with the text it quotes (a commit
/// message, a heredoc) left out, and of a `&&` chain the last command (`git add a b && git
/// commit -m "…"` is the commit). Rewording the message or staging other files between two
/// blocked commits is still the same check.
fn check_key(cmd: &str) -> String {
    let key = command_key(&crate::system::redact::redact(cmd));
    let unquoted = without_quoted(&key);
    let last = unquoted.rsplit(" && ").next().unwrap_or(&unquoted);
    content_hash(last.trim().as_bytes())
}

/// `cmd` with what it quotes emptied (`"…"` and `'…'` both become `""`) and any heredoc (from
/// `<<` on) left out.
fn without_quoted(cmd: &str) -> String {
    let mut out = String::with_capacity(cmd.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    out.push('"');
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => {
                out.push('"');
                quote = Some(c);
            }
            None if c == '<' && chars.peek() == Some(&'<') => break,
            None => out.push(c),
        }
    }
    out
}

/// What tells a call from others by what it did (hashed: it is kept in the session's record).
fn twin_key(action: &Action) -> String {
    match action {
        Action::Command(c) => key_of(c),
        Action::Files(f) => {
            let mut paths: Vec<String> = f
                .iter()
                .map(|c| crate::system::redact::redact(&c.path).into_owned())
                .collect();
            paths.sort_unstable();
            content_hash(paths.join("\n").as_bytes())
        }
    }
}

/// A command's [`command_key`], redacted and hashed.
fn key_of(cmd: &str) -> String {
    let key = command_key(&crate::system::redact::redact(cmd));
    content_hash(key.as_bytes())
}

/// What one loop is, for giving it once: its failure (the same failure seen by both rules, or
/// from two spellings of one check, is one loop); a failure that printed nothing is told apart
/// by its command.
fn loop_key(f: &Failure, command_key: &str) -> String {
    let code = f.exit_code.map(|c| c.to_string()).unwrap_or_default();
    if f.first_error.is_empty() {
        format!("failure:{command_key}:{code}")
    } else {
        format!("failure:{code}:{}", f.signature)
    }
}

fn error_of(f: &Failure) -> Option<String> {
    let mut text = match f.exit_code {
        Some(c) => format!("exit {c}"),
        None => String::new(),
    };
    if !f.first_error.is_empty() {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&f.first_error);
    }
    (!text.is_empty()).then(|| crate::system::redact::redact(&text).into_owned())
}

/// Every loop in a whole session's calls, in order (relay's look back at a finished session).
pub fn loops_in(steps: &[Step], limits: &LoopLimits) -> Vec<LoopHit> {
    let mut state = LoopState::default();
    steps.iter().flat_map(|s| state.feed(s, limits)).collect()
}

/// A short, stable hash (16 hex digits) of a file's content, a command or a list of paths:
/// what tells one from another without keeping it.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cmd: &str, code: i64, output: &str) -> Step {
        Step {
            id: None,
            action: Action::Command(cmd.into()),
            outcome: Outcome::done(None, Some(code), output),
        }
    }

    fn edit(path: &str, content: Option<&str>) -> Step {
        Step {
            id: None,
            action: Action::Files(vec![FileChange {
                path: path.into(),
                content: content.map(str::to_string),
                before: None,
            }]),
            outcome: Outcome::done(Some(true), None, ""),
        }
    }

    fn feed_all(steps: &[Step]) -> Vec<(usize, LoopHit)> {
        let mut s = LoopState::default();
        let limits = LoopLimits::default();
        let mut out = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            for h in s.feed(step, &limits) {
                out.push((i, h));
            }
        }
        out
    }

    fn pytest(failed: &[&str]) -> String {
        let mut out = String::from("============ test session starts ============\n");
        for t in failed {
            out.push_str(&format!(
                "FAILED tests/test_table.py::{t} - AssertionError\n"
            ));
        }
        out.push_str(&format!(
            "======= {} failed, {} passed in 1.2{}s =======\n",
            failed.len(),
            40 - failed.len(),
            failed.len()
        ));
        out
    }

    #[test]
    fn a_converging_test_fix_loop_never_warns() {
        // 12 → 11 → 2 → 1 → 0 failures, an edit before each run.
        let names: Vec<String> = (0..12).map(|i| format!("test_case_{i}")).collect();
        let mut steps = Vec::new();
        for n in [12usize, 11, 2, 1] {
            let failing: Vec<&str> = names[..n].iter().map(String::as_str).collect();
            steps.push(run("pytest -q tests", 1, &pytest(&failing)));
            steps.push(edit("src/table.py", None));
        }
        steps.push(run("pytest -q tests", 0, "40 passed in 1.1s"));
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn fewer_failures_with_the_same_lines_is_progress() {
        let steps: Vec<Step> = [5, 4, 3, 2]
            .iter()
            .map(|n| run("npm test", 1, &format!("Tests: {n} failed, 10 total")))
            .collect();
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn a_run_whose_output_was_lost_neither_resets_nor_replaces_the_failure() {
        let out = "widget check failed: 2 widgets unparsed";
        let steps = [
            run("make check", 3, out),
            run("make check", 3, ""),
            run("make check", 3, out),
        ];
        let hits = feed_all(&steps);
        assert_eq!(hits.len(), 1, "{hits:?}");
        let LoopHit::SameFailure { count, error, .. } = &hits[0].1 else {
            panic!("{hits:?}");
        };
        assert_eq!((hits[0].0, *count), (2, 3));
        let error = error.as_deref().unwrap_or_default();
        assert!(error.contains("2 widgets unparsed"), "{error}");
        // Another exit code is still another failure.
        let steps = [
            run("make check", 3, out),
            run("make check", 2, ""),
            run("make check", 3, out),
        ];
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn the_same_failure_three_times_warns_once() {
        let out = "error[E0308]: mismatched types\n --> src/lib.rs:10:5\nerror: could not compile `demo` (lib) due to 1 previous error";
        let mut steps = Vec::new();
        for _ in 0..5 {
            steps.push(edit("src/lib.rs", None));
            steps.push(run("cargo build", 101, out));
        }
        let hits = feed_all(&steps);
        assert_eq!(hits.len(), 1, "{hits:?}");
        let (at, hit) = &hits[0];
        assert_eq!(*at, 5, "the third failing run");
        let LoopHit::SameFailure {
            command,
            count,
            error,
        } = hit
        else {
            panic!("{hit:?}")
        };
        assert_eq!((command.as_str(), *count), ("cargo build", 3));
        assert_eq!(
            error.as_deref(),
            Some("exit 101: error[E0308]: mismatched types")
        );
    }

    /// A commit the project's pre-commit hook blocks: now the linter (on a new line each
    /// time), now the type checker (the same error each time).
    fn blocked_commit(i: usize) -> Step {
        let out = if i.is_multiple_of(2) {
            format!(
                "ruff.....Failed\n- hook id: ruff\n- exit code: 1\n\nsrc/billing.py:{}:5: F841 Local variable `tmp{i}` is assigned to but never used\nFound 1 error.\nmypy.....Passed",
                10 + i
            )
        } else {
            "ruff.....Passed\nmypy.....Failed\n- hook id: mypy\n- exit code: 1\n\nsrc/billing.py:20: error: Incompatible return value type (got \"float\", expected \"Decimal\")  [return-value]\nFound 1 error in 1 file (checked 3 source files)".to_string()
        };
        run(
            &format!("git add src/billing.py && git commit -m \"Fix rounding, take {i}\""),
            1,
            &out,
        )
    }

    #[test]
    fn a_commit_blocked_again_and_again_while_one_file_is_edited_warns_once() {
        let mut steps = vec![edit("src/billing.py", None)];
        for i in 0..6 {
            steps.push(blocked_commit(i));
            steps.push(edit("src/billing.py", None));
            steps.push(run("git status --short", 0, " M src/billing.py"));
        }
        steps.push(run("git commit --no-verify -m x", 0, "[main 1a2b3c] x"));
        let hits = feed_all(&steps);
        assert_eq!(hits.len(), 1, "{hits:?}");
        let (
            at,
            LoopHit::Blocked {
                command,
                count,
                path,
                error,
            },
        ) = &hits[0]
        else {
            panic!("{hits:?}");
        };
        // At the fifth blocked commit, before the sixth and the skipped checks.
        assert_eq!((*at, *count, path.as_str()), (13, 5, "src/billing.py"));
        assert!(command.contains("git commit"), "{command}");
        assert!(
            error.as_deref().unwrap_or_default().contains("exit 1"),
            "{error:?}"
        );
        // A pass in between starts the count again; so does another file.
        let mut steps = Vec::new();
        for i in 0..8 {
            steps.push(edit(
                if i == 4 {
                    "src/other.py"
                } else {
                    "src/billing.py"
                },
                None,
            ));
            steps.push(blocked_commit(i));
            if i == 2 {
                steps.push(run("git commit -m ok", 0, "[main 1] ok"));
            }
        }
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn a_test_run_failing_less_each_time_is_not_blocked() {
        let mut steps = Vec::new();
        for n in (1..=7).rev() {
            steps.push(edit("src/table.py", None));
            steps.push(run(
                "pytest -q",
                1,
                &format!("FAILED tests/t.py::test_{n}\n{n} failed, 3 passed in 0.2s"),
            ));
        }
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn a_loop_ends_when_a_later_run_of_its_check_passes() {
        let mut s = LoopState::default();
        let limits = LoopLimits::default();
        let out = "error[E0308]: mismatched types";
        let mut hits = Vec::new();
        for _ in 0..3 {
            hits.extend(s.feed(&run("cargo build", 101, out), &limits));
        }
        assert_eq!(hits.len(), 1);
        assert!(!s.ended(&hits[0]));
        s.feed(&run("cargo build", 0, "Finished"), &limits);
        assert!(s.ended(&hits[0]));
    }

    #[test]
    fn three_runs_failing_for_different_reasons_never_warn() {
        let steps = vec![
            run("git commit -m x", 1, "[DIALYZER]\nlib/a.ex:57:13:pattern_match"),
            edit("lib/a.ex", None),
            run(
                "git commit -m x",
                1,
                "[CREDO]\n[R] Prefer using an implicit `try`\n[DIALYZER]\nlib/a.ex:57:13:pattern_match",
            ),
            edit("lib/a.ex", None),
            run("git commit -m x", 1, "[DIALYZER]\nlib/a.ex:58:13:no_return"),
        ];
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn ten_green_edits_of_one_file_never_warn() {
        let mut steps = Vec::new();
        for i in 0..10 {
            steps.push(edit("src/parser.rs", Some(&format!("v{i}"))));
            steps.push(run("cargo test", 0, "test result: ok. 12 passed"));
        }
        for i in 10..20 {
            steps.push(edit("src/parser.rs", Some(&format!("v{i}"))));
        }
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn a_new_file_refined_by_lint_driven_edits_never_warns() {
        // Each lint run fails on something new; the tests stay green.
        let lints = [
            "unused variable: `row`",
            "this `if` has identical blocks",
            "redundant clone",
            "needless borrow",
            "you seem to be trying to use `match` for destructuring a single pattern",
            "length comparison to zero",
            "manual implementation of `Option::map`",
        ];
        let mut steps = vec![edit("src/new.rs", Some("v0"))];
        for (i, lint) in lints.iter().enumerate() {
            steps.push(run(
                "cargo clippy -- -D warnings",
                101,
                &format!("error: {lint}\n --> src/new.rs:{i}:1"),
            ));
            steps.push(edit("src/new.rs", Some(&format!("v{i}"))));
            steps.push(run("cargo test", 0, "test result: ok. 3 passed"));
        }
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn edits_followed_by_the_same_failure_of_varying_checks_warn() {
        let out = "FAILED tests/test_a.py::test_blank - assert 3 == 4\n1 failed, 9 passed";
        let steps = vec![
            run("pytest tests/test_a.py", 1, out),
            edit("src/a.py", None),
            run("pytest tests/test_a.py -k blank", 1, out),
            edit("src/a.py", None),
            run("pytest -x tests/test_a.py", 1, out),
            edit("src/a.py", None),
            run("python -m pytest tests/test_a.py", 1, out),
        ];
        let hits = feed_all(&steps);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(
            matches!(&hits[0], (6, LoopHit::SameFile { path, count: 3, .. }) if path == "src/a.py"),
            "{hits:?}"
        );
    }

    #[test]
    fn one_loop_seen_by_both_rules_is_given_once() {
        let out = "panicked at src/lib.rs:3:5";
        let mut steps = vec![run("cargo test", 101, out)];
        for _ in 0..6 {
            steps.push(edit("src/lib.rs", None));
            steps.push(run("cargo test", 101, out));
        }
        assert_eq!(feed_all(&steps).len(), 1);
    }

    #[test]
    fn a_file_flip_flopping_between_two_versions_warns() {
        let steps: Vec<Step> = ["a", "b", "a", "b", "a", "b", "a"]
            .iter()
            .map(|c| edit("src/fmt.rs", Some(c)))
            .collect();
        let hits = feed_all(&steps);
        assert_eq!(
            hits,
            vec![(
                5,
                LoopHit::Oscillation {
                    path: "src/fmt.rs".into(),
                    count: 3
                }
            )]
        );
    }

    #[test]
    fn a_revert_or_a_re_applied_fix_is_not_oscillation() {
        // Tried b, reverted; tried c, reverted; then the fix re-applied once to check the test.
        let steps: Vec<Step> = ["a", "b", "a", "c", "a", "d", "a", "d"]
            .iter()
            .map(|c| edit("src/x.rs", Some(c)))
            .collect();
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn unknown_contents_never_look_alike() {
        let steps: Vec<Step> = (0..10).map(|_| edit("src/x.rs", None)).collect();
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn a_grep_finding_nothing_is_not_a_failure() {
        let steps: Vec<Step> = (0..4).map(|_| run("grep -rn TODO src", 1, "")).collect();
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn a_pipe_into_tail_is_judged_by_the_summary() {
        let out = "test parse::blank ... FAILED\ntest result: FAILED. 3 passed; 1 failed";
        let steps: Vec<Step> = (0..3)
            .map(|_| run("cargo test 2>&1 | tail -20", 0, out))
            .collect();
        assert_eq!(feed_all(&steps).len(), 1);
        let green: Vec<Step> = (0..3)
            .map(|_| run("cargo test 2>&1 | tail -20", 0, "test result: ok. 4 passed"))
            .collect();
        assert_eq!(feed_all(&green), vec![]);
    }

    #[test]
    fn a_pass_in_between_starts_the_count_again() {
        let out = "exit status 2: boom";
        let steps = vec![
            run("make check", 2, out),
            run("make check", 2, out),
            run("make check", 0, "all good"),
            run("make check", 2, out),
            run("make check", 2, out),
        ];
        assert_eq!(feed_all(&steps), vec![]);
    }

    #[test]
    fn silent_failures_of_two_commands_are_two_loops() {
        let mut steps: Vec<Step> = (0..3).map(|_| run("make lint", 2, "")).collect();
        steps.extend((0..3).map(|_| run("make docs", 2, "")));
        assert_eq!(feed_all(&steps).len(), 2);
    }

    #[test]
    fn a_limit_of_zero_turns_a_rule_off() {
        let mut s = LoopState::default();
        let off = LoopLimits {
            same_failure: 0,
            ..LoopLimits::default()
        };
        for _ in 0..5 {
            assert!(s.feed(&run("make", 2, "boom"), &off).is_empty());
        }
    }

    #[test]
    fn commands_are_known_by_what_they_run() {
        assert_eq!(
            command_key("cd /repo &&  cargo test 2>&1 | tail -20"),
            "cargo test"
        );
        assert_eq!(command_key("cargo test 2>&1"), "cargo test");
        // A reworded commit message, other files staged: the same check.
        assert_eq!(
            check_key("git add src/a.py && git commit -m \"Add the parser\""),
            check_key(
                "git add src/a.py src/b.py && git commit -m \"Fix lint in the \\\"parser\\\"\""
            ),
        );
        assert_eq!(
            check_key("git commit -m \"$(cat <<'EOF'\nAdd it\nEOF\n)\""),
            check_key("git commit -m 'other words'"),
        );
        assert_eq!(
            without_quoted("git commit -F - <<'EOF'\nmsg\nEOF"),
            "git commit -F - "
        );
        assert_ne!(
            check_key("pytest tests/a.py"),
            check_key("pytest tests/b.py")
        );
        assert_ne!(check_key("git commit -am x"), check_key("git push"));
        assert_eq!(
            command_key("cargo test | grep FAIL"),
            "cargo test | grep FAIL"
        );
    }

    #[test]
    fn the_state_round_trips_and_stays_small() {
        let mut s = LoopState::default();
        let limits = LoopLimits::default();
        for i in 0..200 {
            s.feed(
                &Step {
                    id: Some(format!("call-{i}")),
                    action: Action::Command(format!("cmd {i}")),
                    outcome: Outcome::done(None, Some(1), &"x".repeat(100_000)),
                },
                &limits,
            );
            s.feed(&edit(&format!("f{i}.rs"), Some("h")), &limits);
        }
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.len() < 24_000, "{} bytes", json.len());
        assert_eq!(serde_json::from_str::<LoopState>(&json).unwrap(), s);
        assert!(serde_json::to_string(&LoopState::default()).unwrap() == "{}");
    }
}
