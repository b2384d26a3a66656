"""Offline agents to play procedure tests against (issue 17, items 8 and 9, demo part), and the player.

- `OracleAgent` answers every test with its expected action: the check that every metric of Table 2 can
  reach 100%.
- `NullAgent` always replies "OK": API recall 0, the floor.
- `DemoAgent` knows the procedure's next step (it is given the same tests, as an agent built from the
  project's procedures would know them) and departs from it the way tool-using agents do, at seeded rates:
  it skips a lookup (replies where the first call of a conversation was due), sends a wrong parameter
  value, calls an API where it should ask the customer, and words its replies its own way (a paraphrase
  of the expected reply, so correct reply depends on the similarity threshold).

`play(tests, agent)` gives each test's context and the tool schemas to the agent and records its action.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from evalcore.generators.procedure.metrics import Action, expected_action
from evalcore.inputs.tool_values import value_for
from evalcore.models import Test, Tool, Turn, TurnRole
from evalcore.models.common import content_hash

# Seeded mistake rates of the demo agent, chosen so each mistake shows in its own metric on the sample.
SKIP_LOOKUP = 0.3  # of first API calls in a conversation: replies "I've checked" instead (API recall)
WRONG_PARAMETER = 0.2  # of API calls: one argument gets another valid value (correct parameters)
CALL_INSTEAD_OF_ASK = 0.15  # of replies that ask the customer: calls an API instead (reply recall)
OFF_SCRIPT_REPLY = 0.15  # of replies: a generic answer instead of the procedure's step (correct reply)
_OPENERS = ("Sure.", "Of course!", "Thanks for waiting.", "Happy to help.")
_GENERIC = (
    "Let me know if there's anything else I can do for you today.",
    "Thanks for reaching out, I hope you have a lovely day.",
    "I understand your frustration, and I appreciate your patience.",
)


class Agent(Protocol):
    """Something that takes a test's context and the tools and returns its next action."""

    name: str

    def act(self, test_id: str, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        """The agent's next action."""
        ...


class NullAgent:
    """Always replies "OK"."""

    name = "null"

    def act(self, test_id: str, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        return Action(kind="reply", text="OK")


class OracleAgent:
    """Answers every test with its expected action."""

    name = "oracle"

    def __init__(self, tests: Sequence[Test]) -> None:
        self._answers = {t.id: expected_action(t) for t in tests}

    def act(self, test_id: str, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        return self._answers[test_id]


class DemoAgent:
    """Follows the procedure's next step with seeded, realistic mistakes (module docstring)."""

    name = "demo"

    def __init__(self, tests: Sequence[Test], seed: int = 0) -> None:
        self._answers = {t.id: expected_action(t) for t in tests}
        self.seed = seed

    def act(self, test_id: str, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        # seeded by the context, not the test's id (ids are fresh per run): a re-run errs the same way
        key = {"context": [t.model_dump(mode="json") for t in context], "seed": self.seed}
        rng = random.Random(int(content_hash(key)[:16], 16))
        right = self._answers[test_id]
        schemas = {t.name: t.parameters for t in tools}
        if right.kind == "api":
            first_call = not any(t.role == TurnRole.tool_call for t in context)
            if first_call and rng.random() < SKIP_LOOKUP:
                return Action(kind="reply", text="I've checked and everything looks fine on our side.")
            if right.arguments and rng.random() < WRONG_PARAMETER:
                return self._wrong_parameter(right, schemas.get(right.tool_name or "", {}), rng)
            return right
        asks = "ask" in right.text.lower() or "?" in right.text
        if asks and tools and rng.random() < CALL_INSTEAD_OF_ASK:
            tool = rng.choice(list(tools))
            args = {
                n: value_for(n, tool.parameters["properties"].get(n, {}), rng)
                for n in tool.parameters.get("required", [])
            }
            return Action(kind="api", tool_name=tool.name, arguments=args)
        if rng.random() < OFF_SCRIPT_REPLY:
            return Action(kind="reply", text=rng.choice(_GENERIC))
        return Action(kind="reply", text=f"{rng.choice(_OPENERS)} {right.text}")

    @staticmethod
    def _wrong_parameter(right: Action, schema: dict, rng: random.Random) -> Action:
        name = rng.choice(sorted(right.arguments))
        prop = (schema.get("properties") or {}).get(name, {})
        for _ in range(10):  # another valid value; an enum of one member, or bad luck, keeps the typo below
            value = value_for(name, prop, rng)
            if value != right.arguments[name]:
                break
        else:
            value = f"{right.arguments[name]}x"
        return Action(kind="api", tool_name=right.tool_name, arguments={**right.arguments, name: value})


def play(tests: Sequence[Test], agent: Agent, tools: Sequence[Tool]) -> list[tuple[Test, Action]]:
    """Each test with the action the agent takes given its context and the tool schemas."""
    return [(t, agent.act(t.id, t.context, tools)) for t in tests]
