"""A Rasa (or Rasa-compatible) assistant as a target that reports events (target kind `rasa`; issue 19,
item 3), reached over its HTTP API:

- talk: `POST {url}/webhooks/rest/webhook` with {"sender": <conversation id>, "message": <text>}; the
  reply is the list of messages it sends back ({"recipient_id", "text", "buttons", ...});
- events: `GET {url}/conversations/{sender}/tracker`; the events after those already read are this
  turn's, converted with `events.from_rasa_event`;
- session start and slots (seed 003, "setup.initial_slots"): "the evaluator sends a /session_start
  message first so that any custom action_session_start logic runs against an empty tracker, then
  injects the slot values on top": `/session_start` through the webhook, then
  `POST {url}/conversations/{sender}/tracker/events` with one `slot` event per initial slot (a scenario
  without initial slots starts with its first message, which starts the session as usual).

A server started with `--auth-token` wants `?token=`: give the variable holding it as `token_env`.
`domain` names the assistant's domain and flow files (or folders), read with `read_domain`, so scenarios
are checked against its slots and flows before they run. Failures (an error status, a timeout, a body
that is not JSON) raise TargetCrash as the HTTP target's do, with the same retries.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from evalcore.llm.client import ModelClient
from evalcore.llm.retry import with_retries
from evalcore.llm.types import ModelCallError, ProviderError
from evalcore.models import Target
from evalcore.store.secrets import redact, register
from evalcore.targets.adapters import TargetCrash
from evalcore.targets.config import ENV_REF, RasaConfig, TargetConfigError
from evalcore.targets.domain import Domain, read_domain
from evalcore.targets.events import Event, from_rasa_event
from evalcore.targets.sessions import USER_COMMANDS, EventSession, EventTarget

SESSION_START = "/session_start"


def _converted(raw: list[dict[str, Any]]) -> list[Event]:
    out = [from_rasa_event(r) for r in raw if isinstance(r, dict)]
    return [e for e in out if e is not None and not (e.type == "user_uttered" and e.text in USER_COMMANDS)]


class RasaSession(EventSession):
    """One conversation (one sender id) with the assistant."""

    def __init__(self, target: RasaTarget, sender: str, slots: dict[str, Any]) -> None:
        self.owner, self.target, self.sender = target, target.target, sender
        self.seen = 0
        if slots:  # without slots, the assistant starts the session on the first message, as it always does
            self.owner.talk(sender, SESSION_START)
            events = [{"event": "slot", "name": name, "value": value} for name, value in slots.items()]
            self.owner.call("POST", f"/conversations/{self._path()}/tracker/events", events)
        self.setup_events = _converted(self._new_events())

    def _path(self) -> str:
        return urllib.parse.quote(self.sender, safe="")

    def _new_events(self) -> list[dict[str, Any]]:
        tracker = self.owner.call("GET", f"/conversations/{self._path()}/tracker")
        events = tracker.get("events") if isinstance(tracker, dict) else None
        if not isinstance(events, list):
            raise TargetCrash("garbage", "the tracker has no events list")
        new, self.seen = events[self.seen :], len(events)
        return new

    def send(self, text: str) -> tuple[str, list[Event], dict[str, Any]]:
        """The message through the webhook; the events from the tracker."""
        messages = self.owner.talk(self.sender, text)
        said = [str(m.get("text")) for m in messages if isinstance(m, dict) and m.get("text")]
        return "\n".join(said), _converted(self._new_events()), {"sender": self.sender}


class RasaTarget(EventTarget):
    """A Rasa assistant's REST channel and tracker (see the module docstring)."""

    def __init__(self, target: Target, config: RasaConfig, client: ModelClient) -> None:
        names = {m for value in config.headers.values() for m in ENV_REF.findall(value)}
        names |= {config.token_env} if config.token_env else set()
        register(*names)
        missing = sorted(n for n in names if not os.environ.get(n))
        if missing:
            raise TargetConfigError(
                f"target '{target.name}' needs the environment variable(s) {', '.join(missing)}"
            )
        self.target, self.config, self.client = target, config, client
        self.base = config.url.rstrip("/")
        self._domain: Domain | None = None
        if config.domain:
            domain, problems = read_domain([Path(p) for p in config.domain])
            if problems:
                raise TargetConfigError(f"target '{target.name}': domain: {problems[0]}")
            self._domain = domain

    def domain(self) -> Domain | None:
        """The domain read from the configured files, if any."""
        return self._domain

    def open_session(self, conversation_id: str, initial_slots: dict[str, Any] | None = None) -> EventSession:
        """A new sender id (the conversation id and a random suffix, so a repeated run never continues an
        old tracker), session start, then the slots."""
        sender = f"{conversation_id}-{uuid.uuid4().hex[:8]}"
        return RasaSession(self, sender, dict(initial_slots or {}))

    def talk(self, sender: str, text: str) -> list[Any]:
        """Send one message through the REST webhook; the messages the assistant sent back."""
        reply = self.call("POST", "/webhooks/rest/webhook", {"sender": sender, "message": text})
        if not isinstance(reply, list):
            raise TargetCrash("garbage", f"the webhook answered {type(reply).__name__}, not a list")
        return reply

    def _url(self, path: str) -> str:
        url = self.base + path
        if self.config.token_env:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(
                {"token": os.environ[self.config.token_env]}
            )
        return url

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for name, value in self.config.headers.items():
            headers[name] = ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)
        return headers

    def _once(self, method: str, path: str, body: bytes | None) -> Any:
        request = urllib.request.Request(self._url(path), data=body, headers=self._headers(), method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = redact(e.read(65536).decode(errors="replace"))[:300]
            raise ProviderError(
                f"HTTP {e.code}", detail, e.code in (408, 409, 429) or e.code >= 500
            ) from None
        except TimeoutError:
            raise ProviderError("timeout", f"no reply within {self.config.timeout_s:g} s", True) from None
        except (urllib.error.URLError, ConnectionError) as e:
            raise ProviderError("connection error", str(getattr(e, "reason", e)), True) from None
        try:
            return json.loads(raw) if raw.strip() else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = redact(raw[:200].decode(errors="replace"))
            raise ProviderError("malformed response", f"not JSON: {text[:80]!r}", True) from None

    def call(self, method: str, path: str, payload: Any = None) -> Any:
        """One request with the model layer's retry policy; failures become TargetCrash."""
        body = json.dumps(payload).encode() if payload is not None else None
        try:
            data, _ = with_retries(
                lambda: self._once(method, path, body), self.client.retry, self.target.name, "rasa"
            )
        except ModelCallError as e:
            kind = {"timeout": "timeout", "malformed response": "garbage"}.get(e.status, "error")
            raise TargetCrash(kind, f"{method} {path}: {e}") from None
        return data
