"""The document graph of seed 000 (Section 3.2, Algorithm 2, lines 5-14): which documents can follow which.

Nodes are documents (attributes `kind`, `title`). Edges join two documents that share something, and carry
`kind`, `bridges` (the shared entities, most specific first, at most `max_bridges`), `weight` (how many
were shared) and, for edges touching a table, `fields` (column -> sample values that made the link):

- `text` edges, between text/policy documents, when both mention the same id or name (as found by the
  extractor); shared quantities are kept among the bridges but never make an edge alone, because amounts
  such as '14 days' or '$25' recur in unrelated documents;
- `table` edges, between tables, when they have a column of the same name AND that column holds at least
  one common value (the foreign-key link of the seed). Values must contain a letter and not be a yes/no
  flag, because equal prices or counts in two tables coincide by chance;
- `cross_modal` edges, between a table and a text/policy document, when a cell names an id or a name the
  document mentions. A cell counts both as a whole ('Voltra', 'Alder Creek') and through the entities the
  extractor finds in it ('RC-01,RC-02' -> RC-01, RC-02); quantities do not link across modalities.

Entities that link nothing useful are ignored: the names in `ignore` (the business name, which every
document mentions), and, for text and cross-modal edges, entities found in more than `max_doc_share` (60%)
of the documents and in at least 3 of them (the floor keeps tiny corpora linkable). Entities are matched
by their canonical form, folded to lower case, so any extractor (offline or LLM-backed) can be plugged in.

Specificity, used to order bridges: ids first, then names, then quantities; within a kind, rarer first
(fewer documents), then longer first.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import networkx as nx

from evalcore.documents.entities import Entity, Extractor, canonical_name, extract_entities
from evalcore.models import Document, DocumentKind

EDGE_KINDS = ("text", "table", "cross_modal")
_KIND_RANK = {"id": 0, "name": 1, "quantity": 2}
_FLAGS = frozenset({"yes", "no", "y", "n", "true", "false", "n/a", "na", "none", "-", "tbd"})
_ID_CELL = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")
_MAX_CELL_WORDS = 6


@dataclass
class _Profile:
    """What one document mentions: match key -> (display text, entity kind), and table cells per column."""

    doc: Document
    entities: dict[str, tuple[str, str]] = field(default_factory=dict)
    columns: dict[str, dict[str, str]] = field(default_factory=dict)  # column -> key -> display value
    found_in: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # key -> columns

    @property
    def is_table(self) -> bool:
        return self.doc.kind == DocumentKind.table

    def add(self, entity: Entity, column: str | None = None) -> None:
        key = canonical_name(entity.canonical)
        if key:
            self.entities.setdefault(key, (entity.text, entity.kind))
            if column is not None:
                self.found_in[key].add(column)


def _profile(doc: Document, extract: Extractor, cache: dict[str, list[Entity]]) -> _Profile:
    profile = _Profile(doc)
    if doc.kind != DocumentKind.table:
        text = doc.text if doc.title.casefold() in doc.text[:300].casefold() else f"{doc.title}\n{doc.text}"
        for entity in extract(text):
            profile.add(entity)
        return profile
    for column in doc.columns:
        values = profile.columns.setdefault(column, {})
        for row in doc.rows:
            cell = str(row.get(column, "")).strip()
            if not cell or not any(c.isalpha() for c in cell):
                continue  # numbers and empty cells name nothing (and prices coincide by chance)
            key = canonical_name(cell)
            if key not in _FLAGS:
                values.setdefault(key, cell)
            if cell not in cache:  # tables repeat values; extract each distinct cell once
                cache[cell] = [e for e in extract(cell) if e.kind != "quantity"]
            for entity in cache[cell]:
                profile.add(entity, column)
            if key not in _FLAGS and len(cell.split()) <= _MAX_CELL_WORDS:
                kind = "id" if _ID_CELL.match(cell) else "name"
                profile.add(Entity(cell, kind, cell), column)
    return profile


def _order(keys: Iterable[str], kinds: dict[str, str], df: Counter[str]) -> list[str]:
    """Most specific first: ids, names, quantities; then rarer; then longer; then alphabetical."""
    return sorted(keys, key=lambda k: (_KIND_RANK.get(kinds.get(k, "name"), 1), df[k], -len(k), k))


def build_graph(
    documents: Iterable[Document],
    extractor: Extractor = extract_entities,
    *,
    ignore: Iterable[str] = (),
    max_doc_share: float = 0.6,
    max_bridges: int = 10,
) -> nx.Graph:
    """The document graph (see the module docstring for the linking rules).

    `extractor` maps text to entities (the offline `extract_entities` by default, or an LLM-backed one);
    `ignore` lists names never to link on, typically the business name from the system card.
    """
    cache: dict[str, list[Entity]] = {}
    profiles = [_profile(doc, extractor, cache) for doc in documents]
    graph = nx.Graph()
    for p in profiles:
        graph.add_node(p.doc.id, kind=str(p.doc.kind), title=p.doc.title)
    df: Counter[str] = Counter(key for p in profiles for key in p.entities)
    kinds: dict[str, str] = {}
    display: dict[str, str] = {}
    # Prose wording names an entity before cell text does; an entity's kind is its most specific reading.
    for p in sorted(profiles, key=lambda p: p.is_table):
        for key, (text, kind) in p.entities.items():
            display.setdefault(key, text)
            if key not in kinds or _KIND_RANK.get(kind, 1) < _KIND_RANK.get(kinds[key], 1):
                kinds[key] = kind
    banned = {canonical_name(name) for name in ignore}
    limit = max_doc_share * len(profiles)
    common = {key for key, n in df.items() if n > limit and n >= 3}
    skip = banned | common

    def link(a: _Profile, b: _Profile, kind: str, keys: set[str], fields: dict[str, list[str]]) -> None:
        ordered = _order(keys, kinds, df)
        bridges = [display.get(k, k) for k in ordered][:max_bridges]
        attrs: dict[str, Any] = {"kind": kind, "bridges": bridges, "weight": len(ordered)}
        if fields:
            attrs["fields"] = fields
        graph.add_edge(a.doc.id, b.doc.id, **attrs)

    for a, b in combinations(profiles, 2):
        if not a.is_table and not b.is_table:
            shared = {k for k in a.entities.keys() & b.entities.keys() if k not in skip}
            if any(kinds[k] != "quantity" for k in shared):
                link(a, b, "text", shared, {})
        elif a.is_table and b.is_table:
            fields: dict[str, list[str]] = {}
            shared = set()
            for column in a.columns.keys() & b.columns.keys():
                common_values = {k for k in a.columns[column].keys() & b.columns[column].keys()}
                common_values -= banned
                if common_values:
                    ordered = _order(common_values, kinds, df)
                    fields[column] = [a.columns[column][k] for k in ordered][:5]
                    shared |= common_values
            if shared:
                link(a, b, "table", shared, dict(sorted(fields.items())))
        else:
            table, prose = (a, b) if a.is_table else (b, a)
            shared = {
                k
                for k in table.entities.keys() & prose.entities.keys()
                if k not in skip and kinds.get(k) != "quantity" and prose.entities[k][1] != "quantity"
            }
            if shared:
                by_column: dict[str, list[str]] = defaultdict(list)
                for key in _order(shared, kinds, df):
                    for column in sorted(table.found_in[key]):
                        by_column[column].append(display.get(key, key))
                link(a, b, "cross_modal", shared, {c: v[:5] for c, v in sorted(by_column.items())})
    return graph


def graph_stats(graph: nx.Graph) -> dict[str, Any]:
    """Counts for reports and the UI: nodes by document kind, edges by edge kind, components, isolated."""
    nodes = Counter(str(data.get("kind")) for _, data in graph.nodes(data=True))
    edges = Counter(str(data.get("kind")) for _, _, data in graph.edges(data=True))
    return {
        "nodes": {kind.value: nodes.get(kind.value, 0) for kind in DocumentKind},
        "edges": {kind: edges.get(kind, 0) for kind in EDGE_KINDS},
        "components": nx.number_connected_components(graph) if graph.number_of_nodes() else 0,
        "isolated": sorted(nx.isolates(graph)),
    }
