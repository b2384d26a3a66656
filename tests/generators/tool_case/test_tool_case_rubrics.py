"""SPUR and SCOPE rubrics (seed 004, Sections 3-4, Appendices C-D; issue 20, items 4-6): the rules a rubric
set keeps (refused with the field named), label estimation and metrics against hand-computed values, the
40/60 folds, offline discovery on generated conversations, Table 3's comparison, and the TRACE judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import StaleVersionError, ValidationFailed
from evalcore.generators.tool_case.catalog import builtin_situations
from evalcore.generators.tool_case.evaluation import compare, metrics, split, subset_of
from evalcore.generators.tool_case.job import generate_toolcases
from evalcore.generators.tool_case.judge import judge_conversation, read_labels
from evalcore.generators.tool_case.records import GENERATOR
from evalcore.generators.tool_case.rubrics import (
    RubricSet,
    edit_rubric_set,
    estimate_label,
    load_rubric_set,
    parse_rubric_set,
    project_rubric_sets,
    rubric_history,
    rubric_yaml,
    save_rubric_set,
    validate_rubric_set,
    with_rubric,
)
from evalcore.generators.tool_case.scope import USER_SIGNALS, Options, discover_rubrics
from evalcore.generators.tool_case.signals import SIGNALS
from evalcore.inputs import import_project
from evalcore.items.store_ops import list_conversations
from evalcore.llm.client import ModelClient

pytest_plugins = ["llm_fixtures"]
SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"
SITUATIONS = {s.id: s for s in builtin_situations()}


def _set(**change) -> dict:
    body = {
        "method": "scope",
        "areas": [{"name": "Tools"}, {"name": "User"}],
        "rubrics": [
            {"id": "p1", "area": "User", "polarity": "POS", "text": "thanks", "weight": 5},
            {"id": "p2", "area": "Tools", "polarity": "POS", "text": "right tool", "weight": 3},
            {"id": "n1", "area": "Tools", "polarity": "NEG", "text": "misread", "weight": 100, "make_or_break": True},  # noqa: E501
            {"id": "n2", "area": "User", "polarity": "NEG", "text": "complains", "weight": 6},
        ],
    }  # fmt: skip
    body.update(change)
    return body


def _fields(body: dict) -> list[str]:
    with pytest.raises(ValidationFailed) as err:
        validate_rubric_set(body)
    return [p.field for p in err.value.problems]


def test_an_invalid_rubric_set_is_refused_with_the_field_named():
    assert validate_rubric_set(_set()).of("NEG")[0].make_or_break
    weights = _set()
    weights["rubrics"][3]["weight"] = 11
    weights["rubrics"][1]["weight"] = 0
    assert _fields(weights) == ["rubrics[1].weight", "rubrics[3].weight"]
    half = _set()
    half["rubrics"][2]["weight"] = 50
    assert _fields(half) == ["rubrics[2].weight"]
    assert _fields(_set(rubrics=_set()["rubrics"][:2])) == ["rubrics"]  # no NEG rubric
    assert _fields(_set(areas=[{"name": f"A{i}"} for i in range(6)])) == ["areas"] + [
        f"rubrics[{i}].area" for i in range(4)
    ]
    crowded = _set()
    crowded["rubrics"] += [
        {"id": f"x{i}", "area": "User", "polarity": "NEG", "text": "t", "weight": 2} for i in range(5)
    ]
    assert _fields(crowded) == ["rubrics[8]"]  # a sixth NEG rubric in 'User'
    assert "rubrics[2].make_or_break" in _fields(_set(method="spur"))
    with pytest.raises(ValueError, match="weight"):
        RubricSet.model_validate(weights)  # direct construction keeps the rules too


def test_a_rubric_file_names_the_line_of_a_bad_weight():
    text = (
        "method: scope\nareas:\n  - name: Tools\nrubrics:\n"
        "  - {id: p, area: Tools, polarity: POS, text: ok, weight: 3}\n"
        "  - id: n\n    area: Tools\n    polarity: NEG\n    text: bad\n    weight: 12\n"
    )
    with pytest.raises(ValidationFailed) as err:
        parse_rubric_set(text, "rubrics.yaml")
    assert [str(p) for p in err.value.problems] == [
        "rubrics.yaml:10 [rubrics[1].weight]: must be 1-10 (or 100 when make-or-break), not 12"
    ]


def test_label_estimation_matches_hand_computed_values():
    scope = validate_rubric_set(_set())
    # POS: (5*5/5 + 3*5/5) / 2 = 4; NEG: (100*5/5 + 0) / 2 = 50 -> NEG.
    assert estimate_label(scope, {"p1": 5, "p2": 5, "n1": 5}) == ("NEG", {"POS": 4.0, "NEG": 50.0})
    # POS: (5*5/5 + 3*0) / 2 = 2.5; NEG: (6*5/5) / 2 = 3 -> NEG; with p2 at 5/5 POS is 4 -> POS.
    assert estimate_label(scope, {"p1": 5, "n2": 5})[0] == "NEG"
    assert estimate_label(scope, {"p1": 5, "p2": 5, "n2": 5}) == ("POS", {"POS": 4.0, "NEG": 3.0})
    spur = validate_rubric_set(
        {
            "method": "spur",
            "areas": [{"name": "User Satisfaction"}],
            "max_score": 10,
            "rubrics": [
                {"id": "s", "area": "User Satisfaction", "polarity": "POS", "text": "thanks"},
                {"id": "d", "area": "User Satisfaction", "polarity": "NEG", "text": "complains"},
            ],
        }
    )
    assert estimate_label(spur, {"s": 7, "d": 7})[0] == "NEG"  # SAT only when it exceeds DSAT
    assert estimate_label(spur, {"s": 8, "d": 7})[0] == "POS"


def test_metrics_take_pos_as_the_positive_class():
    pairs = [("POS", "POS"), ("POS", "NEG"), ("NEG", "POS"), ("NEG", "NEG"), ("NEG", "NEG")]
    found = metrics(pairs)
    assert found["accuracy"] == pytest.approx(3 / 5)
    assert (found["precision"], found["recall"], found["f1"]) == (0.5, 0.5, 0.5)
    assert metrics([("NEG", "NEG"), ("NEG", "POS")]) == {
        "accuracy": 0.5, "f1": None, "precision": 0.0, "recall": None,
    }  # fmt: skip


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple:
    from evalcore.store import Store

    mp = pytest.MonkeyPatch()
    mp.setenv("EVALCORE_OFFLINE", "1")
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('tc') / 'store.db'}")
    pid = import_project(store, SAMPLE).project_id
    generate_toolcases(store, pid, per_situation=3, pos_share=None, seed=1)
    conversations = [v.conversation for v in list_conversations(store, pid, generator=GENERATOR)]
    yield store, pid, conversations, ModelClient(store, pid)
    store.close()
    mp.undo()


def test_folds_split_each_label_40_60_without_overlap(generated):
    _, _, conversations, _ = generated
    train, test = split(conversations, 0, 0)
    assert len(train) + len(test) == 78 and not {c.id for c in train} & {c.id for c in test}
    assert sum(c.metadata["labels"]["overall"] == "POS" for c in train) == round(3 * 0.4)
    assert len(train) == round(3 * 0.4) + round(75 * 0.4)
    assert [c.id for c in split(conversations, 0, 0)[0]] == [c.id for c in train]
    assert [c.id for c in split(conversations, 1, 0)[0]] != [c.id for c in train]
    assert {subset_of(c) for c in conversations} == {"Easy", "Hard Neg."}


def test_offline_discovery_keeps_the_rules_of_each_method(generated):
    _, _, conversations, llm = generated
    scope = discover_rubrics(llm, conversations, "scope")
    validate_rubric_set(scope.model_dump(mode="json"))
    assert 1 <= len(scope.areas) <= 5 and any(r.make_or_break for r in scope.rubrics)
    thanks = next(r for r in scope.rubrics if r.text == SIGNALS["user_thanks"].statement)
    assert thanks.weight <= 2  # thanks follow hidden failures too: little weight for it
    spur = discover_rubrics(llm, conversations, "spur")
    assert [a.name for a in spur.areas] == ["User Satisfaction"]
    assert {r.text for r in spur.rubrics} <= {SIGNALS[c].statement for c in USER_SIGNALS}
    assert all(r.weight == 1 and not r.make_or_break for r in spur.rubrics)
    plain = discover_rubrics(llm, conversations, "scope", options=Options(weights=False))
    assert all(r.weight == 1 for r in plain.rubrics)
    no_mb = discover_rubrics(llm, conversations, "scope", options=Options(make_or_break=False))
    assert not any(r.make_or_break for r in no_mb.rubrics) and max(r.weight for r in no_mb.rubrics) == 10


def test_scope_beats_spur_on_hard_negatives_offline(generated):
    _, _, conversations, llm = generated
    result = compare(llm, conversations, folds=2, ablations=False)
    spur, scope = result.cell("SPUR", "Hard Neg.", "accuracy"), result.cell("SCOPE", "Hard Neg.", "accuracy")
    assert spur[0] == 0.0 and scope[0] > spur[0]
    assert result.cell("SCOPE", "Hard Neg.", "f1") is None
    assert result.sizes["Overall"] == 2 * (78 - 31)
    table = result.table(["SPUR", "SCOPE"])
    assert table[0] == "| Data Subset | Model | Acc. | F1 | Pre. | Rec. |" and len(table) == 2 + 6


def test_rubric_sets_are_versioned_and_a_stale_edit_is_refused(generated):
    store, pid, conversations, llm = generated
    scope = discover_rubrics(llm, conversations[:20], "scope")
    item, version = save_rubric_set(store, pid, scope, "lead")
    edited = scope.model_copy(
        update={
            "rubrics": [
                r.model_copy(update={"weight": 2}) if not r.make_or_break else r for r in scope.rubrics
            ]
        }
    )
    assert save_rubric_set(store, pid, edited, "ana", item_id=item, expected_version=version) == (item, 2)
    with pytest.raises(StaleVersionError):
        save_rubric_set(store, pid, scope, "bo", item_id=item, expected_version=version)
    loaded, now = load_rubric_set(store, item)
    assert now == 2 and loaded == edited


def test_the_offline_judge_reads_the_labels_and_the_world_state(generated):
    _, _, conversations, llm = generated
    by_situation = {c.metadata["situation"]: c for c in conversations}
    correct = by_situation["correct"]
    verdict = judge_conversation(llm, correct, SITUATIONS["correct"])
    assert verdict.matches and verdict.score == 1.0 and verdict.labels.overall == "POS"
    hidden = by_situation["wrong_action_silent"]
    assert read_labels(hidden.turns, None).overall == "POS"  # the turns alone look correct
    verdict = judge_conversation(llm, hidden, SITUATIONS["wrong_action_silent"])
    assert verdict.labels.tool_execution == "incorrect_tool" and verdict.matches
    null = by_situation["null_tool_response"]
    assert judge_conversation(llm, null, SITUATIONS["correct"]).matches is False


def test_a_model_scores_rubrics_clipped_to_the_maximum_and_missing_ones_count_zero(
    generated, llm_env, monkeypatch
):
    from evalcore.generators.tool_case.scope import score_conversation

    store, pid, conversations, _ = generated
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    scope = validate_rubric_set(_set())
    llm_env.enqueue({"scores": [{"id": "p1", "score": 9}, {"id": "n1", "score": 2}]})
    got = score_conversation(ModelClient(store, pid), scope, conversations[0], model="openai/gpt-4o-mini")
    assert got == {"p1": 5, "p2": 0, "n1": 2, "n2": 0}
    prompt = llm_env.calls[0].body["messages"][-1]["content"]
    assert "TOOL_CALL" in prompt and '"misread"' in prompt and "from 0 to 5" in prompt


def test_a_model_learns_spur_rubrics_with_three_reasons_per_conversation(generated, llm_env, monkeypatch):
    store, pid, conversations, _ = generated
    monkeypatch.delenv("EVALCORE_OFFLINE", raising=False)
    pos = next(c for c in conversations if c.metadata["labels"]["overall"] == "POS")
    neg = next(c for c in conversations if c.metadata["situation"] == "null_tool_response")
    reason = lambda p, r: {"area": "User Satisfaction", "polarity": p, "reason": r}  # noqa: E731
    llm_env.enqueue(
        {"reasons": [reason("POS", "User thanks the agent"), reason("NEG", "ignored: not the label")]},
        {"reasons": [reason("NEG", "User calls the agent useless"), reason("NEG", "User gets no answer")]},
        {"rubrics": [{"text": "The user thanks the agent.", "support": 1}]},
        {"rubrics": [{"text": "The user is left without an answer.", "support": 2}]},
    )
    spur = discover_rubrics(ModelClient(store, pid), [pos, neg], "spur", model="openai/gpt-4o-mini")
    assert [(r.polarity, r.text, r.support) for r in spur.rubrics] == [
        ("POS", "The user thanks the agent.", 1), ("NEG", "The user is left without an answer.", 2),
    ]  # fmt: skip
    assert spur.producer == "openai/gpt-4o-mini" and len(llm_env.calls) == 4
    first = llm_env.calls[0].body["messages"][-1]["content"]
    assert "Label: SAT" in first and "at most 3 reasons" in first
    summary = llm_env.calls[3].body["messages"][-1]["content"]
    assert "User calls the agent useless" in summary and "at most 10 rubrics" in summary


def test_an_edit_breaking_a_rule_is_refused_with_its_field_and_saves_nothing(generated):
    store, pid, conversations, llm = generated
    scope = discover_rubrics(llm, conversations[:20], "scope")
    item, _ = save_rubric_set(store, pid, scope, "lead")
    with pytest.raises(ValidationFailed) as err:
        edit_rubric_set(store, item, with_rubric(scope, scope.rubrics[0].id, {"weight": 11}), "ana", 1)
    assert [p.field for p in err.value.problems] == ["rubrics[0].weight"]
    negs = [r.id for r in scope.rubrics if r.polarity == "NEG"]
    body = scope.model_dump(mode="json")
    body["rubrics"] = [r for r in body["rubrics"] if r["id"] not in negs]
    with pytest.raises(ValidationFailed, match="needs at least one NEG rubric"):
        edit_rubric_set(store, item, body, "ana", 1)
    text = rubric_yaml(scope).replace(f"weight: {scope.rubrics[0].weight}\n", "weight: 0\n", 1)
    with pytest.raises(ValidationFailed) as err:
        edit_rubric_set(store, item, text, "ana", 1)
    assert err.value.problems[0].field == "rubrics[0].weight" and err.value.problems[0].line is not None
    assert load_rubric_set(store, item)[1] == 1 and len(rubric_history(store, item)) == 1
    assert edit_rubric_set(store, item, with_rubric(scope, scope.rubrics[0].id, None), "ana", 1) == 2
    assert [s.version for s in project_rubric_sets(store, pid) if s.item_id == item] == [2]
    assert len(load_rubric_set(store, item)[0].rubrics) == len(scope.rubrics) - 1
