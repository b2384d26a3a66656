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
from evalcore.llm.serve_local import MAX_TOKENS, TASK_MAX_TOKENS  # noqa: E402
from evalcore.models import Document, DocumentKind, Provenance, Spec  # noqa: E402
from evalcore.runs.job import run_target  # noqa: E402
from evalcore.runs.judges import JUDGE_TURN, JudgeInputs  # noqa: E402
from evalcore.specs.generation import GENERATE_SPECS, generate_specs  # noqa: E402
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
    parser.add_argument("--local-caps", action="store_true", help="the caps per task of `models serve-local`")
    parser.add_argument("--package", default="", help="where the model came from, kept on every reply")
    args = parser.parse_args()
    os.environ["EVALCORE_LLM_CONCURRENCY"] = "1"  # one call at a time: a unit's re-asks follow it
    records: list[dict] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("", encoding="utf-8")
    generate = OpenAIProvider.generate
    recorded = time.strftime("%Y-%m-%d", time.gmtime())

    def recording(self, model, request):
        started = time.perf_counter()
        response = generate(self, model, request)
        seconds = round(time.perf_counter() - started, 1)
        head = json.dumps([[m.role, m.content] for m in request.messages[:2]])
        unit = hashlib.sha256(f"{request.task}{head}".encode()).hexdigest()[:12]
        same = [r for r in records if r["unit"] == unit]
        records.append({"task": request.task, "structured": args.structured, "unit": unit,
                        "model": args.model, "package": args.package, "recorded": recorded,
                        "attempt": len(same) + 1, "max_tokens": request.max_tokens,
                        "finish_reason": response.finish_reason, "seconds": seconds,
                        "reply": response.text})  # fmt: skip
        with args.out.open("a", encoding="utf-8") as out:  # as they come: a long recording keeps what it has
            out.write(json.dumps(records[-1], ensure_ascii=False) + "\n")
        print(f"{request.task} attempt {len(same) + 1}: {len(response.text)} chars, {response.finish_reason}")
        return response

    OpenAIProvider.generate = recording  # type: ignore[method-assign]
    model = f"local/{args.model}"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/record.db")
        project_id = import_project(store, SAMPLE_PROJECT).project_id
        provider = {"kind": "openai_compatible", "base_url": args.base_url, "structured": args.structured,
                    "timeout_s": 600}  # fmt: skip
        profile = {"max_tokens": args.max_tokens} if args.max_tokens else {}
        if args.local_caps:
            profile = {"max_tokens": args.max_tokens or MAX_TOKENS, "task_max_tokens": TASK_MAX_TOKENS}
        profiles = {model: profile} if profile else {}
        settings = {"providers": {"local": provider}, "models": {"judge": model}, "model_profiles": profiles}
        store.update_settings(project_id, settings)
        if args.first_replies:
            first_replies(store, project_id, model)
        else:
            whole_pipeline(store, project_id, model, args.items)
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
    """One call per unit, no re-ask, the tasks of the real-model test first: two judged replies, the
    entities of one document, one spec from one document, a conversation, then the entities of the rest."""
    llm = ModelClient(store, project_id)
    tasks = (EXTRACT_ENTITIES, GENERATE_CONVERSATION, JUDGE_TURN, GENERATE_SPECS)
    once = {t.name: replace(t, max_reasks=0) for t in tasks}
    for judged in judge_inputs():
        llm.run_task(once[JUDGE_TURN.name], judged, role="judge", model=model)
    docs = [d for d in store.documents(project_id) if d.kind == DocumentKind.text]
    llm.run_task(once[EXTRACT_ENTITIES.name], {"passage": docs[0].text[:2000]}, model=model)
    llm.run_task(once[GENERATE_SPECS.name], spec_inputs(store, project_id, docs[0]), model=model)
    spec = Spec(id="s1", scenario="Store services", given="a customer plans a visit to a store",
                when="they ask which store can repair their bike", then="the answer names the right store",
                provenance=Provenance(producer="human:record"))  # fmt: skip
    inputs = conversation_inputs("A bike shop's customer assistant.", spec, docs[:2], [[]], [], 3, 0, [])
    llm.run_task(once[GENERATE_CONVERSATION.name], inputs, model=model)
    for doc in docs[1:]:
        llm.run_task(once[EXTRACT_ENTITIES.name], {"passage": doc.text[:2000]}, model=model)


def judge_inputs() -> list[dict]:
    """A right and a wrong reply to one question, as the judge task's inputs."""
    question, expected = "How long can I return an e-bike?", "Within 14 days, with under 25 km ridden."
    replies = ("Returns are accepted within 14 days.", "You can return it within 30 days.")
    return [JudgeInputs("Scenario: Returns", [], question, expected, r).as_task_inputs() for r in replies]


def spec_inputs(store: Store, project_id: str, document: Document, tools: int = 2) -> dict:
    """The generate_specs task's inputs for one spec from one document, with a few tools: what a small
    model with a 4,096-token context can take (the job's units hold three documents and every tool)."""
    card = store.system_card(project_id)
    info = card.chatbot_info if card else None
    return {
        "system_description": f"{info.name}: {info.description}" if info else "",
        "card": card.model_dump(mode="json") if card else {},
        "documents_summary": [{"id": document.id, "kind": document.kind.value, "title": document.title}],
        "tools": [t.model_dump(mode="json") for t in store.tools(project_id)[:tools]],
        "history": [],
        "names": {},
        "focus": "product information",
        "count": 1,
        "documents": [{"id": document.id, "kind": document.kind.value, "title": document.title,
                       "text": document.text[:2000]}],
    }  # fmt: skip


if __name__ == "__main__":
    main()
