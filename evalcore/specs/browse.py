"""What the Spec review page lists, computed here so the page only displays (and caches it on
`store_ops.spec_stamp`): one row per spec, the counts above the table, and the filters."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evalcore.models import SpecStatus
from evalcore.specs.store_ops import SpecView

COLUMNS = ["id", "selected", "status", "locked", "category", "scenario", "documents", "written by", "version",
           "saved by", "text"]  # fmt: skip


def spec_table(views: Sequence[SpecView]) -> pd.DataFrame:
    """One row per spec (see COLUMNS; `text` is what the search looks in: scenario, documents and steps),
    selected and locked specs first, each group oldest first."""
    rows = [
        {
            "id": v.spec.id,
            "selected": v.spec.selected,
            "status": v.spec.status.value,
            "locked": v.spec.locked,
            "category": v.spec.category,
            "scenario": v.spec.scenario,
            "documents": ", ".join(v.spec.documents),
            "written by": "offline" if v.spec.provenance.is_offline else v.spec.provenance.producer,
            "version": v.version,
            "saved by": v.saved_by,
            "text": " ".join([v.spec.scenario, *v.spec.documents, v.spec.given, v.spec.when, v.spec.then]),
        }
        for v in views
    ]
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.sort_values(["selected", "locked"], ascending=False, kind="stable").reset_index(drop=True)


def spec_counts(table: pd.DataFrame) -> dict[str, int]:
    """The figures above the table: candidates, selected, accepted, rejected, and written offline."""
    return {
        "Candidates": len(table),
        "Selected": int(table["selected"].sum()),
        "Accepted": int((table["status"] == SpecStatus.accepted.value).sum()),
        "Rejected": int((table["status"] == SpecStatus.rejected.value).sum()),
        "offline": int((table["written by"] == "offline").sum()),
    }


def filter_specs(
    table: pd.DataFrame,
    query: str = "",
    statuses: Sequence[str] = (),
    categories: Sequence[str] = (),
    only_selected: bool = False,
) -> pd.DataFrame:
    """The rows whose text contains `query` (any case) and that match every other given filter."""
    keep = pd.Series(True, index=table.index)
    if query.strip():
        keep &= table["text"].str.contains(query.strip(), case=False, regex=False)
    if statuses:
        keep &= table["status"].isin(statuses)
    if categories:
        keep &= table["category"].isin(categories)
    if only_selected:
        keep &= table["selected"]
    return table[keep].reset_index(drop=True)
