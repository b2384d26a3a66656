"""Playing one item of a run: the target's reply to each turn, its judgment, and the turn's job unit.

The turns of an item are played in order by the worker holding the item's claim (evalcore.jobs); the
target sees the conversation so far: the user turns and, as the assistant's earlier turns, its own
earlier replies (history `own`, the default; rebuilt from the stored records of finished turns on a
resume) or the expected answers (history `expected`), so that a failure is not only the echo of an
earlier one. Each played turn is committed with its judgment as one record of the item's unit. A crash
is recorded for the turn; a spent budget stops the whole run, in every process.

With single-turn pairs (seed 000, Table 11 right: "multi-turn QA converted to single turn"), each turn
asked after earlier ones is played a second time alone: its resolved, stand-alone question with no
history. The report sets the two side by side, the same question alone and in context.
"""

from __future__ import annotations

import threading

from evalcore.generators.doc_qa.schema import is_cannot_answer
from evalcore.jobs import Claim, UnitStopped
from evalcore.llm.types import BudgetExceeded, Message
from evalcore.models import Document, Run, Spec
from evalcore.runs.assertions import check_assertions, combine
from evalcore.runs.items import Exchange, PlayItem
from evalcore.runs.judges import JudgeInputs, JudgeStopped, TurnJudge, Verdict
from evalcore.runs.records import JudgedTurn
from evalcore.runs.store_ops import insert_judgments
from evalcore.specs.store_ops import list_specs
from evalcore.store import Store
from evalcore.targets import TargetAdapter, TargetCrash

HISTORY_MODES = ("own", "expected")
# An expected CANNOTANSWER as the assistant's earlier turn: what a correct assistant would have said.
CANNOT_ANSWER_REPLY = "I cannot answer that from the documents I have."
ALONE = "~alone"  # suffix of the job unit of a turn played alone


def expected_reply(expected: str) -> str:
    """An expected answer as the assistant's turn in the history (history mode `expected`)."""
    return CANNOT_ANSWER_REPLY if is_cannot_answer(expected) else expected


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
        self.history = str(run.params.get("history") or "own")
        self.pairs = bool(run.params.get("single_turn_pairs"))
        self.played = self.crashed = self.unscored = 0
        self._count = threading.Lock()

    def alone(self, item: PlayItem, exchange: Exchange) -> bool:
        """Whether the exchange is also played alone (single-turn pairs: a conversation's later turns)."""
        return self.pairs and item.kind == "conversation" and exchange.multi_turn

    def play(self, item: PlayItem, claim: Claim) -> None:
        """Play the item's unfinished turns in order, its history rebuilt from the finished ones.

        Runs as the work of the item's claim: the finished turns are read after the claim is taken (a
        worker that died may have played some), and each turn commits with its judgment. A spent budget
        or a stop raises UnitStopped, which gives the item back for a resume.
        """
        keys = [item.unit_key(exchange) for exchange in item.exchanges]
        extra = [k + ALONE for k, e in zip(keys, item.exchanges, strict=True) if self.alone(item, e)]
        done = self.store.finished_units(self.run.id, keys + extra)
        history: list[Message] = list(item.context)
        for exchange, key in zip(item.exchanges, keys, strict=True):
            asked = [Message("user", exchange.question)] if exchange.question else []
            if self.alone(item, exchange) and key + ALONE not in done:
                if claim.stopping:
                    raise UnitStopped("stopped between two turns")
                alone = [Message("user", exchange.resolved or exchange.question)]
                self._commit(claim, key + ALONE, self._turn(item, exchange, alone, alone=True))
            if key in done:
                reply = (done[key].get("result") or {}).get("reply")
            else:
                if claim.stopping:
                    raise UnitStopped("stopped between two turns")
                turn = self._turn(item, exchange, [*history, *asked])
                self._commit(claim, key, turn)
                reply = turn.reply
            if self.history == "expected":
                reply = expected_reply(exchange.expected)
            history += asked + ([Message("assistant", reply)] if reply else [])

    def _commit(self, claim: Claim, key: str, turn: JudgedTurn) -> None:
        with claim.commit(key) as unit:
            insert_judgments(unit.conn, [turn])
            unit.result = {"reply": turn.reply, "score": turn.score, "crash": turn.crash is not None}
        with self._count:
            self.played += 1
            self.crashed += turn.crash is not None
            self.unscored += turn.score is None

    def _turn(
        self, item: PlayItem, exchange: Exchange, sent: list[Message], alone: bool = False
    ) -> JudgedTurn:
        """Ask the target and judge its reply (`alone`: the exchange's single-turn variant); UnitStopped
        when the budget stops the run."""
        reply, crash, details, latency, cached = "", None, None, None, False
        try:
            answer = self.adapter.reply(sent)
            reply, details, latency, cached = answer.text, answer.details, answer.latency_ms, answer.cache_hit
        except TargetCrash as e:
            crash = str(e)
        except BudgetExceeded as e:
            raise UnitStopped(f"budget: {e}") from None
        last = next((m.content for m in reversed(sent) if m.role == "user"), "")
        question = last if alone else exchange.question or last
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
                multi_turn=exchange.multi_turn and not alone,
                history_source=self.history,
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
            alone=alone,
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
