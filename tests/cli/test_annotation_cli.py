"""`evalcore annotate`: assign with overlap, progress, agreement, calibrate, export gold and silver."""

import json
from pathlib import Path

from typer.testing import CliRunner

from evalcore.cli.main import app
from evalcore.models import Conversation
from evalcore.review import ItemVerdict, open_item, save_review
from evalcore.store import Store
from tests.annotation_data import add_conversations

runner = CliRunner()


def test_assign_review_then_report_and_export(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    store = Store(db)
    store.create_project("p", "P")
    ids = add_conversations(store, "p", 9, pairs=2)

    result = runner.invoke(
        app, ["annotate", "assign", "--annotators", "ann,bea,cy", "--overlap", "2", "--db", db]
    )
    assert result.exit_code == 0, result.output
    assert "assigned 9 conversation(s): ann 6, bea 6, cy 6" in result.output

    for item in ids[:4]:
        for who in open_item(store, item).assignees:
            verdict = (
                ItemVerdict(label="accept")
                if item != ids[3]
                else ItemVerdict(label="reject", reason="unsafe")
            )
            save_review(store, item, who, open_item(store, item).version, [], verdict)

    progress = runner.invoke(app, ["annotate", "progress", "--db", db])
    assert progress.exit_code == 0, progress.output
    assert "gold 3" in progress.output and "rejected 1" in progress.output

    agreement = runner.invoke(app, ["annotate", "agreement", "--db", db])
    assert agreement.exit_code == 0 and "conversation: Krippendorff's alpha" in agreement.output
    assert "judge vs people (Table 6): " in agreement.output

    calibrate = runner.invoke(app, ["annotate", "calibrate", "--target", "0.9", "--db", db])
    assert calibrate.exit_code == 0 and "4 decided conversation(s)" in calibrate.output

    out = tmp_path / "gold.jsonl"
    exported = runner.invoke(app, ["annotate", "export", "--tier", "gold", "-o", str(out), "--db", db])
    assert exported.exit_code == 0 and "wrote 3 gold conversation(s)" in exported.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [Conversation.model_validate(x["conversation"]).id for x in lines] == ids[:3]
    assert all(len(x["review"]["accepted_by"]) == 2 for x in lines)

    silver = runner.invoke(app, ["annotate", "export", "--tier", "silver", "--db", db])
    assert silver.exit_code == 0
    assert all(json.loads(line)["judge"]["passed"] for line in silver.output.splitlines())


def test_bad_arguments_are_one_line_errors(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    Store(db).create_project("p", "P")
    result = runner.invoke(app, ["annotate", "assign", "--annotators", "ann", "--overlap", "2", "--db", db])
    assert result.exit_code == 1 and "overlap must be between 1 and" in result.output
    result = runner.invoke(app, ["annotate", "export", "--tier", "bronze", "--db", db])
    assert result.exit_code == 1 and "unknown tier 'bronze'" in result.output
