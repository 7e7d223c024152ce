//! `ctxkeep statusline`: Claude Code's status line. Reads its JSON on stdin,
//! records the session's token count and its exact window (later hooks use it),
//! and prints one line. It records only: stages fire from the next hook,
//! whose output reaches the model (the status line's reaches only people).

use serde::Serialize;

use std::io::Read;

use super::{Ctx, Outcome};
use crate::cli::StatuslineArgs;
use crate::context::compaction::StagesAgainst;
use crate::context::stages::Stage;
use crate::domain::checkpoint::CheckpointRef;
use crate::domain::config::Config;
use crate::domain::session::{self, DEFAULT_SESSION};
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::pipeline::tracking::{self, Options, Reading};
use crate::system::output::{fmt_num, paint, Output, Style};

/// What `statusline --json` prints.
#[derive(Debug, Serialize)]
struct View {
    session: String,
    tokens: Option<u64>,
    window: u64,
    percent: Option<f64>,
    /// Tokens at which the agent compacts on its own (src/compaction.rs).
    limit: u64,
    limit_percent: Option<f64>,
    limit_source: String,
    /// The highest stage reached, by name.
    stage: Option<String>,
    handoff_due: bool,
    last_checkpoint: Option<CheckpointRef>,
    /// The line printed without `--json`.
    line: String,
    #[serde(skip)]
    parts: Parts,
}

impl View {
    /// The line in `room` columns, coloured where the terminal takes colour.
    fn painted(&self, room: usize) -> String {
        match self.line.is_empty() {
            true => String::new(),
            false => self.parts.render(room, colour()),
        }
    }
}

/// Colour unless `NO_COLOR` is set or the terminal is dumb. Claude Code draws the status
/// line's ANSI colours though its stdout is a pipe, so a pipe is no reason to go plain.
fn colour() -> bool {
    crate::system::output::color_enabled(true)
}

pub fn run(args: StatuslineArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    // Read whole first: the user's own status line (`--with`) gets the same input.
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut input);
    let theirs = args.with.as_deref().map(|cmd| run_theirs(cmd, &input));
    let ours = match read {
        Ok(_) => view(ctx, &input),
        Err(e) => Err(crate::system::error::Error::io(
            std::path::Path::new("<stdin>"),
            "cannot read status-line input",
            e,
        )
        .into()),
    };
    match ours {
        Ok(v) => {
            ctx.out.json(&v)?;
            if !ctx.out.json {
                print_line(theirs.as_deref(), |room| v.painted(room))?;
            }
            Ok(Outcome::Ok)
        }
        Err(err) if ctx.out.json => Err(err),
        Err(err) => {
            // A status line is read by people: one short line, never an empty bar or a failed
            // command. A project without ctxkeep's file is not an error to shout about.
            let short = match not_set_up(&err) {
                true => NOT_SET_UP.to_string(),
                false => {
                    let msg = crate::system::redact::redact(&format!("{err:#}")).replace('\n', " ");
                    crate::system::output::clip(&format!("ctxkeep: {msg}"), 100)
                }
            };
            match theirs.as_deref() {
                // Their line alone: ctxkeep has nothing to add where it is not set up.
                Some(t) if !t.is_empty() && not_set_up(&err) => {
                    print_line(Some(t), |_| String::new())?
                }
                _ => print_line(theirs.as_deref(), |_| short.clone())?,
            }
            Ok(Outcome::Ok)
        }
    }
}

/// Read at most this much (the payload's own reader refuses more; real ones are a few KiB).
const MAX_INPUT_BYTES: u64 = 1024 * 1024;

/// What the line says in a project without `project-state.md`.
const NOT_SET_UP: &str = "ctxkeep off (no project-state.md)";

/// Whether the error is only that this project has no ctxkeep state file.
fn not_set_up(err: &anyhow::Error) -> bool {
    matches!(
        err.downcast_ref::<crate::system::error::Error>(),
        Some(crate::system::error::Error::NotInitialized { .. })
    )
}

/// Prints the user's line (when there is one) with ctxkeep's part after it on its last line;
/// `ours(room)` draws ctxkeep's part in `room` columns.
fn print_line(theirs: Option<&str>, ours: impl Fn(usize) -> String) -> anyhow::Result<()> {
    use std::io::Write;
    let total = width();
    let text = match theirs.map(|t| t.trim_end_matches(['\n', '\r'])) {
        Some(t) if !t.is_empty() => {
            let last = t.rsplit('\n').next().unwrap_or(t);
            let room = total.saturating_sub(visible_width(last) + SEPARATOR.chars().count());
            let part = ours(room.max(20));
            if part.is_empty() {
                t.to_string()
            } else {
                format!("{t}{SEPARATOR}{part}")
            }
        }
        _ => ours(total),
    };
    if text.is_empty() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    // A closed pipe (Claude Code moved on) is no error worth a word.
    let _ = writeln!(out, "{text}");
    Ok(())
}

/// Between the user's line and ctxkeep's part.
const SEPARATOR: &str = " │ ";

/// Columns a line takes on screen: ANSI colour sequences take none.
fn visible_width(text: &str) -> usize {
    let mut n = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ ... final byte in @..~
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        n += 1;
    }
    n
}

/// Runs the user's own status-line command with the same input; what it printed (nothing
/// when it cannot run: their line is theirs to fix, ctxkeep's still shows).
fn run_theirs(command: &str, input: &[u8]) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return String::new();
    };
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        // Written from a thread: a command that prints before it reads cannot block us.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    child
        .wait_with_output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn view(ctx: &Ctx, input: &[u8]) -> anyhow::Result<View> {
    let (agent, sl) = crate::agents::read_status_line(&mut &input[..])?;
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let sf = StateFile::load_kept(&ws.state_path, &ws.data_dir)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);
    let id = session::validate_id(sl.session_id.as_deref().unwrap_or(DEFAULT_SESSION))?;

    // Old payloads (no `current_usage`) and the moments it is null: the
    // transcript says what it can. A transcript that cannot be read leaves
    // the token count unknown; the bar must still be drawn.
    let tokens = sl.tokens.or_else(|| {
        let path = sl.transcript_path.clone().filter(|p| p.is_file())?;
        let view = crate::pipeline::read::TranscriptView::new(Some(path), agent);
        view.usage()?.ok()?.tokens
    });
    let applied = tracking::apply(
        &ws,
        &sf,
        &config,
        &id,
        Reading::StatusLine {
            agent,
            tokens,
            window: sl.window,
            model: sl.model.clone(),
            transcript: sl.transcript_path.map(|p| p.display().to_string()),
        },
        Options {
            record_only: true,
            ..Options::default()
        },
        &Output {
            json: false,
            quiet: true,
        },
    )?;
    let s = applied.session;
    let stage_reached =
        crate::context::stages::reached(&config.stages, s.stage_percent(config.stages_against));
    let stage = stage_reached.map(Stage::name);
    let last_checkpoint = sf.fm.checkpoint.as_ref().map(CheckpointRef::of);

    let checkpoint = match &last_checkpoint {
        Some(c) => match crate::system::clock::age(&c.created_at) {
            Some(age) => format!("{} {age} ago", c.id),
            None => c.id.clone(),
        },
        None => "no checkpoint".into(),
    };
    let parts = Parts::of(&s, config.stages_against, stage_reached, &checkpoint);
    let line = match config.status_line {
        true => parts.render(width(), false),
        // `status_line: false`: the reading is recorded, nothing of ctxkeep's is shown.
        false => String::new(),
    };
    Ok(View {
        session: s.id().to_string(),
        tokens: s.tokens(),
        window: s.window(),
        percent: s.percent(),
        limit: s.limit(),
        limit_percent: s.stage_percent(crate::context::compaction::StagesAgainst::Limit),
        limit_source: s.limit_source().to_string(),
        stage,
        handoff_due: s.handoff_due(),
        last_checkpoint,
        line,
        parts,
    })
}

/// The terminal's width (`COLUMNS`), else 80.
fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c >= 20)
        .unwrap_or(80)
}

/// The pieces of the line, drawn to a width by [`Parts::render`].
#[derive(Debug, Default)]
struct Parts {
    /// The one figure and its meaning ("68 % to compaction"), or a word when there is no
    /// figure yet ("ready", "compacted").
    lead: String,
    /// How urgent the figure is: the colour it is drawn in.
    level: Option<Style>,
    bar: Option<String>,
    /// "113k/167k": the tokens behind the figure.
    count: Option<String>,
    /// The stage reached, or "handoff due".
    status: Option<String>,
    turns: Option<String>,
    checkpoint: String,
}

impl Parts {
    /// The share the stages use (of the point where the agent compacts, by default), named
    /// as such and rounded down to a whole percent (so it reads the same from one reading
    /// to the next and never says 100 % before it is); the stage or "handoff due"; the
    /// tokens; the checkpoint's age. Before the first reading it says "ready", right after a
    /// compaction "compacted": nothing there is a problem.
    fn of(
        s: &session::Session,
        against: StagesAgainst,
        stage: Option<&Stage>,
        checkpoint: &str,
    ) -> Parts {
        let share = s.stage_percent(against);
        let of = match against {
            StagesAgainst::Limit => s.limit(),
            StagesAgainst::Window => s.window(),
        };
        let meaning = match against {
            StagesAgainst::Limit => "to compaction",
            StagesAgainst::Window => "of the window",
        };
        let (lead, level) = match (s.tokens(), share) {
            (None, _) if s.compacted_at().is_some() => ("compacted".to_string(), None),
            (Some(_), Some(p)) => {
                let level = match (s.handoff_due(), stage.map(|st| st.action)) {
                    (true, _) => Style::Error,
                    (false, None) => Style::Ok,
                    (false, Some(crate::context::stages::StageAction::Warn)) => Style::Warn,
                    (false, Some(_)) => Style::Error,
                };
                (
                    format!("{} % {meaning}", p.max(0.0).floor() as u64),
                    Some(level),
                )
            }
            _ => ("ready".to_string(), None),
        };
        let status = match (s.handoff_due(), stage) {
            (true, _) => Some("handoff due".to_string()),
            (false, Some(st)) => Some(st.name()),
            _ => None,
        };
        Parts {
            lead,
            level,
            bar: s.tokens().and(share).map(|p| bar(p, 10)),
            count: s.tokens().map(|t| format!("{}/{}", short(t), short(of))),
            status,
            turns: s
                .forecast()
                .map(|f| format!("~{} turns left", f.turns_left)),
            checkpoint: checkpoint.to_string(),
        }
    }

    /// What matters first, detail only where `width` allows: the bar, then the token count,
    /// then the turns left go first when the line is too long.
    fn render(&self, width: usize, colour: bool) -> String {
        let build = |bar: bool, count: bool, turns: bool, colour: bool| {
            let lead = match (self.level, colour) {
                (Some(style), true) => paint(style, &self.lead, true),
                _ => self.lead.clone(),
            };
            let mut head = "ctxkeep".to_string();
            if let Some(b) = self.bar.as_ref().filter(|_| bar) {
                head.push(' ');
                head.push_str(b);
            }
            head.push(' ');
            head.push_str(&lead);
            let mut parts = vec![head];
            parts.extend(self.count.clone().filter(|_| count));
            parts.extend(self.status.clone());
            parts.extend(self.turns.clone().filter(|_| turns));
            parts.push(self.checkpoint.clone());
            parts.join(" · ")
        };
        let fits = [
            (true, true, true),
            (false, true, true),
            (false, false, true),
            (false, false, false),
        ]
        .into_iter()
        .find(|&(b, c, t)| build(b, c, t, false).chars().count() <= width)
        .unwrap_or((false, false, false));
        build(fits.0, fits.1, fits.2, colour)
    }
}

/// A gauge of `percent` in `width` cells: `▰▰▰▱▱`, shapes that read without colour.
fn bar(percent: f64, width: usize) -> String {
    let filled = ((percent.clamp(0.0, 100.0) / 100.0) * width as f64).floor() as usize;
    format!("{}{}", "▰".repeat(filled), "▱".repeat(width - filled))
}

/// 84500 -> "84.5k", 1000000 -> "1M": a status line is narrow.
fn short(n: u64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{}M", fmt_num(n as f64 / 1_000_000.0)),
        n if n >= 1_000 => format!("{}k", fmt_num(n as f64 / 1_000.0)),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(short(999), "999");
        assert_eq!(short(15_500), "15.5k");
        assert_eq!(short(200_000), "200k");
        assert_eq!(short(1_000_000), "1M");
        assert_eq!(short(1_048_576), "1M");
    }
}
