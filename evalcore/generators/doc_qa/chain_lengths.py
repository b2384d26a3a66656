"""The chain lengths (documents per conversation, the seed's d) a project's specs allow, for a default
that does not ask for chains the documents cannot give (issue 28: d = 5 on a sample whose specs are about
one or two documents left a "no chain of length 5" note on every conversation).

A spec's chains run through the documents it is about (evalcore.generators.doc_qa.job, `_chain_nodes`),
so it allows at most as many documents per chain as it cites (its text and table documents; its policies
when it cites only policies).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalcore.specs.choice import choose_specs
from evalcore.store import Store

FALLBACK = 2  # no spec yet: a short chain, which any linked pair of documents gives


def allowed_lengths(store: Store, project_id: str, specs: str | Sequence[str] = "selected") -> list[int]:
    """The distinct chain lengths the chosen specs allow (each spec's count of documents it is about),
    smallest first; [FALLBACK] when no spec cites a document."""
    kinds = {d.id: d.kind.value for d in store.documents(project_id)}
    found = set()
    for spec in choose_specs(store, project_id, specs)[0]:
        own = [i for i in spec.documents if kinds.get(i) in ("text", "table")]
        policies = [i for i in spec.documents if kinds.get(i) == "policy"]
        if n := len(own or policies):
            found.add(n)
    return sorted(found) or [FALLBACK]
