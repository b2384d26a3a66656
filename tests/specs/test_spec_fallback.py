"""A spec citing no document gets, beside BM25's, the documents its embedding singles out (z >= 2)."""

from __future__ import annotations

import numpy as np

from evalcore.documents.retrieval import build_index
from evalcore.inputs import import_project
from evalcore.models import Document, DocumentKind
from evalcore.specs import generation
from evalcore.specs.drafts import SpecDraft
from evalcore.specs.fallback import SEMANTIC_Z, SemanticFallback

TOPICS = ["repairs", "returns", "rentals", "warranty", "stores", "orders"]
DOCS = [
    Document(id=topic, kind=DocumentKind.policy, title=topic.title(), text=f"All about {topic} here.")
    for topic in TOPICS
]


class FakeEmbeddings:
    """Each document on its own axis; a query's vector is given per text."""

    def __init__(self, queries: dict[str, list[float]]) -> None:
        self.queries, self.calls = queries, 0

    def embed(self, texts, model=None):
        self.calls += 1
        rows = []
        for text in texts:
            if text in self.queries:
                rows.append(self.queries[text])
            else:  # a document: its own axis
                rows.append([float(text.lower().startswith(topic)) for topic in TOPICS])
        return np.asarray(rows, dtype=np.float32)


def test_only_a_document_standing_out_from_the_others_is_kept():
    fake = FakeEmbeddings(
        {
            "fix my brakes remotely": [0.9, 0.1, 0.1, 0.2, 0.1, 0.1],  # repairs stands out
            "anything at all": [0.3, 0.3, 0.3, 0.3, 0.3, 0.3],  # no spread: nothing
            "returns or warranty": [0.1, 0.8, 0.1, 0.75, 0.1, 0.1],  # two close: neither is 2 sd above
        }
    )
    fallback = SemanticFallback(fake, DOCS)  # type: ignore[arg-type]
    assert fallback.documents("fix my brakes remotely", 3) == ["repairs"]
    assert fallback.documents("anything at all", 3) == []
    sims = np.array([0.1, 0.8, 0.1, 0.75, 0.1, 0.1])
    assert ((sims - sims.mean()) / sims.std()).max() < SEMANTIC_Z
    assert fallback.documents("returns or warranty", 3) == []
    assert SemanticFallback(fake, DOCS[:3]).documents("fix my brakes remotely", 3) == [], "too few to compare"  # type: ignore[arg-type]


def test_a_spec_citing_none_gets_bm25s_documents_then_the_embeddings(monkeypatch):
    draft = SpecDraft(scenario="Not able to diagnose faults remotely", given="A customer had a noise.",
                      when="The customer asks for a diagnosis.", then="It should say it cannot.",
                      category="limitation")  # fmt: skip
    query = " ".join([draft.scenario, draft.given, draft.when, draft.then])
    fake = FakeEmbeddings({query: [0.9, 0.1, 0.1, 0.2, 0.1, 0.1]})
    relevance = generation._Relevance(build_index(DOCS))
    by_id = {d.id: d for d in DOCS}
    placed = generation._with_documents(draft, relevance, SemanticFallback(fake, DOCS), by_id, 3)  # type: ignore[arg-type]
    assert placed.documents == ["repairs"], "no word in common with any document: the embedding's only"
    cited = draft.model_copy(update={"documents": ["orders"]})
    calls = fake.calls
    assert generation._with_documents(cited, relevance, SemanticFallback(fake, DOCS), by_id, 3).documents == [
        "orders"
    ]  # type: ignore[arg-type]
    assert fake.calls == calls + 1, "a spec citing documents keeps them; only the documents were embedded"


def test_the_fallback_is_an_option_of_the_generation_off_by_default(sqlite_store, monkeypatch):
    found: list[list[str]] = []
    original = SemanticFallback.documents

    def spy(self, text, k):
        found.append(original(self, text, k))
        return found[-1]

    monkeypatch.setattr(SemanticFallback, "documents", spy)
    project_id = import_project(sqlite_store, "data/sample").project_id
    off = generation.generate_specs(sqlite_store, project_id, m=30)
    assert off.run.params["semantic_fallback"] is False
    assert found and not any(found), "specs citing none, and no document from the embeddings"
    found.clear()
    on = generation.generate_specs(sqlite_store, project_id, m=30, semantic_fallback=True)
    assert on.run.params["semantic_fallback"] is True and any(found)
