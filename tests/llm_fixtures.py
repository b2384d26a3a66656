"""Fixtures for the model-layer tests: the fake API server, an environment pointing at it, a project.

A test module loads them with `pytest_plugins = ["llm_fixtures"]`; constants come from llm_server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from llm_server import PROJECT, LLMServer, model_env

from evalcore.store import Store

_shared: list[LLMServer] = []


def shared_server() -> LLMServer:
    """One fake server per test process, started on first use (a daemon thread: it ends with pytest)."""
    if not _shared:
        _shared.append(LLMServer().start())
    return _shared[0]


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """The fake API server, reset for each test."""
    server = shared_server()
    server.reset()
    yield server
    server.release_held()
    server.reset()


@pytest.fixture
def llm_env(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """Providers configured for the fake server only; no role or offline variables from outside."""
    for name in list(os.environ):
        if name.startswith("EVALCORE_") and (name.endswith("_MODEL") or name in ("EVALCORE_OFFLINE",)):
            monkeypatch.delenv(name)
    monkeypatch.delenv("EVALCORE_COMPAT_API_KEY", raising=False)
    for name, value in model_env(llm_server).items():
        monkeypatch.setenv(name, value)
    return llm_server


@pytest.fixture
def project(sqlite_store: Store) -> Store:
    """A SQLite store holding an empty project `p1`."""
    sqlite_store.create_project(PROJECT, "Test project")
    return sqlite_store
