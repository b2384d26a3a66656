"""Ids that become file names on export (issue 25, the holes besides finding 1): a ChatChecker run's user
names and dialogue files and a scenario's file name are checked by `evalcore.inputs.paths`, so an export
writes nothing outside its folder and refuses the whole export with a one-line error naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import UsageError
from evalcore.generators.scenario.store_ops import write_files
from evalcore.generators.simulation.chatchecker import ChatCheckerRun, write_run
from evalcore.generators.simulation.records import Dialogue
from evalcore.inputs.paths import path_inside, safe_file_name

BAD = [
    ("", "empty"),
    ("   ", "empty"),
    ("../x", "separator"),
    ("a/b", "separator"),
    ("a\\b", "separator"),
    ("..", "'..'"),
    ("/etc/passwd", "separator"),
    ("C:evil", "drive letter"),
    ("a\x00b", "NUL"),
    (".hidden", "dot"),
    ("x" * 201, "at most 200"),
]


@pytest.mark.parametrize(("name", "says"), BAD)
def test_safe_file_name_refuses_with_one_line_naming_the_field(name, says):
    with pytest.raises(UsageError) as raised:
        safe_file_name(name, "persona id")
    assert says in str(raised.value) and str(raised.value).startswith("persona id")
    assert "\n" not in str(raised.value)


def test_safe_file_name_keeps_ordinary_names():
    for name in ("dialogue_1.yaml", "generated_standard_persona_01", "Ünïcode name.yml", "x" * 200):
        assert safe_file_name(name, "file") == name


def test_path_inside_refuses_a_link_that_leads_out(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "link").symlink_to(tmp_path)
    assert path_inside(tmp_path / "in", "a.yaml", "file") == (tmp_path / "in" / "a.yaml").resolve()
    with pytest.raises(UsageError, match="outside"):
        path_inside(tmp_path / "in", "link", "file")


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize(
    ("field", "value"),
    [("user_name", "../../escaped"), ("user_name", "/tmp/abs"), ("file", "../../escaped.yaml")],
)
def test_a_chatchecker_export_refuses_user_names_and_files_with_path_parts(tmp_path, field, value):
    good = Dialogue(dialogue_id="d1", user_name="user_1", finish_reason="user_ended_chat")
    bad = good.model_copy(update={"dialogue_id": "d2", field: value})
    out = tmp_path / "deep" / "er" / "out"
    before = _files(tmp_path)
    with pytest.raises(UsageError, match=r"user name|dialogue file"):
        write_run(ChatCheckerRun("run", [good, bad]), out)
    assert _files(tmp_path) - before <= {tmp_path / "deep", tmp_path / "deep" / "er"}


def test_a_chatchecker_export_refuses_a_user_file_name_with_path_parts(tmp_path):
    bad = Dialogue(
        dialogue_id="d1",
        user_name="user_1",
        finish_reason="user_ended_chat",
        user_file={"name": "../../../owned.yaml", "content": {"a": 1}},
    )
    with pytest.raises(UsageError, match="user file"):
        write_run(ChatCheckerRun("run", [bad]), tmp_path / "out")
    assert list(tmp_path.rglob("owned.yaml")) == [] and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "files",
    [
        [("ok.yml", "a: 1", "t1"), ("../../escaped.yml", "b: 2", "t2")],
        [("ok.yml", "a: 1", "t1"), ("ok.yml", "b: 2", "../../escaped")],  # the tag of a repeated name
        [("ok.yml", "a: 1", "t1"), (".bashrc", "b: 2", "t2")],
    ],
)
def test_a_scenario_export_refuses_a_file_name_with_path_parts_and_writes_nothing(tmp_path, files):
    out = tmp_path / "out"
    with pytest.raises(UsageError, match="scenario file name"):
        write_files(out, files)
    assert _files(tmp_path) == set()
