"""What the Tool cases page and the CLI show of a project's tool cases (seed 004; issue 20, items 1-3): the
catalog with how many conversations each situation has, what each tool group cannot produce and why, the
conversations of one situation, the silver sets beside the judge's precision on gold, and what the
Annotate page shows about the situation of the tool case under review.

Pure reads of the store; nothing here calls a model.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from evalcore.generators.tool_case.groups import requirement
from evalcore.generators.tool_case.job import project_catalog, project_groups
from evalcore.generators.tool_case.records import AGENT, GENERATOR, USER, intended_labels
from evalcore.items.current import read_tiers
from evalcore.items.state import judge_fields, judge_passes, project_policy
from evalcore.items.store_ops import list_conversations
from evalcore.models import Conversation, Tier
from evalcore.store import Store


def tool_case_conversations(store: Store, project_id: str) -> list[Conversation]:
    """The project's tool-case conversations (current versions), oldest first."""
    return [v.conversation for v in list_conversations(store, project_id, generator=GENERATOR)]


def catalog_rows(store: Store, project_id: str) -> list[dict[str, Any]]:
    """One row per situation (the seed's 26, then the team's): its four labels, its description, where it
    comes from, and how many tool-case conversations of the project carry it."""
    counts = Counter(c.metadata.get("situation") for c in tool_case_conversations(store, project_id))
    return [
        {
            "situation": s.id,
            "name": s.name,
            "tool execution": s.tool_execution.value,
            "agent": AGENT[s.agent_appropriate],
            "user": USER[s.user_satisfied],
            "overall": s.overall,
            "hard negative": s.hard_negative,
            "conversations": counts.get(s.id, 0),
            "origin": "seed" if s.builtin else "team",
            "description": s.description,
        }
        for s in project_catalog(store, project_id).values()
    ]


def group_skips(store: Store, project_id: str) -> list[dict[str, str]]:
    """Per tool group, each situation it cannot produce and why (a project without tools has none)."""
    if not store.tools(project_id):
        return []
    known = project_catalog(store, project_id)
    return [
        {
            "group": group.name,
            "tools": ", ".join(t.name for t in group.tools),
            "situation": s.id,
            "reason": why,
        }
        for group in project_groups(store, project_id)
        for s in known.values()
        if (why := requirement(s.recipe, group))
    ]


def situation_conversations(store: Store, project_id: str, situation: str) -> list[Conversation]:
    """The project's tool-case conversations of one situation, oldest first."""
    return [c for c in tool_case_conversations(store, project_id) if c.metadata.get("situation") == situation]


@dataclass(frozen=True)
class SilverSet:
    """The conversations one judge accepted that nobody decided, and that judge's precision on gold."""

    judge: str
    silver: int
    judged: int
    decided: int  # judged conversations people decided (gold or rejected)
    passed_decided: int  # of those, the ones the judge passes under the policy
    precision_on_gold: float | None  # share of those people accepted (None when the judge passed none)


def silver_sets(store: Store, project_id: str) -> list[SilverSet]:
    """Per judge that filtered tool cases: its silver conversations and its precision on gold under the
    project's policy (the calibrated threshold when one is set, else the judge's own verdict)."""
    conversations = [c for c in tool_case_conversations(store, project_id) if "judge_score" in c.metadata]
    tiers = read_tiers(store, project_id, [c.id for c in conversations])
    policy = project_policy(store, project_id)
    by_judge: dict[str, list[Conversation]] = {}
    for c in conversations:
        by_judge.setdefault(str(c.metadata.get("judge_model") or "unknown"), []).append(c)
    found = []
    for judge, group in sorted(by_judge.items()):
        decided = [c for c in group if tiers.get(c.id) in (Tier.gold, Tier.rejected)]
        passed = [c for c in decided if judge_passes(*judge_fields(c.metadata), policy)]
        accepted = sum(tiers[c.id] == Tier.gold for c in passed)
        found.append(
            SilverSet(
                judge=judge,
                silver=sum(tiers.get(c.id) == Tier.silver for c in group),
                judged=len(group),
                decided=len(decided),
                passed_decided=len(passed),
                precision_on_gold=accepted / len(passed) if passed else None,
            )
        )
    return found


@dataclass(frozen=True)
class SituationInfo:
    """What a reviewer reads about a tool case's situation, as plain text (the page escapes it)."""

    intended: str  # the situation's name and its four intended labels
    description: str
    world_state: str  # what really happened when a tool output hides it, as JSON


def situation_info(store: Store, project_id: str, conversation: Conversation) -> SituationInfo | None:
    """The situation a tool-case conversation is meant to show: name and labels, the catalog's description
    and the conversation's world state; None for a conversation of another generator."""
    intended = intended_labels(conversation)
    if intended is None:
        return None
    # A team may have removed its situation since the conversation was made: say so rather than fail.
    known = project_catalog(store, project_id).get(str(conversation.metadata.get("situation")))
    world = conversation.metadata.get("world_state")
    return SituationInfo(
        intended=intended,
        description=known.description if known else "(no longer in the project's catalog)",
        world_state=json.dumps(world, ensure_ascii=False, sort_keys=True)
        if world
        else "(none: the tool outputs show what happened)",
    )
