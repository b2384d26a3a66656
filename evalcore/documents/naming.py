"""How a customer names what a project's tables list by code, shared by the spec and doc-QA generators.

A customer names things, not internal codes: `code_names` reads, from the project's tables, the name a
customer knows each code by (a product's model for its SKU, a store's name for its store id). `key_columns`
finds the columns that identify a table's rows (the code a name belongs to).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalcore.models import Document, DocumentKind

CODE = re.compile(r"^[A-Z0-9]+(?:-[A-Z0-9]+)+$")
# Columns that hold what a customer calls a row (a store's name, a product's model, a service).
NAME_COLUMNS = ("name", "model", "title", "service", "product")


def key_columns(columns: Sequence[str], rows: Sequence[dict[str, str]]) -> tuple[str, ...]:
    """The fewest leading columns whose values identify every row (all columns at worst)."""
    for width in range(1, len(columns) + 1):
        for start in range(len(columns) - width + 1):
            chosen = tuple(columns[start : start + width])
            keys = [tuple(str(r.get(c, "")).strip() for c in chosen) for r in rows]
            if all(any(k) for k in keys) and len(set(keys)) == len(keys):
                return chosen
        if width >= 2:
            break  # wider keys than two columns read badly; fall through to the first two
    return tuple(columns[: min(2, len(columns))])


def code_names(documents: Sequence[Document], ignore: Sequence[str] = ()) -> dict[str, str]:
    """code -> how a customer names it ("RC-HYB-300" -> "the Ridgeline Commuter 300", "RC-04" -> "the
    Westbrook Station store"), from every table keyed by one code column with a name-like column.

    A name starting with the business's own name (in `ignore`) is one of its sites: the business name
    is dropped and the table's noun added ("Ridgeline Cycles Westbrook Station" -> "the Westbrook
    Station store"). Brackets are dropped ("Basic tune-up (gears ...)" -> "the Basic tune-up").
    """
    names: dict[str, str] = {}
    for doc in documents:
        if doc.kind != DocumentKind.table or not doc.rows:
            continue
        key = key_columns(doc.columns, doc.rows)
        named = [c for c in doc.columns if c not in key and any(w in c.lower() for w in NAME_COLUMNS)]
        if len(key) != 1 or not named:
            continue
        noun = singular(doc.title.split()[-1].lower()) if doc.title.split() else ""
        for row in doc.rows:
            code, name = str(row.get(key[0], "")).strip(), str(row.get(named[0], "")).strip()
            name = re.sub(r"\s*\([^)]*\)", "", name).strip(" ,")
            if not CODE.match(code) or not name or CODE.match(name) or not re.search(r"[a-z]", name):
                continue
            for business in ignore:
                if name.casefold().startswith(business.casefold() + " ") and noun:
                    name = f"{name[len(business) + 1 :]} {noun}"
                    break
            names.setdefault(code, f"the {name}")
    return names


def singular(word: str) -> str:
    """ "stores" -> "store", "batteries" -> "battery": a table title's noun for one row."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word
