"""What the importers refuse (issue 12, items 4-10), each through the real entry point, the CLI: bombs and
oversized inputs within bounded memory, links and paths out of the project, duplicate keys, malformed
text; every refusal a clear line with a location, an unchanged store, and usage errors apart from gates."""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from import_cases import (
    REPO,
    cli,
    copy_sample,
    error_lines,
    measured,
    sample_members,
    sample_store,
    store_bytes,
    write_zip,
)

from evalcore.cli.main import SAMPLE_PROJECT
from evalcore.inputs import import_project
from evalcore.store import Store

BOUNDED_MB = 300  # peak memory of a refused bomb; a plain `evalcore import` of the sample takes ~90 MB


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store file holding the sample project, imported once for the module."""
    return Path(sample_store(tmp_path_factory.mktemp("sample")).removeprefix("sqlite:///"))


@pytest.fixture
def db(sample_db: Path, tmp_path: Path) -> str:
    """A fresh copy of the store holding the sample project."""
    copy = tmp_path / "store.db"
    shutil.copyfile(sample_db, copy)
    return f"sqlite:///{copy}"


def refused(db: str, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """Run a command that must be refused: exit 1, problem lines returned, the store byte-identical."""
    gc.collect()  # close the stores earlier commands left open: that checkpoints their log into the file
    before = store_bytes(db)
    result = cli(*args, "--db", db, env=env)
    assert result.exit_code == 1, result.output
    assert store_bytes(db) == before
    return error_lines(result)


# ----------------------------------------------------------------------------- 4. bombs and size limits


def test_a_zip_bomb_is_refused_before_unpacking_in_bounded_memory(db, tmp_path):
    bomb = write_zip(tmp_path / "bomb.zip", sample_members(), filler={"documents/filler.txt": 900})
    assert bomb.stat().st_size < 1000 * 1024  # the case: under 1 MB, 900 MB unpacked
    before = store_bytes(db)
    code, output, peak = measured("import", str(bomb), "--db", db)
    assert code == 1 and store_bytes(db) == before
    assert "bomb.zip/documents/filler.txt: unpacks to 900.0 MB, over the 10.0 MB limit" in output
    assert peak < BOUNDED_MB, f"peak memory {peak} MB"


def test_compression_ratio_total_size_and_file_count_are_limits_of_their_own(db, tmp_path):
    roomy = {"EVALCORE_MAX_FILE_MB": "100"}
    ratio = write_zip(tmp_path / "ratio.zip", sample_members(), filler={"documents/filler.txt": 5})
    lines = refused(db, "import", str(ratio), env=roomy)
    assert lines == [
        "ratio.zip/documents/filler.txt: compressed 1010 to 1, over the limit of 100 to 1 "
        "(set EVALCORE_MAX_COMPRESSION_RATIO); refused as a possible zip bomb"
    ]

    archive = write_zip(tmp_path / "sample.zip", sample_members())
    assert (
        refused(db, "import", str(archive), env={"EVALCORE_MAX_UNPACKED_MB": "0.05"})[0]
        == "sample.zip: unpacks to 65 KB, over the 51 KB limit (set EVALCORE_MAX_UNPACKED_MB)"
    )
    folder = refused(db, "import", str(SAMPLE_PROJECT), env={"EVALCORE_MAX_UNPACKED_MB": "0.05"})
    assert folder == [
        "sample: 63 KB of files is over the 51 KB limit of one import (set EVALCORE_MAX_UNPACKED_MB)"
    ]
    for path in (archive, SAMPLE_PROJECT):
        (line,) = refused(db, "import", str(path), env={"EVALCORE_MAX_FILES": "10"})
        assert "over the limit of 10" in line or "more than 10 files" in line
        assert "EVALCORE_MAX_FILES" in line

    bad = cli("import", str(archive), "--db", db, env={"EVALCORE_MAX_FILES": "many"})
    assert bad.exit_code == 2
    assert bad.output.strip() == "error: EVALCORE_MAX_FILES must be a whole number above 0 (got 'many')"

    raised = {**roomy, "EVALCORE_MAX_COMPRESSION_RATIO": "2000"}  # last: it writes to the store
    assert cli("import", str(ratio), "--db", db, env=raised).exit_code == 0


def test_a_200_mb_document_is_refused_without_reading_it(db, tmp_path):
    project = copy_sample(tmp_path / "big")
    with (project / "documents" / "huge.md").open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: 200 MB to the file system, nothing on the disk
    before = store_bytes(db)
    code, output, peak = measured("import", str(project), "--db", db)
    assert code == 1 and store_bytes(db) == before
    assert (
        "big/documents/huge.md: 200.0 MB is over the 10.0 MB limit of one file (set EVALCORE_MAX_FILE_MB)"
        in output
    )
    assert peak < BOUNDED_MB


def test_a_table_of_tiny_cells_stops_at_the_cell_limit_in_bounded_memory(db, tmp_path):
    project = copy_sample(tmp_path / "cells")
    (project / "tables" / "tiny.csv").write_text("a,b\n" + "1,2\n" * 2_000_000)  # 8 MB, 4 million cells
    before = store_bytes(db)
    code, output, peak = measured("import", str(project), "--db", db)
    assert code == 1 and store_bytes(db) == before
    assert "cells/tables/tiny.csv:100002: more than 200000 cells (set EVALCORE_MAX_TABLE_CELLS)" in output
    assert peak < BOUNDED_MB  # read whole, a 10 MB table of such cells took 1.4 GB


# ---------------------------------------------------------------------------------- 5. YAML alias bomb


def _alias_bomb() -> str:
    """Nine lists of nine references each, eight levels deep: 9^8 (43 million) strings once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefg", "bcdefgh", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines)


def test_a_yaml_alias_bomb_is_refused_at_its_first_alias_in_bounded_memory(db, tmp_path):
    project = copy_sample(tmp_path / "alias")
    front = f"---\n{_alias_bomb()}\n---\n# Bomb\n\nText.\n"
    assert len(front) < 600
    (project / "documents" / "bomb.md").write_text(front, encoding="utf-8")
    before = store_bytes(db)
    code, output, peak = measured("import", str(project), "--db", db)
    assert code == 1 and store_bytes(db) == before
    assert (
        "alias/documents/bomb.md:3: invalid YAML: aliases (*name) are not accepted in input files" in output
    )
    assert peak < BOUNDED_MB

    specs = tmp_path / "specs.yaml"
    specs.write_text(_alias_bomb() + "\n", encoding="utf-8")
    (line,) = refused(db, "specs", "import", str(specs), "--author", "ana")
    assert line.startswith("specs.yaml:2: invalid YAML: aliases")


# ------------------------------------------------------------------------- 6. links and paths that leave


def test_links_and_archive_paths_that_leave_the_project_are_refused(db, tmp_path):
    project = copy_sample(tmp_path / "leaky")
    (project / "documents" / "leak.txt").symlink_to("/etc/passwd")
    assert refused(db, "import", str(project)) == [
        "leaky/documents/leak.txt: a link to a file outside the project folder; refused"
    ]

    archive = write_zip(
        tmp_path / "evil.zip",
        {**sample_members(), "../outside.md": b"# Out\n\nx\n", "/etc/evil.md": b"# Evil\n\nx\n"},
        links={"documents/leak.txt": "/etc/passwd"},
    )
    assert refused(db, "import", str(archive)) == [
        "evil.zip/../outside.md: path leaves the archive; refused",
        "evil.zip//etc/evil.md: path leaves the archive; refused",
        "evil.zip/documents/leak.txt: a symbolic link; refused",
    ]
    assert not (tmp_path / "outside.md").exists()

    (project / "documents" / "leak.txt").unlink()
    (project / "documents" / "same.md").symlink_to(project / "policies" / "return_policy.md")
    assert cli("import", str(project), "--db", db).exit_code == 0  # a link inside the folder is fine


# --------------------------------------------------------------------------------------- 7. duplicate keys


def test_duplicate_keys_are_reported_with_both_lines(db, tmp_path):
    project = copy_sample(tmp_path / "twice")
    card = project / "system.yaml"
    card.write_text(card.read_text(encoding="utf-8") + "id: another_project\n", encoding="utf-8")
    last = len(card.read_text(encoding="utf-8").splitlines())
    tool = project / "tools" / "lookup_order.json"
    tool.write_text(
        tool.read_text().replace('"name": "lookup_order",', '"name": "lookup_order",\n"name": "x",')
    )
    assert refused(db, "import", str(project)) == [
        f"twice/system.yaml:{last}: key 'id' is given twice (also on line 1)",
        "twice/tools/lookup_order.json:3: key 'name' is given twice (also on line 2)",
    ]
    assert [p.id for p in Store(db).projects()] == ["ridgeline_support"]

    lines = tmp_path / "items.jsonl"
    lines.write_text('{"id": "c1", "id": "c2", "turns": []}\n', encoding="utf-8")
    assert refused(db, "conversations", "import", str(lines)) == [
        "items.jsonl:1 [id]: key 'id' is given twice"
    ]


# ----------------------------------------------------------------------------------- 8. the small things


def test_a_byte_order_mark_does_not_stick_to_the_first_column(db, tmp_path):
    project = copy_sample(tmp_path / "bom")
    table = project / "tables" / "stores.csv"
    table.write_bytes(b"\xef\xbb\xbf" + table.read_bytes())
    assert cli("import", str(project), "--db", db).exit_code == 0
    stores = next(d for d in Store(db).documents("ridgeline_support") if d.id == "stores")
    assert stores.columns[0] == "store_id" and "store_id" in stores.rows[0]


def test_a_file_name_without_ascii_letters_still_gives_an_id_and_an_empty_one_is_refused(db, tmp_path):
    project = copy_sample(tmp_path / "names")
    (project / "documents" / "Доставка.md").write_text("# Доставка\n\nТекст.\n", encoding="utf-8")
    assert cli("import", str(project), "--db", db).exit_code == 0
    assert "доставка" in {d.id for d in Store(db).documents("ridgeline_support")}
    (project / "documents" / "---.md").write_text("# Dashes\n\nText.\n", encoding="utf-8")
    assert refused(db, "import", str(project)) == [
        "names/documents/---.md [id]: the document id is empty: name the file with a letter or digit or set "
        "'id:' in its front matter"
    ]


def test_two_procedures_with_one_name_are_refused(db, tmp_path):
    project = copy_sample(tmp_path / "procs")
    text = (project / "procedures" / "track_order.yaml").read_text(encoding="utf-8")
    (project / "procedures" / "track_order_copy.yaml").write_text(text, encoding="utf-8")
    assert refused(db, "import", str(project)) == [
        "procs/procedures/track_order_copy.yaml:1 [name]: procedure name 'track_order' is defined twice"
    ]


def test_conversations_naming_an_unknown_spec_are_refused(db, tmp_path):
    conversation = {
        "id": "c-1",
        "spec_id": "spec-ghost",
        "generator": "human",
        "turns": [],
        "provenance": {"producer": "human"},
    }
    path = tmp_path / "conversations.jsonl"
    path.write_text(json.dumps(conversation) + "\n", encoding="utf-8")
    assert refused(db, "conversations", "import", str(path)) == [
        "conversations.jsonl:1 [spec_id]: no spec 'spec-ghost' in project ridgeline_support"
    ]


def test_nul_characters_are_refused_before_they_reach_the_store(db, tmp_path):
    project = copy_sample(tmp_path / "nul")
    (project / "documents" / "nul.md").write_bytes(b"# Nul\n\nline two\nbad \x00 here\n")
    assert refused(db, "import", str(project)) == [
        "nul/documents/nul.md:4: contains a NUL character: not a text file"
    ]
    jsonl = tmp_path / "nul.jsonl"
    jsonl.write_text('{"id": "c-1", "turns": [], "generator": "a\\u0000b"}\n', encoding="utf-8")
    assert refused(db, "conversations", "import", str(jsonl)) == [
        "nul.jsonl:1 [generator]: contains a NUL character"
    ]
    specs = tmp_path / "nul.yaml"
    specs.write_text('- scenario: "a\\0b"\n  given: g\n  when: w\n  then: t\n', encoding="utf-8")
    assert refused(db, "specs", "import", str(specs), "--author", "ana") == [
        "nul.yaml:1 [[0].scenario]: contains a NUL character"
    ]


def test_nul_characters_are_one_line_on_either_backend(store, tmp_path, snapshot):
    import_project(
        store, SAMPLE_PROJECT
    )  # on PostgreSQL a NUL used to fail the insert: 86 lines of traceback
    before = snapshot(store)
    path = tmp_path / "nul.jsonl"
    turn = {"index": 0, "role": "user", "content": "a\u0000b"}
    path.write_text(json.dumps({"id": "c-1", "generator": "human", "turns": [turn],
                                "provenance": {"producer": "human"}}) + "\n")  # fmt: skip
    result = cli("conversations", "import", str(path), "--db", store.url)
    assert result.exit_code == 1
    assert error_lines(result) == ["nul.jsonl:1 [turns.0.content]: contains a NUL character"]
    assert snapshot(store) == before


def test_a_spec_file_that_is_not_utf8_is_one_line(db, tmp_path):
    specs = tmp_path / "latin1.feature"
    specs.write_bytes("Feature: x\n  Scenario: café\n".encode("latin-1"))
    assert refused(db, "specs", "import", str(specs), "--author", "ana") == [
        "latin1.feature:2: not UTF-8 text (byte 0xe9 at offset 26)"
    ]


def test_an_unclosed_quote_is_reported_where_it_opens(db, tmp_path):
    project = copy_sample(tmp_path / "quote")
    path = project / "procedures" / "track_order.yaml"
    path.write_text(path.read_text().replace("intent: find", 'intent: "find', 1), encoding="utf-8")
    (line,) = refused(db, "import", str(project))
    assert line.startswith(
        "quote/procedures/track_order.yaml:2: invalid YAML: while scanning a quoted scalar"
    )


def test_every_schema_problem_of_a_tool_is_reported(db, tmp_path):
    project = copy_sample(tmp_path / "schema")
    path = project / "tools" / "lookup_order.json"
    tool = json.loads(path.read_text())
    tool["parameters"]["properties"]["order_id"]["type"] = "text"
    tool["parameters"]["required"] = "order_id"
    path.write_text(json.dumps(tool, indent=2), encoding="utf-8")
    lines = refused(db, "import", str(project))
    assert [line.split(":", 3)[-1].strip()[:40] for line in lines] == [
        "'text' is not valid under any of the giv",
        "'order_id' is not of type 'array'",
    ]
    assert all(line.startswith("schema/tools/lookup_order.json:") for line in lines)


def test_problems_inside_a_zip_name_the_member(db, tmp_path):
    members = sample_members("shop/")
    members["shop/tables/stores.csv"] += b"RC-09,too,few\n"
    archive = write_zip(tmp_path / "shop.zip", members)
    assert refused(db, "import", str(archive)) == [
        "shop.zip/shop/tables/stores.csv:6: row has 3 cells but the header has 9"
    ]


# ---------------------------------------------------------------------------------- 9. re-importing a zip


def test_importing_the_same_zip_again_writes_nothing(tmp_path):
    db = f"sqlite:///{tmp_path / 'fresh.db'}"
    archive = write_zip(tmp_path / "sample.zip", sample_members())
    first = cli("import", str(archive), "--db", db)
    assert first.exit_code == 0 and "documents    17 added" in first.output
    again = cli("import", str(archive), "--db", db)
    assert again.exit_code == 0 and "0 record(s) written" in again.output, again.output
    paths = {d.path for d in Store(db).documents("ridgeline_support")}
    assert "sample.zip/documents/about_us_and_stores.md" in paths


# ------------------------------------------------------------------------------ 10. the command line itself


def test_status_at_a_mistyped_path_creates_nothing(tmp_path):
    typo = tmp_path / "no" / "such" / "store.db"
    result = cli("status", "--db", f"sqlite:///{typo}")
    assert result.exit_code == 2
    assert result.output.strip() == f"error: no store at {typo}: check --db (`evalcore init` creates a store)"
    assert not (tmp_path / "no").exists()


def test_usage_errors_exit_2_and_gates_exit_1(db):
    bad = cli("report", "--fail-above", "abc", "--db", db)
    assert bad.exit_code == 2
    assert bad.output.strip() == "error: --fail-above takes a rate such as 0.25 or 25% (got 'abc')"
    for rate in ("150%", "-0.1", "nan"):
        assert cli("report", "--fail-above", rate, "--db", db).exit_code == 2
    gate = cli("report", "--fail-above", "0.25", "--db", db)
    assert gate.exit_code == 1 and "no run yet" in gate.output  # a failure, not a usage error


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_serve_stopped_with_sigterm_leaves_no_server_behind(db):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    serve = subprocess.Popen(
        [sys.executable, "-m", "evalcore.cli.main", "serve", "--port", str(port), "--db", db],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "EVALCORE_OFFLINE": "1"},
    )
    try:
        deadline = time.monotonic() + 90
        while not _port_open(port):
            assert serve.poll() is None, serve.stdout.read().decode()
            assert time.monotonic() < deadline, "the dashboard did not start"
            time.sleep(0.5)
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        while _port_open(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _port_open(port), "the Streamlit child still holds the port"
        assert "dashboard stopped" in serve.stdout.read().decode()
    finally:
        if serve.poll() is None:
            serve.kill()


def test_a_spec_file_keeps_its_ids_in_a_new_store_and_refuses_one_id_twice(db, tmp_path):
    specs = tmp_path / "specs.yaml"
    spec = "- id: spec-mine\n  scenario: s\n  given: g\n  when: w\n  then: t\n"
    specs.write_text(spec + spec, encoding="utf-8")
    assert refused(db, "specs", "import", str(specs), "--author", "ana") == [
        "specs.yaml [id]: spec id 'spec-mine' is given to two specs"
    ]
    specs.write_text(spec, encoding="utf-8")
    first = cli("specs", "import", str(specs), "--author", "ana", "--db", db)
    assert first.exit_code == 0 and "1 spec(s) added" in first.output
    again = cli("specs", "import", str(specs), "--author", "ana", "--db", db)
    assert again.exit_code == 0 and "0 spec(s) added, 0 updated" in again.output  # the same file: no-op
    assert Store(db).current("spec-mine").body["scenario"] == "s"
