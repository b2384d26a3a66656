"""Embeddings: local wordllama loaded offline, OpenAI embeddings, the n-gram fallback, the store cache."""

from __future__ import annotations

import socket

import numpy as np
import pytest
import sqlalchemy as sa
from llm_server import FAST_RETRY, PROJECT

from evalcore.llm import ModelClient, Registry
from evalcore.llm import local as local_models
from evalcore.llm.records import calls
from evalcore.llm.registry import LOCAL_EMBEDDING, OFFLINE_EMBEDDING
from evalcore.store import Store
from evalcore.store import schema as t

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project

TEXTS = ["How do I get a refund?", "Can I have my money back?", "The train leaves at noon."]


def cosine(a, b) -> float:
    return float(np.dot(a, b))


def test_the_offline_fallback_needs_nothing_and_is_deterministic(project, llm_env):
    llm = ModelClient(project, PROJECT)
    first = llm.embed(TEXTS, model=OFFLINE_EMBEDDING)
    again = ModelClient(project, PROJECT).embed(TEXTS, model=OFFLINE_EMBEDDING)
    assert first.shape == (3, 256) and first.dtype == np.float32
    assert np.array_equal(first, again)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)
    near = llm.embed(["refund policy", "refund policies", "quantum chromodynamics"], model=OFFLINE_EMBEDDING)
    assert cosine(near[0], near[1]) > cosine(near[0], near[2]) + 0.3


@pytest.fixture
def no_network(monkeypatch):
    """Any connection except to 127.0.0.1 fails, as on a machine without internet."""
    real = socket.socket.connect

    def guarded(sock, address):
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "localhost", "::1"):
            raise OSError(f"network disabled in this test: {address}")
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_wordllama_loads_offline_from_the_package_and_is_the_default(
    project, llm_env, no_network, monkeypatch
):

    monkeypatch.setattr(local_models.WordLlamaProvider, "_models", {})  # really load it here
    assert Registry().choose("embedding").model == LOCAL_EMBEDDING
    llm = ModelClient(project, PROJECT)
    vectors = llm.embed(TEXTS)
    assert vectors.shape == (3, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    assert [c.provider for c in calls(project, project_id=PROJECT)] == ["wordllama"]


def test_when_wordllama_cannot_load_the_default_falls_back(monkeypatch):
    def broken(model):
        raise local_models.ConfigError("no weights")

    monkeypatch.setattr(local_models, "load_wordllama", broken)
    assert Registry().choose("embedding").model == OFFLINE_EMBEDDING


@pytest.fixture
def project_on(store: Store) -> Store:
    store.create_project(PROJECT, "Embeddings project")
    return store


def test_api_embeddings_are_cached_in_the_store_by_content_and_model(project_on, llm_env):
    llm = ModelClient(project_on, PROJECT, retry=FAST_RETRY)
    first = llm.embed([*TEXTS, TEXTS[0]], model="openai/text-embedding-3-small")
    assert first.shape == (4, 8) and np.array_equal(first[0], first[3])
    assert len(llm_env.calls) == 1 and llm_env.calls[0].body["input"] == TEXTS, "each distinct text once"
    again = ModelClient(project_on, PROJECT, retry=FAST_RETRY).embed(
        TEXTS, model="openai/text-embedding-3-small"
    )
    assert len(llm_env.calls) == 1 and np.allclose(again, first[:3])
    ModelClient(project_on, PROJECT, retry=FAST_RETRY).embed(
        [TEXTS[0], "new text"], model="openai/text-embedding-3-small"
    )
    assert llm_env.calls[1].body["input"] == ["new text"]
    with project_on.read() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(t.embeddings)) == 4
    embed_calls = calls(project_on, project_id=PROJECT)
    assert [c.task for c in embed_calls] == ["embed", "embed"] and embed_calls[0].cost_usd > 0
