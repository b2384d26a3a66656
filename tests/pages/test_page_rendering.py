"""How pages put data into markdown (pages/_common.py): nothing from a file or a model is live, and normal
text reads as it did. The browser's view of the same is tests/test_e2e_security.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from evalcore.generators.doc_qa.browse import cited_spans
from evalcore.store import secrets
from pages._common import WORD_JOINER, answer_block, md, md_block, quoted, run_script

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "![x](http://h/b.png) <img src=x onerror=alert(1)> [a](javascript:x) :red[r] $x$ &lt; `c` ~1~"
CONSTRUCTS = ("![", "<img", "[a]", ":red[", "$x$", "&lt;", "`c`", "~1~")


def live(shown: str, construct: str) -> bool:
    """The construct appears with its first character not backslash-escaped."""
    return re.search(r"(?<!\\)" + re.escape(construct), shown) is not None


def test_md_escapes_every_construct_and_keeps_lines():
    shown = md(HOSTILE + "\n  # not a heading")
    assert not any(live(shown, c) for c in CONSTRUCTS)
    assert shown.endswith("  \n\u00a0\u00a0\\# not a heading"), "a hard break, indentation as spaces"
    assert md("E-bikes: 14 days.") == "E\\-bikes\\: 14 days\\."


def test_md_block_keeps_formatting_and_neutralises_what_loads_runs_or_links():
    shown = md_block("- **30 days** for _most_ items\n" + HOSTILE + " mail a@b.com or www.x.com")
    assert shown.startswith("- **30 days** for _most_ items\n"), "emphasis and lists stay"
    assert not any(live(shown, c) for c in (*CONSTRUCTS, "a@b", "www."))
    assert f"http{WORD_JOINER}\\://h/b.png" in shown, "a bare address is text, not a link"
    assert quoted("one\n- two") == "> one\n> - two"


def test_an_expected_answer_says_the_unanswerable_marker_in_words_and_escapes_any_other():
    """Seed 000's CANNOTANSWER (as the generator and a model write it) reads as words; every other answer
    is `md_block`'s text, its hostile markup neutralised (Reports' drill-down, Results, Conversations)."""
    for marker in ("CANNOTANSWER", "CANNOTANSWER.", " cannot answer "):
        shown = answer_block(marker)
        assert "Not in the documents" in shown and "CANNOTANSWER" not in shown
    assert answer_block(HOSTILE) == md_block(HOSTILE)
    mentioned = "Some say CANNOTANSWER here"  # an answer that mentions the word is an answer
    assert answer_block(mentioned) == md_block(mentioned)


def test_cited_spans_mark_the_sentence_and_cells_an_answer_cites():
    text = "Most items: 30 days. **E-bikes**: 14 days. Fee | 15%"
    spans = cited_spans(text, {"sentence": "E-bikes: 14 days.", "cells": [["Fee", "15%"]]})
    assert spans == [("Most items: 30 days. ", False), ("E-bikes: 14 days.", True), (" Fee | 15%", False)]
    assert cited_spans("a b", None) == [("a b", False)]


def test_a_credential_value_is_never_shown(monkeypatch):
    """An error held in memory (never stored) can still quote a key: what a page shows is redacted."""
    monkeypatch.setenv("BOT_AUTH", "bot-SENTINEL-page-93c1d7")
    secrets.register("BOT_AUTH")
    for shown in (md("401: bad key bot-SENTINEL-page-93c1d7"), md_block("bad key bot-SENTINEL-page-93c1d7")):
        assert "SENTINEL" not in shown and "key" in shown


def test_no_page_puts_data_into_raw_html_or_a_script():
    """A guard for the next page: raw HTML is never allowed in markdown; the one call of st.html is in
    run_script; every script template is a constant (no f-string, format or name), data only as tokens."""
    for path in [*sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.name}:{node.lineno}"
            assert not any(k.arg == "unsafe_allow_html" for k in node.keywords), where
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name == "html":
                assert path.name == "_common.py", f"{where}: pages run scripts through run_script"
            if name == "run_script" and node.args:
                for part in ast.walk(node.args[0]):  # constants joined by +, UPPER_CASE constants only
                    constant = isinstance(part, ast.Constant | ast.BinOp | ast.Add | ast.Load)
                    assert constant or (isinstance(part, ast.Name) and part.id.isupper()), f"{where}: data"


def test_run_script_refuses_a_token_that_could_end_a_string():
    for hostile in ("x'; alert(7); '", "</script><img src=x onerror=1>", 'a"b'):
        with pytest.raises(ValueError, match="token"):
            run_script("document.cookie = '$value';", value=hostile)
