//! Concurrency, crashes and an editor saving mid-write (RELIABILITY.md §7
//! cases 26, 28–31). CTXKEEP_TEST_PAUSE_BEFORE_RENAME (test-only) makes a
//! checkpoint wait, holding the lock, after its temp file is written.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime};

use ctxkeep::domain::state::StateFile;
use ctxkeep::domain::state::{seal, Seal};

use crate::support::Project;

const STATE: &str = "project-state.md";
const PAUSE: &str = "CTXKEEP_TEST_PAUSE_BEFORE_RENAME";

fn parse(p: &Project) -> StateFile {
    let text = fs::read_to_string(p.path(STATE)).unwrap();
    StateFile::parse(&p.path(STATE), text).unwrap_or_else(|e| panic!("does not parse: {e}"))
}

/// The body outside ctxkeep's markers.
fn prose(sf: &StateFile) -> String {
    let b = &sf.body;
    let begin = b.find("<!-- ctxkeep:begin -->").unwrap();
    let end = b.find("<!-- ctxkeep:end -->").unwrap();
    format!("{}{}", &b[..begin], &b[end..])
}

fn temp_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            found.push(e.path().display().to_string());
        }
        if e.file_type().unwrap().is_dir() && name != ".git" {
            found.extend(temp_files(&e.path()));
        }
    }
    found
}

fn with_prose() -> Project {
    let p = Project::initialized();
    p.write(
        STATE,
        format!(
            "{}\n## My notes\n\nKeep *this* — exactly.\r\n\ttabbed\n",
            p.state()
        ),
    );
    p
}

fn checkpoint_args(i: usize) -> Vec<String> {
    [
        "checkpoint",
        "--phase",
        &format!("phase of writer {i}"),
        "--task",
        "t",
        "--agent",
        "a",
        "--next",
        &format!("next of writer {i}"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn spawn(p: &Project, args: &[String], env: &[(&str, String)]) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = p.ctxkeep_std(&args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (without a deadline: it is a sync point, not a timing check) until
/// `ready` holds.
fn wait_until(mut ready: impl FnMut() -> bool) {
    while !ready() {
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sixteen_checkpoints_at_once_are_serialized_and_nothing_is_lost() {
    let p = with_prose();
    let prose_before = prose(&parse(&p));
    let children: Vec<Child> = (0..16)
        .map(|i| spawn(&p, &checkpoint_args(i), &[]))
        .collect();
    let mut ids = BTreeSet::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ids.insert(String::from_utf8(out.stdout).unwrap().trim().to_string());
    }
    let expected: BTreeSet<String> = (1..=16).map(|n| format!("ckpt-{n:04}")).collect();
    assert_eq!(ids, expected, "16 distinct, gapless ids");

    let archived: BTreeSet<String> = fs::read_dir(p.path(".ctxkeep/checkpoints"))
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let v: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(archived, expected);

    let log = p.read(".ctxkeep/events.jsonl");
    let events: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(events.len(), 16);
    let logged: BTreeSet<String> = events
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(logged, expected);

    let sf = parse(&p);
    assert_eq!(sf.fm.checkpoint.as_ref().unwrap().id, "ckpt-0016");
    assert_eq!(seal(&sf), Some(Seal::Intact));
    assert_eq!(prose(&sf), prose_before);
    assert_eq!(sf.fm.history.as_ref().unwrap().len(), 3);
    assert_eq!(temp_files(p.root()), Vec::<String>::new());
    p.ctxkeep(&["verify"]).assert().success();
}

/// The session's token count as last written (0 before the first track); the
/// record is replaced atomically, so it always parses.
fn tracked_tokens(p: &Project) -> u64 {
    fs::read_to_string(p.path(".ctxkeep/sessions/default.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["tokens"].as_u64())
        .unwrap_or(0)
}

const TRACKERS: usize = 64;
const ADDS_EACH: usize = 50;
const WRITERS: usize = 16;

/// The concurrency measurement: 64 processes doing 50 `track --add 1` each
/// on one session while 16 processes write checkpoints.
#[test]
fn sixty_four_trackers_and_sixteen_checkpoints_at_once_lose_nothing() {
    let p = with_prose();
    // A warn stage at 1 % (a warn writes no checkpoint): exactly one tracker
    // crosses it, and the stage fires once, so the log gets one stage event.
    p.ctxkeep(&["init", "--stages", "1:warn,90:checkpoint,98:handoff"])
        .assert()
        .success();
    let state_before = parse(&p);
    let prose_before = prose(&state_before);
    // The test is about serialization, not the timeout (tested above): a
    // loaded CI machine may hold fsyncs for seconds, so no process gives up.
    let patient = [("CTXKEEP_LOCK_TIMEOUT", "600".to_string())];
    let script = format!(
        r#"i=0; while [ $i -lt {ADDS_EACH} ]; do "$CTXKEEP_BIN" track --add 1 >/dev/null || exit 1; i=$((i+1)); done"#
    );
    let started = std::time::Instant::now();
    // Started together; each child is one shell running its 50 adds in turn.
    let mut trackers: Vec<Child> = (0..TRACKERS)
        .map(|_| {
            let mut cmd = p.sh(&script);
            cmd.envs(patient.iter().map(|(k, v)| (k, v)));
            cmd.stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Checkpoint writers start one by one while the adds run, each once the
    // count passed its share, so every write races the trackers.
    let total = (TRACKERS * ADDS_EACH) as u64;
    let mut writers = Vec::new();
    for i in 0..WRITERS {
        let due = total * i as u64 / (WRITERS as u64 + 1);
        wait_until(|| {
            tracked_tokens(&p) >= due
                || trackers.iter_mut().all(|c| c.try_wait().unwrap().is_some())
        });
        writers.push(spawn(&p, &checkpoint_args(i), &patient));
    }
    for t in trackers {
        let out = t.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "a tracker failed: {err}");
        assert!(!err.contains("error"), "{err}");
    }
    let mut ids = BTreeSet::new();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "a checkpoint failed: {err}");
        ids.insert(String::from_utf8(out.stdout).unwrap().trim().to_string());
    }
    let elapsed = started.elapsed();
    // A measurement for the README, not an assertion.
    eprintln!(
        "{TRACKERS} x {ADDS_EACH} `track --add 1` with {WRITERS} checkpoints: {:.1} s",
        elapsed.as_secs_f64()
    );

    // Not one add lost.
    let (status, code) = p.json(&["status"]);
    assert_eq!(code, 0);
    assert_eq!(status["tokens"], total);
    assert_eq!(total, 3_200);

    // 16 checkpoints, distinct gapless ids, each archived.
    let expected: BTreeSet<String> = (1..=WRITERS).map(|n| format!("ckpt-{n:04}")).collect();
    assert_eq!(ids, expected);
    let archive = p.path(".ctxkeep/checkpoints");
    let mut budgets = Vec::new();
    for id in &expected {
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(archive.join(format!("{id}.json"))).unwrap())
                .unwrap();
        assert_eq!(v["id"], id.as_str());
        budgets.push(v["budget"]["tokens"].as_u64().unwrap_or(0));
    }
    assert_eq!(fs::read_dir(&archive).unwrap().count(), WRITERS);
    // Serialized: each checkpoint saw the live count at its moment, and the
    // count only grows, so the budgets never go down from one id to the next.
    assert!(
        budgets.windows(2).all(|w| w[0] <= w[1]),
        "budgets by id: {budgets:?}"
    );

    // The log: `track --add` logs only the stages it fires, `checkpoint` one
    // event each, so 16 checkpoint events plus the one 1 % stage event.
    let log = p.read(".ctxkeep/events.jsonl");
    let events: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(events.len(), WRITERS + 1, "{log}");
    let logged: BTreeSet<String> = events
        .iter()
        .filter(|e| e["event"] == "checkpoint")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(logged, expected);
    let stages: Vec<&serde_json::Value> = events.iter().filter(|e| e["event"] == "stage").collect();
    assert_eq!(stages.len(), 1, "{log}");
    // 1,900 tokens is the first reading shown as 1.0 % of 200,000.
    assert_eq!(stages[0]["tokens"], 1_900);
    assert_eq!(stages[0]["percent"], 1.0);

    // project-state.md: parses, sealed, the prose byte for byte, settings kept.
    let sf = parse(&p);
    assert_eq!(seal(&sf), Some(Seal::Intact));
    assert_eq!(prose(&sf), prose_before);
    assert_eq!(sf.fm.stages, state_before.fm.stages);
    assert_eq!(sf.fm.checkpoint.as_ref().unwrap().id, "ckpt-0016");
    assert_eq!(temp_files(p.root()), Vec::<String>::new());
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn a_lock_held_past_the_timeout_is_75_naming_the_holder() {
    let p = with_prose();
    let before = p.snapshot();
    let mut holder = spawn(&p, &checkpoint_args(0), &[(PAUSE, "600000".into())]);
    let lock = p.path(".ctxkeep/lock");
    wait_until(|| fs::read_to_string(&lock).is_ok_and(|s| !s.is_empty()));
    let out = p
        .ctxkeep(&["--lock-timeout", "0.2", "checkpoint", "--note", "late"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(".ctxkeep/lock")
            && err.contains(&format!("pid {} (ctxkeep checkpoint)", holder.id()))
            && err.contains("s ago")
            && err.contains("gave up after"),
        "{err}"
    );
    // The environment variable sets the same timeout.
    let out = p
        .ctxkeep(&["checkpoint", "--note", "late"])
        .env("CTXKEEP_LOCK_TIMEOUT", "0.1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(75));

    // The holder dies: the kernel frees the lock (case 30), and the killed
    // write left the old file and at most a temp file.
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(fs::read(p.path(STATE)).unwrap(), {
        match &before[Path::new(STATE)] {
            crate::support::Entry::File { bytes, .. } => bytes.clone(),
            other => panic!("{other:?}"),
        }
    });
    p.checkpoint(&["--lock-timeout", "0", "--note", "now"])
        .success();
}

#[test]
fn an_editor_saving_during_a_write_wins_and_the_write_is_75() {
    let p = with_prose();
    p.checkpoint(&[]).success();
    let writer = spawn(&p, &checkpoint_args(1), &[(PAUSE, "4000".into())]);
    // The temp file exists: the new text is written, the rename is pending.
    wait_until(|| {
        fs::read_dir(p.root()).unwrap().flatten().any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".project-state.md.")
        })
    });
    let edited = format!("{}\nA line the user saved meanwhile.\n", p.state());
    fs::write(p.path(STATE), &edited).unwrap();
    let out = writer.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(STATE) && err.contains("changed by another program"),
        "{err}"
    );
    assert_eq!(p.state(), edited, "the editor's text survives");
    assert_eq!(temp_files(p.root()), Vec::<String>::new());
    assert!(
        !p.path(".ctxkeep/checkpoints/ckpt-0002.json").exists(),
        "the refused checkpoint's record is taken back"
    );
    p.checkpoint(&["--note", "retry"]).success();
    assert!(p.state().contains("A line the user saved meanwhile.\n"));
}

/// xorshift64*: reproducible randomness without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn kill_during_writes(iterations: usize) {
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("kill -9 test: {iterations} iterations, CRASH_SEED={seed}");
    let mut rng = Rng(seed);
    let p = with_prose();
    p.checkpoint(&[]).success();
    let prose_before = prose(&parse(&p));
    let mut last = parse(&p).fm.checkpoint.unwrap().number().unwrap();
    let (mut old, mut new) = (0, 0);
    for i in 0..iterations {
        let pause = rng.below(40).to_string();
        let mut child = spawn(&p, &checkpoint_args(i), &[(PAUSE, pause)]);
        std::thread::sleep(Duration::from_millis(rng.below(70)));
        let _ = child.kill(); // SIGKILL; it may have finished already
        child.wait().unwrap();

        let sf = parse(&p);
        let c = sf.fm.checkpoint.clone().unwrap();
        let n = c.number().unwrap();
        assert!(n >= last, "iteration {i}: went back from {last} to {n}");
        if n == last {
            old += 1;
        } else {
            new += 1;
            assert_eq!(c.phase, format!("phase of writer {i}"), "iteration {i}");
        }
        last = n;
        assert_eq!(seal(&sf), Some(Seal::Intact), "iteration {i}");
        assert_eq!(prose(&sf), prose_before, "iteration {i}: prose changed");
        // The current checkpoint is archived, identical.
        let rec = p.read(&format!(".ctxkeep/checkpoints/{}.json", c.id));
        let rec: serde_json::Value = serde_json::from_str(&rec).unwrap();
        assert_eq!(
            rec["digest"].as_str(),
            Some(c.digest.as_str()),
            "iteration {i}"
        );
        // The lock dies with its holder. A git child caught between fork and
        // exec holds a copy of the descriptor for that instant, so poll
        // (a bound against a stuck lock, not a timing check).
        let lock = fs::File::open(p.path(".ctxkeep/lock")).unwrap();
        let start = std::time::Instant::now();
        while lock.try_lock().is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "iteration {i}: lock still held a minute after its holder died"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        lock.unlock().unwrap();
    }
    eprintln!("kill -9 test: {old} runs left the old file, {new} the new one");
    // Every archived record is whole JSON (each is written by rename).
    for e in fs::read_dir(p.path(".ctxkeep/checkpoints"))
        .unwrap()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") {
            serde_json::from_str::<serde_json::Value>(&fs::read_to_string(e.path()).unwrap())
                .unwrap_or_else(|err| panic!("{name}: {err}"));
        }
    }

    // Killed writers leave temp files; a sweep (any later locked run)
    // removes those older than an hour and leaves a fresh one alone.
    let fresh = p.path(".project-state.md.fresh.tmp");
    fs::write(&fresh, "a write in progress").unwrap();
    let users_own = p.path(".notes.tmp");
    fs::write(&users_own, "not ctxkeep's").unwrap();
    let two_hours_ago = SystemTime::now() - Duration::from_secs(7200);
    let mut stale = temp_files(p.root());
    stale.retain(|t| !t.ends_with(".project-state.md.fresh.tmp"));
    let old_one = p.path(".project-state.md.old123.tmp");
    fs::write(&old_one, "left by a crash").unwrap();
    stale.push(old_one.display().to_string());
    for t in &stale {
        let f = fs::File::options().write(true).open(t).unwrap();
        f.set_modified(two_hours_ago).unwrap();
    }
    p.checkpoint(&["--note", "after the crashes"]).success();
    for t in &stale {
        if !t.ends_with(".notes.tmp") {
            assert!(!Path::new(t).exists(), "stale {t} not swept");
        }
    }
    assert!(
        fresh.exists(),
        "a fresh temp file may belong to a running write"
    );
    assert!(
        users_own.exists(),
        "only ctxkeep's own temp names are swept"
    );
    let log = p.read(".ctxkeep/events.jsonl");
    let last_line = log.lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(last_line).unwrap();
    assert_eq!(v["event"], "checkpoint");
    p.ctxkeep(&["verify"]).assert().success();
}

/// 200 kills take about 8 s in a debug build, so the full run is in the
/// normal suite; CRASH_SEED=N replays a failing run.
#[test]
fn kill_9_during_checkpoint_writes_200_times() {
    kill_during_writes(200);
}

/// `sh -c` with the file-size limit at `blocks` of 512 bytes (POSIX
/// `ulimit -f`), running `ctxkeep ARGS` as its last command.
fn under_file_size_limit(p: &Project, blocks: u32, args: &str) -> std::process::Output {
    p.sh(&format!("ulimit -f {blocks}; exec \"$CTXKEEP_BIN\" {args}"))
        .output()
        .unwrap()
}

/// A write past `ulimit -f` was SIGXFSZ: killed silently (exit 153) with
/// `.project-state.md.*.tmp` left behind. Now it is an I/O error.
#[test]
fn a_checkpoint_past_the_file_size_limit_is_74_and_leaves_the_file_as_it_was() {
    let p = with_prose();
    p.checkpoint(&[]).success();
    let before = p.state();
    let events = p.read(".ctxkeep/events.jsonl");
    // 16 KiB: the archive record (12 KB of note) fits, the state file
    // (the note in the front matter and again in the block) does not.
    let out = p
        .sh("ulimit -f 32; exec \"$CTXKEEP_BIN\" checkpoint --note \"$NOTE\"")
        .env("NOTE", "n".repeat(12_000))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("project-state.md: cannot write (file too large)"),
        "{err}"
    );
    assert_eq!(p.state(), before);
    assert_eq!(temp_files(p.root()), Vec::<String>::new());
    assert!(
        !p.path(".ctxkeep/checkpoints/ckpt-0002.json").exists(),
        "the archive record of the failed checkpoint is taken back"
    );
    assert_eq!(p.read(".ctxkeep/events.jsonl"), events);
    // Nothing to clean up: the next checkpoint takes the id.
    p.checkpoint(&[]).success().stdout("ckpt-0002\n");

    // Even the archive record past the limit: the same, one step earlier.
    let before = p.state();
    let out = under_file_size_limit(&p, 0, "checkpoint --note 'a note'");
    assert_eq!(out.status.code(), Some(74));
    assert_eq!(p.state(), before);
    assert_eq!(temp_files(p.root()), Vec::<String>::new());
}

#[test]
fn hooks_install_past_the_file_size_limit_is_74_and_leaves_the_settings() {
    let p = Project::initialized();
    let settings = "{\n  \"model\": \"opus\"\n}\n";
    p.write(".claude/settings.json", settings);
    let out = under_file_size_limit(&p, 0, "hooks install claude-code");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("file too large"), "{err}");
    assert_eq!(p.read(".claude/settings.json"), settings);
    assert_eq!(temp_files(p.root()), Vec::<String>::new());
}

/// Standard output or error that cannot be written (here `/dev/full`, as a full disk or a pipe an
/// agent closed): stderr loses the message and the exit code stays the documented one (it was
/// 101, a panic, when an error's line could not be written); stdout is an I/O error, 74, saying
/// which stream.
#[test]
fn a_full_stdout_is_74_and_a_full_stderr_keeps_the_exit_code() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full here");
        return;
    }
    let p = Project::initialized();
    let not_initialized = p
        .sh("exec \"$CTXKEEP_BIN\" status --state missing.md 2>/dev/full")
        .output()
        .unwrap();
    assert_eq!(not_initialized.status.code(), Some(66));
    let hook = p
        .sh("echo 'not json' | \"$CTXKEEP_BIN\" hook claude-code 2>/dev/full")
        .output()
        .unwrap();
    assert_eq!(hook.status.code(), Some(0), "a hook fails open");
    p.checkpoint(&[]).success();
    let out = p
        .sh("exec \"$CTXKEEP_BIN\" log >/dev/full")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(74));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write to standard output: No space left on device"),
        "{err}"
    );
}

/// A checkpoint killed mid-write leaves its temp file beside the state file until a later
/// lock's sweep removes it, an hour on. It is never recorded as the user's uncommitted work:
/// listed, it turned into "lost work" (CK410) the moment the sweep took it. A file of the
/// user's own with a temp-like name is recorded as before.
#[test]
fn a_killed_writers_temp_file_is_never_recorded_as_the_users_work() {
    let p = with_prose();
    p.commit_all("start");
    p.write("notes.txt", "mine\n");
    p.write(".notes.tmp", "mine too\n");
    let left = ".project-state.md.k9Xz2Q.tmp";
    p.write(left, "half a checkpoint");
    p.checkpoint(&[]).success();
    let state = p.state();
    assert!(state.contains("notes.txt"), "{state}");
    assert!(state.contains(".notes.tmp"), "{state}");
    assert!(!state.contains(left), "{state}");
    // Not undescribed work either (an error under --strict)...
    let (v, code) = p.json(&["verify", "--strict"]);
    assert_eq!(code, 0, "{v}");
    // ...nor lost work once the sweep has taken it.
    fs::remove_file(p.path(left)).unwrap();
    let (v, code) = p.json(&["verify", "--strict"]);
    assert_eq!(code, 0, "{v}");
}
