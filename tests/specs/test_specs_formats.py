"""Specs as YAML and Gherkin: round trips, and file:line errors for bad files."""

import pytest

from evalcore.errors import ValidationFailed
from evalcore.models import Provenance, Spec
from evalcore.specs.formats import from_gherkin, from_yaml, read_specs, to_gherkin, to_yaml


def _spec(i: int, **extra) -> Spec:
    return Spec(
        id=f"spec-{i}",
        scenario=f"Return window for e-bikes {i}",
        given="a customer had bought an e-bike 10 days ago",
        when="the customer asks to return it",
        then="the assistant should say e-bikes can be returned within 14 days",
        category="policy",
        documents=["return-policy", "products"],
        provenance=Provenance(producer="offline/heuristic"),
        **extra,
    )


def test_yaml_round_trip_keeps_every_field():
    specs = [_spec(1), _spec(2)]
    back = from_yaml(to_yaml(specs), "specs.yaml")
    assert [(s.id, s.scenario, s.given, s.when, s.then, s.category, s.documents) for s in back] == [
        (s.id, s.scenario, s.given, s.when, s.then, s.category, s.documents) for s in specs
    ]


def test_gherkin_round_trip_keeps_ids_categories_and_documents():
    specs = [_spec(1), _spec(2)]
    text = to_gherkin(specs, "Ridgeline Assist")
    assert text.startswith("Feature: Ridgeline Assist")
    back = from_gherkin(text, "specs.feature")
    assert [(s.id, s.category, s.documents, s.then) for s in back] == [
        (s.id, s.category, s.documents, s.then) for s in specs
    ]


def test_gherkin_and_but_continue_the_previous_step():
    text = (
        "Feature: x\n  Scenario: Late fee\n    Given a rental\n    And it was late\n"
        "    When asked\n    Then pay\n    But no more than a day\n"
    )
    (spec,) = from_gherkin(text, "a.feature")
    assert spec.given == "a rental and it was late"
    assert spec.then == "pay but no more than a day"


def test_gherkin_problems_are_reported_with_lines_all_at_once():
    text = "\n".join(
        [
            "Feature: x",
            "  Given a step before any scenario",  # line 2
            "  Scenario: No then",  # line 3
            "    Given a",
            "    When b",
            "  Scenario: Fine",
            "    Given a",
            "    When b",
            "    Then c",
            "    Whatever this is",  # line 10
        ]
    )
    with pytest.raises(ValidationFailed) as err:
        from_gherkin(text, "bad.feature")
    found = {(p.line, p.message.split(":")[0]) for p in err.value.problems}
    assert (2, "step before any Scenario") in found
    assert (3, "scenario has no Then step") in found
    assert (10, "not a Gherkin line") in found
    assert len(err.value.problems) == 3


def test_yaml_problems_name_the_line_and_field():
    text = (
        "- scenario: ok\n  given: a\n  when: b\n  then: c\n"
        "- scenario: broken\n  given: a\n  then: c\n  colour: red\n"
    )
    with pytest.raises(ValidationFailed) as err:
        from_yaml(text, "specs.yaml")
    problems = {(p.field, p.line) for p in err.value.problems}
    assert ("[1].when", 5) in problems
    assert ("[1].colour", 8) in problems


def test_yaml_syntax_error_and_unknown_file_type():
    with pytest.raises(ValidationFailed) as err:
        from_yaml("- scenario: [unclosed\n", "specs.yaml")
    assert err.value.problems[0].line is not None
    with pytest.raises(ValidationFailed, match="unsupported spec file"):
        read_specs("", "specs.txt")
