"""Conversations and tests as JSONL: one item per line, with its turns, grounding and current tier.

Export writes each item's current content, its tier derived now (annotations and the judge's verdict,
evalcore.review.tiers) and its version (`_version`, `_saved_by`: informative, ignored on import). Import
validates the whole file first and reports every bad line with its file and line number; a file with
any problem changes nothing, and a good one is written in one transaction. Items keep their ids; an id
already in the store is a problem (import never overwrites: edits are revisions, made elsewhere).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalcore.errors import EvalcoreError, NotFoundError, Problem, ValidationFailed
from evalcore.items.store_ops import KIND, TEST_KIND, add_conversation, add_test
from evalcore.models import Conversation, Test
from evalcore.review.tiers import derive_tier
from evalcore.store import Store

PAGE = 500
KINDS = {KIND: Conversation, TEST_KIND: Test}
# Column sizes of the store (evalcore/store/schema.py), checked up front so a long value is a line problem.
LIMITS = {"id": 64, "spec_id": 64, "generator": 32, "conversation_id": 64}
QUERY_TYPE_LIMIT = 32


def _tier(store: Store, item_id: str, body: dict[str, Any]) -> str:
    judge = (body.get("metadata") or {}).get("judge_passed")
    if judge is None and body.get("tier") == "silver":
        judge = True  # tests and imported items carry their tier, not a judge verdict
    annotations = store.annotations(item_id)
    if not annotations and judge is None:
        return body.get("tier", "unreviewed")
    return derive_tier(annotations, judge).tier.value


def export_jsonl(
    store: Store,
    project_id: str,
    kind: str = KIND,
    *,
    generator: str | None = None,
    spec_id: str | None = None,
) -> Iterator[str]:
    """One JSON line per current item of `kind` ('conversation' or 'test'), oldest first, paged."""
    if kind not in KINDS:
        raise EvalcoreError(f"cannot export '{kind}' as JSONL: use 'conversation' or 'test'")
    store.project(project_id)
    offset = 0
    while True:
        page = store.list_current(
            project_id, kind, generator=generator, spec_id=spec_id, limit=PAGE, offset=offset
        )
        for rev in page:
            body = dict(rev.body or {})
            body["tier"] = _tier(store, rev.item_id, body)
            body["_version"], body["_saved_by"] = rev.version, rev.author
            yield json.dumps(body, ensure_ascii=False, default=str)
        if len(page) < PAGE:
            return
        offset += PAGE


def _kind_of(data: dict[str, Any]) -> str | None:
    if "turns" in data and "expected" not in data:
        return KIND
    if "expected" in data:
        return TEST_KIND
    return None


def _field_problems(data: dict[str, Any], shown: str, line: int) -> list[Problem]:
    problems = []
    for name, limit in LIMITS.items():
        value = data.get(name)
        if isinstance(value, str) and len(value) > limit:
            problems.append(Problem(shown, f"longer than {limit} characters", line, name))
    turns = data.get("turns") if isinstance(data.get("turns"), list) else []
    indexes = [t.get("index") for t in turns if isinstance(t, dict)]
    if indexes and indexes != list(range(len(indexes))):
        problems.append(Problem(shown, "turn indexes must be 0, 1, 2, ... in order", line, "turns"))
    for i, turn in enumerate(turns):
        qtype = turn.get("query_type") if isinstance(turn, dict) else None
        if isinstance(qtype, str) and len(qtype) > QUERY_TYPE_LIMIT:
            problems.append(
                Problem(shown, f"longer than {QUERY_TYPE_LIMIT} characters", line, f"turns.{i}.query_type")
            )
    return problems


def parse_jsonl(text: str, shown: str, kind: str | None = None) -> list[Conversation | Test]:
    """Every item of a JSONL text; ValidationFailed lists every bad line (file, line, field, why)."""
    problems: list[Problem] = []
    items: list[Conversation | Test] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(shown, f"not valid JSON: {exc.msg} (column {exc.colno})", number))
            continue
        if not isinstance(data, dict):
            problems.append(Problem(shown, "each line must be a JSON object", number))
            continue
        data = {k: v for k, v in data.items() if not k.startswith("_")}  # export annotations
        found = _kind_of(data)
        if found is None or (kind is not None and found != kind):
            want = kind or "conversation (with 'turns') or test (with 'expected')"
            problems.append(Problem(shown, f"not a {want}", number))
            continue
        line_problems = _field_problems(data, shown, number)
        try:
            item = KINDS[found].model_validate(data)
        except ValidationError as exc:
            for error in exc.errors():
                field = ".".join(str(p) for p in error["loc"]) or None
                message = (
                    "unknown field (check its spelling)"
                    if error["type"] == "extra_forbidden"
                    else error["msg"]
                )
                line_problems.append(Problem(shown, message, number, field))
            problems.extend(line_problems)
            continue
        if item.id in seen:
            line_problems.append(
                Problem(shown, f"id '{item.id}' already used on line {seen[item.id]}", number, "id")
            )
        seen.setdefault(item.id, number)
        problems.extend(line_problems)
        items.append(item)
    if problems:
        raise ValidationFailed(problems, f"JSONL file {shown}")
    return items


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote."""

    conversations: list[str]
    tests: list[str]


def import_jsonl(store: Store, project_id: str, path: Path | str, kind: str | None = None) -> ImportResult:
    """Validate a JSONL file whole, then add every item in one transaction; a bad file changes nothing."""
    store.project(project_id)
    path = Path(path)
    shown = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            [Problem(shown, f"not UTF-8 text (offset {exc.start})")], "JSONL file"
        ) from None
    items = parse_jsonl(text, shown, kind)
    lines = [n for n, raw in enumerate(text.splitlines(), start=1) if raw.strip()]
    clashes = []
    for number, item in zip(lines, items, strict=True):
        try:
            store.current(item.id)
        except NotFoundError:
            continue
        clashes.append(Problem(shown, f"an item with id '{item.id}' is already in the store", number, "id"))
    if clashes:
        raise ValidationFailed(clashes, f"JSONL file {shown}")
    conversations, tests = [], []
    with store.write() as conn:
        for item in items:
            if isinstance(item, Conversation):
                conversations.append(add_conversation(store, project_id, item, conn=conn))
            else:
                tests.append(add_test(store, project_id, item, conn=conn))
    return ImportResult(conversations, tests)
