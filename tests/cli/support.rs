//! A hermetic project builder: a temp dir, its own git config and HOME, a
//! fixed clock, no colour. Every integration test starts here.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use assert_cmd::Command;
use tempfile::TempDir;

pub const NOW: &str = "2026-01-15T10:00:00Z";

pub struct Project {
    pub dir: TempDir,
    home: TempDir,
    now: String,
}

impl Project {
    /// A git repository with one commit.
    pub fn new() -> Project {
        let p = Project::bare();
        p.git(&["init", "-q", "-b", "main"]);
        p.write("README.md", "# demo\n");
        p.commit_all("initial");
        p
    }

    /// A plain folder, no git.
    pub fn bare() -> Project {
        Project {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            now: NOW.to_string(),
        }
    }

    /// A git repository with one commit, inside `parent` (e.g. a small tmpfs).
    pub fn new_in(parent: &Path) -> Project {
        let p = Project {
            dir: tempfile::tempdir_in(parent).unwrap(),
            home: tempfile::tempdir().unwrap(),
            now: NOW.to_string(),
        };
        p.git(&["init", "-q", "-b", "main"]);
        p.write("README.md", "# demo\n");
        p.commit_all("initial");
        p
    }

    /// The folder holding the test's HOME (to hand it to another user).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Every entry under the project, `.git` included: files as bytes and
    /// mode, symlinks as their target. Equal snapshots mean nothing changed.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Entry> {
        let mut all = BTreeMap::new();
        snapshot_into(self.root(), self.root(), &mut all);
        all
    }

    /// An initialized ctxkeep project in a git repository.
    pub fn initialized() -> Project {
        let p = Project::new();
        p.ctxkeep(&["init"]).assert().success();
        p.commit_all("ctxkeep init");
        p
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn state(&self) -> String {
        self.read("project-state.md")
    }

    pub fn set_now(&mut self, now: &str) {
        self.now = now.to_string();
    }

    pub fn env(&self, cmd: &mut StdCommand) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("NO_COLOR", "1")
            .env("CTXKEEP_NOW", &self.now)
            .current_dir(self.dir.path());
    }

    /// `ctxkeep ARGS` in the project, hermetic.
    pub fn ctxkeep(&self, args: &[&str]) -> Command {
        Command::from_std(self.ctxkeep_std(args))
    }

    /// The same as a plain std Command (to spawn and kill, or add env).
    pub fn ctxkeep_std(&self, args: &[&str]) -> StdCommand {
        let mut std = StdCommand::new(assert_cmd::cargo::cargo_bin!("ctxkeep"));
        self.env(&mut std);
        std.args(args);
        std
    }

    /// `sh -c SCRIPT` in the project, hermetic, with `$CTXKEEP_BIN` naming
    /// the binary (for loops of many runs in one child).
    pub fn sh(&self, script: &str) -> StdCommand {
        let mut std = StdCommand::new("sh");
        self.env(&mut std);
        std.env("CTXKEEP_BIN", assert_cmd::cargo::cargo_bin!("ctxkeep"))
            .arg("-c")
            .arg(script);
        std
    }

    /// `ctxkeep ARGS` run as the user `uid` (through setpriv), hermetic.
    pub fn ctxkeep_as(&self, uid: u32, args: &[&str]) -> Command {
        let mut std = StdCommand::new("setpriv");
        self.env(&mut std);
        std.arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups")
            .arg(assert_cmd::cargo::cargo_bin!("ctxkeep"))
            .args(args);
        Command::from_std(std)
    }

    /// Runs git and returns its stdout; panics when it fails.
    pub fn git(&self, args: &[&str]) -> String {
        let mut cmd = StdCommand::new("git");
        self.env(&mut cmd);
        let out = cmd.args(args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub fn commit_all(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Writes a complete checkpoint by flags (see also [`MINIMAL_CHECKPOINT`]).
    pub fn checkpoint(&self, extra: &[&str]) -> assert_cmd::assert::Assert {
        self.checkpoint_with("run cargo test and fix the failing split test", extra)
    }

    /// [`Project::checkpoint`] with another next action.
    pub fn checkpoint_next(&self, next: &str) -> assert_cmd::assert::Assert {
        self.checkpoint_with(next, &[])
    }

    fn checkpoint_with(&self, next: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
        let mut args = vec![
            "checkpoint",
            "--phase",
            "implementing the parser",
            "--task",
            "parse front matter in src/state.rs",
            "--agent",
            "claude-code",
            "--next",
            next,
        ];
        args.extend_from_slice(extra);
        self.ctxkeep(&args).assert()
    }

    /// Runs with `--json` and parses stdout as one JSON document.
    pub fn json(&self, args: &[&str]) -> (serde_json::Value, i32) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.ctxkeep(&all).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let v = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("not one JSON document ({e}): {text:?}"));
        (v, out.status.code().unwrap_or(-1))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File { bytes: Vec<u8>, mode: u32 },
    Dir { mode: u32 },
    Link(PathBuf),
    Other,
}

fn snapshot_into(root: &Path, dir: &Path, all: &mut BTreeMap<PathBuf, Entry>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        let meta = fs::symlink_metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        let entry = if meta.file_type().is_symlink() {
            Entry::Link(fs::read_link(&path).unwrap())
        } else if meta.is_dir() {
            snapshot_into(root, &path, all);
            Entry::Dir { mode }
        } else if meta.is_file() {
            Entry::File {
                bytes: fs::read(&path).unwrap(),
                mode,
            }
        } else {
            Entry::Other
        };
        all.insert(rel, entry);
    }
}

/// Lists what differs between two snapshots, for assertion messages.
pub fn diff(a: &BTreeMap<PathBuf, Entry>, b: &BTreeMap<PathBuf, Entry>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in a {
        match b.get(k) {
            None => out.push(format!("removed {}", k.display())),
            Some(w) if w != v => out.push(format!("changed {}", k.display())),
            _ => {}
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        out.push(format!("added {}", k.display()));
    }
    out
}

/// The effective uid of this test process (the owner of a file it creates).
pub fn euid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().metadata().unwrap().uid()
}

/// The shortest complete `checkpoint` command line: every required field set.
pub const MINIMAL_CHECKPOINT: [&str; 9] = [
    "checkpoint",
    "--phase",
    "p",
    "--task",
    "t",
    "--agent",
    "a",
    "--next",
    "n",
];

/// Whether process `pid` is still running (a zombie waiting to be reaped
/// is not: where no init reaps orphans, `kill -0` would still see it).
pub fn process_running(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) if Path::new("/proc/self/stat").exists() => false,
        Err(_) => std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
    }
}

/// `cmd`'s child starts with SIGINT set to `disposition`. A test that sends SIGINT sets it to
/// `SIG_DFL`, as from a terminal: a suite started as a background job of a script (`bench/soak`,
/// `cargo test &`) inherits SIGINT ignored, which ctxkeep rightly keeps ignored, and the
/// signal would then do nothing.
pub fn with_sigint(cmd: &mut StdCommand, disposition: libc::sighandler_t) {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) is async-signal-safe, as pre_exec requires.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGINT, disposition);
            Ok(())
        });
    }
}

/// Waits for a pid file a test's child writes; its pid.
pub fn read_pid_file(path: &Path) -> u32 {
    let t0 = std::time::Instant::now();
    loop {
        if let Some(pid) = fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "{} never written",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether `pid` ends within a minute (it was just sent a signal).
pub fn process_ends(pid: u32) -> bool {
    let t0 = std::time::Instant::now();
    while process_running(pid) {
        if t0.elapsed() > std::time::Duration::from_secs(60) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}
