"""README and CLI agree (issue 15, item 7): the walk-through's commands and `conversations export FILE`
work as written, the README's m and k are the defaults of the CLI and the Spec review page, and no help
shows a value placeholder such as `<bool>` beside a flag that takes none."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer
from typer.testing import CliRunner

from evalcore.cli.main import SAMPLE_PROJECT, app
from evalcore.specs.generation import DEFAULT_CANDIDATES
from evalcore.specs.selecting import DEFAULT_K

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
runner = CliRunner()


def walk_through() -> list[list[str]]:
    """The commands of the README's "A first walk through" block, as argument lists."""
    block = README.split("## A first walk through", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        for part in line.split("#", 1)[0].split("&&"):
            words = shlex.split(part)
            if words:
                assert words[0] == ".venv/bin/evalcore", line
                commands.append(words[1:])
    return commands


def all_commands(command, path: tuple[str, ...] = ()):
    """Every command and group under `command` with its path (typer's own click, so by duck typing)."""
    yield path, command
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from all_commands(sub, (*path, name))


def test_the_walk_through_runs_as_written(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'store.db'}"
    for args in walk_through():
        result = runner.invoke(app, [*args, "--db", db])
        assert result.exit_code == 0, (args, result.output)


def test_conversations_export_takes_the_file_as_the_readme_shows(tmp_path: Path):
    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert "`evalcore conversations export\\|import FILE`" in README  # '\\|': a pipe in a table cell
    for args in (["import", str(SAMPLE_PROJECT)], ["specs", "generate", "-m", "5"], ["specs", "select"],
                 ["conversations", "generate", "--per-spec", "1"]):  # fmt: skip
        assert runner.invoke(app, [*args, "--db", db]).exit_code == 0, args
    out = tmp_path / "conversations.jsonl"
    result = runner.invoke(app, ["conversations", "export", str(out), "--db", db])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines and f"wrote {len(lines)} line(s) to {out}" in result.output
    both = runner.invoke(app, ["conversations", "export", str(out), "-o", str(tmp_path / "b.jsonl")])
    assert both.exit_code == 2 and "give one" in both.output


def test_the_readme_m_and_k_are_the_defaults_of_the_cli_and_the_page():
    m, k = (int(x) for x in re.search(r"m = (\d+) candidates, k = (\d+) selected", README).groups())
    assert (m, k) == (DEFAULT_CANDIDATES, DEFAULT_K)
    commands = dict(all_commands(typer.main.get_command(app)))
    defaults = {p.name: p.default for p in commands[("specs", "generate")].params}
    assert defaults["m"] == m
    assert {p.name: p.default for p in commands[("specs", "select")].params}["k"] == k
    page = (ROOT / "pages" / "specs.py").read_text()
    assert "DEFAULT_CANDIDATES, step=5" in page and "min(DEFAULT_K," in page, (
        "the page uses the same defaults"
    )


def test_no_help_shows_a_value_beside_a_flag_that_takes_none():
    checked = 0
    for path, command in all_commands(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, path
        assert "<bool>" not in result.output, (path, result.output)
        flags = [p for p in command.params if p.param_type_name == "option" and p.is_flag]
        checked += len(flags)
        for flag in flags:
            line = next(x for x in result.output.splitlines() if flag.opts[-1] in x)
            assert not re.search(re.escape(flag.opts[-1]) + r"\s+<", line), (path, line)
    assert checked >= 15, "every command's flags were looked at"
