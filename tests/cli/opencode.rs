//! OpenCode: `hooks install|uninstall|doctor opencode` (a plugin file and the
//! MCP server in opencode.json), and its hooks on the payloads and session
//! record captured from OpenCode 1.18.33 (tests/fixtures/agents/opencode-1.18.33).

use serde_json::{json, Value};

use crate::hooks::doctor_text;
use crate::support::Project;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/opencode-1.18.33"
);
const PLUGIN: &str = ".opencode/plugins/ctxkeep.js";
const CONFIG: &str =
    "// mine\n{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"anthropic/claude-sonnet-4-5\", // pinned\n  \"mcp\": {\n    \"other\": { \"type\": \"remote\", \"url\": \"https://example.invalid/mcp\" }\n  }\n}\n";

/// The captured payload of `name` (`hooks/<name>.json`), pointed at the project and at the
/// record `record` in it.
fn payload(p: &Project, name: &str, record: &str) -> String {
    let text = std::fs::read_to_string(format!("{FIXTURES}/hooks/{name}.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["transcript_path"] = json!(p.path(record));
    v["cwd"] = json!(p.root());
    v.to_string()
}

/// The first `lines` lines of the captured session record.
fn record(lines: usize) -> String {
    let text = std::fs::read_to_string(format!("{FIXTURES}/transcript.jsonl")).unwrap();
    text.lines().take(lines).map(|l| format!("{l}\n")).collect()
}

fn hook(p: &Project, payload: String) -> String {
    let out = p
        .ctxkeep(&["hook", "opencode"])
        .write_stdin(payload)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn context(stdout: &str) -> String {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn install_writes_the_plugin_and_the_mcp_server_and_uninstall_gives_the_bytes_back() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write("opencode.json", CONFIG);
    let out = p
        .ctxkeep(&["hooks", "install", "opencode", "--team", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(p.read("opencode.json"), CONFIG);
    assert!(!p.path(".opencode").exists(), "a dry run writes nothing");

    let out = p
        .ctxkeep(&["hooks", "install", "opencode", "--team"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "+ plugin: ctxkeep hook opencode\n+ mcp.ctxkeep: ctxkeep mcp\n"
    );
    let plugin = p.read(PLUGIN);
    assert!(plugin.contains("ctxkeep-opencode-plugin"), "{plugin}");
    assert!(plugin.contains(r#"const COMMAND = ["ctxkeep", "hook", "opencode"];"#));
    let config = p.read("opencode.json");
    assert!(
        config.starts_with("// mine\n") && config.contains("// pinned"),
        "{config}"
    );
    let doc: Value = serde_json::from_str(
        &config
            .lines()
            .map(|l| l.split(" //").next().unwrap())
            .filter(|l| !l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    assert_eq!(
        doc["mcp"]["ctxkeep"],
        json!({"type": "local", "command": ["ctxkeep", "mcp"], "enabled": true})
    );
    assert_eq!(doc["mcp"]["other"]["type"], "remote");

    // Again: nothing to change.
    let again = p
        .ctxkeep(&["hooks", "install", "opencode", "--team"])
        .output()
        .unwrap();
    assert!(again.stdout.is_empty());

    let (report, code) = doctor_text(&p, "opencode");
    assert_eq!(code, Some(0), "{report}");
    for line in [
        "ok    plugin: ",
        "ok    hooks.SessionStart: ctxkeep hook opencode: runs",
        "ok    hooks.PostToolUse: ctxkeep hook opencode: runs",
        "ok    hooks.PreRequest: ctxkeep hook opencode: runs",
        "ok    hooks.PreCompact: ctxkeep hook opencode: runs, briefs the summarizer",
        "ok    hooks.SessionEnd: ctxkeep hook opencode: runs",
        "ok    mcp: ctxkeep mcp: serves",
    ] {
        assert!(report.contains(line), "{line}: {report}");
    }

    let out = p
        .ctxkeep(&["hooks", "uninstall", "opencode"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "- plugin: ctxkeep hook opencode\n- mcp.ctxkeep: ctxkeep mcp\n"
    );
    assert_eq!(p.read("opencode.json"), CONFIG, "the user's bytes, exactly");
    assert!(!p.path(".opencode").exists(), "the folders it made go too");
}

#[test]
fn without_a_config_install_makes_one_and_uninstall_removes_it() {
    let p = Project::initialized();
    p.write(
        ".opencode/plugins/mine.js",
        "export const Mine = async () => ({});\n",
    );
    p.ctxkeep(&["hooks", "install", "opencode", "--team"])
        .assert()
        .success();
    assert!(p.path("opencode.json").is_file());
    p.ctxkeep(&["hooks", "uninstall", "opencode"])
        .assert()
        .success();
    assert!(!p.path("opencode.json").exists());
    assert!(!p.path(PLUGIN).exists());
    assert_eq!(
        p.read(".opencode/plugins/mine.js"),
        "export const Mine = async () => ({});\n",
        "the user's plugin and its folder stay"
    );
}

#[test]
fn a_file_of_the_users_at_the_plugins_path_is_refused_and_nothing_is_written() {
    let p = Project::initialized();
    p.write(PLUGIN, "export const Mine = async () => ({});\n");
    let out = p
        .ctxkeep(&["hooks", "install", "opencode", "--team"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not ctxkeep's") && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(p.read(PLUGIN), "export const Mine = async () => ({});\n");
    assert!(!p.path("opencode.json").exists(), "all or nothing");
    // Nor is it removed.
    p.ctxkeep(&["hooks", "uninstall", "opencode"])
        .assert()
        .success();
    assert!(p.path(PLUGIN).is_file());
}

#[test]
fn another_version_of_the_plugin_fails_the_doctor_and_install_replaces_it() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.write(
        PLUGIN,
        "// ctxkeep-opencode-plugin 0\nexport const Old = async () => ({});\n",
    );
    let (report, code) = doctor_text(&p, "opencode");
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("FAIL  plugin: ") && report.contains("another version"),
        "{report}"
    );
    let out = p
        .ctxkeep(&["hooks", "install", "opencode", "--no-mcp"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "- plugin: ctxkeep hook opencode\n+ plugin: ctxkeep hook opencode\n"
    );
    assert!(p.read(PLUGIN).contains("const COMMAND"));
}

#[test]
fn the_captured_hooks_give_the_prompt_the_stages_and_the_loop_warning() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let start = hook(&p, payload(&p, "SessionStart-startup", "record.jsonl"));
    assert!(
        context(&start).contains("run cargo test and fix the failing split test"),
        "{start}"
    );

    // The record up to the reply that made the first failing call (160,000 tokens): before the
    // next request, the stages it crossed are given.
    p.write("record.jsonl", record(14));
    let said = context(&hook(&p, payload(&p, "PreRequest", "record.jsonl")));
    assert!(
        said.contains("stage stage-95 (checkpoint) reached"),
        "{said}"
    );
    let (status, _) = p.json(&["status"]);
    // The token count and the window from the record, the limit from OpenCode's output allowance.
    assert_eq!(
        (&status["tokens"], &status["window"], &status["limit"]),
        (&json!(160_000), &json!(200_000), &json!(168_000)),
        "{status}"
    );

    // The same failing command three times (its payload, as OpenCode reported it): given at the
    // third, from the call's own outcome. The first is also in the record, under the same id
    // (`callID`): not counted twice.
    let bash = payload(&p, "PostToolUse-bash", "record.jsonl");
    let mut said = Vec::new();
    for i in 0..3 {
        let mut v: Value = serde_json::from_str(&bash).unwrap();
        if i > 0 {
            v["tool_use_id"] = json!(format!("call_{i}"));
        }
        said.push(hook(&p, v.to_string()));
    }
    assert!(said[0].is_empty() && said[1].is_empty(), "{said:?}");
    let warning = context(&said[2]);
    assert!(
        warning.contains("stuck in a loop") && warning.contains("exit 3: widget check failed"),
        "{warning}"
    );
}

#[test]
fn the_summarizer_is_briefed_and_the_compaction_read_from_the_record() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    // The record up to the reply whose token count (175,000) made OpenCode compact.
    p.write("record.jsonl", record(31));
    let brief = hook(&p, payload(&p, "PreCompact-auto", "record.jsonl"));
    assert!(
        !brief.trim_start().starts_with('{')
            && brief.contains("The task the user asked for: Check the build."),
        "plain text for experimental.session.compacting: {brief}"
    );
    let (log, _) = p.json(&["log", "--limit", "5"]);
    let triggers: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["trigger"].as_str())
        .collect();
    assert!(triggers.contains(&"pre-compact"), "{log}");

    // Then the summary and `session.compacted`: the old token count is stale.
    p.write("record.jsonl", record(34));
    hook(&p, payload(&p, "PostCompact-auto", "record.jsonl"));
    let (status, _) = p.json(&["status"]);
    assert_eq!(status["tokens"], Value::Null, "{status}");
    let restore = hook(&p, payload(&p, "SessionStart-compact", "record.jsonl"));
    assert!(
        !restore.trim().is_empty(),
        "the restored session is given something"
    );
}

/// Writes `name` in the plugin's records folder under the test's HOME, last written `days_ago`.
pub fn plugin_record(p: &Project, name: &str, days_ago: u64) -> std::path::PathBuf {
    let dir = p.home().join(".local/state/ctxkeep/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, "{\"type\":\"chat.message\",\"properties\":{}}\n").unwrap();
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(days_ago * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(then)
        .unwrap();
    path
}

#[test]
fn a_session_start_removes_the_plugins_records_no_session_wrote_for_thirty_days() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let old = plugin_record(&p, "ses_old.jsonl", 31);
    let recent = plugin_record(&p, "ses_recent.jsonl", 29);
    let not_a_record = plugin_record(&p, "notes.txt", 90);
    // This session's own record, however old it looks, is never removed.
    let own = plugin_record(&p, "ses_own.jsonl", 40);
    let mut start: Value =
        serde_json::from_str(&payload(&p, "SessionStart-startup", "record.jsonl")).unwrap();
    start["transcript_path"] = json!(own);
    hook(&p, start.to_string());
    assert!(!old.exists(), "a record unused for 31 days is kept");
    for kept in [&recent, &not_a_record, &own] {
        assert!(kept.exists(), "{} was removed", kept.display());
    }
    let events: Vec<Value> = p
        .read(".ctxkeep/events.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &Value| e["event"] == "agent_records_removed")
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["agent"], "opencode");
    assert_eq!(events[0]["paths"], json!([old.display().to_string()]));
    // A compaction's start in the same session sweeps nothing.
    let again = plugin_record(&p, "ses_again.jsonl", 31);
    hook(&p, payload(&p, "SessionStart-compact", "record.jsonl"));
    assert!(again.exists());
}
