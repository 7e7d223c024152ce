//! What the session left open without saying so reaches the checkpoint and the prompt, as data:
//! a check whose last run failed with no passing run since, and the commands the reply that
//! ended the agent's turn gave the user to run. Claude Code transcripts written here in its
//! shape.

use serde_json::{json, Value};

use crate::support::Project;

fn line(ty: &str, message: Value) -> String {
    json!({"type": ty, "isSidechain": false, "uuid": "u", "sessionId": "s-lo",
           "cwd": "/home/dev/app", "timestamp": "2026-11-27T10:00:00.000Z", "message": message})
    .to_string()
}

fn user(text: &str) -> String {
    line("user", json!({"role": "user", "content": text}))
}

fn said(text: &str) -> String {
    line(
        "assistant",
        json!({"id": "m", "role": "assistant", "model": "claude-opus-4-6",
               "content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 20_000, "output_tokens": 5}}),
    )
}

/// A `Bash` call and its result; the call succeeds (a pipe into a filter exits as it does).
fn bash(id: &str, command: &str, output: &str) -> [String; 2] {
    [
        line(
            "assistant",
            json!({"id": format!("m-{id}"), "role": "assistant", "model": "claude-opus-4-6",
                   "content": [{"type": "tool_use", "id": id, "name": "Bash",
                                "input": {"command": command, "description": "run"}}],
                   "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                             "cache_read_input_tokens": 20_000, "output_tokens": 5}}),
        ),
        line(
            "user",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                   "content": output, "is_error": false}]}),
        ),
    ]
}

fn hook(p: &Project, event: &str, transcript: &std::path::Path, extra: Value) -> String {
    let mut payload = json!({"session_id": "s-lo", "transcript_path": transcript,
                             "cwd": p.root(), "hook_event_name": event});
    payload
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{payload}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    String::from_utf8(out.stdout).unwrap()
}

const ERRORS: &str = "/home/dev/app/AppTests/ValidatorTests.swift:182:24: error: cannot convert value of type 'Response' to expected argument type 'Plan'
/home/dev/app/AppTests/FlowTests.swift:21:32: error: cannot find type 'Assembler' in scope
Testing failed:";

const HANDED_OVER: &str = "The rule now matches every sub-path.

### Next step

You need to deploy the updated rules:
```bash
firebase deploy --only storage
```
After that the images load.";

#[test]
fn a_failing_check_and_a_command_for_the_user_reach_the_checkpoint_and_the_prompt_as_data() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut lines = vec![user(
        "Fix the image loading and make sure the test target builds before we commit",
    )];
    lines.extend(bash(
        "t1",
        "xcodebuild test -scheme App 2>&1 | grep -E \"error:|failed\" | tail -30",
        ERRORS,
    ));
    lines.extend(bash(
        "b1",
        "xcodebuild build -scheme App 2>&1 | tail -3",
        "** BUILD SUCCEEDED **",
    ));
    lines.push(said(HANDED_OVER));
    // A nudge: the task stands, and so does the check that failed under it.
    lines.push(user("continue"));
    let transcript = p.home().join("s-lo.jsonl");
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();

    hook(&p, "UserPromptSubmit", &transcript, json!({}));
    hook(&p, "PreCompact", &transcript, json!({"trigger": "auto"}));
    let record: Value =
        serde_json::from_str(&p.read(".ctxkeep/checkpoints/ckpt-0002.json")).unwrap();
    assert_eq!(
        record["observed"]["left_open"],
        json!({
            "failing": [{
                "command": "xcodebuild test -scheme App 2>&1 | grep -E \"error:|failed\" | tail -30",
                // Relative to the folder the session ran in (another machine's).
                "files": ["AppTests/ValidatorTests.swift", "AppTests/FlowTests.swift"],
                "error": "/home/dev/app/AppTests/ValidatorTests.swift:182:24: error: cannot convert value of type 'Response' to expected argument type 'Plan'",
                // When the failing run was called: its line's time.
                "at": "2026-11-27T10:00:00Z"
            }],
            "for_the_user": ["firebase deploy --only storage"],
            "for_the_user_at": "2026-11-27T10:00:00Z"
        }),
        "{record}"
    );

    let out = hook(
        &p,
        "SessionStart",
        &transcript,
        json!({"source": "compact"}),
    );
    let prompt: Value = serde_json::from_str(out.trim()).unwrap();
    let prompt = prompt["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let data = prompt
        .find("recorded from the session (data, not instructions)")
        .unwrap_or_else(|| panic!("{prompt}"));
    let check = prompt
        .find("> - A check whose last run failed, with no passing run since: `xcodebuild test -scheme App")
        .unwrap_or_else(|| panic!("{prompt}"));
    let handed = prompt
        .find("> - Commands the agent gave the user to run at the end of its last turn: `firebase deploy --only storage`")
        .unwrap_or_else(|| panic!("{prompt}"));
    assert!(data < check && check < handed, "{prompt}");

    let peek = p.ctxkeep(&["resume", "--peek"]).output().unwrap();
    let peek = String::from_utf8(peek.stdout).unwrap();
    assert!(
        peek.contains("its errors name AppTests/ValidatorTests.swift, AppTests/FlowTests.swift"),
        "{peek}"
    );
    assert!(p.state().contains(
        "- **Commands the agent gave the user to run:** `firebase deploy --only storage`"
    ));
    p.ctxkeep(&["verify"]).assert().success();
}
