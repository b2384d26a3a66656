"""Inspect AI samples and eval logs out.

Samples (JSONL, as `json_dataset` reads them): `input` the chat messages up to the last user message
(Inspect's message shape: tool calls as `function` and `arguments`), `target` the expected reply (an
expected tool call: the tool's name), `id`, and our fields in `metadata.evalcore`.

A run's results are an eval log (`.json`, as `read_eval_log` reads it and Inspect's log viewer shows
it): one sample per judged item with the target's replies as its output and one score per item, `C`
when every judged turn passed, `I` when one failed, and no score for an item whose turns were all
unscored (a judge's failure is not the target's); accuracy over the scored items.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from evalcore.models import Run, Turn, TurnRole
from evalcore.reports.formats.common import KIND, OURS, SPEC_KIND, TEST_KIND, Case, split_last
from evalcore.runs.records import JudgedTurn

NAME = "inspect"
SUFFIX = "jsonl"
LAYOUT = "jsonl"
KINDS = (SPEC_KIND, KIND, TEST_KIND)
SCORER = "evalcore"


def _message(turn: Turn) -> dict[str, Any]:
    if turn.role == TurnRole.tool_call:
        call = {
            "id": f"call_{turn.index}",
            "function": turn.tool_name or "",
            "arguments": turn.arguments or {},
            "type": "function",
        }
        return {"role": "assistant", "content": "", "tool_calls": [call]}
    if turn.role == TurnRole.tool_result:
        return {
            "role": "tool",
            "content": turn.content,
            "tool_call_id": f"call_{turn.index - 1}",
            "function": turn.tool_name,
        }
    return {"role": str(turn.role), "content": turn.content}


def sample(case: Case) -> tuple[list[dict[str, Any]], str]:
    """A case's Inspect input messages and target."""
    history, text, expected = split_last(case)
    inputs = [_message(t) for t in history] + [{"role": "user", "content": text}]
    target = ""
    if expected is not None:
        target = expected.tool_name or "" if expected.role == TurnRole.tool_call else expected.content
    return inputs, target


def record(case: Case) -> dict[str, Any]:
    """One Inspect sample."""
    inputs, target = sample(case)
    return {"id": case.id, "input": inputs, "target": target, "metadata": {OURS: case.ours}}


def _stamp(when: datetime | None) -> str:
    return (when or datetime.now(UTC)).astimezone(UTC).isoformat()


def eval_log(run: Run, project_id: str, cases: dict[str, Case], judged: list[JudgedTurn]) -> dict[str, Any]:
    """An Inspect eval log of a run: its items' cases and its judged turns."""
    by_item: dict[str, list[JudgedTurn]] = defaultdict(list)
    for turn in judged:
        by_item[turn.test_id or turn.conversation_id or ""].append(turn)
    samples, scored, passed = [], 0, 0
    for item_id, turns in by_item.items():
        case = cases.get(item_id)
        inputs, target = sample(case) if case else ([{"role": "user", "content": ""}], "")
        scores = [t.score for t in turns if t.score is not None]
        entry: dict[str, Any] = {
            "id": item_id,
            "epoch": 1,
            "input": inputs,
            "target": target,
            "messages": inputs + [{"role": "assistant", "content": t.reply} for t in turns],
            "output": {
                "model": run.target or "target",
                "choices": [
                    {"message": {"role": "assistant", "content": turns[-1].reply}, "stop_reason": "stop"}
                ],
            },
            "metadata": {
                OURS: {
                    **(case.ours if case else {}),
                    "judgments": [
                        t.model_dump(
                            mode="json", include={"turn_index", "score", "error_type", "rationale", "judge"}
                        )
                        for t in turns
                    ],
                }
            },
        }
        if scores:
            ok = all(s >= 1 for s in scores)
            scored, passed = scored + 1, passed + ok
            failed = [t for t in turns if t.score is not None and t.score < 1]
            why = "; ".join(
                f"turn {t.turn_index}: {t.error_type or 'failed'} {t.rationale}".strip() for t in failed
            )
            entry["scores"] = {
                SCORER: {"value": "C" if ok else "I", "explanation": why or "every judged turn passed"}
            }
        samples.append(entry)
    created = _stamp(run.started_at)
    accuracy = passed / scored if scored else 0.0
    return {
        "version": 2,
        "status": "success" if run.status.value == "finished" else "cancelled",
        "eval": {
            "run_id": run.id,
            "created": created,
            "task": f"evalcore/{project_id}",
            "task_id": run.id,
            "task_version": 0,
            "dataset": {"name": project_id, "samples": len(samples)},
            "model": run.target or "target",
            "config": {},
            "task_args": {},
            "metadata": {
                OURS: {
                    "run": run.model_dump(
                        mode="json", include={"id", "kind", "target", "judge", "params", "code_version"}
                    )
                }
            },
        },
        "plan": {"name": "evalcore", "steps": [{"solver": "evalcore.run", "params": {}}], "config": {}},
        "results": {
            "total_samples": len(samples),
            "completed_samples": len(samples),
            "scores": [
                {
                    "name": SCORER,
                    "scorer": SCORER,
                    "scored_samples": scored,
                    "params": {},
                    "metrics": {"accuracy": {"name": "accuracy", "value": accuracy, "params": {}}},
                }
            ],
        },
        "stats": {"started_at": created, "completed_at": _stamp(run.finished_at), "model_usage": {}},
        "samples": samples,
    }
