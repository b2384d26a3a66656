"""A fake Rasa server on 127.0.0.1 for tests: the parts of Rasa's HTTP API a scenario run uses, in front of
a small flow engine (evalcore.targets.flow_engine, over a project's procedures).

- `POST /webhooks/rest/webhook` {"sender", "message"}: the REST channel; `/session_start` runs session
  start, anything else is a user message; the answer is the list of messages sent back
  ({"recipient_id", "text", "buttons"});
- `GET /conversations/{sender}/tracker`: {"sender_id", "slots", "events"} with the engine's Rasa events;
- `POST /conversations/{sender}/tracker/events`: appends events (one or a list); `slot` events set slots.

`token` makes it answer 401 without `?token=<token>`; `calls` logs (method, path, body) in order, so a
test can check that session start came before the slots; `fail_next(status)` answers the next request
with an error. Run it standalone with `python tests/rasa_server.py data/sample`; it prints its URL.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evalcore.targets.flow_engine import Defects, FlowEngine, FlowSession


class RasaServer:
    """A fake Rasa server (see the module docstring); use as a context manager."""

    def __init__(self, engine: FlowEngine, token: str | None = None) -> None:
        self.engine, self.token = engine, token
        self.sessions: dict[str, FlowSession] = {}
        self.calls: list[tuple[str, str, Any]] = []
        self.failures: list[int] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the server."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> RasaServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail_next(self, status: int = 500) -> None:
        """Answer the next request with this status."""
        self.failures.append(status)

    def session(self, sender: str) -> FlowSession:
        """The conversation of a sender (created on first use, as Rasa creates a tracker)."""
        if sender not in self.sessions:
            self.sessions[sender] = self.engine.session(sender)
        return self.sessions[sender]

    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        """(status, JSON answer) of one request."""
        with self.lock:
            self.calls.append((method, path, body))
            if self.failures:
                return self.failures.pop(0), {"error": "injected failure"}
            if self.token is not None and query.get("token") != [self.token]:
                return 401, {"status": "failure", "reason": "NotAuthenticated"}
            parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
            if method == "POST" and parts == ["webhooks", "rest", "webhook"]:
                sender, text = str(body.get("sender")), str(body.get("message") or "")
                session = self.session(sender)
                if text == "/session_start":
                    session.events.append({"event": "user", "text": text})
                    session.start()
                    return 200, []
                events = session.handle(text)
                return 200, [_message(sender, e) for e in events if e.get("event") == "bot"]
            if len(parts) == 3 and parts[0] == "conversations" and parts[2] == "tracker" and method == "GET":
                session = self.session(parts[1])
                return 200, {"sender_id": parts[1], "slots": session.slots, "events": session.events}
            if parts[:1] == ["conversations"] and parts[2:] == ["tracker", "events"] and method == "POST":
                session = self.session(parts[1])
                for event in body if isinstance(body, list) else [body]:
                    if event.get("event") == "slot":
                        session.set_slots({event["name"]: event.get("value")})
                    else:
                        session.events.append(event)
                return 200, {"sender_id": parts[1], "slots": session.slots, "events": session.events}
            return 404, {"status": "failure", "reason": f"no route {method} {path}"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _answer(self, method: str) -> None:
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                status, data = server.handle(method, url.path, urllib.parse.parse_qs(url.query), body)
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

        return Handler


def _message(sender: str, event: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"recipient_id": sender, "text": event.get("text") or ""}
    buttons = (event.get("data") or {}).get("buttons")
    if buttons:
        message["buttons"] = buttons
    return message


def sample_engine(folder: str, defects: Defects | None = None) -> FlowEngine:
    """The flow engine over a project folder's procedures, tools and documents."""
    from evalcore.inputs import load_project

    bundle = load_project(folder)
    return FlowEngine(bundle.procedures, bundle.tools, bundle.documents, defects)


if __name__ == "__main__":
    import sys
    import time

    with RasaServer(sample_engine(sys.argv[1] if len(sys.argv) > 1 else "data/sample")) as running:
        print(running.url, flush=True)
        while True:
            time.sleep(3600)
