"""Playing one item of a run: the target's reply to each turn, its judgment, and the turn's job unit.

The turns of an item are played in order by the worker holding the item's claim (evalcore.jobs); the
target sees the conversation so far (the user turns and its own earlier replies, rebuilt from the stored
records of finished turns on a resume). Each played turn is committed with its judgment as one record of
the item's unit. A crash is recorded for the turn; a spent budget stops the whole run, in every process.
"""

from __future__ import annotations

import threading

from evalcore.jobs import Claim, UnitStopped
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
    """Plays the items of one run: shared by the job's worker threads, each playing one claimed item."""

    def __init__(self, store: Store, run: Run, adapter: TargetAdapter, judge: TurnJudge) -> None:
        self.store, self.run, self.adapter, self.judge = store, run, adapter, judge
        pid = run.params["project_id"]
        self.specs = {v.spec.id: v.spec for v in list_specs(store, pid)}
        self.documents: dict[str, Document] = {d.id: d for d in store.documents(pid)}
        self.played = self.crashed = self.unscored = 0
        self._count = threading.Lock()

    def play(self, item: PlayItem, claim: Claim) -> None:
        """Play the item's unfinished turns in order, its history rebuilt from the finished ones.

        Runs as the work of the item's claim: the finished turns are read after the claim is taken (a
        worker that died may have played some), and each turn commits with its judgment. A spent budget
        or a stop raises UnitStopped, which gives the item back for a resume.
        """
        keys = [item.unit_key(exchange) for exchange in item.exchanges]
        done = self.store.finished_units(self.run.id, keys)
        history: list[Message] = list(item.context)
        for exchange, key in zip(item.exchanges, keys, strict=True):
            asked = [Message("user", exchange.question)] if exchange.question else []
            if key in done:
                reply = (done[key].get("result") or {}).get("reply")
                history += asked + ([Message("assistant", reply)] if reply else [])
                continue
            if claim.stopping:
                raise UnitStopped("stopped between two turns")
            turn = self._turn(item, exchange, [*history, *asked])
            with claim.commit(key) as unit:
                insert_judgments(unit.conn, [turn])
                unit.result = {"reply": turn.reply, "score": turn.score, "crash": turn.crash is not None}
            with self._count:
                self.played += 1
                self.crashed += turn.crash is not None
                self.unscored += turn.score is None
            history += asked + ([Message("assistant", turn.reply)] if turn.reply else [])

    def _turn(self, item: PlayItem, exchange: Exchange, sent: list[Message]) -> JudgedTurn:
        """Ask the target and judge its reply; UnitStopped when the budget stops the run."""
        reply, crash, details, latency, cached = "", None, None, None, False
        try:
            answer = self.adapter.reply(sent)
            reply, details, latency, cached = answer.text, answer.details, answer.latency_ms, answer.cache_hit
        except TargetCrash as e:
            crash = str(e)
        except BudgetExceeded as e:
            raise UnitStopped(f"budget: {e}") from None
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
                raise UnitStopped(f"budget: {e}") from None
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
