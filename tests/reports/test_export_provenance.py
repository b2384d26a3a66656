"""Every export says what produced it (issue 15, item 10; DESIGN: exports carry run, target, judge, offline
or not): report tables in CSV, JSONL, Markdown and LaTeX, and spec YAML and Gherkin, which still read
back; long labels wrap in LaTeX."""

from __future__ import annotations

import io
import json

import pandas as pd

from evalcore.models import Provenance, Run, Spec
from evalcore.reports.failures import export_tables, provenance
from evalcore.reports.table_export import export_table
from evalcore.specs.formats import provenance_header, read_specs, to_gherkin, to_yaml

LONG = "Ridgeline Assist states the e-bike motor and battery warranty as 2 years or 500 charge cycles"
TABLE = pd.DataFrame({"spec_label": [LONG, "short"], "n": [7, 3], "failure_rate": [0.5, 0.0]})


def run(judge: str, target_kind: str, rid: str = "run-1") -> Run:
    return Run(id=rid, kind="run", target="bot", judge=judge, params={"target": {"kind": target_kind}},
               code_version="0.1.0")  # fmt: skip


def test_a_run_is_offline_when_its_judge_or_its_target_is():
    assert provenance([run("offline/heuristic", "openai")])["offline"].startswith("yes")
    assert provenance([run("openai/gpt-4o", "demo")])["offline"].startswith("yes")
    online = provenance([run("anthropic/claude-sonnet-4-6", "openai")])
    assert online == {"run": "run-1", "target": "bot", "judge": "anthropic/claude-sonnet-4-6",
                      "offline": "no", "history": "own replies", "evalcore": "0.1.0"}  # fmt: skip
    both = provenance([run("offline/heuristic", "openai"), run("openai/gpt-4o", "openai", "run-2")])
    assert both["run"] == "run-1, run-2" and both["offline"] == "yes (offline judge or demo target: run-1)"


def test_every_table_format_is_headed_by_its_provenance_and_still_reads_back():
    about = provenance([run("offline/heuristic", "demo")])
    texts = export_tables({"by_spec": TABLE}, "csv", about)
    csv = texts["by_spec"]
    assert csv.startswith("# run: run-1\n# target: bot\n# judge: offline/heuristic\n# offline: yes")
    assert pd.read_csv(io.StringIO(csv), comment="#").equals(TABLE)

    first, *rows = export_table(TABLE, "jsonl", provenance=about).splitlines()
    assert json.loads(first) == {"provenance": about} and len(rows) == 2

    md = export_tables({"by_spec": TABLE}, "md", about)["by_spec"]
    assert "_run: run-1 · target: bot · judge: offline/heuristic · offline: yes" in md

    latex = export_tables({"by_spec": TABLE}, "latex", about)["by_spec"]
    assert r"\caption{Failure rate by spec (offline)}" in latex
    assert "% judge: offline/heuristic" in latex and "% offline: yes" in latex
    assert r"\begin{tabular}{p{16em}rr}" in latex, "the long label column wraps"
    assert r"\begin{tabular}{lrr}" in export_table(TABLE.tail(1), "latex"), "short labels stay 'l'"


def test_a_newline_in_a_value_cannot_end_the_comment_it_is_in():
    text = export_table(TABLE, "csv", provenance={"target": "bot\nspec_label,n\nforged,1"})
    assert text.splitlines()[0] == "# target: bot spec_label,n forged,1"


def spec(i: int, provenance: Provenance) -> Spec:
    return Spec(id=f"spec-{i}", scenario=f"Return window {i}", given="a customer", when="asks",
                then="the assistant says 14 days", category="policy", provenance=provenance)  # fmt: skip


def test_spec_exports_say_who_produced_them_and_read_back():
    specs = [spec(1, Provenance(producer="offline/heuristic")), spec(2, Provenance.human("ana\nid: x"))]
    header = provenance_header(specs, "shop")
    assert header == [
        "# evalcore spec export · project shop · 2 spec(s)",
        "# produced by: the offline provider (no model): 1; human:ana id: x: 1",
        "# offline: yes (1 of 2 produced by the offline provider, not a model)",
    ]
    yaml_text = to_yaml(specs, header)
    assert yaml_text.startswith("\n".join(header) + "\n")
    assert [s.id for s in read_specs(yaml_text, "specs.yaml")] == ["spec-1", "spec-2"]
    gherkin = to_gherkin(specs, "Shop", header)
    assert "  # produced by: the offline provider (no model)\n" in gherkin
    assert [s.id for s in read_specs(gherkin, "specs.feature")] == ["spec-1", "spec-2"]
    model = spec(3, Provenance(producer="gpt-4o", provider="openai"))
    assert provenance_header([model], "shop")[1:] == ["# produced by: gpt-4o (openai): 1", "# offline: no"]
