use super::*;

/// `read_settled` with a reader that counts its reads and hands back the count: what it
/// returned, and how many reads it took.
fn counted_reads(dir: &Path, settled: impl Fn(&u32) -> bool) -> (u32, u32) {
    let mut reads = 0;
    let got = read_settled(
        dir,
        || {
            reads += 1;
            reads
        },
        settled,
    );
    (got, reads)
}

/// With git idle, a reader that finds the state file missing is answered from its first
/// read: it is not read again (the wait is only for a git operation under way).
#[test]
fn read_settled_reads_once_when_git_is_idle_and_again_while_git_works() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    assert_eq!(counted_reads(dir.path(), |_| false), (1, 1));
    // git holds its index lock: read again until the read settles.
    std::fs::write(dir.path().join(".git/index.lock"), "").unwrap();
    let (got, _) = counted_reads(dir.path(), |n| *n >= 2);
    assert_eq!(got, 2);
}

fn git_in(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
}

fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap()
}

/// One `rev-parse` answers the top level, both git folders and the index, in the main
/// worktree, a linked one, and from a folder whose path holds a line break (each then
/// asked alone).
#[test]
fn the_layout_names_the_git_folders_and_index_of_each_worktree() {
    let d = tempfile::tempdir().unwrap();
    let main = d.path().join("main");
    std::fs::create_dir(&main).unwrap();
    git_in(&main, &["init", "-q", "-b", "main"]);
    git_in(
        &main,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "one",
        ],
    );
    std::fs::create_dir(main.join("sub")).unwrap();
    let l = layout(&main.join("sub")).unwrap();
    assert_eq!(real(&l.top), real(&main));
    assert_eq!(real(&l.git_dir), real(&main.join(".git")));
    assert_eq!(real(&l.common_dir), real(&main.join(".git")));
    // Relative to the folder git ran in, as git printed it.
    assert_eq!(real(l.index.parent().unwrap()), real(&l.git_dir));

    let linked = d.path().join("linked");
    git_in(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "other",
            linked.to_str().unwrap(),
        ],
    );
    let l = layout(&linked).unwrap();
    assert_eq!(real(&l.top), real(&linked));
    assert_eq!(real(&l.git_dir), real(&main.join(".git/worktrees/linked")));
    assert_eq!(real(&l.common_dir), real(&main.join(".git")));
    assert_eq!(real(l.index.parent().unwrap()), real(&l.git_dir));

    let odd = d.path().join("two\nlines");
    std::fs::create_dir(&odd).unwrap();
    git_in(&odd, &["init", "-q"]);
    let l = layout(&odd).unwrap();
    assert_eq!(real(&l.top), real(&odd));
    assert_eq!(real(&l.git_dir), real(&odd.join(".git")));
    assert_eq!(l.index, l.git_dir.join("index"));
    assert!(layout(d.path()).is_err(), "no repository around");
}

fn dirty_paths(dir: &Path) -> Vec<String> {
    let s = state(dir, &[]).unwrap();
    s.dirty.into_iter().map(|d| d.path).collect()
}

/// A status asked ahead is the one the scope's first reader gets (read when asked, one
/// git status for both); forgotten with the scope's reads, it is never answered and the
/// next reader asks git again; without a scope nothing is asked ahead.
#[test]
fn a_status_asked_ahead_is_answered_once_and_a_forgotten_one_never() {
    let d = tempfile::tempdir().unwrap();
    git_in(d.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(d.path().join("a.txt"), "a").unwrap();

    read_status_ahead(d.path());
    assert!(!shared::is_asked(d.path()), "no scope, nothing asked");

    let _reads = share_reads();
    read_status_ahead(d.path());
    assert!(shared::is_asked(d.path()));
    assert_eq!(dirty_paths(d.path()), ["a.txt"]);
    assert!(!shared::is_asked(d.path()), "taken by the reader");
    // The scope keeps what was read: a file made since is not seen until reads are forgotten.
    std::fs::write(d.path().join("b.txt"), "b").unwrap();
    assert_eq!(dirty_paths(d.path()), ["a.txt"]);
    read_status_ahead(d.path());
    assert!(!shared::is_asked(d.path()), "already read in this scope");

    forget_reads();
    read_status_ahead(d.path());
    forget_reads();
    assert!(!shared::is_asked(d.path()), "forgotten with the reads");
    std::fs::write(d.path().join("c.txt"), "c").unwrap();
    assert_eq!(dirty_paths(d.path()), ["a.txt", "b.txt", "c.txt"]);
}
