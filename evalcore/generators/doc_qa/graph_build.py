"""The document graph for doc-QA generation (seed 000, Algorithm 2, lines 4-14).

Built once per job over the project's text and table documents (policy documents are context, not
nodes, as in the seed); each spec's chains then stay within its own documents. Our extension: with
`include_policies`, policy documents are nodes too, for the specs whose own documents are policies only
(a knowledge base kept as a policy FAQ would otherwise give no chain at all). Entities come from:

- offline: `evalcore.documents.entities.extract_entities` (capitalised phrases, ids, numbers with units);
- with a model: the LLM task `extract_entities` (evalcore.documents.entity_task), one call per prose document,
  cached by the model layer so a resumed or repeated job pays nothing. Table cells are short and
  structured, so they keep the deterministic extractor (one call per cell would cost hundreds of calls
  for no better links); the graph links a cell to prose through the LLM's entities all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

from evalcore.documents.entities import Entity, extract_entities
from evalcore.documents.entity_task import EXTRACT_ENTITIES, as_entity
from evalcore.documents.graph import build_graph
from evalcore.llm import ModelClient
from evalcore.models import Document, DocumentKind


@dataclass
class GraphBuild:
    """The graph and how its entities were found (for the run's record and the page)."""

    graph: nx.Graph
    extractor: str  # "offline" or the model that extracted entities
    failed: list[str] = field(default_factory=list)  # documents whose LLM extraction failed (offline used)


def _prose_text(doc: Document) -> str:
    # The same text docgraph hands to the extractor, so lookups by text hit.
    return doc.text if doc.title.casefold() in doc.text[:300].casefold() else f"{doc.title}\n{doc.text}"


def build_document_graph(
    llm: ModelClient,
    documents: Sequence[Document],
    *,
    ignore: Sequence[str] = (),
    model: str | None = None,
    seed: int | None = None,
    include_policies: bool = False,
) -> GraphBuild:
    """The text/table/cross-modal graph over the text and table documents, and the policy documents with
    `include_policies` (see the module docstring)."""
    nodes = [d for d in documents if include_policies or d.kind != DocumentKind.policy]
    provider, _, full = llm.registry.resolve("generator", model)
    if provider.name == "offline":
        return GraphBuild(build_graph(nodes, extract_entities, ignore=ignore), "offline")
    prose = [d for d in nodes if d.kind != DocumentKind.table]
    texts = [_prose_text(d) for d in prose]
    results = llm.run_batch(
        EXTRACT_ENTITIES, [{"passage": t} for t in texts], role="generator", model=model, seed=seed
    )
    by_text: dict[str, list[Entity]] = {}
    failed: list[str] = []
    for doc, text, result in zip(prose, texts, results, strict=True):
        if result.ok and result.output is not None:
            entities = [as_entity(e) for e in result.output.entities]
            by_text[text] = [e for e in entities if e is not None]
        else:
            failed.append(doc.id)  # kept linkable with the offline extractor; the run records which

    def extractor(text: str) -> list[Entity]:
        return by_text[text] if text in by_text else extract_entities(text)

    graph = build_graph(nodes, extractor, ignore=ignore)
    return GraphBuild(graph, full, failed)
