"""What the Conversations page shows, computed here so the page only displays: a table of conversations
with their current tier, the summary distributions, and the passage a grounding document opens on."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from evalcore.documents.facts import plain
from evalcore.documents.retrieval import split_passages
from evalcore.generators.doc_qa.generate import GENERATOR, qa_pairs
from evalcore.generators.doc_qa.schema import QUERY_TYPES, is_cannot_answer
from evalcore.items.current import CurrentItem, content_field, head_versions, read_tiers
from evalcore.items.state import project_policy
from evalcore.items.store_ops import KIND
from evalcore.items.summaries import summaries
from evalcore.models import Conversation, Document, Tier
from evalcore.models.wording import words
from evalcore.specs.store_ops import KIND as SPEC_KIND
from evalcore.specs.store_ops import spec_stamp
from evalcore.store import Store

COLUMNS = [
    "id", "spec_id", "spec", "pairs", "query_types", "chain_length", "documents", "tier", "model", "offline",
    "judge_score", "corrected", "flagged", "problems", "pair_types", "version",
]  # fmt: skip


def documents_used(conversation: Conversation) -> list[str]:
    """Distinct documents grounding any answer, in order of first use."""
    return list(dict.fromkeys(d for _, a in qa_pairs(conversation) for d in a.grounding))


# The content-derived columns of a row, kept per conversation version in the store; a new format of
# them is a new name, so rows of the old one are never read.
SUMMARY = f"{GENERATOR}.table.1"


def _summary(item: CurrentItem) -> dict[str, Any]:
    """The columns of a conversation's row that its current content decides (all but spec name and tier)."""
    c = item.conversation()
    meta = c.metadata
    correction = (meta.get("verification") or {}).get("correction") or {}
    chain = meta.get("chain") or {}
    pairs = qa_pairs(c)
    return {
        "spec_id": c.spec_id or "",
        "pairs": len(pairs),
        "query_types": sorted({q.query_type for q, _ in pairs if q.query_type}),
        "pair_types": [
            "CANNOTANSWER" if is_cannot_answer(a.content) else (q.query_type or "untyped") for q, a in pairs
        ],
        "chain_length": int(chain.get("length") or meta.get("n_documents") or 0),
        "documents": len(documents_used(c)),
        "model": c.provenance.producer,
        "offline": c.provenance.is_offline,
        "judge_score": item.judge.score,
        "corrected": int(correction.get("fired") or 0),
        "flagged": int(correction.get("flagged") or 0),
        "problems": len((meta.get("verification") or {}).get("reasons") or []),
    }


def conversation_table(store: Store, project_id: str, previous: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per doc-QA conversation of the project (see COLUMNS), oldest first, as the read model has
    it (annotators' corrections applied, tier under the project's policy). A page caches it on
    `table_stamp`. Given `previous`, a table of the same project under the same tier policy, only the
    conversations saved since (new, edited or annotated: their version moved) are read again, so one
    annotation costs one conversation's read, not the project's. Without it, each conversation's columns
    come from its summary kept in the store (`evalcore.items.summaries`): only conversations saved since
    any server last summarized them are read whole."""
    scenarios = {i: str(v) for i, v in content_field(store, project_id, SPEC_KIND, "scenario").items()}
    versions = head_versions(store, project_id, KIND, generator=GENERATOR)
    kept: dict[str, dict[str, Any]] = {}
    if previous is not None and not previous.empty:
        for row in previous.to_dict("records"):
            if versions.get(row["id"]) == row["version"]:
                kept[row["id"]] = {**row, "spec": scenarios.get(row["spec_id"], row["spec_id"])}
    fresh = summaries(store, {i: v for i, v in versions.items() if i not in kept}, SUMMARY, _summary)
    tiers = read_tiers(store, project_id, list(fresh)) if fresh else {}
    for item_id, (version, summary) in fresh.items():
        kept[item_id] = {
            "id": item_id,
            **summary,
            "spec": scenarios.get(summary["spec_id"], summary["spec_id"]),
            "tier": tiers.get(item_id, Tier.unreviewed).value,
            "version": version,
        }
    return pd.DataFrame([kept[i] for i in versions if i in kept], columns=COLUMNS)


def table_stamp(store: Store, project_id: str) -> tuple[object, ...]:
    """What `conversation_table` depends on, in three cheap queries: the conversations' revisions (a
    new conversation, an edit, an annotation), the project's tier policy, and the specs (their names)."""
    return (
        store.revision_stamp(project_id, KIND),
        project_policy(store, project_id).key,
        spec_stamp(store, project_id),
    )


def filter_table(
    table: pd.DataFrame,
    *,
    specs: list[str] | None = None,
    query_types: list[str] | None = None,
    chain_lengths: list[int] | None = None,
    tiers: list[str] | None = None,
    models: list[str] | None = None,
) -> pd.DataFrame:
    """Rows matching every given filter (a conversation matches a query type when any pair has it)."""
    keep = pd.Series(True, index=table.index)
    if specs:
        keep &= table["spec_id"].isin(specs)
    if query_types:
        keep &= table["query_types"].apply(lambda types: bool(set(types) & set(query_types)))
    if chain_lengths:
        keep &= table["chain_length"].isin(chain_lengths)
    if tiers:
        keep &= table["tier"].isin(tiers)
    if models:
        keep &= table["model"].isin(models)
    return table[keep]


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of `conversation_table` as the page lists them: named as the filters and charts name them,
    query types in words and joined, 'offline' spelled out, and no empty cell shown as None (an unjudged
    conversation's score reads 'not judged')."""
    view = table.assign(
        query_types=[", ".join(words(t) for t in types) for types in table["query_types"]],
        offline=table["offline"].map({True: "offline", False: ""}),
        judge_score=["not judged" if pd.isna(s) else f"{s:.2f}" for s in table["judge_score"]],
    )
    return view.drop(columns=["spec_id", "pair_types", "version"]).rename(
        columns={
            "chain_length": "documents in chain",
            "documents": "documents cited",
            "judge_score": "judge score",
        }
    )


def summary(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Distributions for the summary strip, from the rows of `conversation_table` (no store reads), named
    as the filters and the table name them: query types of pairs (in words), documents in the chain,
    documents the answers cite (a filler question's answer cites a document outside the chain, so it can
    be more)."""
    types: Counter[str] = Counter(label for labels in table["pair_types"] for label in labels)
    lengths: Counter[int] = Counter(int(x) for x in table["chain_length"])
    used: Counter[int] = Counter(int(x) for x in table["documents"])
    order = [*QUERY_TYPES, "CANNOTANSWER"]
    return {
        "query_types": pd.DataFrame(
            [{"query type": words(t), "pairs": types[t]} for t in order + sorted(set(types) - set(order))]
        ),
        "chain_lengths": pd.DataFrame(
            [{"documents in chain": k, "conversations": n} for k, n in sorted(lengths.items())]
        ),
        "documents": pd.DataFrame(
            [{"documents cited": k, "conversations": n} for k, n in sorted(used.items())]
        ),
    }


def passage_views(documents: list[Document]) -> dict[str, dict[str, str]]:
    """Passage id -> {document_id, title, text}, for opening a grounding passage in place."""
    return {
        p.id: {"document_id": p.document_id, "title": p.title, "text": p.text}
        for p in split_passages(documents)
    }


def cited_spans(text: str, source: dict[str, Any] | None = None) -> list[tuple[str, bool]]:
    """A passage as (text, cited) spans in order: cited is what the answer quotes, its sentence or its
    table cells ('column: value' as rendered in row passages); a page shows those in bold."""
    spans = [(plain(text), False)]
    targets = [plain(source["sentence"])] if source and source.get("sentence") else []
    targets += [plain(f"{column}: {value}") for column, value in (source or {}).get("cells") or []]
    for target in filter(None, targets):
        for n, (span, cited) in enumerate(spans):
            if not cited and target in span:
                before, _, after = span.partition(target)
                spans[n : n + 1] = [s for s in ((before, False), (target, True), (after, False)) if s[0]]
                break
    return spans
