"""The part of a grounding document that bears on a turn, so an annotator checks an answer against its
source without reading the whole document: the best-matching paragraphs of a text, or rows of a table."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from evalcore.models import Document, DocumentKind

_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*[a-z0-9]|[a-z0-9]", re.IGNORECASE)
_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "i", "if", "in", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "our", "so", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "up",
    "us", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
    "yes",
))  # fmt: skip


def _tokens(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP and len(w) > 1}


@dataclass(frozen=True)
class Passage:
    """A piece of a document (a sentence or list item under its heading, or table rows) and the words it
    shares with the turn."""

    text: str
    heading: str
    rows: list[dict[str, str]]
    shared: list[str]


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(*])")
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
            units += [(heading, sentence) for sentence in _SENTENCE.split(line) if sentence.strip()]
    return units


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rsplit(" ", 1)[0] + " …"


def _bm25(units: list[set[str]], lengths: list[int], wanted: set[str]) -> list[float]:
    """BM25 score (k1 = 1.2, b = 0.75, binary term frequency) of each unit for the wanted words: rare
    words weigh more and a long unit does not win by length alone."""
    n = len(units)
    average = sum(lengths) / n if n else 1.0
    df = {w: sum(w in u for u in units) for w in wanted}
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in wanted if df[w]}
    return [
        sum(idf[w] * 2.2 / (1 + 1.2 * (0.25 + 0.75 * length / average)) for w in wanted & unit if w in idf)
        for unit, length in zip(units, lengths, strict=True)
    ]


def relevant_passages(doc: Document, turn_text: str, k: int = 2) -> list[Passage]:
    """Up to `k` sentences or list items (in document order) that best match `turn_text` (the question
    and answer of a turn), or for a table up to 3 rows, best first; nothing when no part shares a word."""
    wanted = _tokens(turn_text)
    if doc.kind == DocumentKind.table and doc.rows:
        texts = [" ".join(str(v) for v in row.values()) for row in doc.rows]
    else:
        pieces = _units(doc.text)
        texts = [u for _, u in pieces]
    tokens = [_tokens(x) for x in texts]
    scores = _bm25(tokens, [len(x.split()) for x in texts], wanted)
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
