"""The code base stays `ruff check` and `ruff format` clean."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_is_clean():
    result = _ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean():
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_library_never_imports_streamlit():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "evalcore").rglob("*.py")
        if any(
            line.strip().startswith(("import streamlit", "from streamlit"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert offenders == []


def test_the_model_layer_imports_no_pipeline_stage():
    """llm is the layer every stage calls; a task lives with the stage that needs it (DESIGN.md, Layout)."""
    stages = "inputs|documents|specs|generators|items|review|runs|reports"
    stage = re.compile(rf"^\s*(from|import) evalcore\.({stages})\b")
    offenders = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in (ROOT / "evalcore" / "llm").rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if stage.match(line)
    ]
    assert offenders == []


# The floors of the library, lowest first (../shared/DESIGN.md, "Layout"): a package imports only packages
# on lower floors. Packages on one floor import neither each other. The package face (`evalcore`:
# `__version__`, `lazy_exports`) and `errors` are below everything.
FLOORS = [
    ("errors", "models"),
    ("stats",),
    ("store",),
    ("auth",),
    ("llm", "jobs"),
    ("inputs",),
    ("documents",),
    ("specs",),
    ("items",),
    ("targets",),
    ("generators",),
    ("review",),
    ("runs",),
    ("reports",),
    ("cli",),
]
FLOOR = {package: n for n, packages in enumerate(FLOORS) for package in packages}
_IMPORT = re.compile(r"^\s*(?:from|import) (evalcore(?:\.\w+)*)")


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line number, dotted module) of every evalcore import in a file, deferred ones included."""
    return [
        (n, m.group(1))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if (m := _IMPORT.match(line))
    ]


def test_every_library_package_sits_on_a_floor_and_the_root_holds_only_the_face():
    packages = {p.name for p in (ROOT / "evalcore").iterdir() if (p / "__init__.py").exists()}
    assert packages == set(FLOOR) - {"errors"}, "a new package needs its floor in FLOORS"
    root_modules = {p.name for p in (ROOT / "evalcore").glob("*.py")}
    assert root_modules == {"__init__.py", "__main__.py", "errors.py"}


def test_imports_run_downwards_only():
    """No upward import and no circle between packages: generators never import runs, review or
    reports; targets never import generators; nothing below the CLI imports it."""
    offenders = []
    for path in (ROOT / "evalcore").rglob("*.py"):
        parts = path.relative_to(ROOT / "evalcore").parts
        if len(parts) == 1:
            continue  # the face and errors
        own = FLOOR[parts[0]]
        for n, module in _imports(path):
            target = module.split(".")[1] if "." in module else None
            if target is None or target in ("errors",) or target == parts[0] or target.startswith("__"):
                continue
            if target not in FLOOR:
                continue  # a name of the face itself (`from evalcore import jobs` is caught below)
            if FLOOR[target] >= own:
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {parts[0]} imports {module}")
    for path in (ROOT / "evalcore").rglob("*.py"):
        parts = path.relative_to(ROOT / "evalcore").parts
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), start=1):
            m = re.match(r"^\s*from evalcore import ([\w, ]+)", line)
            if not m or len(parts) == 1:
                continue
            for name in (x.strip().split(" as ")[0] for x in m.group(1).split(",")):
                if name in FLOOR and name != parts[0] and FLOOR[name] >= FLOOR[parts[0]]:
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {parts[0]} imports evalcore.{name}")
    assert offenders == []


def test_nothing_imports_a_page():
    """Pages share only their helpers (`pages/_*.py`: the sidebar, the store, sign-in); no page imports
    another."""
    faces = [ROOT / "app.py", ROOT / "dashboard.py", *(ROOT / "pages").glob("*.py")]
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in [*(ROOT / "evalcore").rglob("*.py"), *faces]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.match(r"^\s*(from|import) (pages|app|dashboard)\b", line)
        and not re.match(r"^\s*from pages\._\w+ import", line)
    ]
    assert offenders == []


def test_pipeline_functions_stay_short_and_the_library_needs_few_type_ignores():
    """Issue 24: no function over 80 lines in generators/, specs/, runs/ or jobs/ (split into named stages
    instead), and under 10 `type: ignore` in the library, each with its reason beside it."""
    done = subprocess.run(
        [sys.executable, "scripts/long_functions.py"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout
    ignores = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in (ROOT / "evalcore").rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "type: ignore" in line
    ]
    assert len(ignores) < 10, ignores
