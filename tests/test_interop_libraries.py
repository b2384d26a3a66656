"""Round trips against the other tools' own libraries (the `interop` extra, installed by
`scripts/setup.sh --test`): what each library writes, we import; what we export, each library loads
with its own loader and validates against its own models. Nothing here touches the network: the
libraries' telemetry is switched off before they are imported, and no client is ever constructed
against a server.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime

import pytest
from test_interop_formats import REPLY_TEST, TOOL_TEST, filled  # noqa: F401 (a fixture)

from evalcore.items.current import read_item
from evalcore.items.exports import write_lines
from evalcore.items.interop import import_file
from evalcore.reports.formats import export_format, export_results
from evalcore.runs.job import run_target

for name, value in {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "RAGAS_DO_NOT_TRACK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGFUSE_TRACING_ENABLED": "false",
    "INSPECT_DISABLE_TELEMETRY": "1",
}.items():
    os.environ.setdefault(name, value)


def _export(store, project_id, fmt, kind, path):
    write_lines(export_format(store, project_id, fmt, kind), path)
    return path


def test_deepeval_loads_our_goldens_and_we_import_what_it_saves(filled, tmp_path):  # noqa: F811
    dataset_module = pytest.importorskip("deepeval.dataset")
    store, project_id = filled
    tests = _export(store, project_id, "deepeval", "test", tmp_path / "tests.json")
    loaded = dataset_module.EvaluationDataset()
    loaded.add_goldens_from_json_file(str(tests))
    by_name = {g.name: g for g in loaded.goldens}
    assert by_name["test-reply"].expected_output == REPLY_TEST.expected.content
    assert by_name["test-tool"].expected_tools[0].name == "lookup_order"
    assert by_name["test-tool"].additional_metadata["evalcore"]["provenance"]["provider"] == "openai"
    conversations = _export(store, project_id, "deepeval", "conversation", tmp_path / "conversations.json")
    multi = dataset_module.EvaluationDataset()
    multi.add_goldens_from_json_file(str(conversations))
    assert {g.name for g in multi.goldens} == {f"conv-sample-{n}" for n in range(4)}
    assert all(isinstance(g, dataset_module.ConversationalGolden) and g.turns for g in multi.goldens)

    # What DeepEval itself saves: goldens it made, single-turn and conversational.
    from deepeval.test_case import ToolCall, Turn

    single = dataset_module.EvaluationDataset(goldens=[
        dataset_module.Golden(input="Can I rent an e-bike?", expected_output="Yes, from 25 EUR a day.",
                              retrieval_context=["rentals"], name="rent"),
        dataset_module.Golden(input="Where is order 7?",
                              expected_tools=[ToolCall(name="lookup_order", input_parameters={"id": "7"})]),
    ])  # fmt: skip
    saved = single.save_as("json", str(tmp_path / "de"), file_name="single")
    done = import_file(store, project_id, "deepeval", saved)
    first, second = (read_item(store, i).test() for i in done.result.tests)
    assert (first.id, first.expected.content) == ("deepeval-rent", "Yes, from 25 EUR a day.")
    assert (second.expected.tool_name, second.expected.arguments) == ("lookup_order", {"id": "7"})
    assert any("retrieval_context" in note for note in done.notes)
    convo = dataset_module.EvaluationDataset(
        goldens=[
            dataset_module.ConversationalGolden(
                scenario="A customer asks about a dead battery",
                expected_outcome="Return accepted",
                turns=[
                    Turn(role="user", content="My battery is dead."),
                    Turn(role="assistant", content="Let me check."),
                ],
            )
        ]
    )
    saved = convo.save_as("json", str(tmp_path / "de"), file_name="multi")  # fmt: skip
    done = import_file(store, project_id, "deepeval", saved)
    conversation = read_item(store, done.result.conversations[0]).conversation()
    assert [t.content for t in conversation.turns] == ["My battery is dead.", "Let me check."]


def test_ragas_loads_our_testset_and_we_import_what_it_writes(filled, tmp_path):  # noqa: F811
    schema = pytest.importorskip("ragas.testset.synthesizers.testset_schema")
    from ragas.dataset_schema import MultiTurnSample, SingleTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall

    store, project_id = filled
    path = _export(store, project_id, "ragas", "test", tmp_path / "testset.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    testset = schema.Testset.from_list(rows)
    kinds = {type(s.eval_sample).__name__ for s in testset.samples}
    assert kinds == {"SingleTurnSample", "MultiTurnSample"}
    multi = next(s.eval_sample for s in testset.samples if isinstance(s.eval_sample, MultiTurnSample))
    assert multi.reference_tool_calls[0].name == "lookup_order"

    written = schema.Testset(samples=[
        schema.TestsetSample(eval_sample=SingleTurnSample(user_input="What does a repair cost?",
                             reference="From 40 EUR.", reference_contexts=["repairs"]),
                             synthesizer_name="single_hop_specific_query_synthesizer"),
        schema.TestsetSample(eval_sample=MultiTurnSample(user_input=[
            HumanMessage(content="Is order 9 shipped?"),
            AIMessage(content="", tool_calls=[ToolCall(name="lookup_order", args={"order_id": "9"})]),
            HumanMessage(content="And order 10?")],
            reference_tool_calls=[ToolCall(name="lookup_order", args={"order_id": "10"})]),
            synthesizer_name="multi_turn"),
    ])  # fmt: skip
    written.to_jsonl(tmp_path / "theirs.jsonl")
    done = import_file(store, project_id, "ragas", tmp_path / "theirs.jsonl")
    single, turned = (read_item(store, i).test() for i in done.result.tests)
    assert single.expected.content == "From 40 EUR."
    assert [t.role for t in turned.context] == ["user", "tool_call", "user"]
    assert turned.expected.arguments == {"order_id": "10"}


def test_inspect_reads_our_samples_and_our_run_as_an_eval_log(filled, tmp_path):  # noqa: F811
    dataset = pytest.importorskip("inspect_ai.dataset")
    from inspect_ai.log import read_eval_log

    store, project_id = filled
    path = _export(store, project_id, "inspect", "test", tmp_path / "samples.jsonl")
    samples = list(dataset.json_dataset(str(path)))
    reply = next(s for s in samples if s.id == "test-reply")
    assert reply.target == REPLY_TEST.expected.content and reply.metadata["evalcore"]["id"] == "test-reply"
    tool = next(s for s in samples if s.id == "test-tool")
    assert [m.role for m in tool.input] == ["user", "assistant", "user"]

    outcome = run_target(store, project_id, "demo", judge="offline", keys=["conversation:conv-sample-1"])
    log_path = tmp_path / "run.json"
    write_lines(export_results(store, outcome.run.id), log_path)
    log = read_eval_log(str(log_path))
    assert log.status == "success" and len(log.samples) == 1
    assert log.samples[0].scores["evalcore"].value in ("C", "I")
    assert log.results.scores[0].metrics["accuracy"].value in (0.0, 1.0)

    # Samples as Inspect writes them come in as tests.
    theirs = [dataset.Sample(input="Hours?", target="9 to 6", id="h", metadata={"source": "faq"})]
    (tmp_path / "theirs.jsonl").write_text(
        "".join(s.model_dump_json(exclude_none=True) + "\n" for s in theirs)
    )
    done = import_file(store, project_id, "inspect", tmp_path / "theirs.jsonl")
    assert read_item(store, "inspect-h").test().expected.content == "9 to 6"
    assert done.notes == []


def test_langfuse_validates_our_items_and_we_import_its_items(filled, tmp_path):  # noqa: F811
    api = pytest.importorskip("langfuse.api")
    store, project_id = filled
    for kind in ("conversation", "test"):
        path = _export(store, project_id, "langfuse", kind, tmp_path / f"{kind}.jsonl")
        for line in path.read_text().splitlines():
            row = json.loads(line)
            item = api.CreateDatasetItemRequest(
                dataset_name="evalcore", input=row["input"], expected_output=row["expectedOutput"],
                metadata=row["metadata"], id=row["id"],
            )  # fmt: skip
            assert item.metadata["evalcore"]["id"] == row["id"]
    now = datetime.now(UTC)
    theirs = api.DatasetItem(
        id="faq-1", status="ACTIVE", input={"question": "Open on Sunday?"}, expected_output={"answer": "No."},
        metadata={"source": "prod"}, dataset_id="d", dataset_name="faq", created_at=now, updated_at=now,
        media_references=[],
    )  # fmt: skip
    (tmp_path / "theirs.jsonl").write_text(theirs.json() + "\n")
    done = import_file(store, project_id, "langfuse", tmp_path / "theirs.jsonl")
    test = read_item(store, done.result.tests[0]).test()
    assert (test.id, test.context[0].content, test.expected.content) == (
        "langfuse-faq-1",
        "Open on Sunday?",
        "No.",
    )


def test_langsmith_validates_our_examples_and_we_import_its_examples(filled, tmp_path):  # noqa: F811
    schemas = pytest.importorskip("langsmith.schemas")
    store, project_id = filled
    for kind in ("conversation", "test"):
        path = _export(store, project_id, "langsmith", kind, tmp_path / f"{kind}.jsonl")
        for line in path.read_text().splitlines():
            row = json.loads(line)
            example = schemas.Example(
                **row, id=uuid.uuid4(), dataset_id=uuid.uuid4(), created_at=datetime.now(UTC)
            )
            assert example.metadata["evalcore"]["kind"] == kind
            created = schemas.ExampleCreate(inputs=row["inputs"], reference_outputs=row["outputs"],
                                            metadata=row["metadata"])  # fmt: skip
            assert created.reference_outputs == example.outputs
    theirs = schemas.Example(
        id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs={"question": "Open on Sunday?"},
        outputs={"answer": "No."}, metadata={"dataset_split": ["test"]}, created_at=datetime.now(UTC),
    )  # fmt: skip
    (tmp_path / "theirs.jsonl").write_text(theirs.model_dump_json() + "\n")
    done = import_file(store, project_id, "langsmith", tmp_path / "theirs.jsonl")
    test = read_item(store, done.result.tests[0]).test()
    assert (test.context[0].content, test.expected.content) == ("Open on Sunday?", "No.")
    assert test.id == f"langsmith-{theirs.id}"
    assert TOOL_TEST.id not in done.result.tests
