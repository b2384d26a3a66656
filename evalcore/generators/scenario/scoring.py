"""The offline scorer of the generative assertions (seed 003, `generative_response_is_relevant` and
`generative_response_is_grounded`, "LLM-scored"): embedding similarity, so scenarios run with no model.

Relevance is the cosine similarity of the user message and the response. Groundedness follows the shape
of Rasa's judge (the share of the response's statements the ground truth supports), with similarity in
place of the judge: each sentence of the response scores its best cosine against the sentences of the
ground truth, and the response scores the mean. Cosines below 0 count as 0. Any embedding function fits
(`embedding_scorer`); `client_scorer` uses evalcore's embeddings (ModelClient.embed: the configured
embedding model, or the offline fallback), cached in the store like every other vector.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from evalcore.generators.scenario.checks import Score, Scorer, ScoreRequest

if TYPE_CHECKING:
    from evalcore.llm.client import ModelClient

Embed = Callable[[Sequence[str]], np.ndarray]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a text (split after . ! ? and at line breaks), without empty ones."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def embedding_scorer(embed: Embed) -> Scorer:
    """A scorer from an embedding function (texts -> one row per text); None when there is nothing to
    compare with (no user message before the response, or an empty response)."""

    def score(request: ScoreRequest) -> Score | None:
        answer = sentences(request.response)
        reference = request.question if request.metric == "relevance" else request.ground_truth
        against = [reference.strip()] if request.metric == "relevance" else sentences(reference)
        if not answer or not any(against):
            return None
        if request.metric == "relevance":
            answer = [request.response.strip()]
        vectors = _unit(embed([*answer, *against]))
        similarity = np.clip(vectors[: len(answer)] @ vectors[len(answer) :].T, 0.0, 1.0)
        value = float(similarity.max(axis=1).mean())
        if request.metric == "relevance":
            return Score(value, f"cosine similarity {value:.2f} between the user message and the response")
        return Score(
            value, f"mean best cosine similarity {value:.2f} of {len(answer)} sentence(s) to the ground truth"
        )

    return score


def client_scorer(client: ModelClient, model: str | None = None) -> Scorer:
    """The embedding scorer over evalcore's embeddings (`model`: an embedding model name, else the
    project's `embedding` role)."""
    return embedding_scorer(lambda texts: client.embed(list(texts), model))
