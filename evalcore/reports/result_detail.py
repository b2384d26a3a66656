"""An opened row of the results view (issue 27, item 2): the item with its failing turn or assertion
marked, expected and actual side by side, the judge's or checker's reason, the documents and tool calls,
and the item's review history. Everything is plain text for the page to show as text, never as HTML."""

from __future__ import annotations

from pydantic import BaseModel, Field

from evalcore.generators.scenario.run import load_scenario_results
from evalcore.generators.simulation.records import RUN_KIND as SIMULATION_KIND
from evalcore.items.current import read_items
from evalcore.models import Annotation, Turn, TurnRole
from evalcore.models.items import Action, expected_action
from evalcore.reports.procedure_tables import describe_action
from evalcore.reports.results import ResultRow
from evalcore.runs.procedure_tests import RUN_KIND as PROCEDURE_KIND
from evalcore.runs.records import RUN_KIND
from evalcore.runs.rubric_scoring import RUN_KIND as RUBRIC_KIND
from evalcore.runs.store_ops import judgment_bodies
from evalcore.store import Store


class TranscriptLine(BaseModel):
    """One turn of the opened item."""

    index: int | None = Field(description="The turn's position (None: the expected turn of a test).")
    role: str = Field(description="user, assistant, tool_call or tool_result, or 'expected'.")
    text: str = Field(description="What the turn says (a tool call: name and arguments).")
    highlighted: bool = Field(default=False, description="The turn the row judges.")


class CheckLine(BaseModel):
    """One assertion or criterion and its outcome."""

    name: str = Field(description="The assertion's kind or the criterion.")
    passed: bool | None = Field(description="True, False, or None when it could not be scored.")
    message: str = Field(default="", description="Why it passed or failed.")


class ResultDetail(BaseModel):
    """What the results view shows of one opened row."""

    row: ResultRow = Field(description="The row opened.")
    question: str = Field(default="", description="What the target was asked.")
    expected: str = Field(default="", description="What was expected.")
    actual: str = Field(default="", description="What the target did.")
    reason: str = Field(default="", description="The judge's or checker's reason, whole.")
    transcript: list[TranscriptLine] = Field(default_factory=list, description="The item's turns.")
    checks: list[CheckLine] = Field(default_factory=list, description="Assertions and criteria.")
    documents: list[str] = Field(default_factory=list, description="Documents grounding the turn.")
    tool_calls: list[str] = Field(default_factory=list, description="Tool calls of the item, one line each.")
    reviews: list[Annotation] = Field(default_factory=list, description="The item's review history.")


def _line(turn: Turn, highlighted: bool = False, role: str | None = None) -> TranscriptLine:
    text = turn.content
    if turn.role == TurnRole.tool_call:
        text = f"{turn.tool_name}({', '.join(f'{k}={v!r}' for k, v in (turn.arguments or {}).items())})"
    return TranscriptLine(index=turn.index, role=role or turn.role.value, text=text, highlighted=highlighted)


def _tool_calls(turns: list[Turn]) -> list[str]:
    return [_line(x).text for x in turns if x.role == TurnRole.tool_call]


def _item_parts(store: Store, item_id: str, turn_index: int | None) -> tuple[list, list, list[Annotation]]:
    """(transcript, tool calls, review history) of a conversation or test, the judged turn marked."""
    item = read_items(store, [item_id]).get(item_id)
    if item is None:
        return [], [], []
    if item.kind == "test":
        test = item.test()
        turns = [*test.context]
        lines = [_line(x) for x in turns] + [_line(test.expected, True, role="expected")]
        return lines, _tool_calls([*turns, test.expected]), item.annotations
    turns = item.conversation().turns
    return [_line(x, x.index == turn_index) for x in turns], _tool_calls(turns), item.annotations


def result_detail(store: Store, row: ResultRow) -> ResultDetail:
    """The opened row (see the module docstring)."""
    if row.run_kind == RUN_KIND:
        return _judged_turn(store, row)
    if row.run_kind == PROCEDURE_KIND:
        return _procedure_test(store, row)
    if row.run_kind in (SIMULATION_KIND, RUBRIC_KIND):
        transcript, calls, reviews = _item_parts(store, row.item_id, row.turn_index)
        return ResultDetail(
            row=row, reason=row.reason, transcript=transcript, tool_calls=calls, reviews=reviews
        )
    return _scenario_repetition(store, row)


def _judged_turn(store: Store, row: ResultRow) -> ResultDetail:
    body = judgment_bodies(store, [int(row.ref)])[int(row.ref)]
    transcript, calls, reviews = _item_parts(store, row.item_id, row.turn_index)
    return ResultDetail(
        row=row,
        question=body.question,
        expected=body.expected,
        actual=body.crash or body.reply,
        reason=body.rationale or body.crash or "",
        transcript=transcript,
        checks=[
            CheckLine(
                name=str(a.get("kind", "assertion")),
                passed=a.get("passed"),
                message=str(a.get("message", "")),
            )
            for a in body.assertions
        ],
        documents=list(body.grounding),
        tool_calls=calls,
        reviews=reviews,
    )


def _procedure_test(store: Store, row: ResultRow) -> ResultDetail:
    unit = store.finished_units(row.run_id, [row.item_id]).get(row.item_id) or {}
    result = unit.get("result") or {}
    action = Action.model_validate(result["action"]) if result.get("action") else None
    transcript, calls, reviews = _item_parts(store, row.item_id, None)
    item = read_items(store, [row.item_id]).get(row.item_id)
    expected = describe_action(expected_action(item.test())) if item else ""
    return ResultDetail(
        row=row,
        question=next((x.text for x in reversed(transcript) if x.role == "user"), ""),
        expected=expected,
        actual=result.get("crash") or describe_action(action),
        reason=row.reason,
        transcript=transcript,
        tool_calls=calls,
        reviews=reviews,
    )


def _scenario_repetition(store: Store, row: ResultRow) -> ResultDetail:
    found = [r for r in load_scenario_results(store, row.run_id) if f"{r.scenario}#{r.repetition}" == row.ref]
    if not found:
        return ResultDetail(row=row, reason=row.reason)
    result = found[0]
    transcript, calls, _ = _item_parts(store, result.conversation_id, None)
    checks = [CheckLine(name=o.kind, passed=o.passed, message=o.message) for o in result.verdict.assertions]
    checks += [
        CheckLine(name=c.criterion, passed=c.passed, message=c.rationale) for c in result.verdict.criteria
    ]
    return ResultDetail(
        row=row,
        expected="; ".join(c.name for c in checks),
        actual="; ".join(c.message for c in checks if c.passed is False),
        reason=row.reason,
        transcript=transcript,
        checks=checks,
        tool_calls=calls,
    )
