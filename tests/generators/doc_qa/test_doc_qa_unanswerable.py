"""Offline unanswerable questions stay distinct across a run: once every aspect of a subject was asked,
the same aspects are asked of the document's other entities (issue 33, distinct questions)."""

from __future__ import annotations

import random

from evalcore.generators.doc_qa.generate import conversation_inputs
from evalcore.generators.doc_qa.offline import ASPECTS, _key, _Writer
from evalcore.generators.doc_qa.schema import CANNOTANSWER
from evalcore.inputs import import_project
from evalcore.specs.generation import generate_specs
from evalcore.specs.store_ops import list_specs


def test_unanswerable_questions_move_to_other_entities_once_a_subjects_aspects_are_asked(sqlite_store):
    project_id = import_project(sqlite_store, "data/sample").project_id
    generate_specs(sqlite_store, project_id, m=1, from_card=False)
    spec = list_specs(sqlite_store, project_id)[0].spec
    docs = {d.id: d for d in sqlite_store.documents(project_id)}
    inputs = conversation_inputs("desc", spec, [docs["rental-policy"]], [], [], 4, 0, [])
    writer = _Writer(inputs, random.Random(0))
    context = docs["rental-policy"].text.casefold()
    questions = []
    for _ in range(len(ASPECTS) + 6):
        turn = writer.cannot(0)
        assert turn.answer == CANNOTANSWER
        questions.append(turn.question)
        writer.seen.add(_key(turn.question))
    assert len({_key(q) for q in questions}) == len(questions), questions
    # every question asks an aspect no document of the context mentions, or a near-miss of an entity
    aspect_questions = [q for q in questions if any(q.startswith(t.split("{e}")[0]) for t, _ in ASPECTS)]
    assert len(aspect_questions) > len(ASPECTS)
    for q in aspect_questions:
        phrases = next(p for t, p in ASPECTS if q.startswith(t.split("{e}")[0]))
        assert not any(p in context for p in phrases), q
