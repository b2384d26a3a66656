"""Built-in agents: offline tool-using agents a procedure test can be played against (an `agent` target).

The agents themselves follow the project's procedures, so they live with the procedure generator
(`evalcore.generators.procedure.agents`), which registers them here by name, as the model layer's
providers register themselves; targets below the generators only know the protocol and the names. A
process that builds an `agent` target imports the module that registers its agents first (the runs
package does: `evalcore.runs.procedure_tests`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from evalcore.models import Test, Tool, Turn
from evalcore.models.items import Action
from evalcore.store import Store
from evalcore.targets.config import TargetConfigError


class Agent(Protocol):
    """Something that takes a test's context and the tools and returns its next action."""

    name: str

    def act(self, context: Sequence[Turn], tools: Sequence[Tool]) -> Action:
        """The agent's next action."""
        ...


@dataclass(frozen=True)
class AgentSetting:
    """What an agent is built from: the project, its seed, and the tests an oracle answers (the project's
    procedure tests when None)."""

    store: Store
    project_id: str
    seed: int = 0
    tests: Sequence[Test] | None = None


AgentFactory = Callable[[AgentSetting], Agent]
_AGENTS: dict[str, AgentFactory] = {}


def register_agent(name: str, factory: AgentFactory) -> None:
    """Make `factory` the builder of the built-in agent `name` (a later registration replaces it)."""
    _AGENTS[name] = factory


def agent_names() -> list[str]:
    """The names of the registered agents, in registration order."""
    return list(_AGENTS)


def build_agent(name: str, setting: AgentSetting) -> Agent:
    """The registered agent `name`; TargetConfigError naming the registered ones otherwise."""
    factory = _AGENTS.get(name)
    if factory is None:
        known = ", ".join(_AGENTS) or "none: import evalcore.generators.procedure.agents first"
        raise TargetConfigError(f"no built-in agent '{name}' (registered: {known})")
    return factory(setting)
