"""Providers that need no key and no network beyond this machine: the offline provider, a local llama.cpp
server (started by serve_local.py) and the local wordllama embeddings."""

from __future__ import annotations

import hashlib
import threading
from typing import Any, ClassVar

import numpy as np

from evalcore.llm.providers import OpenAIProvider, Provider, ProviderConfig
from evalcore.llm.types import ConfigError, Request, Response


class OfflineProvider(Provider):
    """Needs no key and no network: tasks answer with their offline implementation, chat with a stub."""

    cacheable = False
    priced = False

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    def generate(self, model: str, request: Request) -> Response:
        """The task's deterministic offline output, or a short reply that echoes the last message."""
        if request.offline is not None:
            text = request.offline()
        else:
            last = request.messages[-1].content if request.messages else ""
            text = f"(offline reply) {' '.join(last.split()[:40])}"
        tokens_in = sum(len(m.content) for m in request.messages) // 4
        return Response(text, tokens_in, len(text) // 4, "stop")

    def embed(self, model: str, texts: list[str]) -> tuple[np.ndarray, int]:
        """Hashed character n-grams (3 to 5), signed, L2-normalised: needs nothing, fully deterministic."""
        dim = int(model.rsplit("-", 1)[-1]) if model.rsplit("-", 1)[-1].isdigit() else 256
        return np.stack([hashed_ngrams(t, dim) for t in texts]) if texts else np.zeros((0, dim)), 0


class LocalProvider(OpenAIProvider):
    """llama.cpp's OpenAI-compatible server on this machine: no key, no price; replies are cached, being
    slow to make again. What it writes is marked with its model, like any provider's but the offline one."""

    priced = False


def hashed_ngrams(text: str, dim: int = 256) -> np.ndarray:
    """A unit vector of signed hashed character 3..5-grams of the lower-cased, padded words."""
    vec = np.zeros(dim, dtype=np.float32)
    for word in text.lower().split():
        padded = f" {word} "
        for n in (3, 4, 5):
            for i in range(max(1, len(padded) - n + 1)):
                digest = hashlib.blake2b(padded[i : i + n].encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little")
                vec[slot % dim] += 1.0 if digest[4] & 1 else -1.0
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm else vec


_WORDLLAMA_LOCK = threading.Lock()


class WordLlamaProvider(Provider):
    """A static sentence-embedding model shipped inside the wordllama wheel, loaded with downloads off."""

    cacheable = True
    priced = False
    _models: ClassVar[dict[str, Any]] = {}  # loaded once per process, shared by all clients

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    def embed(self, model: str, texts: list[str]) -> tuple[np.ndarray, int]:
        """Normalised wordllama vectors."""
        wl = load_wordllama(model)
        return np.asarray(wl.embed(texts, norm=True), dtype=np.float32).reshape(len(texts), -1), 0


def load_wordllama(model: str = "l2_supercat_256") -> Any:
    """The wordllama model from the installed package folder; raises ConfigError when it cannot load.

    Its plain `load()` tries to download a tokenizer; pointing `cache_dir` at the package (which ships
    both weights and tokenizer config) with downloads disabled loads it offline in about a second.
    """
    with _WORDLLAMA_LOCK:
        if model not in WordLlamaProvider._models:
            WordLlamaProvider._models[model] = _load_wordllama(model)
        return WordLlamaProvider._models[model]


def _load_wordllama(model: str) -> Any:
    config, _, dim = model.rpartition("_")
    try:
        from pathlib import Path

        import wordllama

        loaded = wordllama.WordLlama.load(
            config=config or "l2_supercat",
            dim=int(dim),
            cache_dir=Path(wordllama.__file__).parent,
            disable_download=True,
        )
    except Exception as e:
        raise ConfigError(f"the local embedding model wordllama/{model} could not be loaded: {e}") from e
    return loaded
