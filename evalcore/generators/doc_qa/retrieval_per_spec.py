"""Document extraction per spec (seed 000, Algorithm 2, lines 1-3): text, table and policy documents.

The project's documents are split by kind and retrieved separately with the spec's text as the query
(BM25 fused with embeddings by RRF when an embedder is given; see evalcore.documents.retrieval):
D_text and D_table form the document graph the chains walk, D_policy joins every conversation's
context, as in the seed.

The spec's own documents D_s (chosen when it was generated or edited) come first in their kind, so an
analyst who pointed a spec at a document sees it used; retrieval fills each kind up to its `k`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import zip_longest

from evalcore.documents.retrieval import PassageIndex
from evalcore.models import Document, Spec

DEFAULT_K = {"text": 5, "table": 4, "policy": 2}


def spec_query(spec: Spec) -> str:
    """The retrieval query of a spec: its scenario and its Given/When/Then."""
    return " ".join([spec.scenario, spec.given, spec.when, spec.then])


@dataclass(frozen=True)
class SpecDocuments:
    """Documents retrieved for one spec, best first, per kind."""

    text: list[str] = field(default_factory=list)
    table: list[str] = field(default_factory=list)
    policy: list[str] = field(default_factory=list)

    def graph_ranked(self) -> list[str]:
        """Text and table documents interleaved by rank: the nodes chains may use, best first."""
        merged = [d for pair in zip_longest(self.text, self.table) for d in pair if d is not None]
        return list(dict.fromkeys(merged))

    def to_json(self) -> dict[str, list[str]]:
        """The JSON form kept in a run's plan and a conversation's metadata."""
        return asdict(self)


def retrieve_for_spec(
    index: PassageIndex,
    spec: Spec,
    documents: Sequence[Document],
    k: dict[str, int] | None = None,
) -> SpecDocuments:
    """D_text, D_table and D_policy for `spec`: its own documents of each kind first, then retrieval."""
    k = {**DEFAULT_K, **(k or {})}
    kinds = {d.id: d.kind.value for d in documents}
    query = spec_query(spec)
    found: dict[str, list[str]] = {}
    for kind in ("text", "table", "policy"):
        own = [d for d in spec.documents if kinds.get(d) == kind]
        retrieved = index.retrieve_documents(query, k=k[kind] + len(own), kinds=[kind])
        found[kind] = _first(own + retrieved, max(k[kind], len(own)))
    return SpecDocuments(**found)


def _first(ids: Iterable[str], n: int) -> list[str]:
    return list(dict.fromkeys(ids))[:n]
