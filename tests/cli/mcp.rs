//! `ctxkeep mcp`, driven as a client drives it: JSON-RPC lines over the
//! server's real stdin and stdout (initialize, the tool list, each tool, the
//! resources and the prompt, the errors), with the CLI writing beside it;
//! and its registration by `hooks install|uninstall|doctor`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::Project;

/// A client of one `ctxkeep mcp` process.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    next_id: u64,
    /// What the server answered to `initialize`.
    init: Value,
}

impl Client {
    /// Starts `ctxkeep [global…] mcp` in the project and initializes it.
    fn start(p: &Project, global: &[&str], env: &[(&str, &str)]) -> Client {
        let mut args = global.to_vec();
        args.push("mcp");
        let mut cmd = p.ctxkeep_std(&args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let msg: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON-RPC on stdout ({e}): {line}"));
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 1,
            init: Value::Null,
        };
        client.init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "ctxkeep-tests", "version": "1" },
            }),
        );
        client.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        client
    }

    fn send(&mut self, msg: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends bytes as they are, a newline after them.
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server sends.
    fn next_message(&mut self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("no message from the server: {e}"))
    }

    /// Sends a request and returns the whole response (result or error).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let msg = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// Calls a tool; returns its result (`isError` included).
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let msg = self.request("tools/call", json!({ "name": tool, "arguments": args }));
        assert!(msg.get("error").is_none(), "{tool}: {msg}");
        msg["result"].clone()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // Closing stdin ends the server; kill it if it lingers.
        self.stdin.take();
        for _ in 0..200 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

const FIELDS: &str = r#"{
    "phase": "implementing the lexer",
    "active_task": "tokenize string literals with escapes in src/lexer.rs",
    "controlling_agent": "claude-code",
    "next_action": "run `cargo test lexer::strings` and fix the escape of \"\\n\"",
    "decisions": ["keep the hand-written lexer: the grammar is small (no generator)"],
    "open_questions": ["should raw strings allow # delimiters?"]
}"#;

#[test]
fn a_client_lists_the_tools_resources_and_prompt() {
    let p = Project::initialized();
    let mut c = Client::start(&p, &[], &[]);
    assert_eq!(c.init["result"]["serverInfo"]["name"], "ctxkeep");
    assert_eq!(c.init["result"]["protocolVersion"], "2025-06-18");
    let caps = &c.init["result"]["capabilities"];
    assert!(
        caps["tools"].is_object() && caps["resources"].is_object() && caps["prompts"].is_object()
    );

    let tools = c.request("tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["checkpoint", "resume", "status", "verify", "ack"]);
    for t in tools.as_array().unwrap() {
        assert!(t["description"].as_str().unwrap().len() > 80, "{t}");
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    let props = &tools[0]["inputSchema"]["properties"];
    for field in [
        "phase",
        "active_task",
        "controlling_agent",
        "next_action",
        "decisions",
        "open_questions",
        "notes",
        "session",
    ] {
        assert!(props[field]["description"].is_string(), "{field}: {props}");
    }
    assert_eq!(tools[4]["inputSchema"]["required"], json!(["nonce"]));

    let resources = c.request("resources/list", json!({}))["result"]["resources"].clone();
    let uris: Vec<&str> = resources
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["ctxkeep://state", "ctxkeep://checkpoint"]);
    let prompts = c.request("prompts/list", json!({}))["result"]["prompts"].clone();
    assert_eq!(prompts[0]["name"], "resume");
}

#[test]
fn the_checkpoint_tool_writes_as_the_cli_does_and_answers_with_the_findings() {
    let p = Project::initialized();
    let mut c = Client::start(&p, &[], &[]);
    // A first checkpoint without the task, agent and next action is refused
    // as on the command line, naming the fields; nothing is written.
    let r = c.call("checkpoint", json!({ "phase": "implementing the lexer" }));
    assert!(is_error(&r), "{r}");
    assert!(
        text(&r).contains("no active_task, controlling_agent, next_action"),
        "{}",
        text(&r)
    );
    assert!(!p.path(".ctxkeep/checkpoints/ckpt-0001.json").exists());

    // A complete one with a defect: written, and the findings say what to fix.
    let mut fields: Value = serde_json::from_str(FIELDS).unwrap();
    fields["next_action"] = json!("continue with that as discussed");
    let r = c.call("checkpoint", fields);
    assert!(!is_error(&r), "{r}");
    let data = &r["structuredContent"];
    assert_eq!(data["id"], "ckpt-0001");
    assert_eq!(data["verify"]["ok"], false);
    let errors = data["verify"]["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|f| f["field"] == "next_action" && f["code"] == "CK301"),
        "{errors:?}"
    );
    assert!(text(&r).starts_with("wrote ckpt-0001\n"), "{}", text(&r));

    // The fix in the same turn; a key in the notes is redacted.
    let mut fields: Value = serde_json::from_str(FIELDS).unwrap();
    fields["notes"] = json!("the token was ghp_abcdefghijklmnopqrstuvwxyz0123456789; rotate it");
    let r = c.call("checkpoint", fields);
    let data = &r["structuredContent"];
    assert_eq!(data["id"], "ckpt-0002", "{r}");
    assert_eq!(data["verify"]["ok"], true, "{r}");
    assert_eq!(data["checkpoint"]["trigger"], "mcp");
    assert!(
        text(&r).contains("ok: ckpt-0002 can be read cold"),
        "{}",
        text(&r)
    );

    // Exactly what the CLI would have written: the front matter, the marked
    // block, the archive, the event log; the CLI's verify agrees.
    let state = p.state();
    assert!(
        state.contains("tokenize string literals with escapes"),
        "{state}"
    );
    assert!(!state.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    let archived = p.read(".ctxkeep/checkpoints/ckpt-0002.json");
    assert!(archived.contains("\"trigger\": \"mcp\"") || archived.contains("\"trigger\":\"mcp\""));
    assert!(!archived.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    let events = p.read(".ctxkeep/events.jsonl");
    let logged = events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "checkpoint" && e["trigger"] == "mcp")
        .count();
    assert_eq!(logged, 2, "{events}");
    p.ctxkeep(&["verify"]).assert().success();

    // Fields not given carry over; a list given replaces the list.
    let r = c.call(
        "checkpoint",
        json!({ "next_action": "add the raw string test in tests/lexer.rs", "open_questions": [] }),
    );
    let cp = &r["structuredContent"]["checkpoint"];
    assert_eq!(cp["phase"], "implementing the lexer");
    assert_eq!(cp["open_questions"], json!([]));
    assert_eq!(cp["decisions"].as_array().unwrap().len(), 1);
}

#[test]
fn resume_status_verify_and_ack_answer_as_their_commands() {
    let p = Project::initialized();
    let mut c = Client::start(&p, &[], &[]);
    c.call("checkpoint", serde_json::from_str(FIELDS).unwrap());

    // Reading the prompt opens no session.
    let r = c.call("resume", json!({}));
    assert!(!is_error(&r), "{r}");
    assert!(
        text(&r).contains("cargo test lexer::strings"),
        "{}",
        text(&r)
    );
    assert_eq!(r["structuredContent"]["nonce"], Value::Null);
    assert!(!p.path(".ctxkeep/chain.jsonl").exists());

    // Asked to, it opens one, and `ack` takes its nonce (a wrong one is refused).
    let r = c.call(
        "resume",
        json!({ "open_session": true, "agent": "claude-code" }),
    );
    let nonce = r["structuredContent"]["nonce"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text(&r).contains(&nonce));
    let wrong = c.call("ack", json!({ "nonce": "not-the-nonce" }));
    assert!(is_error(&wrong), "{wrong}");
    assert_eq!(wrong["structuredContent"]["error"]["exit_code"], 1);
    let r = c.call("ack", json!({ "nonce": nonce }));
    assert!(!is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["acknowledged"], true);
    assert!(
        text(&r).starts_with("acknowledged session 1"),
        "{}",
        text(&r)
    );

    let r = c.call("status", json!({}));
    assert_eq!(r["structuredContent"]["last_checkpoint"]["id"], "ckpt-0001");
    assert_eq!(r["structuredContent"]["acknowledged"], true);
    assert!(
        text(&r).contains("last checkpoint: ckpt-0001"),
        "{}",
        text(&r)
    );

    let r = c.call("verify", json!({ "strict": true }));
    assert_eq!(r["structuredContent"]["ok"], true, "{r}");
    assert!(r["structuredContent"]["errors"]
        .as_array()
        .unwrap()
        .is_empty());

    // The resources and the prompt.
    let r = c.request("resources/read", json!({ "uri": "ctxkeep://state" }));
    assert!(r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .contains("implementing the lexer"));
    let r = c.request("resources/read", json!({ "uri": "ctxkeep://checkpoint" }));
    let record: Value =
        serde_json::from_str(r["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(record["id"], "ckpt-0001");
    let r = c.request("prompts/get", json!({ "name": "resume" }));
    let prompt = r["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(prompt.contains("cargo test lexer::strings"), "{r}");
}

#[test]
fn errors_are_tool_results_with_the_clis_message_and_code_and_the_server_stays_up() {
    // No project: the CLI's message and exit code, then the project appears.
    let p = Project::new();
    let mut c = Client::start(&p, &[], &[]);
    let r = c.call("status", json!({}));
    assert!(is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["error"]["exit_code"], 66);
    let cli = p.ctxkeep(&["status"]).output().unwrap();
    let cli_err = String::from_utf8_lossy(&cli.stderr);
    assert_eq!(text(&r), cli_err.trim(), "the same line as the CLI's");
    p.ctxkeep(&["init"]).assert().success();
    let r = c.call("checkpoint", serde_json::from_str(FIELDS).unwrap());
    assert!(!is_error(&r), "{r}");

    // Arguments that do not fit the schema: a usage error.
    let r = c.call("checkpoint", json!({ "phase": "x", "nextAction": "y" }));
    assert!(is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["error"]["exit_code"], 2);
    assert!(text(&r).contains("nextAction"), "{}", text(&r));
    // A tool that does not exist is a protocol error.
    let r = c.request("tools/call", json!({ "name": "nope", "arguments": {} }));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("checkpoint"),
        "{r}"
    );

    // A damaged state file: exit 65, nothing written.
    let good = p.state();
    p.write("project-state.md", "---\nctxkeep: [unclosed\n---\n# x\n");
    let r = c.call("checkpoint", json!({ "next_action": "n" }));
    assert!(is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["error"]["exit_code"], 65);
    let r = c.request("resources/read", json!({ "uri": "ctxkeep://checkpoint" }));
    assert_eq!(r["error"]["data"]["exit_code"], 65, "{r}");
    p.write("project-state.md", &good);
    let r = c.call("verify", json!({}));
    assert_eq!(r["structuredContent"]["ok"], true, "{r}");
}

#[test]
fn a_held_lock_is_75_and_a_concurrent_cli_write_is_seen() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let mut c = Client::start(&p, &["--lock-timeout", "0.3"], &[]);

    // The CLI holds the lock (paused before its rename): the tool gives up
    // after the timeout with the CLI's message.
    let mut holder = p
        .ctxkeep_std(&["checkpoint", "--next", "from the CLI while the server runs"])
        .env("CTXKEEP_TEST_PAUSE_BEFORE_RENAME", "600000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = p.path(".ctxkeep/lock");
    while !std::fs::read_to_string(&lock).is_ok_and(|s| !s.is_empty()) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let r = c.call("checkpoint", json!({ "next_action": "from the server" }));
    assert!(is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["error"]["exit_code"], 75);
    assert!(text(&r).contains("lock held by"), "{}", text(&r));
    holder.kill().unwrap();
    holder.wait().unwrap();

    // The CLI writes while the server runs; the server reads it, and its
    // own next checkpoint follows it.
    // (The killed writer's archive entry keeps the id it reserved.)
    let out = p
        .ctxkeep(&["checkpoint", "--next", "written by the CLI"])
        .output()
        .unwrap();
    let cli_id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let number = |id: &str| id.trim_start_matches("ckpt-").parse::<u32>().unwrap();
    let r = c.call("status", json!({}));
    assert_eq!(
        r["structuredContent"]["last_checkpoint"]["id"],
        cli_id.as_str()
    );
    let r = c.call("resume", json!({}));
    assert!(text(&r).contains("written by the CLI"), "{}", text(&r));

    // Both at once: one waits for the other, and each gets its own id.
    let cli = p
        .ctxkeep_std(&[
            "--lock-timeout",
            "30",
            "checkpoint",
            "--next",
            "cli, at once",
        ])
        .env("CTXKEEP_TEST_PAUSE_BEFORE_RENAME", "200")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut c2 = Client::start(&p, &["--lock-timeout", "30"], &[]);
    let r = c2.call("checkpoint", json!({ "next_action": "server, at once" }));
    let out = cli.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(!is_error(&r), "{r}");
    let mut ids = [
        number(String::from_utf8_lossy(&out.stdout).trim()),
        number(r["structuredContent"]["id"].as_str().unwrap()),
    ];
    ids.sort();
    let last = number(&cli_id);
    assert_eq!(ids, [last + 1, last + 2]);
    p.ctxkeep(&["verify"]).assert().success();
}

#[test]
fn hooks_install_registers_the_server_where_each_agent_reads_it() {
    let p = Project::initialized();
    // The user's own servers and settings stay.
    p.write(
        ".mcp.json",
        r#"{"mcpServers":{"docs":{"command":"docs-mcp"}}}"#,
    );
    p.write(
        ".codex/config.toml",
        "# mine\n[mcp_servers.docs]\ncommand = \"docs\"\n",
    );
    let mcp_json_before = p.read(".mcp.json");
    let config_before = p.read(".codex/config.toml");

    // --dry-run writes nothing; --no-mcp leaves the server out.
    let out = p
        .ctxkeep(&["hooks", "install", "claude-code", "--team", "--dry-run"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("+ mcpServers.ctxkeep: ctxkeep mcp"));
    assert_eq!(p.read(".mcp.json"), mcp_json_before);
    p.ctxkeep(&["hooks", "install", "claude-code", "--no-mcp"])
        .assert()
        .success();
    assert_eq!(p.read(".mcp.json"), mcp_json_before);

    for agent in ["claude-code", "codex", "gemini"] {
        p.ctxkeep(&["hooks", "install", agent, "--team"])
            .assert()
            .success();
        // Idempotent: a second install changes nothing.
        let out = p
            .ctxkeep(&["--json", "hooks", "install", agent, "--team"])
            .output()
            .unwrap();
        let v: crate::hooks::Edit = serde_json::from_slice(&out.stdout).unwrap();
        let mcp = v.mcp.unwrap();
        assert!(!mcp.changed && mcp.changes.is_empty(), "{agent}");
        assert!(mcp.config.ends_with(match agent {
            "claude-code" => ".mcp.json",
            "codex" => ".codex/config.toml",
            _ => ".gemini/settings.json",
        }));
    }
    let mcp_json: Value = serde_json::from_str(&p.read(".mcp.json")).unwrap();
    assert_eq!(mcp_json["mcpServers"]["docs"]["command"], "docs-mcp");
    assert_eq!(
        mcp_json["mcpServers"]["ctxkeep"],
        json!({ "command": "ctxkeep", "args": ["mcp"] })
    );
    let config = p.read(".codex/config.toml");
    assert!(config.starts_with(&config_before), "{config}");
    assert!(config.contains("[mcp_servers.ctxkeep]\ncommand = \"ctxkeep\"\nargs = [\"mcp\"]\n"));
    let gemini: Value = serde_json::from_str(&p.read(".gemini/settings.json")).unwrap();
    assert!(gemini["hooks"].is_object());
    assert_eq!(gemini["mcpServers"]["ctxkeep"]["args"], json!(["mcp"]));

    // doctor starts the server and lists its tools.
    for agent in ["claude-code", "codex", "gemini"] {
        let out = p
            .ctxkeep(&["--json", "hooks", "doctor", agent])
            .env("PATH", crate::hooks::path_with_ctxkeep())
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let check = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "mcp")
            .unwrap_or_else(|| panic!("{agent}: {v}"))
            .clone();
        assert_eq!(check["ok"], true, "{agent}: {check}");
        assert!(
            check["detail"]
                .as_str()
                .unwrap()
                .contains("serves checkpoint, resume, status, verify, ack"),
            "{agent}: {check}"
        );
    }

    // uninstall takes away only ctxkeep's entries.
    for agent in ["claude-code", "codex", "gemini"] {
        p.ctxkeep(&["hooks", "uninstall", agent]).assert().success();
    }
    assert_eq!(p.read(".mcp.json"), mcp_json_before, "byte for byte");
    assert_eq!(p.read(".codex/config.toml"), config_before);
    assert!(
        !p.path(".gemini").exists(),
        "install made .gemini/settings.json; uninstall takes it away"
    );
}

#[test]
fn a_stage_points_at_the_tool_once_the_server_is_registered() {
    let p = Project::initialized();
    p.checkpoint(&[]).success();
    let stage = |p: &Project, session: &str| {
        let out = p
            .ctxkeep(&["track", "--session", session, "--tokens", "185000"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
    };
    let before = stage(&p, "s1");
    assert!(before.contains("ctxkeep checkpoint --phase"), "{before}");
    assert!(!before.contains("`checkpoint` tool"), "{before}");
    p.ctxkeep(&["hooks", "install", "claude-code", "--team"])
        .assert()
        .success();
    let after = stage(&p, "s2");
    assert!(
        after.contains("call the ctxkeep `checkpoint` tool"),
        "{after}"
    );
}

/// Through the MCP tool, a 10 MB phase wrote a 20 MB file and 20,000
/// decisions 250 KB of front matter, both unreadable after. Now each is an
/// error result naming the field, the file as it was, the server up.
#[test]
fn the_checkpoint_tool_refuses_what_no_reader_could_take_back() {
    let p = Project::initialized();
    let mut c = Client::start(&p, &[], &[]);
    let r = c.call("checkpoint", serde_json::from_str(FIELDS).unwrap());
    assert!(!is_error(&r), "{r}");
    let before = p.snapshot();
    let huge_phase = json!({ "phase": "p".repeat(10 * 1024 * 1024) });
    let many = json!({ "decisions": vec!["keep it"; 20_000] });
    let empty_item = json!({ "open_questions": ["why?", ""] });
    for (args, said) in [
        (
            huge_phase,
            "phase (--phase) is 10485760 bytes, over the 16384",
        ),
        (many, "decisions (--decision) has 20000 items, over the 100"),
        (empty_item, "open_questions (--question) item 2 is empty"),
    ] {
        let r = c.call("checkpoint", args);
        assert!(is_error(&r), "{r}");
        assert_eq!(r["structuredContent"]["error"]["exit_code"], 65);
        assert!(text(&r).contains(said), "{}", text(&r));
        assert!(p.snapshot() == before, "{said}: a refusal writes nothing");
    }
    let r = c.call("status", json!({}));
    assert!(!is_error(&r), "{r}");
}
/// Every line gets an answer: one that is not JSON a parse error (`-32700`,
/// `id: null`), one over 16 MiB an error saying so (rmcp dropped both
/// without a word, and a client waited for its id forever), JSON that is
/// not a request an invalid-request error with its id; the server answers
/// the next request each time.
#[test]
fn every_line_gets_an_answer_and_the_server_stays_up() {
    let p = Project::initialized();
    let mut c = Client::start(&p, &[], &[]);
    let ping = |c: &mut Client| {
        let r = c.request("ping", json!({}));
        assert_eq!(r["result"], json!({}), "{r}");
    };

    c.send_raw(b"this is not json {");
    let e = c.next_message();
    assert_eq!(e["id"], Value::Null, "{e}");
    assert_eq!(e["error"]["code"], -32700, "{e}");
    ping(&mut c);

    c.send_raw(b"\xff\xfe garbage");
    let e = c.next_message();
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{e}"
    );
    ping(&mut c);

    let mut big = br#"{"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":""#.to_vec();
    big.resize(big.len() + (16 << 20), b'x');
    big.extend_from_slice(br#""}}"#);
    c.send_raw(&big);
    let e = c.next_message();
    assert_eq!(e["id"], Value::Null, "{e}");
    assert_eq!(e["error"]["code"], -32600, "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains("16 MiB"), "{msg}");
    ping(&mut c);

    c.send_raw(br#"{"jsonrpc":"2.0","id":"q7","params":{}}"#);
    let e = c.next_message();
    assert_eq!(e["id"], "q7", "{e}");
    assert_eq!(e["error"]["code"], -32600, "{e}");
    // A notification is never answered: the next message is the ping's.
    c.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/nothing-known"}"#);
    ping(&mut c);
    let r = c.call("status", json!({}));
    assert!(!is_error(&r), "{r}");
}

/// A line that is not JSON before `initialize` is answered too, and the
/// handshake still works after it.
#[test]
fn a_bad_line_before_initialize_is_answered() {
    let p = Project::initialized();
    let mut child = p
        .ctxkeep_std(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "nonsense").unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["error"]["code"], -32700, "{first}");
    let second: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(second["id"], 1, "{second}");
    assert!(second["result"]["serverInfo"].is_object(), "{second}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The checkpoint tool's action items: `remaining` adds, `done` moves an item off
/// `remaining`, `clear_remaining` starts the list again; a vague item is a finding.
#[test]
fn the_checkpoint_tool_keeps_the_action_items() {
    let p = Project::initialized();
    let mut c = Client::start(&p, &[], &[]);
    let mut fields: Value = serde_json::from_str(FIELDS).unwrap();
    fields["remaining"] = json!(["add a test for \\t escapes in tests/lexer.rs", "continue"]);
    let r = c.call("checkpoint", fields);
    assert!(!is_error(&r), "{r}");
    let data = &r["structuredContent"];
    let warnings = data["verify"]["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|f| f["code"] == "CK307" && f["field"] == "remaining"),
        "{warnings:?}"
    );
    let r = c.call(
        "checkpoint",
        json!({"done": ["Continue"], "remaining": ["run cargo fuzz run lexer for a minute"]}),
    );
    let cp = &r["structuredContent"]["checkpoint"];
    assert_eq!(
        cp["remaining"],
        json!([
            "add a test for \\t escapes in tests/lexer.rs",
            "run cargo fuzz run lexer for a minute"
        ]),
        "{r}"
    );
    assert_eq!(cp["done"], json!(["Continue"]));
    let r = c.call("checkpoint", json!({"clear_remaining": true}));
    assert!(
        r["structuredContent"]["checkpoint"]
            .get("remaining")
            .is_none(),
        "{r}"
    );
}

/// The server's resident memory, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A client that writes requests and never reads: the server stops reading once its answers
/// back up, so the client's pipe fills instead of the server's memory. Each `tools/list`
/// answer is several KiB; unread, 50 000 of them would take hundreds of MiB.
#[test]
fn a_client_that_never_reads_cannot_grow_the_server() {
    const LIMIT_KIB: u64 = 96 * 1024;
    let p = Project::initialized();
    let mut child = p
        .ctxkeep_std(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    // Kept open and never read.
    let _stdout = child.stdout.take().unwrap();
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = written.clone();
    std::thread::spawn(move || {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "ctxkeep-tests", "version": "1" }}});
        let mut text = format!(
            "{init}\n{}\n",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        for id in 1..=50_000 {
            text.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n"
            ));
        }
        // Line by line, so the count says how far the server has read.
        for line in text.lines() {
            if writeln!(stdin, "{line}").is_err() {
                return;
            }
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    // Until the writer is done or stalls (the server stopped reading), or the server grew
    // past the limit; bounded either way.
    let (mut peak, mut last, mut still) = (0, 0, 0);
    for _ in 0..2_000 {
        std::thread::sleep(Duration::from_millis(20));
        peak = peak.max(rss_kib(pid).unwrap_or(0));
        let now = written.load(std::sync::atomic::Ordering::Relaxed);
        still = if now == last { still + 1 } else { 0 };
        last = now;
        if peak > LIMIT_KIB || still > 100 || now >= 50_002 {
            break;
        }
    }
    let alive = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(alive, "the server died");
    assert!(
        peak <= LIMIT_KIB,
        "the server grew to {peak} KiB with {last} requests written"
    );
    assert!(
        last < 50_002,
        "the server read every request it could not answer"
    );
}

/// Backpressure stops only the reading: a client that sends far more requests at once than
/// the server lets itself owe, and reads as it goes, gets every answer.
#[test]
fn many_requests_at_once_all_get_their_answer() {
    let p = Project::initialized();
    let mut client = Client::start(&p, &[], &[]);
    let mut stdin = client.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for id in 1000..1500 {
            writeln!(
                stdin,
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}"
            )
            .unwrap();
        }
        stdin.flush().unwrap();
        stdin
    });
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 500 {
        let msg = client.next_message();
        if let Some(id) = msg["id"].as_u64() {
            assert!(msg.get("error").is_none(), "{msg}");
            seen.insert(id);
        }
    }
    assert_eq!(seen.first(), Some(&1000));
    assert_eq!(seen.last(), Some(&1499));
    client.stdin = Some(writer.join().unwrap());
}

#[test]
fn a_bearer_token_and_an_escape_sequence_never_come_back_from_a_tool() {
    let p = Project::initialized();
    let mut c = Client::start(&p, &[], &[]);
    let token: String = (0..36)
        .map(|i| (b'A' + (i * 5 % 26) as u8) as char)
        .collect::<String>()
        + "42";
    let mut fields: Value = serde_json::from_str(FIELDS).unwrap();
    fields["notes"] = json!(format!(
        "deploy with curl -H \"Authorization: Bearer {token}\" then \u{1b}]52;c;eA==\u{7} check"
    ));
    let r = c.call("checkpoint", fields);
    assert!(!is_error(&r), "{r}");
    for tool in ["resume", "status", "verify"] {
        let r = c.call(tool, json!({}));
        let all = r.to_string();
        assert!(!all.contains(&token), "{tool}: {all}");
        assert!(!text(&r).contains('\u{1b}'), "{tool}: {}", text(&r));
    }
    let r = c.call("resume", json!({}));
    assert!(
        text(&r).contains("Bearer [REDACTED:authorization]"),
        "{}",
        text(&r)
    );
    assert!(
        text(&r).contains("\\u001B]52;c;eA==\\u0007"),
        "{}",
        text(&r)
    );
    assert!(!p.state().contains(&token));
}

#[test]
fn the_checkpoint_resource_reads_one_sessions_line_of_work() {
    let p = Project::initialized();
    // Two authors' lines: each checkpoint by hand names its session.
    for (session, next) in [
        ("sess-a", "add the retry to src/main.rs"),
        ("sess-b", "round half to even in src/billing.rs"),
    ] {
        p.ctxkeep(&[
            "checkpoint",
            "--phase",
            "p",
            "--task",
            "t",
            "--agent",
            "claude-code",
            "--next",
            next,
            "--session",
            session,
        ])
        .assert()
        .success();
    }
    let mut c = Client::start(&p, &[], &[]);
    let read = |c: &mut Client, uri: &str| -> Value {
        let r = c.request("resources/read", json!({ "uri": uri }));
        serde_json::from_str(
            r["result"]["contents"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{r}")),
        )
        .unwrap()
    };
    assert_eq!(read(&mut c, "ctxkeep://checkpoint")["id"], "ckpt-0002");
    let a = read(&mut c, "ctxkeep://checkpoint?session=sess-a");
    assert_eq!(
        (&a["id"], &a["next_action"]),
        (&json!("ckpt-0001"), &json!("add the retry to src/main.rs"))
    );
    assert_eq!(a["line"]["session"], "sess-a");
    let r = c.request(
        "resources/read",
        json!({ "uri": "ctxkeep://checkpoint?session=nobody" }),
    );
    assert_eq!(r["error"]["data"]["exit_code"], 66, "{r}");
}
