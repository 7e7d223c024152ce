//! The front matter's parse, kept for the next reading of the same text.
//!
//! Parsing the YAML is a fifth of a hook event's instructions and a share of every
//! checkpoint's, which reads the file before its lock, under it, and again in the checks on
//! what it wrote. Two keepers, both keyed on the front matter's exact bytes (compared whole,
//! not by a hash), so a changed file, a merge or a hand edit is a miss and never stale data:
//! - within one process, the last few front matters parsed (a checkpoint parses its file
//!   once, and what it wrote once);
//! - across processes, for hook events, `.ctxkeep/front-matter.cache`: the text and its keys
//!   as JSON, which reads several times faster than the YAML. It is replaced atomically (a
//!   temp file and a rename, like the session's record), and each reader checks it against the
//!   text it read itself, so hooks running at once need no lock for it; a damaged or foreign
//!   file is a miss, and is rewritten. The cache also names the state file it was written for
//!   (its device and inode): a cache that came with a cloned repository, whatever text it
//!   holds, belongs to another file and is never read.

use std::path::Path;
use std::sync::Mutex;

use serde::Deserialize;
use serde_yaml::{Mapping, Value};

use super::front_matter::parse_text;
use super::FrontMatter;
use crate::system::error::Error;

/// The cache file's name in `.ctxkeep/`.
pub const CACHE_FILE: &str = "front-matter.cache";
/// Its first line: a file that does not start so is not read.
const MAGIC: &[u8] = b"ctxkeep front matter cache 2\n";
/// Beyond this size the file is not read (the keys as JSON of a front matter at its limit).
const MAX_CACHE_BYTES: u64 = 1 << 20;
/// How many front matters one process keeps: a checkpoint's old and new ones.
const KEPT_IN_PROCESS: usize = 2;

struct Entry {
    text: String,
    first_line: usize,
    mapping: Mapping,
    fm: FrontMatter,
}

static KEPT: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The keys and fields of the front matter `text` (which starts at file line `first_line`):
/// from this process's earlier parse of the same text, else from `cache` (a hook event's
/// folder, `.ctxkeep/`) when it holds the same text, else parsed now (and then kept).
pub(super) fn parse_front(
    path: &Path,
    text: &str,
    first_line: usize,
    cache: Option<&Path>,
) -> Result<(Mapping, FrontMatter), Error> {
    if let Some(found) = in_process(text, first_line) {
        return Ok(found);
    }
    let file = cache.map(|dir| dir.join(CACHE_FILE));
    let owner = file.as_ref().and_then(|_| identity(path));
    if let Some(found) = file
        .as_deref()
        .zip(owner.as_deref())
        .and_then(|(f, owner)| read_cache(f, owner, text, first_line))
    {
        // Not kept in the process as well: an event reads the file once (the copy cost 1.7 %
        // of it).
        return Ok(found);
    }
    let parsed = parse_text(path, text, first_line)?;
    if let (Some(file), Some(owner), true) = (file.as_deref(), owner.as_deref(), parsed.from_value)
    {
        write_cache(file, owner, text, first_line, &parsed.mapping);
    }
    keep(text, first_line, &parsed.mapping, &parsed.fm);
    Ok((parsed.mapping, parsed.fm))
}

/// The state file as the file system knows it (device and inode): what a cache is written for.
/// None where there is no such identity, and then nothing is cached across processes.
fn identity(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(format!("{}:{}", meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

fn in_process(text: &str, first_line: usize) -> Option<(Mapping, FrontMatter)> {
    let kept = KEPT.lock().ok()?;
    kept.iter()
        .find(|e| e.first_line == first_line && e.text == text)
        .map(|e| (e.mapping.clone(), e.fm.clone()))
}

fn keep(text: &str, first_line: usize, mapping: &Mapping, fm: &FrontMatter) {
    let Ok(mut kept) = KEPT.lock() else {
        return;
    };
    kept.retain(|e| !(e.first_line == first_line && e.text == text));
    kept.truncate(KEPT_IN_PROCESS - 1);
    kept.insert(
        0,
        Entry {
            text: text.to_string(),
            first_line,
            mapping: mapping.clone(),
            fm: fm.clone(),
        },
    );
}

/// The cache file's keys when it holds exactly `text`; None for any other file.
fn read_cache(
    file: &Path,
    owner: &str,
    text: &str,
    first_line: usize,
) -> Option<(Mapping, FrontMatter)> {
    use std::io::Read;
    // A FIFO or a device in its place is refused, never waited on.
    let (f, len) = crate::system::fsutil::open_input(file).ok()?;
    if len > MAX_CACHE_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(MAX_CACHE_BYTES + 1).read_to_end(&mut bytes).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let header_end = rest.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&rest[..header_end]).ok()?;
    let mut fields = header.split(' ');
    let (written_for, line, len) = (fields.next()?, fields.next()?, fields.next()?);
    if written_for != owner
        || line.parse::<usize>().ok()? != first_line
        || len.parse::<usize>().ok()? != text.len()
    {
        return None;
    }
    let rest = &rest[header_end + 1..];
    if rest.get(..text.len())? != text.as_bytes() {
        return None;
    }
    let value = serde_json::from_slice::<Value>(&rest[text.len()..]).ok()?;
    let fm = FrontMatter::deserialize(&value).ok()?;
    let Value::Mapping(mapping) = value else {
        return None;
    };
    Some((mapping, fm))
}

/// Writes the cache for `text`, when its keys read back from JSON exactly as they are
/// (YAML's tags, non-string keys and non-finite numbers do not: such a front matter is parsed
/// every time). A cache that cannot be written is left to the next event.
fn write_cache(file: &Path, owner: &str, text: &str, first_line: usize, mapping: &Mapping) {
    if !file.parent().is_some_and(Path::is_dir) {
        // `.ctxkeep/` is made by the first lock, not by a read.
        return;
    }
    let Ok(json) = serde_json::to_vec(mapping) else {
        return;
    };
    match serde_json::from_slice::<Value>(&json) {
        Ok(Value::Mapping(back)) if back == *mapping => {}
        _ => return,
    }
    let mut bytes = Vec::with_capacity(MAGIC.len() + 24 + text.len() + json.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(format!("{owner} {first_line} {}\n", text.len()).as_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(&json);
    let _ = crate::system::fsutil::replace_cache(file, &bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state file holding `text` (its front matter), in a folder of its own.
    fn state_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let home = tempfile::tempdir().unwrap();
        let state = home.path().join("project-state.md");
        std::fs::write(&state, format!("---\n{text}---\n")).unwrap();
        (home, state)
    }

    fn parsed(dir: &Path, text: &str) -> (Mapping, FrontMatter) {
        let (_home, state) = state_file(text);
        parse_front(&state, text, 2, Some(dir)).unwrap()
    }

    #[test]
    fn the_cache_gives_back_what_the_yaml_says_and_only_for_the_same_text() {
        let dir = tempfile::tempdir().unwrap();
        let text = "ctxkeep: 1\nwindow: 150000\nmodel: claude-x # mine\nteam: [a, b]\n";
        let (_home, state) = state_file(text);
        let (mapping, fm) = parse_front(&state, text, 2, Some(dir.path())).unwrap();
        let file = dir.path().join(CACHE_FILE);
        let owner = identity(&state).unwrap();
        let (m2, fm2) = read_cache(&file, &owner, text, 2).expect("kept");
        assert_eq!(m2, mapping);
        assert_eq!(
            (fm2.window, fm2.model),
            (Some(150000), Some("claude-x".into()))
        );
        assert_eq!(fm.window, Some(150000));
        // Another text of the same length, another first line: not this cache's.
        assert!(read_cache(&file, &owner, &text.replace("150000", "160000"), 2).is_none());
        assert!(read_cache(&file, &owner, text, 3).is_none());
    }

    #[test]
    fn a_cache_written_for_another_file_is_never_read() {
        // A cache that came with a cloned repository (committed with the same text, but other
        // keys) names another state file than the one being read.
        let dir = tempfile::tempdir().unwrap();
        let text = "ctxkeep: 1\nwindow: 150000\n";
        let (_home, theirs) = state_file(text);
        parse_front(&theirs, text, 2, Some(dir.path())).unwrap();
        let file = dir.path().join(CACHE_FILE);
        let (_mine_home, mine) = state_file(text);
        let owner = identity(&mine).unwrap();
        assert!(read_cache(&file, &identity(&theirs).unwrap(), text, 2).is_some());
        assert!(read_cache(&file, &owner, text, 2).is_none());
    }

    #[test]
    fn keys_json_cannot_hold_are_parsed_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CACHE_FILE);
        for text in [
            // A tag, a key that is no string, a number JSON has no word for.
            "ctxkeep: 1\nmine: !thing x\n",
            "ctxkeep: 1\n7: seven\n",
            "ctxkeep: 1\nmine: .nan\n",
            // A value ctxkeep reads from the text, not from the parsed keys (`1.10`).
            "ctxkeep: 1\nmodel: 1.10\n",
        ] {
            let (_, fm) = parsed(dir.path(), text);
            assert_eq!(fm.ctxkeep, Some(1), "{text}");
            assert!(!file.exists(), "{text}");
        }
        let (_, fm) = parsed(dir.path(), "ctxkeep: 1\nmodel: 1.10\n");
        assert_eq!(fm.model.as_deref(), Some("1.10"));
    }

    #[test]
    fn no_cache_folder_is_made_by_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join(".ctxkeep");
        parsed(&missing, "ctxkeep: 1\nwindow: 1\n");
        assert!(!missing.exists());
    }

    #[test]
    fn within_a_process_the_same_text_is_the_same_parse() {
        let path = Path::new("project-state.md");
        let a = "ctxkeep: 1\nwindow: 1234\n";
        let b = "ctxkeep: 1\nwindow: 4321\n";
        for text in [a, b, a, b] {
            let (m, fm) = parse_front(path, text, 2, None).unwrap();
            let fresh = parse_text(path, text, 2).unwrap();
            assert_eq!((m, fm.window), (fresh.mapping, fresh.fm.window));
        }
        // An error is never kept: the text is parsed (and refused) again.
        for _ in 0..2 {
            assert!(parse_front(path, "ctxkeep: [\n", 2, None).is_err());
        }
    }
}
