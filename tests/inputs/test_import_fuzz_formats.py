"""Fuzzing `evalcore import --format FMT FILE` for every other tool's format we read, as
`test_import_fuzz.py` does for our own files: valid files of each format, each broken by one seeded
mutation that is sure to make it invalid; every one must be refused with exit code 1, no traceback, one
line per problem naming the file (and its line, where the mutation knows it), and the store
byte-identical.

Records are written one per line (JSON is valid YAML), so a mutation of record i knows its line: i + 1
in JSONL and in a YAML list (`- {...}`), i + 2 in a JSON list (after its `[`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from import_cases import sample_store
from test_import_fuzz import TEXT_OPS, Broken, Case, _check

SEED = 20261126
PER_FORMAT = 30

PROVENANCE = {"producer": "gpt-4o-mini", "provider": "openai"}


def _ours(n: int, kind: str = "test") -> dict[str, Any]:
    return {"kind": kind, "id": f"fz-{n}", "tier": "silver", "provenance": PROVENANCE}


@dataclass
class Format:
    """A format's valid records, how a file frames them, and where its fields are."""

    name: str
    suffix: str
    layout: str  # jsonl, json (a list) or yaml (a list)
    records: list[dict[str, Any]]
    required: str  # a field every record needs
    ours: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]  # put our fields into a record


def _in_metadata(key: str) -> Callable[[dict, dict], dict]:
    return lambda record, ours: {**record, key: {**(record.get(key) or {}), "evalcore": ours}}


def _top(record: dict, ours: dict) -> dict:
    return {**record, "evalcore": ours}


def _tau2_notes(record: dict, ours: dict) -> dict:
    return {**record, "description": {"notes": json.dumps({"evalcore": ours})}}


FORMATS = [
    Format("deepeval", "json", "json", [
        {"input": "Can I rent an e-bike?", "expected_output": "Yes, from 25 EUR a day.", "name": "rent"},
        {"input": "Where is order 7?", "expected_tools": [{"name": "lookup_order", "input_parameters": {}}]},
        {"scenario": "Returns",
         "turns": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]},
        {"input": "Opening hours?", "expected_output": "9 to 6",
         "additional_metadata": {"evalcore": _ours(1)}},
    ], "input", _in_metadata("additional_metadata")),
    Format("ragas", "jsonl", "jsonl", [
        {"user_input": "What does a repair cost?", "reference": "From 40 EUR.", "synthesizer_name": "s"},
        {"user_input": [{"content": "Is order 9 shipped?", "type": "human"}], "reference": "Yes.",
         "synthesizer_name": "m"},
        {"user_input": "Hours?", "reference": "9 to 6", "synthesizer_name": "s", "evalcore": _ours(2)},
    ], "user_input", _top),
    Format("promptfoo", "yaml", "yaml", [
        {"description": "window", "vars": {"input": "Return window?"},
         "assert": [{"type": "icontains", "value": "14"}]},
        {"vars": {"question": "Rent?"}, "assert": [{"type": "llm-rubric", "value": "says yes"}]},
        {"vars": {"input": "Hours?"}, "metadata": {"evalcore": _ours(3)}},
    ], "vars", _in_metadata("metadata")),
    Format("tau2", "json", "json", [
        {"id": "1", "user_scenario": {"instructions": {"domain": "retail", "reason_for_call": "Order 3?",
                                                       "task_instructions": "ask"}},
         "evaluation_criteria": {"communicate_info": ["shipped"]}},
        {"id": "2", "user_scenario": {"instructions": "Ask for the opening hours"}},
    ], "user_scenario", _tau2_notes),
    Format("langfuse", "jsonl", "jsonl", [
        {"id": "a", "input": {"question": "Hours?"}, "expectedOutput": "9 to 6"},
        {"input": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]},
        {"input": "Rent?", "expectedOutput": {"output": "Yes"}, "metadata": {"evalcore": _ours(4)}},
    ], "input", _in_metadata("metadata")),
    Format("langsmith", "jsonl", "jsonl", [
        {"inputs": {"question": "Hours?"}, "outputs": {"answer": "9 to 6"}, "split": "test"},
        {"inputs": {"messages": [{"role": "user", "content": "Hi"}]}, "outputs": {"output": "Hello"}},
        {"inputs": {"input": "Rent?"}, "metadata": {"evalcore": _ours(5)}},
    ], "inputs", _in_metadata("metadata")),
    Format("openai-evals", "jsonl", "jsonl", [
        {"input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
         "ideal": "Hello"},
        {"input": "Hours?", "ideal": ["9 to 6", "9-6"]},
        {"input": "Rent?", "ideal": "Yes", "evalcore": _ours(6)},
    ], "input", _top),
    Format("inspect", "jsonl", "jsonl", [
        {"id": 1, "input": "Hours?", "target": "9 to 6"},
        {"input": [{"role": "user", "content": "Hi"}], "target": ["Hello", "Hi"]},
        {"input": "Rent?", "target": "Yes", "metadata": {"evalcore": _ours(7)}},
    ], "input", _in_metadata("metadata")),
]  # fmt: skip


def _frame(fmt: Format, lines: list[str]) -> str:
    if fmt.layout == "json":
        return "[\n" + ",\n".join(lines) + "\n]\n"
    if fmt.layout == "yaml":
        return "".join(f"- {line}\n" for line in lines)
    return "".join(line + "\n" for line in lines)


def _line(fmt: Format, i: int) -> int:
    return i + 2 if fmt.layout == "json" else i + 1


# A mutation of record i: (its new text, or None to drop it; a word of the problem; whether the
# problem's line is the record's own).
RecordOp = Callable[[random.Random, Format, dict[str, Any]], tuple[str, str, bool]]


def _required(fmt: Format, record: dict) -> str:
    """The field this record needs (a DeepEval conversational golden needs its scenario, not an input)."""
    return "scenario" if "scenario" in record else fmt.required


def drop_required(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    kept = {k: v for k, v in record.items() if k != _required(fmt, record)}
    return json.dumps(kept), "", True


def wrong_type(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    return json.dumps({**record, _required(fmt, record): rng.choice([5, 2.5, True])}), "", True


def bad_ours(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    broken = rng.choice(
        [{"kind": "robot", "id": "x"}, {"kind": "test"}, {"kind": "test", "id": "x", "tier": "tin"}]
    )
    return json.dumps(fmt.ours(record, broken)), "", True


def long_ours(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    field = rng.choice(["id", "spec_id", "generator"])
    ours = {**_ours(99), field: "x" * rng.randrange(65, 300)}
    return json.dumps(fmt.ours(record, ours)), "too long", True


def nul_in_ours(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    """A NUL written as an escape inside our fields (for tau2, inside the JSON text of its notes)."""
    return json.dumps(fmt.ours(record, {**_ours(98), "id": "a\x00b"})), "NUL", fmt.layout != "yaml"


def not_a_record(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    return json.dumps(rng.choice([5, "text", [1, 2], None])), "mapping", True


def duplicate_key(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    key = next(iter(record))
    return '{"' + key + '": 1, ' + json.dumps(record)[1:], "given twice", True


def unstorable(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    text = json.dumps(record)
    escape, says = rng.choice([("\\u0000", "NUL"), ("\\ud800", "surrogate")])
    at = text.index('": "') + 4
    return text[:at] + escape + text[at:], says, fmt.layout != "yaml"  # YAML reads no JSON escapes alike


def truncated(rng: random.Random, fmt: Format, record: dict) -> tuple[str, str, bool]:
    text = json.dumps(record)
    return text[: rng.randrange(1, len(text) - 1)], "", fmt.layout == "jsonl"


RECORD_OPS: list[RecordOp] = [
    drop_required,
    wrong_type,
    bad_ours,
    long_ours,
    nul_in_ours,
    not_a_record,
    duplicate_key,
    unstorable,
    truncated,
]


def _break(rng: random.Random, fmt: Format) -> tuple[bytes, int | None, str, str]:
    lines = [json.dumps(r) for r in fmt.records]
    raw = _frame(fmt, lines).encode()
    pick = rng.randrange(len(RECORD_OPS) + len(TEXT_OPS) + 1)
    if pick < len(TEXT_OPS):
        op = TEXT_OPS[pick]
        broken: Broken = op(rng, raw)
        return broken.data, broken.line, broken.says, op.__name__
    if pick == len(TEXT_OPS):  # the same record twice: one id, twice
        i = rng.randrange(len(lines))
        lines.insert(i + 1, lines[i])
        return _frame(fmt, lines).encode(), _line(fmt, i + 1), "already used", "same record twice"
    op = RECORD_OPS[pick - len(TEXT_OPS) - 1]
    i = rng.randrange(len(lines))
    lines[i], says, located = op(rng, fmt, fmt.records[i])
    return _frame(fmt, lines).encode(), _line(fmt, i) if located else None, says, op.__name__


def format_cases(rng: random.Random, work: Path) -> list[Case]:
    cases = []
    for fmt in FORMATS:
        for n in range(PER_FORMAT):
            data, line, says, name = _break(rng, fmt)
            path = work / f"{fmt.name}-{n}.{fmt.suffix}"
            path.write_bytes(data)
            args = ["import", "--format", fmt.name, str(path)]
            cases.append(Case(f"{fmt.name} {name}", args, path.name, line, says))
    return cases


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return sample_store(tmp_path_factory.mktemp("fuzz-formats-store"))


def test_the_valid_files_import(db, tmp_path):
    """The base files are good: every mutation below is what breaks them."""
    from import_cases import cli

    for fmt in FORMATS:
        path = tmp_path / f"{fmt.name}.{fmt.suffix}"
        path.write_text(_frame(fmt, [json.dumps(r) for r in fmt.records]))
        copy = tmp_path / f"{fmt.name}.db"
        copy.write_bytes(Path(db.removeprefix("sqlite:///")).read_bytes())
        result = cli("import", "--format", fmt.name, str(path), "--db", f"sqlite:///{copy}")
        assert result.exit_code == 0, (fmt.name, result.output)
        assert f"imported from {path.name}" in result.output


def test_every_malformed_file_of_every_format_is_refused_with_a_located_error(db, tmp_path):
    cases = format_cases(random.Random(SEED), tmp_path)
    assert len(cases) == PER_FORMAT * len(FORMATS)
    failures = [f"{case.name}: {why}" for case in cases if (why := _check(case, db))]
    assert not failures, f"{len(failures)} of {len(cases)} cases:\n" + "\n".join(failures)
