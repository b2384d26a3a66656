"""Tools import in the four formats teams hold (issue 17, item 1; seed 001, Section 3.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.errors import ValidationFailed
from evalcore.inputs.tool_formats import ANTHROPIC, MCP, OPENAI, OURS, read_tools

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample" / "tools" / "lookup_order.json"
OURS_TOOL = json.loads(SAMPLE.read_text())


def _same_tool(read) -> None:
    assert read.tool.name == "lookup_order"
    assert read.tool.parameters == OURS_TOOL["parameters"]
    assert read.tool.description == OURS_TOOL["description"]


def test_ours_unchanged() -> None:
    (read,) = read_tools(SAMPLE.read_text(), "lookup_order.json")
    assert read.format == OURS
    _same_tool(read)
    assert read.tool.returns == OURS_TOOL["returns"]


def test_openai_function_tools_list() -> None:
    wrapped = {
        "type": "function",
        "function": {k: OURS_TOOL[k] for k in ("name", "description", "parameters")} | {"strict": True},
    }
    (read,) = read_tools(json.dumps([wrapped]), "openai.json")
    assert read.format == OPENAI
    _same_tool(read)


def test_anthropic_input_schema() -> None:
    tool = {"name": "lookup_order", "description": OURS_TOOL["description"]}
    tool["input_schema"] = OURS_TOOL["parameters"]
    (read,) = read_tools(json.dumps({"tools": [tool]}), "anthropic.json")
    assert read.format == ANTHROPIC
    _same_tool(read)


def test_mcp_tools_list_result_in_jsonrpc() -> None:
    entry = {"name": "lookup_order", "title": "Lookup", "description": OURS_TOOL["description"]}
    entry |= {"inputSchema": OURS_TOOL["parameters"], "outputSchema": OURS_TOOL["returns"]}
    doc = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [entry], "nextCursor": None}}
    (read,) = read_tools(json.dumps(doc, indent=2), "mcp.json")
    assert read.format == MCP
    _same_tool(read)
    assert read.tool.returns == OURS_TOOL["returns"]


def test_error_on_wrapped_tool_says_how_it_was_read_and_where() -> None:
    text = json.dumps(
        [{"type": "function", "function": {"name": "bad name", "parameters": {"type": "array"}}}], indent=2
    )
    with pytest.raises(ValidationFailed) as caught:
        read_tools(text, "openai.json")
    shown = [str(p) for p in caught.value.problems]
    assert any(
        "[0].function.name" in s and "read as an OpenAI function tool" in s and "openai.json:5" in s
        for s in shown
    ), shown


def test_wrong_schema_in_anthropic_tool_is_located() -> None:
    text = json.dumps([{"name": "x", "input_schema": {"type": "string"}, "cach_control": {}}], indent=2)
    with pytest.raises(ValidationFailed) as caught:
        read_tools(text, "a.json")
    shown = [str(p) for p in caught.value.problems]
    assert any("[0].input_schema.type" in s and "Anthropic" in s for s in shown), shown
    assert any("[0].cach_control" in s and "unknown field" in s for s in shown), shown


def test_not_tools_and_duplicates() -> None:
    with pytest.raises(ValidationFailed, match="must be a JSON object"):
        read_tools("3", "x.json")
    twice = json.dumps([OURS_TOOL, OURS_TOOL])
    with pytest.raises(ValidationFailed, match="defined twice"):
        read_tools(twice, "x.json")


def test_a_project_folder_takes_tools_files_as_teams_hold_them(tmp_path: Path) -> None:
    import shutil

    from evalcore.inputs import load_project

    root = tmp_path / "shop"
    shutil.copytree(SAMPLE.parents[1], root)
    tools = root / "tools"
    ours = {p.stem: json.loads(p.read_text()) for p in tools.glob("*.json")}
    for p in tools.glob("*.json"):
        p.unlink()
    openai = [
        {"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters")}}
        for t in ours.values()
    ]
    (tools / "openai.json").write_text(json.dumps(openai[:4], indent=2))
    anthropic = [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in ours.values()
    ]
    (tools / "anthropic.json").write_text(json.dumps({"tools": anthropic[4:]}, indent=2))
    bundle = load_project(root)
    assert sorted(t.name for t in bundle.tools) == sorted(ours)
    assert {t.name: t.parameters for t in bundle.tools} == {n: t["parameters"] for n, t in ours.items()}
    openai[0]["function"]["parameters"] = {"type": "array"}
    (tools / "openai.json").write_text(json.dumps(openai[:4], indent=2))
    with pytest.raises(ValidationFailed) as caught:
        load_project(root)
    assert any(
        "read as an OpenAI function tool" in str(p) and "shop/tools/openai.json:" in str(p)
        for p in caught.value.problems
    )
