"""Playing one item of a run: the target's reply to each turn, its judgment, and the turn's job unit.

The turns of an item are played in order; the target sees the conversation so far (the user turns and
its own earlier replies, rebuilt from the stored units of finished turns on a resume). Each played turn
is committed with its judgment as one job unit. A crash is recorded for the turn; a spent budget halts
the whole run (`Player.halt`), which the other workers notice before their next turn.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

from sqlalchemy.exc import IntegrityError

from evalcore.llm.types import BudgetExceeded, Message
from evalcore.models import Document, Run, Spec
from evalcore.runs.assertions import check_assertions, combine
from evalcore.runs.items import Exchange, PlayItem
from evalcore.runs.judges import JudgeInputs, JudgeStopped, TurnJudge, Verdict
from evalcore.runs.records import JudgedTurn
from evalcore.runs.store_ops import insert_judgments
from evalcore.runs.targets import TargetAdapter, TargetCrash
from evalcore.specs.store_ops import list_specs
from evalcore.store import Store


def spec_lines(spec: Spec) -> str:
    """A spec as the judge reads it."""
    return f"Scenario: {spec.scenario}\nGiven {spec.given}\nWhen {spec.when}\nThen {spec.then}"


class Player:
    """Plays the items of one run: shared by the worker threads, which each play one item at a time."""

    def __init__(self, store: Store, run: Run, adapter: TargetAdapter, judge: TurnJudge) -> None:
        self.store, self.run, self.adapter, self.judge = store, run, adapter, judge
        pid = run.params["project_id"]
        self.specs = {v.spec.id: v.spec for v in list_specs(store, pid)}
        self.documents: dict[str, Document] = {d.id: d for d in store.documents(pid)}
        self.stop = threading.Event()
        self.stop_reason: str | None = None
        self.events: queue.Queue[tuple[bool, float | None]] = queue.Queue()

    def halt(self, reason: str) -> None:
        """Stop starting new turns (the first reason given is kept)."""
        if not self.stop.is_set():
            self.stop_reason = reason
            self.stop.set()

    def play(self, item: PlayItem, done: dict[str, dict[str, Any]]) -> None:
        """Play the item's unfinished turns in order, rebuilding the history from finished ones."""
        history: list[Message] = list(item.context)
        for exchange in item.exchanges:
            key = item.unit_key(exchange)
            asked = [Message("user", exchange.question)] if exchange.question else []
            if key in done:
                reply = (done[key].get("result") or {}).get("reply")
                history += asked + ([Message("assistant", reply)] if reply else [])
                continue
            if self.stop.is_set():
                return
            turn = self._turn(item, exchange, [*history, *asked])
            if turn is None:
                return
            try:
                with self.store.unit(self.run.id, key) as unit:
                    insert_judgments(unit.conn, [turn])
                    unit.result = {"reply": turn.reply, "score": turn.score, "crash": turn.crash is not None}
            except IntegrityError:  # another worker on a shared store finished this turn first
                pass
            history += asked + ([Message("assistant", turn.reply)] if turn.reply else [])
            self.events.put((turn.crash is not None, turn.score))

    def _turn(self, item: PlayItem, exchange: Exchange, sent: list[Message]) -> JudgedTurn | None:
        """Ask the target and judge its reply; None when the budget stops the run."""
        reply, crash, details, latency, cached = "", None, None, None, False
        try:
            answer = self.adapter.reply(sent)
            reply, details, latency, cached = answer.text, answer.details, answer.latency_ms, answer.cache_hit
        except TargetCrash as e:
            crash = str(e)
        except BudgetExceeded as e:
            self.halt(f"budget: {e}")
            return None
        question = exchange.question or next((m.content for m in reversed(sent) if m.role == "user"), "")
        grounding = [self.documents[d] for d in exchange.grounding if d in self.documents]
        results = []
        if crash:
            verdict = Verdict(0.0, "crash", f"The target gave no usable reply: {crash}", "crash")
        else:
            spec = self.specs.get(item.spec_id or "")
            inputs = JudgeInputs(
                spec=spec_lines(spec) if spec else "",
                history=[{"role": m.role, "content": m.content} for m in sent[:-1]],
                question=question,
                expected=exchange.expected,
                reply=reply,
                grounding=[(d.id, d.title, d.text) for d in grounding],
                multi_turn=exchange.multi_turn,
            )
            try:
                verdict = self.judge.judge(inputs)
            except JudgeStopped as e:
                self.halt(f"budget: {e}")
                return None
            results = check_assertions(reply, exchange.assertions)
        score, error_type, rationale = combine(verdict.score, verdict.error_type, verdict.rationale, results)
        return JudgedTurn(
            run_id=self.run.id,
            conversation_id=item.item_id if item.kind == "conversation" else None,
            test_id=item.item_id if item.kind == "test" else None,
            turn_index=exchange.turn_index,
            score=score,
            error_type=error_type,
            rationale=rationale,
            reply=reply,
            judge=verdict.judge + ("+assertions" if results else ""),
            raw=verdict.raw,
            judge_repairs=list(verdict.repairs),
            spec_id=item.spec_id,
            n_documents=item.n_documents,
            query_type=exchange.query_type,
            multi_turn=exchange.multi_turn,
            item_judge_passed=item.judge_passed,
            item_version=item.version,
            question=question,
            expected=exchange.expected,
            history=[{"role": m.role, "content": m.content} for m in sent[:-1]],
            grounding=list(exchange.grounding),
            crash=crash,
            latency_ms=latency,
            cache_hit=cached,
            target_details=details,
            assertions=[r.as_dict() for r in results],
            prompt_version=verdict.prompt_version,
        )
