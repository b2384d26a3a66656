"""Page test (AppTest): Simulations shows runs side by side, the type x persona heatmap, a dialogue with its
per-turn breakdown badges and ratings, marks offline output, and shows data as text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from page_app import open_page
from streamlit.testing.v1 import AppTest

from evalcore.generators.simulation import import_chatchecker_run, load_simulation_run
from evalcore.generators.simulation.fidelity import fidelity_of
from evalcore.generators.simulation.job import simulate
from evalcore.inputs import import_project
from evalcore.models import RunStatus
from evalcore.store import DATABASE_URL_ENV, Store

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_RUN = Path(
    "/work/shared/reference/chatchecker/runs/study_goal_assistant/paper_standard_2025-05-19_11-01-55_seed_1"
)


@pytest.fixture
def db_url(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    monkeypatch.setenv(DATABASE_URL_ENV, url)
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    return url


def frame(at: AppTest, column: str):
    """The first table of the page with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def captions(at: AppTest) -> str:
    """The page's captions as read (markdown escapes taken out)."""
    return "\n".join(str(c.value).replace("\\", "") for c in at.caption)


def box(at: AppTest, label: str):
    """The page's selectbox with this label."""
    return next(b for b in at.selectbox if b.label == label)


def test_without_a_run_the_page_says_how_to_start_one(db_url):
    import_project(Store(db_url), ROOT / "data" / "sample")
    at = open_page("pages/simulations.py")
    assert any("No simulation run" in str(i.value) for i in at.info)


def test_runs_side_by_side_a_heatmap_and_a_dialogue_with_badges_and_ratings(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    simulated = simulate(store, pid, "demo", standard=2, challenging=2).run.id
    imported = import_chatchecker_run(store, REFERENCE_RUN, pid).run_id
    at = open_page("pages/simulations.py")
    listed = frame(at, "source")
    name = box(at, "Run").format_func  # a run by its target and start, an import by ChatChecker's run id
    sim_name, imp_name = name(simulated), name(imported)
    assert sim_name.startswith("demo · ") and imp_name == f"ChatChecker {REFERENCE_RUN.name}"
    assert set(listed["run"]) == {sim_name, imp_name}
    made_by = dict(zip(listed["run"], listed["made by"], strict=True))
    assert made_by == {sim_name: "offline (no model)", imp_name: "models"}
    assert set(listed["F1"]) == {"—"}, "nothing to score before a human label: a dash, never 'None'"
    side_by_side = frame(at, imp_name)
    assert set(side_by_side.columns) == {sim_name, imp_name}
    assert side_by_side.loc["Dialogues", imp_name] == 10
    assert side_by_side.loc["Breakdowns per target turn", imp_name] == pytest.approx(5 / 155)  # as published
    assert side_by_side.loc["Target turns per dialogue (ST/D)", imp_name] == pytest.approx(15.5)
    assert side_by_side.loc["Median user turn length (words)", imp_name] == 5.0
    # per run, how the simulated users did: none of the published run's spoilt a dialogue
    assert side_by_side.loc["Dialogues whose simulated user is at fault", imp_name] == 0
    assert side_by_side.loc["Breakdowns per target turn without them", imp_name] == pytest.approx(5 / 155)
    assert (
        side_by_side.loc["Share of simulated users keeping their kind", imp_name] == 1.0
    )  # ten standard users
    off = side_by_side.loc["Simulated users off their persona (0 = as given, 1 = nothing kept)"]
    assert (
        off[imp_name] == pytest.approx(fidelity_of(store, imported)[1]["mean_distance"])
        and 0 < off[sim_name] < 1
    )
    box(at, "Run").select(simulated).run()
    assert any("Offline output" in str(i.value) for i in at.info)
    box(at, "Run").select(imported).run()
    assert not any("Offline output" in str(i.value) for i in at.info)
    assert len(at.get("vega_lite_chart")) == 1, "the breakdown type x persona heatmap"
    box(at, "Dialogue").select("generated_standard_persona_02_dialogue_1").run()
    assert not at.exception, at.exception
    shown = [str(m.value) for m in at.markdown]
    assert any(m.startswith(":red-badge[breakdown 0\\.") for m in shown), "a breakdown with its score"
    assert any(m.startswith(":green-badge[no breakdown 1\\.00") for m in shown)
    assert "\\*\\*If you have any questions\\*\\*" in "\n".join(shown), "turn text is shown as text"
    ratings = at.dataframe[-1].value
    assert (
        ratings["dimension"].tolist()[-1] == "Overall performance" and ratings["rating"].between(1, 5).all()
    )


def test_a_persona_is_edited_on_the_page_as_a_new_version_with_its_author(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    simulate(store, pid, "demo", standard=1)
    at = open_page("pages/simulations.py", "Rosa")
    [task] = [t for t in at.text_input if t.label == "Task"]
    task.input("Ask about **returns** <b>now</b>")
    [save] = [b for b in at.button if b.label == "Save persona"]
    save.click().run()
    assert not at.exception, at.exception
    from evalcore.generators.simulation.personas import list_personas

    [(item_id, persona)] = list_personas(store, pid).items()
    assert persona.task == "Ask about **returns** <b>now</b>" and store.current(item_id).author == "Rosa"
    assert store.current(item_id).version == 2
    assert frame(at, "task")["task"].tolist() == ["Ask about **returns** <b>now</b>"], "shown as text"


def test_a_simulation_started_on_the_page_is_queued_shows_its_progress_stops_and_resumes(db_url):
    from evalcore.generators.simulation.job import execute_simulation, simulation_runs
    from evalcore.jobs.queue import open_queue

    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    at = open_page("pages/simulations.py", "Rosa")
    assert next(n for n in at.number_input if n.label.startswith("Max user turns")).value == 12, "the card's"
    next(n for n in at.number_input if n.label == "Standard personas").set_value(2)
    next(n for n in at.number_input if n.label == "Challenging personas").set_value(1)
    next(n for n in at.number_input if n.label.startswith("Max user turns")).set_value(4)
    next(b for b in at.button if b.label == "Start simulation").click().run()
    assert not at.exception, at.exception
    [run] = simulation_runs(store, pid)
    assert run.params["limits"]["max_user_turns"] == 4 and len(run.params["units"]) == 3
    assert run.id in open_queue(store.url).pending_runs(), "handed to the workers"
    assert any("0 / 3 dialogues · queued" in str(p.proto.text) for p in at.get("progress"))
    assert any("Waiting for a worker" in str(c.value) for c in at.caption), "nobody holds it yet"
    next(b for b in at.button if b.label == "Stop").click().run()
    assert store.stop_requested(run.id) and store.run(run.id).status == RunStatus.stopped
    assert any("0 / 3 dialogues · stopped" in str(p.proto.text) for p in at.get("progress"))
    next(b for b in at.button if b.label == "Resume").click().run()
    assert store.run(run.id).status == RunStatus.pending and not store.stop_requested(run.id)
    assert run.id in open_queue(store.url).pending_runs(), "handed to the workers again"
    execute_simulation(store, run.id)  # what the worker taking the task does
    at = open_page("pages/simulations.py", "Rosa")
    assert any("3 / 3 dialogues · finished" in str(p.proto.text) for p in at.get("progress"))
    dialogues = load_simulation_run(store, run.id).dialogues
    assert len(dialogues) == 3 and max(sum(t.role == "user" for t in d.turns) for d in dialogues) <= 4


def test_the_detectors_quality_against_human_labels_beside_each_run_and_on_the_turns(db_url):
    from evalcore.generators.simulation.store_ops import run_dialogues
    from evalcore.review import save_review
    from evalcore.review.breakdown_labels import BreakdownLabel
    from evalcore.review.workitem import head_version

    store = Store(db_url)
    imported = import_chatchecker_run(store, REFERENCE_RUN).run_id
    at = open_page("pages/simulations.py")
    assert frame(at, "source")["human-labelled turns"].tolist() == [0]
    assert any("No target turn of this run has a human breakdown label" in str(c.value) for c in at.caption)
    _, pairs = run_dialogues(store, imported)
    item = next(cid for cid, d in pairs if d.user_name.endswith("_04"))
    labels = [
        BreakdownLabel(turn_index=12, breakdown=True, types=["Contradiction"]),
        BreakdownLabel(turn_index=10, breakdown=True, types=["Repetition"]),
    ]
    save_review(store, item, "ann", head_version(store, item)[0], breakdowns=labels)
    at = open_page("pages/simulations.py")
    row = frame(at, "source").iloc[0]
    assert row["human-labelled turns"] == 2 and row["precision"] == "1.00" and row["recall"] == "0.50"
    metrics = {m.label: m.value for m in at.metric if m.label in ("accuracy", "precision", "recall", "F1")}
    assert metrics == {"accuracy": "0.500", "precision": "1.000", "recall": "0.500", "F1": "0.667"}
    per_type = frame(at, "detector")
    assert per_type["type"].tolist() == ["Contradiction", "Repetition", "Lack of clarity"], "taxonomy order"
    # the rules flag neither labelled turn: both breakdowns missed, nothing flagged
    rules_line = next(c for c in captions(at).splitlines() if c.startswith("The offline rules"))
    assert rules_line.endswith(
        "accuracy 0.000, precision -, recall 0.000, F1 -; F1 per type: Contradiction -, Repetition -."
    )
    box(at, "Dialogue").select("generated_standard_persona_04_dialogue_1").run()
    shown = [str(m.value) for m in at.markdown]
    assert ":red-badge[human\\: breakdown\\: Contradiction \\(1 of 1 say breakdown\\)]" in shown
    next(b for b in at.button if b.label == "Label its target turns on Annotate").click().run()
    assert not at.exception, at.exception
    assert at.query_params["item"] in (item, [item]), "the dialogue opens in the workbench"
    assert [t.value for t in at.title] == ["Annotate"]


def test_a_persona_edit_with_an_empty_name_is_refused_naming_the_field_and_saves_nothing(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    simulate(store, pid, "demo", standard=1)
    at = open_page("pages/simulations.py", "Rosa")
    next(t for t in at.text_input if t.label == "Name").input(" ")
    next(n for n in at.number_input if n.label == "Age").set_value(44)
    next(b for b in at.button if b.label == "Save persona").click().run()
    assert not at.exception, at.exception
    shown = " ".join(str(e.value) for e in at.error) + " ".join(map(str, frame(at, "problem")["field"]))
    assert "name" in shown
    from evalcore.generators.simulation.personas import list_personas

    [(item_id, _)] = list_personas(store, pid).items()
    assert store.current(item_id).version == 1, "nothing saved"


def test_failed_dialogues_are_retried_from_the_page_through_the_queue(db_url):
    from evalcore.generators.simulation.job import create_simulation, execute_simulation
    from evalcore.jobs import failed_units
    from evalcore.jobs.queue import open_queue

    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    run = create_simulation(store, pid, "demo", standard=2)
    first = run.params["units"][0]["key"]
    with store.unit(run.id, first) as writer:  # as a simulated user that never answered usably leaves it
        writer.fail("user simulator: no output")
    execute_simulation(store, run.id)
    assert set(failed_units(store, run.id)) == {first}
    at = open_page("pages/simulations.py", "Rosa")
    assert any("1 dialogue(s) failed" in str(w.value) for w in at.warning)
    next(b for b in at.button if b.label == "Retry failed dialogues").click().run()
    assert run.id in open_queue(store.url).pending_runs(), "handed to the workers"
    execute_simulation(store, run.id)
    assert not failed_units(store, run.id) and len(load_simulation_run(store, run.id).dialogues) == 2


def test_a_persona_with_a_text_profile_is_listed_by_its_id_and_edited_as_text(db_url, tmp_path):
    from evalcore.generators.simulation.personas import import_personas, list_personas

    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    (tmp_path / "p.yaml").write_text("persona_id: p_text\ntype: standard\nprofile: A night nurse.\ntask: t\n")
    [item_id] = import_personas(store, pid, tmp_path / "p.yaml")
    at = open_page("pages/simulations.py", "Rosa")
    assert frame(at, "task")["name"].tolist() == ["p_text"]
    assert not [t for t in at.text_input if t.label == "Name"], "no profile fields to a text profile"
    next(t for t in at.text_area if t.label == "Profile (free text)").input("A day nurse.")
    next(b for b in at.button if b.label == "Save persona").click().run()
    assert not at.exception, at.exception
    assert (
        list_personas(store, pid)[item_id].profile == "A day nurse." and store.current(item_id).version == 2
    )


def test_dialogues_whose_simulated_user_is_at_fault_are_listed_and_the_figures_shown_without_them(
    db_url, tmp_path
):
    folder = tmp_path / "run"
    shutil.copytree(REFERENCE_RUN, folder)
    dialogue = folder / "generated_standard_persona_01" / "dialogue_1.yaml"
    text = dialogue.read_text(encoding="utf-8")
    dialogue.write_text(
        text.replace(
            "I'm aiming to land my first full-time job!", "As an AI language model, I have no goals."
        ),
        encoding="utf-8",
    )
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    run_id = import_chatchecker_run(store, folder, pid).run_id
    at = open_page("pages/simulations.py")
    box(at, "Run").select(run_id).run()
    spoilt = "without the dialogues the simulated user spoilt"
    figures = frame(at, spoilt).set_index("figure")
    assert figures.loc["Dialogues", "all dialogues"] == 10
    assert figures.loc["Dialogues", spoilt] == 9
    assert figures.loc["Breakdowns per target turn", "all dialogues"] == 0.032  # 5 of 155, to three places
    faults = frame(at, "reason")
    assert faults[["dialogue", "turn", "kind", "breakdowns to discount"]].values.tolist() == [
        ["generated_standard_persona_01_dialogue_1", 2, "Broke character", 0]  # the transcript's turn 2
    ]
    warned = " ".join(str(w.value) for w in at.warning).replace("\\", "")
    assert "1 of 10 dialogue(s) have a simulated user at fault: no breakdown of theirs to discount" in warned
    label = "Emma Thompson, standard · dialogue 1 · simulated user at fault"
    assert label in box(at, "Dialogue").options, "the faulted dialogue is marked where it is picked"
    assert "The simulated user of this dialogue is at fault (turn 2: Broke character)" in warned
    shown = [str(m.value).replace("\\", "") for m in at.markdown]
    assert ":orange-badge[simulator fault: Broke character]" in shown, "on the user turn at fault"


def test_a_fault_check_is_started_from_the_page_and_its_stored_findings_are_read(db_url):
    from evalcore.generators.simulation.fault_check import execute_fault_check, fault_checks
    from evalcore.jobs.queue import open_queue

    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    run_id = import_chatchecker_run(store, REFERENCE_RUN, pid).run_id
    at = open_page("pages/simulations.py", "Rosa")
    box(at, "Run").select(run_id).run()
    assert "Found by: offline rules (no model), computed now." in captions(at)
    next(b for b in at.button if b.label.startswith("Check the simulated users")).click().run()
    assert not at.exception, at.exception
    [check] = fault_checks(store, run_id)
    assert check.id in open_queue(store.url).pending_runs(), "handed to the workers"
    execute_fault_check(store, check.id)  # what the worker taking the task does
    at = open_page("pages/simulations.py", "Rosa")
    box(at, "Run").select(run_id).run()
    found = f"Found by: stored: offline rules (no model), check {check.id}."
    assert found in captions(at)


def test_each_persona_by_name_with_how_closely_it_was_played_and_users_side_by_side(db_url):
    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    run_id = import_chatchecker_run(store, REFERENCE_RUN, pid).run_id
    at = open_page("pages/simulations.py")
    box(at, "Run").select(run_id).run()
    played = frame(at, "off from the persona").set_index("persona")
    assert len(played) == 10 and "Emma Thompson" in played.index
    assert played.loc["Emma Thompson", "personality kept"] == "1 of 5"
    assert played.loc["Emma Thompson", "off from the persona"] == 0.62
    assert played.loc["Emma Thompson", "turns over the card's maximum"] == "0 (> 94 words)"
    beside = frame(at, "this imported ChatChecker run").set_index("figure")
    assert beside.loc["dialogues", "this imported ChatChecker run"] == 10


def test_adversarial_personas_are_started_from_the_form_and_shown_with_their_probing_turns(db_url):
    from evalcore.generators.simulation.job import execute_simulation, simulation_runs

    store = Store(db_url)
    pid = import_project(store, ROOT / "data" / "sample").project_id
    at = open_page("pages/simulations.py", "Rosa")
    assert next(n for n in at.number_input if n.label == "Adversarial personas").value == 0, "none unasked"
    next(n for n in at.number_input if n.label == "Standard personas").set_value(0)
    next(n for n in at.number_input if n.label == "Challenging personas").set_value(0)
    next(n for n in at.number_input if n.label == "Adversarial personas").set_value(2)
    next(b for b in at.button if b.label == "Start simulation").click().run()
    assert not at.exception, at.exception
    [run] = simulation_runs(store, pid)
    sim_personas = store.list_current(pid, "persona")
    assert sorted(r.body["persona_id"] for r in sim_personas) == [
        "generated_adversarial_persona_01",
        "generated_adversarial_persona_02",
    ]
    execute_simulation(store, run.id)  # what the worker taking the task does
    at = open_page("pages/simulations.py", "Rosa")
    box(at, "Run").select(run.id).run()
    played = frame(at, "probing turns")
    assert set(played["kind"]) == {"adversarial"} and len(played) == 2
    assert any(share != "0%" for share in played["probing turns"]), "the adversarial users probed"
