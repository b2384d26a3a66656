"""Altered echoes of a secret are not stored (issue 25, finding 3): a target that echoes its key
base64-encoded, upper-cased, reversed, cut to 20 characters or spaced out leaves no trace of it in
`run_units.result` or `judgments.body`, on SQLite and PostgreSQL."""

from __future__ import annotations

import base64

import pytest
from runs_support import sample_project
from target_endpoints import Endpoint, http_target

from evalcore.runs import create_run, execute_run
from evalcore.store import secrets
from evalcore.targets import save_target

KEY = "rb-live-7Qx2Lm9Zt4Wp8Kd3Vn6Hs1Jc5"
ALTERED = {
    "base64": base64.b64encode(KEY.encode()).decode(),
    "base64 inside a header": base64.b64encode(f"Authorization: Bearer {KEY}".encode()).decode(),
    "upper-cased": KEY.upper(),
    "lower-cased": KEY.lower(),
    "reversed": KEY[::-1],
    "cut to 20": KEY[:20],
    "last 20": KEY[-20:],
    "spaced out": " ".join(KEY),
    "dashed out": "-".join(KEY),
}


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("RIDGE_BOT_TOKEN", KEY)  # the variable the target's header names
    secrets.register("RIDGE_BOT_TOKEN")
    return KEY


@pytest.mark.parametrize("form", sorted(ALTERED))
def test_redact_masks_each_altered_echo(key, form):
    masked = secrets.redact(f"The token you sent was {ALTERED[form]}, thanks.")
    assert masked.startswith("The token you sent was ") and "***" in masked
    assert ALTERED[form] not in masked
    assert not any(KEY.lower()[i : i + 8] in masked.lower() for i in range(len(KEY) - 8)), masked


def test_ordinary_text_around_a_key_is_kept(key):
    text = "Keys, tokens and passwords are words a conversation may hold; sk-live- and rb-live- too."
    assert secrets.redact(text) == text


def test_a_target_echoing_its_key_altered_leaves_it_nowhere_in_the_store(store, key, snapshot):
    pid, _ = sample_project(store)
    served = Endpoint()
    reply = "Echo: " + " | ".join(f"{name}={text}" for name, text in ALTERED.items())
    served.script = [("json", {"reply": {"text": reply}})] * 200
    try:
        save_target(store, pid, http_target(served))
        run = create_run(store, pid, "web", judge="offline", limit=2)
        execute_run(store, run.id)
    finally:
        served.server.shutdown()
        served.server.server_close()
    assert served.requests, "the target was played"
    rows = snapshot(store)
    kept = "\n".join(rows["run_units"] + rows["judgments"])
    assert "Echo: base64=***" in kept, "the replies were stored, redacted"
    everything = "\n".join(line for lines in rows.values() for line in lines)
    for name, text in ALTERED.items():
        assert text not in everything, f"{name} echo stored"
    folded = everything.lower().replace(" ", "").replace("-", "")
    assert KEY.lower().replace("-", "")[4:20] not in folded
