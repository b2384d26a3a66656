"""The chain lengths (documents per conversation, the seed's d) the Conversations page offers by default,
so that it does not ask for chains the documents cannot give (issue 28: d = 5 on a sample whose specs are
about one or two documents left a "no chain of length 5" note on every conversation).

Through the document graph (the default, seed 000's Algorithm 2) a chain reaches d documents wherever the
graph links that many, so the default is the README walk-through's 2, 3 and 4, capped by the project's
documents. Within the spec's documents (`chains="spec"`, evalcore.generators.doc_qa.job `_chain_nodes`) a
spec allows at most as many documents per chain as it cites (its text and table documents; its policies
when it cites only policies).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalcore.errors import EvalcoreError
from evalcore.specs.choice import choose_specs
from evalcore.store import Store

FALLBACK = 2  # no spec yet: a short chain, which any linked pair of documents gives
GRAPH_DEFAULT = (2, 3, 4)  # the README walk-through's --d 2,3,4


def allowed_lengths(
    store: Store, project_id: str, specs: str | Sequence[str] = "selected", chains: str = "graph"
) -> list[int]:
    """The chain lengths to offer, smallest first: through the graph the walk-through's, at most as many as
    the project has documents; within the specs' documents each chosen spec's count of documents it is
    about. [FALLBACK] when neither gives one (no spec yet, or no spec citing a document)."""
    kinds = {d.id: d.kind.value for d in store.documents(project_id)}
    if chains == "graph":
        nodes = sum(kind in ("text", "table") for kind in kinds.values()) or len(kinds)
        return [d for d in GRAPH_DEFAULT if d <= nodes] or [FALLBACK]
    try:
        chosen = choose_specs(store, project_id, specs)[0]
    except EvalcoreError:  # no spec to choose yet: the page says so above the form
        chosen = []
    found = set()
    for spec in chosen:
        own = [i for i in spec.documents if kinds.get(i) in ("text", "table")]
        policies = [i for i in spec.documents if kinds.get(i) == "policy"]
        if n := len(own or policies):
            found.add(n)
    return sorted(found) or [FALLBACK]
