//! Where things are printed: data on stdout, messages on stderr, exactly one
//! JSON document with `--json`, nothing but errors with `--quiet`. Everything
//! printed here is redacted (RELIABILITY.md §4): an agent reads it all, and
//! it echoes user input, git data and file text.

use std::io::{self, IsTerminal, Write};

use serde::Serialize;

use crate::redact::redact;

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
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes())?;
        if !text.ends_with('\n') && !text.is_empty() {
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    /// The one JSON document (only in JSON mode).
    pub fn json<T: Serialize>(&self, value: &T) -> io::Result<()> {
        if !self.json {
            return Ok(());
        }
        let mut doc = serde_json::to_value(value).map_err(io::Error::other)?;
        crate::redact::redact_json(&mut doc);
        let mut out = io::stdout().lock();
        serde_json::to_writer(&mut out, &doc).map_err(io::Error::other)?;
        out.write_all(b"\n")?;
        out.flush()
    }

    /// A progress or result message for people, on stderr.
    pub fn info(&self, msg: &str) {
        if !self.quiet {
            eprintln!("{}", redact(msg));
        }
    }

    pub fn warn(&self, msg: &str) {
        if !self.quiet {
            let msg = redact(msg);
            eprintln!("{}", paint_stderr(Style::Warn, &format!("warning: {msg}")));
        }
    }
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
