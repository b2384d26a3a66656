"""Record a small local model's raw replies to every task once, as fixtures for model_robustness.py.

Runs the sample project's pipelines on a model behind an OpenAI-compatible server (for instance
llama-cpp-python's server with a Gemma 3 270M GGUF): spec generation, doc-QA conversations (entity
extraction, generation, correction, check) and a run of the demo target judged by the model, on inputs
made offline first (a spec, conversations) so every task is reached even where the model's output is
lost. Every reply the server sends is written, in call order, to a JSONL file: task, structured mode,
attempt within its unit, finish reason, the reply text. Calls are made one at a time so a unit's
re-asks follow it.

`--first-replies` instead makes one call per unit (no re-ask) for three tasks on sample-project inputs
(entity extraction of each prose document, one doc-QA conversation, judging two replies), for a model too
slow on this machine for the whole pipeline. `--max-tokens` caps every call through the model's profile.

    python -m llama_cpp.server --model gemma-3-270m-it-Q4_K_M.gguf --port 8765 &
    .venv/bin/python benchmarks/record_small_model.py --base-url http://127.0.0.1:8765/v1 \\
        --model gemma3-270m --structured none --out tests/fixtures/small_model/gemma3-270m.none.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalcore.cli.main import SAMPLE_PROJECT  # noqa: E402
from evalcore.documents.entity_task import EXTRACT_ENTITIES  # noqa: E402
from evalcore.generators.doc_qa.generate import GENERATE_CONVERSATION, conversation_inputs  # noqa: E402
from evalcore.generators.doc_qa.job import generate_conversations  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.llm import ModelClient  # noqa: E402
from evalcore.llm.providers import OpenAIProvider  # noqa: E402
from evalcore.models import DocumentKind, Provenance, Spec  # noqa: E402
from evalcore.runs.job import run_target  # noqa: E402
from evalcore.runs.judges import JUDGE_TURN, JudgeInputs  # noqa: E402
from evalcore.specs.generation import generate_specs  # noqa: E402
from evalcore.store import Store  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True, help="model name the server answers to")
    parser.add_argument("--structured", default="none", choices=["json_schema", "json_object", "none"])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--items", type=int, default=2, help="conversations the demo target plays")
    parser.add_argument("--first-replies", action="store_true", help="three tasks, one call per unit")
    parser.add_argument("--max-tokens", type=int, default=None, help="cap on every call (model profile)")
    args = parser.parse_args()
    os.environ["EVALCORE_LLM_CONCURRENCY"] = "1"  # one call at a time: a unit's re-asks follow it
    records: list[dict] = []
    generate = OpenAIProvider.generate

    def recording(self, model, request):
        started = time.perf_counter()
        response = generate(self, model, request)
        seconds = round(time.perf_counter() - started, 1)
        head = json.dumps([[m.role, m.content] for m in request.messages[:2]])
        unit = hashlib.sha256(f"{request.task}{head}".encode()).hexdigest()[:12]
        same = [r for r in records if r["unit"] == unit]
        records.append({"task": request.task, "structured": args.structured, "unit": unit,
                        "attempt": len(same) + 1, "max_tokens": request.max_tokens,
                        "finish_reason": response.finish_reason, "seconds": seconds,
                        "reply": response.text})  # fmt: skip
        print(f"{request.task} attempt {len(same) + 1}: {len(response.text)} chars, {response.finish_reason}")
        return response

    OpenAIProvider.generate = recording  # type: ignore[method-assign]
    model = f"local/{args.model}"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/record.db")
        project_id = import_project(store, SAMPLE_PROJECT).project_id
        provider = {"kind": "openai_compatible", "base_url": args.base_url, "structured": args.structured,
                    "timeout_s": 600}  # fmt: skip
        profiles = {model: {"max_tokens": args.max_tokens}} if args.max_tokens else {}
        settings = {"providers": {"local": provider}, "models": {"judge": model}, "model_profiles": profiles}
        store.update_settings(project_id, settings)
        if args.first_replies:
            first_replies(store, project_id, model)
        else:
            whole_pipeline(store, project_id, model, args.items)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    print(f"{len(records)} replies written to {args.out}")


def whole_pipeline(store: Store, project_id: str, model: str, items: int) -> None:
    """Specs, doc-QA conversations with their checks, and a judged run of the demo target."""
    # Offline first, so later steps have inputs even where the small model's output is lost.
    offline = "offline/heuristic"
    generate_specs(store, project_id, m=1, batch=1, model=offline)
    common = {"specs": "all", "per_spec": 1, "d": 2, "dense": False}
    generate_conversations(store, project_id, model=offline, judge=offline, **common)
    generate_specs(store, project_id, m=1, batch=1, model=model)
    generate_conversations(store, project_id, model=model, judge=model, **common)
    run_target(store, project_id, "demo", judge=model, limit=items, concurrency=1)


def first_replies(store: Store, project_id: str, model: str) -> None:
    """One call per unit, no re-ask: entities of each prose document, a conversation, two judged replies."""
    llm = ModelClient(store, project_id)
    once = {t.name: replace(t, max_reasks=0) for t in (EXTRACT_ENTITIES, GENERATE_CONVERSATION, JUDGE_TURN)}
    docs = [d for d in store.documents(project_id) if d.kind == DocumentKind.text]
    for doc in docs:
        llm.run_task(once[EXTRACT_ENTITIES.name], {"passage": doc.text[:2000]}, model=model)
    spec = Spec(id="s1", scenario="Store services", given="a customer plans a visit to a store",
                when="they ask which store can repair their bike", then="the answer names the right store",
                provenance=Provenance(producer="human:record"))  # fmt: skip
    inputs = conversation_inputs("A bike shop's customer assistant.", spec, docs[:2], [[]], [], 3, 0, [])
    llm.run_task(once[GENERATE_CONVERSATION.name], inputs, model=model)
    question, expected = "How long can I return an e-bike?", "Within 14 days, with under 25 km ridden."
    for reply in ("Returns are accepted within 14 days.", "You can return it within 30 days."):
        judged = JudgeInputs("Scenario: Returns", [], question, expected, reply)
        llm.run_task(once[JUDGE_TURN.name], judged.as_task_inputs(), role="judge", model=model)


if __name__ == "__main__":
    main()
