//! Secrets never reach what an agent reads (RELIABILITY.md §4, §7 case 37):
//! real-shaped fake keys go in through every input ctxkeep has (flags,
//! `--from`, notes, a branch, a file name, a transcript, the model, error-
//! provoking arguments) and must not come out of any output stream or any
//! file ctxkeep writes. Ordinary text that merely looks technical must pass
//! untouched. Keys are built by concatenation so this file trips no scanner.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use crate::support::Project;

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Deterministic pseudo-random text of `n` characters from `alphabet`.
fn fake(n: usize, alphabet: &[u8], seed: u64) -> String {
    let mut x = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[((x >> 33) % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

/// A fake key: the rule that must name it, the bytes that must never be
/// seen again, and the text that carries it in.
struct Key {
    rule: &'static str,
    secret: String,
    text: String,
}

fn key(rule: &'static str, secret: String) -> Key {
    Key {
        rule,
        text: secret.clone(),
        secret,
    }
}

fn pem(seed: u64) -> String {
    let b64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let lines: Vec<String> = (0..4).map(|i| fake(64, b64, seed + i)).collect();
    let kind = ["PRIVATE", "KEY"].join(" ");
    format!(
        "-----BEGIN RSA {kind}-----\n{}\n-----END RSA {kind}-----",
        lines.join("\n")
    )
}

/// One key per rule (two for the most common providers).
fn corpus() -> Vec<Key> {
    let upper32 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let digits = b"0123456789";
    let password = format!("Zq8{}", fake(14, ALNUM, 40));
    let generic = fake(32, ALNUM, 41);
    let bearer = fake(40, ALNUM, 42);
    let curl_password = format!("pw{}", fake(12, ALNUM, 43));
    vec![
        key("aws", ["AK", "IA"].concat() + &fake(16, upper32, 1)),
        key("aws", ["AS", "IA"].concat() + &fake(16, upper32, 2)),
        key("github", ["gh", "p_"].concat() + &fake(36, ALNUM, 3)),
        key(
            "github",
            ["github", "_pat_"].concat() + &fake(22, ALNUM, 4) + "_" + &fake(59, ALNUM, 5),
        ),
        key("gitlab", ["gl", "pat-"].concat() + &fake(20, ALNUM, 6)),
        key(
            "anthropic",
            ["sk-", "ant-", "api03-"].concat() + &fake(93, ALNUM, 7) + "AA",
        ),
        key("openai", ["sk-", "proj-"].concat() + &fake(74, ALNUM, 8)),
        key(
            "openai",
            [
                "sk-",
                &fake(20, ALNUM, 9),
                "T3Blbk",
                "FJ",
                &fake(20, ALNUM, 10),
            ]
            .concat(),
        ),
        key(
            "slack",
            [
                "xo",
                "xb-",
                &fake(11, digits, 11),
                "-",
                &fake(13, digits, 12),
                "-",
                &fake(24, ALNUM, 13),
            ]
            .concat(),
        ),
        key("google", ["AI", "za"].concat() + &fake(35, ALNUM, 14)),
        key("stripe", ["sk", "_live_"].concat() + &fake(24, ALNUM, 15)),
        key(
            "jwt",
            [
                "ey",
                "JhbGciOiJIUzI1NiJ9.",
                "ey",
                "J",
                &fake(30, ALNUM, 16),
                ".",
                &fake(43, ALNUM, 17),
            ]
            .concat(),
        ),
        key("private-key", pem(18)),
        Key {
            rule: "url-credentials",
            text: format!("postgres://app:{password}@db.internal:5432/prod"),
            secret: password,
        },
        Key {
            rule: "generic",
            text: format!("export SERVICE_API_KEY={generic}"),
            secret: generic,
        },
        // Case 37: credentials in a command line.
        Key {
            rule: "authorization",
            text: format!(
                "curl -sf -H \"Authorization: Bearer {bearer}\" https://api.example.com/v1"
            ),
            secret: bearer,
        },
        Key {
            rule: "authorization",
            text: format!("curl -u deploy:{curl_password} https://ci.example.com/job"),
            secret: curl_password,
        },
    ]
}

/// Ordinary text that must come back exactly as given.
fn clean_corpus() -> Vec<String> {
    vec![
        "commit 3f786850e387550fdab836ed7e6dc881de23001b reverted".into(),
        "short sha 3f78685 and tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
        "request id 123e4567-e89b-12d3-a456-426614174000".into(),
        // "The quick brown fox jumps over the lazy dog" in base64.
        "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==".into(),
        "the password field is validated before submit".into(),
        "rotate the API key monthly; tokens expire after 90 days".into(),
        "Access is granted per team. Authentication uses OAuth.".into(),
        "token budget: 80 % of 200,000".into(),
        "api_key: process.env.OPENAI_API_KEY".into(),
        "see https://docs.rs/regex/latest/regex/ and ssh://git@github.com/org/repo.git".into(),
        "pip install scikit-learn (not sk-learn)".into(),
    ]
}

/// Everything ctxkeep printed, labelled by the command that printed it.
#[derive(Default)]
struct Seen(Vec<(String, String)>);

impl Seen {
    fn keep(&mut self, label: &str, out: Output) -> Output {
        self.0.push((
            format!("{label} (stdout)"),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ));
        self.0.push((
            format!("{label} (stderr)"),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
        out
    }

    fn run(&mut self, p: &Project, args: &[&str]) -> Output {
        let out = p.ctxkeep(args).output().unwrap();
        self.keep(&args.join(" "), out)
    }

    fn all(&self) -> String {
        self.0.iter().map(|(_, t)| t.as_str()).collect()
    }
}

/// Every file ctxkeep writes (project-state.md, .gitignore, all of
/// .ctxkeep/), as (name, contents); names are checked like contents.
fn written_files(p: &Project) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for rel in ["project-state.md", ".gitignore"] {
        if let Ok(text) = fs::read_to_string(p.path(rel)) {
            files.push((rel.to_string(), text));
        }
    }
    fn walk(dir: &Path, files: &mut Vec<(String, String)>) {
        for e in fs::read_dir(dir).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, files);
            } else {
                let bytes = fs::read(&path).unwrap();
                files.push((
                    path.display().to_string(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
    }
    walk(&p.path(".ctxkeep"), &mut files);
    files
}

fn assert_nothing_leaks(p: &Project, seen: &Seen, keys: &[Key]) {
    let files = written_files(p);
    assert!(files.iter().any(|(n, _)| n.ends_with("events.jsonl")));
    for k in keys {
        for (label, text) in &seen.0 {
            assert!(
                !text.contains(&k.secret),
                "{} key leaked in {label}:\n{text}",
                k.rule
            );
        }
        for (name, text) in &files {
            assert!(
                !name.contains(&k.secret),
                "{} key in a file name: {name}",
                k.rule
            );
            assert!(
                !text.contains(&k.secret),
                "{} key leaked into {name}:\n{text}",
                k.rule
            );
        }
    }
}

fn stdin_run(p: &Project, args: &[&str], input: &str) -> Output {
    let mut child = p
        .ctxkeep_std(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A key by rule (the first of that rule).
fn pick<'a>(keys: &'a [Key], rule: &str) -> &'a Key {
    keys.iter().find(|k| k.rule == rule).unwrap()
}

#[test]
fn no_key_reaches_any_output_or_any_file_ctxkeep_writes() {
    let keys = corpus();
    let p = Project::initialized();
    let outside = tempfile::tempdir().unwrap();
    let mut seen = Seen::default();
    let all_notes: String = keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!("item {i}: {}\n", k.text))
        .collect();

    // Git data: a remote URL with credentials, a commit message, a branch
    // named after a token, an uncommitted file named after a key.
    p.git(&[
        "remote",
        "add",
        "origin",
        &pick(&keys, "url-credentials").text,
    ]);
    p.commit_all(&format!(
        "fix: rotate creds, old {}",
        pick(&keys, "github").text
    ));
    let branch = format!("fix/{}", pick(&keys, "gitlab").text);
    p.git(&["checkout", "-q", "-b", &branch]);
    let dirty = format!("dump-{}.txt", pick(&keys, "aws").text);
    p.write(&dirty, "nothing secret in here\n");

    // The model setting, written into the front matter. A model the table
    // does not know is refused (the refusal is redacted too), and taken
    // with its window and encoding given.
    let model = &pick(&keys, "openai").text;
    let out = seen.run(&p, &["init", "--model", model]);
    assert_eq!(out.status.code(), Some(2));
    let out = seen.run(
        &p,
        &[
            "init",
            "--model",
            model,
            "--window",
            "128000",
            "--encoding",
            "o200k_base",
        ],
    );
    assert_eq!(out.status.code(), Some(0));

    // Every checkpoint flag, the note, the trigger.
    let decision = format!("use {}", pick(&keys, "slack").text);
    let question = format!("is {} still valid?", pick(&keys, "google").text);
    let out = seen.run(
        &p,
        &[
            "checkpoint",
            "--phase",
            &format!("deploying with {}", pick(&keys, "aws").text),
            "--task",
            &pick(&keys, "generic").text,
            "--agent",
            &pick(&keys, "jwt").text,
            "--next",
            &format!("call the API with {}", pick(&keys, "anthropic").text),
            "--decision",
            &decision,
            "--question",
            &question,
            "--note",
            &all_notes,
            "--trigger",
            &pick(&keys, "stripe").text,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", seen.all());
    let first_id = String::from_utf8_lossy(&out.stdout).trim().to_string();

    // --from a file (YAML/JSON) and from stdin.
    let from = serde_json::json!({
        "phase": pick(&keys, "private-key").text,
        "next": format!("push with {}", pick(&keys, "url-credentials").text),
        "decisions": keys.iter().map(|k| k.text.clone()).collect::<Vec<_>>(),
        "notes": all_notes,
    });
    let from_path = outside.path().join("fields.json");
    fs::write(&from_path, from.to_string()).unwrap();
    let out = seen.run(&p, &["checkpoint", "--from", from_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", seen.all());
    let out = stdin_run(
        &p,
        &["--json", "checkpoint", "--from", "-"],
        &from.to_string(),
    );
    let out = seen.keep("checkpoint --json --from -", out);
    assert_eq!(out.status.code(), Some(0), "{}", seen.all());

    // Track from a transcript whose name and model are keys, and from a
    // counted file whose name is a key; then status.
    let transcript = outside
        .path()
        .join(format!("{}.jsonl", pick(&keys, "github").text));
    let line = crate::transcripts::claude_assistant("m1", 10, 1_000, 20_000)
        .replace("claude-opus-4-6", &pick(&keys, "anthropic").text);
    fs::write(&transcript, format!("{line}\n")).unwrap();
    for json in [false, true] {
        let mut args = vec!["track", "--transcript", transcript.to_str().unwrap()];
        if json {
            args.insert(0, "--json");
        }
        let out = seen.run(&p, &args);
        assert_eq!(out.status.code(), Some(0), "{}", seen.all());
    }
    let counted = outside
        .path()
        .join(format!("{}.md", pick(&keys, "google").text));
    fs::write(&counted, "some words to count\n").unwrap();
    let out = seen.run(
        &p,
        &[
            "track",
            "--session",
            "s2",
            "--count",
            counted.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", seen.all());
    seen.run(&p, &["count", counted.to_str().unwrap()]);
    seen.run(&p, &["status"]);
    seen.run(&p, &["--json", "status", "--session", "s2"]);

    // Resume, as text and JSON.
    let out = seen.run(&p, &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", seen.all());
    let prompt = String::from_utf8_lossy(&out.stdout).into_owned();
    let out = seen.run(&p, &["--json", "resume"]);
    assert_eq!(out.status.code(), Some(0));

    // Errors that would quote user input.
    let missing = format!("/nonexistent/{}.yaml", pick(&keys, "stripe").text);
    let unknown_key = outside.path().join("unknown.yaml");
    fs::write(&unknown_key, format!("{}: 1\n", pick(&keys, "github").text)).unwrap();
    let gh = pick(&keys, "github").text.clone();
    let aws = pick(&keys, "aws").text.clone();
    // (arguments, exit code, whether the message quotes the input)
    for (args, code, quotes) in [
        (vec!["checkpoint", "--from", missing.as_str()], 66, true),
        (
            vec!["--json", "checkpoint", "--from", missing.as_str()],
            66,
            true,
        ),
        (
            vec!["checkpoint", "--from", unknown_key.to_str().unwrap()],
            65,
            true,
        ),
        (vec!["track", "--add", gh.as_str()], 2, true),
        (vec!["resume", gh.as_str()], 2, true),
        (vec!["count", missing.as_str()], 66, true),
        (vec!["status", "--session", gh.as_str()], 2, false),
        (
            vec!["--json", "track", "--session", aws.as_str(), "--add", "1"],
            2,
            false,
        ),
    ] {
        let out = seen.run(&p, &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", seen.all());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.contains("[REDACTED:"), quotes, "{args:?}: {err}");
    }

    // verify reads it all back: no secret left in the file, and its report
    // (text and JSON) echoes none.
    let out = seen.run(&p, &["verify"]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!report.contains("CK701"), "{report}");
    seen.run(&p, &["--json", "verify", "--strict"]);

    assert_nothing_leaks(&p, &seen, &keys);

    // Redacted, not dropped: each rule's marker stands where its key was.
    let archive = p.read(&format!(".ctxkeep/checkpoints/{first_id}.json"));
    for k in &keys {
        let marker = format!("[REDACTED:{}]", k.rule);
        assert!(archive.contains(&marker), "{marker} not in\n{archive}");
        assert!(prompt.contains(&marker), "{marker} not in\n{prompt}");
    }
    let state = p.state();
    assert!(state.contains("[REDACTED:stripe]"), "the trigger:\n{state}");
    assert!(
        state.contains("fix/[REDACTED:gitlab]"),
        "the branch:\n{state}"
    );
    assert!(
        state.contains("dump-[REDACTED:aws].txt"),
        "the dirty file:\n{state}"
    );
    assert!(
        state
            .lines()
            .any(|l| l.starts_with("model:") && l.contains("[REDACTED:openai]")),
        "the model:\n{state}"
    );
    let events = p.read(".ctxkeep/events.jsonl");
    assert!(
        events.contains("\"trigger\":\"[REDACTED:stripe]\""),
        "{events}"
    );
    let session = p.read(".ctxkeep/sessions/default.json");
    assert!(session.contains("[REDACTED:github].jsonl"), "{session}");
    let record: serde_json::Value = serde_json::from_str(&session).expect("the record parses");
    assert_eq!(record["model"], "[REDACTED:anthropic]", "{session}");
}

#[test]
fn verify_names_a_key_in_prose_by_rule_and_line_without_echoing_it() {
    let keys = corpus();
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut prose = String::from("\n## Scratch\n\n");
    for k in &keys {
        prose.push_str(&format!("- {}\n", k.text));
    }
    // A path that does not exist, named after a key: the reference check
    // would quote it.
    prose.push_str(&format!("- see `src/{}.rs`\n", pick(&keys, "github").text));
    p.write("project-state.md", format!("{}{prose}", p.state()));
    let mut seen = Seen::default();
    let out = seen.run(&p, &["verify"]);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    for k in &keys {
        assert!(
            report.contains(&format!("a secret ({})", k.rule)),
            "{} not reported:\n{report}",
            k.rule
        );
    }
    let (json, code) = p.json(&["verify"]);
    assert_eq!(code, 1);
    let ck701 = json["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "CK701")
        .count();
    assert!(ck701 >= keys.len(), "{json}");
    seen.0.push(("verify --json".into(), json.to_string()));
    // Only the outputs: the user's own prose holds the keys, by design.
    for k in &keys {
        for (label, text) in &seen.0 {
            assert!(
                !text.contains(&k.secret),
                "{} echoed by {label}:\n{text}",
                k.rule
            );
        }
    }
}

#[test]
fn a_session_id_that_looks_like_a_key_is_refused_and_nothing_is_written() {
    let p = Project::initialized();
    let before = p.snapshot();
    let id = ["gh", "o_"].concat() + &fake(36, ALNUM, 99);
    let out = p
        .ctxkeep(&["track", "--tokens", "5", "--session", &id])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("looks like a secret"), "{err}");
    assert!(!err.contains(&id), "{err}");
    let after = p.snapshot();
    assert_eq!(crate::support::diff(&before, &after), Vec::<String>::new());
}

#[test]
fn ordinary_text_passes_through_checkpoint_and_resume_untouched() {
    let clean = clean_corpus();
    let p = Project::initialized();
    let note = clean.join("\n");
    let mut seen = Seen::default();
    let out = seen.run(
        &p,
        &[
            "checkpoint",
            "--phase",
            &clean[0],
            "--task",
            &clean[2],
            "--agent",
            "claude-code",
            "--next",
            &clean[5],
            "--decision",
            &clean[3],
            "--question",
            &clean[8],
            "--note",
            &note,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", seen.all());
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let from = serde_json::json!({ "decisions": clean, "notes": note });
    let out = stdin_run(&p, &["checkpoint", "--from", "-"], &from.to_string());
    seen.keep("checkpoint --from -", out);
    let out = seen.run(&p, &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", seen.all());
    let prompt = String::from_utf8_lossy(&out.stdout).into_owned();
    let (json, _) = p.json(&["resume"]);
    let archive = p.read(&format!(".ctxkeep/checkpoints/{id}.json"));
    let archived: serde_json::Value = serde_json::from_str(&archive).unwrap();
    assert_eq!(archived["notes"], note.as_str());
    assert_eq!(archived["phase"], clean[0].as_str());
    for text in &clean {
        assert!(prompt.contains(text.as_str()), "{text:?} not in\n{prompt}");
        assert!(
            json["prompt"].as_str().unwrap().contains(text.as_str()),
            "{text:?}"
        );
    }
    assert!(!seen.all().contains("[REDACTED"), "{}", seen.all());
    for (name, text) in written_files(&p) {
        assert!(!text.contains("[REDACTED"), "{name}:\n{text}");
    }
}
