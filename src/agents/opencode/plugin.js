// ctxkeep's OpenCode plugin (ctxkeep-opencode-plugin 3).
// Written by `ctxkeep hooks install opencode`, which writes it again as its own version has it
// (keep code of yours in another file); `ctxkeep hooks uninstall opencode` removes it.
//
// Each event runs `ctxkeep hook opencode` with a JSON payload on stdin and hands its answer to the
// model; nothing is decided here. Besides, the events ctxkeep reads are appended as OpenCode sent
// them to a record of the session ($XDG_STATE_HOME/ctxkeep/opencode/<session>.jsonl), which the
// hook reads as the session's transcript. A hook that fails, is missing or is slow is skipped:
// OpenCode goes on as if this file were not there. A `ctxkeep` that answers with anything but
// its JSON, answers too much or not in time is stopped (with what it started) and not called
// again until OpenCode starts afresh; only a valid answer reaches the model.

import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const COMMAND = ["ctxkeep", "hook", "opencode"];
// Every answer as JSON, the summarizer's brief included: anything else is not ctxkeep's.
const REPLY_AS_JSON = "--json";
const TIMEOUT_MS = Number(process.env.CTXKEEP_PLUGIN_TIMEOUT_MS) || 10000;
// ctxkeep's answers are a few KiB; more is not an answer.
const MAX_ANSWER_BYTES = 1024 * 1024;
const MAX_STDERR_CHARS = 4096;
// Long texts keep their start and their end (where errors and test summaries are), as ctxkeep's
// own reading of a command's output does.
const CUT = 16000;

const STATE = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
const RECORDS = join(STATE, "ctxkeep", "opencode");

export const CtxkeepPlugin = async ({ client, directory }) => {
  const created = new Set(); // sessions this process saw created
  const children = new Set(); // subagent sessions: their work is their parent's
  const started = new Set(); // sessions whose start ctxkeep was told of
  const recorded = new Set(); // ids already in a record
  const lastText = new Map(); // session -> the model's last text
  const trigger = new Map(); // session -> "auto" | "manual", from the compaction part
  const compacting = new Set(); // sessions whose summarizer's request comes next
  const pending = new Map(); // session -> text for the next request (after a compaction)
  const anchored = new Map(); // session -> [{ call | message, text }] given with earlier requests
  const inflight = new Map(); // session -> the compaction's hooks, still running
  const said = new Set();
  const beforeCall = new Map(); // call -> what ctxkeep said before it ran
  let broken = null; // why `ctxkeep` is not called any more in this OpenCode process

  const log = (level, message) => {
    try {
      client.app.log({ body: { service: "ctxkeep", level, message } }).catch(() => {});
    } catch {}
  };
  const warn = (message) => {
    if (said.has(message)) return;
    said.add(message);
    log("warn", message);
    try {
      process.stderr.write(`ctxkeep: ${message}\n`);
    } catch {}
  };

  const recordPath = (session) => join(RECORDS, `${session.replace(/[^A-Za-z0-9_-]/g, "_")}.jsonl`);
  const record = (session, line) => {
    if (!session) return;
    try {
      mkdirSync(RECORDS, { recursive: true });
      appendFileSync(recordPath(session), JSON.stringify(line) + "\n");
    } catch (e) {
      warn(`cannot write the session record in ${RECORDS}: ${e.message}`);
    }
  };
  const cut = (text) =>
    typeof text === "string" && text.length > CUT
      ? `${text.slice(0, CUT / 2)}\n…[cut]…\n${text.slice(-CUT / 2)}`
      : text;

  // One hook: the payload on stdin, the answer's text (or null) back; never throws.
  const hook = (event, session, fields) =>
    new Promise((resolve) => {
      if (!session || children.has(session) || broken) return resolve(null);
      const payload = {
        hook_event_name: event,
        session_id: session,
        transcript_path: recordPath(session),
        cwd: directory,
        ...fields,
      };
      let child;
      const out = [];
      let outBytes = 0;
      let err = "";
      let done = false;
      const finish = (value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(value);
      };
      // The child leads a process group of its own: a wrapper's children go with it.
      const stop = () => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          try {
            child.kill("SIGKILL");
          } catch {}
        }
      };
      // Remembered: a hung or broken `ctxkeep` would cost every later event the same.
      const giveUp = (why) => {
        if (done) return;
        broken = why;
        stop();
        warn(`\`${COMMAND.join(" ")}\` ${why}; its hooks are skipped until OpenCode starts afresh`);
        finish(null);
      };
      const timer = setTimeout(() => giveUp(`gave no answer to ${event} within ${TIMEOUT_MS / 1000} s`), TIMEOUT_MS);
      try {
        child = spawn(COMMAND[0], [REPLY_AS_JSON, ...COMMAND.slice(1)], {
          cwd: directory,
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
        });
      } catch (e) {
        warn(`cannot run ctxkeep (${e.message}); its hooks are skipped`);
        return finish(null);
      }
      child.on("error", (e) => {
        if (e.code === "ENOENT")
          warn("`ctxkeep` is not on the PATH OpenCode runs with: its hooks are skipped until it is (or remove .opencode/plugins/ctxkeep.js)");
        else warn(`cannot run ctxkeep (${e.message}); its hooks are skipped`);
        finish(null);
      });
      child.stdout.on("data", (d) => {
        outBytes += d.length;
        if (outBytes > MAX_ANSWER_BYTES) return giveUp(`answered ${event} with over ${MAX_ANSWER_BYTES >> 20} MiB`);
        out.push(d);
      });
      child.stderr.on("data", (d) => {
        if (err.length < MAX_STDERR_CHARS) err += String(d).slice(0, MAX_STDERR_CHARS - err.length);
      });
      child.on("close", () => {
        if (done) return;
        if (err.trim()) log("warn", err.trim().split("\n")[0]);
        const value = answer(Buffer.concat(out).toString("utf8"));
        if (value === undefined) return giveUp(`answered ${event} with something other than its JSON`);
        finish(value);
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    });

  // ctxkeep answers nothing, or one JSON object whose `hookSpecificOutput.additionalContext` is
  // the text for the model. The text, null for no answer, undefined for anything else.
  const answer = (out) => {
    const text = out.trim();
    if (!text) return null;
    let reply;
    try {
      reply = JSON.parse(text);
    } catch {
      return undefined;
    }
    const context = reply?.hookSpecificOutput?.additionalContext;
    if (typeof context !== "string") return undefined;
    return context.trim() ? context : null;
  };

  // A text part of ours, sorting after the message's last part.
  const partAfter = (message, parts, text) => {
    const last = parts.length ? parts[parts.length - 1].id : "";
    const id = last.length >= 16 ? last.slice(0, 16) + "zzzzzzzctxkeep" : `prt_ctxkeep${Date.now()}`;
    return { id, messageID: message.id, sessionID: message.sessionID, type: "text", text, synthetic: true };
  };

  // What ctxkeep gave with earlier requests goes where it was given in every later one.
  const reapply = (session, messages) => {
    for (const given of anchored.get(session) || []) {
      for (const m of messages) {
        if (given.message && m.info.id === given.message) {
          if (!m.parts.some((p) => p.type === "text" && p.text === given.text))
            m.parts.push(partAfter(m.info, m.parts, given.text));
        }
        if (given.call) {
          for (const p of m.parts) {
            if (p.type === "tool" && p.callID === given.call && p.state?.status === "completed") {
              if (!String(p.state.output).endsWith(given.text)) p.state.output = `${p.state.output}\n\n${given.text}`;
            }
          }
        }
      }
    }
  };

  const textOf = (parts) =>
    parts
      .filter((p) => p.type === "text" && !p.synthetic)
      .map((p) => p.text)
      .join("\n");

  return {
    event: async ({ event }) => {
      const props = event.properties || {};
      switch (event.type) {
        case "session.created": {
          const info = props.info || {};
          if (info.parentID) children.add(info.id);
          else created.add(info.id);
          break;
        }
        case "message.updated": {
          const info = props.info || {};
          if (info.role === "assistant" && info.time?.completed && !recorded.has(info.id)) {
            recorded.add(info.id);
            record(info.sessionID, { type: event.type, properties: { sessionID: info.sessionID, info } });
          }
          break;
        }
        case "message.part.updated": {
          const part = props.part || {};
          if (part.type === "compaction") {
            trigger.set(part.sessionID, part.auto === false ? "manual" : "auto");
            break;
          }
          const doneTool = part.type === "tool" && ["completed", "error"].includes(part.state?.status);
          const doneText = part.type === "text" && part.time?.end && !part.synthetic;
          if ((doneTool || doneText) && !recorded.has(part.id)) {
            recorded.add(part.id);
            if (doneText) lastText.set(part.sessionID, part.text);
            const state = doneTool
              ? { ...part.state, output: cut(part.state.output), error: cut(part.state.error), metadata: { ...part.state.metadata, output: cut(part.state.metadata?.output) } }
              : undefined;
            record(part.sessionID, { type: event.type, properties: { part: state ? { ...part, state } : part } });
          }
          break;
        }
        case "session.compacted": {
          const session = props.sessionID;
          record(session, { type: event.type, properties: { sessionID: session, time: Date.now() } });
          const after = (async () => {
            await hook("PostCompact", session, { trigger: trigger.get(session) ?? null });
            const text = await hook("SessionStart", session, { source: "compact" });
            if (text) pending.set(session, text);
          })();
          inflight.set(session, after);
          await after;
          inflight.delete(session);
          break;
        }
        case "session.idle": {
          const session = props.sessionID;
          await hook("Stop", session, { stop_hook_active: false, last_assistant_message: lastText.get(session) ?? "" });
          break;
        }
      }
    },

    "chat.message": async (input, output) => {
      const session = input.sessionID;
      if (children.has(session)) return;
      const prompt = textOf(output.parts);
      record(session, { type: "chat.message", properties: { sessionID: session, messageID: output.message.id, text: cut(prompt) } });
      const texts = [];
      if (!started.has(session)) {
        started.add(session);
        const text = await hook("SessionStart", session, { source: created.has(session) ? "startup" : "resume" });
        if (text) texts.push(text);
      }
      const text = await hook("UserPromptSubmit", session, { prompt });
      if (text) texts.push(text);
      if (texts.length) output.parts.push(partAfter(output.message, output.parts, texts.join("\n\n")));
    },

    "chat.params": async (input) => {
      const model = input.model || {};
      const key = `${input.sessionID}:${model.providerID}/${model.id}`;
      if (recorded.has(key) || children.has(input.sessionID)) return;
      recorded.add(key);
      record(input.sessionID, {
        type: "chat.params",
        properties: { sessionID: input.sessionID, model: { id: model.id, providerID: model.providerID, limit: model.limit } },
      });
    },

    // Before a shell command: ctxkeep stores the uncommitted work first when the command can
    // discard it. Only commands that name git or rm are sent; the call is never blocked.
    "tool.execute.before": async (input, output) => {
      const command = output?.args?.command;
      // The words every command ctxkeep keeps work before contains (src/transcripts/destructive.rs).
      if (input.tool !== "bash" || typeof command !== "string" || !/git|rm|find|make|eval|unlink/.test(command)) return;
      const text = await hook("PreToolUse", input.sessionID, {
        tool_name: input.tool,
        tool_input: output.args,
        tool_use_id: input.callID,
      });
      // OpenCode reads nothing a plugin says before a tool: the line (what a snapshot left out)
      // goes with the tool's result.
      if (text && input.callID) beforeCall.set(input.callID, text);
    },

    "tool.execute.after": async (input, output) => {
      const text = await hook("PostToolUse", input.sessionID, {
        tool_name: input.tool,
        tool_input: input.args ?? {},
        // Cut as in the record: ctxkeep reads at most 1 MiB of a payload, and a shell call's
        // metadata repeats its whole output.
        tool_response: {
          title: output.title,
          output: cut(output.output),
          metadata: output.metadata && { ...output.metadata, output: cut(output.metadata.output) },
        },
        tool_use_id: input.callID,
      });
      const before = input.callID ? beforeCall.get(input.callID) : undefined;
      if (before) beforeCall.delete(input.callID);
      const told = [before, text].filter(Boolean).join("\n\n");
      if (told) output.output = `${output.output ?? ""}\n\n${told}`;
    },

    // Before each model request: the figure of the reply that made the last tool call is known
    // only now, so the stages it crossed are told here, beside that call's result.
    "experimental.chat.messages.transform": async (_input, output) => {
      const messages = output.messages || [];
      const last = messages[messages.length - 1];
      const session = last?.info?.sessionID;
      if (!session || children.has(session)) return;
      if (compacting.delete(session)) return; // the summarizer's copy
      await inflight.get(session);
      const texts = [];
      if (pending.has(session)) texts.push(pending.get(session));
      pending.delete(session);
      const text = await hook("PreRequest", session, {});
      if (text) texts.push(text);
      if (texts.length) {
        const calls = last.parts.filter((p) => p.type === "tool" && p.state?.status === "completed");
        const given = { text: texts.join("\n\n") };
        if (last.info.role === "assistant" && calls.length) given.call = calls[calls.length - 1].callID;
        else given.message = last.info.id;
        anchored.set(session, [...(anchored.get(session) || []), given]);
      }
      reapply(session, messages);
    },

    "experimental.session.compacting": async (input, output) => {
      const session = input.sessionID;
      if (children.has(session)) return;
      compacting.add(session);
      const brief = await hook("PreCompact", session, { trigger: trigger.get(session) ?? null, custom_instructions: "" });
      if (brief) output.context.push(brief);
    },

    dispose: async () => {
      await Promise.all([...started].map((session) => hook("SessionEnd", session, { reason: "exit" })));
    },
  };
};
