"""Deterministic assertions on a reply, where a test (or a conversation turn's metadata) defines them.

Each assertion is a dict with a `kind` (seed 003's `bot_uttered` / `bot_did_not_utter` and a few text
checks a chat target can be held to):

    {"kind": "contains", "text": "14 days"}              the reply contains the text (case-insensitive)
    {"kind": "not_contains", "text": "refund guaranteed"}
    {"kind": "contains_any", "texts": ["RC-01", "Alder Creek"]}
    {"kind": "contains_all", "texts": ["$10", "$15"]}
    {"kind": "regex", "pattern": "\\b14 days\\b"}         re.search, case-insensitive
    {"kind": "not_regex", "pattern": "..."}
    {"kind": "bot_uttered", "text": ...}                  alias of contains
    {"kind": "bot_uttered", "text_matches" | "pattern": ...}   re.search, case-sensitive, as Rasa and
                                                          the scenario assertions match `text_matches`
    {"kind": "bot_did_not_utter", "text" | "text_matches" | "pattern": ...}
    {"kind": "max_words", "value": 80}
    {"kind": "cannot_answer"} / {"kind": "answers"}       the reply does / does not say it cannot answer

A malformed assertion (unknown kind, missing field, bad pattern) is reported with `passed: None`: it is a
fault of the test, which must not pass or fail the target.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evalcore.runs.offline_judge import says_cannot_answer


@dataclass(frozen=True)
class AssertionResult:
    """One assertion's outcome: passed True/False, or None when the assertion itself is malformed."""

    kind: str
    passed: bool | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """JSON form, as stored in a judged turn."""
        return asdict(self)


def _contains(reply: str, text: str) -> bool:
    return text.casefold() in reply.casefold()


def _regex(reply: str, pattern: str) -> bool:
    return re.search(pattern, reply, re.IGNORECASE) is not None


def _utter(spec: dict[str, Any], reply: str) -> bool:
    pattern = spec.get("text_matches", spec.get("pattern"))
    if pattern is not None:  # Rasa's `text_matches`: re.search, case-sensitive (scenario checks alike)
        return re.search(pattern, reply) is not None
    return _contains(reply, spec["text"])


CHECKS: dict[str, Callable[[dict[str, Any], str], bool]] = {
    "contains": lambda a, r: _contains(r, a["text"]),
    "not_contains": lambda a, r: not _contains(r, a["text"]),
    "contains_any": lambda a, r: any(_contains(r, t) for t in a["texts"]),
    "contains_all": lambda a, r: all(_contains(r, t) for t in a["texts"]),
    "regex": lambda a, r: _regex(r, a["pattern"]),
    "not_regex": lambda a, r: not _regex(r, a["pattern"]),
    "bot_uttered": _utter,
    "bot_did_not_utter": lambda a, r: not _utter(a, r),
    "max_words": lambda a, r: len(r.split()) <= int(a["value"]),
    "cannot_answer": lambda a, r: says_cannot_answer(r),
    "answers": lambda a, r: not says_cannot_answer(r),
}


def _describe(spec: dict[str, Any]) -> str:
    shown = {k: v for k, v in spec.items() if k != "kind"}
    return f"{spec.get('kind')} {shown}" if shown else str(spec.get("kind"))


def check_assertions(reply: str, assertions: Sequence[dict[str, Any]]) -> list[AssertionResult]:
    """Every assertion's outcome on `reply`, in order."""
    results = []
    for spec in assertions:
        kind = str(spec.get("kind", ""))
        check = CHECKS.get(kind)
        if check is None:
            known = ", ".join(sorted(CHECKS))
            results.append(AssertionResult(kind, None, f"unknown assertion kind {kind!r} (known: {known})"))
            continue
        try:
            passed = check(spec, reply)
        except (KeyError, TypeError, ValueError, re.error) as e:
            results.append(
                AssertionResult(kind, None, f"malformed assertion {spec}: {type(e).__name__}: {e}")
            )
            continue
        results.append(
            AssertionResult(kind, passed, ("passed: " if passed else "failed: ") + _describe(spec))
        )
    return results


def combine(
    score: float | None, error_type: str | None, rationale: str, results: Sequence[AssertionResult]
) -> tuple[float | None, str | None, str]:
    """A turn's final score from the judge's verdict and the assertions.

    A failed assertion fails the turn (keeping the judge's error type if the judge failed it too); an
    unscored judge with passing assertions stays unscored, since the assertions cover only part of it.
    """
    failed = [r for r in results if r.passed is False]
    if not failed:
        return score, error_type, rationale
    note = "; ".join(r.detail for r in failed)
    if score == 0:
        return 0.0, error_type, f"{rationale} Assertions {note}."
    return 0.0, "assertion_failed", f"Assertion {note}. Judge: {rationale}"
