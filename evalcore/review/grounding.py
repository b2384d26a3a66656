"""The part of a grounding document that bears on a turn, so an annotator checks an answer against its
source without reading the whole document: the best-matching paragraphs of a text, or rows of a table."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalcore.documents.retrieval import BM25, tokenize
from evalcore.documents.sentences import split_sentences
from evalcore.models import Document, DocumentKind


@dataclass(frozen=True)
class Passage:
    """A piece of a document (a sentence or list item under its heading, or table rows) and the words it
    shares with the turn."""

    text: str
    heading: str
    rows: list[dict[str, str]]
    shared: list[str]


MAX_CHARS = 360


def _units(text: str) -> list[tuple[str, str]]:
    """(heading, unit) pairs: each list item, and each sentence of a prose line, under its heading."""
    heading = ""
    units: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif re.match(r"^([-*+]|\d+[.)])\s", line):
            units.append((heading, line))
        else:
            units += [(heading, sentence) for sentence in split_sentences(line)]
    return units


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rsplit(" ", 1)[0] + " …"


def relevant_passages(doc: Document, turn_text: str, k: int = 2) -> list[Passage]:
    """Up to `k` sentences or list items (in document order) that best match `turn_text` (the question
    and answer of a turn), or for a table up to 3 rows, best first; nothing when no part shares a word."""
    wanted = set(tokenize(turn_text))
    if doc.kind == DocumentKind.table and doc.rows:
        texts = [" ".join(str(v) for v in row.values()) for row in doc.rows]
    else:
        pieces = _units(doc.text)
        texts = [u for _, u in pieces]
    corpus = [tokenize(x) for x in texts]
    tokens = [set(x) for x in corpus]
    # BM25 over the document's own units: rare words weigh more and a long unit does not win by length.
    # Each word of the turn counts once: question and answer repeat the same words, which says nothing
    # about which unit grounds them (sorted, so the float sum and thus ties are the same in every run).
    scores = BM25(corpus).scores(sorted(wanted)).tolist()
    best = max(scores, default=0.0)
    # Weak matches (under half the best score) are noise next to the passage that grounds the answer.
    ranked = sorted(
        (i for i, x in enumerate(scores) if x > 0 and x >= best / 2), key=lambda i: (-scores[i], i)
    )
    if doc.kind == DocumentKind.table and doc.rows:
        top = ranked[:3]
        if not top:
            return []
        shared = sorted(set().union(*(wanted & tokens[i] for i in top)))
        return [Passage("", "", [doc.rows[i] for i in top], shared)]
    return [
        Passage(_cut(pieces[i][1]), pieces[i][0], [], sorted(wanted & tokens[i])) for i in sorted(ranked[:k])
    ]
