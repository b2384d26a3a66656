"""Conversations and tests as JSONL: one item per line, with its turns, grounding and current tier.

Export is the one JSONL writer of items (`evalcore conversations export`, `evalcore export <kind>`, the
gold and silver sets of `evalcore annotate export`): each item as the read model has it now
(`evalcore.items.current`: corrections applied, tier under the project's policy) and its version
(`_version`, `_saved_by`: informative, ignored on import); a gold or silver set adds the review trail. Import
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

from evalcore.auth.audit import importing
from evalcore.auth.roles import Actor
from evalcore.errors import NotFoundError, Problem, ValidationFailed
from evalcore.inputs.limits import MAX_UNPACKED_MB_ENV, current_limits
from evalcore.inputs.sources import decode_text, json_lines, read_bounded
from evalcore.items.current import CurrentItem, iter_items
from evalcore.items.store_ops import KIND, TEST_KIND, add_conversation, add_test
from evalcore.items.tiers import ANNOTATOR, LEAD, turn_verdicts
from evalcore.models import AnnotationLabel, Conversation, Test, TurnRole
from evalcore.specs.store_ops import KIND as SPEC_KIND
from evalcore.store import Store

KINDS = {KIND: Conversation, TEST_KIND: Test}
# Column sizes of the store (evalcore/store/schema.py), checked up front so a long value is a line problem.
LIMITS = {"id": 64, "spec_id": 64, "generator": 32, "conversation_id": 64}
QUERY_TYPE_LIMIT = 32


def item_record(item: CurrentItem) -> dict[str, Any]:
    """One line of an item export: the current content (corrections applied, tier under the project's
    policy) and its version (`_version`, `_saved_by`: informative, ignored on import)."""
    return {**item.content, "_version": item.version, "_saved_by": item.saved_by}


def review_record(item: CurrentItem) -> dict[str, Any]:
    """One line of a gold or silver set: ``{<kind>: <content>, "review": {...}, "judge": {...}}``.

    ``review`` holds the tier, ``accepted_by``/``rejected_by``/``adjudicated_by``, the reasons, each turn's
    verdicts by author, and the full annotation trail (who, role, when, label, reason, note, correction);
    ``judge`` holds ``passed``, ``score``, the project's calibrated ``threshold`` (or null) and whether the
    judge ``passes`` the item under the policy.
    """
    annotators = [r for r in item.reviewers if r.role == ANNOTATOR]
    return {
        item.kind: item.content,
        "review": {
            "tier": item.tier,
            "version": item.version,
            "accepted_by": [r.name for r in annotators if r.label == AnnotationLabel.accept],
            "rejected_by": [r.name for r in annotators if r.label == AnnotationLabel.reject],
            "adjudicated_by": next((r.name for r in item.reviewers if r.role == LEAD), None),
            "reasons": item.reasons,
            "turn_verdicts": {
                str(k): {a: str(v) for a, v in d.items()} for k, d in turn_verdicts(item.annotations).items()
            },
            "annotations": [
                a.model_dump(mode="json", exclude={"item_kind", "item_id"}) for a in item.annotations
            ],
        },
        "judge": item.judge.model_dump(mode="json"),
    }


def export_jsonl(
    store: Store,
    project_id: str,
    kind: str = KIND,
    *,
    generator: str | None = None,
    spec_id: str | None = None,
    tier: str | None = None,
    review: bool = False,
) -> Iterator[str]:
    """The one JSONL exporter: one line per current item of `kind` (`item_record`, or with `review` the
    review trail of `review_record`), oldest first, a page at a time; optionally of one generator, spec
    or tier. Items are read through `evalcore.items.current`, so every export applies the same
    corrections and tiers as the pages."""
    for item in iter_items(store, project_id, kind, generator=generator, spec_id=spec_id, tier=tier):
        record = review_record(item) if review else item_record(item)
        yield json.dumps(record, ensure_ascii=False, default=str)


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
    # fields named as for validation errors below: turns.0.content
    for number, data in json_lines(text, shown, problems, lambda loc: ".".join(map(str, loc))):
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


def _test_problems(
    store: Store, project_id: str, shown: str, tests: list[tuple[int, Test]], in_file: set[str]
) -> list[Problem]:
    """What makes a test unplayable though well formed: no turns before its expected one, an expected
    call of a tool the project lacks, a conversation that is neither in the file nor in the project."""
    tools = {tool.name for tool in store.tools(project_id)}
    known = set(in_file)
    known.update(rev.item_id for rev in store.list_current(project_id, KIND))
    problems = []
    for number, test in tests:
        if not test.context:
            why = "no turn before the expected one: a test needs its context"
            problems.append(Problem(shown, why, number, "context"))
        expected = test.expected
        if expected.role == TurnRole.tool_call and expected.tool_name not in tools:
            problems.append(Problem(shown, f"the project has no tool '{expected.tool_name}'", number,
                                    "expected.tool_name"))  # fmt: skip
        if test.conversation_id is not None and test.conversation_id not in known:
            problems.append(Problem(shown, f"no conversation '{test.conversation_id}' in this file or in "
                                    f"project {project_id}", number, "conversation_id"))  # fmt: skip
    return problems


def import_jsonl(
    store: Store, project_id: str, path: Path | str, kind: str | None = None, *, actor: Actor | None = None
) -> ImportResult:
    """Validate a JSONL file whole, then add every item in one transaction; a bad file changes nothing.
    The actor must hold the import permission."""
    store.project(project_id)
    path = Path(path)
    with importing(store, actor, "import.jsonl", project_id=project_id, target=path.name):
        return _import_jsonl(store, project_id, path, kind)


def _import_jsonl(store: Store, project_id: str, path: Path, kind: str | None) -> ImportResult:
    shown = path.name
    problems: list[Problem] = []
    limit = current_limits().max_unpacked_bytes  # a JSONL file is a whole import, not one document
    raw = read_bounded(path, shown, problems, limit, MAX_UNPACKED_MB_ENV)
    text = decode_text(raw, shown, problems) if raw is not None else None
    if text is None:
        raise ValidationFailed(problems, f"JSONL file {shown}")
    items = parse_jsonl(text, shown, kind)
    lines = [n for n, raw in enumerate(text.splitlines(), start=1) if raw.strip()]
    return add_checked(store, project_id, shown, list(zip(lines, items, strict=True)), f"JSONL file {shown}")


def add_checked(
    store: Store, project_id: str, shown: str, numbered: list[tuple[int, Conversation | Test]], what: str
) -> ImportResult:
    """Check parsed items (each with its line) against the project (its specs, its tools, the ids already
    stored), then add them all in one transaction; any problem raises ValidationFailed and changes
    nothing. Every importer of items ends here (JSONL, and the other tools' formats)."""
    specs = {rev.item_id for rev in store.list_current(project_id, SPEC_KIND)}
    clashes = []
    tests_seen = [(n, i) for n, i in numbered if isinstance(i, Test)]
    if tests_seen:
        clashes += _test_problems(store, project_id, shown, tests_seen, {i.id for _, i in numbered})
    for number, item in numbered:
        if item.spec_id is not None and item.spec_id not in specs:
            clashes.append(
                Problem(shown, f"no spec '{item.spec_id}' in project {project_id}", number, "spec_id")
            )
        try:
            store.current(item.id)
        except NotFoundError:
            continue
        clashes.append(Problem(shown, f"an item with id '{item.id}' is already in the store", number, "id"))
    if clashes:
        raise ValidationFailed(clashes, what)
    conversations, tests = [], []
    with store.write() as conn:
        for _, item in numbered:
            if isinstance(item, Conversation):
                conversations.append(add_conversation(store, project_id, item, conn=conn))
            else:
                tests.append(add_test(store, project_id, item, conn=conn))
    return ImportResult(conversations, tests)
