//! ctxkeep's Claude Code plugin (`plugins/claude-code/`, listed by
//! `.claude-plugin/marketplace.json`): its files wire what `hooks install`
//! wires, its hooks step aside where they must, and `hooks install` and
//! `hooks doctor` know it is there.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::hooks::path_with_ctxkeep;
use crate::support::Project;

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The plugin's folder, as the marketplace names it.
fn plugin_dir() -> PathBuf {
    let market = read_json(&repo_file(".claude-plugin/marketplace.json"));
    let entry = &market["plugins"][0];
    assert_eq!(entry["name"], "ctxkeep");
    repo_file(entry["source"].as_str().unwrap())
}

fn enable_plugin(p: &Project) {
    let dir = p.home().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        json!({ "enabledPlugins": { "ctxkeep@ctxkeep": true } }).to_string(),
    )
    .unwrap();
}

fn start_payload(p: &Project, session: &str) -> String {
    json!({
        "session_id": session, "transcript_path": p.path("transcript.jsonl"),
        "cwd": p.root(), "hook_event_name": "SessionStart", "source": "startup",
    })
    .to_string()
}

#[test]
fn the_plugin_wires_every_event_hooks_install_does_and_the_mcp_server() {
    let dir = plugin_dir();
    let manifest = read_json(&dir.join(".claude-plugin/plugin.json"));
    assert_eq!(manifest["name"], "ctxkeep");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));

    let p = Project::initialized();
    p.ctxkeep(&["hooks", "install", "claude-code", "--team"])
        .assert()
        .success();
    let installed = read_json(&p.path(".claude/settings.json"));
    let plugin = read_json(&dir.join("hooks/hooks.json"));
    let events = |v: &Value| -> Vec<(String, Value)> {
        let mut all: Vec<(String, Value)> = v["hooks"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(event, groups)| (event.clone(), groups[0]["matcher"].clone()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    };
    assert_eq!(events(&plugin), events(&installed));
    for (event, groups) in plugin["hooks"].as_object().unwrap() {
        let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(
            command,
            format!("sh \"${{CLAUDE_PLUGIN_ROOT}}/scripts/hook.sh\" {event}")
        );
    }
    let mcp = read_json(&dir.join(".mcp.json"));
    // The hooks, the MCP server and the slash commands find the binary the same way.
    assert_eq!(
        mcp["mcpServers"]["ctxkeep"],
        json!({"command": "sh", "args": ["${CLAUDE_PLUGIN_ROOT}/scripts/ctxkeep.sh", "mcp"]})
    );
    let hook = std::fs::read_to_string(dir.join("scripts/hook.sh")).unwrap();
    assert!(
        hook.contains(". \"$(dirname \"$0\")/ctxkeep.sh\""),
        "{hook}"
    );
    for name in ["checkpoint", "resume", "status", "verify"] {
        let text = std::fs::read_to_string(dir.join(format!("commands/{name}.md"))).unwrap();
        assert!(text.starts_with("---\ndescription: "), "{name}.md");
        let run = format!("sh \"${{CLAUDE_PLUGIN_ROOT}}/scripts/ctxkeep.sh\" {name}");
        assert!(text.contains(&run), "{name}.md runs ctxkeep {name}");
        assert!(
            text.lines()
                .filter(|l| l.contains("ctxkeep ") && !l.starts_with("description"))
                .all(|l| !l.contains("!`ctxkeep") && !l.contains("Bash(ctxkeep")),
            "{name}.md calls a bare ctxkeep"
        );
    }
}

/// The plugin's wrapper with `path` as the PATH and `payload` on stdin.
fn wrapper(p: &Project, path: &str, event: &str, payload: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new("/bin/sh")
        .arg(plugin_dir().join("scripts/hook.sh"))
        .arg(event)
        .env_clear()
        .env("PATH", path)
        .env("HOME", p.home())
        .current_dir(p.root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn without_ctxkeep_on_the_path_the_plugin_says_so_at_the_start_only() {
    let p = Project::initialized();
    let payload = start_payload(&p, "s1");
    // No ctxkeep on this PATH: only the shell's own tools.
    let (code, out, err) = wrapper(&p, "/usr/bin:/bin", "SessionStart", &payload);
    assert_eq!((code, err.as_str()), (0, ""));
    let said: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(
        said["systemMessage"]
            .as_str()
            .unwrap()
            .contains("not on PATH"),
        "{said}"
    );
    assert!(
        said["systemMessage"]
            .as_str()
            .unwrap()
            .contains("`npm install -g ctxkeep`"),
        "the message names an install that needs no Rust: {said}"
    );
    let (code, out, err) = wrapper(&p, "/usr/bin:/bin", "PreCompact", &payload);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));

    // With it, the start gives the resume prompt.
    p.checkpoint(&[]).success();
    let (code, out, err) = wrapper(&p, &path_with_ctxkeep(), "SessionStart", &payload);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.contains("additionalContext"), "{out}");
}

#[cfg(unix)]
#[test]
fn the_plugin_finds_an_npm_installed_ctxkeep_that_is_not_on_its_path() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let payload = start_payload(&p, "s1");
    // npm's usual user prefix, which a desktop-started Claude Code may not have on PATH.
    let bin = p.home().join(".npm-global/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin!("ctxkeep"),
        bin.join("ctxkeep"),
    )
    .unwrap();
    let (code, out, err) = wrapper(&p, "/usr/bin:/bin", "SessionStart", &payload);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.contains("additionalContext"), "{out}");
    assert!(!out.contains("not on PATH"), "{out}");
}

/// The launcher the MCP server and the slash commands run finds the same binary the hooks do,
/// where PATH lacks it; without one it says so on stderr and exits 127.
#[cfg(unix)]
#[test]
fn the_plugins_mcp_server_and_commands_find_ctxkeep_as_its_hooks_do() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let run = |args: &[&str]| {
        Command::new("/bin/sh")
            .arg(plugin_dir().join("scripts/ctxkeep.sh"))
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", p.home())
            .env("NO_COLOR", "1")
            .current_dir(p.root())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let missing = run(&["status"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("not on PATH"));
    let bin = p.home().join(".cargo/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin!("ctxkeep"),
        bin.join("ctxkeep"),
    )
    .unwrap();
    let status = run(&["status"]);
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(String::from_utf8_lossy(&status.stdout).contains("ckpt-0001"));
    let version = run(&["--version"]);
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("ctxkeep "));
}

#[test]
fn the_plugins_hook_is_silent_where_there_is_no_project() {
    let p = Project::new();
    let payload = start_payload(&p, "s1");
    let plain = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(payload.clone())
        .output()
        .unwrap();
    assert!(
        !plain.stderr.is_empty(),
        "a settings hook says what is wrong"
    );
    p.ctxkeep(&["hook", "claude-code", "--plugin"])
        .write_stdin(payload)
        .assert()
        .success()
        .stdout("")
        .stderr("");
    assert!(!p.path(".ctxkeep").exists());
}

#[test]
fn the_plugins_hook_steps_aside_for_the_projects_own() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    p.ctxkeep(&["hooks", "install", "claude-code", "--no-mcp"])
        .assert()
        .success();
    p.ctxkeep(&["hook", "claude-code", "--plugin"])
        .write_stdin(start_payload(&p, "s1"))
        .assert()
        .success()
        .stdout("");
    assert!(!p.path(".ctxkeep/sessions/s1.json").exists());
    // The project's hook (the one the settings run) gives the prompt.
    let out = p
        .ctxkeep(&["hook", "claude-code"])
        .write_stdin(start_payload(&p, "s1"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("additionalContext"));

    // Without the settings' hooks, the plugin's is the one that runs.
    p.ctxkeep(&["hooks", "uninstall", "claude-code"])
        .assert()
        .success();
    p.checkpoint_next("a newer next action for the plugin")
        .success();
    let out = p
        .ctxkeep(&["hook", "claude-code", "--plugin"])
        .write_stdin(start_payload(&p, "s2"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("a newer next action for the plugin"),
        "{text}"
    );
}

#[test]
fn install_and_doctor_know_the_plugin_is_enabled() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    enable_plugin(&p);
    // Doctor with the plugin alone: its hooks and server run, nothing fails.
    let out = p
        .ctxkeep(&["--json", "hooks", "doctor", "claude-code"])
        .env("PATH", path_with_ctxkeep())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report}");
    let checks = report["checks"].as_array().unwrap();
    let named = |n: &str| {
        checks
            .iter()
            .find(|c| c["name"] == n)
            .unwrap_or_else(|| panic!("{n}: {report}"))
    };
    assert!(named("plugin")["detail"]
        .as_str()
        .unwrap()
        .ends_with("its hooks run"));
    assert!(named("hooks.PreCompact")["detail"]
        .as_str()
        .unwrap()
        .starts_with("ctxkeep hook claude-code --plugin: runs"));
    assert!(named("mcp")["detail"]
        .as_str()
        .unwrap()
        .contains("serves checkpoint"));

    // Install says the plugin's hooks step aside; doctor says which run.
    let (edit, _) = p.json(&["hooks", "install", "claude-code", "--team", "--dry-run"]);
    assert!(
        edit["plugin"].as_str().unwrap().contains("step aside"),
        "{edit}"
    );
    p.ctxkeep(&["hooks", "install", "claude-code", "--team"])
        .assert()
        .success()
        .stderr(predicates::str::contains("plugin is enabled too"));
    let out = p
        .ctxkeep(&["hooks", "doctor", "claude-code"])
        .env("PATH", path_with_ctxkeep())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("its hooks step aside here"), "{text}");
    assert!(
        text.contains("hooks.SessionStart: ctxkeep hook claude-code: runs"),
        "{text}"
    );
}

#[test]
fn doctor_says_when_the_plugins_version_is_not_the_commands() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    enable_plugin(&p);
    let copy = p.home().join(".claude/plugins/cache/ctxkeep/ctxkeep/copy");
    std::fs::create_dir_all(copy.join(".claude-plugin")).unwrap();
    std::fs::write(
        p.home().join(".claude/plugins/installed_plugins.json"),
        json!({"version": 2, "plugins": {"ctxkeep@ctxkeep": [
            {"scope": "user", "installPath": copy, "version": "unknown"}
        ]}})
        .to_string(),
    )
    .unwrap();
    let doctor = |manifest_version: &str| {
        std::fs::write(
            copy.join(".claude-plugin/plugin.json"),
            json!({"name": "ctxkeep", "version": manifest_version}).to_string(),
        )
        .unwrap();
        let out = p
            .ctxkeep(&["--json", "hooks", "doctor", "claude-code"])
            .env("PATH", path_with_ctxkeep())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let check = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "plugin version")
            .unwrap_or_else(|| panic!("{report}"))
            .clone();
        (out.status.code(), check)
    };
    let (code, check) = doctor(env!("CARGO_PKG_VERSION"));
    assert_eq!((code, &check["ok"]), (Some(0), &json!(true)), "{check}");
    let (code, check) = doctor("0.0.1");
    assert_eq!(check["ok"], json!(false), "{check}");
    assert_ne!(code, Some(0));
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains("the plugin is 0.0.1")
            && detail.contains(&format!("this ctxkeep is {}", env!("CARGO_PKG_VERSION"))),
        "{detail}"
    );
}
