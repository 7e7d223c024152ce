//! Which fact wins (docs/state-file.md): the request is the prompt that set the task, and the
//! agent's newest stated remaining list is the next step. A Claude Code session is written line
//! by line and each hook runs where the CLI fires it (`UserPromptSubmit` with the prompt,
//! `PostToolUse` after a call, `Stop` at a turn's end, `PreCompact`, then
//! `SessionStart(compact)`), in Claude Code's transcript and payload shapes.

use serde_json::{json, Value};

use crate::support::Project;
use crate::transcripts::jsonl;

const SESSION: &str = "5e55-10a1";
const TRANSCRIPT: &str = "session.jsonl";

/// A Claude Code session under way: its transcript so far, and the hooks it fires.
struct Session<'a> {
    p: &'a Project,
    lines: Vec<String>,
    n: usize,
}

impl<'a> Session<'a> {
    fn new(p: &'a Project) -> Session<'a> {
        Session {
            p,
            lines: Vec::new(),
            n: 0,
        }
    }

    fn push(&mut self, mut v: Value) {
        self.n += 1;
        v["sessionId"] = json!(SESSION);
        v["isSidechain"] = json!(false);
        v["uuid"] = json!(format!("u-{}", self.n));
        v["cwd"] = json!(self.p.root());
        v["timestamp"] = json!(format!("2026-11-28T10:{:02}:00.000Z", self.n % 60));
        self.lines.push(v.to_string());
        std::fs::write(self.p.home().join(TRANSCRIPT), jsonl(&self.lines)).unwrap();
    }

    /// Runs `event` with the transcript as it stands; what it adds to the model's context.
    fn hook(&self, event: &str, extra: Value) -> String {
        let mut payload = json!({
            "session_id": SESSION,
            "transcript_path": self.p.home().join(TRANSCRIPT),
            "cwd": self.p.root(),
            "hook_event_name": event,
        });
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let out = self
            .p
            .ctxkeep(&["hook", "claude-code"])
            .write_stdin(payload.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{payload}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{payload}");
        let out = String::from_utf8(out.stdout).unwrap();
        let out = out.trim();
        if !out.starts_with('{') {
            return String::new();
        }
        let v: Value = serde_json::from_str(out).unwrap();
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The user types `text`: the line, then `UserPromptSubmit`.
    fn prompt(&mut self, text: &str) {
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}));
        self.hook("UserPromptSubmit", json!({ "prompt": text }));
    }

    /// The user runs a slash command with arguments, as Claude Code records it.
    fn command(&mut self, name: &str, args: &str) {
        let text = format!(
            "<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n<command-args>{args}</command-args>"
        );
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}));
        self.hook(
            "UserPromptSubmit",
            json!({ "prompt": format!("/{name} {args}") }),
        );
    }

    fn said(&mut self, text: &str) {
        self.push(json!({"type": "assistant", "message": {
            "id": format!("m-{}", self.n), "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 20_000, "output_tokens": 5}}}));
    }

    /// A call and its result, with `PreToolUse` and `PostToolUse` where the CLI fires them.
    fn call(&mut self, name: &str, input: Value, output: &str) {
        let id = format!("toolu_{}", self.n);
        self.push(json!({"type": "assistant", "message": {
            "id": format!("m-{}", self.n), "role": "assistant", "model": "claude-opus-4-6",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 20_000, "output_tokens": 5}}}));
        let call = json!({"tool_name": name, "tool_input": input, "tool_use_id": id});
        self.hook("PreToolUse", call.clone());
        let mut post = call;
        post["tool_response"] = json!(output);
        self.hook("PostToolUse", post);
        self.push(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": output, "is_error": false}]}}),
        );
    }

    fn stop(&self) {
        self.hook("Stop", json!({ "stop_hook_active": false }));
    }

    /// An automatic compaction: `PreCompact`, the boundary and the summary, then
    /// `SessionStart(compact)`; returns what the session is given back.
    fn compact(&mut self) -> String {
        self.hook(
            "PreCompact",
            json!({ "trigger": "auto", "custom_instructions": "" }),
        );
        self.push(json!({"type": "system", "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": 167_000}}));
        self.push(json!({"type": "user", "isCompactSummary": true,
            "message": {"role": "user", "content": "This session is being continued from a previous conversation. Summary:\n1. Primary Request and Intent:\n   The task.\n"}}));
        self.hook("SessionStart", json!({ "source": "compact" }))
    }

    /// What the newest checkpoint observed of the session.
    fn observed(&self) -> Value {
        let dir = self.p.path(".ctxkeep/checkpoints");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        let newest: Value =
            serde_json::from_str(&std::fs::read_to_string(files.last().unwrap()).unwrap()).unwrap();
        newest["observed"].clone()
    }
}

const TASK: &str = "Make the TOML parser accept inline tables in src/ast.rs, with tests";

fn edit(s: &mut Session, file: &str) {
    let path = s.p.path(file);
    s.call(
        "Edit",
        json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        "The file has been updated.",
    );
}

#[test]
fn a_remaining_list_said_after_an_older_plan_item_is_what_the_resume_prompt_shows() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut s = Session::new(&p);
    s.prompt(TASK);
    s.call(
        "TodoWrite",
        json!({"todos": [
            {"content": "Teach the lexer the inline-table braces", "status": "completed", "activeForm": "Teaching"},
            {"content": "Wire the lexer into parse_table", "status": "in_progress", "activeForm": "Wiring"}]}),
        "Todos have been modified successfully.",
    );
    // Narration on the way to a call is not a step.
    s.said("I need to add the `reload_transcript/1` private function.");
    edit(&mut s, "src/lexer.rs");
    s.said("The lexer change is in.\n\nRemaining steps:\n1. Make parse_table recurse into inline tables in src/ast.rs\n2. Rerun cargo test ast\n3. Commit and push");
    s.stop();
    let back = s.compact();

    let seen = s.observed();
    assert_eq!(seen["request"], TASK);
    let step = seen["next_step"].as_str().unwrap();
    assert!(
        step.ends_with("Make parse_table recurse into inline tables in src/ast.rs; Rerun cargo test ast; Commit and push"),
        "{seen}"
    );
    assert_eq!(seen["next_step_newer_than_plan"], true);
    let prompt = if back.contains("What remains") {
        back
    } else {
        let out = p.ctxkeep(&["resume", "--peek"]).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(
        prompt.contains("Rerun cargo test ast; Commit and push"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("Wire the lexer into parse_table"),
        "the older plan item is not what remains: {prompt}"
    );
    assert!(!prompt.contains("reload_transcript"), "{prompt}");
}

#[test]
fn a_completed_plan_item_is_never_the_next_step() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut s = Session::new(&p);
    s.prompt(TASK);
    s.said("The parser part is done.\n\nNext: write the changelog entry");
    s.stop();
    s.prompt("go on");
    s.call(
        "TodoWrite",
        json!({"todos": [
            {"content": "Write the changelog entry", "status": "completed", "activeForm": "Writing"}]}),
        "Todos have been modified successfully.",
    );
    s.compact();
    let seen = s.observed();
    assert_eq!(seen["next_step"], Value::Null, "{seen}");
    let out = p.ctxkeep(&["resume", "--peek"]).output().unwrap();
    let prompt = String::from_utf8(out.stdout).unwrap();
    assert!(
        !prompt.contains("Next step: write the changelog"),
        "{prompt}"
    );
}

#[test]
fn a_question_after_the_task_leaves_the_request_and_is_a_follow_up() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut s = Session::new(&p);
    s.prompt("Add the powerline glyphs to the status bar SVG in assets/bar.svg");
    edit(&mut s, "assets/bar.svg");
    s.said("The glyphs are in.");
    s.stop();
    let question = "how does the SVG handle the correct font with the power line symbols and every icon that's there?";
    s.prompt(question);
    s.said("It names the Nerd Font family first and falls back to monospace.");
    s.stop();
    s.compact();
    let seen = s.observed();
    assert_eq!(
        seen["request"],
        "Add the powerline glyphs to the status bar SVG in assets/bar.svg"
    );
    assert_eq!(seen["follow_ups"], json!([question]));
}

#[test]
fn a_pasted_document_a_settings_command_and_an_injected_prompt_are_not_the_request() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut s = Session::new(&p);
    let task = "Migrate the thirteen guides in docs/guides to the new client API";
    s.prompt(task);
    edit(&mut s, "docs/guides/billing.md");
    s.said("Billing is migrated.");
    s.stop();
    // The text of one guide, pasted as it is.
    let guide = format!(
        "# Shipping guide\n\n## Steps\n\n{}",
        "1. Install the client.\n2. Run `make ship`.\n\n".repeat(8)
    );
    s.prompt(&guide);
    s.said("Thanks, I will follow its layout.");
    s.stop();
    s.command("notify", "y");
    s.said("Notifications are on.");
    s.stop();
    s.prompt("<ci-monitor-event>CI check \"docs-lint\" failed on PR #41. Run `gh pr checks 41` to see details, then fix the failing check.</ci-monitor-event>");
    edit(&mut s, "docs/guides/shipping.md");
    s.compact();
    let seen = s.observed();
    assert_eq!(seen["request"], task, "{seen}");
    let follow_ups = seen["follow_ups"].to_string();
    assert!(
        !follow_ups.contains("ci-monitor-event") && !follow_ups.contains("/notify"),
        "{follow_ups}"
    );
    let out = p.ctxkeep(&["resume", "--peek"]).output().unwrap();
    let prompt = String::from_utf8(out.stdout).unwrap();
    assert!(
        prompt.contains(&format!("The user's request: {task}")),
        "{prompt}"
    );
}

/// The agent lists what is still open, ends its turn, and the user's next prompt comes.
fn open_threads_then(s: &mut Session, prompt: &str) {
    s.prompt(TASK);
    edit(s, "src/ast.rs");
    s.said("Inline tables parse.\n\nThe open threads still stand:\n\n- Push the parser branch\n- Document inline tables in README.md");
    s.stop();
    s.prompt(prompt);
    s.said("Same cause as before: the command is installed twice.");
    s.call(
        "Bash",
        json!({"command": "rm ~/.claude/commands/retro.md"}),
        "",
    );
    s.said("Removed the copy.");
    s.stop();
}

#[test]
fn a_question_that_asks_for_no_work_leaves_the_remaining_list_standing() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut s = Session::new(&p);
    // The user's own words are a question; a menu pasted from the terminal follows.
    open_threads_then(
        &mut s,
        "why do we see dupes here?\n❯ /retro\n────────────────────\n  /retro       Reflect on recent work (user)\n  /duet:retro  Reflect on recent work (duet)",
    );
    s.compact();
    let step = s.observed()["next_step"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        step.contains("Push the parser branch") && step.contains("Document inline tables"),
        "{step}"
    );
}

#[test]
fn a_prompt_that_sets_work_makes_the_remaining_list_out_of_date() {
    for prompt in [
        "why do we see dupes here? remove the copies",
        "Delete the duplicate retro command from ~/.claude/commands",
    ] {
        let p = Project::initialized();
        p.checkpoint(&[]).success();
        let mut s = Session::new(&p);
        open_threads_then(&mut s, prompt);
        s.compact();
        assert_eq!(s.observed()["next_step"], Value::Null, "{prompt}");
    }
}
