//! The README's quick start, as a new user runs it.

use crate::support::Project;

#[test]
fn hand_loop_keeps_prose_and_recovers_every_field() {
    let p = Project::new();
    p.ctxkeep(&["init"]).assert().success();
    // The user adds prose of their own, before and after the managed block.
    let mut text = p.state();
    text = text.replacen(
        "# Project state\n",
        "# Project state\n\nMy notes: keep the API small.\n",
        1,
    );
    text.push_str("\n## Scratch\n\nÜnïcode, trailing spaces   \n");
    p.write("project-state.md", &text);
    let prose_before: Vec<String> = outside_markers(&text);

    p.checkpoint(&["--decision", "parse with serde_yaml behind a size cap"])
        .success();
    p.write("src/lexer.rs", "// new, uncommitted\n");
    p.ctxkeep(&["checkpoint", "--question", "do we need YAML anchors?"])
        .assert()
        .success();
    p.ctxkeep(&["verify"]).assert().success();
    let out = p
        .ctxkeep(&["resume"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let prompt = String::from_utf8(out).unwrap();

    assert_eq!(
        outside_markers(&p.state()),
        prose_before,
        "user prose changed"
    );
    for needle in [
        "ckpt-0002",
        "implementing the parser",
        "parse front matter in src/state.rs",
        "claude-code",
        "run cargo test and fix the failing split test",
        "parse with serde_yaml behind a size cap",
        "do we need YAML anchors?",
        "src/lexer.rs (untracked)",
    ] {
        assert!(
            prompt.contains(needle),
            "resume prompt lacks {needle:?}:\n{prompt}"
        );
    }
}

/// The text before the begin marker and after the end marker, exactly.
pub fn outside_markers(text: &str) -> Vec<String> {
    let body_start = text
        .match_indices("---\n")
        .nth(1)
        .map(|(i, _)| i + 4)
        .unwrap_or(0);
    let body = &text[body_start..];
    let b = body.find("<!-- ctxkeep:begin -->").expect("begin marker");
    let e = body.find("<!-- ctxkeep:end -->").expect("end marker");
    vec![body[..b].to_string(), body[e..].to_string()]
}
