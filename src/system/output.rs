//! Where things are printed: data on stdout, messages on stderr, exactly one
//! JSON document with `--json`, nothing but errors with `--quiet`. Everything
//! printed here is redacted (docs/reliability.md, "Secrets"): an agent reads it all, and
//! it echoes user input, git data and file text. Control characters are
//! written out (`\u001B`), ctxkeep's own colours aside: recorded text
//! never drives the terminal.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::system::redact::redact;

#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub json: bool,
    pub quiet: bool,
}

impl Output {
    /// Nothing but errors: what hooks and tests use, so that lower layers'
    /// notices never reach an agent as if they were failures.
    pub const SILENT: Output = Output {
        json: false,
        quiet: true,
    };

    /// Data for people (a prompt, an id, a report); skipped in JSON mode.
    pub fn data(&self, text: &str) -> io::Result<()> {
        if self.json {
            return Ok(());
        }
        let text = redact(text);
        let text = crate::system::recorded::escape_controls_keep_colours(&text);
        let text = for_terminal(&text);
        let mut out = io::stdout().lock();
        let written = out.write_all(text.as_bytes()).and_then(|()| {
            if !text.ends_with('\n') && !text.is_empty() {
                out.write_all(b"\n")?;
            }
            out.flush()
        });
        written.map_err(on_stdout)
    }

    /// The one JSON document (only in JSON mode).
    pub fn json<T: Serialize>(&self, value: &T) -> io::Result<()> {
        if !self.json {
            return Ok(());
        }
        let mut doc = serde_json::to_value(value).map_err(io::Error::other)?;
        crate::system::redact::redact_json(&mut doc);
        let mut out = io::stdout().lock();
        let written = serde_json::to_writer(&mut out, &doc)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        written.map_err(on_stdout)
    }

    /// A progress or result message for people, on stderr.
    pub fn info(&self, msg: &str) {
        if !self.quiet {
            let msg = redact(msg);
            stderr_line(&for_terminal(&crate::system::recorded::escape_controls(
                &msg,
            )));
        }
    }

    pub fn warn(&self, msg: &str) {
        if !self.quiet {
            let msg = redact(msg);
            let msg = crate::system::recorded::escape_controls(&msg);
            let msg = for_terminal(&msg);
            stderr_line(&paint_stderr(Style::Warn, &format!("warning: {msg}")));
        }
    }
}

/// A failed write to stdout, saying so (the kind kept: a closed pipe is not an error).
fn on_stdout(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write to standard output: {e}"))
}

/// One line on stderr. A stderr that cannot be written (a full disk, a pipe the agent closed) loses
/// the line; `eprintln!` would panic instead and turn a clean exit code into 101.
pub fn stderr_line(line: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

static ASCII: AtomicBool = AtomicBool::new(false);

/// Print only ASCII from now on (`--ascii`, or a locale that is not UTF-8).
pub fn set_ascii(on: bool) {
    ASCII.store(on, Ordering::Relaxed);
}

/// Whether output is ASCII only (see [`set_ascii`]).
pub fn ascii() -> bool {
    ASCII.load(Ordering::Relaxed)
}

/// Whether the locale says the terminal cannot show UTF-8: the first of
/// LC_ALL, LC_CTYPE and LANG that is set decides (`C`, `POSIX` or a legacy
/// charset mean no). With none set, UTF-8 is assumed, as terminals and CI
/// logs nearly always show it.
pub fn locale_is_ascii() -> bool {
    let Some(locale) = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|v| !v.is_empty()))
    else {
        return false;
    };
    let upper = locale.to_ascii_uppercase();
    !(upper.contains("UTF-8") || upper.contains("UTF8"))
}

/// `text` as this terminal can show it: with `--ascii` (or a non-UTF-8
/// locale), ctxkeep's own typographic characters become ASCII look-alikes.
/// Other characters (the user's own text) are left as they are.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !ASCII.load(Ordering::Relaxed) || text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '·' | '│' => out.push('|'),
            '…' => out.push_str("..."),
            '–' | '−' | '‐' | '─' => out.push('-'),
            '—' => out.push_str("--"),
            '“' | '”' | '„' => out.push('"'),
            '‘' | '’' => out.push('\''),
            '→' => out.push_str("->"),
            '←' => out.push_str("<-"),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '×' => out.push('x'),
            '•' => out.push('*'),
            '█' | '▓' | '▒' => out.push('#'),
            '░' => out.push('-'),
            '✓' => out.push_str("ok"),
            '✗' => out.push('x'),
            '\u{a0}' => out.push(' '),
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

#[derive(Debug, Clone, Copy)]
pub enum Style {
    Error,
    Warn,
    Ok,
    Dim,
}

/// Colour only on a terminal, with NO_COLOR unset and TERM not dumb.
pub fn color_enabled(stream_is_tty: bool) -> bool {
    stream_is_tty
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map(|t| t != "dumb").unwrap_or(true)
}

pub fn paint(style: Style, text: &str, enabled: bool) -> String {
    if !enabled {
        return text.to_string();
    }
    let code = match style {
        Style::Error => "1;31",
        Style::Warn => "33",
        Style::Ok => "32",
        Style::Dim => "2",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

pub fn paint_stdout(style: Style, text: &str) -> String {
    paint(style, text, color_enabled(io::stdout().is_terminal()))
}

pub fn paint_stderr(style: Style, text: &str) -> String {
    paint(style, text, color_enabled(io::stderr().is_terminal()))
}

/// 80 -> "80", 82.5 -> "82.5".
pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{}", (x * 10.0).round() / 10.0)
    }
}

/// 12345 -> "12,345".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A text gauge: `[########------------]`.
pub fn gauge(percent: f64, width: usize) -> String {
    let filled = ((percent.clamp(0.0, 100.0) / 100.0) * width as f64).round() as usize;
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

/// At most `max` characters of `text`, with `…` when cut (for echoing input
/// back in a one-line message).
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Cuts `text` to at most `max` characters, saying so at its end (an agent's
/// limit on injected text); true when it was cut.
pub fn cut_to_chars(text: &mut String, max: usize) -> bool {
    const MORE: &str = "\n[cut to fit; run `ctxkeep resume` for the rest]\n";
    if text.chars().count() <= max {
        return false;
    }
    let keep = max.saturating_sub(MORE.chars().count());
    let at = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    text.truncate(at);
    text.push_str(MORE);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_mode_replaces_only_our_typography() {
        set_ascii(true);
        let shown = for_terminal("12,345 tokens · 6 % · cut… lines 2–6 — Überprüfe");
        set_ascii(false);
        assert_eq!(shown, "12,345 tokens | 6 % | cut... lines 2-6 -- Überprüfe");
        assert_eq!(for_terminal("a · b"), "a · b", "off by default");
    }

    #[test]
    fn cutting_keeps_the_limit_and_says_so() {
        let mut short = "abc".to_string();
        assert!(!cut_to_chars(&mut short, 10));
        assert_eq!(short, "abc");
        let mut long = "é".repeat(200);
        assert!(cut_to_chars(&mut long, 100));
        assert_eq!(long.chars().count(), 100);
        assert!(long.ends_with("for the rest]\n"));
    }
}
