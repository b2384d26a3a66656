"""One simulated dialogue: a simulated user against a target, with ChatChecker's stop rules (seed 002,
Section 3.2 and Listing 9; issue 18, item 2).

`simulate_dialogue(briefing, adapter, llm, ...)` is the reusable core: persona simulation runs call it
once per dialogue, and so do scenario tests (a `Briefing` with a scenario's `simulation_context` and
initial slots instead of, or beside, a persona). A target that opens the dialogue (its adapter's
`opening()`, ChatChecker's chatbot greeting first) has its greeting recorded as the first assistant turn,
judged and ended like any other; otherwise the user speaks first. Each user turn is one call of the task
`simulate_user_turn` (role `simulator`), each assistant turn one `reply` of the target's adapter. The
dialogue ends, as ChatChecker's does:
- after `max_user_turns` user turns: `max_turns_reached`;
- END_CONVERSATION in the user's reply (the text before it kept as the last user turn), or an empty
  reply: `user_ended_chat`;
- the target signalling the end (`TargetReply.ended`: an HTTP target's `end_path`, a callable's
  {"content", "ended"}, the demo target's goodbye; see evalcore.targets): `chatbot_ended_chat`;
- the target raising (in its opening too): a `chatbot_error` turn annotated as a "Chatbot Crash"
  breakdown with score 0, then `chatbot_error` with the error;
- the simulator failing (an exception, or a model reply that never parsed): `user_simulator_error`.
The simulator sees the card's chatbot info whole, its task included, as the seed's Listing 9 injects "the
chatbot information from the configuration file" (ChatChecker's code release drops the task; we follow
the paper). The longest user turn is an instruction in the prompt, as the paper handles it: a longer turn
is kept as the simulator wrote it (lengths are word counts, as ChatChecker counts them), and fidelity
counts the turns over the card's maximum per persona. A spent budget or a stop request raises
`SimulationStopped`: the dialogue is not kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import yaml

from evalcore.errors import EvalcoreError
from evalcore.generators.simulation.offline_user import END, UserTurn, offline_user_turn
from evalcore.generators.simulation.records import (
    BreakdownAnnotation,
    BreakdownDecision,
    DialogueTurn,
    FinishReason,
)
from evalcore.generators.simulation.taxonomy import CHATBOT_CRASH_TITLE
from evalcore.llm.client import ModelClient
from evalcore.llm.tasks import Task
from evalcore.llm.types import BudgetExceeded, Message
from evalcore.models import Persona, SystemCard, TurnRole, UserSimulationConfig
from evalcore.targets import TargetAdapter, TargetReply

SIMULATE_USER_TURN = Task("simulate_user_turn", UserTurn, offline_user_turn, temperature=1.0, max_tokens=400)
# ChatChecker's default of 10 user turns: one value, the card model's, whether or not there is a card.
DEFAULT_MAX_USER_TURNS: int = UserSimulationConfig.model_fields["max_user_turns"].default
CRASH_CONTENT = FinishReason.chatbot_error.value  # what ChatChecker writes as the crashed turn's content
_WORDS = re.compile(r"(\d+)\s*words?", re.IGNORECASE)


class SimulationStopped(EvalcoreError):
    """The dialogue cannot go on (a spent budget, a stop request); nothing of it should be kept."""


def words_in(length: str | None) -> int | None:
    """A turn length of the card ('5 words') as a word count; None when it gives none."""
    found = _WORDS.search(length or "")
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Limits:
    """How long the simulated user may talk (the card's `user_simulation_config`)."""

    max_user_turns: int = DEFAULT_MAX_USER_TURNS
    typical_user_turn_length: str | None = None
    max_user_turn_length: str | None = None

    @classmethod
    def of_card(cls, card: SystemCard | None) -> Limits:
        """The card's limits when it has a card; ChatChecker's default of 10 user turns otherwise."""
        if card is None:
            return cls()
        config = card.user_simulation_config
        return cls(config.max_user_turns, config.typical_user_turn_length, config.max_user_turn_length)

    @property
    def typical_words(self) -> int | None:
        """The typical user turn length in words."""
        return words_in(self.typical_user_turn_length)

    @property
    def max_words(self) -> int | None:
        """The longest user turn in words."""
        return words_in(self.max_user_turn_length)


@dataclass(frozen=True)
class Briefing:
    """Who the simulated user is: a persona, a briefing (a scenario's simulation_context) with the facts
    it may give (initial slots), or both."""

    name: str  # the user's name in the run (ChatChecker's user folder), e.g. the persona id
    persona: Persona | None = None
    context: str = ""
    slots: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """standard, challenging or adversarial (a briefing without a persona is a standard user)."""
        return self.persona.type if self.persona else "standard"


@dataclass
class SimulatedDialogue:
    """What one simulation produced."""

    turns: list[DialogueTurn]
    finish_reason: FinishReason
    error: str | None = None
    target_details: list[dict[str, Any] | None] = field(default_factory=list)  # per turn, None for users
    simulator_models: list[str] = field(default_factory=list)  # who wrote the user turns, no repeats
    offline: bool = True  # every user turn was written offline


def history_text(turns: list[DialogueTurn], user: str = "YOU", bot: str = "CHATBOT") -> str:
    """The dialogue as ChatChecker shows it to its models: numbered turns with speaker tags."""
    return "\n".join(
        f"{i}. {user if t.role == TurnRole.user else bot}: {t.content}" for i, t in enumerate(turns, start=1)
    )


def _persona_text(briefing: Briefing) -> str:
    if briefing.persona is None:
        return "(no persona: act as an ordinary user following the briefing below)"
    body = briefing.persona.model_dump(mode="json", include={"profile", "task"})  # a profile may be a text
    return yaml.safe_dump(body, indent=4, sort_keys=False, allow_unicode=True).strip()


def _briefing_text(briefing: Briefing) -> str:
    lines = []
    if briefing.context:
        lines.append(f"\n# Briefing\n{briefing.context}")
    if briefing.slots:
        facts = "\n".join(f"- {k}: {v}" for k, v in briefing.slots.items())
        lines.append(f"\nFacts you can give when the chatbot asks for them:\n{facts}")
    return "\n".join(lines)


def turn_inputs(
    briefing: Briefing, chatbot_info: dict[str, Any], limits: Limits, turns: list[DialogueTurn]
) -> dict[str, Any]:
    """The inputs of one `simulate_user_turn` call (the prompt's fields and the offline user's)."""
    typical, longest = limits.typical_user_turn_length, limits.max_user_turn_length
    return {
        "persona_type": briefing.kind,
        "chatbot_info": chatbot_info,  # whole, the task too (seed 002, Listing 9; see the module)
        "persona_profile": _persona_text(briefing),
        "briefing": _briefing_text(briefing),
        "length_guidance": f"Keep your answer around {typical}. Use longer or shorter answers if your "
        "persona would do so in the given situation."
        if typical
        else "Keep your answer as long as your persona would.",
        "max_length_rule": f"- You must always keep your response below {longest} in length."
        if longest
        else "",
        "chat_history": history_text(turns) or "(the conversation has not started yet)",
        "turn_number": len(turns) + 1,
        # for the offline user (the prompt shows the same facts as text)
        "persona": briefing.persona.model_dump(mode="json", exclude={"provenance"})
        if briefing.persona
        else None,
        "context": briefing.context,
        "slots": briefing.slots,
        "history": [{"role": t.role.value, "content": t.content} for t in turns],
        "typical_words": limits.typical_words,
        "chatbot_task": chatbot_info.get("task") or "",
    }


def _crash(error: str) -> DialogueTurn:
    annotation = BreakdownAnnotation(
        reasoning=f"Received error: {error}",
        score=0.0,
        decision=BreakdownDecision.breakdown,
        breakdown_types=[CHATBOT_CRASH_TITLE],
    )
    return DialogueTurn(role=TurnRole.assistant, content=CRASH_CONTENT, breakdown=annotation)


def simulate_dialogue(
    briefing: Briefing,
    adapter: TargetAdapter,
    llm: ModelClient,
    *,
    chatbot_info: dict[str, Any],
    limits: Limits,
    seed: int | None = None,
    model: str | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SimulatedDialogue:
    """Simulate one dialogue of `briefing`'s user against `adapter` (see the module docstring)."""
    turns: list[DialogueTurn] = []
    details: list[dict[str, Any] | None] = []
    out = SimulatedDialogue(turns, FinishReason.max_turns_reached, target_details=details)

    def end(reason: FinishReason, error: str | None = None) -> SimulatedDialogue:
        out.finish_reason, out.error = reason, error
        return out

    def target_turn(ask: Callable[[], TargetReply | None]) -> SimulatedDialogue | None:
        """Record the target's turn (none when `ask` gives None); the ended dialogue when it crashed or
        ended the chat."""
        try:
            reply = ask()
        except BudgetExceeded as e:
            raise SimulationStopped(f"budget: {e}") from None
        except Exception as e:  # TargetCrash or a bug of the system under test: a crash, not ours
            error = str(e) or type(e).__name__
            turns.append(_crash(error))
            details.append(None)
            return end(FinishReason.chatbot_error, error)
        if reply is None:
            return None
        turns.append(DialogueTurn(role=TurnRole.assistant, content=reply.text))
        details.append(reply.details)
        return end(FinishReason.chatbot_ended_chat) if reply.ended else None

    if (finished := target_turn(adapter.opening)) is not None:
        return finished
    for _ in range(limits.max_user_turns):
        if should_stop is not None and should_stop():
            raise SimulationStopped("stopped between two turns")
        try:
            inputs = turn_inputs(briefing, chatbot_info, limits, turns)
            result = llm.run_task(SIMULATE_USER_TURN, inputs, role="simulator", model=model, seed=seed)
        except Exception as e:  # the simulator failing is recorded, as ChatChecker records it
            return end(FinishReason.user_simulator_error, f"{type(e).__name__}: {e}")
        if result.status == "stopped":
            raise SimulationStopped(result.error or "budget")
        if result.model not in out.simulator_models:
            out.simulator_models.append(result.model)
        out.offline = out.offline and result.offline
        if not result.ok or result.output is None:
            return end(FinishReason.user_simulator_error, result.error or "no output")
        text = str(result.output.message).strip().strip("\"'")
        ended = END in text or not text
        text = text.split(END, 1)[0].strip().strip("\"'")
        if text:
            turns.append(DialogueTurn(role=TurnRole.user, content=text))
            details.append(None)
        if ended:
            return end(FinishReason.user_ended_chat)
        history = [Message(t.role.value, t.content) for t in turns]
        if (finished := target_turn(partial(adapter.reply, history))) is not None:
            return finished
    return out
