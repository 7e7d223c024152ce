//! One rule for every writer of project-state.md: what is accepted can be
//! read back (docs/reliability.md). Each reproduction below wrote a file
//! that every later command refused (exit 65) until a hand edit; now each
//! is refused with one line and nothing written, or written so that
//! `status`, `resume`, `verify`, `log` and the next `checkpoint` read it.
//! The property test at the end feeds `checkpoint` hostile fields and
//! holds it to the same rule.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::hostile::refused;
use crate::support::{diff, Project, MINIMAL_CHECKPOINT};

const STATE: &str = "project-state.md";

/// Every command that reads the state file reads it, and a checkpoint
/// without flags (carrying every field over) is written after it.
fn every_reader_reads(p: &Project) {
    for args in [
        &["status"][..],
        &["resume"],
        &["resume", "--peek"],
        &["log"],
        &["checkpoint"],
        &["status"],
    ] {
        let out = p.ctxkeep(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (v, code) = p.json(&["verify"]);
    assert!(code == 0 || code == 1, "verify exits {code}: {v}");
    let findings: Vec<&str> = ["errors", "warnings"]
        .iter()
        .flat_map(|k| v[k].as_array().into_iter().flatten())
        .filter_map(|f| f["code"].as_str())
        .collect();
    for structural in [
        "CK110", "CK111", "CK120", "CK121", "CK122", "CK123", "CK124",
    ] {
        assert!(!findings.contains(&structural), "{structural} in {v}");
    }
}

/// No byte a reader stumbles on: no raw control character but tab and
/// newline, no line that starts as a git conflict marker.
fn nothing_raw(text: &str) {
    let raw: Vec<char> = text
        .chars()
        .filter(|&c| (c < ' ' && c != '\n' && c != '\t') || ('\u{7f}'..='\u{9f}').contains(&c))
        .collect();
    assert!(raw.is_empty(), "raw control characters {raw:?} in:\n{text}");
    for line in text.lines() {
        for m in ['<', '=', '>', '|'] {
            assert!(
                !line.starts_with(&m.to_string().repeat(7)),
                "a conflict-marker line {line:?} in:\n{text}"
            );
        }
    }
}

#[test]
fn a_note_over_the_field_limit_is_refused_and_the_project_still_reads() {
    // Was: exit 0, then every command 65 ("front matter too large").
    let p = Project::initialized();
    let note = "x ".repeat(35_000);
    let mut args = MINIMAL_CHECKPOINT.to_vec();
    args.extend(["--note", &note]);
    refused(
        &p,
        &args,
        65,
        STATE,
        &[
            "notes (--note) is 70000 bytes, over the 16384",
            "nothing was written",
        ],
    );
    p.ctxkeep(&MINIMAL_CHECKPOINT).assert().success();
    every_reader_reads(&p);
}

#[test]
fn too_many_decisions_from_a_file_are_refused() {
    let p = Project::initialized();
    let from = json!({
        "phase": "p", "active_task": "t", "controlling_agent": "a", "next_action": "n",
        "decisions": vec!["d"; 20_000],
    });
    p.write("from.json", from.to_string());
    refused(
        &p,
        &["checkpoint", "--from", "from.json"],
        65,
        STATE,
        &["decisions (--decision) has 20000 items, over the 100"],
    );
}

#[test]
fn a_nul_byte_in_a_from_field_is_written_escaped() {
    // Was: exit 0, then every command 65 ("not a text file (NUL byte …)").
    let p = Project::initialized();
    p.write(
        "from.yaml",
        "phase: \"a\\0b\"\ntask: t\nagent: a\nnext: run the tests\n",
    );
    let (written, code) = p.json(&["checkpoint", "--from", "from.yaml"]);
    assert_eq!(code, 0, "{written}");
    assert_eq!(written["phase"], "a\u{0}b");
    let text = p.state();
    nothing_raw(&text);
    assert!(text.contains("- **Phase:** a\\u0000b\n"), "{text}");
    let (resumed, _) = p.json(&["resume", "--peek"]);
    assert_eq!(resumed["checkpoint"]["phase"], "a\u{0}b");
    every_reader_reads(&p);
}

#[test]
fn conflict_marker_lines_in_a_note_are_text_not_a_conflict() {
    // Was: `resume` then said "unresolved merge conflict… run `ctxkeep
    // resolve`", and `resolve` called it a prose conflict.
    let p = Project::initialized();
    let note =
        "merge notes:\n<<<<<<< HEAD\nours\n|||||||\nbase\n=======\ntheirs\n>>>>>>> feature\n";
    let mut args = MINIMAL_CHECKPOINT.to_vec();
    args.extend(["--note", note]);
    p.ctxkeep(&args).assert().success();
    let text = p.state();
    nothing_raw(&text);
    assert!(
        text.contains(
            "\\<<<<<<< HEAD\nours\n\\|||||||\nbase\n\\=======\ntheirs\n\\>>>>>>> feature\n"
        ),
        "{text}"
    );
    let (resumed, code) = p.json(&["resume", "--peek"]);
    assert_eq!(code, 0);
    assert_eq!(resumed["checkpoint"]["notes"], note);
    let resolve = p.ctxkeep(&["resolve"]).output().unwrap();
    assert_eq!(resolve.status.code(), Some(0));
    assert_eq!(p.state(), text, "nothing to resolve");
    every_reader_reads(&p);
}

#[test]
fn control_characters_are_never_written_raw() {
    // Was: ESC, BEL and CR written raw into the marked block.
    let p = Project::initialized();
    let args = [
        "checkpoint",
        "--phase",
        "p",
        "--agent",
        "a",
        "--next",
        "n",
        "--note",
        "red \x1b[31mfail\x1b[0m, bell \x07, cr \r, del \x7f, nel \u{85}, tab \t",
        "--decision",
        "keep the \x1b[1mbold\x1b[0m output",
        "--task",
        "carriage\rreturn",
    ];
    let (written, code) = p.json(&args);
    assert_eq!(code, 0, "{written}");
    let text = p.state();
    nothing_raw(&text);
    assert!(text.contains("red \\u001B[31mfail\\u001B[0m, bell \\u0007, cr \\u000D, del \\u007F, nel \\u0085, tab \t"), "{text}");
    let (resumed, _) = p.json(&["resume", "--peek"]);
    assert_eq!(resumed["checkpoint"]["notes"], written["notes"]);
    assert_eq!(resumed["checkpoint"]["active_task"], "carriage\rreturn");
    every_reader_reads(&p);
}

#[test]
fn more_uncommitted_files_than_a_checkpoint_lists_are_counted() {
    // Was: 1,500 untracked files made 120 KB of front matter, exit 0, then 65.
    let p = Project::initialized();
    for i in 0..1_500 {
        p.write(&format!("node_modules/pkg/lib/file{i:04}.js"), "");
    }
    let (written, code) = p.json(&MINIMAL_CHECKPOINT);
    assert_eq!(code, 0, "{written}");
    assert_eq!(written["git"]["dirty"].as_array().unwrap().len(), 100);
    assert_eq!(written["git"]["dirty_omitted"], 1_400);
    let text = p.state();
    assert!(text.contains("    dirty_omitted: 1400\n"), "{text}");
    assert!(text.contains("- and 1400 more (not listed)\n"), "{text}");
    every_reader_reads(&p);
    // The paths counted are described: no CK503 for them.
    let (v, _) = p.json(&["verify"]);
    assert!(!v.to_string().contains("CK503"), "{v}");
}

#[test]
fn a_record_that_does_not_fit_sheds_history_first_then_is_refused() {
    let p = Project::initialized();
    // The user's own keys take most of the front matter.
    let text = p.state().replacen(
        "ctxkeep: 1\n",
        &format!("ctxkeep: 1\nteam_notes: \"{}\"\n", "t".repeat(40_000)),
        1,
    );
    p.write(STATE, text);
    p.commit_all("team notes");
    let long = |c: &str| c.repeat(16_000);
    let with_next = |next: &str| {
        let mut args = MINIMAL_CHECKPOINT[..7].to_vec();
        args.extend(["--next", next]);
        p.ctxkeep(&args).output().unwrap()
    };
    let first = with_next(&long("a"));
    assert_eq!(first.status.code(), Some(0));
    // The history entry of the first would not fit beside the second.
    let out = with_next(&long("b"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("left out of ckpt-0002 so that the front matter stays within the 65536 bytes ctxkeep reads back: 1 of 1 history entries"),
        "{err}"
    );
    every_reader_reads(&p);
    // Fields given that cannot fit at all are refused, naming the largest part.
    let (x, y) = (long("x"), long("y"));
    let args = [
        "checkpoint",
        "--phase",
        &x,
        "--task",
        &y,
        "--agent",
        "a",
        "--next",
        "n",
    ];
    refused(
        &p,
        &args,
        65,
        STATE,
        &[
            "the checkpoint does not fit",
            "the largest part is the front matter's other keys (4",
            "nothing was written",
        ],
    );
    every_reader_reads(&p);
}

/// What ctxkeep gathers on its own (here an agent's plan of 3,000 items,
/// read from its transcript, as every hook's automatic checkpoint reads it)
/// gives way to the front matter's limit, with a warning, instead of
/// writing a file no command reads.
#[test]
fn an_observed_plan_too_large_to_keep_is_left_out_with_a_warning() {
    let p = Project::initialized();
    let line = |ty: &str, message: Value| {
        json!({"parentUuid": "p", "isSidechain": false, "userType": "external",
               "cwd": p.root(), "sessionId": "s1", "version": "2.1.0", "type": ty,
               "message": message, "uuid": "u", "timestamp": "2026-01-15T09:00:00.000Z"})
        .to_string()
    };
    let todos: Vec<Value> = (0..3_000)
        .map(|i| json!({"content": format!("step {i} of the very long plan"), "status": "pending", "activeForm": "x"}))
        .collect();
    let transcript = [
        line("user", json!({"role": "user", "content": "split the parser"})),
        line(
            "assistant",
            json!({"model": "claude-opus-4-1", "id": "m1", "role": "assistant",
                   "content": [{"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": todos}}],
                   "usage": {"input_tokens": 3, "output_tokens": 5}}),
        ),
    ]
    .join("\n");
    p.write("t.jsonl", transcript + "\n");
    let mut args = vec!["--json"];
    args.extend(MINIMAL_CHECKPOINT);
    args.extend(["--transcript", "t.jsonl"]);
    let out = p.ctxkeep(&args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("left out of ckpt-0001 so that the front matter stays within the 65536 bytes ctxkeep reads back: the observed plan"),
        "{err}"
    );
    let written: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(written["observed"]["request"], "split the parser");
    assert_eq!(written["observed"]["plan"], json!([]));
    every_reader_reads(&p);
}

// The property: whatever `checkpoint` accepts, every reader reads; whatever
// it refuses, it refuses with one line and leaves every file as it was.

/// Pieces of text that broke a reader once, or could.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{1,12}",
        2 => "\\PC{1,6}",
        1 => prop::sample::select(vec![
            "\0", "\x1b[31m", "\x07", "\r", "\r\n", "\n", "\t", "\x7f", "\u{85}", "\u{2028}",
            "\u{feff}", "\n<<<<<<< HEAD\n", "\n=======\n", "\n>>>>>>> theirs\n", "\n|||||||\n",
            "<<<<<<<", "\n<!-- ctxkeep:end -->\n", "\n<!-- ctxkeep:begin -->\n", "\n---\n",
            "\n...\n", "\"'\\", ": ", "# ", "\n- ", "{{ checkpoint.id }}", "{% if x %}", "&a *a",
            "[{", "no", "1.10", "~", "@", "`",
        ])
        .prop_map(str::to_string),
    ]
}

/// A field's text: a few pieces, or one piece repeated to around the field
/// limit (16 KiB), either side of it.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        8 => prop::collection::vec(piece(), 1..6).prop_map(|p| p.concat()),
        1 => (piece(), 15_000usize..18_000).prop_map(|(p, n)| p.repeat(n / p.len() + 1)),
    ]
}

fn list() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        6 => prop::collection::vec(text(), 0..4),
        1 => prop::collection::vec("[a-z]{1,8}", 95..105),
    ]
}

#[derive(Debug, Clone)]
struct Given {
    fields: BTreeMap<&'static str, String>,
    lists: BTreeMap<&'static str, Vec<String>>,
    /// By `--from` (a JSON file) rather than flags; always when a value
    /// holds a NUL byte, which no command line can carry.
    from_file: bool,
}

fn given() -> impl Strategy<Value = Given> {
    let field = || prop::option::weighted(0.8, text());
    (
        (field(), field(), field(), field(), field()),
        (prop::option::of(list()), prop::option::of(list())),
        any::<bool>(),
    )
        .prop_map(
            |((phase, task, agent, next, notes), (decisions, questions), from_file)| {
                let mut fields = BTreeMap::new();
                for (k, v) in [
                    ("phase", phase),
                    ("active_task", task),
                    ("controlling_agent", agent),
                    ("next_action", next),
                    ("notes", notes),
                ] {
                    if let Some(v) = v {
                        fields.insert(k, v);
                    }
                }
                let mut lists = BTreeMap::new();
                for (k, v) in [("decisions", decisions), ("open_questions", questions)] {
                    if let Some(v) = v {
                        lists.insert(k, v);
                    }
                }
                let nul = fields
                    .values()
                    .chain(lists.values().flatten())
                    .any(|v| v.contains('\0'));
                Given {
                    fields,
                    lists,
                    from_file: from_file || nul,
                }
            },
        )
}

fn args_of(p: &Project, g: &Given) -> Vec<String> {
    let mut args = vec!["checkpoint".to_string()];
    if g.from_file {
        let mut doc = serde_json::Map::new();
        for (k, v) in &g.fields {
            doc.insert(k.to_string(), json!(v));
        }
        for (k, v) in &g.lists {
            doc.insert(k.to_string(), json!(v));
        }
        p.write("from.json", Value::Object(doc).to_string());
        args.extend(["--from".into(), "from.json".into()]);
        return args;
    }
    let flag = |k: &str| match k {
        "phase" => "--phase",
        "active_task" => "--task",
        "controlling_agent" => "--agent",
        "next_action" => "--next",
        "notes" => "--note",
        "decisions" => "--decision",
        _ => "--question",
    };
    // `--flag=VALUE`: a value may start with `-`.
    for (k, v) in &g.fields {
        args.push(format!("{}={v}", flag(k)));
    }
    for (k, items) in &g.lists {
        if items.is_empty() {
            let clear = if *k == "decisions" {
                "--clear-decisions"
            } else {
                "--clear-questions"
            };
            args.push(clear.into());
        }
        for item in items {
            args.push(format!("{}={item}", flag(k)));
        }
    }
    args
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(16)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn what_checkpoint_accepts_every_reader_reads(g in given()) {
        // Fields not given carry over from a first checkpoint.
        let p = Project::initialized();
        p.ctxkeep(&MINIMAL_CHECKPOINT).assert().success();
        let args = args_of(&p, &g);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let before = p.snapshot();
        let mut json_args = vec!["--json"];
        json_args.extend(&args);
        let out = p.ctxkeep(&json_args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let code = out.status.code().unwrap_or(-1);
        if code != 0 {
            // Refused: a documented code, one line (clap's usage errors,
            // exit 2, have their own layout), nothing changed.
            prop_assert!([1, 2, 65].contains(&code), "exit {code}: {err}");
            if code != 2 {
                prop_assert_eq!(err.lines().count(), 1, "{}", err);
            }
            let after = p.snapshot();
            prop_assert!(before == after, "changed: {:?}", diff(&before, &after));
            return Ok(());
        }
        if std::env::var_os("CTXKEEP_TEST_SHOW_ACCEPTED").is_some() {
            eprintln!("accepted: {g:?}");
        }
        let written: Value = serde_json::from_slice(&out.stdout).unwrap();
        nothing_raw(&p.state());
        let (resumed, code) = p.json(&["resume", "--peek"]);
        prop_assert_eq!(code, 0);
        prop_assert_eq!(&resumed["checkpoint"], &written, "read back as written");
        every_reader_reads(&p);
        nothing_raw(&p.state());
    }
}
