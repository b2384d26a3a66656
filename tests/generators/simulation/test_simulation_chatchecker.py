"""ChatChecker run folders in and out (seed 002; issue 18, item 6) and the CLI a CI job calls: the
published run imports with its annotations, ratings and personas, its statistics come out equal to the
published files, an export reads back as the same run, and a bad folder is refused whole."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from chatchecker_reference import assert_same, published_summary, reference_run
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.errors import NotFoundError, ValidationFailed
from evalcore.generators.simulation import (
    GENERATOR,
    RUN_KIND,
    export_chatchecker_run,
    import_chatchecker_run,
    load_simulation_run,
    simulation_statistics,
)
from evalcore.generators.simulation.personas import list_personas, persona_name
from evalcore.generators.simulation.views import summaries
from evalcore.items.store_ops import list_conversations
from evalcore.models import Run, RunStatus
from evalcore.store import Store

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cli.db'}"


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    """A copy of the published run, to break or to change."""
    return Path(shutil.copytree(reference_run(), tmp_path / "runs" / reference_run().name))


def folder_data(root: Path) -> dict[str, object]:
    """Every YAML file of a folder, parsed, by relative path."""
    return {
        p.relative_to(root).as_posix(): yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted(root.rglob("*.yaml"))
    }


def footprint(store: Store) -> tuple:
    """Everything an import could write: projects, their runs and their items."""
    projects = store.projects()
    return (
        [p.id for p in projects],
        [(r.id, r.status) for p in projects for r in store.runs(p.id)],
        [store.count_items(p.id) for p in projects],
    )


# ------------------------------------------------------------------------------------------------ the CLI


def test_cli_import_then_stats_json_equals_the_published_statistics(db):
    imported = runner.invoke(app, ["simulations", "import", str(reference_run()), "--db", db])
    assert imported.exit_code == 0, imported.output
    run_id = imported.stdout.strip().splitlines()[-1]
    assert run_id.startswith("run-")
    shown = runner.invoke(app, ["simulations", "stats", run_id, "--json", "--db", db])
    assert shown.exit_code == 0, shown.output
    assert_same(json.loads(shown.stdout), published_summary())
    table = runner.invoke(app, ["simulations", "stats", run_id, "--db", db])
    assert "n_unique_breakdown_types" in table.stdout and "rating naturalness" in table.stdout
    twice = runner.invoke(app, ["simulations", "import", str(reference_run()), "--db", db])
    assert twice.exit_code == 0, twice.output
    assert twice.stdout.splitlines() == [
        f"project study_goal_assistant: this run was imported before as {run_id}; nothing added",
        run_id,
    ]


def test_cli_help_names_the_project_rule_and_unknown_runs_are_one_line(db):
    helped = runner.invoke(app, ["simulations", "import", "--help"])
    assert helped.exit_code == 0 and "created if missing" in helped.output and "--db" in helped.output
    runner.invoke(app, ["init", "--db", db])
    unknown = runner.invoke(app, ["simulations", "stats", "run-nope", "--json", "--db", db])
    assert unknown.exit_code == 1
    assert unknown.output.strip() == "error: no run 'run-nope' in the store"


# ------------------------------------------------------------------------------------------- the library


def test_import_stores_dialogues_annotations_ratings_and_personas(sqlite_store):
    result = import_chatchecker_run(sqlite_store, reference_run())
    assert (result.project_id, result.project_created) == ("study_goal_assistant", True)
    assert (result.dialogues, result.personas) == (10, 10)
    run = sqlite_store.run(result.run_id)
    assert run.kind == RUN_KIND and run.status == RunStatus.finished
    assert run.params["chatchecker_run_id"] == reference_run().name
    assert sqlite_store.count_items(result.project_id) == {"conversation": 10, "persona": 10}

    views = list_conversations(sqlite_store, result.project_id, generator=GENERATOR)
    first = next(v.conversation for v in views if v.conversation.metadata["user_name"].endswith("_02"))
    assert [t.role.value for t in first.turns[:2]] == ["assistant", "user"]
    broken = first.turns[28]  # turn_id 29 in the file: the breakdown of this dialogue
    assert broken.metadata["breakdown"]["decision"] == "breakdown"
    assert broken.metadata["breakdown"]["breakdown_types"] == ["Semantic error"]
    assert first.metadata["ratings"]["naturalness"]["rating"] == 5
    assert first.metadata["finish_reason"] == "chatbot_ended_chat"
    assert first.provenance.producer == "gpt-4o-2024-08-06" and not first.provenance.is_offline

    sim = load_simulation_run(sqlite_store, result.run_id)
    assert sim.personas["generated_standard_persona_01"].profile.name == "Emma Thompson"
    assert_same(simulation_statistics(sqlite_store, result.run_id), published_summary())


def test_import_on_both_backends(store):
    result = import_chatchecker_run(store, reference_run(), "team")
    assert_same(simulation_statistics(store, result.run_id), published_summary())


def test_an_existing_project_is_used_as_it_is(sqlite_store):
    sqlite_store.create_project("team", "The team's project")
    result = import_chatchecker_run(sqlite_store, reference_run(), "team")
    assert (result.project_id, result.project_created) == ("team", False)
    assert sqlite_store.project("team").title == "The team's project"
    assert simulation_statistics(sqlite_store, result.run_id)["num_dialogues"] == 10


def test_importing_the_same_run_twice_says_so_and_adds_nothing(sqlite_store, tmp_path):
    first = import_chatchecker_run(sqlite_store, reference_run())
    conversations = len(list_conversations(sqlite_store, first.project_id))
    moved = tmp_path / "elsewhere"  # the same run from another folder is still the same run
    shutil.copytree(reference_run(), moved)
    again = import_chatchecker_run(sqlite_store, moved)
    assert (again.already, again.run_id, again.dialogues) == (True, first.run_id, 0)
    assert len(sqlite_store.runs(first.project_id, kind="simulation")) == 1
    assert len(list_conversations(sqlite_store, first.project_id)) == conversations
    other = import_chatchecker_run(sqlite_store, moved, "elsewhere")  # another project takes its own copy
    assert not other.already and other.run_id != first.run_id


def test_another_run_of_the_same_personas_adds_no_persona_twice(sqlite_store, run_copy, tmp_path):
    first = import_chatchecker_run(sqlite_store, reference_run())
    personas = list_personas(sqlite_store, first.project_id)
    dialogue = next(run_copy.glob("generated_standard_persona_*/dialogue_*.yaml"))
    data = yaml.safe_load(dialogue.read_text(encoding="utf-8"))
    data["chat_history"][0]["content"] += " (another seed)"  # another run, the same ten personas
    dialogue.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    second = import_chatchecker_run(sqlite_store, run_copy, first.project_id)
    assert not second.already and second.run_id != first.run_id
    assert list_personas(sqlite_store, first.project_id) == personas
    run = load_simulation_run(sqlite_store, second.run_id)
    assert {d.persona_item for d in run.dialogues} <= set(personas)
    assert len(export_chatchecker_run(sqlite_store, second.run_id, tmp_path / "out")) == 23


def test_two_runs_of_one_chatbot_are_named_by_their_chatchecker_run_ids(sqlite_store, run_copy):
    first = import_chatchecker_run(sqlite_store, reference_run())
    info = run_copy / "simulation_run_info.yaml"
    info.write_text(info.read_text(encoding="utf-8").replace("seed_1", "seed_2"), encoding="utf-8")
    second = import_chatchecker_run(sqlite_store, run_copy, first.project_id)
    runs = [sqlite_store.run(r) for r in (first.run_id, second.run_id)]
    assert [s.name for s in summaries(sqlite_store, first.project_id, runs)] == [
        "ChatChecker paper_standard_2025-05-19_11-01-55_seed_1",
        "ChatChecker paper_standard_2025-05-19_11-01-55_seed_2",
    ]


def test_export_writes_the_published_folder_back(sqlite_store, tmp_path):
    result = import_chatchecker_run(sqlite_store, reference_run())
    out = tmp_path / "exported"
    written = export_chatchecker_run(sqlite_store, result.run_id, out)
    assert len(written) == 23  # 10 dialogues, 10 persona files, 3 run files
    expected = folder_data(reference_run())
    expected.pop("config.yaml", None)  # the target's config sits beside the run, not in it
    assert_same(folder_data(out), expected)


def test_import_of_an_export_round_trips(sqlite_store, tmp_path):
    first = import_chatchecker_run(sqlite_store, reference_run())
    out = tmp_path / "exported"
    export_chatchecker_run(sqlite_store, first.run_id, out)
    second = import_chatchecker_run(sqlite_store, out, "copy")
    assert not second.already
    a, b = load_simulation_run(sqlite_store, first.run_id), load_simulation_run(sqlite_store, second.run_id)
    plain = {"persona_item"}  # new items, new ids
    assert [d.model_dump(exclude=plain) for d in a.dialogues] == [
        d.model_dump(exclude=plain) for d in b.dialogues
    ]
    assert a.personas == b.personas
    assert simulation_statistics(sqlite_store, second.run_id) == simulation_statistics(
        sqlite_store, first.run_id
    )


def test_export_refuses_a_folder_with_files(sqlite_store, tmp_path):
    result = import_chatchecker_run(sqlite_store, reference_run())
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(Exception, match="already exists and is not an empty folder"):
        export_chatchecker_run(sqlite_store, result.run_id, tmp_path / "taken")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".taken")] == []


def test_other_user_files_and_unknown_types_are_kept(sqlite_store, run_copy, tmp_path):
    tester = run_copy / "generated_standard_persona_03"
    (tester / "persona_info.yaml").unlink()
    (tester / "info.yaml").write_text("tester: ignore_request\ninstructions: Ask twice.\n")
    dialogue = tester / "dialogue_1.yaml"
    data = yaml.safe_load(dialogue.read_text())
    data["chat_history"][2]["breakdown_annotation"]["breakdown_types"] = ["Made-up type"]
    dialogue.write_text(yaml.safe_dump(data, sort_keys=False))
    for name in ("simulation_run_info.yaml", "breakdown_detection_stats.yaml", "evaluation_stats.yaml"):
        (run_copy / name).unlink()  # only the dialogues are required

    result = import_chatchecker_run(sqlite_store, run_copy)
    assert (result.project_id, result.personas) == (run_copy.name, 9)
    sim = load_simulation_run(sqlite_store, result.run_id)
    kept = next(d for d in sim.dialogues if d.user_name == tester.name)
    assert kept.turns[2].breakdown.breakdown_types == ["Made-up type"]
    assert kept.user_file == {
        "name": "info.yaml",
        "content": {"tester": "ignore_request", "instructions": "Ask twice."},
    }

    out = tmp_path / "out"
    export_chatchecker_run(sqlite_store, result.run_id, out)
    assert yaml.safe_load((out / tester.name / "info.yaml").read_text())["tester"] == "ignore_request"
    written = yaml.safe_load((out / tester.name / "dialogue_1.yaml").read_text())
    assert written["chat_history"][2]["breakdown_annotation"]["breakdown_types"] == ["Made-up type"]
    assert (out / "breakdown_detection_stats.yaml").is_file() and (out / "evaluation_stats.yaml").is_file()


def test_a_persona_with_a_text_profile_imports_and_exports_as_text(sqlite_store, run_copy, tmp_path):
    # ChatChecker's persona model allows `profile: Union[str, dict]`
    info = run_copy / "generated_standard_persona_05" / "persona_info.yaml"
    data = yaml.safe_load(info.read_text())
    data["persona"]["profile"] = "A night-shift nurse who wants to start running again."
    info.write_text(yaml.safe_dump(data, sort_keys=False))

    result = import_chatchecker_run(sqlite_store, run_copy)
    assert result.personas == 10
    persona = load_simulation_run(sqlite_store, result.run_id).personas[info.parent.name]
    assert persona.profile == "A night-shift nurse who wants to start running again."
    assert persona_name(persona) == "generated_standard_persona_05"
    out = tmp_path / "out"
    export_chatchecker_run(sqlite_store, result.run_id, out)
    assert yaml.safe_load((out / info.parent.name / "persona_info.yaml").read_text()) == data


# -------------------------------------------------------------------------------------------- bad input


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


BREAKAGES = {
    "invalid YAML": (
        "generated_standard_persona_04/dialogue_1.yaml",
        "finish_reason: chatbot_ended_chat",
        "finish_reason: [chatbot_ended_chat",
        "generated_standard_persona_04/dialogue_1.yaml:",
    ),
    "bad decision": (
        "generated_standard_persona_01/dialogue_1.yaml",
        "decision: no_breakdown",
        "decision: maybe",
        "generated_standard_persona_01/dialogue_1.yaml:24 [chat_history[0].breakdown_annotation.decision]",
    ),
    "rating out of range": (
        "generated_standard_persona_02/dialogue_1.yaml",
        "        rating: 5",
        "        rating: 7",
        "[ratings.task_success.rating]",
    ),
    "duplicate key": (
        "generated_standard_persona_05/dialogue_1.yaml",
        "error: null",
        "error: null\nerror: boom",
        "key 'error' is given twice",
    ),
    "alias": (
        "generated_standard_persona_06/dialogue_1.yaml",
        "error: null",
        "error: *boom",
        "aliases (*name) are not accepted",
    ),
    "turn ids out of order": (
        "generated_standard_persona_07/dialogue_1.yaml",
        "turn_id: 2\n",
        "turn_id: 3\n",
        "generated_standard_persona_07/dialogue_1.yaml:26 [chat_history[1].turn_id]",
    ),
    "bad persona": (
        "generated_standard_persona_08/persona_info.yaml",
        "    task:",
        "    tasks:",
        "generated_standard_persona_08/persona_info.yaml",
    ),
    "misspelt persona type": (
        "generated_standard_persona_06/persona_info.yaml",
        "    type: standard",
        "    type: chalenging",
        "generated_standard_persona_06/persona_info.yaml:4 [persona.type]: Input should be 'standard', "
        "'challenging' or 'adversarial'",
    ),
    "trait level out of the scale": (
        "generated_standard_persona_08/persona_info.yaml",
        "neuroticism: medium",
        "neuroticism: extreme",
        "generated_standard_persona_08/persona_info.yaml:17 [persona.profile.personality.neuroticism]: "
        "Input should be 'low', 'medium' or 'high'",
    ),
    "bad run file": (
        "evaluation_stats.yaml",
        "chatbot_id: study_goal_assistant",
        "- chatbot_id",
        "evaluation_stats.yaml:",
    ),
}


@pytest.mark.parametrize("case", list(BREAKAGES))
def test_a_bad_folder_is_refused_whole_naming_the_file(case, run_copy, db):
    relative, old, new, named = BREAKAGES[case]
    _edit(run_copy / relative, old, new)
    runner.invoke(app, ["init", "--db", db])
    before = footprint(Store(db))
    result = runner.invoke(app, ["simulations", "import", str(run_copy), "--db", db])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and named in result.output, result.output
    lines = result.output.strip().splitlines()
    # one problem is one line after "error: "; several come under a header, one an indented line each
    problems = [lines[0].removeprefix("error: ")] if len(lines) == 1 else lines[1:]
    assert problems and all(line.strip().startswith(f"{run_copy.name}/") for line in problems), lines
    assert footprint(Store(db)) == before


def test_every_problem_is_listed_at_once(run_copy, sqlite_store):
    _edit(
        run_copy / "generated_standard_persona_01/dialogue_1.yaml",
        "decision: no_breakdown",
        "decision: maybe",
    )
    _edit(run_copy / "generated_standard_persona_09/dialogue_1.yaml", "error: null", "error: null\nerror: x")
    with pytest.raises(ValidationFailed) as caught:
        import_chatchecker_run(sqlite_store, run_copy)
    files = {p.file.split("/")[1] for p in caught.value.problems}
    assert files == {"generated_standard_persona_01", "generated_standard_persona_09"}
    assert sqlite_store.projects() == []


def test_folders_without_dialogues_are_refused(tmp_path, db):
    empty = tmp_path / "empty"
    (empty / "user_a").mkdir(parents=True)
    result = runner.invoke(app, ["simulations", "import", str(empty), "--db", db])
    assert result.exit_code == 1 and "no dialogue (dialogue_*.yaml) in any subfolder" in result.output
    missing = runner.invoke(app, ["simulations", "import", str(tmp_path / "nope"), "--db", db])
    assert missing.exit_code == 1 and "no such folder" in missing.output
    assert Store(db).projects() == []


def test_cli_export_then_import_gives_the_same_statistics(db, tmp_path):
    first = runner.invoke(app, ["simulations", "import", str(reference_run()), "--db", db])
    run_id = first.stdout.strip().splitlines()[-1]
    out = tmp_path / "exported"
    exported = runner.invoke(app, ["simulations", "export", run_id, "--out", str(out), "--db", db])
    assert exported.exit_code == 0, exported.output
    assert exported.stdout.strip() == f"wrote 23 file(s) to {out}"
    second = runner.invoke(app, ["simulations", "import", str(out), "--project", "copy", "--db", db])
    assert second.exit_code == 0, second.output
    assert "project copy (new project): 10 dialogue(s), 10 persona(s)" in second.stdout
    again = runner.invoke(
        app, ["simulations", "stats", second.stdout.strip().splitlines()[-1], "--json", "--db", db]
    )
    assert_same(json.loads(again.stdout), published_summary())


def test_a_conversational_target_is_judged_on_the_first_17_types(sqlite_store, run_copy):
    _edit(run_copy / "simulation_run_info.yaml", "type: task-oriented", "type: conversational")
    result = import_chatchecker_run(sqlite_store, run_copy)
    figures = simulation_statistics(sqlite_store, result.run_id)
    # Of the run's five types, Redundancy and Lack of clarity are task-oriented only.
    assert figures["n_unique_breakdown_types"] == 3
    assert figures["total_breakdown_count"] == 5  # the decisions count whatever their types


def test_stats_of_a_run_of_another_kind_is_refused(sqlite_store):
    sqlite_store.create_project("p", "P")
    other = sqlite_store.start_run("p", Run(id="run-judged", kind="run"))
    with pytest.raises(NotFoundError, match="'run-judged' is not a simulation run"):
        simulation_statistics(sqlite_store, other.id)
