"""Writing a project's records out: inputs as one JSON bundle, items of a kind as JSONL (through the one
item exporter, `evalcore.items.jsonl.export_jsonl`), and the atomic line writer every export uses."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from evalcore.items.jsonl import export_jsonl
from evalcore.store import Store


def inputs_bundle(store: Store, project_id: str) -> dict[str, Any]:
    """The project's inputs as one JSON-serialisable mapping."""
    card = store.system_card(project_id)
    return {
        "project": project_id,
        "system_card": card.model_dump(mode="json") if card else None,
        "documents": [d.model_dump(mode="json") for d in store.documents(project_id)],
        "tools": [t.model_dump(mode="json") for t in store.tools(project_id)],
        "procedures": [p.model_dump(mode="json") for p in store.procedures(project_id)],
    }


def write_lines(lines: Iterable[str], path: Path) -> int:
    """Write lines to `path` through a temporary file (a crash never leaves half a file); return the count."""
    tmp = path.with_name(path.name + ".partial")
    count = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")
            count += 1
    tmp.replace(path)
    return count


def export_lines(store: Store, project_id: str, what: str) -> Iterator[str]:
    """Lines of an export: JSONL of items of kind `what`, or one JSON document for `inputs`."""
    store.project(project_id)
    if what == "inputs":
        yield json.dumps(inputs_bundle(store, project_id), indent=2, ensure_ascii=False)
        return
    yield from export_jsonl(store, project_id, what)
