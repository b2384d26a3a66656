"""`evalcore toolcases` and `evalcore rubrics` (issue 20, item 8): situations (with a team's file), tool
groups with their skips, generation as a job with the run id last, rubric discovery, validation with
file:line problems, evaluation on held-out conversations, and the Table 3 comparison."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolcase_support import mislabel
from typer.testing import CliRunner

from evalcore.cli.common import project_id_of
from evalcore.cli.main import app
from evalcore.jobs.control import failed_units
from evalcore.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("EVALCORE_OFFLINE", "1")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert CliRunner().invoke(app, ["import", str(SAMPLE), "--db", url]).exit_code == 0
    return url


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_situations_groups_and_generation(db, tmp_path):
    listed = run("toolcases", "situations", "--db", db).splitlines()
    assert len(listed) == 26 and listed[-1].split()[:5] == [
        "null_tool_response", "incorrect_tool", "inappropriate", "dissatisfied", "NEG",
    ]  # fmt: skip
    ours = tmp_path / "ours.yaml"
    ours.write_text(
        "situations:\n  - {id: our_case, name: Ours, tool_execution: correct, agent_appropriate: true,"
        " user_satisfied: true, overall: POS, description: d, recipe: correct}\n",
        encoding="utf-8",
    )
    assert "our_case" in run("toolcases", "situations", "--add", str(ours), "--db", db).splitlines()[-1]
    groups = run("toolcases", "groups", "--db", db)
    assert (
        "check_stock: check_stock\n  skips wrong_tool_silent: needs a second tool to pick wrongly" in groups
    )
    out = run("toolcases", "generate", "--situation", "our_case", "--situation", "wrong_tool_silent",
              "--group", "check_stock", "--db", db)  # fmt: skip
    lines = out.strip().splitlines()
    assert lines[-1].startswith("run-") and "1/1 conversations, 0 failed" in out
    assert "skipped wrong_tool_silent: no tool group can produce it (needs a second tool" in out


def test_a_situation_with_an_unknown_recipe_is_refused_with_file_and_line(db, tmp_path):
    ours = tmp_path / "ours.yaml"
    ours.write_text(
        "situations:\n  - id: our_case\n    name: Ours\n    tool_execution: correct\n"
        "    agent_appropriate: true\n    user_satisfied: true\n    overall: POS\n    description: d\n"
        "    recipe: no_such_recipe\n"
        + "  - {id: our_case, name: Ours, tool_execution: correct, agent_appropriate: true,"
        " user_satisfied: true, overall: POS, description: d}\n" * 2,
        encoding="utf-8",
    )
    out = CliRunner().invoke(app, ["toolcases", "situations", "--add", str(ours), "--db", db])
    shown = "".join(out.output.split())  # the terminal wraps long lines
    assert out.exit_code != 0 and "Traceback" not in out.output
    assert f"{ours}:9[situations[0].recipe]:unknownrecipe'no_such_recipe'(oneof:bad_input_data," in shown
    assert f"{ours}:11[situations[2].id]:id'our_case'isgiventwice" in shown
    assert len(run("toolcases", "situations", "--db", db).splitlines()) == 26  # nothing stored


def test_a_situation_that_cannot_be_made_fails_its_unit_with_the_reason(db, monkeypatch):
    from evalcore.generators.tool_case import offline

    def broken(tools, d):
        raise KeyError("no_such_field")

    monkeypatch.setitem(offline.TEMPLATES, "correct", broken)
    out = run(
        "toolcases", "generate", "--situation", "correct", "--situation", "null_tool_response", "--db", db
    )
    assert "finished; 2/2 conversations, 1 failed" in out and "Traceback" not in out
    store = Store(db)
    reasons = failed_units(store, out.strip().splitlines()[-1])
    store.close()
    assert list(reasons) == ["correct#1"] and "no_such_field" in reasons["correct#1"]


def test_rubrics_discover_validate_evaluate_and_compare(db, tmp_path):
    run("toolcases", "generate", "--per-situation", "2", "--pos-share", "0", "--db", db)
    refused = CliRunner().invoke(app, ["rubrics", "discover", "--db", db])
    assert refused.exit_code != 0 and "no gold or silver tool-case conversation (52 unreviewed)" in " ".join(
        refused.output.split()
    )
    store = Store(db)
    mislabel(store, project_id_of(store, None), as_="null_tool_response")  # the judge must reject it
    store.close()
    run("toolcases", "filter", "--db", db)  # silver: all but the one the offline judge rejects
    out = run("rubrics", "discover", "--db", db)
    assert "make-or-break" in out
    rubric_set = out.strip().splitlines()[-1]
    report = run("rubrics", "evaluate", rubric_set, "--db", db)
    assert "30 conversation(s) not trained on" in report  # 51 gold + silver, 21 trained on
    assert "Hard Neg.  n=13   accuracy" in report and "f1 N/A  precision N/A" in report
    scoring = (
        run("rubrics", "score", rubric_set, "--generator", "tool_case", "--db", db).strip().splitlines()[-1]
    )
    shown = run("rubrics", "report", scoring, "--db", db)
    assert "| pos-1 | " in shown and "| area | pos_rubrics |" in shown and "| POS | " in shown
    assert f"_run: {scoring} · " in shown and "offline: yes" in shown
    drill = run("rubrics", "report", scoring, "--rubric", "neg-1", "--format", "csv", "--db", db).splitlines()
    rows = [line for line in drill if not line.startswith("#")]
    assert rows[0] == "conversation,rubrics,label,pos_side,neg_side" and rows[1].startswith("tc-")
    bad = CliRunner().invoke(app, ["rubrics", "report", scoring, "--format", "docx", "--db", db])
    assert bad.exit_code == 2 and "unknown format 'docx'" in bad.output
    spur = run("rubrics", "discover", "--method", "spur", "--without", "AD", "--db", db)
    assert "spur rubrics" in spur
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "method: scope\nareas:\n  - name: A\nrubrics:\n  - {id: p, area: A, polarity: POS, text: t}\n"
    )
    result = CliRunner().invoke(app, ["rubrics", "validate", str(bad)])
    assert result.exit_code == 1 and f"{bad}:4 [rubrics]: needs at least one NEG rubric" in result.output
    table = tmp_path / "table3.md"
    out = run("rubrics", "compare", "--folds", "1", "--no-ablations", "--out", str(table), "--db", db)
    assert out.strip().splitlines()[-1].startswith("run-")
    text = table.read_text()
    assert text.startswith("51 labelled conversations (gold + silver conversations), POS share 0.")
    every = ("--folds", "1", "--no-ablations", "--all-conversations")
    everything = run("rubrics", "compare", *every, "--db", db)
    assert "\n52 labelled conversations (every tool-case conversation), POS share 0." in everything
    assert "| Hard Neg. | SPUR | 0.00 (0.00) | N/A | N/A | N/A |" in text and "| Overall | SCOPE |" in text


def test_scoring_comparison_and_filtering_can_be_handed_to_the_workers(db):
    from evalcore.store import Store

    run("toolcases", "generate", "--per-situation", "2", "--pos-share", "0", "--db", db)
    # Nothing is judged yet (the filter below is queued): every conversation, not gold and silver.
    rubric_set = run("rubrics", "discover", "--all-conversations", "--db", db).strip().splitlines()[-1]
    ids = [
        run(*command, "--queue", "--db", db).strip().splitlines()[-1]
        for command in (
            ("rubrics", "score", rubric_set, "--generator", "tool_case"),
            ("rubrics", "compare", "--folds", "2", "--all-conversations"),
            ("toolcases", "filter"),
            ("toolcases", "generate", "--situation", "correct"),
        )
    ]
    store = Store(db)
    runs = [store.run(i) for i in ids]
    kinds = ["rubric_scoring", "rubric_comparison", "tool_case_filter", "tool_case"]
    assert [r.kind for r in runs] == kinds
    assert all(r.status.value == "pending" and r.params.get("queued_at") for r in runs)
    assert "52/52 judged" in run("toolcases", "filter", "--resume", ids[2], "--db", db)
    scored = run("rubrics", "score", rubric_set, "--resume", ids[0], "--db", db)
    assert "52/52 conversations, 0 failed" in scored
    tables = run("rubrics", "report", ids[0], "--db", db)
    first_area = tables.split("| area | pos_rubrics |")[1].splitlines()[2].split("|")[1].strip()
    drill = run("rubrics", "report", ids[0], "--area", first_area, "--format", "jsonl", "--db", db)
    assert drill.splitlines()[0].startswith('{"provenance": ') and '"conversation": "tc-' in drill
