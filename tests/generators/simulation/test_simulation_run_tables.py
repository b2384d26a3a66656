"""Tables 4 and 5 shaped (issue 31, item 3): the paper's per-run figures, their mean and standard deviation
over runs per persona type, and `simulations stats --runs`."""

from __future__ import annotations

import json

import pytest
from chatchecker_reference import published, reference_run
from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.generators.simulation import import_chatchecker_run, load_simulation_run
from evalcore.generators.simulation.run_tables import COLUMNS, by_persona_type, mean_std, runs_table

runner = CliRunner()


def test_a_runs_figures_agree_with_the_published_chat_statistics(sqlite_store):
    run_id = import_chatchecker_run(sqlite_store, reference_run()).run_id
    rows = by_persona_type(load_simulation_run(sqlite_store, run_id))
    chat = published()["simulation_run_info"]["chat_statistics"]
    assert set(rows) == {"standard", "all"}
    row = rows["standard"]
    assert row["chatbot_turns_per_dialogue"] == chat["avg_chatbot_turns_per_dialogue"]
    assert row["median_user_turn_length"] == chat["five_num_summary_avg_user_turn_length"]["median"]
    assert row["median_chatbot_turn_length"] == chat["five_num_summary_avg_chatbot_turn_length"]["median"]
    assert row["breakdowns"] == 5 and row["dialogues"] == 10


def _row(**given: float | None) -> dict[str, float | None]:
    return {**dict.fromkeys(COLUMNS), **given}


def test_mean_and_population_std_per_type_leave_out_runs_without_the_figure():
    runs = [
        {"standard": _row(dialogues=10, overall_rating=4.0), "challenging": _row(dialogues=2)},
        {"standard": _row(dialogues=20, overall_rating=2.0)},
    ]
    table = mean_std(runs)
    assert table["standard"]["dialogues"] == (15.0, 5.0)
    assert table["standard"]["overall_rating"] == (3.0, 1.0)
    assert table["challenging"]["dialogues"] == (2.0, 0.0)
    assert "overall_rating" not in table["challenging"]


def test_cli_runs_prints_mean_and_std_and_refuses_no_run(tmp_path):
    db = f"sqlite:///{tmp_path / 'tables.db'}"
    ids = [
        runner.invoke(app, ["simulations", "import", str(reference_run()), "--project", p, "--db", db])
        .stdout.strip()
        .splitlines()[-1]
        for p in ("one", "two")
    ]
    shown = runner.invoke(app, ["simulations", "stats", "--runs", ",".join(ids), "--json", "--db", db])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["standard"]["chatbot_turns_per_dialogue"] == [15.5, 0.0]
    table = runner.invoke(app, ["simulations", "stats", "--runs", ",".join(ids), "--db", db])
    assert "mean ± std over 2 run(s)" in table.stdout and "15.50 ± 0.00" in table.stdout
    one = runner.invoke(app, ["simulations", "stats", ids[0], "--db", db])
    assert "turns, standard personas              ST/D 15.5, median |UT| 5.0, median |ST| 41.0" in one.stdout
    neither = runner.invoke(app, ["simulations", "stats", "--db", db])
    assert neither.exit_code != 0 and "give one run id, or --runs A,B,C" in neither.output


def test_runs_table_over_one_run_has_zero_spread(sqlite_store):
    run_id = import_chatchecker_run(sqlite_store, reference_run()).run_id
    table = runs_table(sqlite_store, [run_id])
    assert table["all"]["breakdowns_per_chatbot_turn"] == (pytest.approx(5 / 155), 0.0)
