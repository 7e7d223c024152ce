//! Typed errors that pick an exit code. Everything else travels as `anyhow`
//! with path-bearing context; `exit_code_of` finds the first typed error in
//! the chain.

use std::io;
use std::path::{Path, PathBuf};

/// The exit codes live in the registry (`codes`), with their meanings.
pub use crate::system::codes::exit;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad command-line usage that clap cannot catch (e.g. conflicting sources).
    #[error("{0}")]
    Usage(String),
    /// The file exists but its content is unusable.
    #[error("{}: {msg}", path.display())]
    Data { path: PathBuf, msg: String },
    /// Not initialized, or a named input does not exist.
    #[error("{}: {msg}", path.display())]
    NoInput { path: PathBuf, msg: String },
    /// A named input file is not there (or is a symlink to nothing).
    #[error("{}: {}", path.display(), match dangling_to {
        Some(to) => format!("a symlink to {}, which does not exist", to.display()),
        None => "no such file".to_string(),
    })]
    NotFound {
        path: PathBuf,
        dangling_to: Option<PathBuf>,
    },
    /// No project here: no state file, or one without ctxkeep's front matter.
    #[error("{}: {why}; run `ctxkeep init`, or name another state file with --state PATH", path.display())]
    NotInitialized { path: PathBuf, why: &'static str },
    /// A file over the size ctxkeep reads.
    #[error("{}: {what}too large ({}, limit {limit}){hint}", path.display(), match size {
        Some(n) => format!("{n} bytes"),
        None => format!("over {limit} bytes"),
    })]
    TooLarge {
        path: PathBuf,
        /// What part is too large, with a trailing space ("front matter "), or "".
        what: &'static str,
        size: Option<u64>,
        limit: u64,
        /// What to do about it, with a leading "; ", or "".
        hint: std::borrow::Cow<'static, str>,
    },
    /// An I/O failure on a named file; the exit code follows the error kind.
    #[error("{}", io_message(path, what, source))]
    Io {
        path: PathBuf,
        what: String,
        #[source]
        source: io::Error,
    },
    /// Another ctxkeep process held the lock past the timeout.
    #[error("{}: lock held by {holder}; gave up after {waited_ms} ms (--lock-timeout); retry later, or stop that process", path.display())]
    LockTimeout {
        path: PathBuf,
        holder: String,
        waited_ms: u64,
    },
    /// Someone else changed the file while we worked; nothing was written.
    #[error("{}: {msg}", path.display())]
    Conflict { path: PathBuf, msg: String },
    /// git's conflict markers in the state file: a merge left half done.
    #[error("unresolved merge conflict in {} {lines}; run `ctxkeep resolve`", path.display())]
    Conflicted { path: PathBuf, lines: String },
    /// A refusal to act (exit 1): resuming a chain stuck past its limit, a
    /// wrong nonce, recovered fields over an explicit budget. Unlike a
    /// command's "no" (`Outcome::No`), there is no report to print.
    #[error("{0}")]
    Refused(String),
}

impl Error {
    pub fn data(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::Data {
            path: path.as_ref().to_path_buf(),
            msg: msg.into(),
        }
    }

    pub fn no_input(path: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::NoInput {
            path: path.as_ref().to_path_buf(),
            msg: msg.into(),
        }
    }

    pub fn io(path: impl AsRef<Path>, what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            what: what.into(),
            source,
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => exit::USAGE,
            Error::Data { .. } => exit::DATA,
            Error::NoInput { .. } | Error::NotFound { .. } | Error::NotInitialized { .. } => {
                exit::NO_INPUT
            }
            Error::TooLarge { .. } | Error::Conflicted { .. } => exit::DATA,
            Error::Io { source, .. } => io_exit_code(source),
            Error::LockTimeout { .. } | Error::Conflict { .. } => exit::TEMPFAIL,
            Error::Refused(_) => exit::CHECK_FAILED,
        }
    }

    /// A stable machine name for `--json` error documents.
    pub fn code_name(&self) -> &'static str {
        match self {
            Error::Usage(_) => "usage",
            Error::Data { .. } => "bad_data",
            Error::NoInput { .. } | Error::NotFound { .. } | Error::NotInitialized { .. } => {
                "no_input"
            }
            Error::TooLarge { .. } => "bad_data",
            Error::Conflicted { .. } => "merge_conflict",
            Error::Io { source, .. } => match io_exit_code(source) {
                exit::NO_PERM => "permission_denied",
                exit::NO_INPUT => "no_input",
                _ => "io_error",
            },
            Error::LockTimeout { .. } => "lock_timeout",
            Error::Conflict { .. } => "conflict",
            Error::Refused(_) => "check_failed",
        }
    }
}

/// An I/O error as a short lower-case phrase, without the temp-file path
/// tempfile appends (the message already names the real file).
pub fn describe_io(e: &io::Error) -> String {
    let text = e.to_string();
    let text = text.split(" at path ").next().unwrap_or_default();
    let text = text.split(" (os error ").next().unwrap_or_default();
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => "unknown error".into(),
    }
}

/// "path: what (why)", leaving out the why when `what` already says it.
fn io_message(path: &Path, what: &str, source: &io::Error) -> String {
    let why = describe_io(source);
    if what.to_lowercase().contains(&why) {
        format!("{}: {what}", path.display())
    } else {
        format!("{}: {what} ({why})", path.display())
    }
}

/// The message for the user: the context chain down to the first typed
/// error, whose text already says everything its sources would repeat.
pub fn one_line_message(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        parts.push(cause.to_string());
        if cause.downcast_ref::<Error>().is_some() {
            break;
        }
    }
    parts.join(": ").replace(['\n', '\r'], " ")
}

/// What the user is told of `err`: the one-line message, secrets redacted,
/// and the `--json` error document (`{"ok": false, "error": {code, message,
/// exit_code}}`). The CLI prints them; the MCP server returns them.
pub fn report(err: &anyhow::Error) -> (String, serde_json::Value) {
    let code = exit_code_of(err);
    let line = one_line_message(err);
    let msg = crate::system::redact::redact(&line);
    let msg = crate::system::recorded::escape_controls(&msg).into_owned();
    let doc = serde_json::json!({
        "ok": false,
        "error": { "code": code_name_of(err), "message": msg, "exit_code": code },
    });
    (msg, doc)
}

pub fn io_exit_code(e: &io::Error) -> u8 {
    match e.kind() {
        io::ErrorKind::PermissionDenied => exit::NO_PERM,
        io::ErrorKind::NotFound => exit::NO_INPUT,
        _ => exit::IO,
    }
}

/// The exit code for any error: the first typed error in the chain decides;
/// a bare `io::Error` maps by kind; anything else is an I/O-class failure.
pub fn exit_code_of(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<Error>() {
            return e.exit_code();
        }
    }
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<io::Error>() {
            return io_exit_code(e);
        }
    }
    exit::IO
}

pub fn code_name_of(err: &anyhow::Error) -> &'static str {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<Error>() {
            return e.code_name();
        }
    }
    match exit_code_of(err) {
        exit::NO_PERM => "permission_denied",
        exit::NO_INPUT => "no_input",
        _ => "io_error",
    }
}

/// True when the error is a closed stdout (`| head`), which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
