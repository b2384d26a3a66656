"""The published ChatChecker files in shared/reference: where they are, and how tests compare with them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalcore.generators.simulation import stats

REPO = Path(__file__).resolve().parents[1]


def chatchecker_dir() -> Path:
    """shared/reference/chatchecker, which sits beside the repository (looked for upwards from it)."""
    for parent in REPO.parents:
        candidate = parent / "shared" / "reference" / "chatchecker"
        if candidate.is_dir():
            return candidate
    pytest.fail(f"shared/reference/chatchecker not found beside {REPO} or above it", pytrace=False)


RUN_NAME = "paper_standard_2025-05-19_11-01-55_seed_1"


def reference_run() -> Path:
    """The published ChatChecker run against the goal-setting assistant."""
    return chatchecker_dir() / "runs" / "study_goal_assistant" / RUN_NAME


def published() -> dict[str, dict]:
    """The run's three statistics files."""
    root = reference_run()
    return {
        name: yaml.safe_load((root / f"{name}.yaml").read_text(encoding="utf-8"))
        for name in ("simulation_run_info", "breakdown_detection_stats", "evaluation_stats")
    }


def published_summary() -> dict:
    """The CI figures as the published files state them."""
    files = published()
    chat = files["simulation_run_info"]["chat_statistics"]
    breakdowns = files["breakdown_detection_stats"]["stats"]
    ratings = files["evaluation_stats"]["stats"]["rating_stats"]
    merged = {
        **chat,
        **breakdowns,
        "rating_stats": {k: {"average": v["average"], "std": v["std"]} for k, v in ratings.items()},
    }
    return {key: merged[key] for key in stats.SUMMARY_KEYS}


def assert_same(actual: object, expected: object, where: str = "") -> None:
    """Equal structures: counts and strings exactly, floats to 1e-9."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), where
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, f"{where}[{i}]")
    elif isinstance(expected, float) and not isinstance(actual, bool):
        assert actual == pytest.approx(expected, abs=1e-9), where
    else:
        assert actual == expected and type(actual) is type(expected), where
