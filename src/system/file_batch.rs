//! Several files changed all or nothing: each is written atomically in turn,
//! and when one fails, those already written are put back as they were read
//! (a file that was created is removed again, with the folders made for it)
//! before the error is returned. `hooks install` and `uninstall` change an
//! agent's settings and its MCP configuration this way.
//!
//! Every file is read and every new text made before the first write; what
//! is left to fail here is the file system (permissions, a full disk) or
//! another program changing a file meanwhile (each write checks that the
//! file still holds what was read).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::system::error::Error;
use crate::system::fsutil;

/// One file's change.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub path: PathBuf,
    /// What the file held when it was read (None: there was no file).
    pub before: Option<Vec<u8>>,
    /// What it is to hold (None: the file is removed).
    pub after: Option<Vec<u8>>,
}

/// Applies `changes` in order; on a failure, undoes the ones done and
/// returns the failure, saying what was put back (or could not be).
pub fn apply(changes: &[FileChange]) -> anyhow::Result<()> {
    let mut done: Vec<(&FileChange, Vec<PathBuf>)> = Vec::new();
    for change in changes {
        match apply_one(change) {
            Ok(made) => done.push((change, made)),
            Err(err) => {
                if done.is_empty() {
                    return Err(err.into());
                }
                let mut put_back = Vec::new();
                let mut left = Vec::new();
                for (change, made) in done.iter().rev() {
                    match undo(change, made) {
                        Ok(()) => put_back.push(change.path.display().to_string()),
                        Err(e) => left.push(format!(
                            "{} keeps the new text, putting it back failed: {e}",
                            change.path.display()
                        )),
                    }
                }
                let note = if left.is_empty() {
                    format!("nothing was changed (put back {})", put_back.join(", "))
                } else {
                    left.join("; ")
                };
                return Err(anyhow::Error::from(err)).context(note);
            }
        }
    }
    Ok(())
}

/// Writes (or removes) one file; returns the folders it had to create,
/// the outermost first.
fn apply_one(change: &FileChange) -> Result<Vec<PathBuf>, Error> {
    let path = &change.path;
    match (&change.before, &change.after) {
        (_, None) => {
            expect_holds(path, change.before.as_deref())?;
            remove(path)?;
            Ok(Vec::new())
        }
        (Some(before), Some(after)) => {
            fsutil::atomic_write(path, after, Some(before))?;
            Ok(Vec::new())
        }
        (None, Some(after)) => {
            let made = missing_dirs(path);
            if let Some(dir) = made.last() {
                fsutil::ensure_dir(dir)?;
            }
            match fsutil::create_new(path, after) {
                Ok(true) => Ok(made),
                Ok(false) => {
                    remove_dirs(&made);
                    Err(Error::Conflict {
                        path: path.clone(),
                        msg: "created by another program meanwhile; nothing was written, run the command again".into(),
                    })
                }
                Err(e) => {
                    remove_dirs(&made);
                    Err(e)
                }
            }
        }
    }
}

/// Puts one applied change back: the old text, no file, or the file again.
fn undo(change: &FileChange, made: &[PathBuf]) -> Result<(), Error> {
    let path = &change.path;
    match (&change.before, &change.after) {
        (Some(before), Some(after)) => fsutil::atomic_write(path, before, Some(after)),
        (None, Some(_)) => {
            expect_holds(path, change.after.as_deref())?;
            remove(path)?;
            remove_dirs(made);
            Ok(())
        }
        (Some(before), None) => match fsutil::create_new(path, before)? {
            true => Ok(()),
            false => Err(Error::Conflict {
                path: path.clone(),
                msg: "created by another program meanwhile".into(),
            }),
        },
        (None, None) => Ok(()),
    }
}

/// Refuses when the file no longer holds `expected` (None: no file).
fn expect_holds(path: &Path, expected: Option<&[u8]>) -> Result<(), Error> {
    let now = match fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, "cannot read", e)),
    };
    if now.as_deref() != expected {
        return Err(Error::Conflict {
            path: path.to_path_buf(),
            msg: "changed by another program meanwhile; nothing was written, run the command again"
                .into(),
        });
    }
    Ok(())
}

fn remove(path: &Path) -> Result<(), Error> {
    fs::remove_file(path).map_err(|e| {
        let what = match (e.kind(), path.parent()) {
            (io::ErrorKind::PermissionDenied, Some(dir)) => {
                format!("cannot remove it; need write access to {}", dir.display())
            }
            _ => "cannot remove it".to_string(),
        };
        Error::io(path, what, e)
    })
}

/// The folders above `path` that do not exist yet, the outermost first.
fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .filter(|d| !d.as_os_str().is_empty())
        .take_while(|d| fs::symlink_metadata(d).is_err())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// Removes folders made for a file, the innermost first, while they are
/// empty.
fn remove_dirs(made: &[PathBuf]) {
    for dir in made.iter().rev() {
        if fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: PathBuf, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path,
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
        }
    }

    #[test]
    fn every_change_is_made_when_none_fails() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let gone = dir.path().join("gone.json");
        fs::write(&a, "old").unwrap();
        fs::write(&gone, "{}\n").unwrap();
        let new = dir.path().join("sub/deeper/new.json");
        apply(&[
            change(a.clone(), Some("old"), Some("new")),
            change(new.clone(), None, Some("made")),
            change(gone.clone(), Some("{}\n"), None),
        ])
        .unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "new");
        assert_eq!(fs::read_to_string(&new).unwrap(), "made");
        assert!(!gone.exists());
    }

    #[test]
    fn a_failure_mid_way_puts_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        let gone = dir.path().join("gone.json");
        fs::write(&a, "old a").unwrap();
        fs::write(&gone, "old gone").unwrap();
        // A file where a folder should be: fails for root too.
        fs::write(dir.path().join("blocker"), "").unwrap();
        let blocked = dir.path().join("blocker/c.json");
        let names = || {
            let mut n: Vec<_> = fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            n.sort();
            n
        };
        let before = names();
        let err = apply(&[
            change(a.clone(), Some("old a"), Some("new a")),
            change(b.clone(), None, Some("new b")),
            change(dir.path().join("made/x.json"), None, Some("x")),
            change(gone.clone(), Some("old gone"), None),
            change(blocked, None, Some("never")),
        ])
        .unwrap_err();
        let msg = crate::system::error::one_line_message(&err);
        assert!(msg.starts_with("nothing was changed (put back "), "{msg}");
        assert!(msg.contains("a.json") && msg.contains("blocker"), "{msg}");
        assert_eq!(fs::read_to_string(&a).unwrap(), "old a");
        assert!(!b.exists());
        assert!(
            !dir.path().join("made").exists(),
            "the folder made for it goes too"
        );
        assert_eq!(fs::read_to_string(&gone).unwrap(), "old gone");
        assert_eq!(names(), before, "no file or temp file left");
    }

    #[test]
    fn a_file_changed_meanwhile_is_not_overwritten_nor_removed() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        fs::write(&a, "edited").unwrap();
        let err = apply(&[change(a.clone(), Some("read"), None)]).unwrap_err();
        assert_eq!(crate::system::error::exit_code_of(&err), 75);
        let err = apply(&[change(a.clone(), Some("read"), Some("new"))]).unwrap_err();
        assert_eq!(crate::system::error::exit_code_of(&err), 75);
        let err = apply(&[change(a.clone(), None, Some("new"))]).unwrap_err();
        assert_eq!(crate::system::error::exit_code_of(&err), 75);
        assert_eq!(fs::read_to_string(&a).unwrap(), "edited");
    }
}
