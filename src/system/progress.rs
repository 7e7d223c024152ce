//! A one-line progress bar on stderr for work that takes more than a moment.
//! Hand-rolled (a carriage return and a redraw): one bar, no threads, and
//! nothing drawn unless stderr is a terminal, so a crate would add more than
//! it saves.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::system::output::{gauge, Output};

/// Nothing is drawn before this; quick work stays silent.
const DELAY: Duration = Duration::from_millis(500);
/// Redraws at most this often.
const REDRAW: Duration = Duration::from_millis(100);

pub struct Progress {
    enabled: bool,
    start: Instant,
    last_draw: Option<Instant>,
    total: u64,
    done: u64,
    label: String,
}

impl Progress {
    /// A bar for `total` bytes; drawn only on a terminal stderr, never with
    /// `--json` or `--quiet`, nor in CI.
    pub fn new(total: u64, out: &Output) -> Progress {
        let enabled = !out.json
            && !out.quiet
            && io::stderr().is_terminal()
            && std::env::var_os("CI").is_none_or(|v| v.is_empty());
        Progress {
            enabled,
            start: Instant::now(),
            last_draw: None,
            total,
            done: 0,
            label: String::new(),
        }
    }

    /// Whether the bar can be drawn at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// A file name, redacted like everything else printed.
    pub fn set_label(&mut self, label: &str) {
        self.label = crate::system::redact::redact(label).into_owned();
    }

    pub fn advance(&mut self, bytes: u64) {
        self.done = self.done.saturating_add(bytes);
        if !self.enabled || self.start.elapsed() < DELAY {
            return;
        }
        if self.last_draw.is_some_and(|t| t.elapsed() < REDRAW) {
            return;
        }
        self.last_draw = Some(Instant::now());
        let pct = if self.total == 0 {
            0.0
        } else {
            (self.done as f64 * 100.0 / self.total as f64).min(100.0)
        };
        let mut err = io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[Kcounting {} {:>3.0} % {} / {} MiB  {}",
            gauge(pct, 24),
            pct,
            self.done / (1024 * 1024),
            self.total / (1024 * 1024),
            self.label
        );
        let _ = err.flush();
    }

    /// Clears the bar if it was drawn.
    pub fn finish(&mut self) {
        if self.last_draw.take().is_some() {
            let mut err = io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
