"""promptfoo runs what we export: `promptfoo eval` (installed from npm into .promptfoo by
`scripts/setup.sh --test`) on an exported suite of tests and conversations, offline: the target is
promptfoo's `echo` provider (the reply is the prompt) and the grader of `llm-rubric` a local file provider
that passes, so no model and no network is called. Every assertion promptfoo evaluates must come out as
our own check of the same assertion on the same reply does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from test_interop_formats import filled  # noqa: F401 (a fixture)

from evalcore.items.current import read_item
from evalcore.items.exports import write_lines
from evalcore.reports.formats import export_format
from evalcore.reports.formats.promptfoo import assertion
from evalcore.runs.assertions import check_assertions

REPO = Path(__file__).resolve().parents[2]
PROMPTFOO = Path(
    os.environ.get("EVALCORE_PROMPTFOO", REPO / ".promptfoo" / "node_modules" / ".bin" / "promptfoo")
)
GRADER = """module.exports = class OfflineGrader {
  id() { return 'offline-grader'; }
  async callApi() { return { output: JSON.stringify({ pass: true, score: 1, reason: 'offline grader' }) }; }
};
"""
CONFIG = {
    "prompts": ["{{input}}"],
    "providers": ["echo"],
    "defaultTest": {"options": {"provider": "file://grader.js"}},
    "tests": ["file://tests.yaml", "file://conversations.yaml"],
}


@pytest.mark.skipif(
    not PROMPTFOO.exists() or shutil.which("node") is None,
    reason="promptfoo is not installed: `bash scripts/setup.sh --test` installs it (Node.js >= 20.20)",
)
def test_promptfoo_eval_runs_our_suite_offline_and_agrees_with_our_assertions(filled, tmp_path):  # noqa: F811
    store, project_id = filled
    write_lines(export_format(store, project_id, "promptfoo", "test"), tmp_path / "tests.yaml")
    write_lines(
        export_format(store, project_id, "promptfoo", "conversation"), tmp_path / "conversations.yaml"
    )
    (tmp_path / "grader.js").write_text(GRADER)
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(CONFIG))
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "PROMPTFOO_CONFIG_DIR": str(tmp_path / "config"),
        "OPENAI_API_KEY": "",
    }
    command = [str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-table",
               "--no-progress-bar", "-o", "results.json"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert (tmp_path / "results.json").exists(), done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    assert len(results) == 2 + 4  # two tests, four conversations
    assert all(r["response"] and r["gradingResult"] for r in results)  # every reply given, every one graded
    compared = 0
    for result in results:
        item = read_item(store, result["testCase"]["metadata"]["evalcore"]["id"])
        reply = result["response"]["output"]
        assert reply == result["vars"]["input"]  # echo: what the target got is what it said
        ours = item.test().assertions if item.kind == "test" else []
        mapped = [a for a in ours if assertion(a) is not None]
        components = result["gradingResult"]["componentResults"]
        for check, component in zip(check_assertions(reply, mapped), components, strict=False):
            assert component["pass"] is check.passed, (item.id, check, component)
            compared += 1
        kinds = [c["assertion"]["type"] for c in components[len(mapped) :]]
        assert kinds in ([], ["llm-rubric"], ["tool-call-f1"]), kinds
    assert compared == 4  # the reply test's contains, not_regex, contains_any and max_words


@pytest.mark.skipif(
    not PROMPTFOO.exists(), reason="promptfoo is not installed: `bash scripts/setup.sh --test`"
)
def test_promptfoo_validates_a_simulated_user_config_of_our_personas(filled, tmp_path):  # noqa: F811
    from evalcore.generators.simulation.personas import add_persona
    from evalcore.models import Persona

    store, project_id = filled
    add_persona(
        store, project_id, Persona(persona_id="p1", profile="A calm retiree.", task="rent a bike"), "ana"
    )
    write_lines(export_format(store, project_id, "promptfoo", "persona"), tmp_path / "personas.yaml")
    config = {
        "prompts": ["{{instructions}}"],
        "providers": ["echo"],
        "defaultTest": {"provider": {"id": "promptfoo:simulated-user", "config": {"maxTurns": 5}}},
        "tests": ["file://personas.yaml"],
    }
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "config")}  # fmt: skip
    command = [str(PROMPTFOO), "validate", "config", "-c", "promptfooconfig.yaml"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
