//! project-state.md through git: two worktrees and two clones, each
//! checkpointing on its own branch, merged both ways, rebased,
//! cherry-picked, pulled, three branches at once, a prose conflict, and a
//! merge the driver did not make.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::Project;

/// One line of work: a work tree (the project's, a worktree or a clone).
struct Line<'a> {
    p: &'a Project,
    dir: PathBuf,
}

impl<'a> Line<'a> {
    fn main(p: &'a Project) -> Line<'a> {
        Line {
            p,
            dir: p.root().to_path_buf(),
        }
    }

    fn at(p: &'a Project, dir: &Path) -> Line<'a> {
        Line {
            p,
            dir: dir.to_path_buf(),
        }
    }

    fn ctxkeep(&self, args: &[&str]) -> Output {
        self.ctxkeep_at("2026-01-15T12:00:00Z", args)
    }

    fn ctxkeep_at(&self, now: &str, args: &[&str]) -> Output {
        let mut cmd = self.p.ctxkeep_std(args);
        cmd.current_dir(&self.dir).env("CTXKEEP_NOW", now);
        cmd.output().unwrap()
    }

    /// git in this work tree; panics when it fails.
    fn git(&self, args: &[&str]) -> String {
        let dir = self.dir.to_string_lossy().into_owned();
        let mut all = vec!["-C", dir.as_str()];
        all.extend_from_slice(args);
        self.p.git(&all)
    }

    /// git in this work tree, however it ends.
    fn git_status(&self, args: &[&str]) -> Output {
        let mut cmd = self.p.sh("git \"$@\"");
        cmd.arg("git").args(args).current_dir(&self.dir);
        cmd.output().unwrap()
    }

    /// A checkpoint at `now` whose fields all name `who`, committed.
    fn checkpoint(&self, now: &str, who: &str) {
        let out = self.ctxkeep_at(
            now,
            &[
                "checkpoint",
                "--phase",
                &format!("phase of {who}"),
                "--task",
                &format!("task of {who} in src/{who}.rs"),
                "--agent",
                &format!("agent-{who}"),
                "--next",
                &format!("run the tests of {who}"),
                "--decision",
                &format!("decided by {who}"),
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", &format!("checkpoint of {who}")]);
    }

    fn state(&self) -> String {
        std::fs::read_to_string(self.dir.join("project-state.md")).unwrap()
    }

    fn write_state(&self, text: &str) {
        std::fs::write(self.dir.join("project-state.md"), text).unwrap();
    }

    /// Adds a line of prose before the marked block, committed.
    fn prose_before_block(&self, line: &str) {
        let s = self.state();
        let at = s.find("<!-- ctxkeep:begin -->").unwrap();
        self.write_state(&format!("{}{line}\n\n{}", &s[..at], &s[at..]));
        self.git(&["commit", "-q", "-am", "prose"]);
    }

    /// Adds a line of prose at the end of the file, committed.
    fn prose_at_end(&self, line: &str) {
        self.write_state(&format!("{}\n{line}\n", self.state()));
        self.git(&["commit", "-q", "-am", "prose at the end"]);
    }

    fn json(&self, args: &[&str]) -> (serde_json::Value, i32) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.ctxkeep(&all);
        let v = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
        (v, out.status.code().unwrap_or(-1))
    }

    /// verify passes (warnings allowed).
    fn verifies(&self) {
        let out = self.ctxkeep(&["verify"]);
        assert!(
            out.status.success(),
            "verify failed:\n{}{}\n{}",
            text(&out.stdout),
            text(&out.stderr),
            self.state()
        );
    }

    fn resume(&self) -> String {
        let out = self.ctxkeep(&["resume"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    }

    /// The checkpoint's and history's ids: never one twice.
    fn ids_unique(&self) -> Vec<String> {
        let (v, _) = self.json(&["resume"]);
        let c = &v["checkpoint"];
        let front = self.front();
        let history: Vec<String> = front["history"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|h| h["id"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let mut all: Vec<String> = vec![c["id"].as_str().unwrap().to_string()];
        all.extend(history);
        let mut seen = all.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(
            seen.len(),
            all.len(),
            "an id twice: {all:?}\n{}",
            self.state()
        );
        all
    }

    /// The front matter as JSON.
    fn front(&self) -> serde_json::Value {
        let s = self.state();
        let body = s.strip_prefix("---\n").unwrap();
        let end = body.find("\n---\n").unwrap();
        let y: serde_yaml::Value = serde_yaml::from_str(&body[..end]).unwrap();
        serde_json::to_value(y).unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A project with a first checkpoint committed on main, and the driver set up.
fn project() -> Project {
    let p = Project::initialized();
    let main = Line::main(&p);
    main.checkpoint("2026-01-15T10:00:00Z", "base");
    p
}

/// A worktree of `p` on a new branch `branch`, beside the project.
fn worktree<'a>(p: &'a Project, parent: &Path, branch: &str) -> Line<'a> {
    let dir = parent.join(branch);
    Line::main(p).git(&["worktree", "add", "-q", "-b", branch, dir.to_str().unwrap()]);
    Line::at(p, &dir)
}

fn assert_both_lines(l: &Line, a: &str, b: &str) {
    let prompt = l.resume();
    for who in [a, b] {
        assert!(
            prompt.contains(&format!("run the tests of {who}")),
            "resume lacks {who}:\n{prompt}"
        );
    }
    assert!(
        prompt.contains("Merged from another line of work"),
        "{prompt}"
    );
    let state = l.state();
    assert!(
        state.contains("### Merged from another line of work"),
        "{state}"
    );
}

/// The fields a merge settles, for comparing two merges.
fn settled(l: &Line) -> serde_json::Value {
    let f = l.front();
    let c = &f["checkpoint"];
    serde_json::json!({
        "id": c["id"], "phase": c["phase"], "next_action": c["next_action"],
        "decisions": c["decisions"], "merged": c["merged"], "history": f["history"],
    })
}

#[test]
fn init_sets_up_the_driver_and_verify_notes_a_clone_without_it() {
    let p = Project::initialized();
    assert!(p
        .read(".gitattributes")
        .contains("project-state.md merge=ctxkeep"));
    let driver = p.git(&["config", "--local", "merge.ctxkeep.driver"]);
    assert!(
        driver.trim_end().ends_with("merge-file %O %A %B %P"),
        "{driver}"
    );
    p.ctxkeep(&[
        "checkpoint",
        "--phase",
        "p",
        "--task",
        "t in README.md",
        "--agent",
        "a",
        "--next",
        "run the tests",
    ])
    .assert()
    .success();
    p.commit_all("checkpoint");

    // A fresh clone has the attributes (committed) but not the config.
    let parent = tempfile::tempdir().unwrap();
    let clone = parent.path().join("clone");
    p.git(&[
        "clone",
        "-q",
        p.root().to_str().unwrap(),
        clone.to_str().unwrap(),
    ]);
    let c = Line::at(&p, &clone);
    let (v, code) = c.json(&["verify"]);
    assert_eq!(code, 0, "{v}");
    let warned = v["warnings"].as_array().unwrap();
    assert!(warned.iter().any(|w| w["code"] == "CK510"), "{v}");
    // init in the clone adds it; the file itself is untouched.
    let before = c.state();
    let out = c.ctxkeep(&["init"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(c.state(), before);
    let (v, _) = c.json(&["verify"]);
    assert!(
        !v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "CK510"),
        "{v}"
    );

    // --no-merge-driver leaves git alone.
    let q = Project::new();
    q.ctxkeep(&["init", "--no-merge-driver"]).assert().success();
    assert!(!q.path(".gitattributes").exists());
}

#[test]
fn two_worktrees_merge_both_ways_to_the_same_checkpoint() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "feature");
    // Each worktree has its own file and its own .ctxkeep/.
    main.prose_before_block("Main's note: the lexer stays hand-written.");
    b.prose_at_end("Feature's note: CRLF files are kept as they are.");
    main.checkpoint("2026-01-15T10:10:00Z", "main");
    b.checkpoint("2026-01-15T10:20:00Z", "feature");
    assert!(b.dir.join(".ctxkeep/checkpoints/ckpt-0002.json").is_file());
    assert!(main.state().contains("ckpt-0002") && b.state().contains("ckpt-0002"));
    let main_tip = main.git(&["rev-parse", "HEAD"]).trim().to_string();
    let b_tip = b.git(&["rev-parse", "HEAD"]).trim().to_string();

    // feature into main.
    main.git(&["merge", "-q", "--no-edit", "feature"]);
    main.verifies();
    assert_both_lines(&main, "main", "feature");
    let ids = main.ids_unique();
    assert_eq!(ids[0], "ckpt-0004", "{ids:?}");
    let merged = main.state();
    assert!(
        merged.contains("\nMain's note: the lexer stays hand-written.\n\n<!-- ctxkeep:begin -->")
    );
    assert!(
        merged.ends_with(
            "<!-- ctxkeep:end -->\n\nFeature's note: CRLF files are kept as they are.\n"
        ),
        "{merged}"
    );
    // The newer line's fields; the other line recorded.
    let f = main.front();
    assert_eq!(f["checkpoint"]["next_action"], "run the tests of feature");
    assert_eq!(f["checkpoint"]["trigger"], "merge");
    assert_eq!(
        f["checkpoint"]["merged"][0]["next_action"],
        "run the tests of main"
    );
    assert_eq!(f["checkpoint"]["merged"][0]["branch"], "main");
    assert_eq!(
        f["checkpoint"]["decisions"],
        serde_json::json!(["decided by feature", "decided by main"])
    );
    assert!(main
        .dir
        .join(".ctxkeep/checkpoints/ckpt-0004.json")
        .is_file());
    let one_way = settled(&main);

    // main into feature, from the same two tips.
    main.git(&["reset", "-q", "--hard", &main_tip]);
    b.git(&["reset", "-q", "--hard", &b_tip]);
    b.git(&["merge", "-q", "--no-edit", "main"]);
    b.verifies();
    assert_both_lines(&b, "main", "feature");
    b.ids_unique();
    assert_eq!(settled(&b), one_way);
    let other = b.state();
    assert!(
        other.contains("\nMain's note: the lexer stays hand-written.\n\n<!-- ctxkeep:begin -->")
    );
    assert!(other.ends_with("\nFeature's note: CRLF files are kept as they are.\n"));

    // A checkpoint after the merge goes on from the merged one.
    main.git(&["merge", "-q", "--no-edit", "feature"]);
    main.checkpoint("2026-01-15T12:30:00Z", "after");
    let ids = main.ids_unique();
    assert_eq!(ids[0], "ckpt-0005", "{ids:?}");
    main.verifies();
}

#[test]
fn rebase_and_cherry_pick_run_the_driver() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "feature");
    main.checkpoint("2026-01-15T10:10:00Z", "main");
    b.prose_at_end("Feature's prose.");
    b.checkpoint("2026-01-15T10:20:00Z", "feature");
    b.checkpoint("2026-01-15T10:30:00Z", "feature-two");
    let b_tip = b.git(&["rev-parse", "HEAD"]).trim().to_string();

    b.git(&["rebase", "-q", "main"]);
    b.verifies();
    assert_both_lines(&b, "main", "feature-two");
    b.ids_unique();
    assert!(b.state().ends_with("\nFeature's prose.\n"));

    // The feature's last checkpoint alone, picked onto main.
    main.git(&["cherry-pick", &b_tip]);
    main.verifies();
    assert_both_lines(&main, "main", "feature-two");
    main.ids_unique();
}

#[test]
fn two_clones_pull_each_others_checkpoints() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let origin = parent.path().join("origin.git");
    p.git(&[
        "clone",
        "-q",
        "--bare",
        p.root().to_str().unwrap(),
        origin.to_str().unwrap(),
    ]);
    let clone = |name: &str| {
        let dir = parent.path().join(name);
        p.git(&[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            dir.to_str().unwrap(),
        ]);
        let l = Line::at(&p, &dir);
        // Each machine runs init once: the driver is in its own config.
        let out = l.ctxkeep(&["init"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        l
    };
    let one = clone("one");
    let two = clone("two");
    one.git(&["checkout", "-q", "-b", "one"]);
    one.prose_before_block("Machine one's prose.");
    one.checkpoint("2026-01-15T10:10:00Z", "one");
    one.git(&["push", "-q", "origin", "one"]);
    two.prose_at_end("Machine two's prose.");
    two.checkpoint("2026-01-15T10:20:00Z", "two");
    let two_tip = two.git(&["rev-parse", "HEAD"]).trim().to_string();

    two.git(&["push", "-q", "origin", "HEAD:two"]);
    two.git(&["pull", "-q", "--no-rebase", "--no-edit", "origin", "one"]);
    two.verifies();
    assert_both_lines(&two, "one", "two");
    two.ids_unique();
    // The other machine pulls the other way and gets the same checkpoint.
    one.git(&["pull", "-q", "--no-rebase", "--no-edit", "origin", "two"]);
    one.verifies();
    assert_both_lines(&one, "one", "two");
    assert_eq!(settled(&one), settled(&two));
    assert_eq!(one.state(), two.state(), "the same file on both machines");
    let s = two.state();
    assert!(
        s.contains("\nMachine one's prose.\n\n<!-- ctxkeep:begin -->"),
        "{s}"
    );
    assert!(s.ends_with("\nMachine two's prose.\n"), "{s}");

    two.git(&["reset", "-q", "--hard", &two_tip]);
    two.git(&["pull", "-q", "--rebase", "origin", "one"]);
    two.verifies();
    assert_both_lines(&two, "one", "two");
    two.ids_unique();
}

#[test]
fn three_branches_merge_into_one() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "b");
    let c = worktree(&p, parent.path(), "c");
    main.checkpoint("2026-01-15T10:10:00Z", "main");
    b.checkpoint("2026-01-15T10:20:00Z", "bee");
    c.checkpoint("2026-01-15T10:30:00Z", "sea");
    // One at a time: git's octopus strategy runs no merge driver.
    main.git(&["merge", "-q", "--no-edit", "b"]);
    main.git(&["merge", "-q", "--no-edit", "c"]);
    main.verifies();
    let prompt = main.resume();
    for who in ["main", "bee", "sea"] {
        assert!(
            prompt.contains(&format!("run the tests of {who}")),
            "{prompt}"
        );
    }
    main.ids_unique();
}

#[test]
fn a_prose_conflict_is_left_for_the_user_and_reported_with_its_lines() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "feature");
    main.prose_at_end("The parser is done.");
    b.prose_at_end("The parser is not done.");
    main.checkpoint("2026-01-15T10:10:00Z", "main");
    b.checkpoint("2026-01-15T10:20:00Z", "feature");
    let out = main.git_status(&["merge", "--no-edit", "feature"]);
    assert!(!out.status.success(), "the merge should stop on the prose");
    let s = main.state();
    assert!(
        s.contains(
            "<<<<<<< ours\nThe parser is done.\n=======\nThe parser is not done.\n>>>>>>> theirs\n"
        ),
        "{s}"
    );
    // The front matter was merged all the same.
    let front_end = s[4..].find("\n---\n").unwrap();
    assert!(!s[..front_end].contains("<<<<<<<"), "{s}");
    let first = s.lines().position(|l| l.starts_with("<<<<<<<")).unwrap() + 1;
    let last = s.lines().position(|l| l.starts_with(">>>>>>>")).unwrap() + 1;
    let (v, code) = main.json(&["verify"]);
    assert_eq!(code, 65, "{v}");
    assert_eq!(v["errors"][0]["code"], "CK123");
    assert_eq!(v["errors"][0]["line"], first);
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("lines {first}–{last}")),
        "{v}"
    );
    let out = main.ctxkeep(&["resume"]);
    assert_eq!(out.status.code(), Some(65));
    let err = text(&out.stderr);
    assert!(
        err.contains("unresolved merge conflict in")
            && err.contains(&format!("lines {first}–{last}; run `ctxkeep resolve`")),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // resolve cannot settle a real prose conflict: it says so, keeps the prose.
    let out = main.ctxkeep(&["resolve"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("prose (lines {first}–{last})")),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(main.state(), s, "the prose is the user's to settle");
}

#[test]
fn without_the_driver_every_command_names_the_conflict_and_resolve_finishes() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "feature");
    main.prose_before_block("Main's prose.");
    b.prose_at_end("Feature's prose.");
    main.checkpoint("2026-01-15T10:10:00Z", "main");
    b.checkpoint("2026-01-15T10:20:00Z", "feature");
    // As in a clone that never ran init: git's own text merge.
    main.git(&["config", "--local", "--remove-section", "merge.ctxkeep"]);
    let out = main.git_status(&["merge", "--no-edit", "feature"]);
    assert!(!out.status.success());
    let conflicted = main.state();
    let first = conflicted
        .lines()
        .position(|l| l.starts_with("<<<<<<<"))
        .unwrap()
        + 1;
    assert!(
        first < 20,
        "the conflict starts in the front matter:\n{conflicted}"
    );
    for args in [
        &["resume"][..],
        &["status"],
        &["log"],
        &["checkpoint", "--next", "x"],
        &["init"],
    ] {
        let out = main.ctxkeep(args);
        assert_eq!(
            out.status.code(),
            Some(65),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(
            err.contains("unresolved merge conflict in")
                && err.contains(&format!("lines {first}–"))
                && err.contains("run `ctxkeep resolve`"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("could not find expected"), "{err}");
    }
    let (v, code) = main.json(&["verify"]);
    assert_eq!(code, 65);
    assert_eq!(v["errors"][0]["code"], "CK123");
    assert_eq!(main.state(), conflicted, "nothing was written");

    // --dry-run prints the result and changes nothing.
    let out = main.ctxkeep(&["resolve", "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("trigger: merge"), "{printed}");
    assert_eq!(main.state(), conflicted);
    // From git's index stages.
    let (v, code) = main.json(&["resolve"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["source"], "index");
    assert_eq!(main.state(), printed);
    main.verifies();
    assert_both_lines(&main, "main", "feature");
    main.ids_unique();
    let s = main.state();
    assert!(s.contains("\nMain's prose.\n\n<!-- ctxkeep:begin -->"));
    assert!(s.ends_with("\nFeature's prose.\n"));

    // A conflicted file committed as it is (a merge on a web page): from the markers.
    main.write_state(&conflicted);
    main.git(&["commit", "-q", "-am", "merged on the web"]);
    let (v, code) = main.json(&["resolve"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["source"], "markers");
    main.verifies();
    assert_both_lines(&main, "main", "feature");
    main.ids_unique();
    // Nothing left: resolve says so and changes nothing.
    let before = main.state();
    let out = main.ctxkeep(&["resolve"]);
    assert!(out.status.success());
    assert_eq!(main.state(), before);
}

#[test]
fn a_settings_conflict_is_reported_by_key() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "feature");
    main.ctxkeep(&["init", "--window", "100000"]);
    main.git(&["commit", "-q", "-am", "window"]);
    b.ctxkeep(&["init", "--window", "150000"]);
    b.ctxkeep(&["init", "--stages", "70:warn,90:checkpoint"]);
    b.git(&["commit", "-q", "-am", "window and stages"]);
    let out = main.git_status(&["merge", "--no-edit", "feature"]);
    assert!(!out.status.success());
    let s = main.state();
    assert!(
        s.contains("<<<<<<< ours\nwindow: 100000\n=======\nwindow: 150000\n>>>>>>> theirs\n"),
        "{s}"
    );
    // The key only one side changed is taken.
    assert!(s.contains("at: 70"), "{s}");
}

#[test]
fn hooks_and_commands_in_a_worktree_use_its_own_file() {
    let p = project();
    let main = Line::main(&p);
    // A worktree inside the project (as Claude Code makes them), on a
    // branch whose file was removed: the parent's file is not its own.
    let inner = p.root().join(".claude/worktrees/w");
    main.git(&["worktree", "add", "-q", "-b", "w", inner.to_str().unwrap()]);
    let w = Line::at(&p, &inner);
    assert!(w.dir.join("project-state.md").is_file());
    w.checkpoint("2026-01-15T10:30:00Z", "inner");
    assert!(inner.join(".ctxkeep/checkpoints/ckpt-0002.json").is_file());
    assert!(!main.state().contains("run the tests of inner"));
    let (v, code) = w.json(&["status"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["last_checkpoint"]["id"], "ckpt-0002");
    // A hook run from the outer checkout, for an agent working in the
    // worktree, writes the worktree's file.
    let main_before = main.state();
    let payload = serde_json::json!({
        "session_id": "s", "transcript_path": inner.join("none.jsonl"), "cwd": inner,
        "hook_event_name": "PreCompact", "trigger": "manual",
    });
    let out = p
        .ctxkeep(&["hook", "claude-code", "--strict"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(w.state().contains("trigger: pre-compact"), "{}", w.state());
    assert_eq!(main.state(), main_before);
    w.git(&["rm", "-qf", "project-state.md"]);
    let out = w.ctxkeep(&["status"]);
    assert_eq!(out.status.code(), Some(66), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains(inner.to_str().unwrap()), "{err}");
}

/// Two sides that each fit, whose merge would not (a reader takes 64 KiB of
/// front matter): the driver keeps ours and leaves the merge to settle by
/// hand, rather than writing a file no command reads.
#[test]
fn a_merge_no_reader_could_take_back_is_left_as_ours() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "feature");
    let add = |l: &Line, key: &str, after: &str| {
        let s = l.state().replacen(
            after,
            &format!("{after}{key}: \"{}\"\n", "x".repeat(40_000)),
            1,
        );
        std::fs::write(l.dir.join("project-state.md"), s).unwrap();
        l.git(&["commit", "-q", "-am", key]);
    };
    add(&main, "notes_of_main", "ctxkeep: 1\n");
    add(&b, "notes_of_feature", "encoding: o200k_base\n");
    let ours = main.state();
    let out = main.git_status(&["merge", "--no-edit", "feature"]);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert_eq!(main.state(), ours);
    let status = main.ctxkeep(&["status"]);
    assert!(status.status.success(), "{}", text(&status.stderr));
}

#[test]
fn action_items_of_both_lines_are_merged_and_an_item_done_on_either_is_done() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let items = |l: &Line, now: &str, args: &[&str]| {
        let mut all = vec!["checkpoint"];
        all.extend_from_slice(args);
        let out = l.ctxkeep_at(now, &all);
        assert!(out.status.success(), "{}", text(&out.stderr));
        l.git(&["commit", "-q", "-am", "action items"]);
    };
    items(
        &main,
        "2026-01-15T10:05:00Z",
        &[
            "--remaining",
            "write the lexer in src/lexer.rs",
            "--remaining",
            "document the grammar in docs/grammar.md",
        ],
    );
    let b = worktree(&p, parent.path(), "feature");
    items(
        &main,
        "2026-01-15T10:10:00Z",
        &[
            "--next",
            "run the tests of main",
            "--done",
            "write the lexer in src/lexer.rs",
            "--remaining",
            "add a fuzz target for the lexer",
        ],
    );
    items(
        &b,
        "2026-01-15T10:20:00Z",
        &[
            "--next",
            "run the tests of feature",
            "--remaining",
            "release 0.2 to crates.io",
        ],
    );
    let main_tip = main.git(&["rev-parse", "HEAD"]).trim().to_string();
    main.git(&["merge", "-q", "--no-edit", "feature"]);
    main.verifies();
    let c = &main.front()["checkpoint"];
    assert_eq!(c["trigger"], "merge");
    assert_eq!(
        c["remaining"],
        serde_json::json!([
            "document the grammar in docs/grammar.md",
            "release 0.2 to crates.io",
            "add a fuzz target for the lexer"
        ])
    );
    assert_eq!(
        c["done"],
        serde_json::json!(["write the lexer in src/lexer.rs"])
    );
    let prompt = main.resume();
    assert!(
        prompt.contains("What remains:\n- document the grammar in docs/grammar.md\n"),
        "{prompt}"
    );
    assert!(main
        .state()
        .contains("- [x] write the lexer in src/lexer.rs"));
    // The other way round: the same lists.
    let one_way = (c["remaining"].clone(), c["done"].clone());
    main.git(&["reset", "-q", "--hard", &main_tip]);
    b.git(&["merge", "-q", "--no-edit", "main"]);
    let c = &b.front()["checkpoint"];
    assert_eq!((c["remaining"].clone(), c["done"].clone()), one_way);
}

/// The driver archives the merged checkpoint when git runs it; a merge then aborted leaves
/// the state file as it was, and `log` does not list a checkpoint no line of work holds,
/// before or after the next checkpoint. A merge concluded lists it, and keeps it listed.
#[test]
fn an_aborted_merge_leaves_no_checkpoint_in_the_log() {
    let p = project();
    let parent = tempfile::tempdir().unwrap();
    let main = Line::main(&p);
    let b = worktree(&p, parent.path(), "feature");
    main.prose_at_end("The parser is done.");
    b.prose_at_end("The parser is not done.");
    main.checkpoint("2026-01-15T10:10:00Z", "main");
    b.checkpoint("2026-01-15T10:20:00Z", "feature");
    let out = main.git_status(&["merge", "--no-edit", "feature"]);
    assert!(!out.status.success(), "the merge should stop on the prose");
    let merged = main.front()["checkpoint"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    main.git(&["merge", "--abort"]);
    let logged = |l: &Line| -> Vec<String> {
        let (v, code) = l.json(&["log"]);
        assert_eq!(code, 0, "{v}");
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        !logged(&main).contains(&merged),
        "{merged} listed after the abort"
    );
    main.checkpoint("2026-01-15T10:30:00Z", "main again");
    assert!(
        !logged(&main).contains(&merged),
        "{merged} listed after the abort"
    );

    // The same merge, concluded: listed, and still after the next checkpoint.
    let c = worktree(&p, parent.path(), "second");
    c.checkpoint("2026-01-15T10:40:00Z", "second");
    main.checkpoint("2026-01-15T10:45:00Z", "main once more");
    let out = main.git_status(&["merge", "--no-edit", "second"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged = main.front()["checkpoint"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(logged(&main).contains(&merged), "{merged} not listed");
    main.checkpoint("2026-01-15T10:50:00Z", "after the merge");
    assert!(logged(&main).contains(&merged), "{merged} not listed");
}
