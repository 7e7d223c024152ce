//! The temp files a killed process left beside a file ctxkeep writes, found for a sweep that
//! touches only its own leftovers.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::replace::NEW_FILE_TEMP_PREFIX;

/// A temp file older than this was left by a killed process: no write takes
/// that long.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// The temp-file prefixes ctxkeep uses beside a file it writes, so a sweep
/// of a user's folder touches only its own leftovers.
pub fn temp_prefixes_for(file: &Path) -> Vec<String> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "state".into());
    vec![format!(".{name}."), NEW_FILE_TEMP_PREFIX.to_string()]
}

/// Whether `name` is one of the temp files ctxkeep makes with one of `prefixes`: the prefix, the
/// six letters and digits the temp file's name draws, `.tmp`. What a checkpoint never records as
/// the user's work.
pub fn is_temp_name(name: &str, prefixes: &[String]) -> bool {
    prefixes
        .iter()
        .filter_map(|p| name.strip_prefix(p.as_str()))
        .filter_map(|rest| rest.strip_suffix(".tmp"))
        .any(|random| random.len() == 6 && random.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Temp files in `dir` older than STALE_TEMP_AGE whose names start with one
/// of `prefixes` and end in `.tmp`: what a killed process left behind.
/// Younger ones may belong to a write in progress.
pub fn stale_temp_files(dir: &Path, prefixes: &[String]) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            prefixes.iter().any(|p| name.starts_with(p.as_str()))
                && name.ends_with(".tmp")
                && entry.file_type().is_ok_and(|t| t.is_file())
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_TEMP_AGE)
        })
        .map(|e| e.path())
        .collect();
    crate::system::sorting::sort(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};
    use std::time::Duration;

    #[test]
    fn sweep_removes_only_old_temp_files_with_our_names() {
        let dir = tempfile::tempdir().unwrap();
        let old_time = std::time::SystemTime::now() - Duration::from_secs(7200);
        let names = [
            ".project-state.md.a1.tmp",
            ".project-state.md.fresh.tmp",
            ".ctxkeep-new.b2.tmp",
            ".users-own.tmp",
        ];
        for n in names {
            fs::write(dir.path().join(n), "x").unwrap();
            if n != ".project-state.md.fresh.tmp" {
                let f = File::options()
                    .write(true)
                    .open(dir.path().join(n))
                    .unwrap();
                f.set_modified(old_time).unwrap();
            }
        }
        for stale in stale_temp_files(
            dir.path(),
            &temp_prefixes_for(Path::new("project-state.md")),
        ) {
            fs::remove_file(stale).unwrap();
        }
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".project-state.md.fresh.tmp", ".users-own.tmp"]);
    }
}
