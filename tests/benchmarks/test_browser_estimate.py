"""benchmarks/browser.py's wall time estimated from CPU and its verdicts, on made-up visits: the page's
critical path (server, then the renderer's main thread) above the baseline's, never less than all its CPU
spread over the cores."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    path = list(sys.path)  # the script puts its folders first, for its own imports only
    try:
        spec = importlib.util.spec_from_file_location("bench_browser", ROOT / "benchmarks" / "browser.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


def visit(bench, wall, server, browser, main):
    return bench.Visit(
        wall=wall, server_cpu=server, browser_cpu=browser, plots=1, errors=0, renderer_main=main
    )


def test_the_estimate_is_the_critical_path_above_the_baseline(bench, monkeypatch):
    monkeypatch.setattr(bench, "CORES", 2)
    base = visit(bench, 0.30, 0.10, 0.50, 0.20)
    # Server 0.3 + main thread 0.9 against 0.1 + 0.2: 0.9 s more on the critical path; all CPU 1.6 s more,
    # 0.8 s over two cores: the critical path decides.
    assert bench.estimated(visit(bench, 5.0, 0.30, 1.90, 0.90), base) == pytest.approx(1.20)
    # Most of the CPU off the main thread: 3.2 s more over two cores is more than the 0.4 s of the path.
    assert bench.estimated(visit(bench, 5.0, 0.30, 3.50, 0.40), base) == pytest.approx(0.30 + 1.60)
    # Never under the baseline's own wall time.
    assert bench.estimated(visit(bench, 0.1, 0.05, 0.20, 0.10), base) == pytest.approx(0.30)


def test_each_kind_of_visit_is_held_to_its_goal(bench, monkeypatch):
    monkeypatch.setattr(bench, "CORES", 2)
    base = tuple(visit(bench, w, 0.1, 0.4, 0.2) for w in (1.0, 0.05, 0.3))
    fresh = visit(bench, 2.4, 0.5, 3.0, 1.0)  # over by wall and estimate
    warm = visit(bench, 1.3, 0.1, 0.6, 0.4)  # over by wall only (a loaded machine): 0.25 s estimated
    back = visit(bench, 1.5, 0.3, 1.8, 2.0)  # under by wall, over by estimate: 0.3 + 2.0 s more on the path
    over, over_est = bench.misses(fresh, warm, back, base)
    assert over == ["fresh", "warm"] and over_est == ["fresh", "back"]
    lines = bench.goals({"Page": (fresh, warm, back)}, base)
    assert lines[0].endswith("over by wall time: Page; estimated over: none")
    assert lines[1].endswith("over by wall time: none; estimated over: Page")
    fine = visit(bench, 0.2, 0.1, 0.4, 0.2)
    assert all(line.endswith("every page under it") for line in bench.goals({"Page": (fine,) * 3}, base))
