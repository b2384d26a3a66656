"""One item opened for review: its content, history, verdicts, corrections, grounding documents, spec.

The item is read through the read model (`evalcore.items.current`), so the reviewer sees the content every
other reader sees: the latest corrections applied (a corrected turn keeps ``original_content`` and
``corrected_by`` in its metadata). The tier state is derived from the same history with the project's
policy, for the detail a review screen shows (who accepts, who disagrees, the lead's decision)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from evalcore.errors import NotFoundError
from evalcore.generators.doc_qa.schema import CANNOTANSWER, is_cannot_answer
from evalcore.items.current import read_item
from evalcore.items.sql import annotations_of, latest_bodies
from evalcore.items.state import Policy, derive, policy_of
from evalcore.items.tiers import ANNOTATOR, LEAD, TierState, TurnKey, turn_verdicts
from evalcore.models import Annotation, Conversation, Document, TurnRole
from evalcore.review.assignments import leads_of
from evalcore.review.breakdown_labels import BREAKDOWN_ROLE, BreakdownLabel, current_labels, label_titles
from evalcore.review.verdicts import current_of
from evalcore.store import Store
from evalcore.store import schema as t

# Turns a reviewer accepts or rejects: what the system under test is expected to say or do.
JUDGED_ROLES = (TurnRole.assistant, TurnRole.tool_call)
QUESTION_CHARS = 160  # a first question shown under the title: about two lines of the review column
SIMULATED = "simulation"  # the generator of simulated dialogues, whose target turns get breakdown labels


@dataclass(frozen=True)
class ItemView:
    """Everything the review screen shows about one conversation, read at one version."""

    conversation: Conversation
    project_id: str
    version: int
    saved_by: str
    saved_at: datetime
    annotations: list[Annotation]
    state: TierState
    policy: Policy
    judge_passed: bool | None
    judge_score: float | None
    turn_verdicts: dict[int, dict[str, str]]
    documents: dict[str, Document]
    spec: dict[str, Any] | None
    assignees: list[str]
    leads: list[str]
    mine: dict[TurnKey, Annotation] = field(default_factory=dict)
    my_lead: dict[TurnKey, Annotation] = field(default_factory=dict)
    breakdown_titles: list[str] = field(default_factory=list)  # empty: the item takes no breakdown labels
    breakdown_labels: dict[str, dict[int, BreakdownLabel]] = field(default_factory=dict)  # by annotator

    @property
    def breakdown_turns(self) -> list[int]:
        """The target turns an annotator labels breakdowns on (a simulated dialogue's assistant turns)."""
        if not self.breakdown_titles:
            return []
        return [x.index for x in self.conversation.turns if x.role == TurnRole.assistant]

    @property
    def judged_turns(self) -> list[int]:
        """Indexes of the turns a reviewer gives a verdict on (assistant replies and tool calls); every
        turn when the conversation has none of those."""
        judged = [x.index for x in self.conversation.turns if x.role in JUDGED_ROLES]
        return judged or [x.index for x in self.conversation.turns]

    @property
    def first_question(self) -> str:
        """The first user turn's text on one line, cut at QUESTION_CHARS ('' when no user speaks)."""
        turn = next((x for x in self.conversation.turns if x.role == TurnRole.user), None)
        text = " ".join(self.content(turn.index).split()) if turn else ""
        return text if len(text) <= QUESTION_CHARS else text[: QUESTION_CHARS - 1].rstrip() + "…"

    @property
    def title(self) -> str:
        """What the conversation is called on screen: its spec's scenario, else its first question, else
        its generator's kind ('simulation conversation'); never its id."""
        scenario = str((self.spec or {}).get("scenario") or "").strip()
        return scenario or self.first_question or f"{self.conversation.generator or 'a'} conversation"

    def content(self, turn_index: int) -> str:
        """A turn's text with the latest correction applied."""
        return self.conversation.turns[turn_index].content

    def query_label(self, turn_index: int) -> str | None:
        """The query type shown beside a turn: CANNOTANSWER for both turns of a pair whose answer says the
        documents do not hold it, as the Conversations and Reports pages show it; else the turn's own."""
        turns = self.conversation.turns
        answer = next((x for x in turns[turn_index:] if x.role == TurnRole.assistant), None)
        if answer is not None and is_cannot_answer(self.content(answer.index)):
            return CANNOTANSWER
        return turns[turn_index].query_type

    def blind(self, user: str | None) -> bool:
        """Whether `user` reviews blind: assigned the item, no verdict of theirs yet, not a named lead.
        Until then the page hides the others' verdicts and the tier they make, so that overlapping
        annotators label independently (what agreement measures)."""
        return user in self.assignees and not self.mine and user not in self.leads

    @property
    def tier_label(self) -> str:
        """The tier, or 'disagreement' while annotators disagree and no lead has decided."""
        return "disagreement" if self.state.needs_adjudication else self.state.tier.value

    def others_reviewed(self, user: str | None) -> list[str]:
        """Annotators other than `user` with a verdict on the item or one of its turns."""
        return sorted({a.author for a in self.annotations if a.role == ANNOTATOR and a.author != user})


def documents_by_id(store: Store, project_id: str, ids: Iterable[str]) -> dict[str, Document]:
    """The project's documents with these ids (unknown ids are left out)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    d = t.documents
    with store.read() as conn:
        rows = conn.scalars(sa.select(d.c.body).where(d.c.project_id == project_id, d.c.id.in_(wanted)))
        return {doc.id: doc for doc in (Document.model_validate(b) for b in rows)}


def open_item(store: Store, item_id: str, user: str | None = None) -> ItemView:
    """Read one conversation for review, with ``mine`` = `user`'s current verdicts to pre-fill the form."""
    item = read_item(store, item_id)
    with store.read() as conn:
        settings = conn.scalar(sa.select(t.projects.c.settings).where(t.projects.c.id == item.project_id))
        assignees = list(
            conn.scalars(
                sa.select(t.assignments.c.annotator)
                .where(t.assignments.c.item_id == item_id)
                .order_by(t.assignments.c.annotator)
            )
        )
        spec_row = latest_bodies(conn, [item.spec_id]).get(item.spec_id) if item.spec_id else None
        labels = annotations_of(conn, [item_id], (BREAKDOWN_ROLE,))[item_id]
    conversation = item.conversation()
    titles = _breakdown_titles(store, conversation)
    policy = policy_of(settings)
    history = item.annotations
    grounding = {g for turn in conversation.turns for g in turn.grounding}
    return ItemView(
        conversation=conversation,
        project_id=item.project_id,
        version=item.version,
        saved_by=item.saved_by,
        saved_at=item.saved_at,
        annotations=history,
        state=derive(history, item.judge.passed, item.judge.score, policy),
        policy=policy,
        judge_passed=item.judge.passed,
        judge_score=item.judge.score,
        turn_verdicts={k: {a: str(v) for a, v in d.items()} for k, d in turn_verdicts(history).items()},
        documents=documents_by_id(store, item.project_id, grounding),
        spec=spec_row[1] if spec_row else None,
        assignees=assignees,
        leads=leads_of(settings),
        mine=current_of(history, user, ANNOTATOR) if user else {},
        my_lead=current_of(history, user, LEAD) if user else {},
        breakdown_titles=titles,
        breakdown_labels=current_labels(labels),
    )


def _breakdown_titles(store: Store, conversation: Conversation) -> list[str]:
    """The breakdown types offered on a simulated dialogue (those its run's detector judges against);
    none for other conversations."""
    if conversation.generator != SIMULATED:
        return []
    try:
        params = store.run(conversation.provenance.run_id or "").params
    except NotFoundError:  # a dialogue whose run is gone: judged as task-oriented, the detector's default
        params = {}
    return label_titles(bool(params.get("task_oriented", True)))


def head_version(store: Store, item_id: str) -> tuple[int, str] | None:
    """The item's latest version and who saved it, or None if there is no such item."""
    rev = t.revisions
    with store.read() as conn:
        row = conn.execute(
            sa.select(rev.c.version, rev.c.author)
            .where(rev.c.item_id == item_id)
            .order_by(rev.c.version.desc())
            .limit(1)
        ).first()
    return (row.version, row.author) if row else None


def turn_groups(view: ItemView) -> list[list[int]]:
    """The turns in review blocks: each judged turn with the turns leading up to it (the question, tool
    results); turns after the last judged one form a last block."""
    judged = set(view.judged_turns)
    groups: list[list[int]] = []
    current: list[int] = []
    for turn in view.conversation.turns:
        current.append(turn.index)
        if turn.index in judged:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def trail(view: ItemView, leave_out: str | None = None) -> list[dict[str, Any]]:
    """The annotation history as rows (when, who, role, turn, label, reason, note, correction), oldest
    first; ``leave_out`` drops one author's rows (to show a reviewer the others' verdicts)."""
    return [
        {
            "when": a.created_at,
            "who": a.author,
            "role": a.role,
            "turn": "whole" if a.turn_index is None else str(a.turn_index),
            "label": str(a.label),
            "reason": a.reason or "",
            "note": a.note,
            "correction": a.edited_content or "",
        }
        for a in view.annotations
        if a.author != leave_out
    ]
