//! What the recogniser finds in the command lines agents run, and what it leaves alone.

use std::path::Path;

use super::*;

fn kind(line: &str) -> Option<Kind> {
    recognise(line).map(|f| f.kind)
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn commands_that_discard_work_are_recognised() {
    assert_eq!(kind("git reset --hard"), Some(Kind::ResetHard));
    assert_eq!(
        kind("cd src && git reset --hard HEAD~1"),
        Some(Kind::ResetHard)
    );
    assert_eq!(kind("git -C repo reset --hard"), Some(Kind::ResetHard));
    assert_eq!(
        kind("git checkout -- src/a.rs b.rs"),
        Some(Kind::Discard(v(&["src/a.rs", "b.rs"])))
    );
    assert_eq!(kind("git checkout ."), Some(Kind::Discard(v(&["."]))));
    assert_eq!(kind("git restore src/"), Some(Kind::Discard(v(&["src/"]))));
    assert_eq!(
        kind("git restore --source HEAD~2 a.rs"),
        Some(Kind::Discard(v(&["a.rs"])))
    );
    assert_eq!(kind("git clean -fd"), Some(Kind::Clean));
    assert_eq!(kind("git clean -xdf"), Some(Kind::Clean));
    assert_eq!(kind("git stash drop"), Some(Kind::StashDrop));
    assert_eq!(
        kind("rm -rf build src"),
        Some(Kind::Remove(v(&["build", "src"])))
    );
    assert_eq!(
        kind("sudo rm -r -f 'my dir'"),
        Some(Kind::Remove(v(&["my dir"])))
    );
    assert_eq!(kind("git push --force"), Some(Kind::PushForce(vec![])));
    assert_eq!(
        kind("git push -f origin main"),
        Some(Kind::PushForce(v(&["main"])))
    );
    assert_eq!(
        kind("git push origin +main"),
        Some(Kind::PushForce(v(&["+main"])))
    );
    assert_eq!(
        recognise("cargo test; git reset --hard").unwrap().command,
        "git reset --hard"
    );
}

#[test]
fn everyday_commands_are_not() {
    for line in [
        "cargo test",
        "git status",
        "git reset HEAD a.rs",
        "git reset --soft HEAD~1",
        "git checkout -b feature/x",
        "git checkout -",
        "git restore --staged a.rs",
        "git clean -n",
        "git clean -nd",
        "git stash",
        "git stash pop",
        "git push origin main",
        "grep -rn git src | head",
        "echo 'rm -rf /' > notes.txt",
    ] {
        assert_eq!(kind(line), None, "{line}");
    }
}

/// The command lines issue 43's sweep found discarding work unseen: the
/// documented commands behind wrappers, shells and aliases, and the
/// other deleting forms. `ALL` for a command whose paths are unknown.
pub(crate) const LISTED: [(&str, &str); 63] = [
    ("bash -c 'git reset --hard'", "reset"),
    ("sh -c \"git checkout -- .\"", "."),
    ("bash -lc 'cd repo && git clean -fd'", "clean"),
    ("zsh -c 'rm -rf src'", "src"),
    ("bash -c 'git stash clear'", "stash"),
    ("eval \"git reset --hard\"", "reset"),
    ("eval 'rm -rf src'", "src"),
    ("eval \"$CLEANUP\"", "unsure"),
    ("(git reset --hard)", "reset"),
    ("(cd src && rm -rf .)", "."),
    ("{ git reset --hard; }", "reset"),
    ("echo $(git reset --hard)", "reset"),
    ("out=`git checkout -- src`", "src"),
    ("timeout 60 git reset --hard", "reset"),
    ("timeout -s KILL 60 git clean -fdx", "clean"),
    ("env -i git reset --hard", "reset"),
    ("env -i PATH=/usr/bin git checkout .", "."),
    ("nohup git reset --hard &", "reset"),
    ("nice git reset --hard", "reset"),
    ("nice -n 10 rm -rf src", "src"),
    ("command -p git reset --hard", "reset"),
    ("\\git reset --hard", "reset"),
    ("sudo -u dev git reset --hard", "reset"),
    ("git nuke", "alias"),
    ("git -c color.ui=never nuke src", "alias"),
    ("echo | xargs git reset --hard", "reset"),
    (
        "git diff --name-only | xargs -I{} git checkout -- {}",
        "ALL",
    ),
    ("make clean", "unsure"),
    ("make -C build distclean", "unsure"),
    ("rm -r src", "src"),
    ("rm -R src/", "src/"),
    ("rm notes.txt", "notes.txt"),
    ("rm -f src/*.rs", "src/*.rs"),
    ("rm -rf \"$D\"", "$D"),
    ("rm -rf -- \"$DIR/src\"", "$DIR/src"),
    ("unlink notes.txt", "notes.txt"),
    ("git rm -f src/lib.rs", "src/lib.rs"),
    ("git rm -r src", "src"),
    ("find . -name '*.rs' -delete", "."),
    ("find src -type f -delete", "src"),
    ("find . -name '*.tmp' -exec rm {} \\;", "."),
    ("find src -exec rm -f {} +", "src"),
    ("git ls-files -o | xargs rm", "ALL"),
    ("ls | xargs rm -f", "ALL"),
    ("git checkout HEAD src", "src"),
    ("git checkout main src/lib.rs", "src/lib.rs"),
    ("git switch --discard-changes main", "reset"),
    // Read by the pipeline from the disk and the refs (`git checkout src` is a path, `git
    // checkout main` a switch), and inside submodules.
    ("git checkout src", "src"),
    ("git checkout src/a.rs lib", "lib"),
    ("git checkout '*.rs'", "*.rs"),
    ("git -C sub checkout -- a.rs", "sub/a.rs"),
    ("cd sub && git checkout -- a.rs", "sub/a.rs"),
    ("git submodule foreach git reset --hard", "reset"),
    ("git submodule foreach --recursive 'git checkout .'", "ALL"),
    ("git submodule update --force", "reset"),
    // Another work tree or repository named on git's line; paths from a file.
    ("git --work-tree=. reset --hard", "reset"),
    (
        "git --work-tree=../app --git-dir=../app/.git checkout -- a.rs",
        "unsure",
    ),
    ("git --git-dir .git --work-tree sub checkout .", "unsure"),
    ("git -C sub -C inner reset --hard", "reset"),
    ("git checkout --pathspec-from-file=paths.txt", "ALL"),
    ("git checkout --pathspec-from-file paths.txt", "ALL"),
    ("git restore --pathspec-from-file=paths.txt", "ALL"),
    ("git rm --pathspec-from-file=- < paths.txt", "ALL"),
];

/// Everyday commands that must stay free of git (no process started).
pub(crate) const HARMLESS: [&str; 33] = [
    "cargo test",
    "git status",
    "git log --oneline -5",
    "git diff",
    "ls -la",
    "grep -rn 'rm -rf' src",
    "echo \"git reset --hard\" > notes.txt",
    "git commit -m \"rm -rf the old parser\"",
    "git checkout -b feature/x",
    "git checkout -",
    "git checkout -B main origin/main",
    "git switch main",
    "git stash",
    "git stash pop",
    "git rm --cached a.rs",
    "git restore --staged a.rs",
    "git clean -n",
    "git push origin main",
    "make",
    "make test",
    "find . -name '*.rs'",
    "find src -exec grep -n foo {} \\;",
    "command -v git",
    "bash script.sh",
    "sh -c 'cargo build'",
    "git ls-files | xargs wc -l",
    "nice cargo build",
    "timeout 60 cargo test",
    "env RUST_LOG=debug cargo run",
    "git config --get-regexp alias",
    "bash -c 'git status && git log'",
    "git --work-tree=. status",
    "git --git-dir=.git log -1",
];

/// What a listed line is expected to be read as.
fn reads_as(kind: &Kind, expected: &str) -> bool {
    match (kind, expected) {
        (Kind::ResetHard, "reset") | (Kind::Clean, "clean") | (Kind::StashDrop, "stash") => true,
        (Kind::Alias(..), "alias") | (Kind::Unsure, "unsure") => true,
        (Kind::Discard(p) | Kind::Remove(p), "ALL") => p.iter().all(|p| {
            covers(
                std::slice::from_ref(p),
                Path::new("/r"),
                Path::new("/r"),
                "any/file.rs",
            )
        }),
        (Kind::Discard(p) | Kind::Remove(p), path) => p.iter().any(|p| p == path),
        (Kind::Checkout { operands, .. }, path) => operands.iter().any(|p| p == path),
        _ => false,
    }
}

#[test]
fn every_listed_form_is_caught_and_every_harmless_one_is_not() {
    let missed: Vec<String> = LISTED
        .iter()
        .filter(|(line, expected)| {
            !recognise_all(line)
                .iter()
                .any(|f| reads_as(&f.kind, expected))
        })
        .map(|(line, _)| format!("{line}: {:?}", recognise_all(line)))
        .collect();
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
    let flagged: Vec<String> = HARMLESS
        .iter()
        .filter(|line| !recognise_all(line).is_empty())
        .map(|line| format!("{line}: {:?}", recognise_all(line)))
        .collect();
    assert!(flagged.is_empty(), "flagged:\n{}", flagged.join("\n"));
}

#[test]
fn a_checkout_without_double_dash_is_left_to_the_disk_and_the_refs() {
    let checkout = |within: &str, operands: &[&str]| Kind::Checkout {
        within: within.into(),
        operands: v(operands),
    };
    assert_eq!(kind("git checkout main"), Some(checkout("", &["main"])));
    assert_eq!(
        kind("git checkout HEAD src"),
        Some(checkout("", &["HEAD", "src"]))
    );
    assert_eq!(
        kind("git -C sub checkout main"),
        Some(checkout("sub", &["main"]))
    );
    // After a `cd`, read from both folders.
    let found: Vec<Kind> = recognise_all("cd sub && git checkout src")
        .into_iter()
        .map(|f| f.kind)
        .collect();
    assert_eq!(
        found,
        vec![checkout("", &["src"]), checkout("sub", &["src"])]
    );
    // The switches that need no reading.
    for line in [
        "git checkout -b x",
        "git checkout -",
        "git checkout --orphan x",
    ] {
        assert_eq!(kind(line), None, "{line}");
    }
}

#[test]
fn a_found_command_is_named_as_the_line_gives_it() {
    assert_eq!(
        recognise("cargo test; bash -c 'git reset --hard'")
            .unwrap()
            .command,
        "git reset --hard"
    );
    // Nested past reason is taken as destructive, not missed.
    let deep = format!("{}git status", "eval ".repeat(9));
    assert_eq!(kind(&deep), Some(Kind::Unsure));
}

#[test]
fn paths_are_matched_from_the_working_directory() {
    let top = Path::new("/r");
    let at =
        |cwd: &str, targets: &[&str], path: &str| covers(&v(targets), top, Path::new(cwd), path);
    assert!(at("/r", &["."], "src/a.rs"));
    assert!(at("/r/src", &["."], "src/a.rs"));
    assert!(!at("/r/docs", &["."], "src/a.rs"));
    assert!(at("/r", &["src"], "src/a.rs"));
    assert!(at("/r", &["./src/"], "src/a.rs"));
    assert!(!at("/r", &["src"], "srcx/a.rs"));
    assert!(at("/r/docs", &["../src"], "src/a.rs"));
    assert!(at("/r", &["*.rs"], "src/a.rs"));
    assert!(!at("/r", &["build"], "src/a.rs"));
    assert!(at("/elsewhere", &["/r/src"], "src/a.rs"));
    assert!(!at("/r", &["/tmp/x"], "src/a.rs"));
    assert!(at("/r/src", &["../../r"], "src/a.rs"));
}
