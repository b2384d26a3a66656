"""One failing procedure test opened (issue 26, item 5): the conversation up to the test, what was
expected and what the target did side by side, and the policy passages the procedure's steps cite.
Where each procedure comes from is `generators.procedure.origins`."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from evalcore.generators.procedure.origins import generated_procedures, procedure_sources
from evalcore.items.current import read_items
from evalcore.models import Test, TurnRole
from evalcore.models.wording import words
from evalcore.reports.procedure_tables import RunScores, describe_action, why_failed
from evalcore.store import Store


@dataclass(frozen=True)
class Passage:
    """A policy passage one step of a procedure cites."""

    step: int  # 1-based step number
    action: str  # the step's tool, or "message"
    source: str  # the passage as the procedure cites it (file: words)
    about_expected: bool  # the step calls the tool the test expected


@dataclass(frozen=True)
class FailedTest:
    """A failing test with what a lead needs to judge it."""

    test_id: str
    context: list[tuple[str, str]]  # (who, what) per turn before the expected one
    expected: str
    got: str
    why: str
    procedure: str | None  # the procedure the test's conversation walks, if known
    intent: str | None  # what that procedure is for, in words (shown instead of its name)
    source: str | None  # FROM_PROJECT, FROM_POLICY or GENERATED
    passages: list[Passage] = field(default_factory=list)


def test_intents(store: Store, project_id: str, tests: Mapping[str, Test]) -> dict[str, str]:
    """Test id -> what its procedure is for, in words (the procedure's intent, else its name): what a
    procedure test exercises where a doc-QA turn has its spec. Tests whose conversation names no procedure
    are left out. One read of the tests' conversations."""
    ids = sorted({t.conversation_id for t in tests.values() if t.conversation_id})
    conversations = read_items(store, ids)
    runs = {(c.content.get("provenance") or {}).get("run_id") for c in conversations.values()} - {None}
    # As `failed_test` finds a procedure: a generation's own first, then the project's files.
    known = {p.name: p for p in store.procedures(project_id)} | generated_procedures(store, sorted(runs))
    out = {}
    for test_id, test in tests.items():
        conversation = conversations.get(test.conversation_id or "")
        name = conversation.content.get("metadata", {}).get("procedure") if conversation else None
        if name:
            procedure = known.get(name)
            out[test_id] = (procedure.intent if procedure and procedure.intent else "") or words(name)
    return out


def _said(role: TurnRole, content: str, tool: str | None, arguments: Mapping | None) -> tuple[str, str]:
    who = {
        TurnRole.user: "customer",
        TurnRole.assistant: "agent",
        TurnRole.tool_call: "agent calls a tool",
        TurnRole.tool_result: "tool answers",
    }[role]
    if role == TurnRole.tool_call:
        shown = ", ".join(f"{k}={v!r}" for k, v in (arguments or {}).items())
        return who, f"{tool}({shown})"
    return who, content


def failed_test(
    store: Store, project_id: str, scored: RunScores, test_id: str, generated: Collection[str] = ()
) -> FailedTest:
    """The failing test `test_id` of a scored run opened (module docstring); `generated` names the APIs
    a generation made up, marked in the actions."""
    score = next(s for s in scored.scores if s.test_id == test_id)
    test = scored.tests[test_id]
    context = [_said(t.role, t.content, t.tool_name, t.arguments) for t in test.context]
    procedure = source = intent = None
    passages: list[Passage] = []
    conversation = read_items(store, [test.conversation_id]).get(test.conversation_id or "")
    if conversation is not None:
        procedure = conversation.content.get("metadata", {}).get("procedure")
        generation = (conversation.content.get("provenance") or {}).get("run_id")
        runs = [generation] if generation else []
        source = procedure_sources(store, project_id, runs).get(procedure or "")
        steps = generated_procedures(store, runs).get(procedure or "")
        known = steps or next((p for p in store.procedures(project_id) if p.name == procedure), None)
        intent = known.intent if known else None
        wanted = score.expected.tool_name if score.expected.kind == "api" else None
        for k, step in enumerate(steps.steps if steps else [], 1):
            passages += [
                Passage(k, step.api or "message", cited, bool(wanted) and step.api == wanted)
                for cited in step.sources
            ]
    return FailedTest(
        test_id=test_id,
        context=context,
        expected=describe_action(score.expected, generated),
        got=describe_action(score.predicted, generated),
        why=scored.crashes.get(test_id) or why_failed(score, scored.threshold),
        procedure=procedure,
        intent=intent,
        source=source,
        passages=passages,
    )
