"""A fake model API on 127.0.0.1 for tests and benchmarks: OpenAI chat + embeddings, Anthropic messages.

One `LLMServer` speaks all three APIs so the real `openai` and `anthropic` SDKs run unchanged against it
(point them at `server.openai_base_url` / `server.anthropic_base_url`). It offers:

- scripted replies: `enqueue("text")` (served in order, on whichever API is called next); when the queue
  is empty a default responder answers with a minimal valid instance of the requested JSON schema;
- scripted tool calls for requests that offer tools: `enqueue(ToolCallReply("lookup", {"id": 1}))`
  (or a responder returning one) is served in the API's own shape: an OpenAI `tool_calls` message with
  finish reason `tool_calls`, an Anthropic `tool_use` block with stop reason `tool_use`;
- injected faults: `fail_next(429, retry_after=1)`, `fail_next(500)`, `timeout_next(seconds)`,
  `malformed_next()` (HTTP 200 with a body that is not JSON);
- replies reported as cut at the token limit: `cut_next()` (finish reason `length` / `max_tokens`);
- `latency` seconds added to every reply, an in-flight counter (`max_in_flight`), and a call log;
- a gate (`hold_after=n`): after n replies, requests are held unanswered until `release_held()` drops
  them, so a test can kill a client with nothing in transit.

Run it standalone with `python tests/llm_server.py --latency 0.2`; it prints its base URL.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Shared by the model-layer tests and the benchmark: sentinel keys (they must never be stored or logged),
# the test project's id, and retries fast enough for tests.
SENTINEL_OPENAI_KEY = "sk-SENTINEL-openai-7f3a9c1e5b2d4f60"
SENTINEL_ANTHROPIC_KEY = "sk-ant-SENTINEL-anthropic-0c8e2a4b6d1f3579"
PROJECT = "p1"


def __getattr__(name: str) -> Any:
    """`FAST_RETRY`, built on first use: run standalone, this server imports nothing from evalcore."""
    if name == "FAST_RETRY":
        from evalcore.llm.retry import RetryPolicy

        return RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05)
    raise AttributeError(name)


@dataclass
class Call:
    """One request the server received."""

    api: str
    body: dict[str, Any]
    started: float
    finished: float = 0.0
    status: int = 0
    outcome: str = "pending"  # completed | failed | aborted

    @property
    def key(self) -> str:
        """A hash of the request body: equal for repeated identical calls."""
        return hashlib.sha256(json.dumps(self.body, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ToolCallReply:
    """A scripted tool call, with the text a model may say beside it."""

    name: str
    arguments: dict[str, Any]
    text: str = ""


@dataclass
class _Fault:
    status: int = 0
    retry_after: float | None = None
    timeout: float = 0.0
    malformed: bool = False
    echo_key: bool = False
    message: str | None = None


def example_for(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A minimal value valid against a (pydantic-made) JSON schema."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return example_for(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            return example_for(schema[combo][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: example_for(props[k], defs) for k in schema.get("required", [])}
    return {"array": [], "string": "x", "integer": 0, "number": 0.0, "boolean": False, "null": None}[kind]


def fake_vector(text: str, dim: int = 8) -> list[float]:
    """A deterministic unit vector for a text."""
    raw = hashlib.sha256(text.encode()).digest()
    values = [b - 127.5 for b in raw[:dim]]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


class LLMServer:
    """The fake API server; start() binds a free port on 127.0.0.1 and serves from a thread."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.hold_after: int | None = None
        self.calls: list[Call] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.held = 0  # requests the gate holds now (in flight but never to be answered)
        self.responder = self.default_reply
        self._replies: deque[str | ToolCallReply] = deque()
        self._faults: deque[_Fault] = deque()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._served = 0
        self._cut = 0
        self._httpd: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------- scripting

    def enqueue(self, *replies: str | dict[str, Any] | ToolCallReply) -> None:
        """Queue replies (text, a dict sent as JSON, or a tool call) for the next calls, in order."""
        self._replies.extend(r if isinstance(r, str | ToolCallReply) else json.dumps(r) for r in replies)

    def fail_next(
        self, status: int, count: int = 1, retry_after: float | None = None, echo_key=False, message=None
    ):
        """Answer the next `count` calls with HTTP `status` (a Retry-After header, a message when given)."""
        fault = _Fault(status, retry_after, echo_key=echo_key, message=message)
        self._faults.extend(fault for _ in range(count))

    def timeout_next(self, seconds: float, count: int = 1) -> None:
        """Stall the next `count` calls for `seconds` before answering (the client should time out)."""
        self._faults.extend(_Fault(timeout=seconds) for _ in range(count))

    def malformed_next(self, count: int = 1) -> None:
        """Answer the next `count` calls with HTTP 200 and a body that is not JSON."""
        self._faults.extend(_Fault(malformed=True) for _ in range(count))

    def cut_next(self, count: int = 1) -> None:
        """Report the next `count` replies as cut at the token limit (their text is served as queued)."""
        self._cut += count

    def release_held(self) -> None:
        """Open the gate: held requests are dropped unanswered, later ones are served normally."""
        self.hold_after = None
        self._release.set()

    def reset(self) -> None:
        """Forget scripts, faults, the log and counters."""
        with self._lock:
            self._replies.clear()
            self._faults.clear()
            self.calls.clear()
            self.max_in_flight = self.in_flight = self.held = self._served = self._cut = 0
            self.latency, self.hold_after, self.responder = 0.0, None, self.default_reply
            self._release.clear()

    def completed(self, api: str | None = None) -> list[Call]:
        """Calls answered with a 2xx reply, optionally for one API ('openai', 'anthropic', 'embeddings')."""
        return [c for c in self.calls if c.outcome == "completed" and (api is None or c.api == api)]

    # -------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:PORT."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def openai_base_url(self) -> str:
        """What to pass as the OpenAI SDK's base_url."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """What to pass as the Anthropic SDK's base_url."""
        return self.url

    def start(self, port: int = 0) -> LLMServer:
        """Bind and serve in a daemon thread."""
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _Server(("127.0.0.1", port), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._release.set()
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()

    # --------------------------------------------------------------- replies

    def default_reply(self, api: str, body: dict[str, Any]) -> str:
        """A valid instance of the requested schema, or a short text echoing the last message."""
        schema = _requested_schema(api, body)
        if schema is not None:
            return json.dumps(example_for(schema))
        if (body.get("response_format") or {}).get("type") == "json_object":
            return '{"ok": true}'
        last = body.get("messages", [{}])[-1].get("content", "")
        if isinstance(last, list):
            last = " ".join(part.get("text", "") for part in last)
        return f"ok: {str(last)[:60]}"

    def _next(self, call: Call) -> tuple[_Fault | None, str | ToolCallReply, bool]:
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
            reply = self._replies.popleft() if (fault is None and self._replies) else None
            cut = fault is None and self._cut > 0
            self._cut -= cut
        if fault is None and reply is None:
            reply = self.responder(call.api, call.body)
        return fault, reply or "", cut

    def _hold(self) -> bool:
        """True when this request must be held (and then dropped) by the gate."""
        with self._lock:
            if self.hold_after is None or self._served < self.hold_after:
                self._served += 1
                return False
            self.held += 1
        self._release.wait()
        with self._lock:
            self.held -= 1
        return True


def _forced_tool(body: dict[str, Any]) -> bool:
    """Whether the request forces a tool call (structured output), rather than offering tools to use."""
    choice = body.get("tool_choice")
    return isinstance(choice, dict) and choice.get("type") in ("function", "tool")


def _requested_schema(api: str, body: dict[str, Any]) -> dict[str, Any] | None:
    if body.get("tools") and _forced_tool(body):
        tool = body["tools"][0]
        return tool.get("input_schema") or tool.get("function", {}).get("parameters")
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"]
    return None


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def _openai_chat(body: dict[str, Any], text: str | ToolCallReply, cut: bool = False) -> dict[str, Any]:
    if isinstance(text, ToolCallReply):
        arguments = json.dumps(text.arguments)
        call = {"id": "call_1", "type": "function", "function": {"name": text.name, "arguments": arguments}}
        message = {"role": "assistant", "content": text.text or None, "tool_calls": [call]}
        usage = {"prompt_tokens": _tokens(body.get("messages")), "completion_tokens": _tokens(arguments)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls", "logprobs": None}
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "m"), "choices": [choice], "usage": usage}  # fmt: skip
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "length" if cut else "stop"
    if body.get("tools") and _forced_tool(body) and not cut:
        name = body["tools"][0]["function"]["name"]
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    usage = {"prompt_tokens": _tokens(body.get("messages")), "completion_tokens": _tokens(text)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "m"),
        "choices": [choice],
        "usage": usage,
    }


def _anthropic_message(body: dict[str, Any], text: str | ToolCallReply, cut: bool = False) -> dict[str, Any]:
    if isinstance(text, ToolCallReply):
        use = {"type": "tool_use", "id": "toolu_1", "name": text.name, "input": text.arguments}
        blocks = [{"type": "text", "text": text.text}] if text.text else []
        usage = {"input_tokens": _tokens(body.get("messages")), "output_tokens": _tokens(text.arguments)}
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "m"),
                "content": [*blocks, use], "stop_reason": "tool_use", "stop_sequence": None,
                "usage": usage}  # fmt: skip
    block: dict[str, Any] = {"type": "text", "text": text}
    stop = "max_tokens" if cut else "end_turn"
    if body.get("tools") and _forced_tool(body) and not cut:
        try:
            block = {"type": "tool_use", "id": "toolu_1", "name": body["tools"][0]["name"]}
            block["input"] = json.loads(text)
            stop = "tool_use"
        except json.JSONDecodeError:  # a malformed scripted reply comes back as plain text
            block = {"type": "text", "text": text}
    usage = {"input_tokens": _tokens(body.get("messages")), "output_tokens": _tokens(text)}
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _embeddings(body: dict[str, Any]) -> dict[str, Any]:
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = []
    for i, text in enumerate(texts):
        vec: Any = fake_vector(str(text))
        if body.get("encoding_format") == "base64":
            vec = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()
        data.append({"object": "embedding", "index": i, "embedding": vec})
    tokens = sum(_tokens(t) for t in texts)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return {"object": "list", "data": data, "model": body.get("model"), "usage": usage}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # listen() backlog: the default 5 drops bursts of parallel connects


class _Handler(BaseHTTPRequestHandler):
    owner: LLMServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real APIs do
    disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stalls)
    wbufsize = 1 << 16

    def log_message(self, *_args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        server = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if len(raw) < length:  # the client died between its headers and its body: no request to answer
            self.close_connection = True
            return
        body = json.loads(raw or b"{}")
        api = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic", "/v1/embeddings": "embeddings"}
        call = Call(api.get(self.path.split("?")[0], "unknown"), body, time.monotonic())
        with server._lock:
            server.calls.append(call)
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        try:
            self._serve(server, call)
        except OSError:  # the client went away (timeout, kill)
            call.outcome = "aborted"
        finally:
            call.finished = call.finished or time.monotonic()
            with server._lock:
                server.in_flight -= 1

    def _serve(self, server: LLMServer, call: Call) -> None:
        if call.api == "unknown":
            return self._send(404, {"error": {"message": f"no route {self.path}"}}, call)
        if server._hold():
            call.outcome = "aborted"
            self.close_connection = True
            return None
        fault, text, cut = server._next(call)
        time.sleep(server.latency + (fault.timeout if fault else 0.0))
        if fault and fault.malformed:
            return self._send(200, b"{'this is': not json", call)
        if fault and fault.status:
            return self._send_error(fault, call)
        if call.api == "openai":
            return self._send(200, _openai_chat(call.body, text, cut), call)
        if call.api == "anthropic":
            return self._send(200, _anthropic_message(call.body, text, cut), call)
        return self._send(200, _embeddings(call.body), call)

    def _send_error(self, fault: _Fault, call: Call) -> None:
        message = fault.message or {429: "Rate limit reached", 500: "Internal server error"}.get(
            fault.status, "Error"
        )
        if fault.echo_key:  # like real APIs, which quote part of a wrong key back
            message += f": incorrect API key provided: {self.headers.get('Authorization', '')}"
            message += f" {self.headers.get('x-api-key', '')}"
        if call.api == "anthropic":
            payload = {"type": "error", "error": {"type": "api_error", "message": message}}
        else:
            payload = {"error": {"message": message, "type": "server_error", "code": str(fault.status)}}
        headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
        self._send(fault.status, payload, call, headers)

    def _send(self, status: int, payload: Any, call: Call, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        # Logged before the reply leaves: a client may act on it at once. A failed write marks it aborted.
        call.status, call.finished = status, time.monotonic()
        call.outcome = "completed" if status < 300 else "failed"
        self.wfile.write(data)
        self.wfile.flush()


def model_env(server: LLMServer) -> dict[str, str]:
    """Environment variables that point every provider at `server`, with the sentinel keys."""
    return {
        "OPENAI_API_KEY": SENTINEL_OPENAI_KEY,
        "OPENAI_BASE_URL": server.openai_base_url,
        "ANTHROPIC_API_KEY": SENTINEL_ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "EVALCORE_COMPAT_BASE_URL": server.openai_base_url,
    }


def main() -> None:
    """Serve until interrupted, printing the base URL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    server = LLMServer(latency=args.latency).start(args.port)
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
