//! The files a checkpoint records as worked from, and the request a refinement leans on, as a
//! reader sees them through `checkpoint --transcript` and `resume`: a Claude Code transcript
//! written here in its shape (no shared text).

use serde_json::{json, Value};

use crate::support::{Project, MINIMAL_CHECKPOINT};

struct Transcript<'a> {
    p: &'a Project,
    lines: Vec<String>,
}

impl Transcript<'_> {
    fn line(&mut self, ty: &str, message: Value, extra: Value) {
        let mut v = json!({"parentUuid": "p", "isSidechain": false, "userType": "external",
               "cwd": self.p.root(), "sessionId": "s1", "version": "2.1.70", "type": ty,
               "message": message, "uuid": "u", "timestamp": "2026-03-06T20:00:00.000Z"});
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        self.lines.push(v.to_string());
    }
    fn prompt(&mut self, text: &str) {
        self.line("user", json!({"role": "user", "content": text}), json!({}));
    }
    fn call(&mut self, id: &str, name: &str, input: Value) {
        self.line(
            "assistant",
            json!({"model": "claude-opus-4-6", "id": format!("m{id}"), "role": "assistant",
                   "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}),
            json!({}),
        );
    }
    fn result(&mut self, id: &str, text: &str, is_error: bool) {
        self.line(
            "user",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                   "content": text, "is_error": is_error}]}),
            json!({}),
        );
    }
    fn read(&mut self, id: &str, path: &str) {
        self.call(id, "Read", json!({"file_path": path}));
        self.result(id, "     1\u{2192}package store", false);
    }
    fn compaction(&mut self) {
        self.line(
            "user",
            json!({"role": "user", "content": "This session is being continued from a previous conversation that ran out of context."}),
            json!({"isCompactSummary": true}),
        );
    }
    fn checkpoint(&self) -> Value {
        self.p.write("t.jsonl", self.lines.join("\n") + "\n");
        let mut args = vec!["--json"];
        args.extend(MINIMAL_CHECKPOINT);
        args.extend(["--transcript", "t.jsonl"]);
        let out = self.p.ctxkeep(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn resume(p: &Project) -> String {
    let out = p.ctxkeep(&["resume"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn files_in_view_since_the_compaction_and_a_failing_builds_error_sites_are_worked_from() {
    let p = Project::initialized();
    let root = p.root().to_string_lossy().into_owned();
    let mut t = Transcript {
        p: &p,
        lines: Vec::new(),
    };
    t.prompt("Find why the hook logs of one session land in another session's log file");
    t.read("r0", &format!("{root}/docs/old-notes.md"));
    t.compaction();
    // Read once each since the compaction: a design note, the logger; a file outside the
    // project and the agent's scratch file are not the project's.
    t.read("r1", &format!("{root}/docs/plans/state-machine-v2.md"));
    t.read("r2", &format!("{root}/internal/logging/logger.go"));
    t.read("r3", "/tmp/transcript.jsonl");
    t.call(
        "w1",
        "Write",
        json!({"file_path": format!("{root}/internal/store/attribution.go"), "content": "package store"}),
    );
    t.result("w1", "File created successfully", false);
    t.call(
        "b1",
        "Bash",
        json!({"command": "go test ./...", "description": "Run all tests"}),
    );
    t.result(
        "b1",
        "Exit code 1\n# example.com/app/internal/store\n\
         internal/store/attribution.go:137:6: countLines redeclared in this block\n\
         \tinternal/store/common.go:762:6: other declaration of countLines\n\
         FAIL\texample.com/app/internal/store [build failed]",
        true,
    );
    let written = t.checkpoint();
    let o = &written["observed"];
    assert_eq!(o["files"], json!(["internal/store/attribution.go"]));
    assert_eq!(
        o["worked_from"],
        json!([
            "internal/store/common.go",
            "internal/logging/logger.go",
            "docs/plans/state-machine-v2.md"
        ])
    );
    let text = resume(&p);
    assert!(
        text.contains(
            "> - Files worked from (read, not changed): internal/store/common.go, internal/logging/logger.go, docs/plans/state-machine-v2.md\n"
        ),
        "{text}"
    );
    assert!(!text.contains("old-notes.md") && !text.contains("/tmp/transcript.jsonl"));
}

#[test]
fn a_prompt_that_refines_the_task_is_a_follow_up_and_outlasts_later_reactions() {
    let p = Project::initialized();
    let mut t = Transcript {
        p: &p,
        lines: Vec::new(),
    };
    let task = "Ok, let's try something else: when the user commits, diff the commit against what the agent wrote in its snapshots and count the lines each side wrote, as a share?";
    t.prompt(task);
    t.prompt("let's keep it in the checkpoint's metadata, can you show a complete json sample for your cheaper counting option?");
    for remark in [
        "I think one entry per file is too much",
        "when someone amends the commit later it's not feasible to count again",
        "how about adding the commit's hash? Do we know it at that point?",
        "no, drop that again, someone would take it for a stable link",
        "ok, let's implement this",
    ] {
        t.prompt(remark);
    }
    let written = t.checkpoint();
    let o = &written["observed"];
    assert_eq!(o["request"], task);
    let follow_ups = o["follow_ups"].as_array().unwrap();
    assert_eq!(follow_ups.len(), 4);
    assert!(
        follow_ups[0]
            .as_str()
            .unwrap()
            .starts_with("let's keep it in the checkpoint's metadata"),
        "{follow_ups:?}"
    );
    assert_eq!(follow_ups[3], "ok, let's implement this");
    let text = resume(&p);
    assert!(
        text.contains(&format!("> - The user's request: {task}")),
        "{text}"
    );
}
