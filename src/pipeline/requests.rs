//! Asking the model for a checkpoint at natural points of the work, not only
//! as the context fills: after a commit it made, after a plan item it
//! completed, after a long stretch of tool calls with no checkpoint of its
//! own. One short instruction, rate-limited by tool calls (an idle session
//! makes none, so it is never asked), never within `spacing` calls of the
//! last request or of a checkpoint the model wrote.

use crate::agents::payload::{Payload, ToolAction};
use crate::domain::requests::{Settings, State};

/// Files named in a request.
const FILES_NAMED: usize = 4;

/// Why the model is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    Commit(Option<String>),
    /// A commit whose message is in a file (`-F FILE`), relative to the call's folder: read
    /// when the request's text is made, which is where files are read.
    CommitFile(String, Option<std::path::PathBuf>),
    PlanItem(String),
    LongStretch(u32),
}

impl Why {
    /// The word the events log records.
    pub fn name(&self) -> &'static str {
        match self {
            Why::Commit(_) | Why::CommitFile(..) => "commit",
            Why::PlanItem(_) => "plan_item",
            Why::LongStretch(_) => "long_stretch",
        }
    }
}

/// One tool call seen: counts it, and says whether to ask now. `current`
/// is the project's checkpoint, `own` the one this session last wrote or
/// was given (a different one is the model's own, or another writer's).
pub fn step(
    state: &mut State,
    settings: &Settings,
    payload: &Payload,
    current: Option<&str>,
    own: Option<&str>,
) -> Option<Why> {
    if current.is_some() && current != state.checkpoint.as_deref() {
        state.checkpoint = current.map(str::to_string);
        // Not this session's own: the model (or someone) wrote one since.
        if current != own {
            state.restart();
        }
    }
    let tool = payload.tool.as_ref();
    state.calls = state.calls.saturating_add(1);
    if let Some(ToolAction::Files(files)) = tool.map(|t| &t.action) {
        for f in files {
            // A file outside the project (a plan in the agent's folder, a temporary file) is
            // not the project's work: not named.
            let Some(name) = project_relative(&f.path, payload.cwd.as_deref()) else {
                continue;
            };
            if state.files.contains(&name) {
                continue;
            }
            if state.files.len() < FILES_NAMED {
                state.files.push(name);
            } else {
                state.more_files = state.more_files.saturating_add(1);
            }
        }
    }
    if state.calls <= settings.spacing {
        return None;
    }
    let failed = tool
        .and_then(|t| t.outcome.as_ref())
        .is_some_and(|o| o.ok == Some(false));
    let why = match (tool.map(|t| &t.action), &payload.plan_done) {
        (Some(ToolAction::Command(c)), _) if settings.after_commit && !failed => {
            commit(c).map(|m| match m {
                Message::Text(t) => Why::Commit(subject(&t)),
                Message::File(f) => Why::CommitFile(f, payload.cwd.clone()),
                Message::None => Why::Commit(None),
            })
        }
        (_, Some(item)) if settings.after_plan_item => Some(Why::PlanItem(item.clone())),
        _ => None,
    };
    let why = why.or_else(|| {
        (settings.after_calls > 0 && state.calls >= settings.after_calls)
            .then_some(Why::LongStretch(state.calls))
    })?;
    Some(why)
}

/// `path` relative to the project (`cwd`, the call's folder), with `/` between its parts;
/// None for an absolute path outside it. Paths written on Windows (`C:\Users\…`) are read
/// as Windows reads them, whatever system reads them here: either slash, any letter case.
fn project_relative(path: &std::path::Path, cwd: Option<&std::path::Path>) -> Option<String> {
    let slashed = |p: &std::path::Path| p.to_string_lossy().replace('\\', "/");
    let p = slashed(path);
    let drive =
        |s: &str| s.as_bytes().get(1) == Some(&b':') && s.as_bytes()[0].is_ascii_alphabetic();
    if !p.starts_with('/') && !drive(&p) {
        return Some(p.trim_start_matches("./").to_string());
    }
    let root = slashed(cwd?);
    let root = root.trim_end_matches('/');
    let head = p.get(..root.len())?;
    let same = match drive(root) {
        true => head.eq_ignore_ascii_case(root),
        false => head == root,
    };
    let rest = p[root.len()..].strip_prefix('/')?;
    (same && !rest.is_empty()).then(|| rest.to_string())
}

/// The request is made: counted, and the stretch starts again.
pub fn asked(state: &mut State) {
    state.asked = state.asked.saturating_add(1);
    state.restart();
}

/// A stage's instruction went to the model instead: it asks for the same.
pub fn stage_given(state: &mut State) {
    state.restart();
}

/// A commit's message, as far as the command line says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Text(String),
    /// `-F FILE`: read when the request is made (relative to the call's folder).
    File(String),
    None,
}

/// The commit `command` runs, if any, and its message read as git would: `-m` (the first one
/// is the subject's paragraph), `--message`, `-F FILE` / `--file`, and the shell's forms Claude
/// Code writes: `-m "$(cat <<'EOF' … EOF)"` and `-F - <<'EOF' … EOF` (the here-document's
/// text). Any other shell expansion leaves the message unknown rather than shown as code.
pub fn commit(command: &str) -> Option<Message> {
    if !command.contains("commit") {
        return None;
    }
    let lines = heredocs(command);
    lines.iter().find_map(|(line, body)| {
        line.split([';', '|', '&'])
            .find_map(|part| commit_in(part, body.as_deref()))
    })
}

/// One simple command's commit: its message (or None when it is not `git commit`).
fn commit_in(part: &str, heredoc: Option<&str>) -> Option<Message> {
    let words = crate::transcripts::destructive::words(part);
    let at = words
        .iter()
        .position(|w| w == "git" || w.ends_with("/git"))?;
    let rest = &words[at + 1..];
    // Past git's own options (`-C DIR`, `-c KEY=VALUE` take a word).
    let mut sub = 0;
    while let Some(w) = rest.get(sub) {
        match w.as_str() {
            "-C" | "-c" => sub += 2,
            w if w.starts_with('-') => sub += 1,
            _ => break,
        }
    }
    rest.get(sub)?;
    if rest[sub] != "commit" || rest.iter().any(|w| w == "--dry-run" || w == "-h") {
        return None;
    }
    let mut args = rest[sub + 1..].iter();
    let mut message: Option<String> = None;
    let mut file: Option<String> = None;
    while let Some(w) = args.next() {
        if let Some(m) = w.strip_prefix("--message=") {
            message = Some(m.to_string());
        } else if w == "--message" {
            message = args.next().cloned();
        } else if let Some(f) = w.strip_prefix("--file=") {
            file = Some(f.to_string());
        } else if w == "--file" {
            file = args.next().cloned();
        } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.starts_with('-')) {
            // `-m MSG`, `-am MSG`, `-mMSG`; `-F FILE`, `-aF FILE`, `-FFILE`.
            let Some(i) = cluster.find(['m', 'F']) else {
                continue;
            };
            let value = match &cluster[i + 1..] {
                "" => args.next().cloned(),
                v => Some(v.to_string()),
            };
            match &cluster[i..i + 1] {
                "m" => message = value,
                _ => file = value,
            }
        } else {
            continue;
        }
        if message.is_some() || file.is_some() {
            break;
        }
    }
    Some(match (message, file) {
        (Some(m), _) => expanded(&m, heredoc),
        (None, Some(f)) if f == "-" => heredoc.map_or(Message::None, |b| Message::Text(b.into())),
        (None, Some(f)) => expanded(&f, None).file(),
        (None, None) => Message::None,
    })
}

impl Message {
    /// A `-F` argument: the file it names.
    fn file(self) -> Message {
        match self {
            Message::Text(path) => Message::File(path),
            other => other,
        }
    }
}

/// A word as the shell would have given it to git: `$(cat <<'EOF' …)` is the here-document's
/// text, `$(cat FILE)` the file's; any other expansion is unknown.
fn expanded(word: &str, heredoc: Option<&str>) -> Message {
    let w = word.trim();
    if w.contains("<<") {
        return heredoc.map_or(Message::None, |b| Message::Text(b.to_string()));
    }
    if let Some(inner) = w.strip_prefix("$(").and_then(|r| r.strip_suffix(')')) {
        let parts: Vec<&str> = inner.split_whitespace().collect();
        if let ["cat", file] = parts.as_slice() {
            if !file.contains(['$', '`', '(']) {
                return Message::File(file.trim_matches(['\'', '"']).to_string());
            }
        }
        return Message::None;
    }
    if w.contains("$(") || w.contains('`') {
        return Message::None;
    }
    Message::Text(word.to_string())
}

/// The command's lines with each here-document's text taken out and handed to the line that
/// opens it (`<<EOF`, `<<'EOF'`, `<<"EOF"`, `<<-EOF`; the text ends at its delimiter line),
/// and a quoted string that spans lines kept as one line, as the shell reads it.
fn heredocs(command: &str) -> Vec<(String, Option<String>)> {
    let all: Vec<&str> = command.lines().collect();
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    // A line whose quote is still open goes on with the next one.
    let mut open = false;
    let mut i = 0;
    while i < all.len() {
        let line = all[i];
        i += 1;
        let delimited = heredoc_delimiter(line).and_then(|d| {
            let end = all[i..].iter().position(|l| l.trim() == d)?;
            Some((i + end, all[i..i + end].join("\n")))
        });
        let body = delimited.map(|(end, body)| {
            i = end + 1;
            body
        });
        match out.last_mut() {
            Some((text, held)) if open => {
                text.push('\n');
                text.push_str(line);
                if held.is_none() {
                    *held = body;
                }
            }
            _ => out.push((line.to_string(), body)),
        }
        open = quote_open(&out.last().expect("just pushed").0);
    }
    out
}

/// Whether `text` ends inside a quoted string (`'…` or `"…`).
fn quote_open(text: &str) -> bool {
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            _ => {}
        }
    }
    quote.is_some()
}

/// The delimiter of the here-document `line` opens, if any.
fn heredoc_delimiter(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    let rest = rest.trim_start_matches(['\'', '"']);
    let delim: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!delim.is_empty()).then_some(delim)
}

/// A message's subject as `git log --format=%s` shows it: the first paragraph (leading blank
/// lines skipped), its lines joined by spaces; None when empty.
pub fn subject(message: &str) -> Option<String> {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let s = lines.join(" ");
    (!s.is_empty()).then_some(s)
}

/// `why`, with a commit message's file read (`-F FILE`): its subject, or none when the file
/// cannot be read (a temporary file already removed). `root` resolves a relative path when
/// the call gave no folder.
pub fn read_message(why: Why, root: &std::path::Path) -> Why {
    let Why::CommitFile(file, cwd) = why else {
        return why;
    };
    let path = cwd.as_deref().unwrap_or(root).join(&file);
    let text = crate::system::fsutil::read_text(&path, MAX_MESSAGE_BYTES).ok();
    Why::Commit(text.as_deref().and_then(subject))
}

/// A commit message file bigger than this is not read for its subject.
const MAX_MESSAGE_BYTES: u64 = 64 * 1024;

/// Longest request text: short enough to read at a glance.
pub const MAX_CHARS: usize = 400;

/// The instruction: what happened, what changed, the one command (or the
/// MCP tool where it is registered).
pub fn text(why: &Why, state: &State, mcp: bool) -> String {
    let clip = |s: &str, n: usize| crate::system::output::clip(s.trim(), n);
    let what = match why {
        Why::Commit(Some(m)) => format!("you committed \"{}\"", clip(m, 72)),
        Why::Commit(None) | Why::CommitFile(..) => "you committed".to_string(),
        Why::PlanItem(item) => format!("plan item \"{}\" is done", clip(item, 72)),
        Why::LongStretch(n) => format!("{n} tool calls since the last checkpoint you wrote"),
    };
    let how = match mcp {
        true => "call the ctxkeep `checkpoint` tool with phase, active_task and next_action (decisions if any)",
        false => "run `ctxkeep checkpoint --phase \"...\" --task \"...\" --next \"...\"` (`--decision` for choices made)",
    };
    let render = |files: &str| {
        format!("ctxkeep: {what}{files}. Record where the work stands in one step: {how}; then carry on.")
    };
    // The files give way, never the instruction: as many as fit are named, the rest counted.
    let mut named = state.files.len();
    loop {
        let more = state.more_files as usize + state.files.len() - named;
        let files = match (named, more) {
            (0, 0) => String::new(),
            (0, more) => format!(" ({more} files changed)"),
            (_, 0) => format!(" (changed: {})", state.files[..named].join(", ")),
            (_, more) => format!(
                " (changed: {} and {more} more)",
                state.files[..named].join(", ")
            ),
        };
        let text = render(&files);
        if text.chars().count() <= MAX_CHARS || named == 0 {
            return text;
        }
        named -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `command` commits (`git commit …`, alone or in a line): Some with its message's
    /// subject when it gives one, Some(None) without (or when only the shell could tell it).
    fn commit_message(command: &str) -> Option<Option<String>> {
        match commit(command)? {
            Message::Text(m) => Some(subject(&m)),
            _ => Some(None),
        }
    }
    use crate::agents::payload::{ToolCall, ToolFile, ToolOutcome};

    fn call(action: ToolAction, ok: bool) -> Payload {
        let root = serde_json::json!({ "hook_event_name": "PostToolUse", "session_id": "s" });
        let mut p = crate::agents::payload::from_object(root.as_object().unwrap(), |e| e).unwrap();
        p.tool = Some(ToolCall {
            name: "Bash".into(),
            id: None,
            action,
            outcome: Some(match ok {
                true => ToolOutcome::succeeded(String::new()),
                false => ToolOutcome::failed("Exit code 1"),
            }),
        });
        p
    }

    fn run(cmd: &str) -> Payload {
        call(ToolAction::Command(cmd.into()), true)
    }

    fn edit(path: &str) -> Payload {
        call(
            ToolAction::Files(vec![ToolFile {
                path: path.into(),
                content: None,
                before: None,
            }]),
            true,
        )
    }

    #[test]
    fn a_commit_is_asked_about_once_spaced_and_never_right_after_the_models_own() {
        let s = Settings::default();
        let mut st = State::default();
        let ckpt = Some("ckpt-0001");
        // Too soon after the session's first checkpoint.
        for _ in 0..s.spacing {
            assert_eq!(step(&mut st, &s, &edit("src/a.rs"), ckpt, None), None);
        }
        let why = step(
            &mut st,
            &s,
            &run("cargo fmt && git commit -qam 'Parse CRLF'"),
            ckpt,
            None,
        );
        assert_eq!(why, Some(Why::Commit(Some("Parse CRLF".into()))));
        let text = text(why.as_ref().unwrap(), &st, false);
        assert!(
            text.contains("you committed \"Parse CRLF\" (changed: src/a.rs)"),
            "{text}"
        );
        assert!(text.chars().count() <= MAX_CHARS);
        asked(&mut st);
        assert_eq!(st.asked, 1);
        // Another commit right away: not twice in a short stretch.
        assert_eq!(
            step(&mut st, &s, &run("git commit -m again"), ckpt, None),
            None
        );
        // The model wrote one: the count starts again from it.
        for _ in 0..s.spacing + 5 {
            step(&mut st, &s, &edit("b.rs"), ckpt, None);
        }
        assert_eq!(
            step(
                &mut st,
                &s,
                &run("git commit -m x"),
                Some("ckpt-0002"),
                ckpt
            ),
            None
        );
        // A failed commit is no commit.
        for _ in 0..s.spacing {
            step(&mut st, &s, &edit("b.rs"), Some("ckpt-0002"), ckpt);
        }
        let failed = call(ToolAction::Command("git commit -m x".into()), false);
        assert_eq!(step(&mut st, &s, &failed, Some("ckpt-0002"), ckpt), None);
    }

    #[test]
    fn a_long_stretch_without_a_checkpoint_is_asked_about_and_the_own_ones_do_not_count() {
        let s = Settings::default();
        let mut st = State::default();
        let mut why = None;
        for i in 1..=s.after_calls {
            // The session's own automatic checkpoints are no checkpoint of the model's.
            let own = format!("ckpt-{i:04}");
            why = step(&mut st, &s, &run("cargo test"), Some(&own), Some(&own));
            if i < s.after_calls {
                assert_eq!(why, None, "{i}");
            }
        }
        assert_eq!(why, Some(Why::LongStretch(s.after_calls)));
        let off = Settings {
            after_calls: 0,
            ..s
        };
        let mut st = State::default();
        for _ in 0..200 {
            assert_eq!(step(&mut st, &off, &run("cargo test"), None, None), None);
        }
    }

    #[test]
    fn long_file_names_give_way_and_the_instruction_is_never_cut() {
        let st = State {
            files: (0..4)
                .map(|i| format!("src/{}/mod{i}.rs", "deep/".repeat(20)))
                .collect(),
            more_files: 3,
            ..State::default()
        };
        let why = Why::PlanItem("x".repeat(200));
        for mcp in [false, true] {
            let text = text(&why, &st, mcp);
            assert!(text.chars().count() <= MAX_CHARS, "{text}");
            assert!(text.ends_with("then carry on."), "{text}");
            assert!(text.contains(" more)"), "the rest are counted: {text}");
        }
    }

    #[test]
    fn commits_are_told_from_other_git_commands() {
        // As git's subject: the first paragraph, its lines joined.
        assert_eq!(
            commit_message("git commit -m 'a\nb\n\nbody'"),
            Some(Some("a b".into()))
        );
        assert_eq!(
            commit_message("git -C x commit --amend --no-edit"),
            Some(None)
        );
        assert_eq!(commit_message("git commit -mfix"), Some(Some("fix".into())));
        assert_eq!(commit_message("git commit --dry-run"), None);
        assert_eq!(commit_message("git log --grep commit"), None);
        assert_eq!(commit_message("echo commit"), None);
    }

    /// The shapes Claude Code writes its commits in, read as git reads them.
    #[test]
    fn a_heredoc_or_a_file_message_is_read_as_git_would() {
        let heredoc = "git add src/a.rs && git commit -m \"$(cat <<'EOF'\nFix the parser's CRLF case\n\nLonger body.\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"";
        assert_eq!(
            commit_message(heredoc),
            Some(Some("Fix the parser's CRLF case".into()))
        );
        let unquoted = "git commit -m \"$(cat <<EOF\n\n  Subject one\n  continued\n\nbody\nEOF\n)\" && git push";
        assert_eq!(
            commit_message(unquoted),
            Some(Some("Subject one continued".into()))
        );
        let stdin = "git commit -F - <<'MSG'\nRead from stdin\nMSG";
        assert_eq!(commit_message(stdin), Some(Some("Read from stdin".into())));
        assert_eq!(
            commit("cd repo && git commit -F msg.txt"),
            Some(Message::File("msg.txt".into()))
        );
        assert_eq!(
            commit("git commit --file=/tmp/m"),
            Some(Message::File("/tmp/m".into()))
        );
        assert_eq!(
            commit("git commit -m \"$(cat /tmp/msg)\""),
            Some(Message::File("/tmp/msg".into()))
        );
        // Nothing of shell syntax is ever given as the message.
        for shell in [
            "git commit -m \"$(git log -1 --format=%s)\"",
            "git commit -m \"`cat x`\"",
            "git commit -m \"$(cat <<'EOF'\nno end",
        ] {
            assert_eq!(commit_message(shell), Some(None), "{shell}");
        }
    }

    #[test]
    fn changed_files_are_named_relative_to_the_project_and_outside_ones_not_at_all() {
        let rel = |p: &str, cwd: &str| {
            project_relative(std::path::Path::new(p), Some(std::path::Path::new(cwd)))
        };
        assert_eq!(
            rel("/home/u/p/src/a.rs", "/home/u/p").as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(
            rel("/home/u/p/src/a.rs", "/home/u/p/").as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(rel("/home/u/other/a.rs", "/home/u/p"), None);
        assert_eq!(rel("/home/u/pp/a.rs", "/home/u/p"), None);
        assert_eq!(
            rel("C:\\Users\\Ann\\proj\\src\\main.rs", "c:\\users\\ann\\proj").as_deref(),
            Some("src/main.rs")
        );
        assert_eq!(
            rel(
                "C:\\Users\\Ann\\AppData\\Local\\Temp\\x.txt",
                "C:\\Users\\Ann\\proj"
            ),
            None
        );
        assert_eq!(rel("./src/b.rs", "/x").as_deref(), Some("src/b.rs"));
    }
}
