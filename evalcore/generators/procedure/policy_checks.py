"""Checks of a project's policy before procedures are read from it (issue 26, "Bad input"): a tool the
policy names that the project lacks, and steps that contradict each other. Each finding is a located
warning ("file § section: ...", naming the tool) for the generation job's warnings; nothing here stops a
run, and the procedure read from a contradicted policy is still made, with the warning beside it, so a
person decides.

Contradictions read from the policy's own sentences:
- status: two sentences that name the same tool and a status condition allow it for disjoint sets of the
  project's statuses (`cancel_order` only if pending; elsewhere, `cancel_order` if shipped);
- refusal: a sentence says never to call (or use) a tool, with no condition after it, while another tells
  when to call it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

_NAMED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


class Sentence(Protocol):
    """A policy sentence with where it stands (the policy reader's sentences)."""

    where: str
    text: str
    section: str


def located(sentence: Sentence) -> str:
    """'file § section' of a sentence."""
    return f"{sentence.where} § {sentence.section}" if sentence.section else sentence.where


def missing_tools(sentences: Sequence[Sentence], tools: set[str]) -> list[str]:
    """A warning per tool a sentence names in backticks (a snake_case name) that the project lacks."""
    found = []
    for s in sentences:
        for name in _NAMED.findall(s.text):
            if name not in tools and "_" in name:
                found.append(f"{located(s)}: the policy names tool '{name}', which the project lacks")
    return list(dict.fromkeys(found))


def _allowed(sentence: Sentence, statuses: set[str]) -> set[str]:
    lowered = sentence.text.lower()
    if "status" not in lowered:
        return set()
    return {v for v in statuses if re.search(rf"\b{re.escape(v)}\b", lowered)}


def status_conflicts(sentences: Sequence[Sentence], tools: set[str], statuses: set[str]) -> list[str]:
    """A warning per pair of sentences that allow one tool for disjoint sets of statuses."""
    found = []
    for tool in sorted(tools):
        rules = [
            (s, allowed)
            for s in sentences
            if re.search(rf"\b{re.escape(tool)}\b", s.text) and (allowed := _allowed(s, statuses))
        ]
        for i, (first, one) in enumerate(rules):
            for second, other in rules[i + 1 :]:
                if not one & other:
                    said, earlier = " or ".join(sorted(other)), " or ".join(sorted(one))
                    found.append(
                        f"{located(second)}: tool '{tool}' is allowed for status {said}, which "
                        f"contradicts {located(first)} (status {earlier}); the procedure takes both, "
                        "check the policy"
                    )
    return found


def refusal_conflicts(sentences: Sequence[Sentence], tools: set[str]) -> list[str]:
    """A warning per sentence that says never to call a tool outright while another tells when to."""
    found = []
    for tool in sorted(tools):
        never = re.compile(
            rf"\b(never|do not|don't)\s+(call|use)\s+`?{re.escape(tool)}`?\s*[.!]?\s*$", re.IGNORECASE
        )
        refusals = [s for s in sentences if never.search(s.text)]
        uses = [s for s in sentences if re.search(rf"\b{re.escape(tool)}\b", s.text) and s not in refusals]
        if refusals and uses:
            found.append(
                f"{located(refusals[0])}: says never to call tool '{tool}', which contradicts "
                f"{located(uses[0])}; the procedure still calls it, check the policy"
            )
    return found
