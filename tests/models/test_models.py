"""The shared records: the names DESIGN.md fixes, provenance, and the validation inputs rely on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from evalcore.errors import Problem, StaleVersionError, ValidationFailed
from evalcore.models import (
    Annotation,
    AnnotationLabel,
    Conversation,
    Document,
    DocumentKind,
    Procedure,
    ProcedureStep,
    Provenance,
    Spec,
    SystemCard,
    Tier,
    Tool,
    Turn,
    TurnRole,
)
from evalcore.models.common import content_hash


def test_tiers_are_exactly_the_design_names():
    assert [t.value for t in Tier] == ["unreviewed", "silver", "gold", "rejected"]


def test_turn_roles_are_exactly_the_design_names():
    assert [r.value for r in TurnRole] == ["user", "assistant", "tool_call", "tool_result"]


def test_document_kinds_and_annotation_labels():
    assert [k.value for k in DocumentKind] == ["text", "table", "policy"]
    assert [label.value for label in AnnotationLabel] == ["accept", "reject", "reopen"]


def test_provenance_of_a_person():
    made = Provenance.human("alice", inputs=["spec-1"])
    assert (made.producer, made.provider, made.inputs) == ("human:alice", "human", ["spec-1"])
    assert made.is_human and not made.is_offline
    assert made.created_at.tzinfo is not None


def test_provenance_defaults_to_offline():
    made = Provenance(producer="offline")
    assert made.is_offline and not made.is_human
    assert Provenance(producer="gpt-4o-mini", provider="openai").is_offline is False


def test_a_table_document_needs_columns():
    with pytest.raises(ValidationError, match="at least one column"):
        Document(id="prices", kind="table", title="Prices")
    table = Document(id="prices", kind="table", title="Prices", columns=["a"], rows=[{"a": "1"}])
    assert table.kind is DocumentKind.table
    assert Document(id="faq", kind="text", title="FAQ").columns == []


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (Provenance, {"producer": "offline", "modle": "x"}),
        (Document, {"id": "a", "kind": "text", "title": "A", "colour": "red"}),
        (Turn, {"index": 0, "role": "user", "speaker": "me"}),
        (SystemCard, {"id": "s", "chatbot_info": {"name": "n", "description": "d", "langauge": "en"}}),
    ],
    ids=["provenance", "document", "turn", "nested-chatbot-info"],
)
def test_unknown_fields_are_refused(model, fields):
    with pytest.raises(ValidationError) as caught:
        model.model_validate(fields)
    assert [e["type"] for e in caught.value.errors()] == ["extra_forbidden"]


def test_enums_are_checked_and_parsed():
    assert Turn(index=0, role="tool_call").role is TurnRole.tool_call
    with pytest.raises(ValidationError):
        Turn(index=0, role="system")
    with pytest.raises(ValidationError):
        Turn(index=-1, role="user")
    conv = Conversation(id="c", generator="doc_qa", provenance=Provenance(producer="offline"))
    assert conv.tier is Tier.unreviewed
    with pytest.raises(ValidationError):
        Conversation(id="c", generator="doc_qa", tier="platinum", provenance=Provenance(producer="offline"))


def test_tool_names_are_identifiers():
    Tool(name="book_repair2", description="d", parameters={"type": "object"})
    with pytest.raises(ValidationError, match="letters, digits and underscores"):
        Tool(name="book repair", description="d", parameters={"type": "object"})


def test_procedure_api_steps_name_a_tool_and_apis_are_listed_in_order():
    with pytest.raises(ValidationError, match="'api' field"):
        ProcedureStep(kind="api")
    with pytest.raises(ValidationError):
        Procedure(name="p", intent="i", steps=[])
    procedure = Procedure(
        name="p",
        intent="i",
        steps=[
            ProcedureStep(kind="api", api="lookup"),
            ProcedureStep(kind="message", text="hi"),
            ProcedureStep(kind="api", api="book"),
            ProcedureStep(kind="api", api="lookup"),
        ],
    )
    assert procedure.apis == ["lookup", "book"]


def test_records_round_trip_through_json():
    spec = Spec(id="s1", scenario="Refund", given="g", when="w", then="t", provenance=Provenance.human("bob"))
    assert Spec.model_validate(spec.model_dump(mode="json")) == spec
    note = Annotation(item_kind="conversation", item_id="c1", label="reject", reason="wrong", author="ann")
    assert Annotation.model_validate_json(note.model_dump_json()) == note


def test_content_hash_ignores_key_order_and_sees_values():
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 2})
    assert len(content_hash("x")) == 64


def test_problems_and_stale_errors_read_as_one_line_each():
    problem = Problem("proj/system.yaml", "required field is missing", 4, "chatbot_info.name")
    assert str(problem) == "proj/system.yaml:4 [chatbot_info.name]: required field is missing"
    assert str(Problem("proj/a.pdf", "unsupported")) == "proj/a.pdf: unsupported"
    failed = ValidationFailed([problem, Problem("proj/a.pdf", "unsupported")], "project folder proj")
    assert str(failed).splitlines() == [
        "2 problem(s) in the project folder proj; nothing was written:",
        "  proj/system.yaml:4 [chatbot_info.name]: required field is missing",
        "  proj/a.pdf: unsupported",
    ]
    stale = StaleVersionError(
        "spec", "s1", "Refund", 1, 2, "alice", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    )
    assert str(stale).startswith(
        "Spec 'Refund' was changed by alice at 2026-01-02 03:04:05 (version 2) after you opened version 1;"
    )
