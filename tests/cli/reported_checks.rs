//! A check a tool reports failing in a message it injects into the conversation (a CI
//! monitor's `<ci-monitor-event>`, a monitor's `<task-notification>` event) is left open until a
//! later report passes the same check, or a new task starts; the user's own words about a
//! failure are not a report. Claude Code 2.1.222 transcripts written here in their real shapes,
//! read through `checkpoint --transcript` and `resume`.

use serde_json::{json, Value};

use crate::support::{Project, MINIMAL_CHECKPOINT};

fn envelope(p: &Project, ty: &str) -> Value {
    json!({"parentUuid": "p", "isSidechain": false, "type": ty, "uuid": "u",
           "timestamp": "2026-08-11T07:59:11.430Z", "userType": "external",
           "entrypoint": "claude-desktop", "cwd": p.root(), "sessionId": "s1",
           "version": "2.1.222", "gitBranch": "feature"})
}

fn prompt(p: &Project, text: &str, origin: &str) -> String {
    let mut v = envelope(p, "user");
    v["message"] = json!({"role": "user", "content": text});
    v["origin"] = json!({"kind": origin});
    v["promptSource"] = json!("sdk");
    v.to_string()
}

fn queued(p: &Project, text: &str) -> String {
    let mut v = envelope(p, "attachment");
    v["attachment"] = json!({"type": "queued_command", "prompt": text, "commandMode": "prompt",
                             "origin": {"kind": "human"}, "timestamp": "2026-08-11T07:59:07.452Z"});
    v.to_string()
}

fn said(p: &Project, text: &str) -> String {
    let mut v = envelope(p, "assistant");
    v["message"] = json!({"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-5",
                          "content": [{"type": "text", "text": text}]});
    v.to_string()
}

fn notification(event: &str) -> String {
    format!(
        "<task-notification>\n<task-id>blpetgm4m</task-id>\n<summary>Monitor event: \"PR 2351 CI checks reaching terminal state\"</summary>\n<event>{event}</event>\nIf this event is something the user would act on now, send a PushNotification. Routine or benign output doesn't need one.\n</task-notification>"
    )
}

fn checkpoint(p: &Project, lines: &[String]) -> Value {
    p.write("t.jsonl", lines.join("\n") + "\n");
    let mut args = vec!["--json"];
    args.extend(MINIMAL_CHECKPOINT);
    args.extend(["--transcript", "t.jsonl"]);
    let out = p.ctxkeep(&args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["observed"].clone()
}

fn failing(o: &Value) -> Vec<String> {
    o["left_open"]["failing"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["command"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_monitors_failed_checks_stay_open_until_it_reports_them_passing() {
    let p = Project::initialized();
    let lines = vec![
        prompt(
            &p,
            "add prime-agent and t3code to the nix packages and create a PR",
            "human",
        ),
        said(&p, "PR #2351 is open. I'll wait for the CI monitor to report results."),
        prompt(&p, &notification("nix-format: fail\nshell-lint: pass"), "task-notification"),
        queued(
            &p,
            "<ci-monitor-event>CI checks \"nix-test\", \"nix-flake\" failed on acme/dotfiles PR #2351. Run `gh pr checks 2351 --repo acme/dotfiles` to see details, then fix the failing checks.</ci-monitor-event>",
        ),
        prompt(&p, &notification("nix-format: pass"), "task-notification"),
    ];
    let o = checkpoint(&p, &lines);
    assert_eq!(failing(&o), ["CI: nix-test", "CI: nix-flake"], "{o}");
    assert!(o["left_open"]["failing"][0]["error"]
        .as_str()
        .unwrap()
        .starts_with("CI checks \"nix-test\", \"nix-flake\" failed on acme/dotfiles PR #2351"));
    // The monitor's message is not the request.
    assert!(o["request"]
        .as_str()
        .unwrap()
        .starts_with("add prime-agent"));
    let out = p.ctxkeep(&["resume"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("A check whose last run failed, with no passing run since: `CI: nix-test`"),
        "{text}"
    );

    // A later report passing both ends them.
    let mut later = lines.clone();
    later.push(prompt(
        &p,
        &notification("nix-test: pass\nnix-flake: pass"),
        "task-notification",
    ));
    assert!(failing(&checkpoint(&p, &later)).is_empty());

    // So does a new task.
    let mut new_task = lines.clone();
    new_task.push(prompt(
        &p,
        "now update the README's install section for the new packages",
        "human",
    ));
    assert!(failing(&checkpoint(&p, &new_task)).is_empty());
}

#[test]
fn the_users_words_about_a_failure_and_the_summary_quoting_one_are_not_reports() {
    let p = Project::initialized();
    let mut summary = envelope(&p, "user");
    summary["message"] = json!({"role": "user", "content": "This session is being continued from a previous conversation that ran out of context.\n\nSummary:\n1. Primary Request and Intent:\n   - <ci-monitor-event>CI checks \"nix-test\" failed on acme/dotfiles PR #2351.</ci-monitor-event>"});
    summary["isCompactSummary"] = json!(true);
    let lines = vec![
        prompt(
            &p,
            "CI checks \"nix-test\" failed on the PR, can you look at the nix-test logs?",
            "human",
        ),
        summary.to_string(),
    ];
    let o = checkpoint(&p, &lines);
    assert!(failing(&o).is_empty(), "{o}");
}
