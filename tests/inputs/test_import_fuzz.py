"""Fuzzing the importers through the CLI: a few hundred malformed inputs, generated deterministically from
the sample project and from valid specs and JSONL, each broken by one seeded mutation that is sure to
make it invalid. Every one must be refused: exit code 1, no traceback, one line per problem, one of them
naming the broken file (and its line, where the mutation knows it), the store byte-identical, and the
memory of this process bounded.

Targets: `evalcore import FOLDER`, `evalcore import ZIP`, `evalcore specs import FILE.yaml|.feature`,
`evalcore conversations import FILE.jsonl`.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import resource
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from import_cases import cli, sample_store, store_bytes, write_zip

from evalcore.cli.main import SAMPLE_PROJECT

SEED = 20261122
COUNTS = {"folder": 110, "zip": 50, "specs_yaml": 45, "gherkin": 35, "jsonl": 60}
MEMORY_GROWTH_MB = 200  # the whole run; a bomb getting through would take gigabytes
PROBLEM = re.compile(r"^(?P<file>\S+?)(?::(?P<line>\d+))?(?: \[(?P<field>.+?)\])?: (?P<why>.+)$")
MB = 1024 * 1024


@dataclass
class Broken:
    """One mutation of one file: its new bytes, the line it broke (if it knows) and a word of the problem."""

    data: bytes
    line: int | None
    says: str


@dataclass
class Case:
    """One malformed input and what its refusal must name."""

    name: str
    args: list[str]
    file: str
    line: int | None
    says: str
    env: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------------ mutations of any text


def invalid_utf8(rng: random.Random, raw: bytes) -> Broken:
    at = rng.randrange(len(raw))
    return Broken(raw[:at] + b"\xff" + raw[at:], raw[:at].count(b"\n") + 1, "not UTF-8")


def nul_byte(rng: random.Random, raw: bytes) -> Broken:
    at = rng.randrange(len(raw))
    return Broken(raw[:at] + b"\x00" + raw[at:], raw[:at].count(b"\n") + 1, "NUL")


TEXT_OPS = [invalid_utf8, nul_byte]


# ------------------------------------------------------------------------------------ mutations of YAML


def _key_nodes(text: str) -> list[tuple[yaml.Node, yaml.Node]]:
    """(key, value) of every mapping entry whose key starts its own line (not a '- key:' item opener)."""
    found, stack = [], [yaml.compose(text, Loader=yaml.SafeLoader)]
    lines = text.split("\n")
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                col = key.start_mark.column
                if lines[key.start_mark.line][:col].strip() == "":
                    found.append((key, value))
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(found, key=lambda kv: kv[0].start_mark.index)


def yaml_duplicate_key(rng: random.Random, raw: bytes) -> Broken:
    """The same key again, just above one that starts a line: both land in one mapping."""
    text = raw.decode()
    key, _ = rng.choice(_key_nodes(text))
    lines = text.split("\n")
    at = key.start_mark.line
    lines.insert(at, " " * key.start_mark.column + f"{key.value}: duplicate")
    return Broken("\n".join(lines).encode(), at + 2, "given twice")


def _plain_values(text: str) -> list[yaml.ScalarNode]:
    return [
        v
        for _, v in _key_nodes(text)
        if isinstance(v, yaml.ScalarNode)
        and v.style is None
        and v.start_mark.line == v.end_mark.line
        and v.value
    ]


def yaml_alias(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode()
    value = rng.choice(_plain_values(text))
    out = text[: value.start_mark.index] + "*nowhere" + text[value.end_mark.index :]
    return Broken(out.encode(), value.start_mark.line + 1, "aliases")


def yaml_unclosed_quote(rng: random.Random, raw: bytes) -> Broken:
    """A quote before a value that nothing after closes: the error must point at the quote's line."""
    text = raw.decode()
    values = [
        v
        for v in _plain_values(text)
        if not re.search(r'["\\]|^(---|\.\.\.)', text[v.start_mark.index :], re.MULTILINE)
    ]
    value = rng.choice(values)
    out = text[: value.start_mark.index] + '"' + text[value.start_mark.index :]
    return Broken(out.encode(), value.start_mark.line + 1, "quoted scalar")


def yaml_unknown_top_field(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode().rstrip("\n") + "\n"
    name = rng.choice(["colour", "owner_email", "versoin", "notes"])
    return Broken((text + f"{name}: x\n").encode(), text.count("\n") + 1, "unknown field")


def yaml_wrong_type(key: str) -> Callable[[random.Random, bytes], Broken]:
    def op(rng: random.Random, raw: bytes) -> Broken:
        text = raw.decode()
        match = re.search(rf"^{key}: .*$", text, re.MULTILINE)
        assert match, key
        value = rng.choice(["[1, 2]", "{a: 1}", "null"])
        out = text[: match.start()] + f"{key}: {value}" + text[match.end() :]
        return Broken(out.encode(), text[: match.start()].count("\n") + 1, "")

    op.__name__ = f"yaml_wrong_type_of_{key}"
    return op


YAML_OPS = [*TEXT_OPS, yaml_duplicate_key, yaml_alias, yaml_unclosed_quote]


# ------------------------------------------------------------------------------------ mutations of JSON


def _structural(text: str) -> list[int]:
    """Offsets of the characters of a JSON text that are structure (brackets, colons, commas, quotes)."""
    found, in_string, escaped = [], False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                found.append(i)
        elif ch == '"':
            in_string = True
            found.append(i)
        elif ch in "{}[],:":
            found.append(i)
    return found


def json_drop_structure(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode()
    at = rng.choice(_structural(text))
    return Broken((text[:at] + text[at + 1 :]).encode(), None, "invalid JSON")


def json_truncate(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode()
    at = rng.randrange(1, text.rindex("}"))
    return Broken(text[:at].encode(), None, "invalid JSON")


def json_duplicate_key(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode()
    key = rng.choice(["name", "description", "parameters"])
    out = text.replace("{", "{" + f'"{key}": "twice",', 1)
    return Broken(out.encode(), None, "given twice")


def json_wrong_name(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode()
    match = re.search(r'"name": "[^"]*"', text)
    assert match
    value = rng.choice(["5", "null", '"has space"', '["x"]'])
    out = text[: match.start()] + f'"name": {value}' + text[match.end() :]
    return Broken(out.encode(), text[: match.start()].count("\n") + 1, "")


def json_bad_schema(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode()
    match = re.search(r'"type": "object"', text)
    assert match
    value = rng.choice(['"objekt"', '"array"', "7"])
    out = text[: match.start()] + f'"type": {value}' + text[match.end() :]
    return Broken(out.encode(), text[: match.start()].count("\n") + 1, "")


JSON_OPS = [
    *TEXT_OPS,
    json_drop_structure,
    json_truncate,
    json_duplicate_key,
    json_wrong_name,
    json_bad_schema,
]


# ------------------------------------------------------------------------------------- mutations of CSV


def _rows(raw: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(raw.decode(), newline="")))


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def csv_extra_cell(rng: random.Random, raw: bytes) -> Broken:
    rows = _rows(raw)
    i = rng.randrange(1, len(rows))
    rows[i] = [*rows[i], "extra"]
    return Broken(_csv(rows), i + 1, "cells but the header has")


def csv_missing_cell(rng: random.Random, raw: bytes) -> Broken:
    rows = _rows(raw)
    i = rng.randrange(1, len(rows))
    rows[i] = rows[i][:-1]
    return Broken(_csv(rows), i + 1, "cells but the header has")


def csv_blank_header(rng: random.Random, raw: bytes) -> Broken:
    rows = _rows(raw)
    rows[0][rng.randrange(len(rows[0]))] = " "
    return Broken(_csv(rows), 1, "has no name")


def csv_repeated_header(rng: random.Random, raw: bytes) -> Broken:
    rows = _rows(raw)
    a, b = rng.sample(range(len(rows[0])), 2)
    rows[0][a] = rows[0][b]
    return Broken(_csv(rows), 1, "used twice")


def csv_header_only(rng: random.Random, raw: bytes) -> Broken:
    return Broken(_csv(_rows(raw)[:1]), 1, "no rows")


CSV_OPS = [
    *TEXT_OPS,
    csv_extra_cell,
    csv_missing_cell,
    csv_blank_header,
    csv_repeated_header,
    csv_header_only,
]


# ------------------------------------------------------------------------------- mutations of Markdown

FRONT_MATTERS = [
    ("---\ntitle: A\ntitle: B\n---\n", 3, "given twice"),
    ("---\ntitle: *anchor\n---\n", 2, "aliases"),
    ("---\nkind: table\n---\n", 2, "cannot be a table"),
    ("---\n- a\n- b\n---\n", 2, "must be a mapping"),
    ("---\nkind: poem\n---\n", 2, ""),
    ('---\ntitle: "never closed\n---\n', 2, "quoted scalar"),
    ("---\nid: ''\n---\n", 2, "id is empty"),
    ("---\ntitle: !!binary AAAA\n---\n", 2, "binary"),
    ("---\ntitle: " + "[" * 70 + "1" + "]" * 70 + "\n---\n", 2, "nested"),
]


def markdown_front_matter(rng: random.Random, raw: bytes) -> Broken:
    front, line, says = rng.choice(FRONT_MATTERS)
    return Broken(front.encode() + raw, line, says)


def markdown_empty(rng: random.Random, raw: bytes) -> Broken:
    return Broken(rng.choice([b"", b"\n\n  \n", b"---\ntitle: x\n---\n\n"]), None, "empty")


MARKDOWN_OPS = [*TEXT_OPS, markdown_front_matter, markdown_empty]


# ------------------------------------------------------------------------- the project folder and its zip

SAMPLE_FILES = sorted(
    p.relative_to(SAMPLE_PROJECT).as_posix() for p in SAMPLE_PROJECT.rglob("*") if p.is_file()
)


def _ops_for(relative: str) -> list[Callable[[random.Random, bytes], Broken]]:
    if relative == "system.yaml":
        return [*YAML_OPS, yaml_unknown_top_field, yaml_wrong_type("id")]
    if relative.startswith("procedures/"):
        return [*YAML_OPS, yaml_unknown_top_field, yaml_wrong_type("name")]
    if relative.endswith(".json"):
        return JSON_OPS
    if relative.endswith(".csv"):
        return CSV_OPS
    return MARKDOWN_OPS


def _break_a_file(rng: random.Random, root: Path) -> tuple[str, Broken, str]:
    relative = rng.choice(SAMPLE_FILES)
    op = rng.choice(_ops_for(relative))
    broken = op(rng, (root / relative).read_bytes())
    (root / relative).write_bytes(broken.data)
    return relative, broken, op.__name__


def _change_the_folder(rng: random.Random, root: Path) -> tuple[str, Broken, str]:
    """A mutation of the folder's shape rather than of one file's text."""
    choice = rng.randrange(8)
    if choice == 0:
        (root / "documents" / "notes.pdf").write_bytes(b"%PDF-1.4")
        return "documents/notes.pdf", Broken(b"", None, "unsupported document type"), "foreign_file"
    if choice == 1:
        (root / "documents" / "---.md").write_text("# Dashes\n\nText.\n")
        return "documents/---.md", Broken(b"", None, "id is empty"), "nameless_document"
    if choice == 2:
        shutil.copy(root / "policies" / "return_policy.md", root / "documents" / "Return-Policy.md")
        # documents/ is read before policies/, so the policy is the one that repeats an id
        return "policies/return_policy.md", Broken(b"", None, "also used by"), "duplicate_document_id"
    if choice == 3:
        shutil.copy(root / "tools" / "check_stock.json", root / "tools" / "check_stock_v2.json")
        return "tools/check_stock_v2.json", Broken(b"", None, "defined twice"), "duplicate_tool"
    if choice == 4:
        shutil.copy(root / "procedures" / "rent_ebike.yaml", root / "procedures" / "rent_ebike_v2.yaml")
        return "procedures/rent_ebike_v2.yaml", Broken(b"", 1, "defined twice"), "duplicate_procedure"
    if choice == 5:
        path = root / "procedures" / "track_order.yaml"
        text = path.read_text()
        path.write_text(text.replace("api: lookup_order", "api: look_up_order", 1))
        line = text[: text.index("api: lookup_order")].count("\n") + 1
        return "procedures/track_order.yaml", Broken(b"", line, "unknown tool"), "unknown_tool"
    if choice == 6:
        (root / "documents" / "leak.md").symlink_to("/etc/hostname")
        return "documents/leak.md", Broken(b"", None, "outside the project folder"), "link_out"
    (root / "system.yaml").unlink()
    return "", Broken(b"", None, "no system card"), "no_system_card"


def folder_cases(rng: random.Random, work: Path, count: int) -> list[Case]:
    cases = []
    for n in range(count):
        root = Path(shutil.copytree(SAMPLE_PROJECT, work / f"p{n}"))
        if rng.random() < 0.8:
            relative, broken, op = _break_a_file(rng, root)
        else:
            relative, broken, op = _change_the_folder(rng, root)
        shown = f"p{n}/{relative}" if relative else f"p{n}"
        cases.append(Case(f"folder {op} {relative}", ["import", str(root)], shown, broken.line, broken.says))
    return cases


def _members(root: Path, prefix: str) -> dict[str, bytes]:
    return {
        prefix + p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def zip_cases(rng: random.Random, work: Path, count: int) -> list[Case]:
    cases = []
    for n in range(count):
        root = Path(shutil.copytree(SAMPLE_PROJECT, work / f"z{n}"))
        prefix = rng.choice(["", "shop/"])
        name = f"z{n}.zip"
        kind = rng.randrange(4)
        if kind < 2:  # a broken file, packed
            relative, broken, op = _break_a_file(rng, root)
            archive = write_zip(work / name, _members(root, prefix))
            case = Case(f"zip {op} {relative}", ["import", str(archive)], f"{name}/{prefix}{relative}",
                        broken.line, broken.says)  # fmt: skip
        elif kind == 2:  # an unsafe member
            bad, says = rng.choice(
                [("../evil.md", "leaves the archive"), ("/tmp/evil.md", "leaves the archive"),
                 ("documents/../../evil.md", "leaves the archive"), ("C:/evil.md", "leaves the archive")]
            )  # fmt: skip
            members = {**_members(root, prefix), bad: b"# Evil\n\nx\n"}
            archive = write_zip(work / name, members)
            case = Case(f"zip unsafe {bad}", ["import", str(archive)], f"{name}/{bad}", None, says)
        else:  # a damaged or oversized archive
            members = _members(root, prefix)
            archive = write_zip(work / name, members)
            data = archive.read_bytes()
            damage = rng.randrange(4)
            if damage == 0:
                archive.write_bytes(data[: rng.randrange(10, len(data) - 30)])
                case = Case("zip truncated", ["import", str(archive)], name, None, "not a .zip archive")
            elif damage == 1:
                first = next(iter(members))
                at = 30 + len(first.encode()) + 2  # inside the first member's compressed data
                archive.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])
                case = Case("zip corrupt", ["import", str(archive)], f"{name}/{first}", None, "cannot unpack")
            elif damage == 2:
                archive = write_zip(work / name, members, filler={f"{prefix}documents/big.md": 2})
                case = Case("zip ratio", ["import", str(archive)], f"{name}/{prefix}documents/big.md", None,
                            "zip bomb")  # fmt: skip
            else:
                archive = write_zip(
                    work / name, members, links={f"{prefix}documents/leak.md": "/etc/hostname"}
                )
                case = Case("zip link", ["import", str(archive)], f"{name}/{prefix}documents/leak.md", None,
                            "symbolic link")  # fmt: skip
        cases.append(case)
    return cases


# ----------------------------------------------------------------------------------------- specs files

SPECS = [
    {
        "scenario": f"Customer asks about topic {i}",
        "given": "a customer on the chat",
        "when": f"they ask question {i}",
        "then": "the assistant answers from the policy",
        "category": "policy",
        "documents": [doc],
    }
    for i, doc in enumerate(["return-policy", "rental-policy", "warranty-policy", "stores", "products"])
]


def _specs_yaml() -> bytes:
    return yaml.safe_dump(SPECS, sort_keys=False).encode()


def specs_wrong_type(rng: random.Random, raw: bytes) -> Broken:
    text = raw.decode()
    starts = [m.start() for m in re.finditer(r"^  then: .*$", text, re.MULTILINE)]
    at = rng.choice(starts)
    end = text.index("\n", at)
    return Broken((text[:at] + "  then: [1, 2]" + text[end:]).encode(), text[:at].count("\n") + 1, "")


def specs_unknown_field(rng: random.Random, raw: bytes) -> Broken:
    lines = raw.decode().split("\n")
    i = rng.choice([n for n, line in enumerate(lines) if line.startswith("  given:")])
    lines.insert(i, "  colour: red")
    return Broken("\n".join(lines).encode(), i + 1, "unknown field")


def specs_missing_then(rng: random.Random, raw: bytes) -> Broken:
    lines = raw.decode().split("\n")
    i = rng.choice([n for n, line in enumerate(lines) if line.startswith("  then:")])
    del lines[i]
    return Broken("\n".join(lines).encode(), None, "required field is missing")


def specs_unknown_document(rng: random.Random, raw: bytes) -> Broken:
    text = (
        raw.decode().replace("- stores", "- no-such-document").replace("@doc:stores", "@doc:no-such-document")
    )
    return Broken(text.encode(), None, "unknown document")


def specs_not_a_list(rng: random.Random, raw: bytes) -> Broken:
    return Broken(b"scenario: x\ngiven: y\n", 1, "expected a list")


SPECS_YAML_OPS = [
    *YAML_OPS,
    specs_wrong_type,
    specs_unknown_field,
    specs_missing_then,
    specs_unknown_document,
    specs_not_a_list,
]


def _gherkin() -> bytes:
    lines = ["Feature: Ridgeline", ""]
    for spec in SPECS:
        lines += [
            f"  @category:policy @doc:{spec['documents'][0]}",
            f"  Scenario: {spec['scenario']}",
            f"    Given {spec['given']}",
            f"    When {spec['when']}",
            f"    Then {spec['then']}",
            "",
        ]
    return "\n".join(lines).encode()


def _line_numbers(raw: bytes, pattern: str) -> list[int]:
    return [n for n, line in enumerate(raw.decode().split("\n")) if re.match(pattern, line)]


def gherkin_no_then(rng: random.Random, raw: bytes) -> Broken:
    lines = raw.decode().split("\n")
    i = rng.choice(_line_numbers(raw, r"\s+Then "))
    del lines[i]
    return Broken("\n".join(lines).encode(), i - 2, "has no Then")  # the Scenario line, 3 above


def gherkin_garbage(rng: random.Random, raw: bytes) -> Broken:
    lines = raw.decode().split("\n")
    i = rng.randrange(2, len(lines))
    lines.insert(
        i, rng.choice(["    Whenever it rains", "Senario: typo", "    * a bullet", "Examples: none"])
    )
    return Broken("\n".join(lines).encode(), i + 1, "not a Gherkin line")


def gherkin_step_first(rng: random.Random, raw: bytes) -> Broken:
    lines = raw.decode().split("\n")
    lines.insert(1, "  Given nothing yet")
    return Broken("\n".join(lines).encode(), 2, "before any Scenario")


def gherkin_and_first(rng: random.Random, raw: bytes) -> Broken:
    lines = raw.decode().split("\n")
    i = rng.choice(_line_numbers(raw, r"\s+Scenario: "))
    lines.insert(i + 1, "    And also this")
    return Broken("\n".join(lines).encode(), i + 2, "no step before it")


def gherkin_untitled(rng: random.Random, raw: bytes) -> Broken:
    lines = raw.decode().split("\n")
    i = rng.choice(_line_numbers(raw, r"\s+Scenario: "))
    lines[i] = "  Scenario:"
    return Broken("\n".join(lines).encode(), i + 1, "no title")


def gherkin_no_scenario(rng: random.Random, raw: bytes) -> Broken:
    return Broken(b"Feature: nothing\n\n# just a comment\n", 1, "no Scenario")


GHERKIN_OPS = [
    *TEXT_OPS,
    gherkin_no_then,
    gherkin_garbage,
    gherkin_step_first,
    gherkin_and_first,
    gherkin_untitled,
    gherkin_no_scenario,
    specs_unknown_document,
]


def specs_cases(rng: random.Random, work: Path, count: int, suffix: str) -> list[Case]:
    base, ops = (_specs_yaml(), SPECS_YAML_OPS) if suffix == ".yaml" else (_gherkin(), GHERKIN_OPS)
    cases = []
    for n in range(count):
        op = rng.choice(ops)
        broken = op(rng, base)
        path = work / f"s{n}{suffix}"
        path.write_bytes(broken.data)
        args = ["specs", "import", str(path), "--author", "fuzz"]
        cases.append(Case(f"specs {op.__name__}", args, path.name, broken.line, broken.says))
    return cases


# ---------------------------------------------------------------------------------------------- JSONL


def _jsonl_items() -> list[dict]:
    turns = [
        {"index": 0, "role": "user", "content": "Can I return a helmet?"},
        {"index": 1, "role": "assistant", "content": "Yes, within 30 days.", "grounding": ["return-policy"]},
    ]
    provenance = {"producer": "human"}
    items: list[dict] = [
        {"id": f"fuzz-c{i}", "generator": "human", "turns": turns, "provenance": provenance} for i in range(4)
    ]
    items += [
        {"id": f"fuzz-t{i}", "context": turns[:1], "expected": turns[1], "provenance": provenance}
        for i in range(2)
    ]
    return items


def _jsonl_op(name: str, says: str, change: Callable[[random.Random, dict], str | dict]) -> Callable:
    def op(rng: random.Random, raw: bytes) -> Broken:
        lines = raw.decode().split("\n")[:-1]
        i = rng.randrange(len(lines))
        changed = change(rng, json.loads(lines[i]))
        lines[i] = changed if isinstance(changed, str) else json.dumps(changed)
        return Broken(("\n".join(lines) + "\n").encode(), i + 1, says)

    op.__name__ = name
    return op


JSONL_OPS = [
    *TEXT_OPS,
    _jsonl_op(
        "truncated", "not valid JSON", lambda r, d: json.dumps(d)[: r.randrange(1, len(json.dumps(d)))]
    ),
    _jsonl_op("duplicate_key", "given twice", lambda r, d: '{"id": "twice", ' + json.dumps(d)[1:]),
    _jsonl_op("unknown_spec", "no spec", lambda r, d: {**d, "spec_id": f"spec-none-{r.randrange(99)}"}),
    _jsonl_op("unknown_field", "unknown field", lambda r, d: {**d, "colour": "red"}),
    _jsonl_op(
        "no_kind", "not a", lambda r, d: {k: v for k, v in d.items() if k not in ("turns", "expected")}
    ),
    _jsonl_op("wrong_type", "", lambda r, d: {**d, "provenance": r.choice([5, "x", [], None])}),
    _jsonl_op("nul_escape", "NUL", lambda r, d: {**d, "id": d["id"] + "\x00"}),
    _jsonl_op("surrogate", "surrogate", lambda r, d: json.dumps(d).replace('"id": "', '"id": "\\ud800', 1)),
    _jsonl_op(
        "deep", "nested", lambda r, d: json.dumps(d)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    ),
    _jsonl_op("not_object", "JSON object", lambda r, d: r.choice(["[1, 2]", '"text"', "42", "null"])),
    _jsonl_op(
        "bad_role", "", lambda r, d: json.dumps(d).replace('"role": "assistant"', '"role": "robot"', 1)
    ),
    _jsonl_op("negative_index", "", lambda r, d: json.dumps(d).replace('"index": 0', '"index": -1', 1)),
]


def jsonl_cases(rng: random.Random, work: Path, count: int) -> list[Case]:
    base = "".join(json.dumps(item) + "\n" for item in _jsonl_items()).encode()
    cases = []
    for n in range(count):
        op = rng.choice(JSONL_OPS)
        broken = op(rng, base)
        path = work / f"c{n}.jsonl"
        path.write_bytes(broken.data)
        cases.append(Case(f"jsonl {op.__name__}", ["conversations", "import", str(path)], path.name,
                          broken.line, broken.says))  # fmt: skip
    return cases


# ------------------------------------------------------------------------------------------------ the run


def all_cases(work: Path) -> list[Case]:
    rng = random.Random(SEED)
    cases = [
        *folder_cases(rng, work, COUNTS["folder"]),
        *zip_cases(rng, work, COUNTS["zip"]),
        *specs_cases(rng, work, COUNTS["specs_yaml"], ".yaml"),
        *specs_cases(rng, work, COUNTS["gherkin"], ".feature"),
        *jsonl_cases(rng, work, COUNTS["jsonl"]),
    ]
    # Some again under a size limit of 512 bytes: a problem must then name a file of the same input.
    for case in rng.sample(cases, 10):
        limit_env = "EVALCORE_MAX_UNPACKED_MB" if case.args[0] == "conversations" else "EVALCORE_MAX_FILE_MB"
        top = case.file.split("/")[0]
        cases.append(Case(case.name + " (with a 512-byte limit)", case.args, top, None, "",
                          env={limit_env: str(512 / MB)}))  # fmt: skip
    return cases


def _check(case: Case, db: str) -> str | None:
    """Why the case was not refused properly, or None."""
    before = store_bytes(db)
    result = cli(*case.args, "--db", db, env=case.env or None)
    output = result.output
    if result.exit_code != 1:
        return f"exit code {result.exit_code}: {output[-300:]}"
    if store_bytes(db) != before:
        return "the store changed"
    if "Traceback" in output or not output.startswith("error: "):
        return f"not a clear error: {output[:300]}"
    lines = output.strip().splitlines()
    problems = [PROBLEM.match(line.strip()) for line in lines[1:]] or [PROBLEM.match(lines[0][7:])]
    if not all(problems):
        return f"a problem line without a location: {output[:500]}"
    named = [p for p in problems if p["file"] == case.file or p["file"].startswith(case.file + "/")]
    if not named:
        return f"no problem names {case.file}: {output[:500]}"
    if case.line is not None and not any(p["line"] == str(case.line) for p in named):
        return f"no problem names {case.file}:{case.line}: {output[:500]}"
    if case.says and not any(case.says in p["why"] for p in named):
        return f"no problem of {case.file} says '{case.says}': {output[:500]}"
    return None


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return sample_store(tmp_path_factory.mktemp("fuzz-store"))


def test_every_malformed_input_is_refused_with_a_located_one_line_error(db, tmp_path):
    cases = all_cases(tmp_path)
    assert len(cases) >= 300
    start_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    failures = [f"{case.name}: {why}" for case in cases if (why := _check(case, db))]
    grown_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - start_mb
    assert not failures, f"{len(failures)} of {len(cases)} cases:\n" + "\n".join(failures)
    assert grown_mb < MEMORY_GROWTH_MB, f"peak memory grew by {grown_mb:.0f} MB"
