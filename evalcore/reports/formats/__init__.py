"""Other tools' formats out: one module per format, each writing a `Case` (a spec, conversation or test)
as one record of that tool's file; Inspect writes a run's results as an eval log too.

The registry (`WRITERS`) says which item kinds each format has a place for, and how its records make a
file (`jsonl`: one per line; `json`: a list; `yaml`: a list).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from evalcore.errors import UsageError
from evalcore.generators.simulation.personas import list_personas
from evalcore.items.current import read_items
from evalcore.items.store_ops import TEST_KIND
from evalcore.reports.formats import (
    deepeval,
    hf,
    inspect,
    langfuse,
    langsmith,
    openai_evals,
    promptfoo,
    ragas,
    tau2,
)
from evalcore.reports.formats.common import Case, case_of, cases
from evalcore.runs.store_ops import judgment_bodies, judgment_rows
from evalcore.store import Store

RESULTS = "results"


@dataclass(frozen=True)
class Writer:
    """One format: its name, its file suffix and layout, the kinds it holds and its record of a case."""

    name: str
    suffix: str
    layout: str
    kinds: tuple[str, ...]
    record: Callable[[Case], dict[str, Any]]


WRITERS: dict[str, Writer] = {
    m.NAME: Writer(m.NAME, m.SUFFIX, m.LAYOUT, m.KINDS, m.record)
    for m in (deepeval, ragas, promptfoo, tau2, inspect, langfuse, langsmith, openai_evals, hf)
}


def check_export(fmt: str, kind: str) -> Writer:
    """The writer of a format, or a usage error naming the formats and the kinds it holds."""
    if fmt not in WRITERS:
        raise UsageError(f"cannot export format '{fmt}': one of {', '.join(WRITERS)}")
    writer = WRITERS[fmt]
    if kind == RESULTS and fmt != inspect.NAME:
        raise UsageError(f"a run's results export to Inspect's eval log (--format {inspect.NAME}) only")
    if kind != RESULTS and kind not in writer.kinds:
        held = ", ".join(writer.kinds) + (f", {RESULTS}" if fmt == inspect.NAME else "")
        raise UsageError(f"format '{fmt}' has no place for {kind}s: it holds {held}")
    return writer


class _PlainDumper(yaml.SafeDumper):
    """SafeDumper that writes a value met twice out again: our importers (and promptfoo's reader, which
    many users edit by hand) are better served by plain YAML than by anchors and aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def render(writer: Writer, records: list[dict[str, Any]]) -> Iterator[str]:
    """The lines of a file of records in the writer's layout."""
    if writer.layout == "jsonl":
        for record in records:
            yield json.dumps(record, ensure_ascii=False)
    elif writer.layout == "json":
        yield json.dumps(records, ensure_ascii=False, indent=2)
    else:
        text = yaml.dump(records, Dumper=_PlainDumper, allow_unicode=True, sort_keys=False, width=100)
        yield text.rstrip("\n")


def export_format(store: Store, project_id: str, fmt: str, kind: str) -> Iterator[str]:
    """The lines of a file in format `fmt` holding every current item of `kind` of a project."""
    writer = check_export(fmt, kind)
    store.project(project_id)
    if kind == promptfoo.PERSONA_KIND:  # personas have a place in promptfoo only (its simulated user)
        personas = list_personas(store, project_id)
        yield from render(writer, [promptfoo.persona_record(i, p) for i, p in personas.items()])
        return
    yield from render(writer, [writer.record(case) for case in cases(store, project_id, kind)])


def export_results(store: Store, run_id: str) -> Iterator[str]:
    """A run's results as an Inspect eval log (one JSON document): every judged item, its replies and
    its score, each item as it stands now (corrections applied)."""
    run = store.run(run_id)
    project_id = store.run_project(run_id)
    rows = judgment_rows(store, run_id)
    bodies = judgment_bodies(store, [row[0] for row in rows])
    judged = [bodies[row[0]] for row in rows]
    ids = sorted({t.test_id or t.conversation_id for t in judged if t.test_id or t.conversation_id})
    items = read_items(store, ids)
    found = {
        item_id: case_of(item.test() if item.kind == TEST_KIND else item.conversation())
        for item_id, item in items.items()
    }
    yield json.dumps(inspect.eval_log(run, project_id, found, judged), ensure_ascii=False, indent=2)
