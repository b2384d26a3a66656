"""The other tools' side of the round trips in tests/inputs/test_interop_libraries.py, run by the interpreter
of .venv-interop (where DeepEval, Ragas, Inspect AI, Langfuse and LangSmith are installed, apart from
evalcore's environment): `python interop_side.py ACTION PATH`. A `load-*` action reads our file with the
library's own loader and models and prints what they hold as JSON; a `write-*` action writes a file as the
library does. No network: telemetry is off and no client is made.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

for name, value in {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "RAGAS_DO_NOT_TRACK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGFUSE_TRACING_ENABLED": "false",
    "INSPECT_DISABLE_TELEMETRY": "1",
}.items():
    os.environ.setdefault(name, value)


def load_deepeval(path: Path) -> list[dict]:
    from deepeval.dataset import ConversationalGolden, EvaluationDataset

    dataset = EvaluationDataset()
    dataset.add_goldens_from_json_file(str(path))
    return [
        {
            "name": g.name,
            "conversational": isinstance(g, ConversationalGolden),
            "turns": len(g.turns or []) if isinstance(g, ConversationalGolden) else None,
            "expected_output": getattr(g, "expected_output", None),
            "expected_tools": [t.name for t in getattr(g, "expected_tools", None) or []],
            "additional_metadata": g.additional_metadata,
        }
        for g in dataset.goldens
    ]


def write_deepeval(folder: Path) -> list[str]:
    from deepeval.dataset import ConversationalGolden, EvaluationDataset, Golden
    from deepeval.test_case import ToolCall, Turn

    single = EvaluationDataset(
        goldens=[
            Golden(
                input="Can I rent an e-bike?",
                expected_output="Yes, from 25 EUR a day.",
                retrieval_context=["rentals"],
                name="rent",
            ),
            Golden(
                input="Where is order 7?",
                expected_tools=[ToolCall(name="lookup_order", input_parameters={"id": "7"})],
            ),
        ]
    )
    multi = EvaluationDataset(
        goldens=[
            ConversationalGolden(
                scenario="A customer asks about a dead battery",
                expected_outcome="Return accepted",
                turns=[
                    Turn(role="user", content="My battery is dead."),
                    Turn(role="assistant", content="Let me check."),
                ],
            )
        ]
    )
    return [
        single.save_as("json", str(folder), file_name="single"),
        multi.save_as("json", str(folder), file_name="multi"),
    ]


class _NoTokenizer:
    """Stands for the tiktoken encoding Ragas' testset package builds at import time: tiktoken downloads
    it (network), and reading or writing a testset never tokenizes."""

    def encode(self, text: str) -> list[int]:
        raise RuntimeError("no tokenizer in the round-trip tests")


def _offline_ragas() -> None:
    import tiktoken

    tiktoken.get_encoding = lambda name: _NoTokenizer()


def load_ragas(path: Path) -> list[dict]:
    _offline_ragas()
    from ragas.testset.synthesizers.testset_schema import Testset

    rows = [json.loads(line) for line in path.read_text().splitlines()]
    testset = Testset.from_list(rows)
    return [
        {
            "type": type(s.eval_sample).__name__,
            "reference_tool_calls": [
                c.name for c in getattr(s.eval_sample, "reference_tool_calls", None) or []
            ],
        }
        for s in testset.samples
    ]


def write_ragas(path: Path) -> None:
    _offline_ragas()
    from ragas.dataset_schema import MultiTurnSample, SingleTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall
    from ragas.testset.synthesizers.testset_schema import Testset, TestsetSample

    Testset(
        samples=[
            TestsetSample(
                eval_sample=SingleTurnSample(
                    user_input="What does a repair cost?",
                    reference="From 40 EUR.",
                    reference_contexts=["repairs"],
                ),
                synthesizer_name="single_hop_specific_query_synthesizer",
            ),
            TestsetSample(
                eval_sample=MultiTurnSample(
                    user_input=[
                        HumanMessage(content="Is order 9 shipped?"),
                        AIMessage(
                            content="", tool_calls=[ToolCall(name="lookup_order", args={"order_id": "9"})]
                        ),
                        HumanMessage(content="And order 10?"),
                    ],
                    reference_tool_calls=[ToolCall(name="lookup_order", args={"order_id": "10"})],
                ),
                synthesizer_name="multi_turn",
            ),
        ]
    ).to_jsonl(path)


def load_inspect_samples(path: Path) -> list[dict]:
    from inspect_ai.dataset import json_dataset

    return [
        {"id": s.id, "target": s.target, "metadata": s.metadata, "roles": [m.role for m in s.input]}
        for s in json_dataset(str(path))
    ]


def load_inspect_log(path: Path) -> dict:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    return {
        "status": log.status,
        "samples": [
            {"id": s.id, "score": s.scores["evalcore"].value if s.scores else None} for s in log.samples
        ],
        "accuracy": log.results.scores[0].metrics["accuracy"].value,
    }


def write_inspect(path: Path) -> None:
    from inspect_ai.dataset import Sample

    sample = Sample(input="Hours?", target="9 to 6", id="h", metadata={"source": "faq"})
    path.write_text(sample.model_dump_json(exclude_none=True) + "\n")


def load_langfuse(path: Path) -> list[dict]:
    from langfuse.api import CreateDatasetItemRequest

    found = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        item = CreateDatasetItemRequest(
            dataset_name="evalcore",
            input=row["input"],
            expected_output=row["expectedOutput"],
            metadata=row["metadata"],
            id=row["id"],
        )
        found.append({"id": item.id, "metadata": item.metadata})
    return found


def write_langfuse(path: Path) -> None:
    from langfuse.api import DatasetItem

    now = datetime.now(UTC)
    item = DatasetItem(
        id="faq-1",
        status="ACTIVE",
        input={"question": "Open on Sunday?"},
        expected_output={"answer": "No."},
        metadata={"source": "prod"},
        dataset_id="d",
        dataset_name="faq",
        created_at=now,
        updated_at=now,
        media_references=[],
    )
    path.write_text(item.json() + "\n")


def load_langsmith(path: Path) -> list[dict]:
    from langsmith.schemas import Example, ExampleCreate

    found = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        example = Example(**row, id=uuid.uuid4(), dataset_id=uuid.uuid4(), created_at=datetime.now(UTC))
        created = ExampleCreate(
            inputs=row["inputs"], reference_outputs=row["outputs"], metadata=row["metadata"]
        )
        found.append(
            {"metadata": example.metadata, "same_outputs": created.reference_outputs == example.outputs}
        )
    return found


def write_langsmith(path: Path) -> str:
    from langsmith.schemas import Example

    example = Example(
        id=uuid.uuid4(),
        dataset_id=uuid.uuid4(),
        inputs={"question": "Open on Sunday?"},
        outputs={"answer": "No."},
        metadata={"dataset_split": ["test"]},
        created_at=datetime.now(UTC),
    )
    path.write_text(example.model_dump_json() + "\n")
    return str(example.id)


ACTIONS = {
    "load-deepeval": load_deepeval,
    "write-deepeval": write_deepeval,
    "load-ragas": load_ragas,
    "write-ragas": write_ragas,
    "load-inspect-samples": load_inspect_samples,
    "load-inspect-log": load_inspect_log,
    "write-inspect": write_inspect,
    "load-langfuse": load_langfuse,
    "write-langfuse": write_langfuse,
    "load-langsmith": load_langsmith,
    "write-langsmith": write_langsmith,
}

if __name__ == "__main__":
    print(json.dumps(ACTIONS[sys.argv[1]](Path(sys.argv[2])), default=str))
