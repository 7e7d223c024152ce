//! docs/model-facing.md is what the binary says: `bench/model-facing` drives this build's hooks
//! in a throwaway project and prints every text that reaches the model; the page's texts and
//! its table's kinds must be those, ids, nonces, hashes and times aside. Skips where
//! `python3` is missing.

use std::path::Path;
use std::process::Command;

/// The page's (or the script's) texts by title, with what changes from run to run made equal.
fn texts(markdown: &str) -> Vec<(String, String)> {
    let normal = |t: &str| {
        let t = regex::Regex::new(r"[0-9a-f]{40}")
            .unwrap()
            .replace_all(t, "HASH");
        let t = regex::Regex::new(r"\(ctxkeep \d{8}\)")
            .unwrap()
            .replace_all(&t, "(ctxkeep NONCE)");
        let t = regex::Regex::new(r"/\S*/proj/")
            .unwrap()
            .replace_all(&t, "/PROJ/");
        let t = regex::Regex::new(r"; \d+ tokens\.")
            .unwrap()
            .replace_all(&t, "; N tokens.");
        t.into_owned()
    };
    markdown
        .split("\n### ")
        .skip(1)
        .map(|section| {
            let (title, rest) = section.split_once('\n').unwrap_or((section, ""));
            let body = rest.split("\n## ").next().unwrap_or(rest);
            (title.trim().to_string(), normal(body.trim()))
        })
        .collect()
}

#[test]
fn the_model_facing_page_is_what_the_binary_gives_the_model() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 is missing: skipped");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("bench/model-facing"))
        .arg(assert_cmd::cargo::cargo_bin!("ctxkeep"))
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = String::from_utf8(out.stdout).unwrap();
    let page = std::fs::read_to_string(root.join("docs/model-facing.md")).unwrap();
    let said = texts(&generated);
    let documented = texts(&page[page.find("## The texts").unwrap()..]);
    assert_eq!(
        said.iter().map(|t| &t.0).collect::<Vec<_>>(),
        documented.iter().map(|t| &t.0).collect::<Vec<_>>(),
        "the page lists every kind the binary gives, and no other"
    );
    for ((title, now), (_, doc)) in said.iter().zip(&documented) {
        assert_eq!(
            now, doc,
            "{title}: the page is out of date; rerun bench/model-facing"
        );
    }
    // Every kind is in the cost table, and every kind of text has its off switch.
    for (title, _) in &said {
        assert!(
            page.contains(&format!("| {title}")),
            "{title} not in the table"
        );
    }
    for switch in [
        "`stages: []`",
        "`reminders: false`",
        "`checkpoint_requests: false`",
        "`loops: false`",
        "`snapshots: false`",
        "`acknowledgement: false`",
        "`brief: false`",
        "`give_back: false`",
        "`status_line: false`",
    ] {
        assert!(page.contains(switch), "{switch} not on the page");
    }
    assert!(
        page.contains("refs/ctxkeep/"),
        "uninstall names the snapshots' refs"
    );
}
