"""Personas (issue 18, item 1): generated from the system card (offline and through a model), ChatChecker
persona YAML in and out."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from evalcore.errors import StaleVersionError, UsageError, ValidationFailed
from evalcore.generators.simulation.personas import (
    GENERATE_PERSONAS,
    card_topics,
    edit_persona,
    export_personas,
    generate_personas,
    import_personas,
    list_personas,
    offline_personas,
    persona_name,
    persona_version,
    profile_fields,
)
from evalcore.inputs import import_project
from evalcore.inputs.paths import path_inside

pytest_plugins = ["llm_fixtures"]  # fixtures: llm_server, llm_env, project
ROOT = Path(__file__).resolve().parents[3]
REFERENCE = Path("/work/shared/reference/chatchecker")
RUN = REFERENCE / "runs/study_goal_assistant/paper_standard_2025-05-19_11-01-55_seed_1"
CARD = yaml.safe_load((ROOT / "data/sample/system.yaml").read_text())["chatbot_info"]


def test_topics_are_the_items_of_the_cards_task_and_the_lists_of_its_description():
    assert card_topics(CARD) == [
        "product and sizing questions", "order tracking", "returns", "warranty claims",
        "workshop bookings and bike rentals",
    ]  # fmt: skip
    goal = yaml.safe_load((REFERENCE / "study_goal_assistant_config.yaml").read_text())["chatbot_info"]
    assert {"personal development", "health and fitness", "career advancement"} <= set(card_topics(goal))


def test_offline_personas_are_written_from_the_card_and_challenging_ones_do_not_cooperate():
    standard = offline_personas(
        {"chatbot_info": CARD, "persona_type": "standard", "count": 5}, random.Random(1)
    )
    challenging = offline_personas(
        {"chatbot_info": CARD, "persona_type": "challenging", "count": 5}, random.Random(1)
    )
    topics = card_topics(CARD)
    for persona in standard.personas + challenging.personas:
        assert any(t in persona.task for t in topics), persona.task
        lines = persona.background_info + persona.interaction_style
        assert all(" you" in f" {line.lower()}" for line in lines), "written in the second person"
    assert len({p.name for p in standard.personas}) == 5 and len({p.task for p in standard.personas}) > 1
    behaviours = [s for p in challenging.personas for s in p.interaction_style]
    assert sum("change your mind" in s or "off topic" in s or "fragments" in s for s in behaviours) >= 2
    assert any(
        "Cannot" not in b and "expect the chatbot to" in b
        for p in challenging.personas
        for b in p.background_info
    )
    mean = {
        kind: sum(["low", "medium", "high"].index(p.personality.agreeableness) for p in out.personas) / 5
        for kind, out in (("standard", standard), ("challenging", challenging))
    }
    assert mean["challenging"] < mean["standard"]


def test_offline_challenging_personas_are_built_around_one_listing_8_behaviour_each_as_the_seeds_are():
    out = offline_personas(
        {"chatbot_info": CARD, "persona_type": "challenging", "count": 6}, random.Random(3)
    )
    adjectives = [p.name.split(" the ")[1].split()[0] for p in out.personas]
    assert sorted(adjectives) == [
        "Confused",
        "Contrary",
        "Headstrong",
        "Impatient",
        "Indecisive",
        "Sarcastic",
    ]
    for persona, adjective in zip(out.personas, adjectives, strict=True):
        assert persona.name.endswith(f"the {adjective} Customer"), (
            "a nickname, as 'Ava the Sarcastic Traveler'"
        )
        assert len(persona.interaction_style) == 3 and all(
            s.startswith("You ") for s in persona.interaction_style
        )
    impatient = next(p for p in out.personas if "Impatient" in p.name)
    assert "capital letters" in impatient.interaction_style[0]
    assert "take control" in impatient.interaction_style[2], "and one behaviour of the opposite theme"
    assert (impatient.personality.neuroticism, impatient.personality.agreeableness) == ("high", "low")
    assert "You hate waiting and expect an answer at once." in impatient.background_info


def test_generated_personas_are_numbered_after_the_projects_own(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, ROOT / "data/sample").project_id
    generate_personas(sqlite_store, pid, standard=2, challenging=1)
    generate_personas(sqlite_store, pid, standard=1, seed=5)
    ids = sorted(p.persona_id for p in list_personas(sqlite_store, pid).values())
    assert ids == [
        "generated_challenging_persona_01", "generated_standard_persona_01", "generated_standard_persona_02",
        "generated_standard_persona_03",
    ]  # fmt: skip


def test_a_model_writes_the_personas_when_one_is_configured(project, llm_env):
    made = {"name": "Noor Haddad", "gender": "female", "age": 41, "background_info": ["You run a bakery."],
            "personality": {t: "medium" for t in ("openness", "conscientiousness", "extraversion",
                                                  "agreeableness", "neuroticism")},
            "interaction_style": ["You write short messages."], "task": "Ask about returns."}  # fmt: skip
    llm_env.enqueue({"personas": [made]})
    ids = generate_personas(project, "p1", challenging=1, model="openai/gpt-4o-mini")
    persona = list_personas(project, "p1")[ids[0]]
    assert (persona.persona_id, persona.type) == ("generated_challenging_persona_01", "challenging")
    assert persona.task == "Ask about returns." and persona.profile.name == "Noor Haddad"
    prompt = llm_env.completed()[0].body["messages"][-1]["content"]
    assert "Generate 1 diverse challenging user personas" in prompt and "Challenging user personas" in prompt
    assert GENERATE_PERSONAS.prompt_version == "2"


def test_chatchecker_persona_files_import_and_export_unchanged(project, tmp_path):
    ids = import_personas(project, "p1", REFERENCE / "generated_standard_persona_01.yaml")
    ids += import_personas(project, "p1", RUN / "generated_standard_persona_02" / "persona_info.yaml")
    assert len(ids) == 2
    written = export_personas(project, "p1", tmp_path / "out")
    assert [p.name for p in written] == [
        "generated_standard_persona_01.yaml",
        "generated_standard_persona_02.yaml",
    ]
    original = yaml.safe_load((REFERENCE / "generated_standard_persona_01.yaml").read_text())
    assert yaml.safe_load(written[0].read_text()) == original
    assert import_personas(project, "p1", tmp_path / "out") and len(list_personas(project, "p1")) == 4


def test_a_bad_persona_file_is_reported_with_its_field_and_nothing_is_imported(project, tmp_path):
    (tmp_path / "a.yaml").write_text("persona_id: x\ntype: standard\ntask: t\n")
    (tmp_path / "b.yaml").write_text((REFERENCE / "generated_standard_persona_01.yaml").read_text())
    with pytest.raises(ValidationFailed) as error:
        import_personas(project, "p1", tmp_path)
    assert "a.yaml" in str(error.value) and "profile" in str(error.value)
    assert list_personas(project, "p1") == {}


@pytest.mark.parametrize("bad_id", ["../../x", "/tmp/evil", "..", ".hidden", "a/b", "C:\\x", ""])
def test_a_persona_id_with_path_parts_is_refused_on_import_and_nothing_is_written(project, tmp_path, bad_id):
    body = yaml.safe_load((REFERENCE / "generated_standard_persona_01.yaml").read_text())
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "p.yaml").write_text(yaml.safe_dump({**body, "persona_id": bad_id}, sort_keys=False))
    with pytest.raises(ValidationFailed) as error:
        import_personas(project, "p1", tmp_path / "in")
    assert str(error.value).startswith(f"{tmp_path / 'in' / 'p.yaml'}:1 [persona_id]")
    assert list_personas(project, "p1") == {}
    export_personas(project, "p1", tmp_path / "out" / "deep")
    assert [p.name for p in tmp_path.rglob("*.yaml")] == ["p.yaml"]


def test_an_export_path_is_refused_when_it_would_leave_its_folder(tmp_path):
    assert path_inside(tmp_path, "a.yaml", "persona_id") == (tmp_path / "a.yaml").resolve()
    for name in ("../x.yaml", "/etc/x.yaml", "sub/x.yaml", "..", ".x.yaml"):
        with pytest.raises(UsageError, match=r"^persona_id '"):
            path_inside(tmp_path, name, "persona_id")


def test_an_edit_is_validated_field_by_field_and_saved_as_a_new_version(sqlite_store, monkeypatch):
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    pid = import_project(sqlite_store, ROOT / "data/sample").project_id
    [item] = generate_personas(sqlite_store, pid, standard=1)
    before = list_personas(sqlite_store, pid)[item]
    fields = {"task": "Rent an e-bike.", "background_info": ["You live in Harbor Point.", " "],
              "interaction_style": ["Short messages."], "personality": {"openness": "high"}}  # fmt: skip
    with pytest.raises(ValidationFailed) as bad:
        bad_fields = {**fields, "task": " ", "personality": {"grit": "high"}}
        edit_persona(sqlite_store, item, "rosa", 1, **bad_fields, name="", age=130)
    assert sorted(p.field for p in bad.value.problems) == [
        "name",
        "profile.age",
        "profile.personality",
        "task",
    ]
    assert persona_version(sqlite_store, item) == 1, "nothing saved"
    version = edit_persona(sqlite_store, item, "rosa", 1, **fields, name="Ines Ruiz", gender="", age=52)
    edited = list_personas(sqlite_store, pid)[item]
    assert version == 2 and sqlite_store.current(item).author == "rosa"
    assert (edited.task, edited.profile.name, edited.profile.gender, edited.profile.age) == (
        "Rent an e-bike.", "Ines Ruiz", None, 52,
    )  # fmt: skip
    assert edited.profile.background_info == ["You live in Harbor Point."]
    assert edited.profile.personality == {"openness": "high"} and edited.persona_id == before.persona_id
    with pytest.raises(StaleVersionError):
        edit_persona(sqlite_store, item, "ann", 1, **fields)


def test_a_text_profile_is_read_named_by_its_id_and_edited_as_text(project, tmp_path):
    persona = (
        "persona_id: p_text\ntype: adversarial\nprofile: A retired sailor, terse, never polite.\ntask: t\n"
    )
    (tmp_path / "p_text.yaml").write_text(persona)
    [item] = import_personas(project, "p1", tmp_path / "p_text.yaml")
    stored = list_personas(project, "p1")[item]
    assert (stored.type, stored.profile, persona_name(stored)) == (
        "adversarial", "A retired sailor, terse, never polite.", "p_text",
    )  # fmt: skip
    assert profile_fields(stored.model_dump()) == {"interaction_style": [stored.profile]}
    with pytest.raises(ValidationFailed) as bad:
        edit_persona(project, item, "rosa", 1, task="t", name="Sam", text=" ")
    assert sorted(p.field for p in bad.value.problems) == ["profile", "profile.name"]
    edit_persona(project, item, "rosa", 1, task="Find a berth.", text="A retired sailor.")
    edited = list_personas(project, "p1")[item]
    assert (edited.task, edited.profile) == ("Find a berth.", "A retired sailor.")
    export_personas(project, "p1", tmp_path / "out")
    assert yaml.safe_load((tmp_path / "out" / "p_text.yaml").read_text())["profile"] == "A retired sailor."
