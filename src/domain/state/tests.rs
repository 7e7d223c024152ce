use super::*;
use serde_json::json;

fn parse(text: &str) -> Result<StateFile, Error> {
    StateFile::parse(Path::new("project-state.md"), text.to_string())
}

#[test]
fn no_front_matter_is_all_body() {
    let s = parse("# Notes\n----\nhello").unwrap();
    assert_eq!(s.body, "# Notes\n----\nhello");
    assert!(!s.is_initialized());
    let s = parse("--- x\nfoo\n").unwrap();
    assert_eq!(s.body, "--- x\nfoo\n");
}

#[test]
fn unclosed_front_matter_is_an_error() {
    let e = parse("---\nctxkeep: 1\nbody\n").unwrap_err();
    assert_eq!(e.exit_code(), 65);
    assert!(
        e.to_string().contains("opened at line 1 is not closed"),
        "{e}"
    );
}

#[test]
fn closer_at_eof_and_empty_front_matter() {
    let s = parse("---\nctxkeep: 1\n---").unwrap();
    assert_eq!(s.fm.ctxkeep, Some(1));
    assert_eq!(s.body, "");
    let s = parse("---\n---\nbody").unwrap();
    assert_eq!(s.body, "body");
    let s = parse("---\nctxkeep: 1\n...\nbody").unwrap();
    assert_eq!(s.body, "body");
}

#[test]
fn yaml_errors_name_the_file_line() {
    let e = parse("---\nctxkeep: 1\n\tmodel: x\n---\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3"), "{e}");
    let e = parse("---\nctxkeep: 1\nmodel: a\nmodel: b\n---\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("duplicate") && e.contains("model"), "{e}");
    let e = parse("---\n- a\n- b\n---\n").unwrap_err().to_string();
    assert!(e.contains("must be a mapping"), "{e}");
}

#[test]
fn duplicate_keys_name_the_repeat_at_any_depth() {
    let e = parse("---\nctxkeep: 1\nteam:\n  - id: a\n    id: b\n---\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("duplicate key \"id\" at line 5"), "{e}");
    // The same key in two list items is no duplicate.
    parse("---\nctxkeep: 1\nteam:\n  - id: a\n  - id: b\n---\n").unwrap();
}

#[test]
fn closer_without_newline_gets_one_when_a_block_follows() {
    let mut s = parse("---\r\nctxkeep: 1\r\n---").unwrap();
    s.set_managed_block("x").unwrap();
    let out = s.render();
    assert!(out.starts_with("---\r\nctxkeep: 1\r\n---\r\n<!-- ctxkeep:begin -->\r\n"));
    assert_eq!(parse(&out).unwrap().managed_block(), Some("x\r\n"));
}

#[test]
fn ambiguous_scalars_read_as_strings() {
    let s = parse("---\nctxkeep: 1\nmodel: 1.10\nencoding: no\n---\n").unwrap();
    assert_eq!(s.fm.model.as_deref(), Some("1.10"));
    assert_eq!(s.fm.encoding.as_deref(), Some("no"));
}

#[test]
fn deep_nesting_is_rejected_before_parsing() {
    let deep = format!(
        "---\na: {}{}\n---\n",
        "[".repeat(30_000),
        "]".repeat(30_000)
    );
    let e = parse(&deep).unwrap_err().to_string();
    assert!(e.contains("nested too deeply"), "{e}");
}

#[test]
fn alias_bomb_is_rejected() {
    let mut y = String::from(
        "---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 0..8u8 {
        let prev = (b'a' + i) as char;
        let next = (b'a' + i + 1) as char;
        y.push_str(&format!("{next}: &{next} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
    }
    y.push_str("---\n");
    assert_eq!(parse(&y).unwrap_err().exit_code(), 65);
}

#[test]
fn set_keys_keeps_comments_and_unknown_keys() {
    let text = "---\n# my comment\nctxkeep: 1\nowner: alice # inline\nmodel: old\nversion: 1.10\n---\nbody\n";
    let mut s = parse(text).unwrap();
    s.set_keys(&[
        ("model", Some(json!("claude-sonnet-4-5"))),
        ("window", Some(json!(200000))),
    ])
    .unwrap();
    let out = s.render();
    assert_eq!(
        out,
        "---\n# my comment\nctxkeep: 1\nowner: alice # inline\nmodel: claude-sonnet-4-5\nversion: 1.10\nwindow: 200000\n---\nbody\n"
    );
}

#[test]
fn front_matter_len_with_is_the_length_set_keys_makes() {
    let text = "---\r\n# mine\r\nctxkeep: 1\r\nmodel: old\r\nhistory:\r\n  - id: a\r\n    created_at: b\r\n---\r\nbody\r\n";
    let history = json!([{"id": "ckpt-0002", "created_at": "t"}]);
    let mut s = parse(text).unwrap();
    let predicted = s.front_matter_len_with(&[
        ("model", None),
        ("history", Some(&history)),
        ("window", Some(&json!(200000))),
    ]);
    s.set_keys(&[
        ("model", None),
        ("history", Some(history.clone())),
        ("window", Some(json!(200000))),
    ])
    .unwrap();
    let front = s.render();
    let front = &front[5..front.find("---\r\nbody").unwrap()];
    assert_eq!(predicted, front.len(), "{front:?}");
    assert!(!front.contains("model"));
}

#[test]
fn set_keys_replaces_nested_blocks_and_keeps_crlf() {
    let text = "---\r\nctxkeep: 1\r\nhistory:\r\n  - id: a\r\n    created_at: b\r\n\r\nuser: x\r\n---\r\nbody\r\n";
    let mut s = parse(text).unwrap();
    s.set_keys(&[(
        "history",
        Some(json!([{"id": "ckpt-0001", "created_at": "t", "phase": "no"}])),
    )])
    .unwrap();
    let out = s.render();
    assert_eq!(
        out,
        "---\r\nctxkeep: 1\r\nhistory:\r\n  - {id: ckpt-0001, created_at: t, phase: \"no\"}\r\n\r\nuser: x\r\n---\r\nbody\r\n"
    );
}

#[test]
fn emitted_strings_read_back_exactly() {
    let tricky = [
        "no",
        "1.10",
        "0755",
        "- item",
        "a: b",
        "#x",
        "quote \" and \\",
        "line\nbreak",
        "\u{2028}sep\u{85}nel\u{7f}",
        "emoji 🎉",
        "  padded  ",
        "",
        "~",
        "@at",
        "`tick`",
    ];
    for t in tricky {
        let y = emit_key("k", &json!(t), "\n");
        let v: BTreeMap<String, String> = serde_yaml::from_str(&y).unwrap();
        assert_eq!(v["k"], t, "{y}");
    }
}

#[test]
fn managed_block_is_replaced_and_prose_kept() {
    let text =
        "---\nctxkeep: 1\n---\n# Mine\n<!-- ctxkeep:begin -->\nold\n<!-- ctxkeep:end -->\nafter\n";
    let mut s = parse(text).unwrap();
    s.set_managed_block("new\nlines").unwrap();
    assert_eq!(
        s.body,
        "# Mine\n<!-- ctxkeep:begin -->\nnew\nlines\n<!-- ctxkeep:end -->\nafter\n"
    );
    let mut s = parse("---\nctxkeep: 1\n---\nno markers").unwrap();
    s.set_managed_block("x").unwrap();
    assert!(s
        .body
        .starts_with("no markers\n\n<!-- ctxkeep:begin -->\nx\n"));
    let mut s = parse("---\nctxkeep: 1\n---\n<!-- ctxkeep:begin -->\nx\n").unwrap();
    assert_eq!(s.set_managed_block("y").unwrap_err().exit_code(), 65);
}

#[test]
fn managed_block_after_a_closer_without_newline_keeps_the_file_valid() {
    // Found by fuzzing (state_edit): the block was glued to the closer,
    // `---<!-- ctxkeep:begin -->`, and the file no longer parsed.
    let mut s = parse("---\nctxkeep: 1\n---").unwrap();
    s.set_managed_block("x").unwrap();
    let out = s.render();
    assert_eq!(
        out,
        "---\nctxkeep: 1\n---\n<!-- ctxkeep:begin -->\nx\n<!-- ctxkeep:end -->\n"
    );
    let again = parse(&out).unwrap();
    assert_eq!(again.fm.ctxkeep, Some(1));
    assert_eq!(again.managed_block(), Some("x\n"));
    let mut s = parse("---\r\nctxkeep: 1\r\n---").unwrap();
    s.set_managed_block("x").unwrap();
    assert!(s
        .render()
        .starts_with("---\r\nctxkeep: 1\r\n---\r\n<!-- ctxkeep:begin -->\r\n"));
}

#[test]
fn marker_lines_inside_the_content_do_not_leak_into_the_prose() {
    // Found by fuzzing (state_edit): a checkpoint note holding an end
    // marker line closed the block early; the rest of the block then
    // read as user prose and was repeated after every checkpoint.
    let text =
        "---\nctxkeep: 1\n---\n# Mine\n<!-- ctxkeep:begin -->\nold\n<!-- ctxkeep:end -->\nafter\n";
    let note = "notes:\n  <!-- ctxkeep:end -->\ntail\n<!-- ctxkeep:begin -->\n";
    let mut s = parse(text).unwrap();
    s.set_managed_block(note).unwrap();
    let mut again = parse(&s.render()).unwrap();
    assert_eq!(
        again.managed_block(),
        Some("notes:\n  &lt;!-- ctxkeep:end -->\ntail\n&lt;!-- ctxkeep:begin -->\n")
    );
    assert!(again.body.starts_with("# Mine\n<!-- ctxkeep:begin -->\n"));
    assert!(again.body.ends_with("\n<!-- ctxkeep:end -->\nafter\n"));
    // A second checkpoint leaves the same file: nothing accumulates.
    let before = again.render();
    again.set_managed_block(note).unwrap();
    assert_eq!(again.render(), before);
    // A marker mentioned inside a line is ordinary text and kept as is.
    let mut s = parse(text).unwrap();
    s.set_managed_block("see <!-- ctxkeep:end --> here")
        .unwrap();
    assert_eq!(s.managed_block(), Some("see <!-- ctxkeep:end --> here\n"));
}

#[test]
fn bom_is_kept() {
    let mut s = parse("\u{feff}---\nctxkeep: 1\n---\nbody").unwrap();
    s.set_keys(&[("model", Some(json!("m")))]).unwrap();
    assert!(s
        .render()
        .starts_with("\u{feff}---\nctxkeep: 1\nmodel: m\n---\nbody"));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn body_survives_edits_byte_for_byte(body in "(\\PC|\r|\n|---|\u{feff}|\t)*") {
            let text = format!("---\nctxkeep: 1\n---\n{body}");
            let mut s = parse(&text).unwrap();
            prop_assert_eq!(&s.body, &body);
            s.set_keys(&[("model", Some(json!("x")))]).unwrap();
            let again = parse(&s.render()).unwrap();
            prop_assert_eq!(again.body, body);
        }

        #[test]
        fn arbitrary_text_never_panics(text in "(\\PC|\r|\n|---|\t|:|\\[|\\{|&|\\*)*") {
            let _ = parse(&text);
        }

        /// Bytes as `load` sees them: refused unless strict UTF-8
        /// without NUL, then parsed; never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(
            chunks in proptest::collection::vec(
                prop_oneof![
                    proptest::collection::vec(any::<u8>(), 0..16),
                    Just(b"---\n".to_vec()),
                    Just(b"---\r\n".to_vec()),
                    Just(b"\xef\xbb\xbf".to_vec()),
                    Just(b"ctxkeep: 1\n".to_vec()),
                    Just(b"checkpoint:\n  id: x\n".to_vec()),
                    Just(b"- ".to_vec()),
                    Just(b"&a [*a]\n".to_vec()),
                    Just(b"\t".to_vec()),
                    Just(b"{[".to_vec()),
                ],
                0..40,
            )
        ) {
            let bytes: Vec<u8> = chunks.concat();
            if !bytes.contains(&0) {
                if let Ok(text) = String::from_utf8(bytes) {
                    let _ = parse(&text);
                }
            }
        }

        /// Prose around the markers survives any number of checkpoints
        /// (keys set, block replaced, rendered, parsed again).
        #[test]
        fn body_survives_many_checkpoints(
            before in "(\\PC|\r|\n|---|\u{feff}|\t)*",
            after in "(\\PC|\r|\n|---|\u{feff}|\t)*",
            blocks in proptest::collection::vec("(\\PC|\r|\n|---)*", 1..6),
        ) {
            let marker = |t: &str| t.lines().any(|l| {
                let l = l.trim();
                l == BEGIN_MARKER || l == END_MARKER
            });
            prop_assume!(!marker(&before) && !marker(&after));
            let before = if before.is_empty() || before.ends_with('\n') {
                before
            } else {
                format!("{before}\n")
            };
            let mut text = format!(
                "---\nctxkeep: 1\nowner: me # mine\n---\n{before}{BEGIN_MARKER}\nold\n{END_MARKER}\n{after}"
            );
            for (i, block) in blocks.iter().enumerate() {
                let mut s = parse(&text).unwrap();
                s.set_keys(&[
                    ("checkpoint", Some(json!({
                        "id": format!("ckpt-{i:04}"), "created_at": "t", "trigger": "manual", "phase": block,
                    }))),
                    ("history", Some(json!([{"id": "ckpt-0000", "created_at": "t", "phase": "no"}]))),
                ])
                .unwrap();
                s.set_managed_block(block).unwrap();
                text = s.render();
            }
            let s = parse(&text).unwrap();
            let begin = s.body.find(BEGIN_MARKER).unwrap();
            prop_assert_eq!(&s.body[..begin], before.as_str());
            let end = s.body.find(END_MARKER).unwrap() + END_MARKER.len() + 1;
            prop_assert_eq!(&s.body[end..], after.as_str());
            prop_assert!(text.starts_with("---\nctxkeep: 1\nowner: me # mine\n"));
        }

        #[test]
        fn rendering_unchanged_input_is_identity(text in "(\\PC|\r|\n|---|\t)*") {
            if let Ok(s) = parse(&text) {
                prop_assert_eq!(s.render(), text);
            }
        }
    }
}
