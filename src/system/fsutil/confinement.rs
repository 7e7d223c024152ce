//! Where a path really leads: ctxkeep's own files are never read or written through a symlink
//! or `..` that leads out of the project.

use std::fs;
use std::path::{Path, PathBuf};

use crate::system::error::Error;

/// Where `path` really is when that is outside `root`: a symlink (at the path or at a folder
/// on the way) or a `..` taking it out of the project. None when it stays inside, or when the
/// root itself cannot be resolved. A path that does not exist yet is judged by where it would
/// be created (a dangling symlink by its target): a cloned repository may hold symlinks made to
/// lead ctxkeep's reads and writes into the user's files (`.ctxkeep/events.jsonl` to
/// `~/.bashrc`, a template to `~/.netrc`), and what ctxkeep reads or writes as its own must
/// never follow them out.
pub fn leads_out(root: &Path, path: &Path) -> Option<PathBuf> {
    let root = fs::canonicalize(root).ok()?;
    let real = real_location(path, 0)?;
    (!real.starts_with(&root)).then_some(real)
}

/// `path` with every symlink and `..` resolved, also where its last parts do not exist yet.
fn real_location(path: &Path, depth: u8) -> Option<PathBuf> {
    if let Ok(real) = fs::canonicalize(path) {
        return Some(real);
    }
    if depth > 40 {
        return None;
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let parent = real_location(parent, depth + 1)?;
    match fs::read_link(path) {
        Ok(to) => real_location(&parent.join(to), depth + 1),
        Err(_) => Some(parent.join(name)),
    }
}

/// Refuses `path` (exit 66, naming it and where it leads) when it leads out of `root`: see
/// [`leads_out`]. Cheap when nothing on the way is a symlink.
pub fn confined(root: &Path, path: &Path) -> Result<(), Error> {
    match leads_out(root, path) {
        Some(to) => Err(Error::no_input(
            path,
            format!(
                "leads out of the project (to {}) through a symlink or `..`; ctxkeep neither reads nor writes its own files there (remove the link)",
                to.display()
            ),
        )),
        None => Ok(()),
    }
}

/// Resolves a symlink so that writes replace its target and keep the link.
pub fn resolve_target(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::system::fsutil::append_line;

    #[cfg(unix)]
    #[test]
    fn a_path_leading_out_of_the_root_is_found_through_links_and_dotdot() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("docs")).unwrap();
        symlink(outside.path(), root.join("out")).unwrap();
        symlink(outside.path().join("not-yet"), root.join("dangling")).unwrap();
        symlink("docs", root.join("in")).unwrap();
        for inside in ["docs/a.md", "in/a.md", "new/b.md", "docs/../c.md"] {
            assert_eq!(leads_out(root, &root.join(inside)), None, "{inside}");
        }
        for out in [
            "out",
            "out/events.jsonl",
            "dangling",
            "../x",
            "docs/../../x",
        ] {
            assert!(leads_out(root, &root.join(out)).is_some(), "{out}");
        }
        let err = confined(root, &root.join("out/events.jsonl")).unwrap_err();
        assert_eq!(err.exit_code(), 66);
        // Never through a link: a log linked elsewhere is refused, its target untouched.
        fs::write(outside.path().join("bashrc"), "mine\n").unwrap();
        symlink(outside.path().join("bashrc"), root.join("events.jsonl")).unwrap();
        assert!(append_line(&root.join("events.jsonl"), "{}").is_err());
        assert_eq!(
            fs::read_to_string(outside.path().join("bashrc")).unwrap(),
            "mine\n"
        );
    }
}
