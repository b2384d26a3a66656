"""The built-in demo target: a small retrieval bot over the project's documents, offline and instant.

It does what the simplest RAG assistant does: take the user's latest message as the query, find the best
passage with BM25 (`evalcore.documents.retrieval`), and answer with the passage's sentences that share
the most words with the question. When nothing scores at least `min_score` it says it cannot find an answer.

Its weaknesses are the ones such bots really have, so reports on it show real failure modes:
- it reads only the latest message, so a follow-up that says "it" or "that store" is looked up without
  what "it" refers to (coreference);
- it answers from one passage, so a question that needs two documents gets half an answer (synthesis);
- BM25 finds some passage for almost any in-domain question, so it rarely admits that the documents do
  not hold the answer (CANNOTANSWER).
Nothing in it knows about the tests it is played against. When the user takes leave ("thanks, bye") and
asks nothing more, it says goodbye and ends the conversation (`TargetReply.ended`), as a deployed bot
closes its chat window. With a `greeting` in its config it opens the dialogue with it.
"""

from __future__ import annotations

import re
import time

from evalcore.documents.retrieval import build_index, tokenize
from evalcore.llm.types import Message
from evalcore.models import Document, Target
from evalcore.targets.adapters import TargetAdapter, TargetReply
from evalcore.targets.config import DemoConfig

NOT_FOUND = "I'm sorry, I couldn't find anything about that in our documentation."
GOODBYE = "You're welcome. Goodbye!"
_FAREWELL = re.compile(
    r"\b(?:good\s?bye|bye|that'?s (?:all|everything)|that is (?:all|everything)|have a (?:nice|good) day"
    r"|no (?:more|further) questions)\b",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(*]*[A-Z0-9])|\n+")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def is_farewell(message: str) -> bool:
    """Whether the user takes leave: a farewell phrase and no question left."""
    return "?" not in message and _FAREWELL.search(message) is not None


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", _ITEM.sub("", text.replace("**", "").replace("__", ""))).strip()


class DemoTarget(TargetAdapter):
    """BM25 over the project's passages; answers with the best passage's most relevant sentences."""

    def __init__(self, target: Target, config: DemoConfig, documents: list[Document]) -> None:
        self.target, self.config = target, config
        self.index = build_index(documents)

    def answer(self, question: str) -> tuple[str, dict[str, object]]:
        """The reply to one question, and what it was taken from."""
        hits = self.index.retrieve(question, k=1)
        if not hits or hits[0].score < self.config.min_score:
            best = round(hits[0].score, 3) if hits else None
            return NOT_FOUND, {"passage": None, "score": best}
        passage = hits[0].passage
        details: dict[str, object] = {
            "passage": passage.id,
            "document": passage.document_id,
            "score": round(hits[0].score, 3),
        }
        if passage.kind == "table":
            return _clean(passage.text), details
        body = passage.text.split("\n", 1)[1] if passage.heading != passage.title else passage.text
        sentences = [_clean(s) for s in _SPLIT.split(body) if len(s.split()) >= 3]
        if not sentences:
            return _clean(passage.text), details
        wanted = set(tokenize(question))
        overlap = [len(wanted & set(tokenize(s))) for s in sentences]
        ranked = sorted(range(len(sentences)), key=lambda i: (-overlap[i], i))[: self.config.sentences]
        return " ".join(sentences[i] for i in sorted(ranked)), details

    def opening(self) -> TargetReply | None:
        """Its configured greeting, if any."""
        return TargetReply(self.config.greeting, 0.0) if self.config.greeting else None

    def reply(self, messages: list[Message]) -> TargetReply:
        """Answer the latest user message (and only it: see the module docstring)."""
        started = time.perf_counter()
        question = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if self.config.end_on_farewell and is_farewell(question):
            return TargetReply(GOODBYE, (time.perf_counter() - started) * 1000, ended=True)
        text, details = self.answer(question)
        return TargetReply(text, (time.perf_counter() - started) * 1000, details=details)
