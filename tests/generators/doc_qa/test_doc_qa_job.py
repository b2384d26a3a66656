"""The doc-QA job: resume after a crash, stop between units, short chains, spec choice, verification."""

from __future__ import annotations

from collections import Counter

import pytest

import evalcore.generators.doc_qa.job as job_module
from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.documents.retrieval import build_index
from evalcore.errors import EvalcoreError
from evalcore.generators.doc_qa.generate import GENERATE_CONVERSATION, conversation_inputs, to_conversation
from evalcore.generators.doc_qa.job import RUN_KIND, generate_conversations
from evalcore.generators.doc_qa.verify import verify_conversation
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.jobs import progress, request_stop
from evalcore.llm import ModelClient
from evalcore.models import Provenance, Tier
from evalcore.specs.generation import generate_specs
from evalcore.specs.store_ops import list_specs


def _project(store, m: int = 3) -> str:
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    generate_specs(store, project_id, m=m, batch=m, from_card=False)
    return project_id


@pytest.fixture
def one_at_a_time(monkeypatch):
    monkeypatch.setenv("EVALCORE_LLM_CONCURRENCY", "1")  # units finish in plan order


def test_a_crashed_job_resumes_without_regenerating_finished_conversations(store, one_at_a_time, monkeypatch):
    project_id = _project(store)
    real = job_module.verify_conversation
    calls: list[str] = []

    def crash_on_fourth(llm, conversation, *args, **kwargs):
        calls.append(conversation.metadata["unit"])
        if len(calls) == 4:
            raise RuntimeError("killed half way")
        return real(llm, conversation, *args, **kwargs)

    monkeypatch.setattr(job_module, "verify_conversation", crash_on_fourth)
    with pytest.raises(RuntimeError, match="killed half way"):
        generate_conversations(store, project_id, specs="all", per_spec=2, dense=False)
    run = store.runs(project_id, kind=RUN_KIND)[0]
    assert run.status.value == "stopped" and progress(store, run) == (3, 6)
    before = {v.conversation.id: v.conversation for v in list_conversations(store, project_id)}
    assert len(before) == 3

    calls.clear()
    outcome = generate_conversations(store, project_id, run.id)
    assert outcome.skipped == 3 and outcome.added == 3 and outcome.run.status.value == "finished"
    assert len(calls) == 3 and not set(calls) & {c.metadata["unit"] for c in before.values()}
    after = {v.conversation.id: v.conversation for v in list_conversations(store, project_id)}
    assert len(after) == 6 and all(after[cid] == c for cid, c in before.items())
    units = sorted(c.metadata["unit"] for c in after.values())
    assert units == sorted(u["key"] for u in outcome.run.params["plan"]["units"])

    again = generate_conversations(store, project_id, run.id)  # nothing left: nothing regenerated
    assert again.added == 0 and again.skipped == 6 and len(list_conversations(store, project_id)) == 6


def test_a_stop_request_stops_between_units_and_resume_finishes(sqlite_store, one_at_a_time):
    store = sqlite_store
    project_id = _project(store)
    seen: list[int] = []

    def stop_after_two(done: int, total: int) -> None:
        seen.append(done)
        if done == 2:
            request_stop(store, store.runs(project_id, kind=RUN_KIND)[0].id, "dana")

    outcome = generate_conversations(
        store, project_id, specs="all", per_spec=2, dense=False, on_progress=stop_after_two
    )
    assert outcome.stopped == "stopped by dana" and outcome.added == 2 and seen == [0, 1, 2]
    assert outcome.run.status.value == "stopped"
    resumed = generate_conversations(
        store, project_id, outcome.run.id, on_progress=lambda d, t: seen.append(d)
    )
    assert resumed.stopped is None and resumed.added == 4 and seen[-1] == 6 == resumed.total
    assert resumed.run.status.value == "finished" and resumed.run.stopped_reason is None


def test_a_spec_without_enough_documents_gets_a_shorter_chain_and_a_message(sqlite_store):
    store = sqlite_store
    project_id = _project(store, m=2)
    outcome = generate_conversations(store, project_id, specs="all", d=12, turns=5, per_spec=1, dense=False)
    assert outcome.added == outcome.total == 2 and not outcome.failed
    specs = list_specs(store, project_id)
    for view in specs:
        message = next(m for m in outcome.messages if view.spec.id in m)
        assert "no chain of length 12" in message and "instead of 12" in message
    assert set(outcome.messages) <= set(outcome.run.warnings)
    for view in list_conversations(store, project_id):
        chain = view.conversation.metadata["chain"]
        assert chain["requested_length"] == 12 and 1 <= chain["length"] < 12
        assert "no chain of length 12" in chain["note"]
        assert len(view.conversation.turns) == 10


def test_several_chain_lengths_spread_each_specs_conversations(sqlite_store):
    project_id = _project(sqlite_store)
    outcome = generate_conversations(
        sqlite_store, project_id, specs="all", per_spec=4, d=[2, 3], dense=False, leave_spec=True
    )
    lengths = Counter()
    for view in list_conversations(sqlite_store, project_id):
        lengths[len(view.conversation.metadata["chain"]["documents"])] += 1
    assert set(lengths) == {2, 3} and lengths[2] == lengths[3]
    assert outcome.run.params["d"] == [2, 3]


def test_specs_selected_falls_back_to_accepted_and_candidate_specs_with_a_message(sqlite_store):
    store = sqlite_store
    project_id = _project(store, m=2)
    outcome = generate_conversations(store, project_id, specs="selected", per_spec=1, dense=False)
    assert outcome.added == 2
    assert any("no spec selection yet" in w for w in outcome.run.warnings)
    with pytest.raises(EvalcoreError, match="no spec spec-nope"):
        generate_conversations(store, project_id, specs=["spec-nope"], per_spec=1)
    with pytest.raises(EvalcoreError, match="at least 2 turns"):
        generate_conversations(store, project_id, specs="all", turns=1)


def test_verification_is_recorded_and_offline_items_are_silver(sqlite_store):
    store = sqlite_store
    project_id = _project(store, m=1)
    generate_conversations(store, project_id, specs="all", per_spec=2)
    for view in list_conversations(store, project_id):
        meta = view.conversation.metadata
        verification = meta["verification"]
        assert verification["correction"]["checked"] == 7 and verification["correction"]["flagged"] == 0
        assert verification["rules"] == {"passed": True, "problems": []}
        assert verification["adherence"]["adheres"] and verification["adherence"]["offline"]
        assert meta["judge_passed"] is True and meta["judge_score"] == 1.0 and meta["offline"] is True
        assert view.conversation.tier == Tier.silver and view.conversation.provenance.is_offline


def _one_conversation(store, project_id):
    docs = {d.id: d for d in store.documents(project_id)}
    spec = list_specs(store, project_id)[0].spec
    chain = [docs["repair-services"], docs["tyres-and-tubeless-faq"]]
    inputs = conversation_inputs("desc", spec, chain, [["SVC-TUBELESS", "SVC-FLAT"]], [], 5, 0, [])
    output = GENERATE_CONVERSATION.run_offline(inputs, seed=0)
    conversation = to_conversation(output, conversation_id="conv-x", spec_id=spec.id,
                                   provenance=Provenance(producer="offline"), metadata={})  # fmt: skip
    spec_inputs = {
        k: inputs[k] for k in ("system_description", "probe", "probe_given", "probe_when", "probe_then")
    }
    context = dict(zip([d.id for d in chain], inputs["documents"], strict=True))
    return conversation, spec_inputs, context, [d.id for d in chain], build_index(docs.values())


def test_correction_fixes_a_wrong_answer_rewrites_a_far_one_and_flags_an_unanswered_one(sqlite_store):
    store = sqlite_store
    project_id = _project(store, m=1)
    conversation, spec_inputs, context, chain, index = _one_conversation(store, project_id)
    llm = ModelClient(store, project_id)
    answers = [t for t in conversation.turns if t.role.value == "assistant" and t.metadata["answerable"]]
    right = answers[0].content
    answers[0].content = right.replace(right.split()[-1], "nonsense-value.")  # a slightly wrong answer
    answers[0].metadata["sources"] = []
    answers[1].content = "Penguins migrate to the moon every February."
    answers[1].metadata["sources"] = []
    # A question no passage answers, with an answer none supports: flagged, not rewritten.
    answers[2].content = "Penguins migrate to the moon every February."
    answers[2].metadata["sources"] = []
    asked = next(t for t in conversation.turns if t.index == answers[2].index - 1)
    asked.content = "When do penguins migrate to the moon?"
    asked.metadata["resolved_question"] = asked.content
    verified = verify_conversation(llm, conversation, spec_inputs, index, context, chain, 5).conversation
    fixed = next(t for t in verified.turns if t.index == answers[0].index)
    assert fixed.metadata["correction"] == "corrected" and fixed.metadata["original_answer"].endswith(
        "nonsense-value."
    )
    assert (
        right.split()[-1].strip("$.") in fixed.content and "nonsense" not in fixed.content
    )  # what the document says (the cell's value, without the currency sign the answer puts before it)
    # An answer far from every passage is rewritten from the passage that answers its question (issue 33).
    rewritten = next(t for t in verified.turns if t.index == answers[1].index)
    assert rewritten.metadata["correction"] == "corrected" and "Penguins" not in rewritten.content
    assert rewritten.metadata["original_answer"].startswith("Penguins")
    passages = " ".join(p.text for p in index.passages if p.document_id in rewritten.grounding)
    assert all(word in passages.lower() for word in rewritten.content.lower().split()[:3])
    flagged = next(t for t in verified.turns if t.index == answers[2].index)
    assert flagged.metadata["correction"] == "unsupported" and flagged.content.startswith("Penguins")
    meta = verified.metadata
    assert (
        meta["verification"]["correction"]["fired"] == 2
        and meta["verification"]["correction"]["flagged"] == 1
    )
    assert meta["judge_passed"] is False and verified.tier == Tier.unreviewed
    assert any("Penguins" in r for r in meta["verification"]["reasons"])


def test_a_conversation_breaking_the_rules_is_kept_unreviewed_with_its_reasons(sqlite_store):
    store = sqlite_store
    project_id = _project(store, m=1)
    conversation, spec_inputs, context, chain, index = _one_conversation(store, project_id)
    conversation.turns = [
        t for t in conversation.turns if t.content != "CANNOTANSWER"
    ]  # drop the unanswerable
    conversation.turns = [t.model_copy(update={"index": i}) for i, t in enumerate(conversation.turns)]
    verified = verify_conversation(
        ModelClient(store, project_id), conversation, spec_inputs, index, context, chain, 5
    )
    meta = verified.conversation.metadata
    assert verified.conversation.tier == Tier.unreviewed and meta["judge_passed"] is False
    problems = meta["verification"]["rules"]["problems"]
    assert "4 question/answer pairs instead of 5" in problems
    assert "no question is unanswerable (no CANNOTANSWER answer)" in problems
    assert all(f"rule: {p}" in meta["verification"]["reasons"] for p in problems)


def test_cli_generate_reports_messages_and_a_resume_command(sqlite_store):
    from typer.testing import CliRunner

    from evalcore.cli.main import app

    store = sqlite_store
    _project(store, m=1)
    runner = CliRunner()
    args = ["conversations", "generate", "--db", store.url, "--specs", "all", "--d", "30", "--turns", "3"]
    result = runner.invoke(app, [*args, "--per-spec", "2"])
    assert result.exit_code == 0, result.output
    assert "no chain of length 30" in result.output and "2 conversation(s) added" in result.output
    assert "2 silver" in result.output
    run_id = store.runs(store.projects()[0].id, kind=RUN_KIND)[0].id
    result = runner.invoke(app, ["conversations", "generate", "--db", store.url, "--resume", run_id])
    assert result.exit_code == 0 and "0 conversation(s) added, 2 already done" in result.output
    result = runner.invoke(app, ["conversations", "generate", "--db", store.url, "--generator", "nope"])
    assert result.exit_code == 1 and "unknown generator 'nope'" in result.output
    result = runner.invoke(app, ["conversations", "runs", "--db", store.url])
    assert f"{run_id}  finished  2/2 units" in result.output
