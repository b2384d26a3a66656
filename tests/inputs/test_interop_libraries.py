"""Round trips against the other tools' own libraries: what each library writes, we import; what we
export, each library loads with its own loader and validates against its own models.

The libraries (the `interop` extra: DeepEval, Ragas, Inspect AI, Langfuse, LangSmith) live in
.venv-interop, which `scripts/setup.sh --test` makes: installed beside evalcore's dependencies they would
pin older openai, click and rich for the whole suite. Their side runs there (`interop_side.py`); ours
runs here. Nothing touches the network: telemetry is off and no client is made.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_interop_formats import REPLY_TEST, filled  # noqa: F401 (a fixture)

from evalcore.items.current import read_item
from evalcore.items.exports import write_lines
from evalcore.items.interop import import_file
from evalcore.reports.formats import export_format, export_results
from evalcore.runs.job import run_target

HERE = Path(__file__).resolve().parents[1]  # tests/
INTEROP_PYTHON = Path(
    os.environ.get("EVALCORE_INTEROP_PYTHON", HERE.parent / ".venv-interop" / "bin" / "python")
)
pytestmark = pytest.mark.skipif(
    not INTEROP_PYTHON.exists(), reason="no .venv-interop: `bash scripts/setup.sh --test` makes it"
)


def side(action: str, path: Path) -> Any:
    """The other library's side of a round trip (tests/interop_side.py, in .venv-interop)."""
    done = subprocess.run(
        [str(INTEROP_PYTHON), str(HERE / "interop_side.py"), action, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _export(store, project_id, fmt, kind, path):
    write_lines(export_format(store, project_id, fmt, kind), path)
    return path


def test_deepeval_loads_our_goldens_and_we_import_what_it_saves(filled, tmp_path):  # noqa: F811
    store, project_id = filled
    goldens = {
        g["name"]: g
        for g in side(
            "load-deepeval", _export(store, project_id, "deepeval", "test", tmp_path / "tests.json")
        )
    }
    assert goldens["test-reply"]["expected_output"] == REPLY_TEST.expected.content
    assert goldens["test-tool"]["expected_tools"] == ["lookup_order"]
    assert goldens["test-tool"]["additional_metadata"]["evalcore"]["provenance"]["provider"] == "openai"
    multi = side("load-deepeval", _export(store, project_id, "deepeval", "conversation", tmp_path / "c.json"))
    assert {g["name"] for g in multi} == {f"conv-sample-{n}" for n in range(4)}
    assert all(g["conversational"] and g["turns"] for g in multi)

    single, conversational = side("write-deepeval", tmp_path / "theirs")
    done = import_file(store, project_id, "deepeval", single)
    first, second = (read_item(store, i).test() for i in done.result.tests)
    assert (first.id, first.expected.content) == ("deepeval-rent", "Yes, from 25 EUR a day.")
    assert (second.expected.tool_name, second.expected.arguments) == ("lookup_order", {"id": "7"})
    assert any("retrieval_context" in note for note in done.notes)
    done = import_file(store, project_id, "deepeval", conversational)
    conversation = read_item(store, done.result.conversations[0]).conversation()
    assert [t.content for t in conversation.turns] == ["My battery is dead.", "Let me check."]


def test_ragas_loads_our_testset_and_we_import_what_it_writes(filled, tmp_path):  # noqa: F811
    store, project_id = filled
    samples = side("load-ragas", _export(store, project_id, "ragas", "test", tmp_path / "testset.jsonl"))
    assert {s["type"] for s in samples} == {"SingleTurnSample", "MultiTurnSample"}
    assert ["lookup_order"] in [s["reference_tool_calls"] for s in samples]

    side("write-ragas", tmp_path / "theirs.jsonl")
    done = import_file(store, project_id, "ragas", tmp_path / "theirs.jsonl")
    single, turned = (read_item(store, i).test() for i in done.result.tests)
    assert single.expected.content == "From 40 EUR."
    assert [t.role for t in turned.context] == ["user", "tool_call", "user"]
    assert turned.expected.arguments == {"order_id": "10"}


def test_inspect_reads_our_samples_and_our_run_as_an_eval_log(filled, tmp_path):  # noqa: F811
    store, project_id = filled
    samples = side(
        "load-inspect-samples", _export(store, project_id, "inspect", "test", tmp_path / "s.jsonl")
    )
    reply = next(s for s in samples if s["id"] == "test-reply")
    assert (
        reply["target"] == REPLY_TEST.expected.content and reply["metadata"]["evalcore"]["id"] == "test-reply"
    )
    assert next(s for s in samples if s["id"] == "test-tool")["roles"] == ["user", "assistant", "user"]

    outcome = run_target(store, project_id, "demo", judge="offline", keys=["conversation:conv-sample-1"])
    write_lines(export_results(store, outcome.run.id), tmp_path / "run.json")
    log = side("load-inspect-log", tmp_path / "run.json")
    assert log["status"] == "success" and [s["id"] for s in log["samples"]] == ["conv-sample-1"]
    assert log["accuracy"] == (1.0 if log["samples"][0]["score"] == "C" else 0.0)

    side("write-inspect", tmp_path / "theirs.jsonl")
    done = import_file(store, project_id, "inspect", tmp_path / "theirs.jsonl")
    assert read_item(store, "inspect-h").test().expected.content == "9 to 6"
    assert done.notes == []


def test_langfuse_validates_our_items_and_we_import_its_items(filled, tmp_path):  # noqa: F811
    store, project_id = filled
    for kind in ("conversation", "test"):
        items = side(
            "load-langfuse", _export(store, project_id, "langfuse", kind, tmp_path / f"{kind}.jsonl")
        )
        assert items and all(i["metadata"]["evalcore"]["id"] == i["id"] for i in items)
    side("write-langfuse", tmp_path / "theirs.jsonl")
    done = import_file(store, project_id, "langfuse", tmp_path / "theirs.jsonl")
    test = read_item(store, done.result.tests[0]).test()
    assert (test.id, test.context[0].content, test.expected.content) == (
        "langfuse-faq-1",
        "Open on Sunday?",
        "No.",
    )


def test_langsmith_validates_our_examples_and_we_import_its_examples(filled, tmp_path):  # noqa: F811
    store, project_id = filled
    for kind in ("conversation", "test"):
        examples = side(
            "load-langsmith", _export(store, project_id, "langsmith", kind, tmp_path / f"{kind}.jsonl")
        )
        assert examples and all(
            e["metadata"]["evalcore"]["kind"] == kind and e["same_outputs"] for e in examples
        )
    example_id = side("write-langsmith", tmp_path / "theirs.jsonl")
    done = import_file(store, project_id, "langsmith", tmp_path / "theirs.jsonl")
    test = read_item(store, done.result.tests[0]).test()
    assert (test.id, test.context[0].content, test.expected.content) == (
        f"langsmith-{example_id}",
        "Open on Sunday?",
        "No.",
    )
