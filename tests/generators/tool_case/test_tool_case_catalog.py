"""The situation catalog (seed 004, Appendix G): 26 situations, labels as the seed's table, the seed's text
verbatim, and a team's own situations validated with file:line problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import ValidationFailed
from evalcore.generators.tool_case.catalog import (
    add_project_situations,
    builtin_situations,
    catalog,
    load_situations,
    project_situations,
)

SEED = Path("/work/shared/seeds/004_50ad4f0e30460669.txt")

# Read by hand from Appendix G's User / Tool / Agent Details columns (tool execution: c = correct,
# a = incorrect due to agent, t = incorrect due to tool; agent appropriate; user satisfied; overall).
EXPECTED = {
    "Correct": ("c", True, True, "POS"),
    "WrongTool / Silent": ("a", False, True, "NEG"),
    "BadParams / Silent": ("a", False, True, "NEG"),
    "BadParse / Silent": ("c", False, True, "NEG"),
    "Superfluous Tool Calls": ("c", False, True, "NEG"),
    "Missing Or Skipped Tool": ("c", False, True, "NEG"),
    "Security Overkill": ("c", False, True, "NEG"),
    "Info Overload": ("c", False, False, "NEG"),
    "Mis-understood Need": ("a", False, False, "NEG"),  # relabelled: "an incorrect call" (catalog.yaml)
    "Verbose Trace Leak": ("c", False, False, "NEG"),
    "Unneeded Security Gate": ("c", False, False, "NEG"),
    "Context Amnesia": ("c", False, False, "NEG"),
    "Hallucination With Access": ("c", False, False, "NEG"),
    "Wrong Tool / User Aware": ("a", False, False, "NEG"),
    "Bad Params / User Aware": ("a", False, False, "NEG"),
    "Bad Input Data": ("a", False, False, "NEG"),
    "Wrong Action Silent": ("t", True, True, "NEG"),
    "Trusted Wrong Fact": ("t", True, True, "NEG"),
    "Propagated Tool Error": ("t", False, True, "NEG"),
    "Hallucination Fallback": ("t", False, True, "NEG"),
    "Hallucinated Edit": ("t", False, True, "NEG"),
    "Tool Unavailable": ("t", True, False, "NEG"),
    "Impossible Action Suggested": ("t", True, False, "NEG"),
    "Tool Failure / User Aware": ("t", False, False, "NEG"),
    "Partial Tool Answer": ("c", False, False, "NEG"),
    "Null Tool Response": ("t", False, False, "NEG"),
}
CODES = {"c": "correct", "a": "incorrect_agent", "t": "incorrect_tool"}


def test_the_catalog_has_the_seeds_26_situations_in_order_with_their_labels():
    situations = builtin_situations()
    assert len(situations) == 26 and len({s.id for s in situations}) == 26
    assert [s.name for s in situations] == list(EXPECTED)
    for s in situations:
        code, appropriate, satisfied, overall = EXPECTED[s.name]
        assert (s.tool_execution.value, s.agent_appropriate, s.user_satisfied, s.overall) == (
            CODES[code], appropriate, satisfied, overall,
        ), s.name  # fmt: skip
        assert s.builtin and s.recipe == s.id
    # Hard negatives (satisfied but NEG) are the silent ones: 11 of 26.
    assert sum(s.hard_negative for s in situations) == 11


@pytest.mark.skipif(not SEED.exists(), reason="the seed document is not on this machine")
def test_the_descriptions_are_the_seeds_table_cells_verbatim():
    text = SEED.read_text(encoding="utf-8")
    table = text[text.index("Appendix G List of Situations") :]
    for s in builtin_situations():
        row = f"| {s.name} | {s.description} | {s.user_details} | {s.tool_details} | {s.agent_details} |"
        assert row in table, s.name


def test_a_teams_situations_load_and_join_the_catalog(tmp_path):
    path = tmp_path / "ours.yaml"
    path.write_text(
        "situations:\n"
        "  - id: double_booking\n"
        "    name: Double Booking\n"
        "    tool_execution: incorrect_agent\n"
        "    agent_appropriate: false\n"
        "    user_satisfied: true\n"
        "    overall: NEG\n"
        "    recipe: bad_params_silent\n"
        "    description: The agent books the same slot twice.\n",
        encoding="utf-8",
    )
    ours = load_situations(path)
    merged = catalog(ours)
    assert len(merged) == 27 and not merged["double_booking"].builtin
    assert merged["double_booking"].hard_negative


def test_a_bad_situation_file_names_every_problem_with_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "situations:\n"
        "  - id: Bad Id\n"  # line 2: not a slug
        "    name: X\n"
        "    tool_execution: broken\n"  # line 4: unknown label
        "    agent_appropriate: true\n"
        "    user_satisfied: true\n"
        "    overall: POS\n"
        "    description: d\n"
        "    colour: red\n"  # line 9: unknown field
        "  - id: agent_fault_but_fine\n"  # line 10: implausible (Section 2.1)
        "    name: Y\n"
        "    tool_execution: incorrect_agent\n"
        "    agent_appropriate: true\n"
        "    user_satisfied: true\n"
        "    overall: NEG\n"
        "    description: d\n",
        encoding="utf-8",
    )
    with pytest.raises(ValidationFailed) as err:
        load_situations(path)
    shown = [str(p) for p in err.value.problems]
    assert any(":2 [situations[0].id]" in p for p in shown)
    assert any(":4 [situations[0].tool_execution]" in p for p in shown)
    assert any(":9 [situations[0].colour]" in p and "unknown field" in p for p in shown)
    assert any(":10 [situations[1]]" in p and "appropriate agent" in p for p in shown)


def test_a_team_situation_cannot_reuse_a_seed_id_and_is_kept_in_the_project(sqlite_store, tmp_path):
    path = tmp_path / "clash.yaml"
    body = (
        "situations:\n  - {id: ID, name: N, tool_execution: correct, agent_appropriate: true,"
        " user_satisfied: true, overall: POS, description: d}\n"
    )
    path.write_text(body.replace("ID", "correct"), encoding="utf-8")
    sqlite_store.create_project("p", "P")
    with pytest.raises(ValidationFailed, match="seed's catalog"):
        add_project_situations(sqlite_store, "p", path)
    path.write_text(body.replace("ID", "our_case"), encoding="utf-8")
    add_project_situations(sqlite_store, "p", path)
    stored = project_situations(sqlite_store.project("p").settings)
    assert [s.id for s in stored] == ["our_case"]
