#!/usr/bin/env python3
"""Stand-in model server for the end-to-end suite (python3 standard library only).

Serves the three wire protocols the agents speak, on 127.0.0.1 only:
  * Anthropic Messages   POST /v1/messages (SSE when "stream": true), /v1/messages/count_tokens
  * OpenAI Responses     POST /v1/responses (SSE), GET /v1/models
  * Gemini               POST /v1beta/models/M:streamGenerateContent?alt=sse, :generateContent, :countTokens
  * OpenAI Chat Completions  POST /v1/chat/completions (SSE when "stream": true; Qwen Code)

Replies come from a JSON script:
  {"steps": [REPLY, ...],        # consumed in order by the agent's main requests
   "default": REPLY,             # once the steps run out
   "aux": [{"match": REGEX, "reply": REPLY}, ...],  # side requests (summaries, titles), never consumed
   "summary": "..."}             # what the agent's compaction requests are answered with (default SUMMARY)
  REPLY = {"text": "...", "tools": [{"name": "...", "input": {...}}],
           "usage": {"input": N, "output": N}}
"{nonce}" in a reply's text or tool input is replaced by the last `(ctxkeep NNNNNNNN)` seen in the
request, so a test can make the model echo the nonce it was given.

Every request is appended to the log (JSONL): {n, time, phase, api, path, kind, step, last_user, body}.
POST /_control {"script": {...}, "phase": "..."} swaps the script (and resets the step counter).
The server exits by itself after --idle seconds without a request or --max-seconds in all.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The marker line a restore asks for in the reply: `Resuming from ckpt-NNNN (ctxkeep NNNNNNNN)`.
NONCE_RE = re.compile(r"\(ctxkeep (\d{8})\)")
# What an agent's own compaction or summary request says in its last user turn (Claude Code, Codex)
# or its system instruction (Gemini).
SUMMARY_RE = re.compile(
    r"(summar|CONTEXT CHECKPOINT|state_snapshot|compress|handoff summary)", re.IGNORECASE
)
SUMMARY = ("the user asked for small edits in a scratch repository; files were written and a shell "
           "command was run.")
# Each agent parses its summary in its own shape.
SUMMARY_SHAPE = {
    "anthropic": "<analysis>Short session.</analysis>\n<summary>{}</summary>",
    "responses": "Summary: {}",
    "gemini": "<state_snapshot>{}</state_snapshot>",
    "chat": "<state_snapshot>{}</state_snapshot>",
}


class State:
    def __init__(self, script, log_path, phase):
        self.lock = threading.Lock()
        self.script = script
        self.step = 0
        self.log_path = log_path
        self.phase = phase
        self.n = 0
        self.last_request = time.time()


STATE = None


def text_of(value):
    """All text inside a JSON value, in order (for matching, not for display)."""
    out = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(value)
    return "\n".join(out)


def last_user_text(api, body):
    """The text of the last user turn: where an agent puts its request."""
    if api == "anthropic":
        msgs = [m for m in body.get("messages", []) if m.get("role") == "user"]
        if not msgs:
            return ""
        content = msgs[-1].get("content")
        if isinstance(content, str):
            return content
        return "\n".join(
            b.get("text", "") if b.get("type") == "text" else text_of(b.get("content", ""))
            for b in content
            if isinstance(b, dict)
        )
    if api == "responses":
        items = body.get("input", [])
        if isinstance(items, str):
            return items
        for item in reversed(items):
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                return text_of(item.get("output", ""))
            if item.get("role") == "user":
                content = item.get("content", "")
                if isinstance(content, list):
                    return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
                return text_of(content)
        return ""
    if api == "gemini":
        contents = [c for c in body.get("contents", []) if c.get("role", "user") == "user"]
        return text_of(contents[-1].get("parts", [])) if contents else ""
    if api == "chat":
        msgs = [m for m in body.get("messages", []) if m.get("role") in ("user", "tool")]
        return text_of(msgs[-1].get("content", "")) if msgs else ""
    return ""


def has_tools(api, body):
    if api == "gemini":
        return bool(body.get("tools")) or bool((body.get("generationConfig") or {}).get("tools"))
    return bool(body.get("tools"))


def substitute(value, nonce):
    if isinstance(value, str):
        return value.replace("{nonce}", nonce or "00000000")
    if isinstance(value, list):
        return [substitute(v, nonce) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, nonce) for k, v in value.items()}
    return value


def choose(api, body, raw, stream):
    """Pick the reply for one request; returns (kind, step, reply)."""
    last = last_user_text(api, body)
    script = STATE.script
    for rule in script.get("aux", []):
        if re.search(rule["match"], last, re.IGNORECASE | re.DOTALL):
            return "aux", None, rule["reply"], last
    system_text = text_of(body.get("systemInstruction", "")) if api == "gemini" else ""
    summary = script.get("summary", SUMMARY)
    answer = {"text": SUMMARY_SHAPE[api].format(summary)}
    # The agent's continuation after a compaction quotes our own summary: that is not a new request
    # for one; nor is a request whose end is ctxkeep's own text (a restore, a stage: "ctxkeep: ...",
    # "(ctxkeep N)"), which may say "summary". ctxkeep's brief for the summarizer may end one.
    if (SUMMARY_RE.search(last[-4000:]) and summary not in last
            and not re.search(r"\(ctxkeep \d|ctxkeep: |SCRIPTED", last[-300:])):
        return "summary", None, answer, last
    if api == "chat":
        system_text = "\n".join(text_of(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "system")
    if api in ("gemini", "chat") and SUMMARY_RE.search(system_text[:3000]) and "state_snapshot" in system_text:
        return "summary", None, answer, last
    main = has_tools(api, body) and (api != "gemini" or stream)
    if not main:
        return "aux", None, {"text": "ok"}, last
    with STATE.lock:
        steps = script.get("steps", [])
        idx = STATE.step
        if idx < len(steps):
            reply = steps[idx]
            STATE.step += 1
        else:
            reply = script.get("default", {"text": "Done."})
    return "main", idx, reply, last


def from_schema(schema):
    """A small value that satisfies a JSON schema (Gemini's side requests ask for JSON)."""
    t = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if t == "object":
        props = schema.get("properties", {})
        return {k: from_schema(v) for k, v in props.items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 10
    if t == "boolean":
        return False
    return "ok"


def usage_of(reply, raw):
    u = reply.get("usage", {})
    inp = int(u.get("input", max(1, len(raw) // 4)))
    out = int(u.get("output", 20))
    return inp, out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, event, obj):
        chunk = ""
        if event:
            chunk += f"event: {event}\n"
        chunk += f"data: {json.dumps(obj)}\n\n"
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    def do_GET(self):
        STATE.last_request = time.time()
        self._log("get", self.path, {}, "aux", None, "")
        if self.path.startswith("/v1/models"):
            return self._json(200, {"object": "list", "data": [{"id": "gpt-e2e", "object": "model"}], "models": []})
        if "/models" in self.path:
            return self._json(200, {"models": []})
        return self._json(404, {"error": {"message": "not here"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        STATE.last_request = time.time()
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("content-encoding") == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        elif self.headers.get("content-encoding") == "zstd":
            raw = raw  # logged as is; not expected from these agents
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path
        if path.startswith("/_control"):
            with STATE.lock:
                if "script" in body:
                    STATE.script = body["script"]
                    STATE.step = 0
                if "phase" in body:
                    STATE.phase = body["phase"]
            return self._json(200, {"ok": True})
        if path.startswith("/v1/messages/count_tokens"):
            self._log("anthropic", path, body, "count", None, "")
            return self._json(200, {"input_tokens": max(1, len(raw) // 4)})
        if path.startswith("/v1/messages"):
            return self._anthropic(path, body, raw)
        if path.startswith("/v1/responses") or path.startswith("/responses"):
            return self._responses(path, body, raw)
        if path.startswith("/v1/chat/completions") or path.startswith("/chat/completions"):
            return self._chat(path, body, raw)
        if ":countTokens" in path:
            self._log("gemini", path, body, "count", None, "")
            return self._json(200, {"totalTokens": max(1, len(raw) // 4)})
        if ":streamGenerateContent" in path or ":generateContent" in path:
            return self._gemini(path, body, raw)
        self._log("unknown", path, body, "unknown", None, "")
        return self._json(404, {"error": {"message": f"stand-in does not serve {path}"}})

    def _log(self, api, path, body, kind, step, last, reply=None):
        with STATE.lock:
            STATE.n += 1
            rec = {
                "n": STATE.n,
                "time": time.time(),
                "phase": STATE.phase,
                "api": api,
                "path": path,
                "kind": kind,
                "step": step,
                "last_user": last,
                "reply": reply,
                "body": body,
            }
            with open(STATE.log_path, "a") as f:
                f.write(json.dumps(rec) + "\n")

    # --- Anthropic Messages -------------------------------------------------------------------
    def _anthropic(self, path, body, raw):
        kind, step, reply, last = choose("anthropic", body, raw, True)
        nonce = (NONCE_RE.findall(text_of(body)) or [None])[-1]
        reply = substitute(reply, nonce)
        self._log("anthropic", path, body, kind, step, last, reply)
        inp, out = usage_of(reply, raw)
        model = body.get("model", "claude-e2e")
        blocks = []
        if reply.get("text"):
            blocks.append({"type": "text", "text": reply["text"]})
        for t in reply.get("tools", []):
            blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": t["name"], "input": t.get("input", {})})
        if not blocks:
            blocks.append({"type": "text", "text": "ok"})
        stop = "tool_use" if reply.get("tools") else "end_turn"
        usage = {"input_tokens": inp, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": out}
        mid = "msg_" + uuid.uuid4().hex[:20]
        if not body.get("stream"):
            return self._json(200, {"id": mid, "type": "message", "role": "assistant", "model": model, "content": blocks,
                                    "stop_reason": stop, "stop_sequence": None, "usage": usage})
        self._sse_start()
        start_usage = dict(usage, output_tokens=1)
        self._sse("message_start", {"type": "message_start", "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                                                                        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                self._sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
                self._sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                self._sse("content_block_start", {"type": "content_block_start", "index": i,
                                                  "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                self._sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                  "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
            self._sse("content_block_stop", {"type": "content_block_stop", "index": i})
        self._sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": {"input_tokens": inp, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": out}})
        self._sse("message_stop", {"type": "message_stop"})

    # --- OpenAI Chat Completions (Qwen Code) --------------------------------------------------
    def _chat(self, path, body, raw):
        kind, step, reply, last = choose("chat", body, raw, True)
        nonce = (NONCE_RE.findall(text_of(body)) or [None])[-1]
        reply = substitute(reply, nonce)
        self._log("chat", path, body, kind, step, last, reply)
        inp, out = usage_of(reply, raw)
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        model = body.get("model", "qwen-e2e")
        text = reply.get("text") or ("" if reply.get("tools") else "ok")
        calls = [{"index": i, "id": "call_" + uuid.uuid4().hex[:20], "type": "function",
                  "function": {"name": t["name"], "arguments": json.dumps(t.get("input", {}))}}
                 for i, t in enumerate(reply.get("tools", []))]
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out}
        if not body.get("stream"):
            message = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
            return self._json(200, {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
                                    "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
        self._sse_start()

        def chunk(delta, finish_reason=None, usage=None):
            obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            if usage is not None:
                obj["choices"] = []
                obj["usage"] = usage
            self._sse(None, obj)

        chunk({"role": "assistant", "content": text})
        if calls:
            chunk({"tool_calls": calls})
        chunk({}, finish)
        chunk({}, usage=usage)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    # --- OpenAI Responses (Codex) ------------------------------------------------------------
    def _responses(self, path, body, raw):
        kind, step, reply, last = choose("responses", body, raw, True)
        nonce = (NONCE_RE.findall(text_of(body)) or [None])[-1]
        reply = substitute(reply, nonce)
        self._log("responses", path, body, kind, step, last, reply)
        inp, out = usage_of(reply, raw)
        rid = "resp_" + uuid.uuid4().hex[:20]
        items = []
        for t in reply.get("tools", []):
            if t.get("custom"):
                items.append({"type": "custom_tool_call", "id": "ctc_" + uuid.uuid4().hex[:16], "call_id": "call_" + uuid.uuid4().hex[:16],
                              "name": t["name"], "input": t.get("input", ""), "status": "completed"})
            else:
                items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16], "call_id": "call_" + uuid.uuid4().hex[:16],
                              "name": t["name"], "arguments": json.dumps(t.get("input", {})), "status": "completed"})
        if reply.get("text") or not items:
            items.insert(0, {"type": "message", "id": "msg_" + uuid.uuid4().hex[:16], "role": "assistant", "status": "completed",
                             "content": [{"type": "output_text", "text": reply.get("text") or "ok", "annotations": []}]})
        usage = {"input_tokens": inp, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": out,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": inp + out}
        model = body.get("model", "gpt-e2e")
        if not body.get("stream", True):
            return self._json(200, {"id": rid, "object": "response", "model": model, "status": "completed", "output": items, "usage": usage})
        self._sse_start()
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model, "status": "in_progress", "output": []}
        self._sse("response.created", {"type": "response.created", "response": base})
        for i, item in enumerate(items):
            self._sse("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": dict(item, status="in_progress")})
            if item["type"] == "message":
                txt = item["content"][0]["text"]
                self._sse("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"], "output_index": i,
                                                         "content_index": 0, "delta": txt})
            self._sse("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item})
        done = dict(base, status="completed", output=items, usage=usage)
        self._sse("response.completed", {"type": "response.completed", "response": done})

    # --- Gemini ------------------------------------------------------------------------------
    def _gemini(self, path, body, raw):
        stream = ":streamGenerateContent" in path
        kind, step, reply, last = choose("gemini", body, raw, stream)
        nonce = (NONCE_RE.findall(text_of(body)) or [None])[-1]
        reply = substitute(reply, nonce)
        self._log("gemini", path, body, kind, step, last, reply)
        inp, out = usage_of(reply, raw)
        parts = []
        gen = body.get("generationConfig") or {}
        schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
        if kind == "aux" and schema and reply.get("text") == "ok":
            reply = {"text": json.dumps(from_schema(schema))}
        if reply.get("text"):
            parts.append({"text": reply["text"]})
        for t in reply.get("tools", []):
            parts.append({"functionCall": {"name": t["name"], "args": t.get("input", {})}})
        if not parts:
            parts.append({"text": "ok"})
        model = path.split("/models/")[-1].split(":")[0]
        resp = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": inp, "candidatesTokenCount": out, "totalTokenCount": inp + out},
                "modelVersion": model}
        if not stream:
            return self._json(200, resp)
        self._sse_start()
        self._sse(None, resp)


def main():
    global STATE
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True, help="JSON script file")
    ap.add_argument("--log", required=True, help="JSONL request log")
    ap.add_argument("--port-file", required=True, help="written with the bound port once listening")
    ap.add_argument("--idle", type=float, default=120, help="exit after this many seconds without a request")
    ap.add_argument("--max-seconds", type=float, default=900, help="exit after this many seconds in all")
    a = ap.parse_args()
    with open(a.script) as f:
        script = json.load(f)
    STATE = State(script, a.log, "start")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, a.port_file)
    started = time.time()

    def watchdog():
        while True:
            time.sleep(1)
            now = time.time()
            if now - STATE.last_request > a.idle or now - started > a.max_seconds:
                server.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
