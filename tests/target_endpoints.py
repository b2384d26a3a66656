"""A tiny JSON endpoint on 127.0.0.1 and target adapters over it, shared by the target tests."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evalcore.llm import ModelClient
from evalcore.llm.retry import RetryPolicy
from evalcore.models import Target
from evalcore.store import Store
from evalcore.targets import build_adapter, save_target

PROJECT = "p1"
FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02)


def adapter(store: Store, target: Target, **client: Any):
    saved = save_target(store, PROJECT, target)
    return build_adapter(store, PROJECT, saved, ModelClient(store, PROJECT, retry=FAST, **client))


class Endpoint:
    """A tiny JSON endpoint on 127.0.0.1: records requests, answers with a scripted behaviour."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[
            tuple[str, Any]
        ] = []  # ("json", obj) | ("status", code) | ("sleep", s) | ("raw", b)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"body": body, "headers": dict(self.headers)})
                kind, value = owner.script.pop(0) if owner.script else ("json", {"reply": {"text": "ok"}})
                if kind == "sleep":
                    time.sleep(value)
                    kind, value = "json", {"reply": {"text": "late"}}
                data = value if kind == "raw" else json.dumps(value).encode()
                self.send_response(value if kind == "status" else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if kind != "status" else 2))
                self.end_headers()
                self.wfile.write(data if kind != "status" else b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/chat"


def http_target(endpoint: Endpoint, **config: Any) -> Target:
    return Target(
        name="web",
        kind="http",
        config={
            "url": endpoint.url,
            "headers": {"Authorization": "Bearer ${RIDGE_BOT_TOKEN}", "X-Client": "evalcore"},
            "request_template": {
                "session": "eval",
                "input": "{{message}}",
                "history": "{{history}}",
                "prompt": "Context: {{system_prompt}}",
            },
            "response_path": "reply.text",
            "system_prompt": "bikes",
            "timeout_s": 0.5,
            **config,
        },
    )


def echo_bot(messages: list[dict[str, str]]) -> str:
    """A python target (`target_endpoints:echo_bot`): echoes the number of messages and the last one."""
    return f"{len(messages)}: {messages[-1]['content']}"
