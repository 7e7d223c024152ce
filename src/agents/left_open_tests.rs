//! What the session left open without saying so, read from Claude Code transcripts written here
//! in its shape (no fixture text), as a hook reads them.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::agents::observe;
use crate::transcripts::activity::left_open::{FailingCheck, LeftOpen};

const ROOT: &str = "/home/dev/app";

fn line(ty: &str, message: Value) -> Value {
    json!({"parentUuid": "p", "isSidechain": false, "userType": "external", "cwd": ROOT,
           "sessionId": "sess-lo-1", "version": "2.1.70", "type": ty, "message": message,
           "uuid": "u", "timestamp": "2026-11-27T10:00:00.000Z"})
}

fn prompt(text: &str) -> Value {
    line("user", json!({"role": "user", "content": text}))
}

fn said(text: &str) -> Value {
    line(
        "assistant",
        json!({"model": "claude-opus-4-6", "id": "msg_s", "role": "assistant",
               "content": [{"type": "text", "text": text}]}),
    )
}

/// A `Bash` call and its result as Claude Code writes them: a failed exit is an error result
/// led by "Exit code N"; a pipe into a filter exits as the filter does.
fn bash(id: &str, cmd: &str, output: &str, exit: i64) -> [Value; 2] {
    let (content, is_error) = match exit {
        0 => (output.to_string(), false),
        n => (format!("Exit code {n}\n{output}"), true),
    };
    [
        line(
            "assistant",
            json!({"model": "claude-opus-4-6", "id": format!("msg_{id}"), "role": "assistant",
                   "content": [{"type": "tool_use", "id": id, "name": "Bash",
                                "input": {"command": cmd, "description": "run"}}]}),
        ),
        line(
            "user",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                   "content": content, "is_error": is_error}]}),
        ),
    ]
}

fn read(lines: &[Value]) -> Option<LeftOpen> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let now: DateTime<Utc> = DateTime::parse_from_rfc3339("2026-11-27T11:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    observe(&path, None, Some(Path::new(ROOT)), now)
        .unwrap()
        .left_open
}

const COMPILE_ERRORS: &str = "/home/dev/app/AppTests/Domain/ValidatorTests.swift:182:24: error: cannot convert value of type 'Response' to expected argument type 'Plan'
/home/dev/app/AppTests/Domain/ValidatorTests.swift:204:24: error: cannot convert value of type 'Response' to expected argument type 'Plan'
/home/dev/app/AppTests/Integration/FlowTests.swift:21:32: error: cannot find type 'Assembler' in scope
Testing failed:
\tTesting cancelled because the build failed.";

#[test]
fn a_test_run_that_failed_to_build_stays_open_though_the_app_builds() {
    let mut lines = vec![prompt(
        "Fix all the open issues, make sure the app builds and has tests for them, then commit and open a PR",
    )];
    // The tests fail to compile (piped through grep, so the call itself succeeds), then the
    // app's own build passes and the agent looks at git: the tests were never run again.
    lines.extend(bash(
        "t1",
        "xcodebuild test -scheme App -only-testing:AppTests/CacheTests 2>&1 | grep -E \"error:|failed\" | tail -30",
        COMPILE_ERRORS,
        0,
    ));
    lines.push(said("The test target has pre-existing build errors in three files. Let me verify the main app target still builds."));
    lines.extend(bash(
        "b1",
        "xcodebuild build -scheme App 2>&1 | tail -3",
        "** BUILD SUCCEEDED **",
        0,
    ));
    lines.extend(bash("g1", "git status --short", " M App/Cache.swift", 0));
    let open = read(&lines).expect("a failing check is left open");
    assert_eq!(
        open.failing,
        [FailingCheck {
            command: "xcodebuild test -scheme App -only-testing:AppTests/CacheTests 2>&1 | grep -E \"error:|failed\" | tail -30".into(),
            files: vec![
                "AppTests/Domain/ValidatorTests.swift".into(),
                "AppTests/Integration/FlowTests.swift".into()
            ],
            error: "/home/dev/app/AppTests/Domain/ValidatorTests.swift:182:24: error: cannot convert value of type 'Response' to expected argument type 'Plan'".into(),
            at: Some("2026-11-27T10:00:00Z".into()),
        }]
    );
    assert!(open.for_the_user.is_empty());

    // A later run of the tests that passes closes it.
    lines.extend(bash(
        "t2",
        "xcodebuild test -scheme App 2>&1 | tail -3",
        "** TEST SUCCEEDED **",
        0,
    ));
    assert_eq!(read(&lines), None);
}

#[test]
fn a_check_that_failed_before_a_new_task_is_the_earlier_works() {
    let mut lines = vec![prompt(
        "Build the functions and deploy them to the staging project",
    )];
    lines.extend(bash(
        "n1",
        "npm run build 2>&1",
        "> build\n> tsc\n\nsrc/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        2,
    ));
    let before_the_new_task = read(&lines).expect("the build failed");
    assert_eq!(before_the_new_task.failing[0].files, ["src/index.ts"]);
    lines.push(said("Done."));
    lines.push(prompt(
        "The mapping is still wrong when sending a request to the trainer; the createdAt field fails to decode",
    ));
    lines.extend(bash(
        "g1",
        "git commit -m 'fix: decode only the id'",
        "[main 1a2b3c4] fix",
        0,
    ));
    assert_eq!(read(&lines), None);
}

const FIXED_RULE: &str = "## Root cause found and fixed

The storage rule matched two path segments only.

### Next step

You need to **deploy the updated storage rules**:
```bash
firebase deploy --only storage
```

After that the images should load.";

#[test]
fn commands_the_last_reply_gives_the_user_stay_open_until_the_session_runs_them() {
    let mut lines = vec![prompt(
        "Images still fail to load after the upload; find out why",
    )];
    lines.extend(bash("r1", "cat storage.rules", "rules_version = '2';", 0));
    lines.push(said(FIXED_RULE));
    // An interface command, then the next task: the deploy is still the user's to run.
    lines.push(prompt("<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>sonnet</command-args>"));
    lines.push(prompt("Commit everything that is staged"));
    let open = read(&lines).expect("the deploy is left to the user");
    assert_eq!(open.for_the_user, ["firebase deploy --only storage"]);
    assert!(open.failing.is_empty());

    // The session runs it itself: it is no longer the user's.
    lines.extend(bash(
        "d1",
        "cd /home/dev/app && firebase deploy --only storage 2>&1",
        "Deploy complete!",
        0,
    ));
    assert_eq!(read(&lines), None);
}

#[test]
fn a_shell_block_in_a_reply_before_more_calls_is_not_handed_over() {
    let mut lines = vec![prompt("Add a release script and try it")];
    lines.push(said(
        "I'll run it like this:\n```bash\nnpm run release -- --dry-run\n```",
    ));
    lines.extend(bash("x1", "ls scripts", "release.sh", 0));
    lines.push(said("The script is in place and the dry run is clean."));
    lines.push(prompt("Thanks, now update the changelog"));
    assert_eq!(read(&lines), None);
}
