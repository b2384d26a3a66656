"""Which policy sentences are about a tool when the policy never names it (issue 26, held-out check).

A policy written for people says "An order can only be cancelled if its status is 'pending'" under a
heading "Cancel pending order", not `cancel_pending_order`. A tool's name is read as a verb and its
objects (`cancel_pending_order`: cancel; pending, order) and matched against the policy's words in any
inflection (cancelled, cancellation; orders), with the verbs of a change taken as one (modify, update,
change, edit) and those of handing something over as one (send, offer, issue, give, grant):

- a section is about the tools whose verb its heading carries, and among them those whose objects it
  names most ("Modify pending order" is about the three tools that modify a pending order, "Modify
  payment" only about the one that modifies its payment; "Cancel flight" about the only tool that
  cancels);
- a sentence elsewhere is about a tool when it carries the tool's verb and one of its objects ("modify
  their default user address" is about `modify_user_address`).

What a request needs first is read the same way: the read tool whose required parameters an
identification sentence names ("locating their user id via email" -> the tool that takes `email`), or,
failing one, a sentence saying what to obtain first ("The agent must first obtain the user id").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evalcore.documents.inflection import stems
from evalcore.models import Tool

# verbs that name one kind of action, whichever a policy or a tool uses
_SAME_VERBS = (
    frozenset({"modify", "update", "change", "edit", "amend"}),
    frozenset({"send", "offer", "issue", "give", "grant"}),
)
# words of a tool's name that name no object of its action
_NOT_OBJECTS = frozenset(
    {"by", "to", "of", "the", "a", "an", "all", "id", "ids", "detail", "details", "info", "information",
     "for", "with", "and", "from", "in", "on", "my", "new"}
)  # fmt: skip
# "must first obtain the user id", "first ask for", "at the beginning of the conversation"
PREREQUISITE = re.compile(
    r"\b(must|has to|have to|needs? to|should)\s+first\b|\bfirst\s+(obtain|get|ask|collect|find|locate)\b"
    r"|\bbeginning of (the|each|every) conversation\b",
    re.IGNORECASE,
)


def same_word(a: str, b: str) -> bool:
    """Whether two stems are forms of one word: equal, or one runs on from the other past its fourth
    letter ('cancel' / 'cancell' / 'cancellation', 'modify' / 'modification')."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if len(short) < 4:
        return False
    common = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return common >= max(4, len(short) - 1)


def _has(words: Iterable[str], word: str) -> bool:
    return any(same_word(w, word) for w in words)


def verb(tool: Tool) -> str:
    """The first word of the tool's name, the action it takes."""
    return tool.name.lower().split("_")[0]


def verb_forms(tool: Tool) -> set[str]:
    """The stems of the tool's verb and of the verbs that name the same kind of action."""
    first = verb(tool)
    group = next((g for g in _SAME_VERBS if first in g), frozenset({first}))
    return {s for v in group for s in stems(v)}


def objects(tool: Tool) -> set[str]:
    """The stems of the words of the tool's name after its verb that name what it acts on."""
    words = [w for w in tool.name.lower().split("_")[1:] if w and w not in _NOT_OBJECTS]
    return {s for w in words for s in stems(w)}


def _carries_verb(words: Sequence[str], tool: Tool) -> bool:
    return any(_has(words, v) for v in verb_forms(tool))


def _objects_named(words: Sequence[str], tool: Tool) -> int:
    return sum(_has(words, o) for o in objects(tool))


def heading_tools(heading: str, tools: Sequence[Tool]) -> list[Tool]:
    """The tools a section heading is about: those whose verb it carries, and among them those whose
    objects it names most (all of them when it names none)."""
    words = stems(heading)
    carrying = [t for t in tools if _carries_verb(words, t)]
    if not carrying:
        return []
    best = max(_objects_named(words, t) for t in carrying)
    return [t for t in carrying if _objects_named(words, t) == best]


_QUOTED = re.compile(r"(?<!\w)(['\"])[^'\"]{1,40}\1(?!\w)")


def sentence_about(text: str, tool: Tool) -> bool:
    """Whether a sentence carries the tool's verb and names one of its objects; a quoted word is a value
    ("in status 'cancelled'"), not the verb."""
    words = stems(_QUOTED.sub(" ", text))
    return _carries_verb(words, tool) and _objects_named(words, tool) > 0


def parameter_said(text: str, parameter: str) -> int | None:
    """Where a sentence names a parameter (`email`; `zip`; `first_name` as 'name'; `user_id` as 'user
    id'), as a word position, or None. An id is named with the word before it."""
    words = stems(text)
    parts = [p for p in parameter.lower().split("_") if p]
    if not parts:
        return None
    if parts[-1] == "id" and len(parts) > 1:
        wanted = [s for p in parts[-2:] for s in stems(p)]
        n = len(wanted)
        return next((i for i in range(len(words) - n + 1) if words[i : i + n] == wanted), None)
    last = stems(parts[-1])
    return next((i for i, w in enumerate(words) if last and same_word(w, last[0])), None)


def identifying_tool(texts: Sequence[str], reads: Sequence[Tool]) -> Tool | None:
    """The read tool whose required parameters are all named in one of `texts` (identification or
    prerequisite sentences, in the policy's order): one that takes what a customer knows (an e-mail, a
    name and postcode) before one that takes an id; then the earliest named."""
    ranked = []
    for tool in reads:
        required = list(tool.parameters.get("required") or [])
        if not required:
            continue
        for index, text in enumerate(texts):
            found = [parameter_said(text, p) for p in required]
            if all(f is not None for f in found):
                takes_id = any(p.endswith("_id") or p == "id" for p in required)
                ranked.append((takes_id, index, min(f for f in found if f is not None), tool.name, tool))
                break
    return min(ranked, key=lambda r: r[:4])[4] if ranked else None
