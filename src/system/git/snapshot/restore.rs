//! Reading a snapshot back: the files it holds, their contents, and writing them into the
//! working tree exactly as stored.

use std::path::Path;
use std::process::Stdio;

use super::{bytes_path, top, with_bytes, SnapFile};
use crate::system::git::{git, run, Unavailable};

/// The files a snapshot holds: what it changes against its parent (the commit
/// it was taken on), or everything when it has none.
pub fn files(dir: &Path, commit: &str) -> Result<Vec<SnapFile>, Unavailable> {
    let parent = format!("{commit}^");
    let has_parent = crate::system::git::commit_exists(dir, &parent).unwrap_or(false);
    let out = if has_parent {
        run(
            dir,
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-status",
                &parent,
                commit,
            ],
        )?
    } else {
        let mut listed = Vec::new();
        let names = run(dir, &["ls-tree", "-r", "-z", "--name-only", commit])?;
        for n in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
            listed.extend_from_slice(b"A\0");
            listed.extend_from_slice(n);
            listed.push(0);
        }
        listed
    };
    let mut parts = out.split(|&b| b == 0).filter(|p| !p.is_empty());
    let mut found = Vec::new();
    while let (Some(status), Some(path)) = (parts.next(), parts.next()) {
        let status = match status.first() {
            Some(b'A') => "added",
            Some(b'D') => "deleted",
            _ => "modified",
        };
        found.push(SnapFile {
            path: String::from_utf8_lossy(path).into_owned(),
            status,
            raw: path.to_vec(),
        });
    }
    Ok(found)
}

/// One path's content in a commit: its mode (`100644`, `100755`, `120000`,
/// `160000`) and bytes; None when the commit has no file there.
pub type Held = Option<(String, Vec<u8>)>;

/// What `commit` holds at each of `paths` (relative to the top level), from
/// two git calls however many paths.
pub fn contents(dir: &Path, commit: &str, paths: &[Vec<u8>]) -> Result<Vec<Held>, Unavailable> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["ls-tree", "-z", commit, "--"];
    let owned: Vec<String> = paths
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let lossless = paths.iter().all(|p| std::str::from_utf8(p).is_ok());
    if lossless {
        args.extend(owned.iter().map(String::as_str));
    }
    let listed = run(dir, &args)?;
    // `MODE TYPE ID\tPATH`
    let mut found: Vec<(Vec<u8>, String, String)> = Vec::new();
    for entry in listed.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let head = String::from_utf8_lossy(&entry[..tab]);
        let mut f = head.split(' ');
        let (Some(mode), Some(_), Some(id)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        found.push((entry[tab + 1..].to_vec(), mode.to_string(), id.to_string()));
    }
    if !lossless {
        // A name that is not UTF-8 cannot go on the command line: list the whole tree.
        let all = run(dir, &["ls-tree", "-r", "-z", commit])?;
        for entry in all.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let path = entry[tab + 1..].to_vec();
            if paths.contains(&path) {
                let head = String::from_utf8_lossy(&entry[..tab]).into_owned();
                let f: Vec<&str> = head.split(' ').collect();
                if f.len() == 3 {
                    found.push((path, f[0].to_string(), f[2].to_string()));
                }
            }
        }
    }
    let ids: Vec<&str> = found
        .iter()
        .filter(|(_, mode, _)| mode != "160000" && mode != "040000")
        .map(|(_, _, id)| id.as_str())
        .collect();
    let blobs = read_blobs(dir, &ids)?;
    Ok(paths
        .iter()
        .map(|p| {
            let (_, mode, id) = found.iter().find(|(path, _, _)| path == p)?;
            match mode.as_str() {
                "040000" => None,
                "160000" => Some((mode.clone(), Vec::new())),
                _ => Some((mode.clone(), blobs.get(id.as_str())?.clone())),
            }
        })
        .collect())
}

/// The bytes of each blob `ids` names, from one `cat-file --batch`.
fn read_blobs(
    dir: &Path,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, Vec<u8>>, Unavailable> {
    let mut map = std::collections::HashMap::new();
    if ids.is_empty() {
        return Ok(map);
    }
    let input = ids.join("\n") + "\n";
    let out = with_bytes(dir, None, &["cat-file", "--batch"], input.into_bytes())?;
    let mut at = 0;
    for id in ids {
        let Some(nl) = out[at..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&out[at..at + nl]).into_owned();
        at += nl + 1;
        let size: Option<usize> = header.split(' ').nth(2).and_then(|n| n.parse().ok());
        if let Some(size) = size {
            let end = (at + size).min(out.len());
            map.insert(id.to_string(), out[at..end].to_vec());
            at = end + 1;
        }
    }
    Ok(map)
}

/// Writes the snapshot's version of `files` into the working tree exactly
/// as stored (no smudge filter, no line-end conversion; the mode kept), and
/// removes the files it had deleted. The user's index and HEAD stay as they are.
pub fn restore(dir: &Path, commit: &str, files: &[SnapFile]) -> Result<(), Unavailable> {
    let top = top(dir)?;
    let raw: Vec<Vec<u8>> = files.iter().map(|f| f.raw.clone()).collect();
    let held = contents(&top, commit, &raw)?;
    for (f, held) in files.iter().zip(held) {
        let path = top.join(bytes_path(&f.raw));
        let failed = |e: std::io::Error| Unavailable(format!("cannot write {}: {e}", f.path));
        match held {
            None => match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Unavailable(format!("cannot remove {}: {e}", f.path))),
            },
            Some((mode, _)) if mode == "160000" => {}
            Some((mode, bytes)) => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(failed)?;
                }
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    std::fs::remove_file(&path).map_err(failed)?;
                }
                if mode == "120000" {
                    #[cfg(unix)]
                    {
                        let _ = std::fs::remove_file(&path);
                        std::os::unix::fs::symlink(bytes_path(&bytes), &path).map_err(failed)?;
                    }
                } else {
                    std::fs::write(&path, &bytes).map_err(failed)?;
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        let exec = if mode == "100755" { 0o755 } else { 0o644 };
                        let _ =
                            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(exec));
                    }
                }
            }
        }
    }
    Ok(())
}

/// What the snapshot holds at `path` (relative to the top level); None when
/// it holds no such file.
pub fn blob(dir: &Path, commit: &str, path: &str) -> Result<Option<Vec<u8>>, Unavailable> {
    let spec = format!("{commit}:{path}");
    let out = git(dir)
        .args(["cat-file", "blob", &spec])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Unavailable(format!("cannot run git: {e}")))?;
    Ok(out.status.success().then_some(out.stdout))
}
