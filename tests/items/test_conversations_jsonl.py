"""JSONL export/import of conversations and tests: round trip; every bad line reported, nothing written."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evalcore import models
from evalcore.cli.main import SAMPLE_PROJECT, app
from evalcore.errors import ValidationFailed
from evalcore.generators.doc_qa.job import generate_conversations
from evalcore.inputs import import_project
from evalcore.items.exports import write_lines
from evalcore.items.jsonl import export_jsonl, import_jsonl, parse_jsonl
from evalcore.items.store_ops import add_test, list_conversations, list_tests
from evalcore.models import Annotation, Provenance, Turn
from evalcore.specs.generation import generate_specs
from evalcore.specs.transfer import export_specs, import_specs
from evalcore.store import Store


@pytest.fixture
def filled(store) -> tuple[Store, str]:
    project_id = import_project(store, SAMPLE_PROJECT).project_id
    generate_specs(store, project_id, m=1, batch=1, from_card=False)
    generate_conversations(store, project_id, specs="all", per_spec=2, dense=False)
    first = list_conversations(store, project_id)[0].conversation
    test = models.Test(
        id="test-1",
        conversation_id=first.id,
        spec_id=first.spec_id,
        context=first.turns[:1],
        expected=first.turns[1],
        provenance=Provenance(producer="offline"),
    )
    add_test(store, project_id, test)
    return store, project_id


def test_round_trip_keeps_turns_grounding_and_tier(filled, tmp_path):
    store, project_id = filled
    original = {v.conversation.id: v.conversation for v in list_conversations(store, project_id)}
    # A rejection by an annotator changes the tier the export carries.
    rejected = next(iter(original))
    version = store.current(rejected).version
    store.annotate(rejected, [Annotation(item_kind="conversation", item_id=rejected, label="reject",
                                         reason="wrong answer", author="dana")], "dana", version)  # fmt: skip
    path = tmp_path / "conversations.jsonl"
    assert write_lines(export_jsonl(store, project_id), path) == 2
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {line["tier"] for line in lines if line["id"] == rejected} == {"rejected"}
    assert all(line["turns"][0]["query_type"] and line["turns"][1]["grounding"] for line in lines)

    other = Store(f"sqlite:///{tmp_path / 'other.db'}")
    import_project(other, SAMPLE_PROJECT, "copy")
    with pytest.raises(ValidationFailed, match=r"conversations.jsonl:1 \[spec_id\]: no spec"):
        import_jsonl(other, "copy", path)  # the specs they exercise come first, with their ids
    import_specs(other, "copy", export_specs(store, project_id, "yaml"), "specs.yaml", "ana")
    result = import_jsonl(other, "copy", path)
    assert sorted(result.conversations) == sorted(original) and result.tests == []
    for view in list_conversations(other, "copy"):
        before = original[view.conversation.id]
        assert view.conversation.turns == before.turns and view.conversation.metadata == before.metadata
        assert view.conversation.tier.value == ("rejected" if before.id == rejected else before.tier.value)
    tests_path = tmp_path / "tests.jsonl"
    write_lines(export_jsonl(store, project_id, "test"), tests_path)
    assert import_jsonl(other, "copy", tests_path, kind="test").tests == ["test-1"]
    assert list_tests(other, "copy")[0] == list_tests(store, project_id)[0]


def test_every_bad_line_is_reported_with_its_line_and_nothing_is_written(filled, tmp_path, snapshot):
    store, project_id = filled
    good = list(export_jsonl(store, project_id))
    bad_turns = json.loads(good[1])
    bad_turns["id"] = "conv-new"
    bad_turns["turns"][1]["index"] = 5
    unknown = json.loads(good[1])
    unknown["id"] = "conv-other"
    unknown["colour"] = "blue"
    lines = [
        good[0],  # 1: already in the store
        "{not json",  # 2
        "",  # 3: blank lines are skipped
        json.dumps(bad_turns),  # 4
        json.dumps(unknown),  # 5
        json.dumps({"id": "x"}),  # 6: neither a conversation nor a test
        json.dumps(["a", "list"]),  # 7
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    before = snapshot(store)
    with pytest.raises(ValidationFailed) as caught:
        import_jsonl(store, project_id, path)
    found = {(p.line, p.field) for p in caught.value.problems}
    assert found == {(2, None), (4, "turns"), (5, "colour"), (6, None), (7, None)}
    assert all(p.file == "bad.jsonl" for p in caught.value.problems)
    assert "bad.jsonl:4 [turns]: turn indexes must be 0, 1, 2, ... in order" in str(caught.value)
    assert snapshot(store) == before

    path.write_text(
        good[0] + "\n" + good[1].replace('"query_type": "SINGLE-DOC"', '"query_type": 7', 1) + "\n"
    )
    with pytest.raises(ValidationFailed) as caught:
        import_jsonl(store, project_id, path)
    assert [(p.line, p.field) for p in caught.value.problems] == [(2, "turns.0.query_type")]
    path.write_text(good[0] + "\n")  # valid, but its id is taken: refused, never overwritten
    with pytest.raises(ValidationFailed, match=r"bad.jsonl:1 \[id\]: an item with id"):
        import_jsonl(store, project_id, path)
    assert snapshot(store) == before


def test_duplicate_ids_and_wrong_kinds_in_one_file():
    turn = Turn(index=0, role="user", content="hi").model_dump(mode="json")
    line = json.dumps({"id": "c1", "generator": "doc_qa", "turns": [turn], "provenance": {"producer": "x"}})
    with pytest.raises(ValidationFailed) as caught:
        parse_jsonl(f"{line}\n{line}\n", "f.jsonl")
    assert [(p.line, str(p)) for p in caught.value.problems] == [
        (2, "f.jsonl:2 [id]: id 'c1' already used on line 1")
    ]
    with pytest.raises(ValidationFailed, match="not a test"):
        parse_jsonl(line, "f.jsonl", kind="test")


def test_cli_export_and_import(filled, tmp_path):
    store, _ = filled
    runner = CliRunner()
    out = tmp_path / "c.jsonl"
    result = runner.invoke(app, ["conversations", "export", "--db", store.url, "-o", str(out)])
    assert result.exit_code == 0 and "wrote 2 line(s)" in result.output
    result = runner.invoke(app, ["conversations", "import", str(out), "--db", store.url])
    assert result.exit_code == 1 and "already in the store" in result.output


def test_a_test_that_cannot_be_played_is_refused_with_its_line_and_nothing_is_written(filled, tmp_path):
    store, project_id = filled
    first = list_conversations(store, project_id)[0].conversation
    ask = Turn(index=0, role="user", content="Is the RC-04 store open on Sunday?")

    def test(i: int, **fields) -> str:
        record = models.Test(id=f"t-{i}", conversation_id=first.id, context=[ask],
                             expected=Turn(index=1, role="assistant", content="Yes."),
                             provenance=Provenance(producer="offline"))  # fmt: skip
        return json.dumps({**record.model_dump(mode="json"), **fields})

    call = {"index": 1, "role": "tool_call", "tool_name": "no_such_tool", "arguments": {}}
    lines = [test(1), test(2, context=[]), test(3, expected=call), test(4, conversation_id="conv-nowhere")]
    path = tmp_path / "tests.jsonl"
    path.write_text("\n".join(lines) + "\n")
    before = len(list_tests(store, project_id))
    with pytest.raises(ValidationFailed) as failed:
        import_jsonl(store, project_id, path)
    assert [(p.line, p.field) for p in failed.value.problems] == [
        (2, "context"),
        (3, "expected.tool_name"),
        (4, "conversation_id"),
    ]
    assert "no tool 'no_such_tool'" in str(failed.value) and "no conversation 'conv-nowhere'" in str(
        failed.value
    )
    assert len(list_tests(store, project_id)) == before, "a bad file changes nothing"
