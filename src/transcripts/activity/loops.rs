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
            crate::system::sorting::sort(&mut paths);
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
mod tests;
