"""Tables of a rubric scoring run (seed 004, Section 3.2; issue 20, item 7): per rubric and per area, the
estimated labels, and the drill-down to the conversations, exported like the other reports (CSV, JSONL,
Markdown, LaTeX) with what produced them: the run, the target, the judge, the rubric set's version, and
whether any of it is offline.

A rubric applies to a conversation when its score is above 0. Per rubric: how many scored conversations
it applies to (and their share) and its mean normalised score (score / the set's maximum, over all scored
conversations). Per area: the conversations where a POS rubric of the area applies, and where a NEG one
does. The run's units are read as committed (a run still going reports what it has).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.generators.tool_case.rubrics import RubricSet, load_rubric_set
from evalcore.models import Run
from evalcore.reports.failures import provenance
from evalcore.reports.table_export import export_table
from evalcore.runs.rubric_scoring import RUN_KIND
from evalcore.store import Store

TITLES = {
    "rubrics": "Rubrics: conversations each applies to",
    "areas": "Areas: conversations with a POS or a NEG rubric hit",
    "labels": "Labels the rubric set estimates",
}


@dataclass(frozen=True)
class RubricReport:
    """A scoring run read back: the set it used and each scored conversation's result."""

    run: Run
    rubrics: RubricSet
    version: int
    results: dict[str, dict[str, Any]]  # conversation id -> {"scores", "label", "sides"}
    failed: int
    about: dict[str, str] = field(default_factory=dict)  # provenance heading every export

    @property
    def scored(self) -> int:
        """How many conversations have a result."""
        return len(self.results)


def rubric_report(store: Store, run_id: str) -> RubricReport:
    """The scoring run's committed results, with the rubric set at the version the run started with."""
    run = store.run(run_id)
    if run.kind != RUN_KIND:
        raise EvalcoreError(f"'{run_id}' is not a rubric scoring run (kind {run.kind})")
    rubrics, version = load_rubric_set(store, run.params["rubric_set"], run.params["version"])
    units = store.finished_units(run_id)
    results = {k: u["result"] for k, u in units.items() if u["status"] == "done"}
    about = {
        **provenance([run]),
        "rubric_set": f"{run.params['rubric_set']} v{version} ({rubrics.method}, by {rubrics.producer})",
    }
    return RubricReport(
        run, rubrics, version, results, sum(u["status"] == "failed" for u in units.values()), about
    )


def _applies(report: RubricReport, rubric_id: str) -> list[str]:
    return sorted(k for k, v in report.results.items() if v["scores"].get(rubric_id, 0) > 0)


def rubric_table(report: RubricReport) -> pd.DataFrame:
    """One row per rubric: area, polarity, weight, how many conversations it applies to and their share,
    its mean normalised score, and its text."""
    n = report.scored
    rows = []
    for r in report.rubrics.rubrics:
        applies = len(_applies(report, r.id))
        total = sum(v["scores"].get(r.id, 0) for v in report.results.values()) / report.rubrics.max_score
        rows.append(
            {
                "rubric": r.id,
                "area": r.area,
                "polarity": r.polarity,
                "weight": r.weight,
                "make_or_break": r.make_or_break,
                "applies": applies,
                "share": applies / n if n else None,
                "mean_score": total / n if n else None,
                "text": r.text,
            }
        )
    return pd.DataFrame(rows)


def area_table(report: RubricReport) -> pd.DataFrame:
    """One row per area: its rubrics, and the conversations with a POS or a NEG rubric of it applying."""
    n = report.scored
    rows = []
    for area in report.rubrics.areas:
        row: dict[str, Any] = {"area": area.name}
        for polarity in ("POS", "NEG"):
            ids = [r.id for r in report.rubrics.rubrics if r.area == area.name and r.polarity == polarity]
            hit = sum(any(v["scores"].get(i, 0) > 0 for i in ids) for v in report.results.values())
            side = polarity.lower()
            row |= {f"{side}_rubrics": len(ids), f"with_{side}": hit, f"share_{side}": hit / n if n else None}
        rows.append(row)
    return pd.DataFrame(rows)


def label_table(report: RubricReport) -> pd.DataFrame:
    """How many scored conversations the set labels POS and NEG."""
    n = report.scored
    rows = []
    for label in ("POS", "NEG"):
        count = sum(v["label"] == label for v in report.results.values())
        rows.append({"label": label, "conversations": count, "share": count / n if n else None})
    return pd.DataFrame(rows)


def drill_down(report: RubricReport, *, rubric: str | None = None, area: str | None = None) -> pd.DataFrame:
    """The conversations a rubric applies to (or, for an area, any of its rubrics), with that score, the
    estimated label and the two sides compared; an unknown rubric or area is refused by name."""
    rubric_ids = [r.id for r in report.rubrics.rubrics]
    if rubric is not None and rubric not in rubric_ids:
        raise EvalcoreError(f"no rubric '{rubric}' in the run's set ({', '.join(rubric_ids)})")
    areas = [a.name for a in report.rubrics.areas]
    if area is not None and area not in areas:
        raise EvalcoreError(f"no area '{area}' in the run's set ({', '.join(areas)})")
    chosen = [rubric] if rubric else [r.id for r in report.rubrics.rubrics if area is None or r.area == area]
    rows = []
    for conversation, result in sorted(report.results.items()):
        hits = {i: result["scores"].get(i, 0) for i in chosen if result["scores"].get(i, 0) > 0}
        if hits:
            rows.append(
                {
                    "conversation": conversation,
                    "rubrics": ", ".join(f"{i} ({s})" for i, s in hits.items()),
                    "label": result["label"],
                    "pos_side": result["sides"]["POS"],
                    "neg_side": result["sides"]["NEG"],
                }
            )
    return pd.DataFrame(rows, columns=["conversation", "rubrics", "label", "pos_side", "neg_side"])


def rubric_tables(report: RubricReport) -> dict[str, pd.DataFrame]:
    """The run's three tables by name: rubrics, areas, labels."""
    return {"rubrics": rubric_table(report), "areas": area_table(report), "labels": label_table(report)}


def export_rubric_tables(
    report: RubricReport, fmt: str, tables: Mapping[str, pd.DataFrame] | None = None
) -> dict[str, str]:
    """Each table (default all three) as text in `fmt` ('csv', 'jsonl', 'md', 'latex'), headed by what
    produced it (`RubricReport.about`); Markdown and LaTeX captioned and labelled."""
    return {
        name: export_table(
            df,
            fmt,
            caption=TITLES.get(name, name),
            label=f"tab:rubric-{name}",
            provenance=report.about,
        )
        if fmt in ("md", "markdown", "latex", "tex")
        else export_table(df, fmt, provenance=report.about)
        for name, df in (tables or rubric_tables(report)).items()
    }
