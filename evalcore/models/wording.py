"""Plain words for what the store holds (issue 28): one place that turns enum values, tiers and the
papers' terms into words a user who never read the papers understands. Pages and the CLI show `words(x)`
where they showed `x`, a tier's plain name with `TIER_HELP` in its tooltip, and a research term's plain
label with `term_help(term)` (the method's own name and where the seeds define it) in its tooltip.
"""

from __future__ import annotations

import re

# Seed 000's query types (its Algorithm 2 prompt names them) and its marker of an unanswerable question, in
# words; the pages give the seed's own term in a tooltip (QUERY_TYPE_HELP). Files and exports keep the terms.
QUERY_TYPE_WORDS: dict[str, str] = {
    "SINGLE-DOC": "From one document",
    "MULTI-DOC": "Across documents",
    "PRE-FILLER": "Sets up a switch",
    "FILLER": "Switches document",
    "SYNTHESIS": "Sums up",
    "CANNOTANSWER": "Not in the documents",
    "untyped": "No type",
}
QUERY_TYPE_HELP = (
    "Kinds of question, as seed 000 names them: from one document (SINGLE-DOC, a direct lookup); across "
    "documents (MULTI-DOC, an inference over several); sets up a switch (PRE-FILLER, its answer names the "
    "entity that bridges to the next document); switches document (FILLER, refers to that entity to move "
    "on); sums up (SYNTHESIS, the last question, needing every document); not in the documents "
    "(CANNOTANSWER, the documents do not answer it and the assistant should say so)."
)

# Enum values and stored keys as a sentence fragment. Where a value is missing here, `words` still reads
# it as words (underscores as spaces, first letter capitalised), so a new value never shows as snake_case.
WORDS: dict[str, str] = {
    **QUERY_TYPE_WORDS,
    # why a simulated dialogue ended
    "max_turns_reached": "It reached the most turns allowed",
    "user_ended_chat": "The user ended the chat",
    "chatbot_ended_chat": "The assistant ended the chat",
    "user_simulator_error": "The simulated user failed",
    "chatbot_error": "The assistant failed",
    # model settings
    "json_schema": "JSON schema",
    "json_object": "JSON object",
    # generators
    "doc_qa": "Questions about documents",
    "procedure": "Procedure tests",
    "simulation": "Simulated users",
    "scenario": "Scenarios",
    "tool_case": "Tool-use cases",
    # job kinds
    "specs.generate": "Writing specs",
    "specs.select": "Choosing specs",
    "conversations.doc_qa": "Writing conversations about documents",
    "procedures.generate": "Writing procedure tests",
    "tool_case_filter": "Judging tool-use cases",
    "run": "Run of conversations",
    "procedure_tests": "Run of procedure tests",
    "rubric_comparison": "Comparison of rubric methods",
    "rubric_scoring": "Scoring with rubrics",
    # a judge's error types
    "wrong_fact": "Wrong fact",
    "incomplete": "Incomplete answer",
    "multi_doc_retrieval": "Missed a document",
    "coreference": "Misread an earlier turn",
    "ignored_context": "Misread an earlier turn",
    "hallucinated": "Made something up",
    "failed_to_say_cannot_answer": "Answered what the documents cannot answer",
    "refused_wrongly": "Refused a question it could answer",
    "wrong_tool_order": "Wrong tool or order",
    "multi_correct": "Another correct answer",
    "off_spec": "Broke the spec",
    "off_topic": "Off topic",
    "crash": "No usable reply",
    "assertion_failed": "A check failed",
    "offline_judge": "Offline judge",
    # tool-case labels (TRACE)
    "POS": "Handled well",
    "NEG": "Handled badly",
    "correct": "Worked",
    "incorrect_agent": "The agent's mistake",
    "incorrect_tool": "The tool's fault",
    "appropriate": "Appropriate",
    "inappropriate": "Inappropriate",
    "satisfied": "Satisfied",
    "dissatisfied": "Dissatisfied",
    # ratings and statistics of simulated dialogues
    "task_success": "Task success",
    "overall_performance": "Overall performance",
    "average_overall_rating": "Average overall rating",
    "breakdowns_per_chatbot_turn": "Breakdowns per assistant turn",
    "dialogues_with_breakdowns": "Dialogues with a breakdown",
    "user_fault": "user's fault",
    # scenario checks and the events a target reports
    "bot_uttered": "The assistant said",
    "bot_did_not_utter": "The assistant did not say",
    "flow_started": "A flow started",
    "flow_completed": "A flow finished",
    "flow_cancelled": "A flow was cancelled",
    "slot_was_set": "A value was set",
    "slot_was_not_set": "A value was not set",
    "slot_set": "A value was set",
    "action_executed": "Action",
    "user_uttered": "The user said",
    "pass_rates": "Pass share per scenario",
    "per_assertion": "Accuracy per check",
    "generative_response_is_relevant": "The answer is relevant",
    "generative_response_is_grounded": "The answer is grounded",
}
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+$")


def words(value: object, *, missing: str = "—") -> str:
    """A stored value as words: a known enum value by `WORDS`, any other snake_case name spelled out
    ('user_ended_chat' -> 'The user ended the chat', 'price_band' -> 'Price band'); None and '' as
    `missing`; anything else as it is."""
    if value is None or value == "":
        return missing
    text = str(getattr(value, "value", value))
    if text in WORDS:
        return WORDS[text]
    if _SNAKE.match(text):
        spelled = re.sub(r"[_.]+", " ", text)
        return spelled[0].upper() + spelled[1:]
    return text


def shown(value: object, *, missing: str = "—") -> str:
    """A value for a table cell or a sentence: '—' (or `missing`) for None, else the value as it is."""
    return missing if value is None or value == "" else str(value)


# The tiers, in plain words; the tier's own name goes in the tooltip (TIER_HELP).
TIERS: dict[str, str] = {
    "unreviewed": "Not reviewed",
    "silver": "Accepted by the judge",
    "gold": "Accepted by a person",
    "rejected": "Rejected",
    "disagreement": "People disagree",
}
TIER_HELP = (
    "Tiers: 'silver' is the judge's verdict, not a person's (an LLM judge accepted it and nobody has "
    "decided yet); 'gold' is accepted by a person; 'rejected' was turned down by a person or the judge; "
    "'unreviewed' nobody has looked at yet."
)


def tier(value: object) -> str:
    """A tier's plain name ('silver' -> 'Accepted by the judge')."""
    text = str(getattr(value, "value", value))
    return TIERS.get(text, words(text))


# The papers' terms: the plain label a page shows and what goes in its tooltip (the term and where the
# seeds define it; /work/shared/seeds maps the seeds).
GLOSSARY: dict[str, tuple[str, str]] = {
    "SPWD": ("Spread of the chosen specs", "SPWD, the sum of pairwise distances (seed 000, Section 3.2)"),
    "Var Div": ("Variety of the chosen specs", "Var Div, the variance diversity (seed 000, Section 3.2)"),
    "Table 10": ("Failures by kind of error", "seed 000, Table 10: failure classes"),
    "Table 2": ("Procedure tests against assistants", "seed 001, Table 2: the seven metrics per agent"),
    "Table 3": ("Rubric methods compared", "seed 004, Table 3: SPUR against SCOPE"),
    "Table 4": ("Without each part of the rubric method", "seed 004, Table 4: SCOPE's ablations"),
    "Appendix G": ("the standard catalog", "seed 004, Appendix G: the situation catalog"),
    "TRACE": ("tool-use cases", "TRACE, the labelled tool-use conversations (seed 004, Section 2)"),
    "SPUR": (
        "Rubrics from user satisfaction",
        "SPUR: rubrics learnt from user satisfaction alone (seed 004, Section 4.1, the baseline)",
    ),
    "SCOPE": (
        "Rubrics per area",
        "SCOPE: rubrics discovered per area, weighted, with make-or-break rubrics (seed 004, Section 3)",
    ),
    "POS": ("Handled well", "POS in seed 004: the conversation as a whole is a good one"),
    "NEG": ("Handled badly", "NEG in seed 004: the conversation as a whole is a bad one"),
    "Algorithm 1": ("Weighted random walk", "seed 001, Algorithm 1: weighted random-walk path sampling"),
    "d": ("Documents per conversation", "the seed's d: documents per chain (seed 000, Algorithm 2)"),
    "seed 000": ("conversations about documents", "seed 000: document-grounded conversation generation"),
    "seed 001": ("procedure tests", "seed 001: procedure-grounded tests (ALMITA)"),
    "seed 004": ("tool-use cases", "seed 004: labelled tool-use conversations (TRACE) and rubrics (SCOPE)"),
}


def term(name: str) -> str:
    """The plain label of a research term."""
    return GLOSSARY[name][0]


def term_help(*names: str) -> str:
    """The tooltip of one or more research terms: each term and where the seeds define it."""
    return "; ".join(GLOSSARY[n][1] for n in names) + "."


def passage_words(passage_id: str) -> str:
    """Where a passage sits in its document, in words: 'products#r11' -> 'row 11 of the table' (r0: its
    columns), 'guide#p3' -> 'passage 4 of the text'; an id of another shape -> 'a passage'."""
    _, _, place = passage_id.rpartition("#")
    kind, number = place[:1], place[1:]
    if not number.isdigit():
        return "a passage"
    if kind == "r":
        return "the table's columns" if number == "0" else f"row {number} of the table"
    return f"passage {int(number) + 1} of the text" if kind == "p" else "a passage"


# An id the store made ('spec-1a2b3c4d5e6f', 'run-…', 'conv-…'), alone in parentheses after the name it
# belongs to, or alone in a message.
_ID_IN_PARENS = re.compile(r" ?\((?:[a-z]+-[0-9a-f]{8,}(?:-t\d+)?)\)")
_BARE_ID = re.compile(r"\b[a-z]+-[0-9a-f]{8,}(?:-t\d+)?\b")


def without_ids(message: str, *, bare: str = "it") -> str:
    """A library message as a page shows it: an id after the name it belongs to dropped ("spec 'Returns'
    (spec-1a2b…)" -> "spec 'Returns'"), an id standing alone replaced by `bare`; the ids stay in the
    store, the CLI and the logs, where they are looked up."""
    return _BARE_ID.sub(bare, _ID_IN_PARENS.sub("", message))


_SOURCE = re.compile(r" \(((?:our extension of )?seed \d{3}[^)]*)\)")


def split_citation(title: str) -> tuple[str, str | None]:
    """A title that cites the seeds split into its plain part and the citation, for the tooltip:
    'Failures by error class (seed 000, Table 10)' -> ('Failures by error class', 'seed 000, Table 10')."""
    found = _SOURCE.search(title)
    if found is None:
        return title, None
    return (title[: found.start()] + title[found.end() :]).strip(), found.group(1)


def told_apart(names: dict[str, str]) -> dict[str, str]:
    """Names (by id) a picker shows, each one distinct: where ids took the place of names, two runs of
    one target started in one minute would read alike, so a repeated name gets ' #2', ' #3' (in order)."""
    seen: dict[str, int] = {}
    shown = {}
    for key, name in names.items():
        seen[name] = seen.get(name, 0) + 1
        shown[key] = name if seen[name] == 1 else f"{name} #{seen[name]}"
    return shown
