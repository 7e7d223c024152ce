//! RELIABILITY.md §7: one test per bad-input or fault case. A refusal is the
//! documented exit code, ONE stderr line naming the file and the problem,
//! nothing on stdout, and every file byte for byte as it was.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::support::{diff, euid, Project};

const STATE: &str = "project-state.md";

/// A git repository whose project-state.md holds `content` (no .ctxkeep/).
fn with_state(content: impl AsRef<[u8]>) -> Project {
    let p = Project::new();
    p.write(STATE, content);
    p
}

/// Runs `args`, expects a refusal with `code` and a one-line message that
/// names `file` and contains every needle; nothing may change on disk.
pub(crate) fn refused(
    p: &Project,
    args: &[&str],
    code: i32,
    file: &str,
    needles: &[&str],
) -> String {
    let before = p.snapshot();
    let out = p.ctxkeep(args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.contains(file), "{args:?}: does not name {file}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: no {n:?} in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    let after = p.snapshot();
    assert!(
        before == after,
        "{args:?} changed files: {:?}",
        diff(&before, &after)
    );
    err
}

/// Refused the same way by every command that reads the file.
fn refused_by_all(p: &Project, code: i32, needles: &[&str]) {
    for args in [
        &["checkpoint", "--phase", "x"][..],
        &["verify"],
        &["resume"],
        &["init"],
    ] {
        refused(p, args, code, STATE, needles);
    }
}

/// The user's prose: the body outside ctxkeep's markers.
fn prose(file: &str) -> String {
    let body = body_of(file);
    match (
        body.find("<!-- ctxkeep:begin -->"),
        body.find("<!-- ctxkeep:end -->"),
    ) {
        (Some(b), Some(e)) => format!("{}{}", &body[..b], &body[e..]),
        _ => body.to_string(),
    }
}

/// The text after the front matter's closing line.
fn body_of(file: &str) -> &str {
    let text = file.strip_prefix('\u{feff}').unwrap_or(file);
    let first = text.find('\n').unwrap() + 1;
    let mut pos = first;
    for line in text[first..].split_inclusive('\n') {
        pos += line.len();
        if line.trim_end() == "---" {
            return &text[pos..];
        }
    }
    panic!("no closing line in {file:?}")
}

/// The front matter as YAML.
fn front(file: &str) -> serde_yaml::Value {
    let text = file.strip_prefix('\u{feff}').unwrap_or(file);
    let body = body_of(file);
    let fm = &text[..text.len() - body.len()];
    let inner = fm
        .trim_end()
        .trim_end_matches("---")
        .trim_start_matches("---");
    serde_yaml::from_str(inner).unwrap()
}

fn no_temp_files(dir: &Path) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            !name.ends_with(".tmp"),
            "temp file left: {}",
            e.path().display()
        );
        if e.file_type().unwrap().is_dir() && name != ".git" {
            no_temp_files(&e.path());
        }
    }
}

/// An initialized project with one checkpoint and prose of the user's own.
fn with_prose() -> Project {
    let p = Project::initialized();
    p.write(
        STATE,
        format!("{}\nMy own notes: keep *these*.\n", p.state()),
    );
    p.checkpoint(&[]).success();
    p
}

#[test]
fn c01_missing_file_is_not_initialized() {
    let p = Project::new();
    for args in [&["checkpoint"][..], &["resume"], &["verify"]] {
        refused(&p, args, 66, STATE, &["not initialized", "ctxkeep init"]);
    }
}

#[test]
fn c02_init_run_concurrently_creates_one_file_and_all_succeed() {
    let p = Project::new();
    let children: Vec<_> = (0..8)
        .map(|_| {
            p.ctxkeep_std(&["--json", "init"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut created = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        created += usize::from(v["created"] == true);
    }
    assert_eq!(created, 1, "exactly one init creates the file");
    let gitignore = p.read(".gitignore");
    assert_eq!(gitignore.lines().filter(|l| *l == ".ctxkeep/").count(), 1);
    let before = p.snapshot();
    p.ctxkeep(&["init"])
        .assert()
        .success()
        .stderr(predicates::str::contains("nothing changed"));
    assert!(before == p.snapshot(), "{:?}", diff(&before, &p.snapshot()));
    p.checkpoint(&[]).success();
}

#[test]
fn c03_no_front_matter_is_all_body_and_init_prepends_it() {
    let original = "# My notes\r\nplain prose, no front matter\n---\nstill mine\n";
    let p = with_state(original);
    refused(
        &p,
        &["checkpoint"],
        66,
        STATE,
        &["no ctxkeep front matter", "ctxkeep init"],
    );
    p.ctxkeep(&["init"]).assert().success();
    let s = p.state();
    assert!(s.starts_with("---\r\nctxkeep: 1\r\n"), "{s}");
    assert!(body_of(&s).starts_with(original), "{s:?}");
    p.checkpoint(&[]).success();
    assert!(body_of(&p.state()).starts_with(original));
}

#[test]
fn c04_unclosed_front_matter_is_refused() {
    let p = with_state("---\nctxkeep: 1\nmodel: x\n\n# prose\n");
    refused_by_all(&p, 65, &["front matter opened at line 1 is not closed"]);
}

#[test]
fn c05_four_dashes_or_text_after_dashes_is_body() {
    for first in ["----", "--- x"] {
        let original = format!("{first}\nctxkeep: 1\n---\nprose\n");
        let p = with_state(&original);
        refused(&p, &["checkpoint"], 66, STATE, &["no ctxkeep front matter"]);
        p.ctxkeep(&["init"]).assert().success();
        assert!(body_of(&p.state()).starts_with(&original));
    }
}

#[test]
fn c06_bom_is_kept_through_checkpoints() {
    let p = Project::initialized();
    let with_bom = format!("\u{feff}{}\nprose after a BOM\n", p.state());
    p.write(STATE, &with_bom);
    p.checkpoint(&[]).success();
    p.checkpoint(&["--note", "again"]).success();
    let s = p.state();
    assert!(s.starts_with("\u{feff}---\n"), "{s:?}");
    assert_eq!(s.matches('\u{feff}').count(), 1);
    assert_eq!(prose(&s), prose(&with_bom));
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c07_crlf_is_kept_and_used_for_new_lines() {
    let p = Project::initialized();
    let crlf = format!("{}\nmy prose\n", p.state()).replace('\n', "\r\n");
    p.write(STATE, &crlf);
    p.checkpoint(&["--decision", "one", "--question", "two"])
        .success();
    let s = p.state();
    assert!(
        !s.replace("\r\n", "").contains('\n'),
        "a bare LF was written: {s:?}"
    );
    assert!(s.contains("  id: ckpt-0001\r\n"));
    assert_eq!(prose(&s), prose(&crlf));
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c08_closer_at_end_of_file_and_empty_front_matter_are_valid() {
    // The closer is the last byte: the checkpoint must not glue the marked
    // block onto it (that would leave the front matter unclosed).
    let p = with_state("---\nctxkeep: 1\n---");
    p.checkpoint(&[]).success();
    p.ctxkeep(&["verify"]).assert().success();
    p.checkpoint(&["--note", "second"]).success();
    p.ctxkeep(&["verify"]).assert().success();

    let p = with_state("---\n---\nbody of mine\n");
    p.ctxkeep(&["verify"]).assert().code(1); // parses: no format key yet
    p.ctxkeep(&["init"]).assert().success();
    assert!(body_of(&p.state()).starts_with("body of mine\n"));
    p.checkpoint(&[]).success();
}

#[test]
fn c09_dashes_in_body_and_block_scalar_are_not_delimiters() {
    let fm = "---\nctxkeep: 1\nmy_block: |\n  one\n  ---\n  two\n---\n";
    let body = "# Mine\n---\nnot a delimiter\n...\n  ---\nend\n";
    let p = with_state(format!("{fm}{body}"));
    p.checkpoint(&[]).success();
    let s = p.state();
    assert!(
        s.starts_with("---\nctxkeep: 1\nmy_block: |\n  one\n  ---\n  two\n"),
        "{s}"
    );
    assert_eq!(front(&s)["my_block"], "one\n---\ntwo\n");
    assert!(body_of(&s).starts_with(body), "{s}");
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c10_tab_indentation_names_line_and_column() {
    let p = with_state("---\nctxkeep: 1\nstages:\n\t- {at: 80, action: warn}\n---\n");
    refused_by_all(&p, 65, &["front matter", "line 4 column 1"]);
    let p = with_state("---\nctxkeep: 1\n\tmodel: x\n---\n");
    refused(&p, &["checkpoint"], 65, STATE, &["tab", "line 3 column 1"]);
}

#[test]
fn c11_duplicate_key_names_the_key_and_its_line() {
    let p = with_state("---\nctxkeep: 1\nowner: alice\nwindow: 1000\nowner: bob\n---\n");
    refused_by_all(&p, 65, &["duplicate key \"owner\" at line 5"]);
    let p =
        with_state("---\nctxkeep: 1\ncheckpoint:\n  id: ckpt-0001\n  phase: a\n  phase: b\n---\n");
    refused(
        &p,
        &["verify"],
        65,
        STATE,
        &["duplicate key \"phase\" at line 6"],
    );
}

#[test]
fn c12_unknown_keys_and_comments_are_kept_and_strict_warns() {
    let p = Project::initialized();
    let s = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\n# the team's own settings\nowner: alice   # lead\nreviewers: [bob, carol]\n",
        1,
    );
    p.write(STATE, &s);
    p.checkpoint(&[]).success();
    p.checkpoint(&["--note", "again"]).success();
    assert!(p.state().starts_with(
        "---\nctxkeep: 1\n# the team's own settings\nowner: alice   # lead\nreviewers: [bob, carol]\n"
    ));
    let (v, code) = p.json(&["verify", "--strict"]);
    assert_eq!(code, 0, "{v}");
    let fields: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "CK130")
        .map(|w| w["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["owner", "reviewers"]);
    let (v, _) = p.json(&["verify"]);
    assert!(!v.to_string().contains("CK130"), "only --strict warns: {v}");
}

#[test]
fn c13_ambiguous_scalars_read_as_strings_and_written_quoted() {
    let p = Project::initialized();
    let s = p.state().replacen(
        "ctxkeep: 1\n",
        "ctxkeep: 1\nstatus: no\nversion: 1.10\nmode: 0755\n",
        1,
    );
    p.write(STATE, &s);
    p.ctxkeep(&[
        "checkpoint",
        "--phase",
        "no",
        "--task",
        "0755",
        "--agent",
        "yes",
        "--next",
        "1.10",
    ])
    .assert()
    .success();
    let s = p.state();
    assert!(
        s.starts_with("---\nctxkeep: 1\nstatus: no\nversion: 1.10\nmode: 0755\n"),
        "{s}"
    );
    for line in [
        "  phase: \"no\"\n",
        "  active_task: \"0755\"\n",
        "  controlling_agent: \"yes\"\n",
        "  next_action: \"1.10\"\n",
    ] {
        assert!(s.contains(line), "{line:?} in {s}");
    }
    let fm = front(&s);
    assert_eq!(fm["checkpoint"]["next_action"], "1.10");
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c14_front_matter_that_is_a_list_or_scalar_is_refused() {
    let p = with_state("---\n- ctxkeep\n- 1\n---\nbody\n");
    refused_by_all(&p, 65, &["must be a mapping"]);
    let p = with_state("---\njust a sentence\n---\nbody\n");
    refused(&p, &["checkpoint"], 65, STATE, &["must be a mapping"]);
}

/// Nine levels of nine aliases: 9^9 strings if expanded.
pub fn alias_bomb() -> String {
    let mut y = String::from("---\nctxkeep: 1\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for i in 0..8u8 {
        let prev = (b'a' + i) as char;
        let next = (b'a' + i + 1) as char;
        let refs = vec![format!("*{prev}"); 9].join(",");
        y.push_str(&format!("{next}: &{next} [{refs}]\n"));
    }
    y.push_str("---\nbody\n");
    y
}

#[test]
fn c15_alias_bomb_is_rejected() {
    let p = with_state(alias_bomb());
    refused_by_all(&p, 65, &["too many alias expansions"]);
}

#[test]
fn c16_nesting_over_64_is_rejected_before_parsing() {
    let flow = |n: usize| {
        format!(
            "---\nctxkeep: 1\na: {}{}\n---\n",
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    let p = with_state(flow(64));
    refused_by_all(&p, 65, &["nested too deeply at line 3 (limit 64)"]);
    let p = with_state(flow(30_000));
    refused(
        &p,
        &["checkpoint"],
        65,
        STATE,
        &["nested too deeply at line 3"],
    );
    let mut block = String::from("---\nctxkeep: 1\n");
    for i in 0..70 {
        block.push_str(&format!("{}k{i}:\n", "  ".repeat(i)));
    }
    block.push_str("---\n");
    let p = with_state(block);
    refused(
        &p,
        &["verify"],
        65,
        STATE,
        &["nested too deeply at line 67"],
    );
    // 100,000 deep is over the front-matter cap: refused before any scan.
    let p = with_state(flow(100_000));
    refused(&p, &["checkpoint"], 65, STATE, &["front matter too large"]);
}

#[test]
fn c17_too_large_file_or_front_matter_is_refused() {
    let head = "---\nctxkeep: 1\n---\n";
    let mut big = String::from(head);
    big.push_str(&"p".repeat(8 * 1024 * 1024 + 1 - head.len()));
    let p = with_state(&big);
    refused_by_all(&p, 65, &["too large (8388609 bytes, limit 8388608)"]);
    let fm = format!(
        "---\nctxkeep: 1\nblob: \"{}\"\n---\nbody\n",
        "x".repeat(64 * 1024)
    );
    let p = with_state(fm);
    refused_by_all(
        &p,
        65,
        &["front matter too large (65556 bytes, limit 65536)"],
    );
}

#[test]
fn c18_invalid_utf8_names_the_byte_offset() {
    let p = with_state(b"---\nctxkeep: 1\n---\nab\xffcd\n");
    refused_by_all(&p, 65, &["not valid UTF-8 (at byte offset 21)"]);
}

#[test]
fn c19_nul_bytes_are_not_a_text_file() {
    let p = with_state(b"---\nctxkeep: 1\n---\nab\0cd\n");
    refused_by_all(&p, 65, &["not a text file (NUL byte at offset 21)"]);
}

/// The exit-65 message gave no way back. Each kind of damage now names it:
/// git's last committed version, or the archive beside the file.
#[test]
fn c19_a_state_file_that_no_longer_reads_names_the_way_back() {
    let way_back = |p: &Project| {
        format!(
            "; to go back, `git checkout -- {}` restores the last committed version, and .ctxkeep/checkpoints/ beside it keeps the checkpoints ctxkeep wrote",
            p.path(STATE).display()
        )
    };
    for (damage, what) in [
        (&b"---\nctxkeep: 1\n  bad: [\n---\n"[..], "front matter: "),
        (b"---\nctxkeep: 1\n---\nab\0cd\n", "NUL byte"),
        (b"---\nctxkeep: 1\nbody\n", "is not closed"),
    ] {
        let p = with_state(damage);
        refused_by_all(&p, 65, &[what, &way_back(&p)]);
    }
    let p = with_state(format!("---\nblob: \"{}\"\n---\n", "x".repeat(64 * 1024)));
    refused_by_all(&p, 65, &["front matter too large", &way_back(&p)]);
    // A conflict has its own way back.
    let p = with_state("---\nctxkeep: 1\n---\n<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n");
    let err = refused(&p, &["status"], 65, STATE, &["run `ctxkeep resolve`"]);
    assert!(!err.contains("git checkout"), "{err}");
}

/// Runs a command that must not block (a FIFO at the path); a guard, not a
/// timing assertion: a blocked run fails the test instead of hanging it.
fn finishes(mut cmd: StdCommand) -> std::process::Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("ctxkeep blocked on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn c20_directory_fifo_or_device_at_the_path_is_refused() {
    let p = Project::new();
    fs::create_dir(p.path(STATE)).unwrap();
    refused_by_all(&p, 66, &["not a regular file"]);

    let p = Project::new();
    std::os::unix::fs::symlink("/dev/null", p.path(STATE)).unwrap();
    refused_by_all(&p, 66, &["not a regular file"]);

    let p = Project::new();
    let ok = StdCommand::new("mkfifo")
        .arg(p.path(STATE))
        .status()
        .unwrap();
    assert!(ok.success());
    for args in [&["checkpoint"][..], &["verify"], &["resume"], &["init"]] {
        let out = finishes(p.ctxkeep_std(args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(66), "{args:?}: {err}");
        assert!(
            err.contains(STATE) && err.contains("not a regular file"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
    }
    let kind = fs::symlink_metadata(p.path(STATE)).unwrap().file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
}

#[test]
fn c21_symlink_target_is_updated_link_and_mode_kept() {
    let p = Project::initialized();
    fs::create_dir(p.path("docs")).unwrap();
    let text = format!("{}\nprose behind a link\n", p.state());
    p.write("docs/state.md", &text);
    fs::set_permissions(p.path("docs/state.md"), fs::Permissions::from_mode(0o640)).unwrap();
    fs::remove_file(p.path(STATE)).unwrap();
    std::os::unix::fs::symlink("docs/state.md", p.path(STATE)).unwrap();
    p.checkpoint(&[]).success();
    assert_eq!(
        fs::read_link(p.path(STATE)).unwrap(),
        PathBuf::from("docs/state.md")
    );
    let real = p.read("docs/state.md");
    assert!(real.contains("  id: ckpt-0001\n"));
    assert_eq!(prose(&real), prose(&text));
    let mode = fs::metadata(p.path("docs/state.md"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    no_temp_files(p.root());
    // The state file itself is not a "dirty" file of the checkpoint.
    assert!(!real.contains("path: docs/state.md"), "{real}");
}

#[test]
fn c21_hard_link_warns_that_the_other_name_keeps_the_old_text() {
    let p = Project::initialized();
    let before = p.state();
    fs::hard_link(p.path(STATE), p.path("other-name.md")).unwrap();
    p.checkpoint(&[])
        .success()
        .stderr(predicates::str::contains("has 2 hard links"));
    assert_eq!(p.read("other-name.md"), before);
    assert!(p.state().contains("ckpt-0001"));
}

#[test]
fn c21_new_files_follow_the_umask_not_0600() {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    p.checkpoint(&[]).success();
    for f in [STATE, ".gitignore", ".ctxkeep/checkpoints/ckpt-0001.json"] {
        let mode = fs::metadata(p.path(f)).unwrap().permissions().mode() & 0o777;
        assert_ne!(mode, 0o600, "{f} is private to its owner");
        assert_eq!(mode & 0o600, 0o600, "{f}");
    }
}

/// The uid to run a permission test as: ourselves when not root (chmod
/// binds us), else nobody through setpriv (root ignores chmod).
pub(crate) fn unprivileged(p: &Project) -> Option<u32> {
    if euid() != 0 {
        return Some(euid());
    }
    let has_setpriv = StdCommand::new("setpriv").arg("--version").output().is_ok();
    if !has_setpriv {
        eprintln!("skipped: running as root and setpriv is missing, so chmod cannot be tested");
        return None;
    }
    for dir in [p.root(), p.home()] {
        let ok = StdCommand::new("chown")
            .args(["-R", "65534:65534"])
            .arg(dir)
            .status();
        assert!(ok.unwrap().success());
    }
    Some(65534)
}

#[test]
fn c22_unwritable_directory_is_77_and_read_only_commands_work() {
    let p = with_prose();
    let Some(uid) = unprivileged(&p) else { return };
    let run = |args: &[&str]| {
        if uid == euid() {
            p.ctxkeep(args)
        } else {
            p.ctxkeep_as(uid, args)
        }
    };
    fs::set_permissions(p.root(), fs::Permissions::from_mode(0o555)).unwrap();
    let before = p.snapshot();
    let out = run(&["checkpoint", "--next", "blocked"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let root = p.root().display().to_string();
    assert!(
        err.contains(STATE) && err.contains(&format!("need write access to {root}")),
        "{err}"
    );
    assert!(p.snapshot() == before, "{:?}", diff(&before, &p.snapshot()));
    run(&["verify"]).assert().success();
    // Without .ctxkeep/ it cannot even be created: still 77, naming it.
    fs::set_permissions(p.root(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir_all(p.path(".ctxkeep")).unwrap();
    fs::set_permissions(p.root(), fs::Permissions::from_mode(0o555)).unwrap();
    let before = p.snapshot();
    let out = run(&["checkpoint"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert!(
        err.contains(".ctxkeep") && err.contains("need write access to"),
        "{err}"
    );
    assert!(p.snapshot() == before);
    run(&["verify"]).assert().success();
    fs::set_permissions(p.root(), fs::Permissions::from_mode(0o755)).unwrap();
}

/// A small tmpfs, unmounted on drop; None (with the reason printed) where
/// mounting is not permitted.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = StdCommand::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs here ({})",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount ({e})");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount_read_only(&self) {
        let ok = StdCommand::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount")
            .arg("-l")
            .arg(self.path())
            .status();
    }
}

#[test]
fn c23_read_only_file_system_is_74_and_read_only_commands_work() {
    let Some(fs_) = Tmpfs::mount("4m") else {
        return;
    };
    let p = Project::new_in(fs_.path());
    p.ctxkeep(&["init"]).assert().success();
    p.checkpoint(&[]).success();
    fs_.remount_read_only();
    refused(
        &p,
        &["checkpoint", "--next", "x"],
        74,
        "lock",
        &["read-only file system"],
    );
    p.ctxkeep(&["verify"]).assert().success();
    let before = p.snapshot();
    let out = p.ctxkeep(&["resume"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ckpt-0001"));
    assert!(p.snapshot() == before);
    drop(p);
}

/// Fills the file system until a write fails, then frees `pages` 4 KiB pages.
fn fill(dir: &Path, pages: usize) {
    let mut i = 0;
    loop {
        let f = dir.join(format!("filler-{i}"));
        if fs::write(&f, [b'f'; 4096]).is_err() {
            let _ = fs::remove_file(&f);
            break;
        }
        i += 1;
    }
    for j in 0..pages {
        fs::remove_file(dir.join(format!("filler-{}", i - 1 - j))).unwrap();
    }
}

#[test]
fn c24_disk_full_is_74_original_intact_no_temp_left() {
    let Some(fs_) = Tmpfs::mount("2m") else {
        return;
    };
    let p = Project::new_in(fs_.path());
    p.ctxkeep(&["init"]).assert().success();
    let text = format!("{}\nprose that must survive a full disk\n", p.state());
    p.write(STATE, &text);
    p.checkpoint(&[]).success();
    let fillers = tempfile::tempdir_in(fs_.path()).unwrap();
    // Nothing free: the archive record cannot be written.
    fill(fillers.path(), 0);
    refused(
        &p,
        &["checkpoint", "--next", "x"],
        74,
        "ckpt-0002.json",
        &["disk full"],
    );
    // Two pages free: the lock's holder line and the archive record fit, the
    // state file does not; the record is taken back.
    for f in fs::read_dir(fillers.path()).unwrap().flatten().take(2) {
        fs::remove_file(f.path()).unwrap();
    }
    refused(
        &p,
        &["checkpoint", "--next", "x"],
        74,
        STATE,
        &["disk full"],
    );
    no_temp_files(p.root());
    assert_eq!(prose(&p.state()), prose(&text));
    drop(fillers);
    p.checkpoint(&["--note", "space again"]).success();
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c25_failed_event_append_is_74_and_a_torn_line_is_sealed() {
    let p = Project::initialized();
    fs::create_dir_all(p.path(".ctxkeep/events.jsonl")).unwrap();
    let out = p.checkpoint(&[]).code(74);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("checkpoint ckpt-0001 was written, but its event could not be logged")
            && err.contains("events.jsonl"),
        "{err}"
    );
    p.ctxkeep(&["verify"]).assert().success();
    fs::remove_dir(p.path(".ctxkeep/events.jsonl")).unwrap();
    p.write(
        ".ctxkeep/events.jsonl",
        "{\"ts\":\"t\",\"event\":\"checkpoint\",\"id\":\"ck",
    );
    p.checkpoint(&["--note", "two"]).success();
    let log = p.read(".ctxkeep/events.jsonl");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(serde_json::from_str::<serde_json::Value>(lines[0]).is_err());
    let v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(v["id"], "ckpt-0002");
}

#[test]
fn c34_a_corrupt_archive_record_does_not_stop_checkpoints() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write(".ctxkeep/checkpoints/ckpt-0007.json", b"\0garbage{");
    p.checkpoint(&[]).success().stdout("ckpt-0008\n");
}

const FULL: [&str; 9] = [
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

fn git_of(p: &Project) -> serde_yaml::Value {
    front(&p.state())["checkpoint"]["git"].clone()
}

#[test]
fn c35_git_missing_leaves_git_out_with_a_warning() {
    let p = Project::initialized();
    let out = p
        .ctxkeep(&FULL)
        .env("CTXKEEP_GIT", "/nonexistent/git")
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("git state left out of the checkpoint: git is not installed"),
        "{err}"
    );
    assert!(git_of(&p).is_null());
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c35_not_a_repository_leaves_git_out_with_a_warning() {
    let p = Project::bare();
    p.ctxkeep(&["init"]).assert().success();
    p.checkpoint(&[])
        .success()
        .stderr(predicates::str::contains("not a git repository"));
    assert!(git_of(&p).is_null());
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c35_unborn_branch_records_the_branch_without_head() {
    let p = Project::bare();
    p.git(&["init", "-q", "-b", "main"]);
    p.ctxkeep(&["init"]).assert().success();
    p.checkpoint(&[]).success();
    let g = git_of(&p);
    assert_eq!(g["branch"], "main");
    assert!(g["head"].is_null());
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c35_detached_head_records_head_without_branch() {
    let p = Project::initialized();
    p.git(&["checkout", "-q", "--detach"]);
    p.checkpoint(&[]).success();
    let g = git_of(&p);
    assert!(g["branch"].is_null());
    assert_eq!(g["head"].as_str(), Some(p.head().as_str()));
}

#[test]
fn c35_shallow_clone_works() {
    let origin = Project::initialized();
    origin.write("a.txt", "a");
    origin.commit_all("second");
    let p = Project::bare();
    let url = format!("file://{}", origin.root().display());
    p.git(&["clone", "-q", "--depth", "1", &url, "."]);
    assert_eq!(
        p.git(&["rev-parse", "--is-shallow-repository"]).trim(),
        "true"
    );
    p.checkpoint(&[]).success();
    assert_eq!(git_of(&p)["head"].as_str(), Some(origin.head().as_str()));
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c36_held_index_lock_does_not_stop_a_checkpoint() {
    let p = Project::initialized();
    p.write(".git/index.lock", "");
    p.write("new.rs", "fn main() {}\n");
    p.checkpoint(&[]).success();
    assert_eq!(git_of(&p)["dirty"][0]["path"], "new.rs");
    assert!(
        p.path(".git/index.lock").exists(),
        "git's lock is not ours to remove"
    );
}

#[test]
fn c36_inherited_git_dir_is_ignored() {
    let p = Project::initialized();
    let other = Project::new();
    other.write("b.txt", "b");
    other.commit_all("other");
    let git_dir = other.path(".git");
    p.ctxkeep(&crate::support::MINIMAL_CHECKPOINT)
        .env("GIT_DIR", &git_dir)
        .env("GIT_WORK_TREE", other.root())
        .assert()
        .success();
    assert_eq!(git_of(&p)["head"].as_str(), Some(p.head().as_str()));
}

#[test]
fn c36_dubious_ownership_is_a_warning_with_a_hint() {
    if euid() != 0 {
        eprintln!("skipped: needs root to give the repository to another user");
        return;
    }
    let p = Project::initialized();
    let ok = StdCommand::new("chown")
        .args(["-R", "65534:65534"])
        .arg(p.root())
        .status();
    assert!(ok.unwrap().success());
    p.checkpoint(&[])
        .success()
        .stderr(predicates::str::contains("safe.directory"));
    assert!(git_of(&p).is_null());
}

#[test]
fn c36_non_utf8_file_names_do_not_break_the_checkpoint() {
    use std::os::unix::ffi::OsStrExt;
    let p = Project::initialized();
    let name = std::ffi::OsStr::from_bytes(b"bad\xffname.txt");
    fs::write(p.root().join(name), "x").unwrap();
    p.checkpoint(&[]).success();
    assert_eq!(git_of(&p)["dirty"][0]["path"], "bad\u{fffd}name.txt");
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn c38_closed_stdout_is_exit_0() {
    let p = with_prose();
    for args in [
        &["resume"][..],
        &["verify"],
        &["checkpoint", "--next", "x"],
        &["--json", "verify"],
    ] {
        // The reading end is closed before ctxkeep starts: every write fails.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = p
            .ctxkeep_std(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A FIFO (or anything but a file) in place of `.ctxkeep/events.jsonl` is
/// never opened (a FIFO would block a reader, or swallow what is written
/// until its buffer fills and the writer blocks): the command works, and
/// says once, naming it, that events are not logged.
#[test]
fn c39_a_fifo_in_place_of_the_event_log_is_named_once_and_never_opened() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let log = p.path(".ctxkeep/events.jsonl");
    let _ = fs::remove_file(&log);
    let ok = StdCommand::new("mkfifo").arg(&log).status().unwrap();
    assert!(ok.success());
    // A checkpoint, and a jump past two stages (two events, and the
    // checkpoint the 90 % stage writes): each process warns once.
    for args in [
        &["checkpoint", "--next", "run the parser tests again"][..],
        &["track", "--tokens", "190000"],
        &["resume"],
    ] {
        let out = finishes(p.ctxkeep_std(args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
        assert_eq!(warnings.len(), 1, "{args:?}: {err}");
        assert!(
            warnings[0].contains(&log.display().to_string())
                && warnings[0].contains("not a regular file"),
            "{err}"
        );
    }
    let kind = fs::symlink_metadata(&log).unwrap().file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
}
