//! Paths as the record shows them: relative to the repository when inside it, normalised
//! without asking the file system, Windows sessions' paths read on any system.

use std::path::{Component, Path, PathBuf};

/// The repository root, as given and as resolved (a temp dir may sit behind a symlink).
pub(crate) struct Root {
    given: Option<PathBuf>,
    canonical: Option<PathBuf>,
}

impl Root {
    pub(crate) fn new(root: Option<&Path>) -> Root {
        let given = root.map(normalize);
        let canonical = root
            .and_then(|r| std::fs::canonicalize(r).ok())
            .filter(|c| Some(c) != given.as_ref());
        Root { given, canonical }
    }

    /// `raw` as shown: relative to the root when inside it, else absolute when it can be made
    /// so (from `cwd`), else as written.
    pub(crate) fn display(&self, raw: &str, cwd: Option<&str>) -> Option<String> {
        let raw = raw.trim();
        if raw.is_empty() {
            return None;
        }
        if is_windows_absolute(raw) || cwd.is_some_and(is_windows_absolute) {
            let roots: Vec<String> = [&self.given, &self.canonical]
                .into_iter()
                .flatten()
                .map(|r| r.to_string_lossy().into_owned())
                .collect();
            return Some(windows_display(raw, cwd, &roots));
        }
        let p = Path::new(raw);
        let abs = if p.is_absolute() {
            normalize(p)
        } else if let Some(cwd) = cwd.filter(|c| Path::new(c).is_absolute()) {
            normalize(&Path::new(cwd).join(p))
        } else {
            let n = normalize(p);
            return Some(if n.as_os_str().is_empty() {
                ".".into()
            } else {
                n.to_string_lossy().into_owned()
            });
        };
        for root in [&self.given, &self.canonical].into_iter().flatten() {
            if let Ok(rel) = abs.strip_prefix(root) {
                if rel.as_os_str().is_empty() {
                    return Some(".".into());
                }
                return Some(rel.to_string_lossy().into_owned());
            }
        }
        // The session ran in a folder that is not this project's (the project moved, or its
        // transcript came from another machine): paths under that folder are the project's.
        if let Some(cwd) = cwd.map(|c| normalize(Path::new(c))) {
            let project_inside = [&self.given, &self.canonical]
                .into_iter()
                .flatten()
                .any(|r| r.starts_with(&cwd));
            if !project_inside {
                if let Ok(rel) = abs.strip_prefix(&cwd) {
                    if !rel.as_os_str().is_empty() {
                        return Some(rel.to_string_lossy().into_owned());
                    }
                }
            }
        }
        Some(abs.to_string_lossy().into_owned())
    }
}

/// `C:\x`, `C:/x` or `\\server\share`: a Windows path, whatever system reads it.
fn is_windows_absolute(p: &str) -> bool {
    let b = p.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/'))
        || p.starts_with("\\\\")
}

/// A path from a Windows session, with `/` for backslashes: relative to the project's root,
/// else to the session's folder, when inside it (compared without case, as Windows does),
/// else absolute as written.
fn windows_display(raw: &str, cwd: Option<&str>, roots: &[String]) -> String {
    let slashes = |s: &str| s.replace('\\', "/").trim_end_matches('/').to_string();
    let path = slashes(raw);
    let path = if is_windows_absolute(raw) {
        path
    } else {
        match cwd {
            Some(c) => format!("{}/{}", slashes(c), path.trim_start_matches("./")),
            None => return path,
        }
    };
    let bases = roots
        .iter()
        .map(String::as_str)
        .chain(cwd)
        .filter(|c| is_windows_absolute(c))
        .map(slashes);
    for base in bases {
        let prefix = format!("{}/", base.to_lowercase());
        if path.to_lowercase().starts_with(&prefix) {
            return path[prefix.len()..].to_string();
        }
    }
    path
}

/// Removes `.` and resolves `..` without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
