//! The files a checkpoint records as changed and as worked from when the session changed or
//! read them without its own `Edit`/`Write`/`Read` call: staged by name in a commit step, changed
//! by a subagent whose messages Claude Code carried in `agent_progress` lines, attached by a
//! slash command's `@` references or by Claude Code itself. Claude Code transcripts written here
//! in their real shapes, read through `checkpoint --transcript` (no shared text).

use serde_json::{json, Value};

use crate::support::{Project, MINIMAL_CHECKPOINT};

struct Transcript<'a> {
    p: &'a Project,
    version: &'a str,
    lines: Vec<String>,
}

impl Transcript<'_> {
    fn envelope(&self, ty: &str) -> Value {
        json!({"parentUuid": "p", "isSidechain": false, "userType": "external",
               "cwd": self.p.root(), "sessionId": "s1", "version": self.version,
               "gitBranch": "main", "type": ty, "uuid": "u",
               "timestamp": "2026-02-15T16:07:23.084Z"})
    }
    fn push(&mut self, mut v: Value, extra: Value) {
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        self.lines.push(v.to_string());
    }
    fn line(&mut self, ty: &str, message: Value, extra: Value) {
        let mut v = self.envelope(ty);
        v["message"] = message;
        self.push(v, extra);
    }
    fn prompt(&mut self, text: &str) {
        self.line("user", json!({"role": "user", "content": text}), json!({}));
    }
    fn call(&mut self, id: &str, name: &str, input: Value) {
        self.line(
            "assistant",
            json!({"model": "claude-opus-4-6", "id": format!("m{id}"), "type": "message",
                   "role": "assistant",
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
    fn bash(&mut self, id: &str, command: &str, output: &str) {
        self.call(
            id,
            "Bash",
            json!({"command": command, "description": "Run it"}),
        );
        self.result(id, output, false);
    }
    /// A subagent's message as Claude Code 2.1.37 carried it in the parent's file.
    fn progress(&mut self, parent: &str, message: Value) {
        let mut v = self.envelope("progress");
        v["data"] = json!({"message": message, "normalizedMessages": [],
                           "type": "agent_progress", "prompt": "Rename lineage to lore",
                           "agentId": "aec2dcd"});
        v["toolUseID"] = json!("agent_msg_01BNcVwS12eQvisjgDiGUbjM");
        v["parentToolUseID"] = json!(parent);
        self.push(v, json!({}));
    }
    fn sub_call(&mut self, parent: &str, id: &str, name: &str, input: Value) {
        self.progress(
            parent,
            json!({"type": "assistant", "timestamp": "2026-02-15T16:07:23.084Z",
                   "message": {"model": "claude-opus-4-6", "id": format!("m{id}"),
                               "type": "message", "role": "assistant",
                               "content": [{"type": "tool_use", "id": id, "name": name,
                                            "input": input, "caller": {"type": "direct"}}]},
                   "uuid": "c1"}),
        );
    }
    fn sub_result(&mut self, parent: &str, id: &str, text: &str, is_error: bool) {
        let mut block = json!({"tool_use_id": id, "type": "tool_result", "content": text});
        if is_error {
            block["is_error"] = json!(true);
        }
        self.progress(
            parent,
            json!({"type": "user", "message": {"role": "user", "content": [block]},
                   "uuid": "a8", "timestamp": "2026-02-15T16:07:23.090Z"}),
        );
    }
    fn observed(&self) -> Value {
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
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["observed"].clone()
    }
}

fn list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn files_staged_by_name_in_a_commit_step_are_changes_and_reads_searches_and_echoes_are_not() {
    let p = Project::initialized();
    let mut t = Transcript {
        p: &p,
        version: "2.1.37",
        lines: Vec::new(),
    };
    t.prompt("The consolidation leftovers in lore are still uncommitted: review and commit them");
    t.bash(
        "b1",
        "cd /Users/a/dev/lore && git diff README.md lib/ingest.sh lore.sh",
        "diff --git a/README.md b/README.md",
    );
    t.bash("b2", "cat docs/notes.md && ls -la src/app.rs", "notes");
    t.bash("b3", "grep -rn lineage src/main.rs", "");
    t.bash(
        "b4",
        "echo \"next: git add src/later.rs\"",
        "next: git add src/later.rs",
    );
    t.bash(
        "b5",
        "cd /Users/a/dev/lore && git add README.md lore.sh lib/lore-client-base.sh && git commit -m \"$(cat <<'EOF'\nfeat: Extend search, client library, and README\nEOF\n)\"",
        "[main 1a2b3c4] feat: Extend search, client library, and README\n 3 files changed",
    );
    t.bash(
        "b6",
        "git add -A && git commit -m 'wip'",
        "[main 5d6e7f8] wip",
    );
    t.bash("b7", "gofmt -w cmd/main.go && gofmt -l internal/x.go", "");
    let o = t.observed();
    let files = list(&o["files"]);
    for f in [
        "/Users/a/dev/lore/README.md",
        "/Users/a/dev/lore/lore.sh",
        "/Users/a/dev/lore/lib/lore-client-base.sh",
        "cmd/main.go",
    ] {
        assert!(files.contains(&f.to_string()), "{f} in {files:?}");
    }
    for f in [
        "docs/notes.md",
        "src/app.rs",
        "src/main.rs",
        "src/later.rs",
        "/Users/a/dev/lore/lib/ingest.sh",
        "internal/x.go",
    ] {
        assert!(!files.iter().any(|g| g.ends_with(f)), "{f} in {files:?}");
    }
}

#[test]
fn a_subagents_edits_carried_in_progress_lines_are_the_sessions_unless_they_failed() {
    let p = Project::initialized();
    let root = p.root().to_string_lossy().into_owned();
    let mut t = Transcript {
        p: &p,
        version: "2.1.37",
        lines: Vec::new(),
    };
    t.prompt("Rename every lineage reference to lore in the registry data files");
    t.call(
        "task1",
        "Task",
        json!({"description": "Rename lineage in registry YAML", "subagent_type": "general-purpose",
               "prompt": "Rename all \"lineage\" references to \"lore\" in the registry data files."}),
    );
    let yaml = format!("{root}/registry/data/clusters.yaml");
    t.sub_call("task1", "s1", "Read", json!({"file_path": yaml}));
    t.sub_result("task1", "s1", "     1\u{2192}clusters:", false);
    t.sub_call(
        "task1",
        "s2",
        "Edit",
        json!({"replace_all": false, "file_path": yaml,
               "old_string": "to: lineage", "new_string": "to: lore"}),
    );
    t.sub_result(
        "task1",
        "s2",
        &format!("The file {yaml} has been updated successfully."),
        false,
    );
    // An edit whose old text was not found changed nothing.
    t.sub_call(
        "task1",
        "s3",
        "Edit",
        json!({"replace_all": false, "file_path": format!("{root}/registry/data/metadata.yaml"),
               "old_string": "lineage:", "new_string": "lore:"}),
    );
    t.sub_result(
        "task1",
        "s3",
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
        true,
    );
    t.sub_call(
        "task1",
        "s4",
        "Bash",
        json!({"command": "sed -i '' 's/lineage/lore/g' registry/data/contracts.yaml && grep -c lore registry/data/relationships.yaml"}),
    );
    t.sub_result("task1", "s4", "12", false);
    t.result(
        "task1",
        "Renamed every reference in the registry data.",
        false,
    );
    let o = t.observed();
    let files = list(&o["files"]);
    assert!(
        files.contains(&"registry/data/clusters.yaml".to_string())
            && files.contains(&"registry/data/contracts.yaml".to_string()),
        "{files:?}"
    );
    for f in [
        "registry/data/metadata.yaml",
        "registry/data/relationships.yaml",
    ] {
        assert!(!files.contains(&f.to_string()), "{f} in {files:?}");
    }
    // The subagent's commands are not the main session's.
    let commands = o["commands"].to_string();
    assert!(!commands.contains("sed -i"), "{commands}");
}

#[test]
fn files_a_command_or_claude_code_attaches_are_read_not_changed() {
    let p = Project::initialized();
    let root = p.root().to_string_lossy().into_owned();
    let mut t = Transcript {
        p: &p,
        version: "2.1.49",
        lines: Vec::new(),
    };
    t.line(
        "user",
        json!({"role": "user", "content": "<command-message>gsd:discuss-phase</command-message>\n<command-name>/gsd:discuss-phase</command-name>\n<command-args>14</command-args>"}),
        json!({}),
    );
    t.line(
        "user",
        json!({"role": "user", "content": [{"type": "text", "text": "<objective>\nExtract implementation decisions for the phase; mail questions to dev@example.com.\n</objective>\n\n<context>\nPhase number: 14 (required)\n\n**Load project state:**\n@.planning/STATE.md\n\n**Load roadmap:**\n@.planning/ROADMAP.md\n</context>\n\nInstall with `npm i -D @types/node` if needed."}]}),
        json!({"isMeta": true}),
    );
    // What Claude Code attaches itself (an `@` mention in a prompt, or the files it gives
    // back after a compaction), as 2.1.222 writes it.
    let mut att = t.envelope("attachment");
    att.as_object_mut().unwrap().remove("type");
    att["type"] = json!("attachment");
    att["attachment"] = json!({"type": "file", "filename": format!("{root}/overlays/default.nix"),
        "content": {"type": "text", "file": {"filePath": format!("{root}/overlays/default.nix"),
                    "content": "{ inputs }:\n[\n]\n", "numLines": 3, "startLine": 1, "totalLines": 3}}});
    t.push(att, json!({}));
    t.call(
        "w1",
        "Write",
        json!({"file_path": format!("{root}/.planning/phases/14/14-CONTEXT.md"), "content": "# Phase 14"}),
    );
    t.result("w1", "File created successfully", false);
    let o = t.observed();
    assert_eq!(o["files"], json!([".planning/phases/14/14-CONTEXT.md"]));
    let worked_from = list(&o["worked_from"]);
    for f in [
        ".planning/STATE.md",
        ".planning/ROADMAP.md",
        "overlays/default.nix",
    ] {
        assert!(
            worked_from.contains(&f.to_string()),
            "{f} in {worked_from:?}"
        );
    }
    assert!(
        !worked_from
            .iter()
            .any(|f| f.contains("example.com") || f.contains("types/node")),
        "{worked_from:?}"
    );
}
